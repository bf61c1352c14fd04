// Package deploy starts, stops, kills, pauses and inspects local deployments
// for `vigil up`, `vigil status`, `vigil drill` and the integration suites.
//
// A Spec (counts, ports, server kind, directory, extra directives) becomes a
// Deployment with New, which checks every port is free (a *PortBusyError
// names the port and the --base-port / --sentinel-base-port flag that moves
// it) and writes one directory per node under Spec.Dir ("server-6379",
// "sentinel-26379"), each with its config copy rendered from the templates in
// configs/examples/ (master.conf, replica.conf, sentinel.conf, embedded as
// configs.Examples): the template's lines for port, bind, dir, logfile,
// pidfile, replicaof and the sentinel monitor line are replaced, extra
// directives replace or are appended. Each node logs to its log file and its
// stdout/stderr go to output.log.
//
// Kinds: KindVigil runs the nodes as `<vigil binary> server <conf>` and
// `<vigil binary> sentinel <conf>` (os.Executable() by default, so nothing but
// Go is needed); KindRedis runs redis-server and redis-sentinel from PATH and
// names the apt package when one is missing.
//
// Processes: Node.Start/Stop/Kill/Pause/Resume/Restart, Addr and Pid. Each
// node leads its own process group (a terminal's Ctrl-C reaches only the
// parent, which stops the nodes in order; signals reach a forked BGSAVE
// child too) and, on Linux, has Pdeathsig SIGKILL set from a thread that
// lives as long as the process, so a killed parent leaves no orphan.
// Deployment.Stop stops the sentinels first, then the servers: SIGTERM, then
// SIGKILL after Spec.StopTimeout.
//
// Health and status: Collect (or a Collector, which keeps its connections)
// asks the sentinels SENTINEL master/replicas/sentinels (discovering the
// other sentinels from one) and every server INFO, and returns a Status with
// roles, pids, offsets, lag in bytes and each sentinel's view; Status.Health
// lists the unmet conditions of a healthy deployment (the master sees every
// replica online, each replica's link is up, each sentinel knows the master,
// every replica and every other sentinel), which WaitHealthy polls for.
// WatchEvents follows the sentinels' pub/sub (PSUBSCRIBE *) and drops the
// same event published by several sentinels. All of it works against any
// deployment, Vigil or Redis.
//
// Partitions: with Spec.Proxy every server gets a fault-injecting TCP proxy
// in this process (Node.PeerPort / PeerAddr) and announces it
// (replica-announce-ip/port; replicas and the sentinels' monitor line point
// at the master's proxy), so everyone, clients included, reaches a server
// through it. Deployment.Partition cuts servers off: their proxies drop
// every byte both ways (peers time out, as with packet loss) until heal,
// which closes the connections that lived through the cut.
// PartitionPeers spares the connections opened from this process (on Linux,
// the peer socket is found among /proc/self/fd), so a drill's clients still
// reach a master cut from its replicas and sentinels. Without Spec.Proxy
// or Spec.Netns, or for a sentinel under Spec.Proxy, both return
// ErrPartitionUnsupported.
//
// With Spec.Netns (Linux, root, ip and nft; NetnsAvailable says why not)
// every node, sentinels included, runs in a network namespace of its own
// (`ip netns exec`) with one veth and its own IP on a 10.A.B.0/24 subnet
// (Node.Host; it binds and announces it). The veths meet on a bridge in a
// further "hub" namespace, which also has a veth to the root namespace, so
// this process reaches every node. Partition adds nftables drop rules for
// the isolated nodes' bridge ports in the hub (real packet loss; heal
// deletes them and TCP retransmits); PartitionPeers spares the port to the
// root namespace, so this process still reaches them. Everything lives in
// namespaces named "vigil-<pid>-<seq>-..." (the root veth "vg<pid>r<seq>"):
// Stop deletes them, New first deletes those of dead processes
// (CleanStaleNetns), and deleting a namespace takes its interfaces, the
// bridge and the rules with it. Deployment.Network says which is in use.
// Spec.SentinelKind runs the sentinels with other binaries than the servers
// (redis-server under vigil-sentinel).
//
// It may import configs, internal/clock, go-redis and the standard library;
// never server, sentinel/daemon or cmd.
package deploy
