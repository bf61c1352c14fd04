package keyspace

import (
	"hash/maphash"
	"math/rand/v2"
	"strconv"
	"testing"
)

// checkDict verifies the table invariants: counts, bucket placement, the
// empty prefix of ht[0] while rehashing, and no removed entries linked.
func checkDict(t *testing.T, d *Dict) {
	t.Helper()
	if !d.IsRehashing() && d.used[1] != 0 {
		t.Fatalf("used[1] = %d while not rehashing", d.used[1])
	}
	for i := 0; i < 2; i++ {
		tbl := d.ht[i]
		if tbl == nil {
			continue
		}
		if len(tbl)&(len(tbl)-1) != 0 {
			t.Fatalf("table %d size %d is not a power of two", i, len(tbl))
		}
		n := 0
		for b, de := range tbl {
			if i == 0 && d.IsRehashing() && b < d.rehashIdx && de != nil {
				t.Fatalf("bucket %d below rehashIdx %d is not empty", b, d.rehashIdx)
			}
			for ; de != nil; de = de.next {
				if !d.live(de) {
					t.Fatalf("removed entry %q still linked", d.keyOf(de))
				}
				if got := hashString(d.keyOf(de)) & uint64(len(tbl)-1); got != uint64(b) {
					t.Fatalf("key %q in bucket %d of table %d, hashes to %d", d.keyOf(de), b, i, got)
				}
				n++
			}
		}
		if n != d.used[i] {
			t.Fatalf("table %d holds %d entries, used says %d", i, n, d.used[i])
		}
	}
}

func TestHashBytesMatchesString(t *testing.T) {
	for _, s := range []string{"", "a", "hello", string(make([]byte, 100))} {
		if hashBytes([]byte(s)) != hashString(s) {
			t.Errorf("hash of %q differs between []byte and string", s)
		}
		if hashString(s) != maphash.String(seed, s) {
			t.Errorf("hashString(%q) is not maphash.String", s)
		}
	}
}

func TestDictBasic(t *testing.T) {
	var d Dict
	if d.Find([]byte("x")) != nil || d.Len() != 0 {
		t.Fatal("zero Dict is not empty")
	}
	const n = 1000
	ents := make([]*Entry, n)
	for i := range n {
		ents[i] = &Entry{acct: uint32(i)}
		if prev := d.Set("k"+strconv.Itoa(i), ents[i]); prev != nil {
			t.Fatalf("Set of a new key returned %v", prev)
		}
		checkDict(t, &d)
	}
	if d.Len() != n {
		t.Fatalf("Len = %d", d.Len())
	}
	for i := range n {
		k := "k" + strconv.Itoa(i)
		if d.Find([]byte(k)) != ents[i] || d.FindString(k) != ents[i] {
			t.Fatalf("Find(%s) wrong", k)
		}
	}
	repl := &Entry{Freq: 1}
	if prev := d.Set("k7", repl); prev != ents[7] || d.FindString("k7") != repl {
		t.Fatal("Set did not replace")
	}
	for i := range n {
		k := "k" + strconv.Itoa(i)
		var got *Entry
		if i%2 == 0 {
			got = d.Delete([]byte(k))
		} else {
			got = d.DeleteString(k)
		}
		if got == nil {
			t.Fatalf("Delete(%s) = nil", k)
		}
		if d.FindString(k) != nil {
			t.Fatalf("%s still found after Delete", k)
		}
		checkDict(t, &d)
	}
	if d.Len() != 0 || d.Delete([]byte("k1")) != nil {
		t.Fatal("not empty after deleting everything")
	}
	for d.IsRehashing() {
		d.Rehash(100)
	}
	if d.Buckets() != dictInitialSize {
		t.Fatalf("empty dict kept %d buckets, want %d after shrinking", d.Buckets(), dictInitialSize)
	}
}

func TestDictGrowAndShrinkSizes(t *testing.T) {
	var d Dict
	for i := range 4 {
		d.Set(strconv.Itoa(i), &Entry{})
	}
	if d.Buckets() != 4 || d.IsRehashing() {
		t.Fatalf("4 keys: %d buckets, rehashing %v", d.Buckets(), d.IsRehashing())
	}
	d.Set("4", &Entry{}) // used >= size: expand to 8
	if !d.IsRehashing() || len(d.ht[1]) != 8 {
		t.Fatalf("5th key: rehashing %v, new table %d", d.IsRehashing(), len(d.ht[1]))
	}
	for d.Rehash(1) {
	}
	if len(d.ht[0]) != 8 || d.ht[1] != nil {
		t.Fatalf("after rehash: %d/%d buckets", len(d.ht[0]), len(d.ht[1]))
	}
	checkDict(t, &d)
}

// TestDictScanGuarantee is the SCAN property: every key present for the
// whole scan is returned at least once although the table grows, shrinks
// and rehashes between calls.
func TestDictScanGuarantee(t *testing.T) {
	cases := []struct {
		name    string
		initial int
		step    func(d *Dict, next *int, rng *rand.Rand) // mutates between Scan calls
	}{
		// Growth is capped: a table growing faster than the cursor
		// advances would never let a scan finish (in Redis either).
		{"grow", 100, func(d *Dict, next *int, _ *rand.Rand) {
			for range 50 {
				if *next >= 30000 {
					return
				}
				d.Set("new"+strconv.Itoa(*next), &Entry{})
				*next++
			}
		}},
		{"grow fast", 10, func(d *Dict, next *int, _ *rand.Rand) {
			for range 500 {
				if *next >= 30000 {
					return
				}
				d.Set("new"+strconv.Itoa(*next), &Entry{})
				*next++
			}
		}},
		{"shrink", 200, func(d *Dict, next *int, _ *rand.Rand) {
			for range 150 {
				if *next >= 20000 {
					return
				}
				d.DeleteString("tmp" + strconv.Itoa(*next))
				*next++
			}
		}},
		{"mixed", 300, func(d *Dict, next *int, rng *rand.Rand) {
			// Bursts of inserts or deletes, so the table both grows
			// and shrinks during the scan.
			if rng.IntN(2) == 0 {
				for range 60 {
					d.Set("tmp"+strconv.Itoa(rng.IntN(4000)), &Entry{})
				}
			} else {
				for range 120 {
					d.DeleteString("tmp" + strconv.Itoa(rng.IntN(4000)))
				}
			}
		}},
	}
	for _, tc := range cases {
		for seedN := uint64(1); seedN <= 5; seedN++ {
			t.Run(tc.name+"/"+strconv.FormatUint(seedN, 10), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(seedN, 99))
				var d Dict
				kept := map[string]bool{}
				for i := range tc.initial {
					k := "keep" + strconv.Itoa(i)
					kept[k] = false
					d.Set(k, &Entry{})
				}
				// Temporary keys, so "shrink" has something to delete.
				if tc.name == "shrink" {
					for i := range 20000 {
						d.Set("tmp"+strconv.Itoa(i), &Entry{})
					}
				}
				next := 0
				var cursor uint64
				calls := 0
				sawRehashing := false
				lastSize, resizes := len(d.ht[0]), 0
				for {
					cursor = d.Scan(cursor, func(k string, _ *Entry) {
						if _, ok := kept[k]; ok {
							kept[k] = true
						}
					})
					calls++
					if cursor == 0 {
						break
					}
					sawRehashing = sawRehashing || d.IsRehashing()
					if sz := len(d.ht[0]); sz != lastSize {
						resizes++
						lastSize = sz
					}
					tc.step(&d, &next, rng)
					// A few extra rehash steps at random points.
					for range rng.IntN(3) {
						d.Rehash(1)
					}
					if calls%1000 == 0 {
						checkDict(t, &d)
					}
					if calls > 1e6 {
						t.Fatal("scan does not terminate")
					}
				}
				for k, seen := range kept {
					if !seen {
						t.Fatalf("key %s present throughout was never returned (%d calls)", k, calls)
					}
				}
				if !sawRehashing || resizes < 2 {
					t.Fatalf("the table was resized %d times during the scan, rehashing seen %v: test too weak", resizes, sawRehashing)
				}
			})
		}
	}
}

// TestDictScanDuringRehash scans a table frozen in the middle of a grow or
// a shrink: every key must come back exactly as the full set.
func TestDictScanDuringRehash(t *testing.T) {
	for _, shrink := range []bool{false, true} {
		var d Dict
		for i := range 1000 {
			d.Set(strconv.Itoa(i), &Entry{})
		}
		for d.Rehash(1) {
		}
		if shrink {
			for i := 50; i < 1000; i++ {
				d.DeleteString(strconv.Itoa(i))
			}
			// The deletions start the shrink; make sure one is running.
			if !d.IsRehashing() {
				d.Shrink()
			}
		} else {
			for i := 1000; i < 1100; i++ {
				d.Set(strconv.Itoa(i), &Entry{})
			}
			for d.Len() < len(d.ht[0]) && !d.IsRehashing() {
				d.Set(strconv.Itoa(d.Len()), &Entry{})
			}
			if !d.IsRehashing() {
				d.Expand(d.Len() * 2)
			}
		}
		if !d.IsRehashing() {
			t.Fatal("setup: not rehashing")
		}
		d.Rehash(3)
		want := d.Len()
		seen := map[string]int{}
		var cursor uint64
		for {
			cursor = d.Scan(cursor, func(k string, _ *Entry) { seen[k]++ })
			if cursor == 0 {
				break
			}
		}
		if len(seen) != want {
			t.Fatalf("shrink=%v: scan saw %d distinct keys of %d", shrink, len(seen), want)
		}
	}
}

func TestDictScanEmpty(t *testing.T) {
	var d Dict
	if c := d.Scan(0, func(string, *Entry) { t.Fatal("called on empty dict") }); c != 0 {
		t.Fatalf("cursor %d", c)
	}
}

func TestDictRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var d Dict
	if _, _, ok := d.RandomKey(rng); ok {
		t.Fatal("RandomKey of empty dict")
	}
	if _, _, ok := d.FairRandomKey(rng); ok {
		t.Fatal("FairRandomKey of empty dict")
	}
	const n = 200
	for i := range n {
		d.Set(strconv.Itoa(i), &Entry{acct: uint32(i)})
	}
	// Every key is eventually drawn, by both methods, also mid-rehash.
	for _, fair := range []bool{false, true} {
		seen := map[string]bool{}
		for i := 0; i < 100*n && len(seen) < n; i++ {
			var k string
			var e *Entry
			var ok bool
			if fair {
				k, e, ok = d.FairRandomKey(rng)
			} else {
				k, e, ok = d.RandomKey(rng)
			}
			if !ok || d.FindString(k) != e {
				t.Fatalf("random key %q not in dict", k)
			}
			seen[k] = true
			if i%50 == 0 {
				d.Set("extra"+strconv.Itoa(i), &Entry{})
				d.DeleteString("extra" + strconv.Itoa(i))
			}
		}
		if len(seen) < n {
			t.Fatalf("fair=%v: drew only %d of %d keys", fair, len(seen), n)
		}
	}
}

func TestDictSomeKeys(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var d Dict
	for i := range 1000 {
		d.Set(strconv.Itoa(i), &Entry{})
	}
	d.Expand(4000) // sample while rehashing too
	for _, count := range []int{0, 1, 5, 20, 50, 5000} {
		seen := map[string]bool{}
		n := d.SomeKeys(rng, count, func(k string, e *Entry) {
			if seen[k] {
				t.Fatalf("key %s sampled twice", k)
			}
			if d.FindString(k) != e {
				t.Fatalf("sampled %s not in dict", k)
			}
			seen[k] = true
		})
		// Like dictGetSomeKeys it may come back short (even empty for
		// tiny counts on a sparse table), but not for a large count.
		if n != len(seen) || n > count || (count >= 50 && n == 0) {
			t.Fatalf("SomeKeys(%d) = %d (%d seen)", count, n, len(seen))
		}
	}
}

func TestDictRangeDeleting(t *testing.T) {
	var d Dict
	for i := range 500 {
		d.Set(strconv.Itoa(i), &Entry{acct: uint32(i)})
	}
	d.Expand(2000)
	seen := map[string]bool{}
	d.Range(func(k string, e *Entry) bool {
		seen[k] = true
		// Delete this key and another one not yet (or already) visited.
		d.DeleteString(k)
		d.DeleteString(strconv.Itoa((int(e.acct) + 250) % 500))
		return true
	})
	if d.Len() != 0 {
		t.Fatalf("%d keys left", d.Len())
	}
	if len(seen) != 250 {
		t.Fatalf("visited %d keys, want 250 (deleted ones are skipped)", len(seen))
	}
	checkDict(t, &d)
}

func TestDictRehashFor(t *testing.T) {
	var d Dict
	for i := range 10000 {
		d.Set(strconv.Itoa(i), &Entry{})
	}
	d.Expand(100000)
	calls := int64(0)
	n := d.RehashFor(3, func() int64 { calls++; return calls })
	if n != 400 || !d.IsRehashing() {
		t.Fatalf("RehashFor stepped %d buckets, rehashing %v", n, d.IsRehashing())
	}
	for d.RehashFor(1<<60, func() int64 { return 0 }) > 0 {
	}
	if d.IsRehashing() {
		t.Fatal("still rehashing")
	}
	checkDict(t, &d)
}
