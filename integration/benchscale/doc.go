// Package benchscale is the scaling benchmark of issue 24 (`just
// bench-scale`): what one write costs in a key that already holds 1 k,
// 100 k or 1 M elements, for each type, on vigil-server and Debian's
// redis-server in the same run. No command may cost more than Redis's
// documented complexity, so vigil/redis must not fall as the size grows.
//
// For each type and size, both servers are filled with the same N-element
// key through `redis-cli --pipe` of single-element commands (the time of
// that load is reported too: a write whose cost grows with N makes it
// quadratic), then each round sends both servers the same --pipe stream of
// M write pairs that keep the size at N: the element added at step i is
// removed N steps later (RPUSH+LPOP, HSET+HDEL, SADD+SREM, ZADD+ZREM), or,
// for a string of N bytes, SETRANGE at a random offset and STRLEN, or, for a
// stream of N entries, XADD with an exact MAXLEN N (the oldest entry goes)
// and XRANGE of 10 entries from a random ID. The two
// servers take turns going first. The figure per server is the median over
// the rounds of redis-cli's wall time; the ratio is the median of the
// rounds' paired ratios redis time / vigil time (above 1: vigil-server is
// faster).
//
//	VIGIL_BENCH=1          required (the benchmark is long)
//	VIGIL_BENCH_SIZES      comma-separated sizes (default 100,1000,100000,1000000: 100 is below the compact encodings' limits)
//	VIGIL_BENCH_TYPES      comma-separated subset of string,list,hash,set,zset,stream
//	VIGIL_BENCH_PAIRS      write pairs per round (default 100000)
//	VIGIL_BENCH_ROUNDS     rounds (default 3)
//	VIGIL_SERVER_BIN       use this vigil-server binary instead of building one
//	VIGIL_BENCH_BASE_BIN   a second vigil-server binary (say main's) run in the same rounds: before and after a change, side by side
package benchscale
