package keyspace

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// recount is Keyspace.Memory computed from scratch by walking every key.
func recount(ks *Keyspace) uint64 {
	var n uint64
	for _, db := range ks.DBs {
		if db.Len() == 0 && db.ExpiresLen() == 0 {
			continue
		}
		db.ForEach(func(key string, e *Entry) bool {
			n += entryBytes(key, e)
			return true
		})
		n += DictEntryPtrSize*uint64(db.Slots()+db.ExpiresSlots()) + DictEntrySize*uint64(db.ExpiresLen())
	}
	return n
}

func TestMemoryAccountingFollowsWrites(t *testing.T) {
	ks := New(4)
	check := func(step string) {
		t.Helper()
		if got, want := ks.Memory(), recount(ks); got != want {
			t.Fatalf("%s: Memory() = %d, recount = %d", step, got, want)
		}
	}
	check("empty")
	if ks.Memory() != 0 {
		t.Fatalf("empty keyspace accounts %d bytes", ks.Memory())
	}
	db := ks.DBs[0]
	for i := range 100 {
		db.Set(b("k"+strconv.Itoa(i)), sv("value-"+strconv.Itoa(i)), 0)
	}
	check("set")
	// A hash filled after Set (as HSET creates it), then grown in place.
	h := NewHash()
	db.Set(b("h"), h, 0)
	for i := range 10 {
		h.Set(b("f"+strconv.Itoa(i)), "v", ks.Encodings)
	}
	ks.Settle()
	check("hash created")
	small := db.Peek(b("h")).acct
	hm := db.Mutable(b("h"), db.Peek(b("h"))).(*Hash)
	for i := range 1000 {
		hm.Set(b("g"+strconv.Itoa(i)), "a longer value than the listpack likes", ks.Encodings)
	}
	check("hash grown in place")
	if db.Peek(b("h")).acct <= small {
		t.Fatalf("growing the hash did not raise its accounted size (%d)", small)
	}
	db.SetExpire(b("k1"), 1000)
	db.SetExpire(b("k2"), 1000)
	check("expire")
	db.Persist(b("k2"))
	check("persist")
	db.Delete(b("k3"))
	check("delete")
	db.Rename(b("k4"), b("a-much-longer-key-name-than-before"), 0)
	check("rename")
	db.Rename(b("k5"), b("k6"), 0) // over an existing key
	check("rename over")
	db.Move(b("k7"), ks.DBs[1], 0)
	check("move")
	ks.Swap(1, 2)
	check("swap")
	if ks.DBs[2].Memory() == 0 || ks.DBs[1].Memory() != 0 {
		t.Fatalf("swap did not swap the sums: db1 %d db2 %d", ks.DBs[1].Memory(), ks.DBs[2].Memory())
	}
	// Expiry removes the key and its bytes.
	if db.Lookup(b("k1"), 2000) != nil {
		t.Fatal("k1 should have expired")
	}
	check("lazy expire")
	db.Flush()
	check("flush")
	ks.FlushAll()
	if ks.Memory() != 0 {
		t.Fatalf("after FLUSHALL %d bytes are accounted", ks.Memory())
	}
}

func TestMemoryAccountingRandomOps(t *testing.T) {
	ks := New(3)
	rng := rand.New(rand.NewPCG(7, 8))
	for i := range 5000 {
		db := ks.DBs[rng.IntN(3)]
		k := b("key" + strconv.Itoa(rng.IntN(200)))
		switch rng.IntN(6) {
		case 0, 1:
			db.Set(k, sv(string(make([]byte, rng.IntN(300)))), int64(i))
		case 2:
			db.Delete(k)
		case 3:
			if e := db.Lookup(k, int64(i)); e != nil {
				if s, ok := db.Mutable(k, e).(*String); ok {
					s.Set(append(append([]byte(nil), s.Bytes()...), "more bytes"...), StringAuto)
				}
			}
		case 4:
			db.SetExpire(k, int64(i+rng.IntN(100)))
		case 5:
			db.Move(k, ks.DBs[rng.IntN(3)], int64(i))
		}
		if i%97 == 0 {
			if got, want := ks.Memory(), recount(ks); got != want {
				t.Fatalf("op %d: Memory() = %d, recount = %d", i, got, want)
			}
		}
	}
}

// keysWith fills db with n keys k0..k(n-1); set customises each entry.
func keysWith(db *DB, n int, set func(i int, key []byte, e *Entry)) {
	for i := range n {
		k := b("k" + strconv.Itoa(i))
		e := db.Set(k, sv("v"), 0)
		set(i, k, e)
	}
}

// drain evicts every key the policy selects, in order.
func drain(t *testing.T, ks *Keyspace, ev *Evictor, now int64, rng *rand.Rand) []string {
	t.Helper()
	var out []string
	for range 10000 {
		db, key, ok := ks.Victim(ev, now, rng)
		if !ok {
			return out
		}
		if _, ok := ks.Evict(db, key); !ok {
			t.Fatalf("victim %d/%q does not exist", db, key)
		}
		out = append(out, key)
	}
	t.Fatal("Victim never stopped")
	return nil
}

func TestVictimExactWhenSamplingEverything(t *testing.T) {
	// With maxmemory-samples at least the number of keys the pool sees
	// every key, so the order is exact.
	cases := []struct {
		policy Policy
		set    func(i int, key []byte, e *Entry, db *DB)
		want   []string
	}{
		{AllKeysLRU, func(i int, _ []byte, e *Entry, _ *DB) { e.SetLastAccess(int64([]int{50, 10, 30, 20, 40}[i]) * 1000) },
			[]string{"k1", "k3", "k2", "k4", "k0"}},
		{AllKeysLFU, func(i int, _ []byte, e *Entry, _ *DB) { e.Freq = uint8([]int{9, 1, 200, 0, 5}[i]) },
			[]string{"k3", "k1", "k4", "k0", "k2"}},
		{VolatileTTL, func(i int, k []byte, _ *Entry, db *DB) {
			if at := []int64{0, 5e6, 0, 3e6, 4e6}[i]; at != 0 {
				db.SetExpire(k, at)
			}
		}, []string{"k3", "k4", "k1"}},
		{VolatileLRU, func(i int, k []byte, e *Entry, db *DB) {
			e.SetLastAccess(int64(100-i) * 1000)
			if i%2 == 0 {
				db.SetExpire(k, 1e12)
			}
		}, []string{"k4", "k2", "k0"}},
		{VolatileLFU, func(i int, k []byte, e *Entry, db *DB) {
			e.Freq = uint8(10 - i)
			if i != 2 {
				db.SetExpire(k, 1e12)
			}
		}, []string{"k4", "k3", "k1", "k0"}},
	}
	for _, tc := range cases {
		t.Run(tc.policy.String(), func(t *testing.T) {
			ks := New(1)
			ks.LFU.Enabled = tc.policy.LFU() // the keys made under the policy
			db := ks.DBs[0]
			keysWith(db, 5, func(i int, k []byte, e *Entry) { tc.set(i, k, e, db) })
			ev := &Evictor{Policy: tc.policy, Samples: 16}
			got := drain(t, ks, ev, 1e6, rand.New(rand.NewPCG(1, 1)))
			if len(got) != len(tc.want) {
				t.Fatalf("evicted %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("evicted %v, want %v", got, tc.want)
				}
			}
		})
	}
}

func TestVictimLFUDecay(t *testing.T) {
	// A high counter not touched for long decays below a fresh low one.
	ks := New(1)
	ks.LFU.Enabled = true // the keys made under LFU
	db := ks.DBs[0]
	old := db.Set(b("old"), sv("v"), 0)
	old.Freq = 20
	old.SetLastAccess(0)
	fresh := db.Set(b("fresh"), sv("v"), 0)
	fresh.Freq = 10
	fresh.SetLastAccess(60 * 60000)
	ev := &Evictor{Policy: AllKeysLFU, Samples: 5, DecayTime: 1}
	_, key, ok := ks.Victim(ev, 60*60000, rand.New(rand.NewPCG(1, 2)))
	if !ok || key != "old" {
		t.Fatalf("victim %q %v, want old (decayed to 0)", key, ok)
	}
}

func TestVictimNone(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	ks := New(2)
	keysWith(ks.DBs[1], 10, func(int, []byte, *Entry) {})
	for _, p := range []Policy{NoEviction, VolatileLRU, VolatileLFU, VolatileRandom, VolatileTTL} {
		if db, key, ok := ks.Victim(&Evictor{Policy: p}, 0, rng); ok {
			t.Errorf("%v without TTLs chose %d/%q", p, db, key)
		}
	}
	empty := New(2)
	for _, p := range []Policy{AllKeysLRU, AllKeysLFU, AllKeysRandom} {
		if db, key, ok := empty.Victim(&Evictor{Policy: p}, 0, rng); ok {
			t.Errorf("%v on empty keyspace chose %d/%q", p, db, key)
		}
	}
}

func TestVictimRandomDeterministicAndVolatileOnly(t *testing.T) {
	run := func() []string {
		ks := New(3)
		for d := range 3 {
			keysWith(ks.DBs[d], 20, func(i int, k []byte, _ *Entry) {
				if i%4 == 0 {
					ks.DBs[d].SetExpire(k, 1e12)
				}
			})
		}
		got := drain(t, ks, &Evictor{Policy: VolatileRandom}, 0, rand.New(rand.NewPCG(9, 9)))
		if len(got) != 15 {
			t.Fatalf("volatile-random evicted %d keys, want the 15 with a TTL", len(got))
		}
		for _, db := range ks.DBs {
			if db.ExpiresLen() != 0 || db.Len() != 15 {
				t.Fatalf("db %d: %d keys %d TTLs left", db.ID(), db.Len(), db.ExpiresLen())
			}
		}
		return got
	}
	a, b := run(), run()
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("same seed, different choices: %v vs %v", a, b)
		}
	}
	// allkeys-random drains everything, alternating databases.
	ks := New(2)
	keysWith(ks.DBs[0], 5, func(int, []byte, *Entry) {})
	keysWith(ks.DBs[1], 5, func(int, []byte, *Entry) {})
	ev := &Evictor{Policy: AllKeysRandom}
	rng := rand.New(rand.NewPCG(1, 1))
	var dbs []int
	for range 4 {
		db, key, ok := ks.Victim(ev, 0, rng)
		if !ok {
			t.Fatal("no victim")
		}
		ks.Evict(db, key)
		dbs = append(dbs, db)
	}
	if dbs[0] == dbs[1] || dbs[1] == dbs[2] || dbs[2] == dbs[3] {
		t.Fatalf("allkeys-random did not alternate databases: %v", dbs)
	}
	if ks.Len() != 6 {
		t.Fatalf("%d keys left, want 6", ks.Len())
	}
}

func TestVictimApproximatesLRU(t *testing.T) {
	// 1000 keys accessed at times 0..999; with the default 5 samples and
	// the pool, evicting half must mostly take the older half (Redis's
	// LRU test asserts the same shape).
	ks := New(1)
	db := ks.DBs[0]
	keysWith(db, 1000, func(i int, _ []byte, e *Entry) { e.SetLastAccess(int64(i) * 1000) })
	ev := &Evictor{Policy: AllKeysLRU, Samples: 5}
	rng := rand.New(rand.NewPCG(42, 42))
	old := 0
	for range 500 {
		_, key, ok := ks.Victim(ev, 1e7, rng)
		if !ok {
			t.Fatal("no victim")
		}
		if n, _ := strconv.Atoi(key[1:]); n < 600 {
			old++
		}
		ks.Evict(0, key)
	}
	if old < 450 {
		t.Fatalf("only %d of 500 evicted keys are among the oldest 600", old)
	}
	// Without the pool's memory (a fresh pool each time) it is worse:
	// the pool is what makes the approximation good.
}

func TestVictimSkipsGhosts(t *testing.T) {
	ks := New(1)
	db := ks.DBs[0]
	keysWith(db, 5, func(i int, _ []byte, e *Entry) { e.SetLastAccess(int64(i) * 1000) })
	ev := &Evictor{Policy: AllKeysLRU, Samples: 16}
	rng := rand.New(rand.NewPCG(5, 5))
	// Fill the pool, take k0, then delete k1 behind the pool's back.
	if _, key, _ := ks.Victim(ev, 1e5, rng); key != "k0" {
		t.Fatalf("first victim %q, want k0", key)
	}
	db.Delete(b("k0"))
	db.Delete(b("k1"))
	if _, key, _ := ks.Victim(ev, 1e5, rng); key != "k2" {
		t.Fatalf("victim %q, want k2 (k1 is a ghost in the pool)", key)
	}
}

func TestPoolInsertionKeepsBest(t *testing.T) {
	// populate keeps the pool sorted ascending and, once full, drops the
	// worst candidate for a better one.
	ks := New(1)
	db := ks.DBs[0]
	keysWith(db, 40, func(i int, _ []byte, e *Entry) { e.SetLastAccess(int64(1000-i) * 1000) })
	ev := &Evictor{Policy: AllKeysLRU, Samples: 40}
	ev.populate(0, db, &db.dict, 2e6, rand.New(rand.NewPCG(1, 1)))
	for k := range EvPoolSize {
		if !ev.pool[k].used {
			t.Fatalf("slot %d empty after sampling 40 keys", k)
		}
		if k > 0 && ev.pool[k-1].idle > ev.pool[k].idle {
			t.Fatalf("pool not sorted at %d: %d > %d", k, ev.pool[k-1].idle, ev.pool[k].idle)
		}
	}
	// The 16 best (idlest) of the 40 are kept: k24..k39.
	if ev.pool[0].key != "k24" || ev.pool[EvPoolSize-1].key != "k39" {
		t.Fatalf("pool spans %q..%q, want k24..k39", ev.pool[0].key, ev.pool[EvPoolSize-1].key)
	}
}

func TestParsePolicy(t *testing.T) {
	for i, n := range policyNames {
		p, ok := ParsePolicy(n)
		if !ok || int(p) != i || p.String() != n {
			t.Errorf("ParsePolicy(%q) = %v %v", n, p, ok)
		}
	}
	if _, ok := ParsePolicy("lru"); ok {
		t.Error("ParsePolicy accepted lru")
	}
}
