package keyspace

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// TestFieldEntryOverwrite: a value is written over the old one in the
// entry's own bytes exactly when the entry is inline and the new value
// keeps it in its size class; the field's bytes are untouched either way,
// and the entry's room stays fieldRoom of its lengths.
func TestFieldEntryOverwrite(t *testing.T) {
	lens := []int{0, 1, 3, 7, 8, 15, 16, 23, 24, 31, 32, 100, 200, 239, 240, 241, 300}
	for _, kl := range []int{0, 1, 5, 20, 100, 239, 240, 300} {
		for _, vl := range lens {
			for _, nl := range lens {
				k := strings.Repeat("k", kl)
				e := newFieldEntry(k, strings.Repeat("v", vl))
				nv := strings.Repeat("n", nl)
				oldRoom, oldOK := fieldRoom(uintptr(kl + vl))
				newRoom, newOK := fieldRoom(uintptr(kl + nl))
				want := oldOK && newOK && oldRoom == newRoom
				if got := e.overwrite(nv); got != want {
					t.Fatalf("key %d, value %d -> %d: overwrite %v, want %v", kl, vl, nl, got, want)
				}
				if !want {
					continue
				}
				if e.key() != k || e.val() != nv || !e.keyIs([]byte(k)) {
					t.Fatalf("key %d, value %d -> %d: read back %d, %d bytes", kl, vl, nl, len(e.key()), len(e.val()))
				}
				if room, ok := fieldRoom(uintptr(e.klen) + uintptr(e.vlen)); !ok || room != oldRoom {
					t.Fatalf("key %d, value %d -> %d: room %d, was %d", kl, vl, nl, room, oldRoom)
				}
			}
		}
	}
	// The inline entries' rooms are their allocations' size classes.
	for n := uintptr(1); n <= 256-fieldEntrySize; n++ {
		room, ok := fieldRoom(n)
		if !ok || room < n || (room+fieldEntrySize)%8 != 0 {
			t.Fatalf("fieldRoom(%d) = %d, %v", n, room, ok)
		}
	}
	if _, ok := fieldRoom(256 - fieldEntrySize + 1); ok {
		t.Fatal("fieldRoom inlines past 256 bytes")
	}
}

// TestHashtableOverwriteModel runs random HSET-style writes of values of
// every length (across the size classes and past the inline limit), deletes
// and HINCRBY-style read-then-write on a hashtable against a map: after
// each write the field reads back, and every field is checked at
// intervals, so an overwrite that ran into the next field's bytes or its
// neighbour's allocation shows. It also checks that the in-place path ran.
func TestHashtableOverwriteModel(t *testing.T) {
	cfg := DefaultEncodingConfig()
	cfg.HashMaxListpackEntries = 0
	rng := rand.New(rand.NewPCG(24, 1))
	h := NewHash()
	model := map[string]string{}
	val := func() string {
		n := rng.IntN(40)
		if rng.IntN(10) == 0 {
			n = rng.IntN(300)
		}
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('a' + rng.IntN(26))
		}
		return string(b)
	}
	inPlace := 0
	for i := 0; i < 30000; i++ {
		f := "element:" + strconv.Itoa(rng.IntN(500))
		switch op := rng.IntN(10); {
		case op == 0:
			_, had := model[f]
			if h.Delete([]byte(f)) != had {
				t.Fatalf("Delete(%s) at %d", f, i)
			}
			delete(model, f)
		case op == 1: // HINCRBY: the value read is replaced by one made from it
			old, _ := h.Get([]byte(f), true)
			n, _ := strconv.Atoi(old)
			nv := strconv.Itoa(n + 1)
			h.Set([]byte(f), nv, cfg)
			model[f] = nv
		default:
			v := []byte(val())
			if d := h.ht(); d != nil {
				if de := d.find(hashString(f), []byte(f), false); de != nil {
					if r0, ok0 := fieldRoom(uintptr(de.klen) + uintptr(de.vlen)); ok0 && de.klen != fieldExt {
						if r1, ok1 := fieldRoom(uintptr(len(f) + len(v))); ok1 && r1 == r0 {
							inPlace++
						}
					}
				}
			}
			_, had := model[f]
			if h.SetB([]byte(f), v, cfg) == had {
				t.Fatalf("SetB(%s) at %d", f, i)
			}
			model[f] = string(v)
			copy(v, strings.Repeat("X", len(v))) // SetB kept no reference
		}
		if got, ok := h.Get([]byte(f), false); ok != hasKey(model, f) || got != model[f] {
			t.Fatalf("op %d: %s = %q, want %q", i, f, got, model[f])
		}
		if i%1000 == 0 || i == 29999 {
			n := 0
			h.Range(func(f, v string) bool {
				if model[f] != v {
					t.Fatalf("op %d: Range %s = %q, want %q", i, f, v, model[f])
				}
				n++
				return true
			})
			if n != len(model) || h.Len() != len(model) {
				t.Fatalf("op %d: %d fields ranged, Len %d, model %d", i, n, h.Len(), len(model))
			}
		}
	}
	if inPlace < 1000 {
		t.Fatalf("only %d in-place overwrites", inPlace)
	}
}

func hasKey(m map[string]string, k string) bool { _, ok := m[k]; return ok }

// TestHashSnapshotOverwriteConcurrent: HSETs that overwrite values in place
// (same length) through DB.Mutable while a snapshot holds the hashes, read
// by another goroutine without the lock as BGSAVE reads them: the snapshot
// sees every value as it was at its start, including values it handed out
// before the overwrites (read again at the end, before Close), and the live
// hashes see the writes. Run with -race: an overwrite of bytes the snapshot
// reads is a race.
func TestHashSnapshotOverwriteConcurrent(t *testing.T) {
	const keys, fields = 40, 300
	for seed := uint64(1); seed <= 3; seed++ {
		ks := New(1)
		db := ks.DBs[0]
		ks.Encodings.HashMaxListpackEntries = 16
		cfg := ks.Encodings
		rng := rand.New(rand.NewPCG(seed, 24))
		field := func(i int) []byte { return []byte("element:" + strconv.Itoa(1000000+i)) }
		value := func() []byte { return []byte(strconv.Itoa(100 + rng.IntN(900))) } // 3 bytes: same class
		want := map[string]string{}
		for k := range keys {
			h := NewHash()
			for i := range fields {
				v := value()
				h.SetB(field(i), v, cfg)
				want["h"+strconv.Itoa(k)+"|"+string(field(i))] = string(v)
			}
			if h.Encoding() != EncodingHashtable {
				t.Fatal("want a hashtable")
			}
			db.Set([]byte("h"+strconv.Itoa(k)), h, 0)
		}
		var mu sync.Mutex
		mu.Lock()
		snap, err := ks.BeginSnapshot()
		mu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
		var held []Item
		got := map[string]string{}
		read := func(items []Item, into map[string]string) {
			for _, it := range items {
				it.Value.(*Hash).Range(func(f, v string) bool {
					into[it.Key+"|"+f] = strings.Clone(v)
					return true
				})
			}
		}
		readerDone := readSnapshotUnlocked(snap, &mu, 1, func(buf []Item) {
			read(buf, got)
			held = append(held, buf...)
		})
		live := map[string]string{}
		writes := writeWhileReading(readerDone, 2000, func() {
			key := []byte("h" + strconv.Itoa(rng.IntN(keys)))
			f, v := field(rng.IntN(fields)), value()
			mu.Lock()
			e := db.Lookup(key, 0)
			db.Mutable(key, e).(*Hash).SetB(f, v, cfg)
			mu.Unlock()
			live[string(key)+"|"+string(f)] = string(v)
		})
		again := map[string]string{}
		read(held, again) // after the writes, before Close: still the start's values
		mu.Lock()
		for k, v := range live {
			key, f, _ := strings.Cut(k, "|")
			if g, _ := db.Lookup([]byte(key), 0).Value().(*Hash).Get([]byte(f), false); g != v {
				t.Fatalf("live %s = %q, want %q", k, g, v)
			}
		}
		snap.Close()
		mu.Unlock()
		for name, m := range map[string]map[string]string{"during": got, "after the writes": again} {
			if len(m) != len(want) {
				t.Fatalf("seed %d: %s: %d fields in the snapshot, want %d", seed, name, len(m), len(want))
			}
			for k, v := range want {
				if m[k] != v {
					t.Fatalf("seed %d: %s: snapshot %s = %q, want %q", seed, name, k, m[k], v)
				}
			}
		}
		if writes < 2000 {
			t.Fatalf("%d writes", writes)
		}
	}
}
