// Package benchrepl is the replication benchmark of issue 12 (`just
// bench-repl`): for vigil-server (built from ./cmd/vigil-server) and, in the
// same run, Debian's redis-server:
//
//   - the time of a full sync of VIGIL_BENCH_KEYS keys (a master loaded
//     with them, a fresh replica: from REPLICAOF to the link up with every
//     key), and vigil's time over redis's;
//   - SET throughput at redis-benchmark -P 16 against the master with no
//     replica, then with two replicas attached, and the ratio;
//   - the replicas' lag under that load: the master's master_repl_offset
//     minus each replica's acknowledged offset, sampled every 100 ms (the
//     maximum and the mean, in bytes), and how long the replicas take to
//     catch up once the load stops;
//   - the CPU time (utime+stime of /proc/<pid>/stat) the master spent per
//     request alone and with the two replicas (from the start of the load
//     until they caught up), and its ratio: what the throughput ratio would
//     be if the replicas had cores of their own (on a 2-core machine they
//     share the master's); and the replicas' CPU time per command applied.
//
// TestBenchWait (wait_test.go) is the WAIT latency benchmark of issue 24:
// one client, SET then WAIT 1 1000, one replica, on the four pairings of
// vigil-server and redis-server as master and replica (and the binary in
// VIGIL_BENCH_BASE as both, when set) in rotating rounds
// (VIGIL_BENCH_WAIT_N pairs, VIGIL_BENCH_ROUNDS rounds).
//
// It runs only with VIGIL_BENCH=1 (it is a benchmark: do not run it on a
// shared machine); its test imports only go-redis, the standard library and
// the shared harness integration/benchutil (the servers and redis-benchmark
// are separate processes).
//
//	VIGIL_BENCH_KEYS     keys of the full sync (default 1000000)
//	VIGIL_BENCH_REQUESTS SETs per redis-benchmark run (default 2000000)
//	VIGIL_BENCH_CLIENTS  redis-benchmark connections (default 50)
package benchrepl
