// Package keyspace holds the databases and value types of vigil-server and
// implements expiry against a time passed in by the caller. It holds no locks
// and does no I/O: the server serialises access with its execution lock.
//
// It imports the standard library and internal/redisutil (util.c's
// string2ll and stringmatchlen, shared byte for byte with the server).
//
// # Pieces and their Redis 7.0 parallels
//
//   - Dict (dict.go) is dict.c: chained power-of-two tables with incremental
//     rehashing, dictScan's reverse-binary cursor (the SCAN guarantee),
//     dictGetRandomKey, dictGetFairRandomKey and dictGetSomeKeys. Go maps
//     cannot give SCAN's guarantee, hence a table of our own.
//   - DB (db.go) is redisDb with db.c's lookupKey, setKey, dbDelete,
//     setExpire, removeExpire, dbRandomKey, renameGenericCommand and
//     scanGenericCommand. Lookups with a []byte key do not allocate.
//   - Keyspace (keyspace.go) is server.db[] with SWAPDB and the expiry
//     statistics; ActiveExpireCycle (expire.go) is expire.c's slow
//     activeExpireCycle.
//   - Value (value.go) is robj's type and encoding: every value knows its
//     Type (OBJ_STRING ... OBJ_STREAM, TYPE's names), its Encoding
//     (OBJ_ENCODING_*, OBJECT ENCODING's names), its Size (object.c's
//     objectComputeSize, with the jemalloc and sds sizes of size.go) and
//     how to Dup it (dup*Object). String is the string type. The commands
//     that do not care about the type (TYPE, SCAN TYPE, OBJECT, MEMORY
//     USAGE, DEBUG OBJECT, COPY, MOVE, RENAME) use only Value, so a new
//     type implements Value and its own commands; EncodingConfig holds the
//     thresholds (hash-max-listpack-entries, ...) of the compact encodings.
//   - Set (set.go) is t_set.c's set: an intset (sorted int64s, widening
//     as intset.c) converted for good to a Dict of members on a
//     non-integer or past set-max-intset-entries; its dict adds and
//     removes take dict.c's single rehash step.
//   - Snapshot (snapshot.go) is what rdbSaveBackground's fork gives Redis:
//     a point-in-time view read while writes continue (below).
//   - GlobMatch (glob.go) is util.c's stringmatchlen.
//   - LFULogIncr and Entry.LFUDecay (lfu.go) are evict.c's LFU counter.
//   - evict.go is the rest of evict.c that needs no server: the memory
//     the dataset accounts for (Keyspace.Memory, kept incrementally: each
//     key counts for its MEMORY USAGE figure, re-measured by Settle after
//     writes), and the choice of the key to evict (Evictor, Victim: the
//     16-entry eviction pool filled by sampling maxmemory-samples keys per
//     database, next_db for the random policies). The server decides when
//     to evict and what an eviction signals.
//
// # Time and randomness
//
// Nothing here reads the clock or a global random source: every operation
// that depends on time takes now (unix milliseconds, as Redis's mstime) and
// every random choice takes a *rand.Rand, so tests and replays are
// deterministic. A key whose expire time is t is expired once now > t
// (keyIsExpired).
//
// # Expiry
//
// Keys with a TTL are indexed in a second Dict (db->expires) that holds the
// expire time under the same key string, as Redis's; the Entry only has a
// flag (Entry.HasExpire), so a key without a TTL costs no lookup, and
// DB.ExpireAt reads the time (one lookup in the index). Set it only through
// DB.SetExpire and DB.Persist. Expired keys are removed lazily by the lookups
// (Lookup, LookupNoTouch, Scan, RandomKey, Rename) and actively by
// Keyspace.ActiveExpireCycle; both count Stats.ExpiredKeys and call
// Keyspace.OnExpire, the server's hook for propagating DEL and "expired"
// events. With Keyspace.Replica set, expired keys read as missing but are
// kept for the master's DEL, as on a Redis 7.0 replica.
//
// # Snapshots
//
// BGSAVE, a replica's full resync and an AOF rewrite (BGREWRITEAOF) need
// the databases as they were at one instant, serialised while the server
// keeps executing writes. Redis forks and lets the kernel copy pages on
// write; Go cannot fork, so the keyspace copies on write itself, per key
// and only for keys written while a snapshot runs:
//
//   - Keyspace.BeginSnapshot, under the execution lock, starts a snapshot:
//     it bumps the snapshot epoch and gives every database a walk (a dictScan
//     cursor over its table). It costs O(databases). One snapshot runs at a
//     time (Redis: one child); replicas asking for a full sync meanwhile
//     share it, as they share Redis's BGSAVE.
//   - Snapshot.Step, under the execution lock, advances the walks by about
//     n keys, in bounded work, and returns Items (database, key, value, TTL,
//     access metadata). The caller serialises them after releasing the lock;
//     a BGSAVE goroutine alternates: lock, Step, unlock, write. Items come
//     grouped by database in increasing number.
//   - Each Entry carries the epoch of the last snapshot that accounted for
//     it. An entry whose epoch differs from the running snapshot's is owed:
//     it existed at the start and has been neither emitted nor saved. The
//     walk emits only owed entries and marks them; entries created during
//     the snapshot get the epoch at birth, so they are never emitted. The
//     marks make each key come exactly once although dictScan may visit an
//     entry twice while the table is rehashed, and dictScan's guarantee
//     (every entry present for the whole walk is visited) covers the rest.
//     While a database's table stays in place (no resize, no rehash) the
//     walk reads it in bucket order, which is cheaper on the caches than
//     dictScan's reversed-bit order; once the table is resized or starts
//     rehashing mid-walk it restarts with dictScan from cursor 0, and the
//     marks pass over what was already emitted (snapshot.go, dbScan).
//   - Before any write changes or removes an owed entry (DB.Set and
//     SetKeepTTL on an existing key, Delete, lazy and active expiry,
//     SetExpire, Persist, Rename, Move, an in-place change) its current
//     state is saved for the snapshot (DB.preWrite): the value is shared,
//     not copied, because a write that replaces the value leaves the old
//     object alone. Saved items are emitted with their database's walk.
//   - Values handed to the snapshot (emitted or saved) are immutable until
//     Snapshot.Close, so they can be read without the lock. The entry
//     records that its value is shared (snapSharedFlag); DB.Mutable, which
//     every in-place change must go through (APPEND, SETRANGE, SETBIT,
//     BITFIELD, the same-length overwrite of SET/INCR, and later LPUSH,
//     HSET, ...), duplicates a shared value and gives the entry the copy.
//     Without a running snapshot, or for a value the snapshot never saw,
//     Mutable returns the value itself and costs nothing (the GET/SET hot
//     paths stay allocation-free); DB.InPlace tells a writer whether it
//     would copy.
//   - FLUSHDB/FLUSHALL hand a database's unfinished walk the old table,
//     which nothing else reaches any more; SWAPDB swaps the walks with the
//     contents, so every key keeps the database number it had at the start;
//     RENAME and MOVE save the source first and carry the marked entry.
//
// So a snapshot costs one saved Item per key written before the walk
// reached it, and one copy per value changed in place while shared: memory
// is only spent on what is written during the snapshot (SnapshotStats
// counts both). LastAccess and Freq are read when the item is emitted or
// saved, not at the start: reads change them without a write. Logically
// expired keys that are still stored are emitted too (with their TTL);
// the loader drops them, as Redis's does.
package keyspace
