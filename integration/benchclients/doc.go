// Package benchclients is the per-connection memory benchmark of issue 24
// (`just bench-clients`): a fresh vigil-server (built from
// ./cmd/vigil-server) and a fresh Debian redis-server each get the same
// connections, which then stay open and idle; each process's resident
// memory (VmRSS) is read before they connect and once it has settled
// (VIGIL_BENCH_SETTLE seconds after the last one connected, the same for
// both), and printed side by side with the ratio vigil/redis of the
// growth per connection. Scenarios:
//
//   - idle: VIGIL_BENCH_CONNS connections (default 5000) that each sent
//     one PING (a connection pool's);
//   - set16k: VIGIL_BENCH_BIG connections (default 1000) that each sent
//     one pipeline of 16 SETs of 16 KB values (a batch writer's);
//   - get16k: as many that each read 16 GETs of 16 KB values in one
//     pipeline (a batch reader's).
//
// Redis frees an idle client's query buffer after 2 seconds and shrinks
// its reply buffer (clientsCron); so does vigil-server (server/idlebuf.go).
// It runs only with VIGIL_BENCH=1.
//
//	VIGIL_BENCH_CONNS   idle connections (default 5000)
//	VIGIL_BENCH_BIG     connections of the big-value scenarios (default 1000)
//	VIGIL_BENCH_SETTLE  seconds to wait before reading RSS (default 20: jemalloc
//	                    returns freed pages after its 10 s decay)
//	VIGIL_SERVER_BIN    use this vigil-server binary instead of building one
package benchclients
