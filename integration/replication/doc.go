// Package replication is the Ginkgo suite of master/replica replication
// (issue 12) over real processes: vigil-server replicating from and to
// itself (full sync of every type, diskless and disk; streaming with MULTI,
// Lua effects and expiry; partial resync after a cut link; chained
// replicas; a replica behind by more than the backlog; restarts resuming
// from the RDB's repl-id/offset), WAIT and min-replicas-to-write, promotion
// with REPLICAOF NO ONE, the FAILOVER command (label failover: the swap
// without losing an acknowledged write, TO, TIMEOUT, ABORT, FORCE, its
// errors compared with redis-server's, and with redis-server as either
// side), interop with Debian's redis-server 7.0 in both
// directions (labels replication, interop; specs needing redis-server skip
// when it is absent), and vigil-sentinel failing over a vigil-server fleet
// (label slow). It builds cmd/vigil-server (or takes VIGIL_SERVER_BIN) and
// cmd/vigil-sentinel with gexec.
//
// It may import integration (process helpers), go-redis, Ginkgo and
// Gomega; nothing imports it.
package replication
