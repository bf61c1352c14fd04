package keyspace

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// expiries records OnExpire calls.
type expiries []string

func watch(ks *Keyspace) *expiries {
	var x expiries
	ks.OnExpire = func(db int, key string, _ Value) { x = append(x, strconv.Itoa(db)+":"+key) }
	return &x
}

func b(s string) []byte { return []byte(s) }

// sv is a string value of s.
func sv(s string) Value { return NewString([]byte(s), StringAuto) }

func str(e *Entry) string {
	if e == nil {
		return "<nil>"
	}
	return string(e.Value().(*String).Bytes())
}

// checkDB verifies that the expires index matches the entries' ExpireAt.
func checkDB(t *testing.T, db *DB) {
	t.Helper()
	checkDict(t, &db.dict)
	checkDict(t, &db.expires)
	n := 0
	db.ForEach(func(k string, e *Entry) bool {
		if e.HasExpire() {
			n++
			if db.expires.findS(hashString(k), k) == nil {
				t.Fatalf("key %s has a TTL but no expires entry", k)
			}
		} else if db.expires.findS(hashString(k), k) != nil {
			t.Fatalf("key %s has no TTL but an expires entry", k)
		}
		return true
	})
	if n != db.ExpiresLen() {
		t.Fatalf("%d keys with TTL, expires holds %d", n, db.ExpiresLen())
	}
}

func TestDBSetLookupDelete(t *testing.T) {
	db := NewDB()
	if db.Lookup(b("k"), 1000) != nil || db.Len() != 0 {
		t.Fatal("empty db finds a key")
	}
	e := db.Set(b("k"), sv("v1"), 1000)
	if e.LastAccess() != 1000 || db.ExpireAt(e) != 0 || e.Freq != LFUInitVal || str(e) != "v1" {
		t.Fatalf("new entry %+v", *e)
	}
	if got := db.Lookup(b("k"), 2000); got != e || got.LastAccess() != 2000 {
		t.Fatalf("Lookup: %+v", got)
	}
	if got := db.LookupNoTouch(b("k"), 5000); got != e || got.LastAccess() != 2000 {
		t.Fatalf("LookupNoTouch touched: %+v", got)
	}
	// Overwrite keeps the Entry.
	if e2 := db.Set(b("k"), sv("v2"), 3000); e2 != e || str(e) != "v2" || e.LastAccess() != 3000 {
		t.Fatalf("overwrite: %+v", *e2)
	}
	if db.Len() != 1 {
		t.Fatalf("Len %d", db.Len())
	}
	if !db.Delete(b("k")) || db.Delete(b("k")) || db.Lookup(b("k"), 3000) != nil || db.Len() != 0 {
		t.Fatal("Delete")
	}
}

func TestDBExpiry(t *testing.T) {
	tests := []struct {
		name     string
		expireAt int64
		now      int64
		alive    bool
	}{
		{"no ttl", 0, 1 << 50, true},
		{"before", 5000, 4999, true},
		{"at the instant", 5000, 5000, true}, // keyIsExpired: now > when
		{"just after", 5000, 5001, false},
		{"long after", 5000, 1 << 40, false},
		{"at <= 0 means already expired", -7, 2, false},
	}
	for _, tc := range tests {
		for _, how := range []string{"Lookup", "LookupNoTouch", "Rename", "Scan", "RandomKey"} {
			t.Run(tc.name+"/"+how, func(t *testing.T) {
				db := NewDB()
				x := watch(db.Keyspace())
				db.Set(b("k"), sv("v"), 1)
				if tc.expireAt != 0 && !db.SetExpire(b("k"), tc.expireAt) {
					t.Fatal("SetExpire")
				}
				var found bool
				switch how {
				case "Lookup":
					found = db.Lookup(b("k"), tc.now) != nil
				case "LookupNoTouch":
					found = db.LookupNoTouch(b("k"), tc.now) != nil
				case "Rename":
					found = db.Rename(b("k"), b("k2"), tc.now)
				case "Scan":
					var c uint64
					for {
						c = db.Scan(c, 10, tc.now, func(string, *Entry) { found = true })
						if c == 0 {
							break
						}
					}
				case "RandomKey":
					_, found = db.RandomKey(tc.now, rand.New(rand.NewPCG(1, 1)))
				}
				if found != tc.alive {
					t.Fatalf("found %v, want %v", found, tc.alive)
				}
				wantLen, wantExp := 1, 0
				if !tc.alive {
					wantLen, wantExp = 0, 1
					if got := *x; !slices.Equal(got, expiries{"0:k"}) {
						t.Fatalf("OnExpire calls %v", got)
					}
				}
				if db.Len() != wantLen || db.Keyspace().Stats.ExpiredKeys != int64(wantExp) {
					t.Fatalf("Len %d, ExpiredKeys %d", db.Len(), db.Keyspace().Stats.ExpiredKeys)
				}
				checkDB(t, db)
			})
		}
	}
}

func TestDBTTLAndPersist(t *testing.T) {
	db := NewDB()
	if db.SetExpire(b("missing"), 100) || db.Persist(b("missing")) {
		t.Fatal("TTL ops on a missing key succeeded")
	}
	e := db.Set(b("k"), sv("v"), 0)
	if db.Persist(b("k")) {
		t.Fatal("Persist of a key without TTL returned true")
	}
	db.SetExpire(b("k"), 100)
	db.SetExpire(b("k"), 200) // update, not a second index entry
	if db.ExpireAt(e) != 200 || db.ExpiresLen() != 1 {
		t.Fatalf("ExpireAt %d, ExpiresLen %d", db.ExpireAt(e), db.ExpiresLen())
	}
	checkDB(t, db)
	if !db.Persist(b("k")) || db.ExpireAt(e) != 0 || db.ExpiresLen() != 0 {
		t.Fatal("Persist")
	}
	// Set clears the TTL, SetKeepTTL keeps it.
	db.SetExpire(b("k"), 500)
	db.SetKeepTTL(b("k"), sv("v2"), 10)
	if db.ExpireAt(e) != 500 || db.ExpiresLen() != 1 || str(e) != "v2" {
		t.Fatalf("SetKeepTTL lost the TTL: %+v", *e)
	}
	db.Set(b("k"), sv("v3"), 10)
	if db.ExpireAt(e) != 0 || db.ExpiresLen() != 0 {
		t.Fatalf("Set kept the TTL: %+v", *e)
	}
	// SetKeepTTL on a new key, and on an expired one: no TTL.
	n := db.SetKeepTTL(b("new"), sv("x"), 10)
	if db.ExpireAt(n) != 0 {
		t.Fatal("new key got a TTL")
	}
	db.SetExpire(b("new"), 20)
	db.SetKeepTTL(b("new"), sv("y"), 21)
	if db.ExpireAt(n) != 0 || db.ExpiresLen() != 0 {
		t.Fatalf("expired key kept its TTL: %+v", *n)
	}
	// Delete removes the index entry too.
	db.SetExpire(b("new"), 50)
	db.Delete(b("new"))
	if db.ExpiresLen() != 0 {
		t.Fatal("Delete left an expires entry")
	}
	checkDB(t, db)
}

func TestDBRename(t *testing.T) {
	db := NewDB()
	e := db.Set(b("src"), sv("v"), 1000)
	e.Freq = 42
	db.SetExpire(b("src"), 9000)
	db.Set(b("dst"), sv("old"), 1000)
	db.SetExpire(b("dst"), 8000)
	if !db.Rename(b("src"), b("dst"), 2000) {
		t.Fatal("Rename failed")
	}
	if db.Lookup(b("src"), 2000) != nil {
		t.Fatal("src still exists")
	}
	got := db.LookupNoTouch(b("dst"), 2000)
	if got != e || str(got) != "v" || db.ExpireAt(got) != 9000 || got.LastAccess() != 1000 || got.Freq != 42 {
		t.Fatalf("dst: %+v", got)
	}
	if db.Len() != 1 || db.ExpiresLen() != 1 {
		t.Fatalf("Len %d ExpiresLen %d", db.Len(), db.ExpiresLen())
	}
	checkDB(t, db)
	// Without TTL, onto a missing key; then to itself; then a missing src.
	db.Persist(b("dst"))
	if !db.Rename(b("dst"), b("x"), 3000) || db.ExpiresLen() != 0 || str(db.Peek(b("x"))) != "v" {
		t.Fatal("Rename without TTL")
	}
	if !db.Rename(b("x"), b("x"), 3000) || db.Len() != 1 {
		t.Fatal("Rename to itself")
	}
	if db.Rename(b("nope"), b("y"), 3000) {
		t.Fatal("Rename of a missing key")
	}
	checkDB(t, db)
}

func TestDBReplicaMode(t *testing.T) {
	ks := New(1)
	x := watch(ks)
	ks.Replica = true
	db := ks.DBs[0]
	db.Set(b("k"), sv("v"), 0)
	db.SetExpire(b("k"), 100)
	if db.Lookup(b("k"), 200) != nil || db.LookupNoTouch(b("k"), 200) != nil {
		t.Fatal("expired key visible on a replica")
	}
	if db.Len() != 1 || len(*x) != 0 || ks.Stats.ExpiredKeys != 0 {
		t.Fatal("replica deleted an expired key")
	}
	if db.Peek(b("k")) == nil {
		t.Fatal("Peek does not see the expired key")
	}
	// The master's SET KEEPTTL keeps the TTL even though it is past here.
	db.SetKeepTTL(b("k"), sv("v2"), 200)
	if db.ExpireAt(db.Peek(b("k"))) != 100 {
		t.Fatal("KEEPTTL dropped the TTL on a replica")
	}
	// RandomKey terminates even when every key is logically expired.
	if k, ok := db.RandomKey(200, rand.New(rand.NewPCG(1, 1))); !ok || k != "k" {
		t.Fatalf("RandomKey = %q %v", k, ok)
	}
	if r := ks.ActiveExpireCycle(200, nil, 1000, func() int64 { return 0 }); r.Sampled != 0 || db.Len() != 1 {
		t.Fatal("active expiry ran on a replica")
	}
	// Back to master: the key goes at the next access.
	ks.Replica = false
	if db.Lookup(b("k"), 200) != nil || db.Len() != 0 || len(*x) != 1 {
		t.Fatal("master did not expire the key")
	}
}

func TestDBScan(t *testing.T) {
	db := NewDB()
	for i := range 1000 {
		k := b("key:" + strconv.Itoa(i))
		db.Set(k, NewString(k, StringAuto), 0)
		if i%10 == 0 {
			db.SetExpire(k, 50) // expired at now = 100
		}
	}
	seen := map[string]int{}
	var c uint64
	calls := 0
	for {
		c = db.Scan(c, 25, 100, func(k string, e *Entry) {
			if str(e) != k {
				t.Fatalf("value of %s is %s", k, str(e))
			}
			seen[k]++
		})
		calls++
		if c == 0 {
			break
		}
	}
	if len(seen) != 900 {
		t.Fatalf("scan returned %d live keys, want 900", len(seen))
	}
	for k := range seen {
		if n, _ := strconv.Atoi(k[4:]); n%10 == 0 {
			t.Fatalf("expired key %s returned", k)
		}
	}
	if db.Len() != 900 || db.Keyspace().Stats.ExpiredKeys != 100 {
		t.Fatalf("Len %d, ExpiredKeys %d", db.Len(), db.Keyspace().Stats.ExpiredKeys)
	}
	// COUNT is about keys per call: 1024 buckets in about 1000/25 calls.
	if calls > 80 {
		t.Fatalf("%d calls for COUNT 25", calls)
	}
	checkDB(t, db)

	// fn may delete keys, including ones collected in the same call.
	c = 0
	for {
		c = db.Scan(c, 100, 100, func(k string, _ *Entry) {
			db.Delete(b(k))
			n, _ := strconv.Atoi(k[4:])
			db.Delete(b("key:" + strconv.Itoa(n^1)))
		})
		if c == 0 {
			break
		}
	}
	if db.Len() != 0 {
		t.Fatalf("%d keys left", db.Len())
	}
}

func TestDBScanGuaranteeWhileWriting(t *testing.T) {
	db := NewDB()
	for i := range 500 {
		db.Set(b("keep"+strconv.Itoa(i)), sv("v"), 0)
	}
	seen := map[string]bool{}
	var c uint64
	next := 0
	for {
		c = db.Scan(c, 10, 0, func(k string, _ *Entry) { seen[k] = true })
		if c == 0 {
			break
		}
		for range 40 {
			if next < 20000 {
				db.Set(b("more"+strconv.Itoa(next)), sv("v"), 0)
				next++
			}
		}
	}
	for i := range 500 {
		if !seen["keep"+strconv.Itoa(i)] {
			t.Fatalf("keep%d not returned", i)
		}
	}
}

func TestDBKeys(t *testing.T) {
	db := NewDB()
	for _, k := range []string{"hello", "hallo", "hxllo", "world", "", "h"} {
		db.Set(b(k), sv("v"), 0)
	}
	db.SetExpire(b("hxllo"), 10)
	collect := func(p string) []string {
		var ks []string
		db.Keys(b(p), 100, func(k string) { ks = append(ks, k) })
		slices.Sort(ks)
		return ks
	}
	if got := collect("*"); !slices.Equal(got, []string{"", "h", "hallo", "hello", "world"}) {
		t.Fatalf("KEYS *: %q", got)
	}
	if got := collect("h?llo"); !slices.Equal(got, []string{"hallo", "hello"}) {
		t.Fatalf("KEYS h?llo: %q", got)
	}
	if db.Len() != 6 {
		t.Fatal("KEYS deleted an expired key (Redis only skips it)")
	}
}

func TestDBRandomKey(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	db := NewDB()
	if _, ok := db.RandomKey(0, rng); ok {
		t.Fatal("RandomKey of an empty db")
	}
	for i := range 100 {
		db.Set(b(strconv.Itoa(i)), sv("v"), 0)
		if i < 90 {
			db.SetExpire(b(strconv.Itoa(i)), 10)
		}
	}
	// All but 10 keys are expired: RandomKey deletes what it draws
	// until it finds a live one.
	for range 20 {
		k, ok := db.RandomKey(100, rng)
		if n, _ := strconv.Atoi(k); !ok || n < 90 {
			t.Fatalf("RandomKey = %q, %v", k, ok)
		}
	}
	if db.Keyspace().Stats.ExpiredKeys == 0 {
		t.Fatal("no expired key was deleted")
	}
	checkDB(t, db)
	// Everything expired: ends empty.
	for i := 90; i < 100; i++ {
		db.SetExpire(b(strconv.Itoa(i)), 10)
	}
	if k, ok := db.RandomKey(100, rng); ok || db.Len() != 0 {
		t.Fatalf("RandomKey = %q with everything expired", k)
	}
}

func TestKeyspaceSwapAndFlush(t *testing.T) {
	ks := New(3)
	d0, d2 := ks.DBs[0], ks.DBs[2]
	d0.Set(b("a"), sv("0"), 0)
	d0.SetExpire(b("a"), 1000)
	d2.Set(b("b"), sv("2"), 0)
	ks.Swap(0, 2)
	if ks.DBs[0] != d0 || d0.ID() != 0 || d2.ID() != 2 {
		t.Fatal("Swap moved the DB objects")
	}
	if d0.Peek(b("b")) == nil || d0.Peek(b("a")) != nil || d2.ExpireAt(d2.Peek(b("a"))) != 1000 || d2.ExpiresLen() != 1 {
		t.Fatal("Swap did not exchange contents")
	}
	x := watch(ks)
	d2.Lookup(b("a"), 2000)
	if !slices.Equal(*x, expiries{"2:a"}) {
		t.Fatalf("expiry after swap reported %v", *x)
	}
	if ks.Len() != 1 {
		t.Fatalf("Len %d", ks.Len())
	}
	ks.FlushAll()
	if ks.Len() != 0 || d0.ExpiresLen() != 0 {
		t.Fatal("FlushAll")
	}
	if New(0).DBs == nil || len(New(0).DBs) != 1 {
		t.Fatal("New(0)")
	}
}

func TestDBForEach(t *testing.T) {
	db := NewDB()
	for i := range 300 {
		db.Set(b(strconv.Itoa(i)), sv("v"), 0)
		if i%3 == 0 {
			db.SetExpire(b(strconv.Itoa(i)), 5)
		}
	}
	n, v := 0, 0
	db.ForEach(func(string, *Entry) bool { n++; return true })
	db.ForEachVolatile(func(_ string, e *Entry, at int64) bool { v++; return e != nil && at == 5 })
	if n != 300 || v != 100 {
		t.Fatalf("ForEach %d, ForEachVolatile %d", n, v)
	}
	n = 0
	db.ForEach(func(string, *Entry) bool { n++; return n < 10 })
	if n != 10 {
		t.Fatalf("ForEach did not stop: %d", n)
	}
}

func TestLFU(t *testing.T) {
	ks := New(1)
	ks.LFU = LFU{Enabled: true, LogFactor: 10, DecayTime: 1, Rand: rand.New(rand.NewPCG(1, 1))}
	db := ks.DBs[0]
	e := db.Set(b("k"), sv("v"), 0)
	if e.Freq != LFUInitVal {
		t.Fatalf("initial Freq %d", e.Freq)
	}
	// Lookups within the same minute only increment, and with factor
	// 10 slowly: the first few increments (counter <= 5) are certain.
	db.Lookup(b("k"), 1000)
	if e.Freq != LFUInitVal+1 {
		t.Fatalf("Freq after one access: %d", e.Freq)
	}
	for i := range 1000 {
		db.Lookup(b("k"), 2000+int64(i))
	}
	hot := e.Freq
	if hot <= LFUInitVal+1 || hot > 20 {
		t.Fatalf("Freq after 1000 accesses: %d", hot)
	}
	// Overwriting keeps LFU data under LFU (dbSetValue).
	db.Set(b("k"), sv("w"), 50000)
	if e.Freq != hot || e.LastAccess() != 2000 { // 2999 ms, kept in seconds
		t.Fatalf("overwrite under LFU: %+v", *e)
	}
	// Decay: one per DecayTime minute elapsed on the minute clock.
	if got := e.LFUDecay(e.LastAccess()+3*60000, 1); got != hot-3 {
		t.Fatalf("decay after 3 min: %d, want %d", got, hot-3)
	}
	if got := e.LFUDecay(e.LastAccess()+3*60000, 2); got != hot-1 {
		t.Fatalf("decay after 3 min at 2 min/period: %d", got)
	}
	if got := e.LFUDecay(e.LastAccess()+1000*60000, 1); got != 0 {
		t.Fatalf("decay floors at 0: %d", got)
	}
	if got := e.LFUDecay(e.LastAccess()+1000*60000, 0); got != hot {
		t.Fatal("decay time 0 decays")
	}
	if LFULogIncr(255, 10, ks.LFU.Rand) != 255 {
		t.Fatal("255 does not saturate")
	}
	// LookupNoTouch leaves the counter alone.
	db.LookupNoTouch(b("k"), 1e9)
	if e.Freq != hot {
		t.Fatal("LookupNoTouch changed Freq")
	}
}

// TestDBMasterCommand: while a replica runs its master's command, an
// expired key is still found (expireIfNeeded returns 0 for the master
// client) and nothing is deleted.
func TestDBMasterCommand(t *testing.T) {
	ks := New(1)
	x := watch(ks)
	ks.Replica = true
	db := ks.DBs[0]
	db.Set(b("k"), sv("v"), 0)
	db.SetExpire(b("k"), 100)
	ks.MasterCommand = true
	if db.Lookup(b("k"), 200) == nil {
		t.Fatal("the master's command does not see the key")
	}
	ks.MasterCommand = false
	if db.Lookup(b("k"), 200) != nil {
		t.Fatal("a client sees the expired key")
	}
	if db.Len() != 1 || len(*x) != 0 {
		t.Fatal("a replica deleted an expired key")
	}
}

// TestSetString: a new key's bytes and its value's share its node's
// allocation;
// writing the value in place, appending to it, replacing it, renaming the
// key and overwriting through SetString leave each other intact.
func TestSetString(t *testing.T) {
	db := NewDB()
	e := db.SetString([]byte("k1"), []byte("abc"), StringAuto, 1, false)
	s := e.Value().(*String)
	if string(s.Bytes()) != "abc" || s.Kind() != StringAuto || e.LastAccess() != 0 || e.Freq != LFUInitVal {
		t.Fatalf("got %q kind %v", s.Bytes(), s.Kind())
	}
	if !s.inline() || keyNodeSize != 32 || entryNode(e).key() != "k1" || entryNode(e).ent.klen != 2 {
		t.Fatalf("inline %v, node header %d bytes, key %q: a key:N = value:N key (22 bytes) must fit in 64", s.inline(), keyNodeSize, entryNode(e).key())
	}
	m := db.Mutable([]byte("k1"), e).(*String)
	copy(m.Bytes(), "xyz")
	m.Set(append(m.Bytes(), "more"...), StringRaw)
	if string(s.Bytes()) != "xyz" || db.Peek([]byte("k1")) == nil {
		t.Fatalf("the node's bytes after an append: %q", s.Bytes())
	}
	if !db.Rename([]byte("k1"), []byte("k2"), 1) {
		t.Fatal("rename failed")
	}
	// The node held the key's bytes: the renamed key has a new node, the
	// same object (value, access time) in it.
	got := db.Peek([]byte("k2"))
	if got == nil || got.Value() != m || string(got.Value().(*String).Bytes()) != "xyzmore" || entryNode(got).key() != "k2" || db.Peek([]byte("k1")) != nil {
		t.Fatalf("after rename: %v", got)
	}
	e = got
	db.SetExpire([]byte("k2"), 100)
	e2 := db.SetString([]byte("k2"), []byte("new"), StringEmbstr, 2, true)
	if e2 != e || db.ExpireAt(e2) != 100 || string(e2.Value().(*String).Bytes()) != "new" || e2.Value().(*String).Kind() != StringEmbstr {
		t.Fatalf("overwrite with KEEPTTL: %+v", e2)
	}
	db.SetString([]byte("k2"), []byte("x"), StringAuto, 3, false)
	if db.ExpireAt(e) != 0 || db.ExpiresLen() != 0 {
		t.Fatal("overwrite without KEEPTTL kept the TTL")
	}
	big := make([]byte, 257) // past the largest inline node
	db.SetString([]byte("big"), big, StringAuto, 1, false)
	db.SetString(nil, nil, StringAuto, 1, false)
	if v := db.Peek(nil); v == nil || len(v.Value().(*String).Bytes()) != 0 {
		t.Fatal("empty key and value")
	}
	if err := db.Keyspace().Check(); err != nil {
		t.Fatal(err)
	}
	db.dict.Expand(1 << 10)
	var k [8]byte
	i := 0
	if n := testing.AllocsPerRun(200, func() {
		i++
		copy(k[:], strconv.Itoa(i))
		db.SetString(k[:], []byte("value"), StringAuto, 1, false)
	}); n > 1 {
		t.Errorf("SetString of a new key: %v allocations, want 1", n)
	}
}

// NewDB returns an empty database of its own one-database Keyspace (reach
// it with Keyspace, for its Stats and OnExpire hook).
func NewDB() *DB {
	ks := &Keyspace{Encodings: DefaultEncodingConfig()}
	db := &DB{dict: Dict{nodes: true}, expires: Dict{expires: true}, ks: ks}
	ks.DBs = []*DB{db}
	return db
}

// TestFreeEffortEveryShape: FreeEffort reads every value shape (a short
// list keeps no body) without panicking; the aggregates count as Redis's
// lazyfreeGetFreeEffort.
func TestFreeEffortEveryShape(t *testing.T) {
	short := NewList(-2)
	short.PushBack([]byte("a"))
	for _, tc := range []struct {
		v    Value
		want int
	}{
		{NewList(-2), 1}, {short, 1}, {NewIntSet(), 1}, {NewHashtableSet(0), 0}, {NewHash(), 1},
		{NewHashtableHash(0), 0}, {NewZSet(false), 0}, {NewStream(), 0},
	} {
		if got := FreeEffort(tc.v); got != tc.want {
			t.Errorf("%T: %d, want %d", tc.v, got, tc.want)
		}
	}
}
