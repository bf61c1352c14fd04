package keyspace

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// zsetWriteSetup is the write benchmarks' key "big": a sorted set
// (listpack or skiplist, as NewZSet) of size members "element:i" with
// scores spread over 0..1000002, written through Mutable and settled as
// the server does; elem(i) is member i's name (its buffer is reused).
func zsetWriteSetup(size int, listpack bool) (*Keyspace, *DB, []byte, func(int) []byte) {
	ks := New(1)
	db := ks.DBs[0]
	key := []byte("big")
	db.Set(key, NewZSet(listpack), 0)
	var buf []byte
	elem := func(i int) []byte {
		buf = strconv.AppendInt(append(buf[:0], "element:"...), int64(i), 10)
		return buf
	}
	for i := 0; i < size; i++ {
		z := db.Mutable(key, db.Lookup(key, 0)).(*ZSet)
		z.Set(string(elem(i)), float64(i*7919%1000003))
		ks.Settle()
	}
	return ks, db, key, elem
}

// BenchmarkZSetWrite is integration/benchscale's sorted-set step in
// process: a set of size members ("element:i", scores spread over
// 0..1000002), then pairs of ZADD of a new member at a random score and
// ZREM of the oldest, with the memory accounting the server runs after
// every command (Settle). The cost of a pair must grow no faster than
// the skiplist's log n.
func BenchmarkZSetWrite(b *testing.B) {
	for _, size := range []int{1_000, 100_000, 1_000_000} {
		b.Run(strconv.Itoa(size), func(b *testing.B) {
			ks, db, key, elem := zsetWriteSetup(size, false)
			rng := rand.New(rand.NewPCG(1, 2))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				z := db.Mutable(key, db.Lookup(key, 0)).(*ZSet)
				z.Set(string(elem(size+i)), float64(rng.IntN(1000003)))
				ks.Settle()
				z = db.Mutable(key, db.Lookup(key, 0)).(*ZSet)
				if !z.Remove(elem(i)) {
					b.Fatal("missing", i)
				}
				ks.Settle()
			}
		})
	}
}

// BenchmarkZSetWriteListpack is BenchmarkZSetWrite at size 100, below
// zset-max-listpack-entries: a listpack, written as ZADD does (Find, then
// SetFound) and ZREM (RemoveArg).
func BenchmarkZSetWriteListpack(b *testing.B) {
	const size = 100
	ks, db, key, elem := zsetWriteSetup(size, true)
	rng := rand.New(rand.NewPCG(1, 2))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		z := db.Mutable(key, db.Lookup(key, 0)).(*ZSet)
		m := elem(size + i)
		_, ref, ok := z.Find(m)
		if ok {
			b.Fatal("present", size+i)
		}
		z.SetFound(ref, m, float64(rng.IntN(1000003)))
		ks.Settle()
		z = db.Mutable(key, db.Lookup(key, 0)).(*ZSet)
		if !z.RemoveArg(elem(i)) {
			b.Fatal("missing", i)
		}
		ks.Settle()
	}
	if z := db.Lookup(key, 0).Value().(*ZSet); !z.IsListpack() || z.Len() != size {
		b.Fatalf("listpack %v, %d members", z.IsListpack(), z.Len())
	}
}

// BenchmarkZSetUpdateScore is redis-benchmark's ZADD with -r on a full set:
// ZADD myzset <random score> element:<random> where the member exists, so
// each op is a lookup plus a score change that moves the node
// (updateScore), on a set of size members with scores 0..size-1.
func BenchmarkZSetUpdateScore(b *testing.B) {
	for _, size := range []int{1_000, 100_000, 1_000_000} {
		b.Run(strconv.Itoa(size), func(b *testing.B) {
			z := NewZSet(false)
			for i := 0; i < size; i++ {
				z.Set("element:"+strconv.Itoa(i), float64(i))
			}
			rng := rand.New(rand.NewPCG(1, 2))
			members := make([][]byte, 4096)
			scores := make([]float64, len(members))
			for i := range members {
				members[i] = []byte("element:" + strconv.Itoa(rng.IntN(size)))
				scores[i] = float64(rng.IntN(size))
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				m := members[i%len(members)]
				if z.SetB(m, scores[(i+i/len(members))%len(scores)]) {
					b.Fatal("missing", string(m))
				}
			}
		})
	}
}
