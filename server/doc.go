// Package server wires a vigil-server process: listeners, the connection loop,
// the command table and its cmd_*.go handlers, INFO, CLIENT, CONFIG, pub/sub,
// MULTI and scripting.
//
// ACL: the users, rules, checks and ACL replies are internal/acl's, shared
// with vigil-sentinel; acl.go is the glue (the store built from requirepass,
// "user" lines and aclfile; the permission check call() makes after the auth
// check, as processCommand's ACLCheckAllPerm; EXEC's re-check; AUTH; the
// clients of deleted users and of subscribers whose channels were revoked
// are disconnected) and cmd_acl.go the ACL command.
//
// Lock order: Server.mu (the execution lock) is taken once per parsed batch of
// commands; it guards the keyspace and every field marked "guarded by mu".
// Server.clientsMu guards the client registry and may be taken while holding mu,
// never the other way round.
//
// Blocked clients (blocking.go, Redis's blocked.c) are parked outside mu: a
// blocking command registers its client in Server.blocking under mu and
// returns without a reply; the client's goroutine (runBatch -> parkBlocked)
// writes the replies so far, releases mu and waits on the block's done
// channel holding no lock (the rest of its batch stays in its query
// buffer). While it is parked its reply writer c.w belongs to whoever holds
// mu. It is woken, always by a goroutine holding mu that first writes its
// reply into c.w and then closes done (unblock): the writer whose command
// made a key it waits on ready (call -> handleClientsBlockedOnKeys, after
// the command, after EXEC as a whole), its timer on the server's clock
// (blockTimedOut takes mu), CLIENT UNBLOCK, replication acknowledging an
// offset (ReplicasAcked takes mu), or, without a reply, CLIENT KILL, the
// cron's sweep of killed clients and closed peers, and shutdown. The woken
// goroutine takes mu again before it touches c.w, then runs the rest of its
// batch. Commands postponed by CLIENT PAUSE or FAILOVER park the same way, in
// pauseState.wait. Nothing parks while holding mu, clientsMu, a client's
// wmu or amu.
//
// # The write path (propagate.go)
//
// Every command runs through exec, Redis's call(). exec reads the dirty
// counter (Keyspace.Dirty, Redis's server.dirty) before and after the
// handler: a command that changed it is added, under the execution lock, to
// the pending operations of the current execution unit, in the form the
// handler chose:
//   - its argv as the client sent it (case kept: `set a 1` stays lowercase);
//   - or the argv set with Client.rewriteArgv (SET EX/PX/EXAT/PXAT and
//     SETEX/PSETEX -> SET key value PXAT <abs-ms>; SET ... GET without an
//     expire drops GET; EXPIRE/PEXPIRE/EXPIREAT -> PEXPIREAT key <abs-ms>
//     [flags]; an expire in the past -> DEL, or UNLINK under
//     lazyfree-lazy-expire; INCRBYFLOAT -> SET key value KEEPTTL; GETSET ->
//     SET; GETDEL -> DEL/UNLINK; GETEX -> PEXPIREAT/PERSIST/DEL). Handlers
//     build a rewritten argv only when Server.propagating(), so the path costs
//     nothing when no AOF or replica consumes it. A rewritten argv must not
//     alias bytes a later command of the same unit may overwrite in place
//     (keyspace values): copy them;
//   - Client.forcePropagation adds a command that changed nothing (FLUSHALL,
//     FLUSHDB: both targets; PUBLISH, SPUBLISH: replicas only), and
//     Client.preventPropagation keeps a command out while what it added with
//     Server.alsoPropagate stays (SPOP with a count -> one SREM per member;
//     a blocked BLPOP served by a later write -> LPOP). Otherwise SPOP and
//     the blocking pops rewrite their argv (SPOP -> SREM, or DEL/UNLINK when
//     it takes the whole set; BLPOP served at once -> LPOP).
//   - a script (EVAL, EVALSHA and their _RO forms, scripting.go) is never
//     propagated itself: the commands it runs with redis.call go through
//     exec and join its unit (7.0's effects replication, so several writes
//     are wrapped in MULTI ... EXEC); redis.set_repl narrows or drops
//     their targets.
//
// Keys found expired during the unit join it as DEL/UNLINK before the
// command that found them (the keyspace's OnExpire hook calls
// propagateDeletion). The execution unit ends when the outermost command
// returns (execDepth drops to 0: EXEC with its queue is one unit); its
// operations then go to every attached Propagator at once, wrapped in
// MULTI ... EXEC when there are several (MULTI in the first operation's db,
// EXEC in the last's), as propagatePendingCommands does; a single write inside
// MULTI is not wrapped. Deletions outside any command (the active expire
// cycle, eviction: evict.go) are units of their own. Each Propagator
// emits SELECT itself when the database changes (internal/resp's
// CommandStream), because the AOF and each replica stream forget their
// selected database at different moments.
//
// The oracle is redis-server 7.0.15's appendonly file with appendfsync
// always: TestRandomDifferential, TestBitmapDifferentialRandom and
// TestPropagateGoldenRedis compare Vigil's recorded stream (Recorder) with it
// byte for byte, absolute times within a minute. A command added later must
// be covered there too.
//
// # Replication (repl_master.go, repl_replica.go, cmd_repl.go, failover.go)
//
// The shells around the replication package's pure core. All state is in
// Server.repl (replState), guarded by mu.
//
// Master: SYNC/PSYNC go through replication.Decide. The backlog is a
// Propagator attached the first time a backlog is created (so a server that
// never had a replica pays nothing); it encodes the TargetRepl operations
// with its own resp.CommandStream and appends them to the ring, waking each
// replica's writer goroutine. A replica client keeps its connection loop
// (which reads REPLCONF ACK) and gets a writer goroutine that owns the
// socket's output: for a full sync it waits repl-diskless-sync-delay
// (writing "\n" each second), then under mu starts a keyspace snapshot,
// notes master_repl_offset, points the replica's Cursor just after it and
// resets the stream's SELECT, writes +FULLRESYNC and streams the snapshot
// as $EOF:<mark> through a redis-rdb-to-slaves child and a pipe (diskless),
// or starts a BGSAVE for replication (the redis-rdb-bgsave child writes
// dbfilename) and sends that file as $<len> (repl-diskless-sync no; a
// replica arriving while it runs for another attaches to it); after an EOF
// payload it waits for the first ACK. Then it copies Pending(cursor) under mu and writes it outside.
// What was written during the transfer is in the backlog already, so it
// goes out after the payload (bytes the ring overwrites first move to the
// replica's spill); a replica over client-output-buffer-limit replica is
// dropped (obuf.go) and comes back with a resync. +CONTINUE writes the reply and the backlog from the
// requested offset the same way. One keyspace snapshot runs at a time: the
// writer that takes it serves every replica then waiting with the same
// target from it (Redis's shared BGSAVE); one arriving later waits for the
// next. exec records c.woff when a command moved
// master_repl_offset (7.0's call()); WAIT counts acks through
// replication.CountAcks and asks for them with a GETACK fed as the WAIT
// parks (Redis: beforeSleep). Replica writers write with raw system calls
// (Client.writeLocked): net.Conn's entersyscall would wake the runtime's
// sysmon thread at each write of an idle process. replCron is
// replicationCron: PINGs, ACK timeouts, the backlog TTL.
//
// Replica: REPLICAOF starts a link goroutine (runLink) that drives
// replication.Handshake over a socket and loads the payload keeping
// expired keys (repl_replica.go loadPayload: repl-diskless-load disabled
// receives it to a temp file renamed over dbfilename, on-empty-db and swapdb
// parse the socket, swapdb into a temporary keyspace swapped in at the end;
// the server is loading meanwhile: -LOADING, or async_loading serving the
// old data for swapdb within one history), and applies the stream with
// a master client (kind master, not refused by read-only or min-replicas,
// no replies) through call(), one command at a time under mu. The bytes of
// each applied command (a MULTI block once EXEC ran) are fed verbatim to the
// node's own backlog, so sub-replicas get the master's stream, IDs and
// offsets; commands run locally on a replica never enter it. GETACK is
// answered by the link with the applied offset before the GETACK; ACKs go
// out from replCron each second. The link's socket is a linkConn (raw
// reads and writes inside its RawConn, for the same reason). A dropped link caches the master (replid,
// applied offset) in the Handshake for the next PSYNC. REPLICAOF NO ONE
// shifts the IDs (replid2 = old id up to offset+1) and drops the replicas so
// they PSYNC again. Keyspace.Replica is on while following a master, and
// Keyspace.MasterCommand while a command of the master runs, so that the
// master's commands see keys the replica hides as expired (expireIfNeeded
// returns 0 for the master client). RDBs carry repl-id/repl-offset whenever
// a backlog exists; at startup (restoreReplInfo) a replica resumes from
// them and a master keeps them as replid2.
//
// FAILOVER (failover.go) executes replication.DecideFailoverCommand and
// Failover.Update (run every cron tick, as beforeSleep's
// updateFailoverStatus): it pauses the writes (pauseState's failover
// purpose, which CLIENT UNPAUSE does not end; a postponed command runs
// processCommand's checks again when it wakes, so it gets -READONLY if the
// node became a replica), then follows the target with startReplication,
// whose Handshake sends PSYNC ... FAILOVER; the target's answer
// (FailoverReply) clears the state or aborts back to a master
// (unsetMaster). The target's half is syncRequest's PsyncPromote.
//
// It may import internal/resp, internal/clock, configs, server/keyspace,
// internal/redistext, internal/acl, server/rdb, server/aof, server/lua (the Lua engine, behind its
// Host interface: scripting.go's luaHost), replication and the chosen libraries (zerolog).
package server
