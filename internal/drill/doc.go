// Package drill rehearses failures of a sentinel-monitored deployment and
// accounts for what they cost: `vigil drill` is its command line.
//
// Run starts a workload of Config.Clients goroutines, each with its own
// sentinel-aware client (package client, retries off so every outcome is
// recorded as it happened), and records a History of every operation:
// invoke and completion time (offsets from the start), outcome and value.
// Each client mixes
//
//   - writes: SET of a key written once ("drill:<run>:w:<client>:<n>")
//     with a unique value; with Config.Wait N the SET is pipelined with
//     WAIT N 500 and the write counts as acknowledged only when WAIT
//     reports N replicas;
//   - a register workload: SET (unique values) and GET of a few shared keys
//     ("drill:<run>:r:<i>"), for the linearizability check.
//
// <run> is unique to the run (the start time in base 36), so data left by
// an earlier run in a reused directory or an existing deployment can
// neither mask a lost write nor break the register's initial state.
//
// Outcomes: ok; failed when the operation certainly had no effect (an error
// reply such as -READONLY, ErrStaleMaster, a refused dial); unknown when it
// may have been applied (a timeout or a connection broken after sending).
//
// Faults follow a seeded Schedule (same seed, same schedule: fault per round
// for "all", the undisturbed time before each fault, the sentinel to kill,
// the rolling-restart order, the sides of a split). Adding a kind to Faults
// changes what "all" draws for every seed (split did: a seed's "all"
// schedule from before it differs); the single-fault schedules stay the
// same:
//
//   - kill-master: SIGKILL the master the sentinels name; once they name
//     another, start it again (it rejoins as a replica) and wait healthy.
//   - pause-master: SIGSTOP the master until the sentinels fail over (so
//     longer than down-after), SIGCONT, and check the old master rejoins as
//     a replica with its link up (FaultRecord.RejoinedAsReplica).
//   - partition-master: deploy.Deployment.PartitionPeers, over network
//     namespaces (deploy.Spec.Netns: nftables drops on the master's bridge
//     port) or through the fault-injecting TCP proxy in front of every
//     server (deploy.Spec.Proxy); Report.Network says which. Every packet
//     between the master and the replicas and sentinels is dropped (they
//     time out) while the process runs and the drill's own
//     clients still reach it (the split-brain case: what it acknowledges
//     before the clients switch is lost when it is demoted, unless
//     min-replicas-to-write stops it); after the failover the cut heals and
//     the old master must rejoin as a replica.
//   - split: deploy.Deployment.Split (network namespaces only; refused
//     otherwise, --fault all included when it draws one): the master, one
//     replica (Step.Target) and a minority of the sentinels
//     (Step.SplitSentinels: 1 of 3) on one side, the other replicas and
//     the sentinel majority on the other; the drill's clients, in the root
//     namespace like application hosts that see both sides, reach every
//     node. It is held Config.SplitHold (default 4 × down-after) plus the
//     step's seeded Hold whatever the sentinels do, then healed.
//     FaultRecord.Split records the sides and, just before the heal, the
//     master each sentinel names and each server's role (the evidence that
//     the sides were apart); RejoinedAsReplica when the majority promoted.
//   - restart-master-empty: SIGKILL the master, delete its RDB and AOF,
//     start it at once. With vigil-server and vigil-sentinel (the
//     empty-restart guard) a failover must follow; with any other pair the
//     drill waits 3 × down-after + 5 s, notes that no failover came
//     (FaultRecord.Note) and goes on: the loss check shows what the
//     replicas' full syncs of the empty master erased.
//   - kill-sentinel: SIGKILL one sentinel, restart it after a seeded hold.
//   - rolling-restart: restart every server and sentinel, waiting for a
//     healthy deployment after each. Under vigil-sentinel it is
//     deploy.RollingRestart: the replicas in the seeded order, then a
//     coordinated hand-over (SENTINEL FAILOVER ... COORDINATED, so no
//     acknowledged write is lost), the old master, the sentinels in the
//     seeded order; under redis-sentinel every node in the seeded order,
//     the master restarting in place.
//   - kill-replica-sync: stop a replica, delete its dump.rdb (so it cannot
//     PSYNC), start it, SIGKILL it once the master reports the full sync in
//     progress (state wait_bgsave or send_bulk: Redis 7.0 waits
//     repl-diskless-sync-delay before streaming), start it again and check
//     it rejoins (FaultRecord.KilledDuringSync says whether the kill hit the
//     sync).
//
// Without a Deployment (an existing one, `--sentinel`), kill-master is
// SHUTDOWN NOSAVE NOW FORCE and pause-master DEBUG SLEEP on the master the
// sentinels name; the other faults need a deployment the drill started.
//
// The checker (CheckLoss, UnavailabilityWait, FirstWriteAfter,
// CheckLinearizable) reports acknowledged writes lost (every written key is
// read back from the final master; counted for SET OK and, with WAIT, for
// the writes WAIT acknowledged), windows with no acknowledged write (SET OK;
// with --wait, acknowledged by WAIT) longer than Config.GapMin and their
// total (Report.UnavailableTotal), the time from each fault to the first successful write
// and to the first +switch-master (from the sentinels' pub/sub), from that
// +switch-master to the first drill client switching to the new master
// (FaultRecord.ClientSwitch, and ClientWithin100ms: the client reaches the
// new master within the sentinels' switch time plus 100 ms) and to the
// first successful write after it, for partition-master and split the old
// master's write window (oldMasterWriteWindow: from the fault to the last
// write it acknowledged while cut off or deposed; each successful Op
// records the server that answered it, Op.Node), per fault kind how long
// its rounds took (Report.FaultStats), and whether
// the register history is linearizable (porcupine, per key; an unknown write
// may take effect at any time after its invocation), with a counterexample:
// the longest linearizable prefix and the operations none of which can
// follow it.
//
// Report.WriteText prints the readable report; WriteFiles writes
// report.json (everything, the history included) and timeline.svg (one row
// per client, each operation a bar colored by outcome, faults shaded,
// sentinel events and the clients' master changes as markers).
//
// It may import client, internal/deploy, go-redis, porcupine and the
// standard library.
package drill
