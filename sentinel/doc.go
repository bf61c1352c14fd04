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
//     Notify (log + publish on channel Type), Log (log only), RunScript,
//     Crash, and the Reply / MasterDownReply answering a client request.
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
// One rule changes which replica a failover promotes, and whether there is
// one, only for a vigil-server master in sync-ack mode (min_replicas_ack in
// its INFO): the sync-ack rule below (syncack.go).
//
// The forget rule (forget.go), off unless `sentinel forget-after-milliseconds
// <master> <ms>` is set: a replica or sentinel SDOWN and unreachable that
// long is forgotten as SENTINEL RESET would forget it (-slave, -sentinel),
// and the config file rewritten without it. Redis never forgets one.
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
// # Sync-ack mode: promote only a replica that holds every acknowledged write
//
// With a vigil-server master in sync-ack mode (`min-replicas-ack N`, its INFO
// says min_replicas_ack:N) a write is acknowledged to its client only once N
// replicas acknowledged (REPLCONF ACK) an offset at least the write's
// (docs/safety.md). A failover must then promote a replica that holds every
// acknowledged write; syncack.go decides which, or that none can be shown
// to, in which case there is no failover and the sentinel says why.
//
// The rule. Let A be the ack members: the known replicas seen following the
// master (listed in its INFO, or reporting it as master with the link up;
// after a config load, every known replica), and the known replicas the
// sentinel reached (a valid PING reply) around or after the master's last
// INFO, unless their own later INFO shows they cannot hold its writes (they
// may have joined after that INFO listed the master's replicas), r = |A|. A replica proves its
// offset when it is in A, reachable (not SDOWN, link connected), its INFO is
// recent and, once the master is SDOWN, taken after the master turned SDOWN,
// and that INFO says role:slave, following the master's address, with
// master_link_status:down and the replication ID (master_replid) the
// replicas last reported while linked to the master. Let P be the replicas
// that prove their offset and k = r - |P|. A failover may go on only when
// |P| >= r-N+1 (k <= N-1); it may promote only a replica of P whose offset is
// at least T, the (N-k)-th greatest offset in P, and among those it follows
// Redis's order (replica-priority, offset, run id). Otherwise it does not
// start: +no-ack-quorum (-no-ack-quorum when it lifts), the no_ack_quorum
// flag and SENTINEL MASTER's failover-blocked field give the reason, INFO's
// masterN line failover_blocked=1; SENTINEL FAILOVER replies -NOGOODSLAVE
// with the reason; a leader that finds the rule broken at SELECT_SLAVE
// aborts (-failover-abort-no-ack-quorum). A COORDINATED failover is exempt:
// the master's FAILOVER waits, writes paused, until the chosen replica has
// the master's offset.
//
// Why it is safe (intersecting quorums). Take an acknowledged write w at
// offset o(w): a set S of at least N replicas acknowledged o(w), and they
// are all in A (a replica acknowledges only while following the master, and
// the sentinel counts every replica it ever saw doing so). At most k of them
// are outside P, so at least N-k replicas of P acknowledged o(w) before
// their INFO was read: each one's link was down when read, so every ACK it
// sent came before, and a replica's offset never goes below what it
// acknowledged. Hence N-k replicas of P have offset >= o(w): T, the
// (N-k)-th greatest, is >= o(w). A promoted replica p of P has offset >= T
// >= o(w) in the same replication history (same replication ID), and a
// replica at offset x holds every command of the stream below x, so p holds
// w. |P| >= r-N+1 is what makes N-k >= 1: the set that proves and every
// acknowledgement set intersect (|P| + N > r). With N = 1 the rule needs
// every member and promotes the greatest offset; with N = r any one proving
// replica will do.
//
// Reads. The master also holds a read's reply until N replicas acknowledged
// the offset the master had when the read ran (server/syncack.go), so what
// a read returned is at or below an acknowledged offset, which the promoted
// replica holds by the argument above: no failover takes back a value a
// read saw, and a register's history stays linearizable (the drill checks
// it with porcupine).
//
// What the proof assumes, and what remains:
//   - The master acknowledges nothing after the offsets were read. True when
//     it is dead, or cut from every proving replica; the link-down condition
//     is there for that (a replica still linked to a master the sentinels
//     cannot reach does not prove, so a partition that leaves the master
//     with replicas blocks the failover: syncack_linked). A proving replica
//     that reconnects to the old master between its last INFO and its
//     reconfiguration (a partition healing within the ~1 s of the failover)
//     could acknowledge more: fencing of the deposed master (issue 23) closes
//     that window; it is not closed here.
//   - The acknowledging replicas keep what they acknowledged until the
//     failover: an ACK is in memory, not on disk, so a replica that restarts
//     in between may come back behind.
//   - Every replica whose acknowledgements counted is in the leader's A.
//     The master makes it so (membership gate, replication.AckGate,
//     server/syncack.go): a replica's ACKs count toward sync-ack (writes
//     and held reads) only once every sentinel the master knows
//     (master-known-sentinels: learned from hellos and confirmations,
//     persisted) that ever confirmed one of its INFOs (a vigil-sentinel;
//     master-sync-ack-sentinels, persisted: a redis-sentinel never
//     confirms and is not waited for) has confirmed an INFO that listed
//     it. The master numbers
//     its INFOs in the mode (sync_ack_info_seq); a sentinel that processed
//     one of its master, marked every replica listed an ack member (which
//     sticks until the replica is forgotten) and wrote them to its config
//     file (the confirmation follows the Step's RewriteConfig, and is not
//     sent if the rewrite failed) answers REPLCONF sentinel-seen <seq>
//     sentinel-id <runid> (SendAckSeen). A replica attached when the
//     counter was a was listed by every INFO numbered above a while its
//     connection lasts; it counts once each known sentinel confirmed a
//     number above a; a reconnection is a new attachment. Why every known
//     sentinel, not a majority: any sentinel that asks first can win the
//     vote, and the votes carry no replica list, so the leader itself must
//     know the replica. Hence the gap Redis's INFO polling leaves (a
//     replica that connects, acknowledges and vanishes between two INFOs,
//     or that the sentinels cannot reach: an asymmetric partition, or one
//     they never heard of) is closed: its ACKs did not count, the writes
//     they would have acknowledged got UNACKED at the timeout (never a
//     silent OK). A sentinel restarted from its file counts every replica
//     of the file, which holds every one it confirmed. The deposed master
//     turned into a replica, a promoted replica's replicas (unsetMaster
//     drops them, they reattach) and a restarted master's replicas all
//     start unconfirmed. ackMayHaveJoined (syncack_joined_unseen) stays as
//     a second line for a master that counts without the gate (none known).
//     What remains: with no vigil-sentinel known to the master (never
//     monitored, or no confirmation ever received) every replica counts; a sentinel added, or
//     SENTINEL RESET, while a counted replica is down does not know it (do
//     not reset a sync-ack master while some of its replicas are down); a
//     sentinel that never reached the master (no hello, no confirmation)
//     and knows replicas only from its file is not waited for.
//   - The cost of the gate: a replica that attaches (or reattaches) counts
//     only after each known sentinel's next INFO of the master, up to the
//     INFO period (10 s); meanwhile the other counted replicas acknowledge
//     (with N=1 and two replicas, the old one), or, with fewer than N
//     counted replicas attached, writes and reads wait and get UNACKED at
//     min-replicas-ack-timeout. While a known sentinel is down or cut from
//     the master no new replica counts (replicas already counted keep
//     counting); the operator drops a sentinel that is gone for good with
//     CONFIG SET master-known-sentinels on the master. WAIT and
//     min-replicas-to-write are unchanged (every replica counts, as in
//     Redis), and a redis-sentinel never sends the confirmation (it does
//     not change redis-sentinel interop: the gate needs vigil-sentinels).
//   - N is the smallest value the master reported since it became master
//     (raising it takes effect at the next failover; 0 or no line turns the
//     rule off). It and the replication ID are written to the config file
//     (`sentinel known-sync-ack <name> <N> [<replid>]`), so a sentinel
//     restarted while the master is down applies the rule with the replicas
//     of its file.
//   - A master that the sentinels see down while its replicas stay linked
//     (repl-timeout, 60 s by default, longer than down-after) holds the
//     failover until the replicas drop the link: with the mode on, set
//     repl-timeout on the replicas no longer than down-after-milliseconds
//     (vigil up and vigil drill do).
//   - A replica-priority 0 replica counts for the proof but is never
//     promoted: when only such replicas are at or above T there is no
//     failover (the reason names them) until the operator gives one a
//     priority.
//
// The scenarios sentinel/testdata/syncack_*.script show each case, and the
// integration test integration/replication/syncack_sentinel_test.go runs it
// with real processes.
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
