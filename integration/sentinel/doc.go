// Package sentinel holds the Ginkgo suites that run sentinels as processes
// against replicated data servers and check them with go-redis: discovery,
// failover on SIGKILL and SIGSTOP, manual SENTINEL FAILOVER, mixed quorums of
// vigil-sentinel and redis-sentinel, configuration rewrite and a failover-time
// benchmark.
//
// Both binaries are parameters:
//
//	VIGIL_SENTINEL_BIN     the sentinel under test; default: gexec.Build of
//	                       ./cmd/vigil-sentinel (specs skip while it does not
//	                       build). VIGIL_SENTINEL_BIN=/usr/bin/redis-sentinel
//	                       checks the specs themselves.
//	VIGIL_DATA_SERVER_BIN  the data server (master and replicas); default
//	                       /usr/bin/redis-server (CI runs the suite again
//	                       over vigil-server). Specs skip when it is absent.
//	REDIS_SENTINEL_BIN     the reference sentinel for the mixed-quorum specs
//	                       and the benchmark; default redis-sentinel on PATH.
//	VIGIL_BENCH=1          enables the failover-time benchmark (label "bench",
//	                       `just bench-failover`); VIGIL_BENCH_RUNS sets the
//	                       number of runs per sentinel kind (default 5).
//	VIGIL_BENCH_REF_DATA_SERVER_BIN  the data server of the benchmark's
//	                       redis-sentinel runs (default: the suite's), so
//	                       that one run compares whole stacks (`just
//	                       bench-failover-stacks`: vigil-sentinel over
//	                       vigil-server, redis-sentinel over redis-server).
//
// Every spec starts fresh processes on free loopback ports, registers every
// stop with DeferCleanup and waits with Eventually and explicit timeouts;
// sentinels run with down-after-milliseconds 1000 and failover-timeout 5000,
// and with the short SENTINEL DEBUG timers of Redis's own tests (Tune: INFO
// every second, hellos every 500 ms), which only shorten the waits; the
// failover benchmark keeps the default timers.
// The exception is "Sentinel scenarios" (scenarios_test.go): Redis's own
// sentinel tests (00-base to 13-info-command) as one Ordered list over a
// long-lived deployment of 5 sentinels, a master and 4 replicas, each
// scenario starting from the state the previous one left; it runs once with
// 5 sentinels under test and once with 3 under test plus 2 redis-sentinel
// (down-after-milliseconds 2000, SENTINEL DEBUG timers as Redis's tests set
// them). Labels: "interop" (needs Debian's redis-server/redis-sentinel),
// "failover" (kills or stops an instance), "slow" (more than a few seconds),
// "scenarios", "bench".
//
// The package imports ginkgo, gomega, go-redis, the standard library and
// github.com/vigil-kv/vigil/integration (its process helpers); it drives the
// sentinels only through their binaries and sockets.
package sentinel
