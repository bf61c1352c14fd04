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
			if db.Lookup(k, 0) == nil {
				b.Fatal("missing")
			}
		}
	}
}

// BenchmarkLookup16 looks up a pipelined batch of 16 random keys, with and
// without Prefetch first.
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
