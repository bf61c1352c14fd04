// Package lock is a distributed lock on one Redis master (reached through
// client.Client or any go-redis client) that fixes what the classic SETNX
// recipes get wrong:
//
//   - Acquire is one atomic SET key token NX PX ttl: a crash between SETNX
//     and EXPIRE can no longer leave a lock that never expires.
//   - The token is random per acquisition and release is a Lua
//     compare-and-delete: a holder whose lock expired cannot delete the lock
//     someone else now holds (a plain DEL would).
//   - A watchdog extends the TTL (Lua compare-and-pexpire) while the lock is
//     held, so the TTL can be short (a crashed holder frees the lock soon)
//     without expiring under a slow but live holder. It stops on release,
//     and when the lock is found lost it says so (Lock.Done, Lock.Err), so
//     the holder can stop working instead of carrying on unprotected.
//   - Optional reentrancy (WithReentrancy): the key is a hash of holder ->
//     count, as Redisson does, so code holding the lock can call code that
//     takes it again.
//   - WithReplicas(n) issues WAIT n after acquiring, on the same connection,
//     and fails the acquire if fewer replicas acknowledged: a lock only on
//     the master is lost if the master fails before replicating it, and the
//     promoted replica would grant it again.
//   - A fencing token (INCR of a companion key, in the same script as the
//     SET) comes with every lock: it increases with every acquisition, so a
//     storage system that remembers the highest token it saw can reject a
//     stale holder (one paused past its TTL), which no lock TTL can prevent.
//     It is incremented atomically with the SET so that tokens are ordered
//     like acquisitions; an INCR after the SET could be overtaken by the
//     next holder's.
//
// Reentrant and plain locks must not share a key (one is a hash, the other
// a string). The companion key is key+":fence"; both live on the same master.
//
// It imports go-redis and the standard library only.
package lock
