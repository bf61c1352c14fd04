package keyspace

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// fill adds n keys to db, the first expired of them with ExpireAt 100
// (expired at now > 100) and the rest with ExpireAt liveAt (0: no TTL).
func fill(db *DB, prefix string, n, expired int, liveAt int64) {
	for i := range n {
		k := b(prefix + strconv.Itoa(i))
		db.Set(k, sv("v"), 0)
		if i < expired {
			db.SetExpire(k, 100)
		} else if liveAt != 0 {
			db.SetExpire(k, liveAt)
		}
	}
}

func never() int64 { return 0 }

func TestActiveExpireRemovesAll(t *testing.T) {
	ks := New(16)
	x := watch(ks)
	db := ks.DBs[0]
	fill(db, "k", 1000, 1000, 0)
	fill(ks.DBs[5], "other", 10, 0, 0) // no TTLs: nothing to sample
	r := ks.ActiveExpireCycle(1000, rand.New(rand.NewPCG(1, 1)), 1000, never)
	// A cycle keeps going while the sample is stale, so nearly all keys
	// go at once (the last few may wait for the sparse table to shrink).
	if r.Expired < 990 || r.TimeCapReached {
		t.Fatalf("result %+v, %d keys left", r, db.Len())
	}
	// The stale estimate is an EWMA over cycles: 5% towards this cycle's
	// expired/sampled ratio (0 when nothing was sampled).
	stale := func(r ActiveExpireResult, prev float64) float64 {
		cur := 0.0
		if r.Sampled > 0 {
			cur = float64(r.Expired) / float64(r.Sampled)
		}
		return cur*0.05 + prev*0.95
	}
	want := stale(r, 0)
	for i := 0; db.Len() > 0; i++ {
		if i > 5 {
			t.Fatalf("%d keys left after 5 more cycles", db.Len())
		}
		want = stale(ks.ActiveExpireCycle(1000, nil, 1000, never), want)
	}
	if db.ExpiresLen() != 0 {
		t.Fatal("expires not empty")
	}
	if len(*x) != 1000 || ks.Stats.ExpiredKeys != 1000 || ks.DBs[5].Len() != 10 {
		t.Fatalf("%d OnExpire calls, stats %+v", len(*x), ks.Stats)
	}
	// Every sampled key was expired, so the estimate rose above 0 (how
	// far depends on how many cycles found keys left to sample).
	if p := ks.Stats.ExpiredStalePerc; p <= 0 || p != want {
		t.Fatalf("ExpiredStalePerc %v, want %v", p, want)
	}
	checkDB(t, db)
}

func TestActiveExpireTimeCap(t *testing.T) {
	ks := New(4)
	db := ks.DBs[0]
	fill(db, "k", 5000, 5000, 0)
	const budget = 500
	over := func() int64 { return budget + 1 }
	r := ks.ActiveExpireCycle(1000, nil, budget, over)
	// The clock is read every 16 iterations of about 20 keys each.
	if !r.TimeCapReached || r.Expired < 16*ActiveExpireKeysPerLoop || r.Expired > 16*ActiveExpireKeysPerLoop*2 {
		t.Fatalf("result %+v", r)
	}
	if ks.Stats.ExpiredTimeCapReachedCount != 1 || db.Len() != 5000-r.Expired {
		t.Fatalf("stats %+v, %d keys left", ks.Stats, db.Len())
	}
	if r.ElapsedMicros != budget+1 || ks.Stats.ExpireCycleMicros != budget+1 {
		t.Fatalf("elapsed %d, stat %d", r.ElapsedMicros, ks.Stats.ExpireCycleMicros)
	}
	// Later cycles (timelimit_exit: all databases) finish the job.
	for i := 0; db.Len() > 0; i++ {
		if i > 100 {
			t.Fatalf("%d keys left after 100 cycles", db.Len())
		}
		ks.ActiveExpireCycle(1000, nil, budget, over)
	}
	checkDB(t, db)
}

func TestActiveExpireStopsEarlyWhenFewExpired(t *testing.T) {
	tests := []struct {
		name        string
		expired     int
		maxSampled  int
		wantExpired int
	}{
		// No expired key: a single sample of about 20 keys.
		{"none expired", 0, 2 * ActiveExpireKeysPerLoop, 0},
		// All expired: keeps sampling until the db is clean.
		{"all expired", 1000, 1000, 1000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ks := New(1)
			db := ks.DBs[0]
			fill(db, "k", 1000, tc.expired, 1e12)
			r := ks.ActiveExpireCycle(1000, nil, 1000, never)
			if r.Sampled > tc.maxSampled || r.Sampled < ActiveExpireKeysPerLoop || r.Expired < tc.wantExpired*99/100 || r.Expired > tc.wantExpired {
				t.Fatalf("result %+v", r)
			}
		})
	}
	// 5% expired (under the 10% acceptable stale): far fewer keys are
	// sampled than the db holds, and over cycles all expired ones go.
	ks := New(1)
	db := ks.DBs[0]
	for i := range 2000 {
		k := b("k" + strconv.Itoa(i))
		db.Set(k, sv("v"), 0)
		if i%20 == 0 {
			db.SetExpire(k, 100)
		} else {
			db.SetExpire(k, 1e12)
		}
	}
	r := ks.ActiveExpireCycle(1000, nil, 1000, never)
	if r.Sampled >= 1000 {
		t.Fatalf("sampled %d of 2000 keys with 5%% expired", r.Sampled)
	}
	for range 1000 {
		ks.ActiveExpireCycle(1000, nil, 1000, never)
	}
	if db.Len() != 1900 {
		t.Fatalf("%d keys left, want 1900", db.Len())
	}
	// AvgTTL tracks the live keys' TTL (about 1e12 - 1000).
	if avg := db.AvgTTL(); avg < 0.98e12 || avg > 1e12 {
		t.Fatalf("AvgTTL %d", avg)
	}
}

func TestActiveExpireResumesAtNextDB(t *testing.T) {
	ks := New(20) // more than the 16 databases per call
	fill(ks.DBs[3], "a", 100, 100, 0)
	fill(ks.DBs[18], "b", 100, 100, 0)
	r := ks.ActiveExpireCycle(1000, nil, 1000, never)
	if r.Expired != 100 || ks.DBs[3].Len() != 0 || ks.DBs[18].Len() != 100 {
		t.Fatalf("first cycle: %+v; db18 has %d", r, ks.DBs[18].Len())
	}
	r = ks.ActiveExpireCycle(1000, nil, 1000, never)
	if r.Expired != 100 || ks.DBs[18].Len() != 0 {
		t.Fatalf("second cycle: %+v", r)
	}
}

func TestActiveExpireCursorCoversTable(t *testing.T) {
	// With few expired keys scattered in a big table, the cursor walk
	// reaches every bucket over successive cycles.
	ks := New(1)
	db := ks.DBs[0]
	for i := range 4000 {
		k := b("k" + strconv.Itoa(i))
		db.Set(k, sv("v"), 0)
		at := int64(1e12)
		if i%97 == 0 {
			at = 100
		}
		db.SetExpire(k, at)
	}
	want := 4000 - (4000+96)/97
	for i := 0; db.Len() > want; i++ {
		if i > 10000 {
			t.Fatalf("%d keys left, want %d", db.Len(), want)
		}
		ks.ActiveExpireCycle(1000, nil, 1000, never)
	}
	checkDB(t, db)
}

func TestActiveExpireEffortAndBudget(t *testing.T) {
	if got := SlowCycleBudget(10, 1); got != 25000 {
		t.Fatalf("budget at hz 10: %d", got)
	}
	if got := SlowCycleBudget(10, 10); got != 43000 {
		t.Fatalf("budget at effort 10: %d", got)
	}
	if got := SlowCycleBudget(0, 0); got != 250000 {
		t.Fatalf("budget defaults: %d", got)
	}
	// Effort 10: 65 keys per loop.
	ks := New(1)
	ks.ActiveExpireEffort = 10
	fill(ks.DBs[0], "k", 1000, 0, 1e12)
	r := ks.ActiveExpireCycle(1000, nil, 1000, never)
	if r.Sampled < 65 || r.Sampled > 130 {
		t.Fatalf("sampled %d at effort 10", r.Sampled)
	}
}

// TestResizeAndRehash: after mass deletion (which starts the shrink, see
// Dict.Shrink) the cron finishes the rehash, leaving what Redis's
// tryResizeHashTables + incrementallyRehash leave (dictSlots: the next power
// of two >= used, at least 4); with activerehashing off (budget 0) the old
// tables stay until commands rehash them.
func TestResizeAndRehash(t *testing.T) {
	for _, active := range []bool{true, false} {
		ks := New(2)
		db := ks.DBs[0]
		fill(db, "k", 1000, 0, 0)
		for i := 0; i < 300; i++ {
			db.SetExpire(b("k"+strconv.Itoa(i)), 1<<40)
		}
		for i := 0; i < 900; i++ {
			db.Delete(b("k" + strconv.Itoa(i)))
		}
		slots, expSlots := db.Slots(), db.ExpiresSlots()
		if db.Len() != 100 || db.ExpiresLen() != 0 || slots <= 128 || expSlots <= 4 {
			t.Fatalf("before: %d keys in %d slots, %d expires in %d slots", db.Len(), db.Slots(), db.ExpiresLen(), db.ExpiresSlots())
		}
		budget := int64(0)
		if active {
			budget = 1000
		}
		for i := 0; i < 10; i++ {
			ks.ResizeAndRehash(budget, func() int64 { return 0 })
		}
		if active && (db.Slots() != 128 || db.ExpiresSlots() != 4) {
			t.Fatalf("active: %d key slots (want 128), %d expire slots (want 4)", db.Slots(), db.ExpiresSlots())
		}
		if !active && (db.Slots() != slots || db.ExpiresSlots() != expSlots) {
			t.Fatalf("passive: %d/%d slots, want %d/%d as before", db.Slots(), db.ExpiresSlots(), slots, expSlots)
		}
		checkDB(t, db)
	}
}
