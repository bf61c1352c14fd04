// Package benchsave is the no-stop-the-world benchmark of issue 11 (`just
// bench-save`): vigil-server (built from ./cmd/vigil-server) and Debian's
// redis-server each get the same dataset, then GET/SET latency and
// throughput are measured without a save and while BGSAVE runs, with the
// BGSAVE duration and each server process's RSS growth during the save.
// It runs only with VIGIL_BENCH=1; its test imports only go-redis, the
// standard library and the shared harness integration/benchutil (the servers
// are separate processes).
//
//	VIGIL_BENCH_KEYS     keys loaded (default 1000000)
//	VIGIL_BENCH_SECONDS  length of the no-save phase (default 5)
//	VIGIL_BENCH_CLIENTS  concurrent clients (default 8)
//	VIGIL_BENCH_PIPELINE commands per round trip (default 1)
package benchsave
