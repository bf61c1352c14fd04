// Package replication owns the backlog (a ring addressed by replication offset),
// replication IDs, the pure PSYNC decision and the replica handshake state
// machine, plus the shells that stream to replicas and follow a master.
// It never imports server: it declares the interfaces it needs.
// It may import internal/resp, internal/clock and configs.
//
// Settled by the server's write path (server/doc.go, server/propagate.go):
// the backlog will be one of the server's Propagators. It receives each
// execution unit's operations under the execution lock, in execution order
// (already wrapped in MULTI/EXEC when the unit has several), so the backlog's
// order is the execution order and equals the AOF's; it takes the operations
// whose Target includes replicas (PUBLISH is replicas-only) and encodes them
// with its own resp.CommandStream, whose selected database it forgets
// (Reset) when a new replica starts from a full resync, as Redis's
// slaveseldb = -1. Because a unit arrives whole, the master_repl_offset a
// client waits for with WAIT is the backlog's end after the client's last
// unit.
package replication
