package keyspace

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

func benchPrefetch(b *testing.B, n int, pf bool) {
	db := NewDB()
	for i := 0; i < n; i++ {
		k := []byte(fmt.Sprintf("key:%012d", i))
		db.Set(k, NewString([]byte("1"), 0), 0)
	}
	keys := make([][]byte, 16)
	bufs := make([][]byte, 4096)
	for i := range bufs {
		bufs[i] = []byte(fmt.Sprintf("key:%012d", rand.IntN(n)))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j := range keys {
			keys[j] = bufs[(i*16+j)&4095]
		}
		if pf {
			db.Prefetch(keys)
		}
		for _, k := range keys {
			e := db.Lookup(k, 0)
			if e == nil {
				b.Fatal("missing")
			}
			if s, ok := e.StringValue(); !ok || s.Bytes()[0] != '1' { // GET's read
				b.Fatal("value")
			}
		}
	}
}

// BenchmarkLookup16 looks up a pipelined batch of 16 random keys and reads
// their values, with and without Prefetch first.
func BenchmarkLookup16(b *testing.B) {
	for _, n := range []int{100000, 1000000} {
		b.Run(fmt.Sprintf("n=%d/plain", n), func(b *testing.B) { benchPrefetch(b, n, false) })
		b.Run(fmt.Sprintf("n=%d/prefetch", n), func(b *testing.B) { benchPrefetch(b, n, true) })
	}
}

// TestPrefetchChangesNothing: Prefetch reads only: an empty database, keys
// present and absent, more than 32 keys, and a table in mid-rehash (which
// a lookup would step) are all left as they were.
func TestPrefetchChangesNothing(t *testing.T) {
	db := NewDB()
	db.Prefetch([][]byte{[]byte("a")}) // empty: nothing to read
	var keys [][]byte
	for i := 0; i < 40; i++ {
		keys = append(keys, []byte(fmt.Sprintf("k%d", i)))
	}
	for i := 0; i < 1000; i++ {
		db.Set([]byte(fmt.Sprintf("k%d", i)), NewString([]byte("v"), 0), 0)
		if db.dict.IsRehashing() {
			break
		}
	}
	if !db.dict.IsRehashing() {
		t.Fatal("no rehash to look at")
	}
	before := db.dict.rehashIdx
	db.Prefetch(append(keys, []byte("absent")))
	if db.dict.rehashIdx != before {
		t.Fatalf("Prefetch stepped the rehash: %d -> %d", before, db.dict.rehashIdx)
	}
	if db.Len() == 0 || db.Lookup([]byte("k1"), 0) == nil {
		t.Fatal("keys lost")
	}
}

// TestPrefetchMembersChangesNothing: PrefetchMembers reads only, for a
// hashtable hash and set (one in mid-rehash, which a lookup would step), a
// listpack hash, an intset, a string, an absent key, nil members and more
// than 32 of them; and the database's own table in mid-rehash is not
// stepped either.
func TestPrefetchMembersChangesNothing(t *testing.T) {
	db := NewDB()
	cfg := DefaultEncodingConfig()
	cfg.HashMaxListpackEntries = 4
	var members [][]byte
	for i := 0; i < 40; i++ {
		members = append(members, []byte(fmt.Sprintf("m%d", i)))
	}
	members = append(members, nil, []byte(""), make([]byte, 300))
	mid := NewHash() // ends with its table in mid-rehash
	for i := 0; ; i++ {
		mid.Set([]byte(fmt.Sprintf("m%d", i)), "v", cfg)
		if d := mid.ht(); d != nil && d.isRehashing() && i > 8 {
			break
		}
	}
	big := NewHash()
	for i := 0; i < 100; i++ {
		big.Set([]byte(fmt.Sprintf("m%d", i)), fmt.Sprint(i), cfg)
	}
	big.Set(make([]byte, 300), "long", cfg) // a fieldEntryExt
	small := NewHash()
	small.Set([]byte("m1"), "v", DefaultEncodingConfig())
	set := NewSetFor([]byte("m1"))
	for i := 0; i < 100; i++ {
		set.Add([]byte(fmt.Sprintf("m%d", i)), 512)
	}
	ints := NewSetFor([]byte("1"))
	ints.Add([]byte("1"), 512)
	for k, v := range map[string]Value{"mid": mid, "big": big, "small": small, "set": set, "ints": ints, "str": NewString([]byte("x"), 0)} {
		db.Set([]byte(k), v, 0)
	}
	for i := 0; i < 1000 && !db.dict.IsRehashing(); i++ {
		db.Set([]byte(fmt.Sprintf("k%d", i)), NewString([]byte("v"), 0), 0)
	}
	if !db.dict.IsRehashing() || !mid.ht().isRehashing() {
		t.Fatal("no rehash to look at")
	}
	dbIdx, midIdx, midUsed := db.dict.rehashIdx, mid.ht().rehashIdx, mid.ht().used
	for _, k := range []string{"mid", "big", "small", "set", "ints", "str", "absent"} {
		if want := k == "mid" || k == "big" || k == "set"; db.HasMemberTable([]byte(k)) != want {
			t.Fatalf("HasMemberTable(%s) = %v", k, !want)
		}
		db.PrefetchMembers([]byte(k), members)
		db.PrefetchMembers([]byte(k), nil)
	}
	if db.dict.rehashIdx != dbIdx || mid.ht().rehashIdx != midIdx || mid.ht().used != midUsed {
		t.Fatal("PrefetchMembers stepped a rehash")
	}
	if v, ok := big.Get([]byte("m7"), false); !ok || v != "7" || big.Len() != 101 || set.Len() != 100 {
		t.Fatalf("values changed: %q %v %d %d", v, ok, big.Len(), set.Len())
	}
}

// BenchmarkHSet16 overwrites a pipelined batch of 16 random fields of a
// 100 k-field hash (redis-benchmark's HSET -r 100000 -P 16), with and
// without PrefetchMembers first.
func BenchmarkHSet16(b *testing.B) {
	for _, pf := range []bool{false, true} {
		b.Run(fmt.Sprintf("prefetch=%v", pf), func(b *testing.B) {
			db := NewDB()
			cfg := DefaultEncodingConfig()
			h := NewHash()
			for i := 0; i < 100000; i++ {
				h.Set([]byte(fmt.Sprintf("element:%012d", i)), "xxx", cfg)
			}
			key := []byte("myhash")
			db.Set(key, h, 0)
			bufs := make([][]byte, 4096)
			for i := range bufs {
				bufs[i] = []byte(fmt.Sprintf("element:%012d", rand.IntN(100000)))
			}
			fields := make([][]byte, 16)
			val := []byte("yyy")
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for j := range fields {
					fields[j] = bufs[(i*16+j)&4095]
				}
				if pf {
					db.PrefetchMembers(key, fields)
				}
				for _, f := range fields {
					h.SetB(f, val, cfg)
				}
			}
		})
	}
}
