// Package keyspace holds the databases and value types of vigil-server and
// implements expiry against a time passed in by the caller. It holds no locks
// and does no I/O: the server serialises access with its execution lock.
//
// It imports the standard library only.
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
//   - GlobMatch (glob.go) is util.c's stringmatchlen.
//   - LFULogIncr and Entry.LFUDecay (lfu.go) are evict.c's LFU counter.
//
// # Time and randomness
//
// Nothing here reads the clock or a global random source: every operation
// that depends on time takes now (unix milliseconds, as Redis's mstime) and
// every random choice takes a *rand.Rand, so tests and replays are
// deterministic. A key with ExpireAt = t is expired once now > t (keyIsExpired).
//
// # Expiry
//
// Keys with a TTL are indexed in a second Dict (db->expires) that points at
// the same Entry, so Entry.ExpireAt must only be changed through
// DB.SetExpire and DB.Persist. Expired keys are removed lazily by the lookups
// (Lookup, LookupNoTouch, Scan, RandomKey, Rename) and actively by
// Keyspace.ActiveExpireCycle; both count Stats.ExpiredKeys and call
// Keyspace.OnExpire, the server's hook for propagating DEL and "expired"
// events. With Keyspace.Replica set, expired keys read as missing but are
// kept for the master's DEL, as on a Redis 7.0 replica.
package keyspace
