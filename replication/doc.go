// Package replication owns the backlog (a ring addressed by replication offset),
// replication IDs, the pure PSYNC decision, the replica handshake state
// machine and the other decisions of replication.c. The shells that stream
// to replicas and follow a master live in package server (below); this
// package never imports server.
// It may import internal/resp, internal/clock and configs.
//
// # The functional core
//
// Everything here is pure: no sockets, no goroutines, no time.Now; time and
// randomness come in as arguments (a *rand.Rand for IDs). Each piece names
// the Redis 7.0 function it mirrors (replication.c unless said otherwise):
//
//   - Backlog (createReplicationBacklog, feedReplicationBuffer,
//     resizeReplicationBacklog, addReplyReplicationBacklog): one ring shared
//     by all replicas, addressed by the global offset with Redis's
//     conventions: End() is master_repl_offset, First() is
//     repl_backlog_first_byte_offset = End()-Histlen()+1 (End()+1 when
//     empty), servable PSYNC offsets are First()..End()+1. A Cursor per
//     replica yields the pending bytes as at most two slices of the ring (no
//     copy) and reports when its offset fell out of the window. Resize keeps
//     the newest bytes; BacklogExpired is the repl-backlog-ttl decision.
//     Redis trims in 16 KiB blocks, so after wrapping its histlen can exceed
//     repl-backlog-size by up to a block; this ring holds exactly the size.
//   - IDs (changeReplicationId, clearReplicationId2, shiftReplicationId and
//     what a replica does after +FULLRESYNC / +CONTINUE <new id>).
//   - Decide (syncCommand + masterTryPartialResynchronization): +CONTINUE
//     [<replid>] or a full resync, with the checks in Redis's order and the
//     stats to count; FullResyncLine is written when the snapshot starts.
//   - Handshake (syncWithMaster, slaveTryPartialResynchronization, the
//     header part of readSyncBulkPayload): Step(event) returns actions;
//     states are named after REPL_STATE_*. ParsePayloadHeader,
//     NewPayloadReader and EOFMarkReader read the $<len> or $EOF:<mark>
//     payload (the mark reader holds back only the last 40 bytes).
//   - StreamOffsets (the master client's read_reploff/reploff), AckCommand,
//     AckDue, NewlineDue, GetAck: the replica's offset bookkeeping.
//   - ReplicaAck, CountAcks, WaitDone, GoodReplicas, WritesAllowed,
//     ReplicaTimedOut, NeedsNewline, PingDue, LinkTimeout: the master's and
//     replica's replicationCron / WAIT / min-replicas decisions.
//   - DecideFailoverCommand (failoverCommand), Failover.Update/Start/Clear
//     (updateFailoverStatus, clearFailoverState), FindReplica: the FAILOVER
//     command; the Handshake sends PSYNC ... FAILOVER when configured with
//     Failover and reports the answer as FailoverReply.
//   - ParseReplconf (replconfCommand), DecideReplicaof (replicaofCommand),
//     WriteRoleMaster / WriteRoleReplica (roleCommand).
//   - Info / AppendInfoSection (genRedisInfoString's replication section),
//     golden-tested against redis-server 7.0.15 captures in testdata/.
//
// # Settled by the server's write path (server/doc.go, server/propagate.go)
//
// The backlog is one of the server's Propagators. It receives each
// execution unit's operations under the execution lock, in execution order
// (already wrapped in MULTI/EXEC when the unit has several), so the backlog's
// order is the execution order and equals the AOF's; it takes the operations
// whose Target includes replicas (PUBLISH is replicas-only) and encodes them
// with its own resp.CommandStream, whose selected database it forgets
// (Reset) when a new replica starts from a full resync, as Redis's
// slaveseldb = -1. Because a unit arrives whole, the master_repl_offset a
// client waits for with WAIT is the backlog's end after the client's last
// unit. master_repl_offset only moves while a backlog exists
// (feedReplicationBuffer returns early otherwise): the shell does not feed
// the stream when it has no Backlog.
//
// # The shells (in package server)
//
// The sockets and goroutines live in server/repl_master.go and
// server/repl_replica.go (server/doc.go, "Replication"), because they need
// the keyspace snapshot, the RDB codec and the command path; this package
// stays pure and never imports server. What they use from here: Decide for
// every SYNC/PSYNC, the Backlog fed as a Propagator and read through one
// Cursor per replica, FullResyncLine when the snapshot starts, ParseReplconf,
// CountAcks/GoodReplicas/WritesAllowed for WAIT and min-replicas,
// ReplicaTimedOut/PingDue/BacklogExpired in the cron; on the replica the
// Handshake (its actions executed in order on the socket), NewPayloadReader
// for both payload framings, StreamOffsets for ACK/GETACK and the bytes
// forwarded to sub-replicas, IDs.AdoptFullSync/AdoptContinue/Shift,
// LinkTimeout; DecideReplicaof, WriteRoleMaster/WriteRoleReplica and
// AppendInfoSection for the commands.
package replication
