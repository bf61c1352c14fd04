package keyspace

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

func benchDB(n int) (*DB, [][]byte) {
	db := NewDB()
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = []byte("key:" + strconv.Itoa(i))
		db.Set(keys[i], NewString([]byte("value"), StringAuto), 0)
	}
	return db, keys
}

// TestHotPathAllocs: lookups of existing keys with []byte keys, overwrites
// of existing keys, TTL changes and glob matching do not allocate.
func TestHotPathAllocs(t *testing.T) {
	db, keys := benchDB(1000)
	db.SetExpire(keys[1], 1e12)
	val := Value(NewString([]byte("other"), StringAuto))
	missing := []byte("no-such-key")
	pattern := []byte("key:*[0-9]")
	checks := []struct {
		name string
		fn   func()
	}{
		{"Lookup", func() { _ = db.Lookup(keys[7], 1) }},
		{"Lookup with TTL", func() { _ = db.Lookup(keys[1], 1) }},
		{"Lookup missing", func() { _ = db.Lookup(missing, 1) }},
		{"LookupNoTouch", func() { _ = db.LookupNoTouch(keys[7], 1) }},
		{"Peek", func() { _ = db.Peek(keys[7]) }},
		{"Set existing", func() { _ = db.Set(keys[7], val, 1) }},
		{"SetKeepTTL existing", func() { _ = db.SetKeepTTL(keys[1], val, 1) }},
		{"SetExpire existing TTL", func() { _ = db.SetExpire(keys[1], 2e12) }},
		{"Dict.Find", func() { _ = db.dict.Find(keys[9]) }},
		{"GlobMatch", func() { _ = GlobMatch(pattern, keys[9], false) }},
		{"GlobMatchString", func() { _ = GlobMatchString(pattern, "key:123", true) }},
	}
	for _, c := range checks {
		if n := testing.AllocsPerRun(1000, c.fn); n != 0 {
			t.Errorf("%s: %v allocs per run", c.name, n)
		}
	}
	// Also during a rehash (each lookup does a rehash step).
	db.dict.Expand(1 << 14)
	if n := testing.AllocsPerRun(100, func() { _ = db.Lookup(keys[3], 1) }); n != 0 || !db.dict.IsRehashing() {
		t.Errorf("Lookup during rehash: %v allocs", n)
	}
}

func BenchmarkLookup(b *testing.B) {
	db, keys := benchDB(100000)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if db.Lookup(keys[i%len(keys)], 1) == nil {
			b.Fatal("missing")
		}
	}
}

func BenchmarkLookupMiss(b *testing.B) {
	db, _ := benchDB(100000)
	k := []byte("no-such-key")
	b.ReportAllocs()
	for b.Loop() {
		db.Lookup(k, 1)
	}
}

func BenchmarkSetExisting(b *testing.B) {
	db, keys := benchDB(100000)
	v := Value(NewString([]byte("value"), StringAuto))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		db.Set(keys[i%len(keys)], v, 1)
	}
}

func BenchmarkSetNew(b *testing.B) {
	keys := make([][]byte, 1<<20)
	for i := range keys {
		keys[i] = []byte("key:" + strconv.Itoa(i))
	}
	v := Value(NewString([]byte("value"), StringAuto))
	db := NewDB()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if i%len(keys) == 0 {
			db.Flush()
		}
		db.Set(keys[i%len(keys)], v, 1)
	}
}

func BenchmarkActiveExpireCycle(b *testing.B) {
	ks := New(16)
	db := ks.DBs[0]
	for i := range 100000 {
		k := []byte("key:" + strconv.Itoa(i))
		db.Set(k, NewString([]byte("v"), StringAuto), 0)
		db.SetExpire(k, 1e12)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	b.ReportAllocs()
	for b.Loop() {
		ks.ActiveExpireCycle(1000, rng, 25000, never)
	}
}

// BenchmarkSetNewString is the SET path of a new key (DB.SetString, as
// storeString): 1M distinct keys, then a flush, over and over.
func BenchmarkSetNewString(b *testing.B) {
	keys := make([][]byte, 1<<20)
	for i := range keys {
		keys[i] = []byte("key:" + strconv.Itoa(i))
	}
	val := []byte("value:123456")
	db := NewDB()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if i%len(keys) == 0 {
			db.Flush()
		}
		db.SetString(keys[i%len(keys)], val, StringAuto, 1, false)
	}
}

// BenchmarkWriteBigValue is the cost of one write to a set or hash of 1 k,
// 100 k and 1 M elements, with the memory accounting the server runs after
// every command (Settle). It must not grow with the size: a walk of the
// value per write made filling one O(N^2) (400 k SADDs took 25 s).
func BenchmarkWriteBigValue(b *testing.B) {
	cfg := EncodingConfig{HashMaxListpackEntries: 128, HashMaxListpackValue: 64, SetMaxIntsetEntries: 512}
	for _, size := range []int{1_000, 100_000, 1_000_000} {
		for _, typ := range []string{"set", "hash"} {
			b.Run(typ+"/"+strconv.Itoa(size), func(b *testing.B) {
				ks := New(1)
				db := ks.DBs[0]
				key := []byte("big")
				add := func(i int) {
					m := []byte("member-" + strconv.Itoa(i))
					e := db.Lookup(key, 0)
					if e == nil {
						var v Value = NewSetFor(m)
						if typ == "hash" {
							v = NewHash()
						}
						e = db.Set(key, v, 0)
					}
					switch v := db.Mutable(key, e).(type) {
					case *Set:
						v.Add(m, cfg.SetMaxIntsetEntries)
					case *Hash:
						v.Set(m, "value", cfg)
					}
					ks.Settle()
				}
				for i := 0; i < size; i++ {
					add(i)
				}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					add(size + i)
				}
			})
		}
	}
}
