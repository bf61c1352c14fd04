// Package sentinel is the pure failover core of vigil-sentinel, a Redis 7.0
// Sentinel: Core.Step(now, Event) []Action. It implements instance discovery
// (INFO, hellos), SDOWN/ODOWN, epochs and leader votes, replica ranking, the
// failover state machine, TILT, and the state sentinel.conf persists, all
// named after and following sentinel.c (Redis 7.0.15).
//
// It performs no I/O, reads no clock and takes randomness only from the
// *rand.Rand given to New: time is the unix-millisecond `now` passed to Step,
// so a seed plus an event sequence always yields the same actions.
//
// # Using it (the shell, sentinel/daemon)
//
//   - New(Options, rng), then Step(now, ConfigLoaded{cfg}) once.
//   - Deliver Ticked every TickDelay() ms (10–19 Hz, re-randomised as Redis).
//   - Execute the returned actions in order: Connect/Disconnect (connections
//     keyed by Ref.Link; sentinels known under several masters share one),
//     SendPing, SendInfo, PublishHello, AskMasterDown, SendReplicaOf (the
//     MULTI/SLAVEOF/CONFIG REWRITE/CLIENT KILL×2/EXEC transaction, names
//     through MapCommand), SendScriptKill, RewriteConfig (from Config()),
//     Notify (log + publish on channel Type), RunScript, Crash, and the
//     Reply / MasterDownReply answering a client request.
//   - Report facts: LinkConnected/LinkDisconnected, PreludeReplied (the
//     AUTH/CLIENT SETNAME sent first on a connection; a connection being
//     opened already takes commands, as a hiredis context does),
//     PingReplied, InfoReceived, HelloReceived, PublishReplied,
//     IsMasterDownReplied, CommandReplied, and
//     the SENTINEL commands that change state (MonitorRequested, SetRequested,
//     ResetRequested, FailoverRequested, IsMasterDownAsked, ...). See Event
//     for the reply/stale-connection contract.
//   - Read-only SENTINEL commands use the query methods: Masters, Master,
//     Replicas, Sentinels, MasterAddr, CKQuorum, InfoSection, InfoCache,
//     ConfigGet, Debug, MyID, MasterNames.
//
// # Vigil's deviations from Redis (Tunables; RedisTunables() turns them off)
//
//   - AskOnSDown: ask the other sentinels in the very tick a master turns
//     SDOWN, regardless of the ask period.
//   - PromotionInfoPeriod (100 ms): INFO polling of the promoted replica in
//     SEND_SLAVEOF_NOONE/WAIT_PROMOTION, instead of 1 s.
//   - ReconfInfoPeriod (250 ms): INFO polling of replicas being reconfigured.
//   - EagerFailover: the SLAVEOF NO ONE goes out in the step that selected
//     the replica; INFO is asked of a replica as soon as its SLAVEOF is
//     acknowledged; on promotion the hellos with the new configuration and
//     the other replicas' SLAVEOF go out at once. Redis waits a tick (50-100
//     ms) for each. ODOWN, votes and selection stay on the tick.
//   - InfoOnReconnect: INFO is asked of a master as soon as its command
//     link reconnects, and of its replicas when its run_id changed.
//
// None changes what counts as ODOWN, a vote or a promotion. One rule does
// change what counts as SDOWN, and only with vigil-server replicas (it
// reads a Vigil INFO field): the empty-restart rule (emptyrestart.go), a
// master whose replica, following it, refuses its full sync because it
// restarted without its data (master_sync_refused_empty:1) is SDOWN
// (+empty-restart).
//
// One extension: SENTINEL FAILOVER <name> COORDINATED (FailoverRequested
// .Coordinated, coordinated.go) hands over through the master's FAILOVER
// command (SendFailover / FailoverReplied) instead of SLAVEOF NO ONE, with
// the +coordinated-failover-* / -coordinated-failover-* events.
//
// Fencing (fence.go): Core.StampEpoch gives the daemon the config epoch to
// stamp on a vigil-server it reconfigures (CONFIG SET master-config-epoch
// in the SLAVEOF transaction); never sent to a redis-server.
//
// # Simplifications
//
//   - Host names: an address resolves once, when the core makes it, through
//     Options.Resolve (the shell's lookup, as anetResolve blocks Redis's
//     loop); replicas are named and looked up by the host INFO gives, where
//     Redis looks them up by the resolved address (and so may list a
//     replica announced by name twice).
//   - The SLAVEOF transaction counts as one pending command, not six.
//   - Script queueing, retries and timeouts, executability checks of script
//     paths, and SCRIPT-MAX-RUNTIME/RETRY-DELAY belong to the shell.
//
// # Remaining differences from redis-sentinel 7.0.15 (found, not fixed)
//
//   - Config rewrite quoting: Redis writes auth-pass, auth-user and
//     rename-command values raw, so a value with a space or a quote makes
//     the rewritten file unloadable; Vigil quotes them (the file reloads).
//   - Redis rewrites rename-command lines in its dict's order; Vigil in the
//     order they were given.
//   - A relative path written into the file stays relative (as Redis): it
//     is resolved from dir, which the rewrite writes as an absolute path.
//
// It imports the standard library and the pure leaf internal/redisutil
// (stringmatchlen, string2ll) only.
package sentinel
