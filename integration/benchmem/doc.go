// Package benchmem is the memory benchmark of issue 10 (`just bench-mem`):
// for each dataset (1 M small strings, a 1 M-field hash, a 1 M-member set,
// a 1 M-member sorted set) a fresh vigil-server (built from
// ./cmd/vigil-server) and a fresh Debian redis-server get the same data
// through pipelined commands, then each process's resident memory (VmRSS of
// /proc/PID/status) is read and printed side by side with the ratio
// vigil/redis (target: <= 1.3 for each dataset). It runs only with
// VIGIL_BENCH=1; its test imports only the standard library (the servers
// are separate processes, fed raw RESP).
//
//	VIGIL_BENCH_N        elements per dataset (default 1000000)
//	VIGIL_BENCH_DATASETS comma-separated subset of strings,hash,set,zset
//	VIGIL_SERVER_BIN     use this vigil-server binary instead of building one
package benchmem
