package keyspace

import (
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
)

// Snapshots: a writer changes keys, values and TTLs (set, delete, expire,
// append and other in-place changes, rename, move, flush, swap, rehash)
// while the snapshot is read in steps; the snapshot must yield exactly the
// keyspace of its start, each key once.

const snapDBs = 3

// snapKey names an item in the dumps: "db:key".
func snapKey(db int, key string) string { return strconv.Itoa(db) + ":" + key }

// itemString renders what a snapshot must reproduce of a key.
func itemString(v Value, expireAt int64) string {
	return string(v.(*String).Bytes()) + "|" + strconv.FormatInt(expireAt, 10)
}

// dumpKeyspace is a deep copy of every key (logically expired ones too).
func dumpKeyspace(ks *Keyspace) map[string]string {
	m := map[string]string{}
	for i, db := range ks.DBs {
		db.ForEach(func(key string, e *Entry) bool {
			m[snapKey(i, key)] = itemString(e.Value(), db.ExpireAt(e))
			return true
		})
	}
	return m
}

// snapWriter applies random writes to a keyspace.
type snapWriter struct {
	ks  *Keyspace
	rng *rand.Rand
	now int64
	// inPlace counts in-place changes (Mutable) and overwrites.
	inPlace, sets int
	// noFlush leaves out FLUSHDB and SWAPDB.
	noFlush bool
}

func (w *snapWriter) key() []byte { return []byte("k" + strconv.Itoa(w.rng.IntN(300))) }
func (w *snapWriter) db() *DB     { return w.ks.DBs[w.rng.IntN(len(w.ks.DBs))] }

func (w *snapWriter) value() []byte {
	n := w.rng.IntN(60)
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + w.rng.IntN(26))
	}
	return b
}

// step applies one random write.
func (w *snapWriter) step() {
	w.now += int64(w.rng.IntN(3))
	db, key := w.db(), w.key()
	switch op := w.rng.IntN(100); {
	case op < 25:
		w.sets++
		switch w.rng.IntN(3) {
		case 0:
			db.Set(key, NewString(w.value(), StringAuto), w.now)
		case 1:
			db.SetKeepTTL(key, NewString(w.value(), StringAuto), w.now)
		default: // a new key's node holds its key's and value's bytes
			db.SetString(key, w.value(), StringAuto, w.now, w.rng.IntN(2) == 0)
		}
	case op < 35:
		db.Delete(key)
	case op < 45:
		if db.LookupNoTouch(key, w.now) != nil {
			db.SetExpire(key, w.now+int64(w.rng.IntN(200))-20)
		}
	case op < 50:
		db.Persist(key)
	case op < 60: // APPEND
		if e := db.Lookup(key, w.now); e != nil {
			s := db.Mutable(key, e).(*String)
			s.Set(append(s.Bytes(), w.value()...), StringRaw)
			w.inPlace++
		}
	case op < 68: // SETBIT / SETRANGE within the string
		if e := db.Lookup(key, w.now); e != nil && len(e.Value().(*String).Bytes()) > 0 {
			s := db.Mutable(key, e).(*String)
			b := s.Bytes()
			b[w.rng.IntN(len(b))] ^= 0x20
			s.SetKind(StringRaw)
			w.inPlace++
		}
	case op < 74:
		db.Rename(key, w.key(), w.now)
	case op < 79:
		dst := w.db()
		if dst.LookupNoTouch(key, w.now) == nil {
			db.Move(key, dst, w.now)
		}
	case op < 85:
		db.Lookup(key, w.now) // lazy expiry
	case op < 88:
		w.ks.ActiveExpireCycle(w.now, nil, 1000, func() int64 { return 0 })
	case op < 91:
		w.ks.ResizeAndRehash(1000, func() int64 { return 0 })
	case op < 93:
		for range 50 { // grow the table: rehashing under the walk
			db.Set([]byte("bulk"+strconv.Itoa(w.rng.IntN(5000))), NewString([]byte("b"), StringAuto), w.now)
		}
	case op < 95:
		for range 50 {
			db.Delete([]byte("bulk" + strconv.Itoa(w.rng.IntN(5000))))
		}
	case op < 97 && !w.noFlush:
		if w.rng.IntN(3) == 0 {
			db.Flush()
		} else {
			w.ks.Swap(w.rng.IntN(snapDBs), w.rng.IntN(snapDBs))
		}
	}
}

// fill gives the keyspace some keys, TTLs and a table mid-rehash.
func (w *snapWriter) fill(n int) {
	for range n {
		db, key := w.db(), w.key()
		db.Set(key, NewString(w.value(), StringAuto), w.now)
		if w.rng.IntN(3) == 0 {
			db.SetExpire(key, w.now+int64(w.rng.IntN(300)))
		}
	}
	w.ks.DBs[0].dict.Expand(4096)
}

// collect records a step's items (outside the lock: the values must not
// change under it), failing on a key emitted twice.
func collect(t *testing.T, got map[string]string, items []Item) {
	t.Helper()
	for _, it := range items {
		k := snapKey(it.DB, it.Key)
		if _, dup := got[k]; dup {
			t.Errorf("%s emitted twice", k)
		}
		got[k] = itemString(it.Value, it.ExpireAt)
	}
}

func compareDumps(t *testing.T, got, want map[string]string) {
	t.Helper()
	bad := 0
	for k, v := range want {
		if g, ok := got[k]; !ok {
			t.Errorf("%s missing from the snapshot (want %q)", k, v)
			bad++
		} else if g != v {
			t.Errorf("%s = %q, want %q", k, g, v)
			bad++
		}
		if bad > 10 {
			t.FailNow()
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s = %q in the snapshot but created after its start", k, v)
			bad++
		}
		if bad > 10 {
			t.FailNow()
		}
	}
}

// TestSnapshotConsistentRandom interleaves writes and snapshot steps in one
// goroutine, with fixed seeds.
func TestSnapshotConsistentRandom(t *testing.T) {
	for seed := uint64(1); seed <= 40; seed++ {
		t.Run(strconv.FormatUint(seed, 10), func(t *testing.T) {
			ks := New(snapDBs)
			w := &snapWriter{ks: ks, rng: rand.New(rand.NewPCG(seed, 7)), now: 1000}
			w.fill(400)
			for round := range 3 { // successive snapshots on one keyspace
				want := dumpKeyspace(ks)
				snap, err := ks.BeginSnapshot()
				if err != nil {
					t.Fatal(err)
				}
				if _, err := ks.BeginSnapshot(); err != ErrSnapshotRunning {
					t.Fatalf("second BeginSnapshot: %v", err)
				}
				got := map[string]string{}
				var buf []Item
				for done := false; !done; {
					for range w.rng.IntN(20) {
						w.step()
					}
					buf, done = snap.Step(buf[:0], 1+w.rng.IntN(30))
					collect(t, got, buf)
				}
				// More writes before Close: values stay as handed out.
				for range 200 {
					w.step()
				}
				compareDumps(t, got, want)
				st := snap.Stats()
				if st.Emitted != len(want) {
					t.Errorf("round %d: Emitted %d, want %d", round, st.Emitted, len(want))
				}
				snap.Close()
				snap.Close()
				if ks.Snapshotting() {
					t.Fatal("still snapshotting after Close")
				}
				if buf, done := snap.Step(nil, 10); !done || len(buf) != 0 {
					t.Fatal("Step after Close emitted")
				}
			}
		})
	}
}

// TestSnapshotConcurrent reads the snapshot in another goroutine, which
// takes the lock for each step and reads the values without it, as the
// server's BGSAVE will; run with -race.
func TestSnapshotConcurrent(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		ks := New(snapDBs)
		w := &snapWriter{ks: ks, rng: rand.New(rand.NewPCG(seed, 99)), now: 1000}
		w.fill(2000)
		var mu sync.Mutex
		mu.Lock()
		want := dumpKeyspace(ks)
		snap, err := ks.BeginSnapshot()
		mu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		readerDone := readSnapshotUnlocked(snap, &mu, 16, func(buf []Item) { collect(t, got, buf) })
		writeWhileReading(readerDone, 100, func() {
			mu.Lock()
			w.step()
			mu.Unlock()
		})
		mu.Lock()
		snap.Close()
		mu.Unlock()
		compareDumps(t, got, want)
	}
}

// TestSnapshotCopiesOnlyWrites: a snapshot costs nothing for keys nobody
// writes; a write saves the old entry without copying its value, unless it
// changes the value in place; keys created after the start cost nothing.
func TestSnapshotCopiesOnlyWrites(t *testing.T) {
	ks := New(2)
	db := ks.DBs[0]
	const n = 1000
	key := func(i int) []byte { return []byte("k" + strconv.Itoa(i)) }
	for i := range n {
		db.Set(key(i), NewString([]byte("value"+strconv.Itoa(i)), StringAuto), 0)
	}
	mutate := func(i int) {
		e := db.Lookup(key(i), 0)
		s := db.Mutable(key(i), e).(*String)
		s.Set(append(s.Bytes(), '!'), StringRaw)
	}
	want := dumpKeyspace(ks)
	snap, _ := ks.BeginSnapshot()

	// Keys created during the snapshot: written freely, in place too.
	for i := n; i < n+100; i++ {
		db.Set(key(i), NewString([]byte("new"), StringAuto), 0)
		mutate(i)
		if !db.InPlace(db.Peek(key(i))) {
			t.Fatal("a key created during the snapshot is not writable in place")
		}
	}
	if st := snap.Stats(); st.Saved != 0 || st.Copied != 0 || st.CowBytes() != 0 {
		t.Fatalf("new keys cost %+v", st)
	}
	// Ten overwrites, five TTL changes, five deletes: saved, not copied.
	for i := range 10 {
		db.Set(key(i), NewString([]byte("over"), StringAuto), 0)
		db.Set(key(i), NewString([]byte("again"), StringAuto), 0) // already saved
	}
	for i := 10; i < 15; i++ {
		db.SetExpire(key(i), 5000)
	}
	for i := 15; i < 20; i++ {
		db.Delete(key(i))
	}
	if st := snap.Stats(); st.Saved != 20 || st.Copied != 0 || st.CopiedBytes != 0 || st.SavedBytes < 20*savedItemSize || st.SavedBytes > 20*(savedItemSize+8) {
		t.Fatalf("after overwrites, expires, deletes: %+v, want 20 saved (an item and a key each), 0 copied", st)
	}
	// In-place changes of a key not emitted yet: saved and copied once;
	// an overwritten one is the writer's own value: not copied.
	for i := 20; i < 25; i++ {
		mutate(i)
		mutate(i)
	}
	for i := range 5 {
		mutate(i)
	}
	if st := snap.Stats(); st.Saved != 25 || st.Copied != 5 || st.CopiedBytes == 0 || st.CopiedBytes > 5*64 {
		t.Fatalf("after in-place changes: %+v, want 25 saved, 5 short strings copied", st)
	}
	// Read half, then change emitted keys in place: each copied once,
	// since the reader may still be serialising them.
	got := map[string]string{}
	buf, _ := snap.Step(nil, n/2)
	collect(t, got, buf)
	copied := snap.Stats().Copied
	changed := 0
	for _, it := range buf {
		if it.DB != 0 || len(it.Key) > 4 { // k0..k999 only
			continue
		}
		k := []byte(it.Key)
		if e := db.Peek(k); e != nil && !db.InPlace(e) {
			mutate(mustAtoi(t, it.Key[1:]))
			mutate(mustAtoi(t, it.Key[1:]))
			changed++
		}
	}
	if got := snap.Stats().Copied - copied; got != changed || changed == 0 {
		t.Fatalf("in-place changes of %d emitted keys copied %d values", changed, got)
	}
	for done := false; !done; {
		buf, done = snap.Step(buf[:0], 100)
		collect(t, got, buf)
	}
	compareDumps(t, got, want)
	if st := snap.Stats(); st.Saved != 25 || st.Emitted != n {
		t.Fatalf("final %+v, want 25 saved, %d emitted", st, n)
	}
	snap.Close()
	// After Close nothing is copied.
	e := db.Peek(key(500))
	if !db.InPlace(e) {
		t.Fatal("not writable in place after Close")
	}
	v := e.Value()
	mutate(500)
	if db.Peek(key(500)).Value() != v {
		t.Fatal("Mutable copied after Close")
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSnapshotFlushSwapMove: the cases that move whole tables or entries
// between databases keep each key under the database it had at the start.
func TestSnapshotFlushSwapMove(t *testing.T) {
	ks := New(3)
	for d := range 3 {
		for i := range 50 {
			ks.DBs[d].Set([]byte("d"+strconv.Itoa(d)+"k"+strconv.Itoa(i)), NewString([]byte("v"), StringAuto), 0)
		}
	}
	want := dumpKeyspace(ks)
	snap, _ := ks.BeginSnapshot()
	got := map[string]string{}
	buf, _ := snap.Step(nil, 10) // part of db 0
	collect(t, got, buf)
	ks.Swap(0, 2)
	ks.DBs[2].Flush() // db 0's old contents, half walked
	ks.DBs[0].Move([]byte("d2k3"), ks.DBs[1], 0)
	ks.DBs[0].Set([]byte("d2k4"), NewString([]byte("changed"), StringAuto), 0)
	ks.FlushAll()
	ks.DBs[1].Set([]byte("fresh"), NewString([]byte("x"), StringAuto), 0)
	for done := false; !done; {
		buf, done = snap.Step(buf[:0], 7)
		collect(t, got, buf)
	}
	snap.Close()
	compareDumps(t, got, want)
}

// TestSnapshotMutableNoAlloc: outside a snapshot Mutable and InPlace cost
// nothing.
func TestSnapshotMutableNoAlloc(t *testing.T) {
	db := NewDB()
	k := []byte("k")
	e := db.Set(k, NewString([]byte("value"), StringAuto), 0)
	if n := testing.AllocsPerRun(100, func() {
		if db.InPlace(e) {
			db.Mutable(k, e).(*String).Bytes()[0] = 'V'
		}
	}); n != 0 {
		t.Fatalf("%v allocs", n)
	}
}

// readSnapshotUnlocked reads snap in a goroutine, n items a step under mu
// (the writers' lock), handing each step's items to use without it, as a
// BGSAVE child reads beside the writes; the channel closes at the end.
func readSnapshotUnlocked(snap *Snapshot, mu *sync.Mutex, n int, use func([]Item)) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		var buf []Item
		for end := false; !end; {
			mu.Lock()
			buf, end = snap.Step(buf[:0], n)
			mu.Unlock()
			use(buf)
		}
	}()
	return done
}

// writeWhileReading calls write until readerDone closes, then extra times
// more (writes after the snapshot was read, before it closes), and
// returns how many writes it made.
func writeWhileReading(readerDone <-chan struct{}, extra int, write func()) int {
	writes := 0
	for writing, after := true, 0; writing || after < extra; writes++ {
		select {
		case <-readerDone:
			writing = false
		default:
		}
		if !writing {
			after++
		}
		write()
	}
	return writes
}
