package keyspace

import (
	"math"
	"math/rand/v2"
	"unsafe"
)

// Entry is the value stored under a key with its metadata: Redis's robj
// header. The key's expire time is not here but in the database's expires
// index, as Redis's db->expires (DB.ExpireAt); the entry only records that
// it has one (HasExpire).
//
// An *Entry returned by the DB stays valid (and keeps describing the same
// key) until the key is deleted, expired, overwritten by Rename or flushed;
// Set on an existing key updates the same Entry in place, and Move carries
// it to the new database. Rename carries it to the new name, unless its
// node holds the key's bytes (a string key made by SetString): then the
// renamed key's Entry is a new one with the same contents.
type Entry struct {
	// vp and vt are the value (Value): its pointer and which of the
	// value types it points to (a Value interface would take 16 bytes;
	// see Value and setVal). Change the value only through DB.Set,
	// DB.SetKeepTTL and DB.Mutable, which keep a running snapshot's view
	// intact.
	vp unsafe.Pointer
	// lastAccess is the unix time in seconds of the last access (the LRU
	// clock of OBJECT IDLETIME, whose resolution is a second in Redis
	// too: LRU_CLOCK_RESOLUTION). Under LFU it is also the last decrement
	// time of Freq (Redis's LDT, in minutes). See LastAccess.
	lastAccess uint32
	// snapEpoch is the epoch of the last snapshot that accounted for this
	// entry: emitted it, saved its state before a write, or saw it
	// created. The running snapshot still owes the entry while it differs
	// from the snapshot's epoch.
	snapEpoch uint32
	// acct is the bytes this entry counts for in its database's used
	// memory (see evict.go, "Memory accounting"): its key, dictEntry and
	// value as of the last settle, saturated at 4 GiB (acctBytes).
	acct uint32
	// Freq is the logarithmic LFU counter of OBJECT FREQ (evict.c).
	Freq uint8
	// flags holds:
	//
	//   - acctDirtyFlag: the entry is queued for re-accounting
	//     (Keyspace.Settle).
	//   - snapSharedFlag: the value is also held by snapshot snapEpoch
	//     (it was emitted or saved), so it must be copied before an
	//     in-place change while that snapshot runs.
	//   - argvExecFlag: a command queued in the EXEC running now stored
	//     this value (Keyspace.MarkArgvExec). Such a value is, in Redis,
	//     the very object of the transaction's argv, which EXEC keeps
	//     until it ends: OBJECT REFCOUNT is 2 meanwhile. Set and
	//     SetKeepTTL reset it, and Keyspace.BeginExec resets it for the
	//     entries the previous EXEC marked.
	//   - removedFlag: the key node was unlinked from its dict (dict.go:
	//     an iteration standing on it skips it).
	//   - expireFlag: the key has an expire time in the database's
	//     expires index (set and cleared with the index entry).
	//   - inNodeFlag: the value is a String in the key node itself, after
	//     the key's bytes (newInlineStringNode), and vp is nil: the
	//     collector then finds no pointer to scan in a string key's node
	//     but the chain link (Entry.ptr computes the address).
	//   - lfuFlag: lastAccess and Freq were last written under an LFU
	//     maxmemory-policy. Redis keeps one 24-bit field, robj.lru, that
	//     holds the LRU clock or, under LFU, the minutes and the counter:
	//     read under the other policy (after CONFIG SET maxmemory-policy)
	//     it gives what Redis's reading of the other format gives (see
	//     LRUField).
	flags uint8
	// vt is the type of *vp (vt* constants).
	vt uint8
	// klen is the length of the key when its bytes are in the key node,
	// right after it (keyNode.key); 0 when the node is a keyStrNode, whose
	// key is a string there.
	klen uint8
}

const (
	acctDirtyFlag uint8 = 1 << iota
	snapSharedFlag
	argvExecFlag
	removedFlag
	expireFlag
	lfuFlag
	inNodeFlag
)

// The value types of Entry.vt. vtBoxed is any other Value, vp then points
// to a Value holding it.
const (
	vtNone uint8 = iota
	vtString
	vtList
	vtSet
	vtZSet
	vtHash
	vtStream
	vtBoxed
)

// Value returns the entry's value. It is read-only: to change it in place
// use DB.Mutable.
func (e *Entry) Value() Value {
	if e.vt == vtString { // the commonest, inlined
		return (*String)(e.ptr())
	}
	return e.value()
}

// StringValue is Value when it is a string (the GET and SET paths): the
// string and true, or nil and false.
func (e *Entry) StringValue() (*String, bool) {
	if e.vt == vtString {
		return (*String)(e.ptr()), true
	}
	return nil, false
}

// ptr is the value's address: vp, or the String in the key node when
// inNodeFlag is set. A string key's node holds no pointer to itself, so
// the collector's scan of it follows only the chain link: it costs 35-40%
// of the mark of a keyspace of such keys less (docs/benchmarks.md, "Tail
// latency").
func (e *Entry) ptr() unsafe.Pointer {
	if e.flags&inNodeFlag != 0 {
		return e.inNodeAddr()
	}
	return e.vp
}

// inNodeAddr is where newInlineStringNode puts the String header of a node
// whose key's bytes it holds (klen != 0): after them, 4-byte aligned.
func (e *Entry) inNodeAddr() unsafe.Pointer {
	return unsafe.Add(unsafe.Pointer(e), int(keyNodeSize-unsafe.Offsetof(keyNode{}.ent))+strOffset(int(e.klen)))
}

func (e *Entry) value() Value {
	switch e.vt {
	case vtString:
		return (*String)(e.ptr())
	case vtList:
		return (*List)(e.vp)
	case vtSet:
		return (*Set)(e.vp)
	case vtZSet:
		return (*ZSet)(e.vp)
	case vtHash:
		return (*Hash)(e.vp)
	case vtStream:
		return (*Stream)(e.vp)
	case vtBoxed:
		return *(*Value)(e.vp)
	}
	return nil
}

// setVal makes v the entry's value.
func (e *Entry) setVal(v Value) {
	switch x := v.(type) {
	case *String:
		e.vp, e.vt = unsafe.Pointer(x), vtString
	case *List:
		e.vp, e.vt = unsafe.Pointer(x), vtList
	case *Set:
		e.vp, e.vt = unsafe.Pointer(x), vtSet
	case *ZSet:
		e.vp, e.vt = unsafe.Pointer(x), vtZSet
	case *Hash:
		e.vp, e.vt = unsafe.Pointer(x), vtHash
	case *Stream:
		e.vp, e.vt = unsafe.Pointer(x), vtStream
	case nil:
		e.vp, e.vt = nil, vtNone
	default:
		box := new(Value)
		*box = v
		e.vp, e.vt = unsafe.Pointer(box), vtBoxed
	}
	e.flags &^= inNodeFlag
	// Only an inline string node (klen != 0) has a String at inNodeAddr,
	// inside its own allocation: no other object can start there.
	if e.vt == vtString && e.klen != 0 && e.vp == e.inNodeAddr() {
		e.vp = nil
		e.flags |= inNodeFlag
	}
}

// LastAccess is the unix millisecond time of the last access, at the
// resolution of a second (it is kept in seconds: the time of the access
// rounded down to a second, as Redis's LRU clock).
func (e *Entry) LastAccess() int64 { return int64(e.lastAccess) * 1000 }

// SetLastAccess sets the last access time to ms (unix milliseconds; it is
// kept in seconds, clamped to 0 .. 2^32-1 s).
func (e *Entry) SetLastAccess(ms int64) { e.lastAccess = accessSecs(ms) }

// SetAccessMeta is objectSetLRUOrLFU for a restored or loaded key at now
// (unix ms): under LFU (lfu) a FREQ (>= 0) sets the counter, its
// decrement time now; otherwise an IDLE in seconds (>= 0) sets the
// access time back. The one that does not apply to the policy is ignored.
func (e *Entry) SetAccessMeta(lfu bool, idle int64, freq int, now int64) {
	switch {
	case lfu && freq >= 0:
		e.Freq = uint8(min(freq, 255))
		e.lastAccess = accessSecs(now)
		e.flags |= lfuFlag
	case !lfu && idle >= 0:
		e.lastAccess = accessSecs(now - idle*1000)
		e.flags &^= lfuFlag
	}
}

// LRUField is the key's robj.lru as Redis would hold it: under LRU the
// LRU clock of the last access (seconds, 24 bits), under LFU the minutes
// of the last decrement (16 bits) and the counter (8 bits).
func (e *Entry) LRUField() uint32 {
	if e.flags&lfuFlag != 0 {
		return (e.lastAccess/60&0xffff)<<8 | uint32(e.Freq)
	}
	return e.lastAccess & lruClockMax
}

// LRUFieldIsLFU reports whether LRUField holds LFU data.
func (e *Entry) LRUFieldIsLFU() bool { return e.flags&lfuFlag != 0 }

// lruClockMax is LRU_CLOCK_MAX.
const lruClockMax = 1<<24 - 1

// IdleMs is estimateObjectIdleTime at now (unix ms): the milliseconds
// since the last access under LRU; for a key last written under LFU,
// Redis's reading of its LFU field as an LRU clock.
func (e *Entry) IdleMs(now int64) int64 {
	if e.flags&lfuFlag == 0 {
		return max(0, now-e.LastAccess())
	}
	clock, lru := uint32(now/1000)&lruClockMax, e.LRUField()
	if clock >= lru {
		return int64(clock-lru) * 1000
	}
	return int64(clock+(lruClockMax-lru)) * 1000
}

// accessSecs is ms as Entry.lastAccess stores it.
func accessSecs(ms int64) uint32 {
	if uint64(ms) < math.MaxUint32*1000 { // the usual case: 0 <= ms < 2^32 s
		return uint32(uint64(ms) / 1000)
	}
	return uint32(min(max(ms/1000, 0), math.MaxUint32))
}

// ArgvExec reports whether a command of the EXEC running now stored this
// value (see Keyspace.MarkArgvExec); only meaningful while an EXEC runs.
func (e *Entry) ArgvExec() bool { return e.flags&argvExecFlag != 0 }

// ClearArgvExec records that the value is no longer the EXEC's argv
// object (it was modified in place).
func (e *Entry) ClearArgvExec() { e.flags &^= argvExecFlag }

// HasExpire reports whether the key has an expire time (DB.ExpireAt is
// not 0).
func (e *Entry) HasExpire() bool { return e.flags&expireFlag != 0 }

// keyNode is a main-dict element and its Entry in one allocation, 32
// bytes. The key follows it in the same allocation: either its bytes
// (Entry.klen of them: a node made with its value, as newInlineStringNode)
// or a string header (a keyStrNode).
type keyNode struct {
	dictEntry
	ent Entry
}

// keyStrNode is a keyNode whose key is a string of its own (or one pointing
// into a larger node, as valNode's).
type keyStrNode struct {
	keyNode
	key string
}

// keyNodeSize is where a key node's key starts.
const keyNodeSize = unsafe.Sizeof(keyNode{})

// newKeyStrNode returns a node for key with a copy of its bytes.
func newKeyStrNode(key string) *keyNode {
	n := &keyStrNode{key: key}
	return &n.keyNode
}

// key is the node's key.
func (n *keyNode) key() string {
	p := unsafe.Add(unsafe.Pointer(n), keyNodeSize)
	if k := n.ent.klen; k != 0 {
		return unsafe.String((*byte)(p), int(k)) // never written
	}
	return *(*string)(p)
}

// entryNode is the keyNode holding e (every Entry the DB hands out is one).
func entryNode(e *Entry) *keyNode {
	return (*keyNode)(unsafe.Add(unsafe.Pointer(e), -int(unsafe.Offsetof(keyNode{}.ent))))
}

// ExpireAt is the absolute expire time of e, an entry of db, in unix
// milliseconds, 0 for none (getExpire). Keys without a TTL cost a flag
// test; the others a lookup in the expires index.
func (db *DB) ExpireAt(e *Entry) int64 {
	if e.flags&expireFlag == 0 {
		return 0
	}
	n := entryNode(e)
	return db.expireOf(hashString(n.key()), &n.dictEntry)
}

// expireEntryOf is the expires index's entry of the main-dict entry de
// (hash h), nil for none.
func (db *DB) expireEntryOf(h uint64, de *dictEntry) *dictEntry {
	return db.expires.findNode(h, (*keyNode)(unsafe.Pointer(de)))
}

// expireOf is the expire time of the main-dict entry de (hash h), 0 for
// none.
func (db *DB) expireOf(h uint64, de *dictEntry) int64 {
	if x := db.expireEntryOf(h, de); x != nil {
		return expEnt(x).at
	}
	return 0
}

// expired is keyIsExpired for the main-dict entry de (hash h), whose Entry
// is e: a key expires once now is past its expire time.
func (db *DB) expired(h uint64, de *dictEntry, e *Entry, now int64) bool {
	return e.flags&expireFlag != 0 && now > db.expireOf(h, de)
}

// expiredNoHash is expired for a caller without the key's hash.
func (db *DB) expiredNoHash(de *dictEntry, e *Entry, now int64) bool {
	return e.flags&expireFlag != 0 && now > db.expireOf(hashString(nodeKey(de)), de)
}

// DB is one numbered database (Redis's redisDb): the keys, the index of the
// keys that have a TTL (db->expires, the same *Entry) and the state of
// active expiry and the avg_ttl estimate.
//
// Callers hold the server's execution lock; a DB has no locks of its own.
type DB struct {
	dict    Dict // every key
	expires Dict // the keys with an expire time, and the time (expireEntry)

	id            int
	ks            *Keyspace
	scan          *dbScan // the running snapshot's walk of these contents (moves with them on Swap)
	avgTTL        int64   // db->avg_ttl, the running estimate of activeExpireCycle
	used          uint64  // sum of the entries' acct (evict.go)
	expiresCursor uint64  // db->expires_cursor
}

// ID is the database's index in its Keyspace.
func (db *DB) ID() int { return db.id }

// Keyspace returns the keyspace the database belongs to.
func (db *DB) Keyspace() *Keyspace { return db.ks }

// expire deletes the expired entry de (hash h) and reports it, as
// deleteExpiredKeyAndPropagate: the key is removed, expired_keys counted and
// OnExpire called.
func (db *DB) expire(h uint64, de *dictEntry) {
	key, v := nodeKey(de), nodeEntry(de).value()
	db.remove(h, de)
	db.ks.Stats.ExpiredKeys++
	if db.ks.OnExpire != nil {
		db.ks.OnExpire(db.id, key, v)
	}
}

// remove unlinks the main-dict entry de (hash h) and its expires entry.
func (db *DB) remove(h uint64, de *dictEntry) {
	e := nodeEntry(de)
	db.preWrite(nodeKey(de), e)
	if e.flags&expireFlag != 0 {
		if x := db.expireEntryOf(h, de); x != nil {
			db.expires.remove(h, x)
		}
		e.flags &^= expireFlag
	}
	db.unaccount(e)
	db.dict.remove(h, de)
}

// find looks key up, applying lazy expiry like expireIfNeeded: an expired
// key is deleted (or, in Replica mode, only hidden) and nil returned.
func (db *DB) find(h uint64, key []byte, now int64) *dictEntry {
	de := db.dict.findB(h, key)
	if de == nil {
		return nil
	}
	if db.expired(h, de, nodeEntry(de), now) && !db.ks.MasterCommand { // repl: see Keyspace.MasterCommand
		if !db.ks.Replica || db.ks.ForceExpire {
			db.expire(h, de)
		}
		return nil
	}
	return de
}

// touch is lookupKey's access-time update (updateLFU under LFU).
func (db *DB) touch(e *Entry, now int64) {
	if l := &db.ks.LFU; l.Enabled {
		e.Freq = LFULogIncr(e.LFUDecay(now, l.DecayTime), l.LogFactor, db.ks.lfuRand())
		e.flags |= lfuFlag
	} else {
		e.flags &^= lfuFlag
	}
	e.lastAccess = accessSecs(now)
}

// Lookup is db.c's lookupKey: the key's entry, or nil if it is missing or
// expired at now. An expired key is deleted and reported (lazy expiry: it
// counts in Stats.ExpiredKeys and calls OnExpire); in Replica mode it is
// only hidden. A found key's access time (and LFU counter) is updated.
// It does not allocate.
func (db *DB) Lookup(key []byte, now int64) *Entry {
	de := db.find(hashBytes(key), key, now)
	if de == nil {
		return nil
	}
	db.touch(nodeEntry(de), now)
	return nodeEntry(de)
}

// LookupNoTouch is Lookup with LOOKUP_NOTOUCH: expiry applies, but the
// access time and LFU counter are left alone.
func (db *DB) LookupNoTouch(key []byte, now int64) *Entry {
	if de := db.find(hashBytes(key), key, now); de != nil {
		return nodeEntry(de)
	}
	return nil
}

// Peek returns key's entry whether or not it is logically expired, without
// deleting or touching anything: for the master's stream on a replica
// (which sees keys the replica's clock considers expired, as Redis 7.0),
// DEBUG-style inspection and snapshots.
func (db *DB) Peek(key []byte) *Entry {
	if de := db.dict.findB(hashBytes(key), key); de != nil {
		return nodeEntry(de)
	}
	return nil
}

// Set is setKey without KEEPTTL: it stores val under key, inserting the key
// or replacing its value, and clears any TTL. It returns the entry. A new
// key gets LastAccess = now and Freq = LFUInitVal; an existing one keeps
// its Entry, with LastAccess = now unless LFU is enabled (then, as
// dbSetValue, the old LFU data is kept). It does not look at expiry: like
// Redis, callers do lookupKeyWrite (Lookup) first. val is handed over: the
// caller must not modify it afterwards except through DB.Mutable.
func (db *DB) Set(key []byte, val Value, now int64) *Entry {
	return db.set(key, val, now, false)
}

// SetKeepTTL is Set with KEEPTTL: an existing key keeps its TTL, unless it
// is already expired at now (then the TTL is cleared, as for a new key).
// In Replica mode the TTL is kept even then, since the master decides when
// the key expires.
func (db *DB) SetKeepTTL(key []byte, val Value, now int64) *Entry {
	return db.set(key, val, now, true)
}

// strNode is a key node made with its string value (SetString, SetNew,
// LoadAdd): the keyNode, then room A (a byte array) holding the key's bytes
// and, from the next 4-byte boundary, the String header and the value's
// bytes (an inline String), all in one allocation.
type strNode[A any] struct {
	keyNode
	room A
}

func newStrNode[A any]() (*keyNode, []byte) {
	n := new(strNode[A])
	return &n.keyNode, unsafe.Slice((*byte)(unsafe.Pointer(&n.room)), unsafe.Sizeof(n.room))
}

// newStringNode returns a node whose room after the keyNode is at least
// size bytes, or nil and no room when size is too large to be worth keeping
// in the node (the bytes stay allocated as long as the node: a replaced
// value's bytes are not freed before the key). The rooms fill the node up
// to Go's size classes (runtime/sizeclasses.go), so no allocation has slack
// the bytes could have used.
func newStringNode(size int) (*keyNode, []byte) {
	switch {
	case size <= int(48-keyNodeSize):
		return newStrNode[[48 - keyNodeSize]byte]()
	case size <= int(64-keyNodeSize):
		return newStrNode[[64 - keyNodeSize]byte]()
	case size <= int(80-keyNodeSize):
		return newStrNode[[80 - keyNodeSize]byte]()
	case size <= int(96-keyNodeSize):
		return newStrNode[[96 - keyNodeSize]byte]()
	case size <= int(112-keyNodeSize):
		return newStrNode[[112 - keyNodeSize]byte]()
	case size <= int(128-keyNodeSize):
		return newStrNode[[128 - keyNodeSize]byte]()
	case size <= int(144-keyNodeSize):
		return newStrNode[[144 - keyNodeSize]byte]()
	case size <= int(160-keyNodeSize):
		return newStrNode[[160 - keyNodeSize]byte]()
	case size <= int(176-keyNodeSize):
		return newStrNode[[176 - keyNodeSize]byte]()
	case size <= int(192-keyNodeSize):
		return newStrNode[[192 - keyNodeSize]byte]()
	case size <= int(208-keyNodeSize):
		return newStrNode[[208 - keyNodeSize]byte]()
	case size <= int(224-keyNodeSize):
		return newStrNode[[224 - keyNodeSize]byte]()
	case size <= int(240-keyNodeSize):
		return newStrNode[[240 - keyNodeSize]byte]()
	case size <= int(256-keyNodeSize):
		return newStrNode[[256 - keyNodeSize]byte]()
	}
	return nil, nil
}

// strOffset is where a strNode's String header starts in its room, after a
// key of k bytes.
func strOffset(k int) int { return (k + 3) &^ 3 }

// SetString is Set (SetKeepTTL when keepTTL) of a string holding a copy of
// val, created as kind. A new key gets its node, Entry, key bytes, String
// header and value bytes in one allocation when they fit in 256 bytes (the
// node's size class): one allocation per key instead of four, and no
// per-object slack, for the commonest write (SET, MSET, SETNX... of a new
// key). A `key:N` = `value:N` key is one 64-byte object, where Redis's
// dictEntry, key sds and embstr robj (72 bytes) are three.
func (db *DB) SetString(key, val []byte, kind StringKind, now int64, keepTTL bool) *Entry {
	h := hashBytes(key)
	if de := db.dict.findB(h, key); de != nil {
		return db.setExisting(h, de, newStringCopy(val, kind), now, keepTTL)
	}
	if n, str := newInlineStringNode(key, val, kind); n != nil {
		return db.insertNode(h, n, str, now)
	}
	return db.insertNode(h, newKeyStrNode(string(key)), NewString(append(make([]byte, 0, len(val)), val...), kind), now)
}

// newInlineStringNode returns a node holding key and an inline string
// value, a copy of val created as kind, and that value; nil when they do
// not fit in one (or key is empty or longer than 255 bytes: Entry.klen).
func newInlineStringNode(key, val []byte, kind StringKind) (*keyNode, *String) {
	if len(key) == 0 || len(key) > math.MaxUint8 {
		return nil, nil
	}
	off := strOffset(len(key))
	// An empty value keeps a byte of room after the header: its bytes'
	// address (String.data) must be inside the node, not the address of
	// the next object, which the collector would take it for.
	n, room := newStringNode(off + int(strHdrSize) + max(len(val), 1))
	if n == nil {
		return nil, nil
	}
	copy(room, key)
	n.ent.klen = uint8(len(key))
	str := (*String)(unsafe.Pointer(&room[off]))
	copy(room[off+int(strHdrSize):], val)
	// No spare capacity, as Redis's embstr: appends reallocate.
	*str = String{n: uint32(len(val)), ck: uint32(kind)<<kindShift | inlineFlag}
	return n, str
}

// OverwriteString stores a copy of val, created as kind, as the value of
// e, the entry of key, which must hold a string that no running snapshot
// needs (InPlace): at the same length the bytes are overwritten in place
// (no allocation: the SET and INCR of an existing key), else the value is
// replaced by a new string. The caller handles the TTL and ArgvExec.
func (db *DB) OverwriteString(key []byte, e *Entry, val []byte, kind StringKind) {
	if e.flags&acctDirtyFlag == 0 {
		db.markDirtyKey(key, e)
	}
	s := (*String)(e.ptr())
	if b := s.Bytes(); len(b) == len(val) {
		copy(b, val)
		s.SetKind(kind)
		return
	}
	e.setVal(newStringCopy(val, kind))
}

func (db *DB) set(key []byte, val Value, now int64, keepTTL bool) *Entry {
	h := hashBytes(key)
	if de := db.dict.findB(h, key); de != nil {
		return db.setExisting(h, de, val, now, keepTTL)
	}
	return db.insertNode(h, newKeyStrNode(string(key)), val, now)
}

// insertNode links n, whose key (hash h) is new, with value val.
func (db *DB) insertNode(h uint64, n *keyNode, val Value, now int64) *Entry {
	if !db.dict.nodes {
		panic("keyspace: a DB not made by NewDB or New")
	}
	n.ent = Entry{lastAccess: accessSecs(now), Freq: LFUInitVal, snapEpoch: db.ks.snapEpoch, klen: n.ent.klen}
	if db.ks.LFU.Enabled { // createObject's lru
		n.ent.flags |= lfuFlag
	}
	n.ent.setVal(val)
	db.dict.insert(h, &n.dictEntry)
	db.markDirty(&n.dictEntry)
	return &n.ent
}

// setExisting is set for the existing key of entry de (hash h).
func (db *DB) setExisting(h uint64, de *dictEntry, val Value, now int64, keepTTL bool) *Entry {
	e := nodeEntry(de)
	db.preWrite(nodeKey(de), e)
	var old Value
	oldp := e.ptr()
	if db.ks.OnServerDel != nil && e.vt != vtString { // dbOverwrite's freeObjAsync
		old = e.value()
	}
	e.setVal(val)
	if old != nil && e.ptr() != oldp {
		db.ks.OnServerDel(old)
	}
	e.flags &^= snapSharedFlag
	e.flags &^= argvExecFlag
	if e.flags&expireFlag != 0 && (!keepTTL || (db.expired(h, de, e, now) && !db.ks.Replica)) {
		db.persist(h, de)
	}
	if !db.ks.LFU.Enabled { // dbOverwrite keeps the old lru under LFU
		e.lastAccess = accessSecs(now)
		e.flags &^= lfuFlag
	}
	db.markDirty(de)
	return e
}

// Mutable prepares e, the entry of key, for a change of its value in place
// (APPEND, SETBIT, BITFIELD, an INCR or SET that reuses the buffer; later
// LPUSH, HSET, ...) and returns the value to change. Outside a snapshot it
// is e's value itself. While a snapshot runs that has not emitted e yet or
// holds its value, the value is first duplicated (Value.Dup: a string's
// kind may change, so writers set it after changing the bytes): the
// snapshot keeps the original, the entry gets the copy. It does not
// allocate unless it copies, or gives an inline string a header of its own
// (16 bytes, once: see mutableValue). For a same-length overwrite of a
// string, OverwriteString does neither.
func (db *DB) Mutable(key []byte, e *Entry) Value {
	if e.flags&acctDirtyFlag == 0 {
		db.markDirtyKey(key, e)
	}
	s := db.ks.snap
	if s == nil {
		return e.mutableValue()
	}
	if e.snapEpoch != s.epoch {
		db.save(s, string(key), e)
	}
	if e.flags&snapSharedFlag != 0 {
		e.setVal(e.Value().Dup())
		e.flags &^= snapSharedFlag
		s.stats.Copied++
		s.stats.CopiedBytes += e.Value().Size(0)
	}
	return e.mutableValue()
}

// mutableValue is Mutable's result once e's value is its own: an inline
// string gets a header of its own with a pointer to the same bytes
// (String.external), so that the writer may hand it a new array (as
// dbUnshareStringValue turns an embstr into a raw string).
func (e *Entry) mutableValue() Value {
	if e.vt == vtString {
		if s := (*String)(e.ptr()); s.inline() {
			e.vp = unsafe.Pointer(s.external())
			e.flags &^= inNodeFlag
		}
	}
	return e.Value()
}

// InPlace reports whether Mutable would return e's value without copying
// it: no running snapshot needs it. Writers that replace the whole value
// anyway use it to choose between reusing the value and DB.Set.
func (db *DB) InPlace(e *Entry) bool {
	s := db.ks.snap
	return s == nil || (e.snapEpoch == s.epoch && e.flags&snapSharedFlag == 0)
}

// preWrite is called before a write changes or removes e, the entry of
// key: if the running snapshot still owes e, e's current state is saved
// for it (the value shared, not copied: a write that replaces the value
// leaves the old one alone, and one that changes it in place goes through
// Mutable, which copies).
func (db *DB) preWrite(key string, e *Entry) {
	if s := db.ks.snap; s != nil && e.snapEpoch != s.epoch {
		db.save(s, key, e)
	}
}

// Delete removes key whether or not it is logically expired (dbDelete) and
// reports whether it existed. It is not counted as an expiry. The value
// goes to OnServerDel (a delete the server does on its own).
func (db *DB) Delete(key []byte) bool {
	h := hashBytes(key)
	de := db.dict.findB(h, key)
	if de == nil {
		return false
	}
	db.removeServerDel(h, de)
	return true
}

// SyncDelete is Delete without OnServerDel (dbSyncDelete): for DEL and
// UNLINK, GETDEL, a TTL set in the past and loading, which free the value
// as their own options say.
func (db *DB) SyncDelete(key []byte) bool {
	h := hashBytes(key)
	de := db.dict.findB(h, key)
	if de == nil {
		return false
	}
	db.remove(h, de)
	return true
}

// removeServerDel is remove, handing the value to OnServerDel.
func (db *DB) removeServerDel(h uint64, de *dictEntry) {
	e := nodeEntry(de)
	if db.ks.OnServerDel == nil || e.vt == vtString {
		db.remove(h, de)
		return
	}
	v := e.value()
	db.remove(h, de)
	db.ks.OnServerDel(v)
}

// SetExpire is setExpire: key expires at at (unix ms). It returns false if
// key does not exist (expiry is not checked: callers look the key up
// first). at <= 0 is stored as 1, a time that is always past, since 0 means
// "no TTL".
func (db *DB) SetExpire(key []byte, at int64) bool {
	h := hashBytes(key)
	de := db.dict.findB(h, key)
	if de == nil {
		return false
	}
	if at < 1 {
		at = 1
	}
	e := nodeEntry(de)
	db.preWrite(nodeKey(de), e)
	if e.flags&expireFlag != 0 {
		if x := db.expireEntryOf(h, de); x != nil {
			expEnt(x).at = at
			return true
		}
	}
	db.expires.insert(h, &(&expireEntry{node: (*keyNode)(unsafe.Pointer(de)), at: at}).dictEntry)
	e.flags |= expireFlag
	return true
}

// Persist is removeExpire: it removes key's TTL and reports whether it had
// one (false also if key is missing).
func (db *DB) Persist(key []byte) bool {
	h := hashBytes(key)
	de := db.dict.findB(h, key)
	if de == nil || nodeEntry(de).flags&expireFlag == 0 {
		return false
	}
	db.persist(h, de)
	return true
}

func (db *DB) persist(h uint64, de *dictEntry) {
	db.preWrite(nodeKey(de), nodeEntry(de))
	if x := db.expireEntryOf(h, de); x != nil {
		db.expires.remove(h, x)
	}
	nodeEntry(de).flags &^= expireFlag
}

// Len is the number of keys, logically expired ones included (DBSIZE).
func (db *DB) Len() int { return db.dict.Len() }

// ExpiresLen is the number of keys with a TTL (INFO keyspace expires=).
func (db *DB) ExpiresLen() int { return db.expires.Len() }

// Slots is dictSlots of the key table: the buckets of both hash tables
// while rehashing (MEMORY STATS overhead.hashtable.main).
func (db *DB) Slots() int { return db.dict.Buckets() }

// ExpiresSlots is dictSlots of the TTL table.
func (db *DB) ExpiresSlots() int { return db.expires.Buckets() }

// AvgTTL is INFO keyspace's avg_ttl in milliseconds: Redis's running
// estimate over the TTLs sampled by ActiveExpireCycle, 0 until a cycle has
// sampled this database (or when it has no TTLs).
func (db *DB) AvgTTL() int64 { return db.avgTTL }

// Flush empties the database (emptyDb), resetting avg_ttl and the active
// expiry cursor. Nothing is reported to OnExpire.
//
// A running snapshot that has not finished walking the database keeps the
// old table to finish the walk on (nothing else reaches it any more), so
// flushing costs it nothing.
func (db *DB) Flush() {
	db.ks.Settle()
	db.used = 0
	db.detachScan()
	db.dict.Clear()
	db.expires.Clear()
	db.avgTTL = 0
	db.expiresCursor = 0
}

// Rehash does up to budgetMicros of incremental rehashing on the keys and
// expires tables, as serverCron's incrementallyRehash with
// dictRehashMilliseconds (elapsed reports microseconds since the caller's
// start). It reports whether any work was done.
func (db *DB) Rehash(budgetMicros int64, elapsed func() int64) bool {
	if db.dict.IsRehashing() {
		db.dict.RehashFor(budgetMicros, elapsed)
		return true
	}
	if db.expires.IsRehashing() {
		db.expires.RehashFor(budgetMicros, elapsed)
		return true
	}
	return false
}

// ResizeIfNeeded is tryResizeHashTables for this database: it starts a
// shrink of the keys or expires table if it is less than 10% full.
func (db *DB) ResizeIfNeeded() {
	if db.dict.NeedsShrink() {
		db.dict.Shrink()
	}
	if db.expires.NeedsShrink() {
		db.expires.Shrink()
	}
}

// Scan is one SCAN call (scanGenericCommand over dictScan): starting at
// cursor it visits buckets until it has collected at least count keys (or
// 10*count buckets, or the scan ends), then calls fn for each collected key
// that is not expired at now, deleting the expired ones as lazy expiry. It
// returns the next cursor, 0 when done. count <= 0 means 10.
//
// Every key present for the whole of a full scan is returned at least once;
// keys may be returned more than once (Dict.Scan). fn runs after the
// buckets were collected, so it may modify the database freely. Unlike
// Redis, expired keys are deleted before MATCH/TYPE filtering, which
// happens in fn.
func (db *DB) Scan(cursor uint64, count int, now int64, fn func(key string, e *Entry)) uint64 {
	if count <= 0 {
		count = 10
	}
	var small [32]*dictEntry
	buf := small[:0]
	collect := func(de *dictEntry) { buf = append(buf, de) }
	for maxIter := count * 10; ; maxIter-- {
		cursor = db.dict.scan(cursor, collect)
		if cursor == 0 || maxIter == 0 || len(buf) >= count {
			break
		}
	}
	for _, de := range buf {
		e := nodeEntry(de)
		if e == nil {
			continue // deleted by fn or an earlier expiry
		}
		if e.flags&expireFlag != 0 {
			if h := hashString(nodeKey(de)); db.expired(h, de, e, now) {
				if !db.ks.Replica {
					db.expire(h, de)
				}
				continue
			}
		}
		fn(nodeKey(de), e)
	}
	return cursor
}

// RandomKey is dbRandomKey: a random live key (dictGetFairRandomKey), false
// if the database is empty. Expired keys drawn are deleted and reported and
// another is drawn. In Replica mode they are not deleted, so when every key
// has a TTL it gives up after 100 draws and returns a possibly expired key,
// as Redis does.
func (db *DB) RandomKey(now int64, rng *rand.Rand) (string, bool) {
	allVolatile := db.dict.Len() == db.expires.Len()
	for tries := 100; ; {
		de := db.dict.fairRandomEntry(rng)
		if de == nil {
			return "", false
		}
		e := nodeEntry(de)
		if e.flags&expireFlag == 0 {
			return nodeKey(de), true
		}
		if db.ks.Replica && allVolatile {
			tries--
			if tries == 0 {
				return nodeKey(de), true
			}
		}
		h := hashString(nodeKey(de))
		if !db.expired(h, de, e, now) {
			return nodeKey(de), true
		}
		if !db.ks.Replica {
			db.expire(h, de)
		}
	}
}

// Keys is keysCommand: it calls fn for every key matching the glob pattern
// (GlobMatch, case-sensitive) and not expired at now. Expired keys are
// skipped, not deleted. fn may delete keys but must not insert.
func (db *DB) Keys(pattern []byte, now int64, fn func(key string)) {
	all := len(pattern) == 1 && pattern[0] == '*'
	db.dict.rangeEntries(func(de *dictEntry) bool {
		if (all || GlobMatchString(pattern, nodeKey(de), false)) && !db.expiredNoHash(de, nodeEntry(de), now) {
			fn(nodeKey(de))
		}
		return true
	})
}

// Rename is the core of renameGenericCommand: src's entry (value, TTL,
// LastAccess, Freq: the object itself) moves to dst, replacing dst if it
// exists (in a new node when src's held its key's bytes: renamedNode). It returns false if src is missing or expired at now (an expired
// src is deleted and reported, as Lookup). src == dst succeeds and changes
// nothing.
func (db *DB) Rename(src, dst []byte, now int64) bool {
	hs := hashBytes(src)
	de := db.find(hs, src, now)
	if de == nil {
		return false
	}
	if string(src) == string(dst) {
		return true
	}
	db.ks.Settle()
	hd := hashBytes(dst)
	if old := db.dict.findB(hd, dst); old != nil {
		db.removeServerDel(hd, old)
	}
	e := nodeEntry(de)
	db.preWrite(nodeKey(de), e) // src as it was; dst is a key the snapshot never saw
	var x *dictEntry
	if e.flags&expireFlag != 0 {
		x = db.expireEntryOf(hs, de)
		at := expEnt(x).at
		db.expires.remove(hs, x)
		expEnt(x).at = at // remove marked it removed; it is reinserted below
	}
	db.dict.remove(hs, de)
	n := db.renamedNode((*keyNode)(unsafe.Pointer(de)), string(dst))
	db.dict.insert(hd, &n.dictEntry)
	db.used -= uint64(e.acct)
	e = &n.ent
	e.acct = acctBytes(entryBytes(n.key(), e))
	db.used += uint64(e.acct)
	if x != nil {
		expEnt(x).node = n
		db.expires.insert(hd, x)
	}
	return true
}

// renamedNode is Rename's node for the key dst of the unlinked node n: n
// itself with its key replaced (pointers to its Entry stay valid) when it
// is a keyStrNode; else (its key's bytes are in it) a new node with a copy
// of n's Entry (the same object: value, flags, LastAccess, Freq), the
// value copied into it too when it was n's inline string.
func (db *DB) renamedNode(n *keyNode, dst string) *keyNode {
	if n.ent.klen == 0 {
		(*keyStrNode)(unsafe.Pointer(n)).key = dst
		return n
	}
	var nn *keyNode
	if n.ent.flags&inNodeFlag != 0 {
		s := (*String)(n.ent.ptr())
		if m, str := newInlineStringNode([]byte(dst), s.Bytes(), s.Kind()); m != nil {
			nn = m
			nn.ent = n.ent
			nn.ent.klen = uint8(len(dst))
			nn.ent.setVal(str)
		}
	}
	if nn == nil {
		nn = newKeyStrNode(dst)
		nn.ent = n.ent
		nn.ent.vp = n.ent.ptr() // n's inline string stays where it is
		nn.ent.flags &^= inNodeFlag
		nn.ent.klen = 0
	}
	if nn.ent.flags&argvExecFlag != 0 {
		db.ks.argvExec = append(db.ks.argvExec, &nn.ent)
	}
	return nn
}

// Move is the core of moveCommand: key's entry (value, TTL, LastAccess,
// Freq, ArgvExec: the object itself) moves to the same key in dst,
// replacing whatever dst holds there (callers check first that it is
// missing, as MOVE does). It returns false if key is missing or expired at
// now here (an expired key is deleted and reported, as Lookup). Moving to
// the same database changes nothing.
func (db *DB) Move(key []byte, dst *DB, now int64) bool {
	h := hashBytes(key)
	de := db.find(h, key, now)
	if de == nil {
		return false
	}
	if dst == db {
		return true
	}
	db.ks.Settle()
	if old := dst.dict.findB(h, key); old != nil {
		dst.removeServerDel(h, old)
	}
	e := nodeEntry(de)
	db.preWrite(nodeKey(de), e)
	var x *dictEntry
	if e.flags&expireFlag != 0 {
		x = db.expireEntryOf(h, de)
		at := expEnt(x).at
		db.expires.remove(h, x)
		expEnt(x).at = at // remove marked it removed; it is reinserted below
	}
	db.dict.remove(h, de)
	// insert clears the mark remove left
	dst.dict.insert(h, de)
	db.used -= uint64(e.acct)
	dst.used += uint64(e.acct)
	if x != nil {
		dst.expires.insert(h, x)
	}
	return true
}

// ForEach calls fn for every key, logically expired ones included, until fn
// returns false (a safe iterator: fn may delete keys). For snapshots.
func (db *DB) ForEach(fn func(key string, e *Entry) bool) {
	db.dict.Range(fn)
}

// ForEachVolatile calls fn for every key with a TTL, with its expire time,
// until fn returns false. fn must not modify the database.
func (db *DB) ForEachVolatile(fn func(key string, e *Entry, expireAt int64) bool) {
	db.expires.rangeEntries(func(x *dictEntry) bool {
		var e *Entry
		key := expEnt(x).node.key()
		if de := db.dict.findS(hashString(key), key); de != nil {
			e = nodeEntry(de)
		}
		return fn(key, e, expEnt(x).at)
	})
}
