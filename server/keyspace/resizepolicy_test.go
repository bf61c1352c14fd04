package keyspace

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestResizePolicyAvoid: while a child runs (DisableResize, Redis's
// DICT_RESIZE_AVOID) a dict grows only past dict_force_resize_ratio
// elements per bucket, never shrinks, and a rehash between tables of
// sizes closer than that ratio waits; EnableResize lets them happen again.
func TestResizePolicyAvoid(t *testing.T) {
	d := &Dict{}
	val := &Entry{}
	for i := range 8 {
		d.Set("k"+strconv.Itoa(i), val)
	}
	for d.IsRehashing() {
		d.Rehash(100)
	}
	if d.Buckets() != 8 {
		t.Fatalf("%d buckets for 8 keys, want 8", d.Buckets())
	}
	DisableResize()
	for i := 8; i < 48; i++ { // 48 keys in 8 buckets: ratio 6 > 5 on the next add
		d.Set("k"+strconv.Itoa(i), val)
		if d.IsRehashing() || d.Buckets() != 8 {
			EnableResize()
			t.Fatalf("grew at %d keys while avoiding resizes", i+1)
		}
	}
	d.Set("k48", val)
	if !d.IsRehashing() {
		EnableResize()
		t.Fatal("did not grow past the force ratio")
	}
	for d.IsRehashing() {
		d.Rehash(100) // 8 -> 64: ratio 8, allowed
	}
	for i := 0; i < 45; i++ {
		d.DeleteString("k" + strconv.Itoa(i))
	}
	if d.IsRehashing() || d.Buckets() != 64 {
		EnableResize()
		t.Fatalf("shrank while avoiding resizes: %d buckets", d.Buckets())
	}
	EnableResize()
	d.DeleteString("k45")
	if !d.IsRehashing() {
		t.Fatal("no shrink once resizes are enabled")
	}
	// A rehash 64 -> 4 (ratio 16) goes on while avoiding; a 8 -> 16 one
	// (ratio 2) waits.
	DisableResize()
	if !d.Rehash(1) && d.IsRehashing() {
		EnableResize()
		t.Fatal("an extreme rehash did not advance")
	}
	EnableResize()
	s := NewSetFor([]byte("m0"))
	for i := 1; i < 200 && !s.Rehashing(); i++ {
		s.Add([]byte("m"+strconv.Itoa(i)), 0)
	}
	if !s.Rehashing() {
		t.Fatal("the set never started rehashing")
	}
	idx := s.ht().rehashIdx
	DisableResize()
	s.ht().rehash(1)
	moved := s.ht().rehashIdx != idx
	EnableResize()
	if moved {
		t.Fatal("a rehash between tables of ratio 2 advanced while avoiding")
	}
}

// TestSomeEntriesSamplesWholeChain: dictGetSomeKeys' reservoir sampling
// (7.0.15) draws the end of a chain longer than the sample too.
func TestSomeEntriesSamplesWholeChain(t *testing.T) {
	s := NewSetFor([]byte("m0"))
	for i := 1; i < 30; i++ {
		s.Add([]byte("m"+strconv.Itoa(i)), 0)
	}
	d := s.ht()
	for d.isRehashing() {
		d.rehash(100)
	}
	// Put every entry in one bucket: one chain of 30.
	var all []*fieldEntry
	for i, he := range d.ht[0] {
		for ; he != nil; he = he.next {
			all = append(all, he)
		}
		d.ht[0][i] = nil
	}
	for i, he := range all {
		if i+1 < len(all) {
			he.next = all[i+1]
		} else {
			he.next = nil
		}
	}
	d.ht[0][0] = all[0]
	rng := rand.New(rand.NewPCG(1, 2))
	seen := map[*fieldEntry]bool{}
	var buf [fairRandomSample]*fieldEntry
	for range 1000 {
		n := d.someEntries(rng, buf[:], false)
		for _, e := range buf[:n] {
			seen[e] = true
		}
	}
	if len(seen) != len(all) {
		t.Fatalf("sampled %d of the chain's %d entries", len(seen), len(all))
	}
}
