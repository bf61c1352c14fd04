// Package benchutil is the harness the process benchmarks under integration/
// (benchsave, benchrepl, ...) share: it reads their VIGIL_BENCH_* knobs,
// builds vigil-server, finds Debian's redis-server, starts either on a free
// loopback port with persistence off, loads a dataset and reads INFO and the
// process's RSS. What a benchmark measures and prints stays in its own
// package.
//
// A benchmark's test typically reads:
//
//	benchutil.SkipUnlessEnabled(t, "just bench-x", "the X benchmark")
//	keys := benchutil.EnvInt("VIGIL_BENCH_KEYS", 1000000)
//	for _, b := range benchutil.Binaries(t) { // vigil, then redis when installed
//		s := benchutil.Start(t, b.Name, b.Path, redis.Options{})
//		s.Load(t, keys, benchutil.ConstValue(32))
//		... measure s.Client, s.Info("memory"), s.RSSKB() ...
//		s.Stop()
//	}
//
// It imports only go-redis and the standard library: the servers are separate
// processes, driven through their sockets.
package benchutil
