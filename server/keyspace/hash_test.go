package keyspace

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

func hashFields(h *Hash) []string {
	var out []string
	h.Range(func(f, v string) bool { out = append(out, f+"="+v); return true })
	return out
}

func TestHashListpackOrderAndBytes(t *testing.T) {
	cfg := DefaultEncodingConfig()
	h := NewHash()
	if !h.Set([]byte("a"), "1", cfg) || !h.Set([]byte("b"), "hello", cfg) || h.Set([]byte("a"), "22", cfg) {
		t.Fatal("Set's new-field reports")
	}
	if got := fmt.Sprint(hashFields(h)); got != "[a=22 b=hello]" {
		t.Fatalf("order %s", got)
	}
	// header 6 + a(1+1+1) + 22(1+1) + b(1+1+1) + hello(1+5+1) + end 1.
	if h.lpBytes() != 6+3+2+3+7+1 {
		t.Fatalf("lpBytes %d", h.lpBytes())
	}
	// MEMORY USAGE of key "h" with {a:1, b:hello} on redis-server 7.0.15
	// is 80: robj 16 + jemalloc(22) 32 + key sds 8 + dictEntry 24.
	h.Set([]byte("a"), "1", cfg)
	if got := h.Size(0); got != 80-8-24 {
		t.Fatalf("Size %d", got)
	}
	if !h.Delete([]byte("a")) || h.Delete([]byte("a")) {
		t.Fatal("Delete reports")
	}
	if h.lpBytes() != 6+3+7+1 || h.Len() != 1 || h.Encoding() != EncodingListpack {
		t.Fatalf("after delete: bytes %d len %d", h.lpBytes(), h.Len())
	}
}

func TestListpackEntrySize(t *testing.T) {
	for _, c := range []struct {
		s    string
		want int
	}{
		{"0", 2}, {"127", 2}, {"128", 3}, {"-4096", 3}, {"4095", 3}, {"4096", 4}, {"-32768", 4}, {"32768", 5},
		{"8388607", 5}, {"8388608", 6}, {"2147483647", 6}, {"2147483648", 10}, {"-9223372036854775808", 10},
		{"-0", 4}, {"01", 4}, {"", 2}, {string(make([]byte, 63)), 65}, {string(make([]byte, 64)), 67},
		{string(make([]byte, 125)), 128}, {string(make([]byte, 126)), 130}, {string(make([]byte, 4096)), 4103},
	} {
		if got := lpEntrySize(c.s); got != c.want {
			t.Errorf("lpEntrySize(len %d %.8q) = %d, want %d", len(c.s), c.s, got, c.want)
		}
	}
}

func TestHashConversions(t *testing.T) {
	cfg := DefaultEncodingConfig()
	cfg.HashMaxListpackEntries, cfg.HashMaxListpackValue = 3, 4
	h := NewHash()
	for i := 0; i < 3; i++ {
		h.Set([]byte{byte('a' + i)}, "v", cfg)
	}
	if h.Encoding() != EncodingListpack {
		t.Fatal("converted too early")
	}
	h.Set([]byte("d"), "v", cfg)
	if h.Encoding() != EncodingHashtable || h.ht().Buckets() != 4 {
		t.Fatalf("entries: %v, %d buckets", h.Encoding(), h.ht().Buckets())
	}
	for _, f := range []string{"a", "b", "c"} {
		h.Delete([]byte(f))
	}
	if h.Encoding() != EncodingHashtable {
		t.Fatal("a hashtable never goes back to listpack")
	}
	h2 := NewHash()
	h2.Set([]byte("a"), "1234", cfg)
	if h2.Encoding() != EncodingListpack {
		t.Fatal("4 bytes fit")
	}
	h2.Set([]byte("a"), "12345", cfg)
	if h2.Encoding() != EncodingHashtable {
		t.Fatal("a value over the limit converts")
	}
	h3 := NewHash()
	h3.TryConversion([][]byte{[]byte("ab"), []byte("abcde")}, cfg)
	if h3.Encoding() != EncodingHashtable {
		t.Fatal("TryConversion")
	}
}

// TestHashtableSize: 129 fields "f100".."f228" with values "v100"..
// converted at hash-max-listpack-entries 128: MEMORY USAGE of key "big" on
// redis-server 7.0.15 is 7312 (256 buckets).
func TestHashtableSize(t *testing.T) {
	cfg := DefaultEncodingConfig()
	cfg.HashMaxListpackEntries = 128
	h := NewHash()
	for i := 100; i <= 228; i++ {
		h.Set([]byte("f"+strconv.Itoa(i)), "v"+strconv.Itoa(i), cfg)
	}
	if got := h.Size(0) + 8 + DictEntrySize; got != 7312 {
		t.Fatalf("Size %d", got)
	}
	if got := h.Size(5) + 8 + DictEntrySize; got != 7312 {
		t.Fatalf("Size(5) %d", got)
	}
	d := h.Dup().(*Hash)
	if d.ht().Buckets() != 256 || d.Len() != 129 {
		t.Fatalf("Dup: %d buckets, %d fields", d.ht().Buckets(), d.Len())
	}
	d.Set([]byte("f100"), "x", cfg)
	if v, _ := h.Get([]byte("f100"), true); v != "v100" {
		t.Fatal("Dup shares the table")
	}
}

// TestHashtableModel runs random sets and deletes on a hashtable against a
// map, through growth, shrinking and incremental rehashing.
func TestHashtableModel(t *testing.T) {
	cfg := DefaultEncodingConfig()
	cfg.HashMaxListpackEntries = 0
	rng := rand.New(rand.NewPCG(1, 2))
	h := NewHash()
	model := map[string]string{}
	for i := 0; i < 20000; i++ {
		f := strconv.Itoa(rng.IntN(600))
		if i > 10000 {
			f = strconv.Itoa(rng.IntN(60)) // shrink
		}
		switch rng.IntN(3) {
		case 0:
			_, had := model[f]
			if h.Delete([]byte(f)) != had {
				t.Fatalf("Delete(%s) at %d", f, i)
			}
			delete(model, f)
		default:
			v := strconv.Itoa(i)
			_, had := model[f]
			if h.Set([]byte(f), v, cfg) == had {
				t.Fatalf("Set(%s) at %d", f, i)
			}
			model[f] = v
		}
		if h.Len() != len(model) {
			t.Fatalf("Len %d, model %d at %d", h.Len(), len(model), i)
		}
		if h.Len() > 0 {
			if f, v, ok := h.RandomField(rng, true); !ok || model[f] != v {
				t.Fatalf("RandomField %q %q", f, v)
			}
		}
	}
	for f, v := range model {
		if got, ok := h.Get([]byte(f), true); !ok || got != v {
			t.Fatalf("Get(%s) = %q, want %q", f, got, v)
		}
	}
	if h.ht().Buckets() > 4*nextPow(len(model)) {
		t.Fatalf("%d buckets for %d fields: no shrink", h.ht().Buckets(), len(model))
	}
}

// TestHashtableScanGuarantee: a full HSCAN returns every field present for
// the whole scan although fields are added (the table grows and rehashes)
// between the calls.
func TestHashtableScanGuarantee(t *testing.T) {
	cfg := DefaultEncodingConfig()
	cfg.HashMaxListpackEntries = 0
	h := NewHash()
	for i := 0; i < 100; i++ {
		h.Set([]byte("k"+strconv.Itoa(i)), "v", cfg)
	}
	seen := map[string]bool{}
	cursor, n := uint64(0), 0
	for {
		cursor = h.Scan(cursor, func(f, _ string) { seen[f] = true })
		for j := 0; j < 7; j++ {
			h.Set([]byte("new"+strconv.Itoa(n)), "v", cfg)
			n++
		}
		if cursor == 0 {
			break
		}
	}
	for i := 0; i < 100; i++ {
		if !seen["k"+strconv.Itoa(i)] {
			t.Fatalf("k%d missed", i)
		}
	}
}

// TestHashReadWithoutStep: a read with step=false does no rehashing work,
// so a value a snapshot shares is not written.
func TestHashReadWithoutStep(t *testing.T) {
	cfg := DefaultEncodingConfig()
	cfg.HashMaxListpackEntries = 0
	h := NewHash()
	for i := 0; i < 5; i++ {
		h.Set([]byte(strconv.Itoa(i)), "v", cfg)
	}
	if !h.ht().isRehashing() {
		t.Fatal("want a table being rehashed (4 -> 8)")
	}
	idx, used := h.ht().rehashIdx, h.ht().used
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 10; i++ {
		h.Get([]byte("3"), false)
		h.RandomField(rng, false)
	}
	if h.ht().rehashIdx != idx || h.ht().used != used {
		t.Fatal("reads without step moved entries")
	}
	h.Get([]byte("3"), true)
	if h.ht().rehashIdx == idx && h.ht().used == used && h.ht().isRehashing() {
		t.Fatal("a read with step did no rehashing")
	}
}

// TestHashSnapshotCopyOnWrite: an HSET-style change through DB.Mutable
// while a snapshot holds the hash leaves the snapshot's value intact.
func TestHashSnapshotCopyOnWrite(t *testing.T) {
	ks := New(1)
	db := ks.DBs[0]
	cfg := ks.Encodings
	for _, key := range []string{"lp", "ht"} {
		h := NewHash()
		h.Set([]byte("a"), "1", cfg)
		if key == "ht" {
			h.Set([]byte("long"), string(make([]byte, 100)), cfg)
		}
		db.Set([]byte(key), h, 0)
	}
	s, err := ks.BeginSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, key := range []string{"lp", "ht"} {
		e := db.Lookup([]byte(key), 0)
		h := db.Mutable([]byte(key), e).(*Hash)
		h.Set([]byte("a"), "2", cfg)
		h.Delete([]byte("long"))
	}
	var items []Item
	for range 100 {
		more, done := s.Step(nil, 100)
		items = append(items, more...)
		if done {
			break
		}
	}
	if len(items) != 2 {
		t.Fatalf("%d items", len(items))
	}
	for _, it := range items {
		if v, _ := it.Value.(*Hash).Get([]byte("a"), false); v != "1" {
			t.Errorf("snapshot of %s sees a=%q", it.Key, v)
		}
		if v, _ := db.Lookup([]byte(it.Key), 0).Value().(*Hash).Get([]byte("a"), false); v != "2" {
			t.Errorf("live %s has a=%q", it.Key, v)
		}
	}
}

// TestFieldEntryBytes: a hashtable field keeps its field and value bytes
// in its own allocation up to 256 bytes (one size class, no per-string
// slack), longer ones as strings; every length reads back, and a value
// read before an overwrite keeps its bytes.
func TestFieldEntryBytes(t *testing.T) {
	for _, kl := range []int{0, 1, 7, 8, 100, 239, 240, 241, 1000} {
		for _, vl := range []int{0, 1, 8, 15, 16, 200, 5000} {
			k := strings.Repeat("k", kl)
			v := strings.Repeat("v", vl)
			e := newFieldEntry(k, v)
			if e.key() != k || e.val() != v || !e.keyIs([]byte(k)) || e.keyIs([]byte(k+"x")) {
				t.Fatalf("key %d, val %d bytes: read back %d, %d bytes", kl, vl, len(e.key()), len(e.val()))
			}
			if inline := kl+vl <= 256-int(fieldEntrySize); inline != (e.klen != fieldExt) {
				t.Fatalf("key %d, val %d bytes: inline %v", kl, vl, !inline)
			}
		}
	}
	// "field-123456" = "value-123456": 16 + 24 bytes, the 48-byte class.
	if n := unsafe.Sizeof(fieldEntryN[[48 - fieldEntrySize]byte]{}); n != 48 || fieldEntrySize != 16 {
		t.Fatalf("field entry of 48 - %d bytes is %d bytes", fieldEntrySize, n)
	}
	h := NewHash()
	cfg := EncodingConfig{HashMaxListpackEntries: 0, HashMaxListpackValue: 64}
	h.Set([]byte("f"), "old", cfg)
	old, _ := h.Get([]byte("f"), true)
	if h.Set([]byte("f"), "new value", cfg) {
		t.Fatal("overwrite reported a new field")
	}
	if got, _ := h.Get([]byte("f"), true); got != "new value" || old != "old" || h.Len() != 1 {
		t.Fatalf("after overwrite: %q (the earlier read: %q), %d fields", got, old, h.Len())
	}
}

// TestHashSetBCopies: SetB keeps no reference to the caller's bytes (a
// connection's read buffer), in either encoding.
func TestHashSetBCopies(t *testing.T) {
	for _, entries := range []int{128, 0} {
		cfg := EncodingConfig{HashMaxListpackEntries: entries, HashMaxListpackValue: 64}
		h := NewHash()
		f, v := []byte("field"), []byte("value")
		if !h.SetB(f, v, cfg) || h.SetB(f, v, cfg) {
			t.Fatalf("entries %d: SetB new/existing reported wrong", entries)
		}
		copy(f, "XXXXX")
		copy(v, "YYYYY")
		if got, ok := h.Get([]byte("field"), true); !ok || got != "value" {
			t.Fatalf("entries %d (%v): after the caller's bytes changed: %q, %v", entries, h.Encoding(), got, ok)
		}
	}
}

// The packed listpack never writes bytes it has handed out: strings read
// before an update, a delete or an append keep their contents, and a Dup
// and its original grow apart without writing into each other's bytes.
func TestHashListpackBytesStayIntact(t *testing.T) {
	cfg := DefaultEncodingConfig()
	h := NewHash()
	for i := range 5 {
		h.Set([]byte("f"+strconv.Itoa(i)), "v"+strconv.Itoa(i), cfg)
	}
	v1, _ := h.Get([]byte("f1"), false)
	var seen []string
	h.Range(func(f, v string) bool { seen = append(seen, f+"="+v); return true })
	d := h.Dup().(*Hash)
	h.Set([]byte("f1"), "changed", cfg)
	h.Delete([]byte("f0"))
	h.Set([]byte("new-in-h"), "x", cfg)
	d.Set([]byte("new-in-d"), "y", cfg)
	if v1 != "v1" || fmt.Sprint(seen) != "[f0=v0 f1=v1 f2=v2 f3=v3 f4=v4]" {
		t.Fatalf("views changed: %q %v", v1, seen)
	}
	if got := fmt.Sprint(hashFields(h)); got != "[f1=changed f2=v2 f3=v3 f4=v4 new-in-h=x]" {
		t.Fatalf("h %s", got)
	}
	if got := fmt.Sprint(hashFields(d)); got != "[f0=v0 f1=v1 f2=v2 f3=v3 f4=v4 new-in-d=y]" {
		t.Fatalf("dup %s", got)
	}
	for _, x := range []*Hash{h, d} {
		if err := checkHash(x, cfg); err != nil {
			t.Fatal(err)
		}
	}
	// Empty fields and values, and conversion with the buffer's strings.
	e := NewHash()
	e.Set([]byte(""), "", cfg)
	e.Set([]byte("a"), "", cfg)
	if v, ok := e.Get([]byte(""), false); !ok || v != "" || e.Len() != 2 {
		t.Fatalf("empty field: %q %v %d", v, ok, e.Len())
	}
	for i := range cfg.HashMaxListpackEntries + 1 {
		e.Set([]byte("k"+strconv.Itoa(i)), strconv.Itoa(i), cfg)
	}
	if e.Encoding() != EncodingHashtable || e.Len() != cfg.HashMaxListpackEntries+3 {
		t.Fatalf("after conversion: %v %d", e.Encoding(), e.Len())
	}
	if v, ok := e.Get([]byte("k7"), false); !ok || v != "7" {
		t.Fatalf("k7 = %q %v", v, ok)
	}
}

// TestHashListpackLayout: the header is 16 bytes (a key node of 80 with a
// short key, TestValNodeSizes); 5 pairs of 7-byte fields and values take
// 81 bytes (the lpBytes prefix, 97, and 16 a pair) in a 96-byte
// allocation; a field that fits the allocation is appended in place, one
// that does not or that widens the lpBytes prefix moves the pairs to a new
// buffer; Dup copies the buffer.
func TestHashListpackLayout(t *testing.T) {
	if s := unsafe.Sizeof(Hash{}); s != 16 {
		t.Fatalf("Hash header %d bytes, want 16", s)
	}
	cfg := DefaultEncodingConfig()
	h := NewHash()
	if h.lpBytes() != lpEmptySize || h.lpBuf() != nil {
		t.Fatalf("empty: lpBytes %d, buffer %d bytes", h.lpBytes(), len(h.lpBuf()))
	}
	for j := range 5 {
		h.Set([]byte("field-"+strconv.Itoa(j)), "value-"+strconv.Itoa(j), cfg)
	}
	if n, lp := len(h.lpBuf()), h.lpBytes(); n != 81 || lp != 97 || zpCap(n) != 96 {
		t.Fatalf("buffer %d bytes (capacity %d), lpBytes %d", n, zpCap(n), lp)
	}
	p := h.p
	h.Set([]byte("f"), "v", cfg) // 81+4 <= 96, lpBytes 97+6 < 128
	if h.p != p || len(h.lpBuf()) != 85 || h.lpBytes() != 103 {
		t.Fatalf("in place: moved %v, %d bytes, lpBytes %d", h.p != p, len(h.lpBuf()), h.lpBytes())
	}
	h.Set([]byte("g"), "w", cfg) // 89 bytes, lpBytes 109
	h.Set([]byte("h"), "x", cfg) // 93 bytes, lpBytes 115
	if h.p != p {
		t.Fatal("moved within the size class")
	}
	h.Set([]byte("i"), "yyyyyyyyy", cfg) // lpBytes 115+3+11 = 129: a 2-byte prefix, a 12-byte pair
	if h.p == p || h.lpBytes() != 129 || len(h.lpBuf()) != 93+1+12 {
		t.Fatalf("widened prefix: moved %v, lpBytes %d, %d bytes", h.p != p, h.lpBytes(), len(h.lpBuf()))
	}
	d := h.Dup().(*Hash)
	if d.p == h.p || !slices.Equal(d.lpBuf(), h.lpBuf()) {
		t.Fatal("Dup shares or changes the buffer")
	}
	d.Set([]byte("j"), "1", cfg)
	h.Set([]byte("k"), "2", cfg)
	if got := fmt.Sprint(hashFields(d)[8:]); got != "[i=yyyyyyyyy j=1]" {
		t.Fatalf("dup %s", got)
	}
	if got := fmt.Sprint(hashFields(h)[8:]); got != "[i=yyyyyyyyy k=2]" {
		t.Fatalf("h %s", got)
	}
	for _, x := range []*Hash{h, d} {
		if err := checkHash(x, cfg); err != nil {
			t.Fatal(err)
		}
	}
}

// TestHashListpackModel: random HSET/HDEL on listpack hashes (fields and
// values up to 64 bytes, up to 500 fields, so the lpBytes prefix takes 1
// to 3 bytes) against an ordered model: listpack order, Len, lpBytes
// (checkHash), the conversion to a hashtable when Redis converts, and Dup
// copies taken along the way keep their own contents while both sides are
// written, as do the strings read from a listpack before each write (the
// deletes then are Delete's; the others are Delete's or DeleteArg's, in
// place, at random).
func TestHashListpackModel(t *testing.T) {
	cfg := DefaultEncodingConfig()
	cfg.HashMaxListpackEntries = 500
	cfg.HashMaxListpackValue = 64
	widths := map[int]bool{}
	rng := rand.New(rand.NewPCG(7, 24))
	type pair struct{ f, v string }
	type copyOf struct {
		h     *Hash
		model []pair
		ht    bool
	}
	str := func(n int) string {
		if rng.IntN(3) == 0 {
			return strconv.Itoa(rng.IntN(1 << uint(rng.IntN(40)+1)))
		}
		return strings.Repeat(string(rune('a'+rng.IntN(26))), n)
	}
	for round := range 8 {
		copies := []*copyOf{{h: NewHash()}}
		for i := 0; i < 4000; i++ {
			c := copies[rng.IntN(len(copies))]
			if rng.IntN(400) == 0 && len(copies) < 5 {
				copies = append(copies, &copyOf{h: c.h.Dup().(*Hash), model: slices.Clone(c.model), ht: c.ht})
				continue
			}
			// Reads of a listpack before the write, checked after it (a
			// hashtable's are valid only until the next write).
			var views, clones []string
			if len(c.model) > 0 && rng.IntN(4) == 0 && !c.ht {
				c.h.Range(func(f, v string) bool {
					views = append(views, f, v)
					clones = append(clones, strings.Clone(f), strings.Clone(v))
					return true
				})
			}
			f := strconv.Itoa(rng.IntN(min(700, 20+i/4)))
			if rng.IntN(50) == 0 {
				f = str(rng.IntN(65))
				if rng.IntN(100) == 0 {
					f = str(65) // converts
				}
			}
			at := slices.IndexFunc(c.model, func(p pair) bool { return p.f == f })
			if rng.IntN(5) == 0 {
				del := c.h.Delete
				if views == nil && rng.IntN(2) == 0 {
					del = c.h.DeleteArg // HDEL's, in place: no string read is held
				}
				if del([]byte(f)) != (at >= 0) {
					t.Fatalf("round %d op %d: Delete(%q)", round, i, f)
				}
				if at >= 0 {
					c.model = slices.Delete(c.model, at, at+1)
				}
			} else {
				v := str(rng.IntN(65))
				if rng.IntN(4) != 0 {
					v = str(50 + rng.IntN(15))
				}
				if rng.IntN(5000) == 0 {
					v = str(65) // converts
				}
				var isNew bool
				if rng.IntN(2) == 0 {
					isNew = c.h.Set([]byte(f), v, cfg)
				} else {
					isNew = c.h.SetB([]byte(f), []byte(v), cfg)
				}
				if isNew != (at < 0) {
					t.Fatalf("round %d op %d: Set(%q) new %v", round, i, f, isNew)
				}
				if at >= 0 {
					c.model[at].v = v
				} else {
					c.model = append(c.model, pair{f, v})
				}
				if len(f) > 64 || len(v) > 64 || len(c.model) > 500 {
					c.ht = true
				}
			}
			if !slices.Equal(views, clones) {
				t.Fatalf("round %d op %d: a string read before the write changed", round, i)
			}
			if _, _, eo := c.h.lpHead(); eo > 0 {
				widths[eo] = true
			}
			if c.h.Len() != len(c.model) || (c.h.Encoding() == EncodingHashtable) != c.ht {
				t.Fatalf("round %d op %d: len %d/%d, encoding %v, want hashtable %v", round, i, c.h.Len(), len(c.model), c.h.Encoding(), c.ht)
			}
			if len(c.model) > 0 {
				if err := checkHash(c.h, cfg); err != nil {
					t.Fatalf("round %d op %d: %v", round, i, err)
				}
			}
			if !c.ht && i%25 == 0 {
				for _, c := range copies {
					if c.ht {
						continue
					}
					want := make([]string, len(c.model))
					for j, p := range c.model {
						want[j] = p.f + "=" + p.v
					}
					if got := hashFields(c.h); !slices.Equal(got, want) {
						t.Fatalf("round %d op %d: fields\n%v\nwant\n%v", round, i, got, want)
					}
				}
			}
		}
		for _, c := range copies {
			for _, p := range c.model {
				if v, ok := c.h.Get([]byte(p.f), false); !ok || v != p.v {
					t.Fatalf("round %d: Get(%q) = %q %v, want %q", round, p.f, v, ok, p.v)
				}
			}
		}
	}
	if !widths[1] || !widths[2] || !widths[3] {
		t.Fatalf("lpBytes prefix widths seen: %v", widths)
	}
}
