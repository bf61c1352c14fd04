package keyspace

import (
	"math/rand/v2"
	"strconv"
	"testing"
	"unsafe"
)

// TestZIndexRandomOps: the member index agrees with a Go map through
// random adds, score changes and removals that grow, shrink and
// interleave with incremental rehashing.
func TestZIndexRandomOps(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	z := NewZSet(false)
	want := map[string]float64{}
	for i := 0; i < 200000; i++ {
		m := "m" + strconv.Itoa(rng.IntN(5000))
		op := rng.IntN(10)
		if (i < 120000 && op < 6) || op < 1 {
			s := float64(rng.IntN(100))
			_, had := want[m]
			if isNew := z.Set(m, s); isNew == had {
				t.Fatalf("Set(%q) new=%v, had=%v", m, isNew, had)
			}
			want[m] = s
		} else {
			_, had := want[m]
			if z.Remove([]byte(m)) != had {
				t.Fatalf("Remove(%q) != %v", m, had)
			}
			delete(want, m)
		}
		if i%20000 == 0 || i == 199999 {
			if z.Len() > 0 {
				if err := checkZSet(z, DefaultEncodingConfig()); err != nil {
					t.Fatalf("op %d: %v", i, err)
				}
			}
			for m, s := range want {
				if got, ok := z.Score([]byte(m)); !ok || got != s {
					t.Fatalf("Score(%q) = %v %v, want %v", m, got, ok, s)
				}
			}
			if z.sl().dict.len() != len(want) {
				t.Fatalf("index holds %d, want %d", z.sl().dict.len(), len(want))
			}
		}
	}
	if b := len(z.sl().dict.ht[0]) + len(z.sl().dict.ht[1]); b >= 8192 {
		t.Fatalf("%d members in %d buckets: the test misses the shrink path", len(want), b)
	}
}

// TestNodeSizes pins the per-element layouts that the memory benchmark
// (integration/benchmem) depends on: Go rounds each allocation up to a size
// class, so one more field can cost 16 bytes a key.
func TestNodeSizes(t *testing.T) {
	if n := unsafe.Sizeof(keyNode{}); n > 80 {
		t.Errorf("keyNode is %d bytes, want <= 80", n)
	}
	// A sorted-set node of level 1 (3 in 4) with its level: one 64-byte
	// size class and cache line.
	if n := unsafe.Sizeof(zslNodeN[[1]zslLevel]{}); n != 64 {
		t.Errorf("a level-1 zslNode is %d bytes, want 64", n)
	}
	if n := unsafe.Sizeof(zslNodeN[[2]zslLevel]{}); n != 80 {
		t.Errorf("a level-2 zslNode is %d bytes, want 80", n)
	}
}
