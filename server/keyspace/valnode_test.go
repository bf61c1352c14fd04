package keyspace

import (
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// TestValNodeSizes: a key node with an aggregate's header and a key of up
// to 16 bytes is one Go size class object no larger than the keyNode, key
// string and header were apart (48 + 16 + header).
func TestValNodeSizes(t *testing.T) {
	for _, c := range []struct {
		name string
		size uintptr
		want uintptr
	}{
		{"set", unsafe.Sizeof(valNode[Set, [16]byte]{}), 80},
		{"zset", unsafe.Sizeof(valNode[ZSet, [16]byte]{}), 80},
		{"hash", unsafe.Sizeof(valNode[Hash, [16]byte]{}), 80},
		{"list", unsafe.Sizeof(valNode[List, [16]byte]{}), 112},
	} {
		if c.size != c.want {
			t.Errorf("%s node %d bytes, want %d", c.name, c.size, c.want)
		}
		if intsetAlloc(int(c.size)) != int(c.size) {
			t.Errorf("%s node %d bytes is not a size class", c.name, c.size)
		}
	}
}

// TestSetNew: SetNew stores a new key's value in its node (the value
// returned is the entry's, not the one passed), with keys of every room
// size and beyond; the value works as any other through writes, Dup,
// Rename, Delete and the consistency check; an existing key is replaced as
// Set does, with the value passed.
func TestSetNew(t *testing.T) {
	db := NewDB()
	cfg := DefaultEncodingConfig()
	for _, n := range []int{0, 1, 10, 16, 17, 32, 33, 64, 65, 96, 128, 150, 192, 193, 400} {
		for typ := 0; typ < 4; typ++ {
			key := strings.Repeat("k", n) + strconv.Itoa(typ)
			if n == 0 && typ == 0 {
				key = ""
			}
			var val Value
			switch typ {
			case 0:
				val = NewIntSet()
			case 1:
				val = NewZSet(true)
			case 2:
				val = NewHash()
			case 3:
				val = NewList(cfg.ListMaxListpackSize)
			}
			e, v := db.SetNew([]byte(key), val, 1000)
			if e.Value() != v {
				t.Fatalf("key of %d bytes: the value returned is not the entry's", len(key))
			}
			if embedded := v != val; embedded != (len(key) <= maxEmbedKey) {
				t.Fatalf("key of %d bytes: embedded %v", len(key), embedded)
			}
			for i := 0; i < 8; i++ {
				m := []byte(strconv.Itoa(i * 7))
				switch x := v.(type) {
				case *Set:
					x.Add(m, cfg.SetMaxIntsetEntries)
				case *ZSet:
					x.SetB(m, float64(i))
				case *Hash:
					x.Set(m, "value-"+string(m), cfg)
				case *List:
					x.PushBack(m)
				}
			}
			got := db.Lookup([]byte(key), 2000)
			if got != e || entryNode(got).key != key {
				t.Fatalf("key of %d bytes: Lookup %p (key %q), want %p", len(key), got, entryNode(got).key, e)
			}
			d := v.Dup()
			if d.Size(0) != v.Size(0) || d.Encoding() != v.Encoding() {
				t.Fatalf("key %q: Dup differs", key)
			}
		}
	}
	if err := db.Check(); err != nil {
		t.Fatal(err)
	}
	// Rename keeps the node (and its value) under the new key; the old key
	// bytes in the node are simply unused.
	if !db.Rename([]byte("kkkkkkkkkk1"), []byte("renamed"), 3000) {
		t.Fatal("Rename")
	}
	if e := db.Lookup([]byte("renamed"), 3000); e == nil || e.Value().(*ZSet).Len() != 8 || db.Lookup([]byte("kkkkkkkkkk1"), 3000) != nil {
		t.Fatal("renamed key")
	}
	// An existing key: the value passed is stored, as Set.
	old := db.Lookup([]byte("kkkkkkkkkk2"), 3000)
	h := NewHash()
	e, v := db.SetNew([]byte("kkkkkkkkkk2"), h, 3000)
	if e != old || v != Value(h) || e.Value() != Value(h) {
		t.Fatal("SetNew of an existing key")
	}
	if !db.Delete([]byte("renamed")) || !db.Delete([]byte("kkkkkkkkkk2")) {
		t.Fatal("Delete")
	}
	if err := db.Check(); err != nil {
		t.Fatal(err)
	}
}

// TestLoadAddEmbeds: LoadAdd puts a loaded aggregate's header in the key
// node as SetNew does (the entry's value is a copy of the one passed, with
// its contents), a long key's value as is; the expiry is set either way.
func TestLoadAddEmbeds(t *testing.T) {
	db := NewDB()
	cfg := DefaultEncodingConfig()
	for _, n := range []int{1, 16, 192, 193} {
		key := strings.Repeat("h", n)
		h := NewHash()
		h.Set([]byte("f"), "v", cfg)
		e, ok := db.LoadAdd([]byte(key), h, 5000, 1)
		if !ok || db.ExpireAt(e) != 5000 {
			t.Fatalf("key of %d bytes: ok %v, expire %d", n, ok, db.ExpireAt(e))
		}
		got := e.Value().(*Hash)
		if embedded := got != h; embedded != (n <= maxEmbedKey) {
			t.Fatalf("key of %d bytes: embedded %v", n, embedded)
		}
		if v, _ := got.Get([]byte("f"), false); v != "v" || got.Len() != 1 {
			t.Fatalf("key of %d bytes: f=%q, %d fields", n, v, got.Len())
		}
		got.Set([]byte("g"), "w", cfg)
		if db.Lookup([]byte(key), 2).Value().(*Hash).Len() != 2 {
			t.Fatalf("key of %d bytes: the entry's value is not the one written", n)
		}
		if _, ok := db.LoadAdd([]byte(key), NewHash(), 0, 1); ok {
			t.Fatalf("key of %d bytes: added twice", n)
		}
	}
	if err := db.Keyspace().Check(); err != nil {
		t.Fatal(err)
	}
}
