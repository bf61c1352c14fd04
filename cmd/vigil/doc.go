// Command vigil is the operator tool: it runs local deployments and shows
// their state.
//
//	vigil up [--server vigil|redis] [--dir vigil-data] [--base-port 6379]
//	         [--sentinel-base-port 26379] [--groups N] [--restart-dead] [--json] ...
//	vigil status --sentinel host:port [--master mymaster]... [--all-masters] [--json] [--watch]
//	vigil rolling-restart --sentinel host:port [--master mymaster] [--timeout 2m]
//	vigil check-aof [--fix] <manifest|file>
//	vigil drill [--fault kill-master|pause-master|partition-master|kill-sentinel|rolling-restart|kill-replica-sync|restart-master-empty|all]
//	            [--rounds N] [--seed S] [--clients C] [--wait N] [--report DIR]
//	            [--expect-no-loss] [--sentinel host:port] [--against vigil|redis]
//	            [--server redis|vigil] [--base-port 7379] [--sentinel-base-port 27379]
//	            [--dir vigil-drill-data] [--down-after 2s] [--failover-timeout 10s]
//	            [--server-directive LINE] [--sentinel-directive LINE] [--json]
//	            [--net auto|netns|proxy] [--groups N]
//
// `vigil rolling-restart` restarts a deployment whose processes a
// supervisor starts again when they exit: each replica (SHUTDOWN, wait for a
// new pid and a healthy deployment), then a hand-over through the sentinels
// (SENTINEL FAILOVER <master> COORDINATED, vigil-sentinel's: the master's
// FAILOVER waits for the chosen replica to have every write), then the old
// master (CONFIG REWRITE first, so it restarts as a replica) and the
// sentinels. An aborted hand-over leaves the master in place and fails.
//
// `vigil up` starts 1 master, 2 replicas and 3 sentinels on loopback from the
// templates in configs/examples/ (embedded in the binary), one directory per
// node under --dir with its config copy, log, pid file and output.log, waits
// until the deployment is healthy (the master sees every replica online, every
// sentinel knows the master, the replicas and the other sentinels), prints
// how to connect (redis-cli, go-redis FailoverClient, vigil's client), then a
// live view refreshed every second: each server's role, pid, offset and lag,
// each sentinel's view of the master, and the sentinels' events (+sdown,
// +odown, +switch-master, ...) from their pub/sub, deduplicated. On a terminal
// the view is redrawn in place; otherwise it is printed when it changes;
// --json prints JSON lines instead: {"type":"ready"}, {"type":"status"} every
// second, {"type":"event"}, {"type":"stopped"}. Ctrl-C or SIGTERM stops the
// sentinels, then the servers (SIGTERM, SIGKILL after 10 s); the nodes run in
// their own process groups with Pdeathsig on Linux, so a killed `vigil up`
// leaves no process behind.
//
// With --server vigil (the default) the nodes are this binary's hidden
// subcommands `vigil server <redis-server args>` and
// `vigil sentinel <redis-sentinel args>` (internal/servermain and
// internal/sentinelmain, the same programs as cmd/vigil-server and
// cmd/vigil-sentinel), so nothing but Go is needed. --server redis runs
// Debian's redis-server and redis-sentinel.
//
// `vigil up --groups N` starts N such groups (masters mymaster, mymaster-2,
// ..., each with its replicas on the next ports) under one set of sentinels
// that monitors them all; the view shows one block per group.
//
// `vigil status` shows the same view for any deployment, Vigil or Redis,
// given one sentinel; --all-masters (or --master repeated) one block per
// master.
//
// `vigil check-aof` is redis-check-aof: it validates an AOF manifest's files
// or a single AOF file and, with --fix, truncates the last file to its last
// complete command.
//
// `vigil drill` (internal/drill) starts a deployment (1 master, 2 replicas,
// 3 sentinels; --groups N: N such groups under the 3 sentinels, a workload
// per group, each round's fault on a seeded group, figures per group and in
// total; --server picks the data servers, vigil-server by default;
// --against picks the sentinels, vigil-sentinel by default, redis for
// redis-server + redis-sentinel), or uses an existing one (--sentinel), runs
// a write and register workload through package client, injects the
// scheduled faults, and prints a report: operations by outcome, each fault
// with its time to +switch-master and to the first successful write, windows
// without a successful write, acknowledged writes lost (with --wait N, also
// among the writes WAIT N acknowledged) and the porcupine linearizability
// verdict with a counterexample. report.json and timeline.svg go to
// --report. Progress (round n of N, fault, phase, writes so far) goes to
// stderr: one updated line on a terminal, JSON lines otherwise or with
// --json. --expect-no-loss exits with status 3 when an acknowledged write
// was lost. partition-master cuts the master from the replicas and
// sentinels while the drill's clients still reach it: with --net netns
// every node runs in a Linux network namespace of its own (own IP, veth to
// a bridge; the cut is nftables drops, real packet loss; needs root, ip and
// nft), with --net proxy the servers sit behind deploy's fault-injecting
// TCP proxy; --net auto (the default) uses namespaces when they work here
// and says on stderr which one it picked and why. The report names it.
// --server-directive / --sentinel-directive add config lines (for example
// 'min-replicas-to-write 1' to see the split-brain loss disappear).
//
// main.go holds the app and the list of subcommands; each subcommand lives
// in its own file. It may import internal/deploy, internal/drill, internal/servermain,
// internal/sentinelmain, server/aof, client, internal/netshell (the probe's TLS
// peer check) and the chosen libraries (urfave/cli, go-isatty); nothing imports
// it.
package main
