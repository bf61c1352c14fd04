package keyspace

import (
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// TestStringNodeLayout: a node made with its string (newInlineStringNode)
// holds the key's bytes right after the keyNode, then the String header at
// a 4-byte boundary and the value's bytes, in the smallest of Go's size
// classes that holds them (an empty value one byte of room, so that the
// address of its bytes is in the node); a `key:N` = `value:N` key of the 1 M-key load is
// one 64-byte object; an expires entry is 24 bytes.
func TestStringNodeLayout(t *testing.T) {
	if keyNodeSize != 32 || unsafe.Sizeof(keyStrNode{}) != 48 || unsafe.Sizeof(expireEntry{}) != 24 {
		t.Fatalf("keyNode %d, keyStrNode %d, expireEntry %d bytes", keyNodeSize, unsafe.Sizeof(keyStrNode{}), unsafe.Sizeof(expireEntry{}))
	}
	classes := []int{48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256}
	for _, kl := range []int{1, 2, 3, 4, 5, 10, 11, 16, 63, 100, 200, 255} {
		for _, vl := range []int{0, 1, 7, 8, 12, 22, 50, 100, 200} {
			key, val := []byte(strings.Repeat("k", kl)), []byte(strings.Repeat("v", vl))
			need := int(keyNodeSize) + strOffset(kl) + int(strHdrSize) + max(vl, 1)
			n, s := newInlineStringNode(key, val, StringEmbstr)
			if need > 256 {
				if n != nil {
					t.Fatalf("key %d, value %d bytes: a node of more than 256 bytes", kl, vl)
				}
				continue
			}
			_, room := newStringNode(need - int(keyNodeSize))
			size := int(keyNodeSize) + len(room)
			want := 0
			for _, c := range classes {
				if c >= need {
					want = c
					break
				}
			}
			if n == nil || size != want || intsetAlloc(size) != size {
				t.Fatalf("key %d, value %d bytes: node %v of %d bytes, want %d", kl, vl, n != nil, size, want)
			}
			off := uintptr(unsafe.Pointer(s)) - uintptr(unsafe.Pointer(n))
			if n.key() != string(key) || string(s.Bytes()) != string(val) || s.Kind() != StringEmbstr || !s.inline() ||
				off != keyNodeSize+uintptr(strOffset(kl)) || off%4 != 0 || int(off)+int(strHdrSize)+max(vl, 1) > size {
				t.Fatalf("key %d, value %d bytes: key %q, value %q at %d", kl, vl, n.key(), s.Bytes(), off)
			}
		}
	}
	if n, _ := newInlineStringNode(nil, []byte("v"), StringAuto); n != nil {
		t.Fatal("an empty key in a node's bytes (klen 0 is a keyStrNode)")
	}
	if n, _ := newInlineStringNode([]byte(strings.Repeat("k", 256)), nil, StringAuto); n != nil {
		t.Fatal("a 256-byte key in a node's bytes (klen is a byte)")
	}
	db := NewDB()
	e := db.SetString([]byte("key:123456"), []byte("value:123456"), StringAuto, 1, false)
	if _, room := newStringNode(strOffset(10) + int(strHdrSize) + 12); int(keyNodeSize)+len(room) != 64 || entryNode(e).key() != "key:123456" {
		t.Fatalf("key:N = value:N: a %d-byte node", int(keyNodeSize)+len(room))
	}
}

// TestKeyNodeModel drives random writes over keys of every length (empty,
// in the node's bytes, too long for them) against a map: values, TTLs,
// Rename (which gives a node holding its key's bytes a new node), Move,
// in-place appends; after each step every key reads back with its value
// and TTL, the consistency check passes and so do the collector's checks
// of the heap's pointers.
func TestKeyNodeModel(t *testing.T) {
	type item struct {
		val string
		at  int64
	}
	for seed := uint64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		ks := New(2)
		model := []map[string]item{{}, {}}
		keys := []string{""}
		for _, l := range []int{1, 3, 10, 40, 200, 255, 256, 300} {
			for j := 0; j < 3; j++ {
				keys = append(keys, strings.Repeat("x", l-1)+strconv.Itoa(j)[:1])
			}
		}
		keys[len(keys)-1] = "k"
		pick := func() string { return keys[rng.IntN(len(keys))] }
		value := func() string { return strings.Repeat("v", rng.IntN(3)*rng.IntN(120)) }
		for step := 0; step < 2000; step++ {
			d := rng.IntN(2)
			db, m := ks.DBs[d], model[d]
			k := pick()
			switch op := rng.IntN(10); op {
			case 0, 1:
				keep := rng.IntN(2) == 0
				v := value()
				db.SetString([]byte(k), []byte(v), StringAuto, 1, keep)
				it := m[k]
				if !keep {
					it.at = 0
				}
				it.val = v
				m[k] = it
			case 2:
				v := value()
				db.SetNew([]byte(k), NewString([]byte(v), StringRaw), 1)
				m[k] = item{val: v}
			case 3:
				if _, ok := m[k]; ok {
					at := int64(1000 + rng.IntN(1000))
					db.SetExpire([]byte(k), at)
					it := m[k]
					it.at = at
					m[k] = it
				}
			case 4:
				db.Persist([]byte(k))
				if it, ok := m[k]; ok {
					it.at = 0
					m[k] = it
				}
			case 5:
				dst := pick()
				ok := db.Rename([]byte(k), []byte(dst), 1)
				if _, had := m[k]; ok != had {
					t.Fatalf("seed %d step %d: Rename %q = %v", seed, step, k, ok)
				}
				if ok && k != dst {
					m[dst] = m[k]
					delete(m, k)
				}
			case 6:
				o := ks.DBs[1-d]
				if _, there := model[1-d][k]; !there {
					ok := db.Move([]byte(k), o, 1)
					if _, had := m[k]; ok != had {
						t.Fatalf("seed %d step %d: Move %q = %v", seed, step, k, ok)
					}
					if ok {
						model[1-d][k] = m[k]
						delete(m, k)
					}
				}
			case 7:
				if e := db.Lookup([]byte(k), 1); e != nil {
					add := value()
					s := db.Mutable([]byte(k), e).(*String)
					s.Set(append(s.Bytes(), add...), StringRaw)
					it := m[k]
					it.val += add
					m[k] = it
				}
			case 8:
				db.Delete([]byte(k))
				delete(m, k)
			case 9:
				ks.ResizeAndRehash(1000, func() int64 { return 0 })
			}
			for i, db := range ks.DBs {
				if db.Len() != len(model[i]) {
					t.Fatalf("seed %d step %d: db %d has %d keys, want %d", seed, step, i, db.Len(), len(model[i]))
				}
				for k, it := range model[i] {
					e := db.Peek([]byte(k))
					if e == nil || str(e) != it.val || db.ExpireAt(e) != it.at || entryNode(e).key() != k {
						t.Fatalf("seed %d step %d: db %d key %q: %q at %d, want %q at %d", seed, step, i, k, str(e), db.ExpireAt(e), it.val, it.at)
					}
				}
			}
			if err := ks.Check(); err != nil {
				t.Fatalf("seed %d step %d: %v", seed, step, err)
			}
			if step%250 == 0 {
				runtime.GC() // a pointer out of its object fails here
			}
		}
	}
}

// TestInNodeString: a string key's node made with its value holds no
// pointer to itself (vp nil, inNodeFlag: the collector scans only its
// chain link), and the value stays readable through a collection, an
// in-place overwrite, Mutable, a rename to a key that fits in a node and
// to one that does not, and a replacement by a longer value.
func TestInNodeString(t *testing.T) {
	ks := New(1)
	db := ks.DBs[0]
	check := func(key, want string, inNode bool) {
		t.Helper()
		runtime.GC()
		e := db.Peek([]byte(key))
		if e == nil {
			t.Fatalf("%s: missing", key)
		}
		s, ok := e.StringValue()
		if !ok || string(s.Bytes()) != want {
			t.Fatalf("%s: value %q, want %q", key, s.Bytes(), want)
		}
		if got := e.flags&inNodeFlag != 0; got != inNode || (inNode && e.vp != nil) {
			t.Fatalf("%s: inNodeFlag %v (vp %p), want %v", key, got, e.vp, inNode)
		}
	}
	db.SetString([]byte("k1"), []byte("value:1"), StringAuto, 1, false)
	check("k1", "value:1", true)
	e := db.Peek([]byte("k1"))
	db.OverwriteString([]byte("k1"), e, []byte("value:2"), StringAuto)
	check("k1", "value:2", true)
	if !db.Rename([]byte("k1"), []byte("k2"), 1) {
		t.Fatal("rename k1 k2")
	}
	check("k2", "value:2", true)
	long := strings.Repeat("L", 300) // no inline node for it: a keyStrNode
	if !db.Rename([]byte("k2"), []byte(long), 1) {
		t.Fatal("rename k2 long")
	}
	check(long, "value:2", false)
	db.SetString([]byte("k3"), []byte("abc"), StringAuto, 1, false)
	e = db.Peek([]byte("k3"))
	v := db.Mutable([]byte("k3"), e).(*String)
	check("k3", "abc", false) // Mutable gave it a header of its own
	if string(v.Bytes()) != "abc" {
		t.Fatalf("Mutable: %q", v.Bytes())
	}
	db.SetString([]byte("k4"), []byte("x"), StringAuto, 1, false)
	db.SetString([]byte("k4"), []byte(strings.Repeat("y", 100)), StringAuto, 1, false)
	check("k4", strings.Repeat("y", 100), false)
}
