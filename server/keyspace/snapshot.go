package keyspace

import (
	"errors"
	"math/bits"
	"sync/atomic"
	"unsafe"
)

// ErrSnapshotRunning is returned by BeginSnapshot while another snapshot
// runs (Redis likewise runs one child at a time: hasActiveChildProcess).
var ErrSnapshotRunning = errors.New("keyspace: a snapshot is already running")

// Item is one key of a snapshot: what BGSAVE, a full resync or an AOF
// rewrite serialises.
type Item struct {
	// DB is the database number the key had when the snapshot began.
	DB int
	// Key is the key.
	Key string
	// Value is the value as it was when the snapshot began. It is not
	// modified while the snapshot runs (until Close), so it may be read
	// without the execution lock.
	Value Value
	// ExpireAt is the key's TTL (unix ms, 0 for none) when the snapshot
	// began.
	ExpireAt int64
	// LastAccess and Freq are the access metadata (RDB's IDLE and FREQ
	// opcodes) as of when the item was emitted or saved: reads touch them
	// without a write, so they are not held at the snapshot's start.
	LastAccess int64
	Freq       uint8
}

// SnapshotStats counts a snapshot's work, for tests and INFO-style
// reporting.
type SnapshotStats struct {
	// Emitted is the number of items Step handed out.
	Emitted int
	// Saved is the number of entries whose state a write saved for the
	// snapshot before the walk reached them (the value shared, not
	// copied).
	Saved int
	// Copied is the number of values duplicated so that a write could
	// change them in place while the snapshot held them.
	Copied int
	// SavedBytes and CopiedBytes estimate the memory those took: a saved
	// item and its key, and the duplicated values (Value.Size). Their sum
	// is what Redis's INFO calls the copy-on-write size of the fork.
	SavedBytes, CopiedBytes uint64
}

// CowBytes is the memory the snapshot made the keyspace hold in addition
// to the data: SavedBytes + CopiedBytes.
func (st SnapshotStats) CowBytes() uint64 { return st.SavedBytes + st.CopiedBytes }

// savedItemSize is an Item's size in a saved slice.
const savedItemSize = uint64(unsafe.Sizeof(Item{}))

// Running returns the running snapshot, nil if none.
func (ks *Keyspace) Running() *Snapshot { return ks.snap }

// dbScan is a snapshot's walk of one database's contents: the Dict of the
// database that holds them now (they move on SWAPDB) or the table FLUSHDB
// left behind.
//
// The walk reads the table in bucket order (lin, pos) for as long as the
// table it started on stays in place, which is the usual case: consecutive
// buckets share cache lines and pages, where dictScan's reversed-bit order
// makes each bucket a cache and TLB miss. Once that table is resized (a
// rehash begins or the walk finds another table) the walk starts over with
// dictScan's cursor from 0 (scanning), whose guarantee holds across
// resizes; the entries already emitted carry the snapshot's epoch and are
// passed over.
type dbScan struct {
	origin   int    // the database number when the snapshot began
	cursor   uint64 // dictScan cursor, once scanning
	scanning bool
	lin      []*dictEntry // the table read in bucket order, nil before the first step
	pos      int          // the next bucket of lin
	done     bool
	db       *DB   // the database holding the contents, nil once orphaned
	orphan   *Dict // the contents a flush left to the snapshot
	orphanEx *Dict // their expires index
}

func (sc *dbScan) dict() *Dict {
	if sc.orphan != nil {
		return sc.orphan
	}
	return &sc.db.dict
}

// expires is the expires index of the contents the walk reads.
func (sc *dbScan) expires() *Dict {
	if sc.orphan != nil {
		return sc.orphanEx
	}
	return &sc.db.expires
}

// Snapshot is a point-in-time view of all databases, read in steps while
// writes continue: the package documentation's "Snapshots" describes the
// rules. Step and Close are called with the execution lock held; the Items
// they return may be read without it until Close.
type Snapshot struct {
	ks     *Keyspace
	epoch  uint32
	scans  []*dbScan // by origin database number
	saved  [][]Item  // by origin: states saved by writes, not yet emitted
	cur    int       // the origin being emitted
	stats  SnapshotStats
	closed bool
	sink   uint32 // emit's reads
}

// BeginSnapshot starts a snapshot of every database as it is now. Call it
// with the execution lock held; it costs O(databases), not O(keys). Only
// one snapshot runs at a time: it returns ErrSnapshotRunning until the
// running one is closed.
func (ks *Keyspace) BeginSnapshot() (*Snapshot, error) {
	if ks.snap != nil {
		return nil, ErrSnapshotRunning
	}
	ks.snapEpoch++
	s := &Snapshot{
		ks:    ks,
		epoch: ks.snapEpoch,
		scans: make([]*dbScan, len(ks.DBs)),
		saved: make([][]Item, len(ks.DBs)),
	}
	for i, db := range ks.DBs {
		sc := &dbScan{origin: i, db: db}
		s.scans[i] = sc
		db.scan = sc
	}
	ks.snap = s
	return s, nil
}

// Snapshotting reports whether a snapshot is running.
func (ks *Keyspace) Snapshotting() bool { return ks.snap != nil }

// save records e, the entry of key in db, for the running snapshot s as it
// is now, and marks it accounted for. Its value is now shared.
func (db *DB) save(s *Snapshot, key string, e *Entry) {
	origin := db.id
	if db.scan != nil {
		origin = db.scan.origin
	}
	s.saved[origin] = append(s.saved[origin], itemOf(origin, key, e, &db.expires))
	s.stats.Saved++
	s.stats.SavedBytes += savedItemSize + uint64(len(key))
	e.snapEpoch = s.epoch
	e.flags |= snapSharedFlag
}

// itemOf is the Item of e, the entry of key, whose expires index is ex.
func itemOf(origin int, key string, e *Entry, ex *Dict) Item {
	var at int64
	if e.flags&expireFlag != 0 {
		if x := ex.findS(hashString(key), key); x != nil {
			at = expEnt(x).at
		}
	}
	return Item{DB: origin, Key: key, Value: e.Value(), ExpireAt: at, LastAccess: e.LastAccess(), Freq: e.Freq}
}

// detachScan is Flush's part: a walk that has not finished keeps the old
// table, the database gets a finished walk (everything added from now on
// is new to the snapshot).
func (db *DB) detachScan() {
	sc := db.scan
	if sc == nil || db.ks.snap == nil {
		return
	}
	if !sc.done {
		old, oldEx := db.dict, db.expires // the tables; Clear replaces, never touches them
		old.pauseRehash, oldEx.pauseRehash = 0, 0
		sc.orphan, sc.orphanEx = &old, &oldEx
		sc.db = nil
	}
	db.scan = &dbScan{origin: sc.origin, done: true, db: db}
}

// Step appends to dst up to about n more items (whole hash buckets are
// emitted together, so a few more) and reports whether the snapshot is
// complete. Call it with the execution lock held. Items come grouped by
// database, in increasing database number; each key the databases held at
// BeginSnapshot comes exactly once, with its value and TTL of that moment.
// n <= 0 means 1.
func (s *Snapshot) Step(dst []Item, n int) ([]Item, bool) {
	if s.closed {
		return dst, true
	}
	n = max(n, 1)
	start := len(dst)
	for len(dst)-start < n && s.cur < len(s.scans) {
		if q := s.saved[s.cur]; len(q) > 0 {
			k := min(len(q), n-(len(dst)-start))
			dst = append(dst, q[:k]...)
			clear(q[:k]) // drop the references for the collector
			s.saved[s.cur] = q[k:]
			continue
		}
		sc := s.scans[s.cur]
		if sc.done {
			s.cur++
			continue
		}
		d := sc.dict()
		if !sc.scanning && d.Len() > 0 && !d.IsRehashing() && (sc.lin == nil || sameTable(sc.lin, d.ht[0])) {
			sc.lin = d.ht[0]
			var end bool
			dst, end = s.walkLinear(dst, sc, n-(len(dst)-start))
			if end {
				sc.done = true
				sc.lin, sc.orphan, sc.orphanEx = nil, nil, nil
			}
			continue
		}
		if !sc.scanning {
			sc.scanning, sc.lin, sc.cursor = true, nil, 0
		}
		if d.Len() > 0 && !d.IsRehashing() {
			dst, sc.cursor = s.walk(dst, d.ht[0], sc, n-(len(dst)-start))
		} else if d.Len() > 0 {
			sc.cursor = d.scan(sc.cursor, func(de *dictEntry) {
				if e := nodeEntry(de); e != nil && e.snapEpoch != s.epoch {
					dst = append(dst, itemOf(sc.origin, nodeKey(de), e, sc.expires()))
					e.snapEpoch = s.epoch
					e.flags |= snapSharedFlag
				}
			})
		} else {
			sc.cursor = 0
		}
		if sc.cursor == 0 {
			sc.done = true
			sc.orphan, sc.orphanEx = nil, nil
		}
	}
	if s.cur >= len(s.scans) {
		// Saves arrive only for entries a walk has not reached, so
		// none can follow a finished walk; should one, it is not lost.
		for i, q := range s.saved {
			dst = append(dst, q...)
			s.saved[i] = nil
		}
	}
	s.stats.Emitted += len(dst) - start
	return dst, s.cur >= len(s.scans)
}

// walkBatch is how many buckets walk and walkLinear read ahead.
const walkBatch = 32

// sameTable reports whether a and b are the same bucket array.
func sameTable(a, b []*dictEntry) bool {
	return len(a) == len(b) && len(a) > 0 && &a[0] == &b[0]
}

// walkLinear reads sc.lin in bucket order from sc.pos until about want
// items were appended, and reports whether it reached the table's end.
func (s *Snapshot) walkLinear(dst []Item, sc *dbScan, want int) ([]Item, bool) {
	t := sc.lin
	got := 0
	for got < want && sc.pos < len(t) {
		end := min(sc.pos+walkBatch, len(t))
		var k int
		dst, k = s.emit(dst, t[sc.pos:end], sc)
		got += k
		sc.pos = end
	}
	return dst, sc.pos >= len(t)
}

// emit appends the owed entries of the buckets heads to dst, marks them
// and returns how many it appended. It first reads each entry's epoch in
// a loop that does nothing else, so that the cache misses of the entries,
// which lie far apart in memory, overlap instead of coming one by one.
func (s *Snapshot) emit(dst []Item, heads []*dictEntry, sc *dbScan) ([]Item, int) {
	var sink uint32
	for _, de := range heads {
		for ; de != nil; de = de.next {
			if e := nodeEntry(de); e != nil {
				sink += e.snapEpoch
			}
		}
	}
	s.sink = sink // keeps the reads
	got := 0
	for _, de := range heads {
		for ; de != nil; de = de.next {
			if e := nodeEntry(de); e != nil && e.snapEpoch != s.epoch {
				dst = append(dst, itemOf(sc.origin, nodeKey(de), e, sc.expires()))
				e.snapEpoch = s.epoch
				e.flags |= snapSharedFlag
				got++
			}
		}
	}
	return dst, got
}

// walk is dictScan over a table that is not being rehashed, for Step: it
// visits buckets from sc.cursor in the scan's (reversed-bit) order until
// about want items were appended, and returns the new cursor (0 when the
// walk is complete). The reversed order makes every bucket and entry a
// cache miss; walk reads the bucket heads of a batch first and then their
// entries, so those misses overlap instead of following one another.
func (s *Snapshot) walk(dst []Item, t []*dictEntry, sc *dbScan, want int) ([]Item, uint64) {
	m := uint64(len(t) - 1)
	v := sc.cursor
	var heads [walkBatch]*dictEntry
	got := 0
	for got < want {
		k := 0
		for k < min(walkBatch, want-got) {
			heads[k] = t[v&m]
			k++
			v |= ^m
			v = bits.Reverse64(bits.Reverse64(v) + 1)
			if v == 0 {
				break
			}
		}
		var g int
		dst, g = s.emit(dst, heads[:k], sc)
		got += g
		if v == 0 {
			break
		}
	}
	return dst, v
}

// PrefetchItems reads the first bytes of the keys and string values of
// items, which a snapshot's walk left far apart in memory, so that their
// cache misses overlap rather than come one by one as an encoder reaches
// each item. It changes nothing; call it without the execution lock, before
// encoding a batch Step returned.
func PrefetchItems(items []Item) {
	var sink byte
	for i := range items {
		if k := items[i].Key; len(k) > 0 {
			sink += k[0]
		}
	}
	for i := range items {
		if sv, ok := items[i].Value.(*String); ok {
			sink += byte(sv.n)
		}
	}
	for i := range items {
		if sv, ok := items[i].Value.(*String); ok && sv.n > 0 {
			sink += *sv.data()
		}
	}
	prefetchSink.Store(uint32(sink))
}

// prefetchSink keeps PrefetchItems' reads from being optimised away.
var prefetchSink atomic.Uint32

// Stats reports the snapshot's work so far.
func (s *Snapshot) Stats() SnapshotStats { return s.stats }

// Close ends the snapshot (complete or abandoned), with the execution lock
// held. From then on writes change values in place again, so the caller
// must be done reading the Items. Closing twice does nothing.
func (s *Snapshot) Close() {
	if s.closed {
		return
	}
	s.closed = true
	s.saved = nil
	for _, sc := range s.scans {
		sc.orphan, sc.orphanEx = nil, nil
	}
	for _, db := range s.ks.DBs {
		db.scan = nil
	}
	if s.ks.snap == s {
		s.ks.snap = nil
	}
}
