package keyspace

import "math/rand/v2"

// Stats are the expiry counters of INFO stats. The server may reset them
// by assigning Stats{} (CONFIG RESETSTAT).
type Stats struct {
	// ExpiredKeys is expired_keys: keys removed by lazy or active expiry.
	ExpiredKeys int64
	// ExpiredStalePerc is stat_expired_stale_perc, a fraction in [0,1]
	// (INFO prints expired_stale_perc as 100 times it, "%.2f"): the running
	// estimate of the share of sampled TTL keys found already expired.
	ExpiredStalePerc float64
	// ExpiredTimeCapReachedCount is expired_time_cap_reached_count.
	ExpiredTimeCapReachedCount int64
	// ExpireCycleMicros is stat_expire_cycle_time_used (INFO prints
	// expire_cycle_cpu_milliseconds as this / 1000).
	ExpireCycleMicros int64
}

// LFU configures access-frequency tracking, the *-lfu maxmemory policies of
// evict.c. When Enabled, every touching lookup decays and then
// logarithmically increments Entry.Freq.
type LFU struct {
	Enabled   bool
	LogFactor int        // lfu-log-factor (Redis default 10)
	DecayTime int        // lfu-decay-time in minutes (Redis default 1; 0 = never decay)
	Rand      *rand.Rand // randomness of LFULogIncr; nil means a fixed-seed generator
}

// Keyspace is the set of numbered databases of a server (server.db) plus
// the state expiry shares across them.
type Keyspace struct {
	// DBs are the databases, indexed by number. Do not reorder: use Swap.
	DBs []*DB
	// Stats are the expiry counters.
	Stats Stats
	// OnExpire, if set, is called after every key removed by lazy or active
	// expiry, with the database number, key and the value it held: the hook
	// for propagating DEL to replicas and the AOF, for "expired" keyspace
	// events and for lazyfree's count.
	OnExpire func(db int, key string, v Value)
	// OnServerDel, if set, is called with a value other than a string that
	// the keyspace drops as Redis's dbDelete and dbOverwrite do (which
	// free it with freeObjAsync under lazyfree-lazy-server-del): the value
	// of a key removed by DB.Delete, replaced by DB.Set, SetKeepTTL,
	// SetString or SetNew, or overwritten as the destination of DB.Rename or DB.Move.
	// DB.SyncDelete (dbSyncDelete), expiry and eviction do not call it.
	// A string is one allocation, never freed lazily: it is not reported.
	OnServerDel func(v Value)
	// Replica makes expiry behave as on a Redis 7.0 replica (or while
	// writes are paused): expired keys read as missing but are not
	// deleted (the master's DEL removes them), and ActiveExpireCycle does
	// nothing.
	Replica bool
	// MasterCommand is set while a replica executes a command of its
	// master's stream: lookups then never treat keys as expired
	// (expireIfNeeded returns 0 for the master client), so the replica
	// applies exactly what the master did; the master's DEL removes them.
	MasterCommand bool
	// ForceExpire is lookupKey's force_delete_expired: set while a client
	// other than the master runs a write command on a writable replica
	// (replica-read-only no), so its lookups delete an expired key (as
	// lookupKeyWrite does there) instead of only hiding it, and the
	// command recreates the key without the old TTL.
	ForceExpire bool
	// ActiveExpireEffort is active-expire-effort, 1..10; 0 means 1 (the
	// Redis default). See ActiveExpireCycle.
	ActiveExpireEffort int
	// LFU configures LFU counters.
	LFU LFU
	// ExpandAllowed, when set, is asked before a database's key or
	// expires table grows (dbDictType's expandAllowed, server.c's
	// dictExpandAllowed): moreMem is the new table's bytes, usedRatio the
	// elements per bucket. A false answer leaves the table as it is; the
	// next insert asks again.
	ExpandAllowed func(moreMem uint64, usedRatio float64) bool
	// Dirty is server.dirty: changes since the last save
	// (rdb_changes_since_last_save). Write commands add what Redis 7.0
	// adds (one per key set, deleted or given a TTL; FLUSHALL the keys it
	// removed); lazy and active expiry add nothing. CONFIG RESETSTAT
	// keeps it.
	Dirty int64
	// argvExec lists the entries MarkArgvExec marked since the last
	// BeginExec.
	argvExec []*Entry
	// Encodings are the thresholds of the compact encodings of
	// aggregates (hash-max-listpack-entries, ...), read when a value is
	// built or grows. New sets Redis 7.0's defaults.
	Encodings EncodingConfig

	// snap is the running snapshot, nil if none; snapEpoch counts the
	// snapshots begun (Entry.snapEpoch).
	snap      *Snapshot
	snapEpoch uint32

	// replicaExpires is expire.c's slaveKeysWithExpire: the keys a
	// client of a writable replica gave a TTL, each with a bitmap of the
	// databases (0..63) where it did. See ExpireReplicaKeys.
	replicaExpires map[string]uint64

	// activeExpireCycle's statics.
	currentDB     int
	timelimitExit bool
	rehashDB      int // databasesCron's rehash_db

	lfuDefaultRand *rand.Rand

	// acctQueue holds the entries written since the last Settle
	// (evict.go, "Memory accounting").
	acctQueue []acctRef
}

// New returns a keyspace of n empty databases (n < 1 means 1).
func New(databases int) *Keyspace {
	ks := &Keyspace{DBs: make([]*DB, max(databases, 1)), Encodings: DefaultEncodingConfig()}
	for i := range ks.DBs {
		ks.DBs[i] = &DB{dict: Dict{nodes: true, allowExpand: ks.expandAllowed}, expires: Dict{expires: true, allowExpand: ks.expandAllowed}, id: i, ks: ks}
	}
	return ks
}

// expandAllowed is the databases' dictType.expandAllowed: ExpandAllowed,
// or yes when it is not set.
func (ks *Keyspace) expandAllowed(moreMem uint64, usedRatio float64) bool {
	return ks.ExpandAllowed == nil || ks.ExpandAllowed(moreMem, usedRatio)
}

// Swap is SWAPDB: databases a and b exchange their contents (keys, TTLs,
// avg_ttl and expiry cursor). Each *DB keeps its number, so a client that
// selected database a now sees b's former keys. It panics on an index out
// of range; callers validate them.
func (ks *Keyspace) Swap(a, b int) {
	ks.Settle()
	x, y := ks.DBs[a], ks.DBs[b]
	x.used, y.used = y.used, x.used
	x.dict, y.dict = y.dict, x.dict
	x.expires, y.expires = y.expires, x.expires
	x.avgTTL, y.avgTTL = y.avgTTL, x.avgTTL
	x.expiresCursor, y.expiresCursor = y.expiresCursor, x.expiresCursor
	// A running snapshot's walk follows the contents, which keep the
	// database number they had when it began.
	x.scan, y.scan = y.scan, x.scan
	if x.scan != nil {
		x.scan.db = x
	}
	if y.scan != nil {
		y.scan.db = y
	}
}

// SwapWith is swapMainDbWithTempDb: each database of ks exchanges its
// contents with the same-numbered database of other (a keyspace made with
// New(len(ks.DBs)), filled by a swapdb replication load). Neither may
// have a running snapshot.
func (ks *Keyspace) SwapWith(other *Keyspace) {
	ks.FlushReplicaKeysWithExpire() // swapMainDbWithTempDb
	for i, x := range ks.DBs {
		y := other.DBs[i]
		x.dict, y.dict = y.dict, x.dict
		x.expires, y.expires = y.expires, x.expires
		x.avgTTL, y.avgTTL = y.avgTTL, x.avgTTL
		x.expiresCursor, y.expiresCursor = y.expiresCursor, x.expiresCursor
	}
}

// FlushAll empties every database.
func (ks *Keyspace) FlushAll() {
	for _, db := range ks.DBs {
		db.Flush()
	}
	ks.FlushReplicaKeysWithExpire()
}

// Len is the number of keys in all databases.
func (ks *Keyspace) Len() int {
	n := 0
	for _, db := range ks.DBs {
		n += db.Len()
	}
	return n
}

func (ks *Keyspace) lfuRand() *rand.Rand {
	if ks.LFU.Rand != nil {
		return ks.LFU.Rand
	}
	if ks.lfuDefaultRand == nil {
		ks.lfuDefaultRand = rand.New(rand.NewPCG(1, 2))
	}
	return ks.lfuDefaultRand
}

// ResizeAndRehash is the hash-table part of serverCron's databasesCron:
// it starts a shrink of every database's tables that are less than 10%
// full (tryResizeHashTables), then spends up to budgetMicros (Redis: 1000)
// rehashing the first database, in turn, that has a rehash in progress
// (incrementallyRehash with activerehashing). Lookups and writes rehash
// incrementally anyway; this keeps idle databases from holding two tables.
//
// With budgetMicros <= 0 (activerehashing no) it only starts the shrinks.
func (ks *Keyspace) ResizeAndRehash(budgetMicros int64, elapsed func() int64) {
	for _, db := range ks.DBs {
		db.ResizeIfNeeded()
	}
	if budgetMicros <= 0 {
		return
	}
	for range ks.DBs {
		db := ks.DBs[ks.rehashDB%len(ks.DBs)]
		if db.Rehash(budgetMicros, elapsed) {
			return
		}
		ks.rehashDB = (ks.rehashDB + 1) % len(ks.DBs)
	}
}

// BeginExec is called when an EXEC starts running its queue: the entries
// the previous EXEC marked (MarkArgvExec) are no longer its argv objects.
func (ks *Keyspace) BeginExec() {
	for i, e := range ks.argvExec {
		e.flags &^= argvExecFlag
		ks.argvExec[i] = nil
	}
	ks.argvExec = ks.argvExec[:0]
}

// MarkArgvExec records that a command queued in the running EXEC stored
// e's value (Entry.ArgvExec), until the value is replaced or the next
// BeginExec.
func (ks *Keyspace) MarkArgvExec(e *Entry) {
	if e.flags&argvExecFlag == 0 {
		e.flags |= argvExecFlag
		ks.argvExec = append(ks.argvExec, e)
	}
}
