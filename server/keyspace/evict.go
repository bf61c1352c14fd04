package keyspace

import (
	"math"
	"math/rand/v2"
)

// # Memory accounting
//
// Redis decides on eviction from zmalloc's counter of allocated bytes. Go's
// heap is not that figure (garbage, the runtime, buffers), so the keyspace
// keeps its own: every key counts for entryBytes (its key sds, dictEntry
// and Value.Size with MEMORY USAGE's default of 5 samples, the bytes Redis
// 7.0 would allocate), summed per database in DB.used, plus the hash
// tables' slots and the TTL index (Keyspace.Memory).
//
// The sum is maintained incrementally. A write that creates or replaces a
// value (DB.Set) or changes one in place (DB.Mutable) queues the entry;
// Keyspace.Settle (which the server calls after every command) measures
// the queued entries again and adjusts the sums. Removals subtract at once.
// The queue is settled before anything that moves entries between sums
// (Flush, Swap, Move, Rename), so an entry is always counted in the
// database that holds it.

// accountSamples is the samples argument entries are measured with
// (MEMORY USAGE's default).
const accountSamples = 5

// acctQueueMax bounds the queue between settles (bulk loads that run no
// command): past it the queue is settled before another entry joins.
const acctQueueMax = 4096

type acctRef struct {
	db *DB
	de *dictEntry
}

// entryBytes is what a key counts for: MEMORY USAGE's figure.
func entryBytes(key string, e *Entry) uint64 {
	return e.Value().Size(accountSamples) + SdsNewSize(uint64(len(key))) + DictEntrySize
}

// acctBytes is n as stored in Entry.acct: 32 bits keep the Entry small, so
// a value of more than 4 GiB counts for 4 GiB (added and subtracted alike,
// so the sums stay consistent).
func acctBytes(n uint64) uint32 { return uint32(min(n, math.MaxUint32)) }

func (db *DB) markDirty(de *dictEntry) {
	e := nodeEntry(de)
	if e.flags&acctDirtyFlag != 0 {
		return
	}
	ks := db.ks
	if len(ks.acctQueue) >= acctQueueMax {
		ks.Settle()
	}
	e.flags |= acctDirtyFlag
	ks.acctQueue = append(ks.acctQueue, acctRef{db, de})
}

// markDirtyKey queues e (the entry of key) for Mutable.
func (db *DB) markDirtyKey(key []byte, e *Entry) {
	if de := db.dict.findB(hashBytes(key), key); de != nil && nodeEntry(de) == e {
		db.markDirty(de)
	}
}

// unaccount subtracts a removed entry.
func (db *DB) unaccount(e *Entry) {
	db.used -= uint64(e.acct)
	e.acct = 0
	e.flags &^= acctDirtyFlag
}

// Settle measures the entries written since the last call again and
// updates the memory sums (see "Memory accounting"). It costs one length
// check when nothing was written.
func (ks *Keyspace) Settle() {
	if len(ks.acctQueue) == 0 {
		return
	}
	q := ks.acctQueue
	ks.acctQueue = nil // re-entrancy: markDirty from here appends to a new queue
	for _, r := range q {
		e := nodeEntry(r.de)
		if e == nil || e.flags&acctDirtyFlag == 0 {
			continue // removed since
		}
		e.flags &^= acctDirtyFlag
		n := acctBytes(entryBytes(nodeKey(r.de), e))
		r.db.used += uint64(n) - uint64(e.acct)
		e.acct = n
	}
	clear(q)
	if ks.acctQueue == nil {
		ks.acctQueue = q[:0]
	}
}

// Memory is the bytes the databases account for, settled: every key
// (entryBytes), the key and TTL tables' slots and the TTL entries. It is
// O(databases).
func (ks *Keyspace) Memory() uint64 {
	ks.Settle()
	var n uint64
	for _, db := range ks.DBs {
		n += db.Memory()
	}
	return n
}

// Memory is Keyspace.Memory for one database (without settling).
func (db *DB) Memory() uint64 {
	if db.dict.Len() == 0 && db.expires.Len() == 0 {
		return db.used
	}
	return db.used + DictEntryPtrSize*uint64(db.dict.Buckets()+db.expires.Buckets()) +
		DictEntrySize*uint64(db.expires.Len())
}

// # Eviction (evict.c)

// Policy is maxmemory-policy.
type Policy uint8

// The maxmemory policies.
const (
	NoEviction Policy = iota
	VolatileLRU
	VolatileLFU
	VolatileRandom
	VolatileTTL
	AllKeysLRU
	AllKeysLFU
	AllKeysRandom
)

var policyNames = [...]string{"noeviction", "volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl", "allkeys-lru", "allkeys-lfu", "allkeys-random"}

func (p Policy) String() string {
	if int(p) < len(policyNames) {
		return policyNames[p]
	}
	return "unknown"
}

// ParsePolicy maps a maxmemory-policy name to its Policy.
func ParsePolicy(name string) (Policy, bool) {
	for i, n := range policyNames {
		if n == name {
			return Policy(i), true
		}
	}
	return NoEviction, false
}

// AllKeys reports whether the policy picks among all keys (else among the
// keys with a TTL).
func (p Policy) AllKeys() bool { return p >= AllKeysLRU }

// LFU reports whether the policy is an LFU one (MAXMEMORY_FLAG_LFU).
func (p Policy) LFU() bool { return p == VolatileLFU || p == AllKeysLFU }

// LRU reports whether the policy is an LRU one (MAXMEMORY_FLAG_LRU).
func (p Policy) LRU() bool { return p == VolatileLRU || p == AllKeysLRU }

func (p Policy) random() bool { return p == VolatileRandom || p == AllKeysRandom }

// EvPoolSize is EVPOOL_SIZE.
const EvPoolSize = 16

// poolEntry is evictionPoolEntry: a candidate, its score and database.
type poolEntry struct {
	idle uint64 // higher: better candidate
	key  string
	db   int
	used bool
}

// Evictor is the state evict.c keeps across calls: the eviction pool of
// the LRU, LFU and TTL policies and next_db of the random ones, with the
// settings that drive the choice. The zero value with Policy set works
// (Samples 0 means 5).
type Evictor struct {
	Policy    Policy
	Samples   int // maxmemory-samples
	DecayTime int // lfu-decay-time, for the LFU score

	pool   [EvPoolSize]poolEntry
	nextDB int
}

// Reset empties the pool (a policy change makes the scores meaningless).
func (ev *Evictor) Reset() {
	ev.pool = [EvPoolSize]poolEntry{}
}

// score is the idle value of evictionPoolPopulate: the higher, the better
// to evict. now is unix ms; at is the key's expire time (only VolatileTTL
// reads it, and samples the keys that have one).
func (ev *Evictor) score(e *Entry, at, now int64) uint64 {
	switch ev.Policy {
	case VolatileLRU, AllKeysLRU:
		// estimateObjectIdleTime (with a millisecond clock).
		return uint64(e.IdleMs(now))
	case VolatileLFU, AllKeysLFU:
		return 255 - uint64(e.LFUDecay(now, ev.DecayTime))
	case VolatileTTL:
		// Sooner expire, better candidate.
		return math.MaxUint64 - uint64(at)
	}
	return 0
}

// populate is evictionPoolPopulate: sample up to Samples keys of d (the
// main dict or the expires of database dbid) and insert the ones that
// score better than the pool's worst, keeping the pool sorted by
// ascending score.
func (ev *Evictor) populate(dbid int, db *DB, d *Dict, now int64, rng *rand.Rand) {
	samples := ev.Samples
	if samples <= 0 {
		samples = 5
	}
	var small [16]*dictEntry
	buf := small[:]
	if samples > len(small) {
		buf = make([]*dictEntry, samples)
	}
	n := d.someEntries(rng, buf[:samples])
	for _, de := range buf[:n] {
		key := d.keyOf(de)
		var e *Entry
		var at int64
		if d.expires {
			// Sampled from the expires index: the key's Entry is in
			// the main dict (evictionPoolPopulate's dictFind).
			at = expEnt(de).at
			if m := db.dict.findS(hashString(key), key); m != nil {
				e = nodeEntry(m)
			}
			if e == nil {
				continue
			}
		} else {
			e = nodeEntry(de)
		}
		ev.insert(dbid, key, ev.score(e, at, now))
	}
}

// insert puts key (database dbid, score idle) in the pool if it scores
// better than the worst of a full pool.
func (ev *Evictor) insert(dbid int, key string, idle uint64) {
	pool := &ev.pool
	k := 0
	for k < EvPoolSize && pool[k].used && pool[k].idle < idle {
		k++
	}
	switch {
	case k == 0 && pool[EvPoolSize-1].used:
		return // worse than every candidate of a full pool
	case k < EvPoolSize && !pool[k].used:
		// an empty slot: insert here
	default:
		if !pool[EvPoolSize-1].used {
			// room on the right: shift k.. right
			copy(pool[k+1:], pool[k:EvPoolSize-1])
		} else {
			// full: drop the worst (leftmost), insert at k-1
			k--
			copy(pool[:k], pool[1:k+1])
		}
	}
	pool[k] = poolEntry{idle: idle, key: key, db: dbid, used: true}
}

// Victim is the key-selection half of performEvictions: the key the
// policy evicts next, with its database; ok is false when no key can be
// evicted (noeviction, no keys, or a volatile policy and no key with a
// TTL). It does not delete the key. now (unix ms) scores LRU idle time
// and LFU decay; rng drives the sampling.
func (ks *Keyspace) Victim(ev *Evictor, now int64, rng *rand.Rand) (db int, key string, ok bool) {
	p := ev.Policy
	switch {
	case p == NoEviction:
		return 0, "", false
	case p.random():
		// A different database each time, so every one is drained
		// evenly (next_db).
		for range ks.DBs {
			ev.nextDB++
			j := ev.nextDB % len(ks.DBs)
			d := ks.DBs[j].sampleDict(p)
			if d.Len() == 0 {
				continue
			}
			k, _, found := d.RandomKey(rng)
			if found {
				return j, k, true
			}
		}
		return 0, "", false
	}
	for {
		total := 0
		for i, db := range ks.DBs {
			d := db.sampleDict(p)
			if n := d.Len(); n > 0 {
				ev.populate(i, db, d, now, rng)
				total += n
			}
		}
		if total == 0 {
			return 0, "", false
		}
		// The best candidate is on the right. Entries whose key is
		// gone (a ghost: deleted, or lost its TTL under a volatile
		// policy) are dropped and the next one tried.
		for k := EvPoolSize - 1; k >= 0; k-- {
			c := ev.pool[k]
			if !c.used {
				continue
			}
			ev.pool[k] = poolEntry{}
			if c.db < len(ks.DBs) && ks.DBs[c.db].sampleDict(p).findS(hashString(c.key), c.key) != nil {
				return c.db, c.key, true
			}
		}
	}
}

// sampleDict is the dict a policy samples: every key or the keys with a
// TTL.
func (db *DB) sampleDict(p Policy) *Dict {
	if p.AllKeys() {
		return &db.dict
	}
	return &db.expires
}

// Evict deletes key of database db for eviction: it is removed like
// DB.Delete (not counted as an expiry; the caller counts evicted_keys,
// notifies and propagates) and the bytes it accounted for are returned.
func (ks *Keyspace) Evict(db int, key string) (freed uint64, ok bool) {
	ks.Settle()
	d := ks.DBs[db]
	h := hashString(key)
	de := d.dict.findS(h, key)
	if de == nil {
		return 0, false
	}
	before := d.Memory()
	d.remove(h, de)
	after := d.Memory()
	if before > after {
		freed = before - after
	}
	return freed, true
}
