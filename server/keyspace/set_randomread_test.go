package keyspace

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestSetRandomReadDoesNotRehash: SRANDMEMBER's draw (RandomRead) leaves a
// rehashing hashtable set as it was, where Random (SPOP's) moves buckets:
// a read must not write a value a running snapshot may be iterating.
func TestSetRandomReadDoesNotRehash(t *testing.T) {
	s := NewSetFor([]byte("m0"))
	for i := 0; !s.ht().isRehashing(); i++ {
		if i > 1<<20 {
			t.Fatal("the set never started rehashing")
		}
		s.Add([]byte("m"+strconv.Itoa(i)), 512)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	idx, used0, used1 := s.ht().rehashIdx, s.ht().used[0], s.ht().used[1]
	for range 100 {
		if m := s.RandomRead(rng); m.S == "" {
			t.Fatal("empty member drawn")
		}
	}
	if s.ht().rehashIdx != idx || s.ht().used[0] != used0 || s.ht().used[1] != used1 {
		t.Fatalf("RandomRead rehashed: idx %d->%d used %d/%d -> %d/%d", idx, s.ht().rehashIdx, used0, used1, s.ht().used[0], s.ht().used[1])
	}
	s.Random(rng)
	if s.ht().isRehashing() && s.ht().rehashIdx == idx && s.ht().used[1] == used1 {
		t.Fatal("Random did no rehash step (the test no longer tells them apart)")
	}
}
