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
		{"set", unsafe.Sizeof(valNode[Set, [24]byte]{}), 80},
		{"intset", unsafe.Sizeof(setNode[[96 - setNodeSize]byte]{}), 96},
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
			if got != e || entryNode(got).key() != key {
				t.Fatalf("key of %d bytes: Lookup %p (key %q), want %p", len(key), got, entryNode(got).key(), e)
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

// TestSetNewInlineIntset: SetNew of an intset under a key of up to 16
// bytes makes one 96-byte node holding the key and the intset, which
// SADD fills in place: 5 members of width 4 (scripts/rss-after-pipe.sh's
// small-intset) stay inline, a 6th moves the intset out; a wider member
// widens it in place while it fits, else moves it out too; the set reads
// the same throughout, Dup and the RDB blob have intset.c's header, a
// non-integer converts it, and the key bytes stay.
func TestSetNewInlineIntset(t *testing.T) {
	db := NewDB()
	cfg := DefaultEncodingConfig()
	key := []byte("iset:123456")
	e, v := db.SetNew(key, NewIntSet(), 1000)
	s := v.(*Set)
	if s.isInlineCap() != 96-int(setNodeSize)-len(key) || e.Value() != Value(s) {
		t.Fatalf("room %d, want %d", s.isInlineCap(), 96-int(setNodeSize)-len(key))
	}
	var want []int64
	for i := range 7 {
		x := int64(100000 + i)
		if !s.Add([]byte(strconv.FormatInt(x, 10)), cfg.SetMaxIntsetEntries) {
			t.Fatalf("add %d", x)
		}
		want = append(want, x)
		inline := s.isInlineCap() != 0
		if inline != (i < 5) {
			t.Fatalf("%d members: inline %v", i+1, inline)
		}
		if blob := s.IntsetBlob(); string(blob) != string(refIntsetBlob(want, 4)) {
			t.Fatalf("%d members: blob %x, want %x", i+1, blob, refIntsetBlob(want, 4))
		}
		d := s.Dup().(*Set)
		if d.isInlineCap() != 0 || string(d.IntsetBlob()) != string(refIntsetBlob(want, 4)) {
			t.Fatalf("%d members: Dup %x", i+1, d.isBytes())
		}
		if entryNode(db.Lookup(key, 2000)).key() != string(key) {
			t.Fatal("key bytes changed")
		}
		if err := db.Check(); err != nil {
			t.Fatal(err)
		}
	}
	// A wider member widens an inline intset in place while it fits.
	_, v = db.SetNew([]byte("iset:w"), NewIntSet(), 1000)
	s = v.(*Set)
	s.Add([]byte("1"), cfg.SetMaxIntsetEntries)
	s.Add([]byte("2"), cfg.SetMaxIntsetEntries)
	s.Add([]byte("-5000000000"), cfg.SetMaxIntsetEntries)
	if s.isInlineCap() == 0 || s.IntsetWidth() != 8 || string(s.IntsetBlob()) != string(refIntsetBlob([]int64{-5000000000, 1, 2}, 8)) {
		t.Fatalf("upgraded: %x", s.isBytes())
	}
	s.Add([]byte("5000000000"), cfg.SetMaxIntsetEntries) // 8 + 4*8 bytes: out of its room
	if s.isInlineCap() != 0 || string(s.IntsetBlob()) != string(refIntsetBlob([]int64{-5000000000, 1, 2, 5000000000}, 8)) {
		t.Fatalf("moved out: %x", s.isBytes())
	}
	// Removing from an inline intset keeps it inline; a non-integer turns
	// it into a hashtable.
	_, v = db.SetNew([]byte("iset:r"), NewIntSet(), 1000)
	s = v.(*Set)
	for _, m := range []string{"3", "1", "2"} {
		s.Add([]byte(m), cfg.SetMaxIntsetEntries)
	}
	if !s.Remove([]byte("1")) || s.isInlineCap() == 0 || string(s.IntsetBlob()) != string(refIntsetBlob([]int64{2, 3}, 2)) {
		t.Fatalf("remove: %x", s.isBytes())
	}
	s.Add([]byte("x"), cfg.SetMaxIntsetEntries)
	if s.Encoding() != EncodingHashtable || s.Len() != 3 || !s.Contains([]byte("2")) || !s.Contains([]byte("x")) {
		t.Fatalf("converted: %v, %d members", s.Encoding(), s.Len())
	}
	if err := db.Check(); err != nil {
		t.Fatal(err)
	}
}

// TestSetNewString: SetNew of a string makes the node SetString makes (key,
// header and bytes in one allocation, the value a copy with its kind) for
// a new key; a StringSized string, an existing key or a long key get the
// value passed, as Set.
func TestSetNewString(t *testing.T) {
	db := NewDB()
	val := NewString([]byte("12345"), StringIntUnshared)
	e, v := db.SetNew([]byte("s"), val, 1000)
	s := v.(*String)
	if s == val || e.Value() != Value(s) || !s.inline() || string(s.Bytes()) != "12345" || s.Kind() != StringIntUnshared {
		t.Fatalf("new key: %p (passed %p), inline %v, %q kind %v", s, val, s.inline(), s.Bytes(), s.Kind())
	}
	if string(val.Bytes()) != "12345" {
		t.Fatal("the value passed changed")
	}
	sized := NewString([]byte("abc"), StringSized)
	if _, v := db.SetNew([]byte("sized"), sized, 1000); v != Value(sized) {
		t.Fatal("a StringSized string was copied")
	}
	other := NewString([]byte("x"), StringRaw)
	if e2, v := db.SetNew([]byte("s"), other, 1000); e2 != e || v != Value(other) || e2.Value() != Value(other) {
		t.Fatal("existing key: the value passed is not stored")
	}
	long := strings.Repeat("k", 300)
	if _, v := db.SetNew([]byte(long), val, 1000); v != Value(val) {
		t.Fatal("a long key's string was copied")
	}
	if err := db.Check(); err != nil {
		t.Fatal(err)
	}
}
