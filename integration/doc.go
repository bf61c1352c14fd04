// Package integration holds the Ginkgo suites that run the built binaries as
// processes and check them with go-redis as an independent client.
//
// The suite builds ./cmd/vigil-server once (gexec) and starts one server per
// spec on a free loopback port, with `--save "" --appendonly no --dir <tmp>
// --logfile ""`; every process is killed and every temporary directory removed
// by DeferCleanup, and a failed spec prints the server's output. Waits poll
// with Eventually and explicit timeouts; no spec depends on timing.
//
// Set VIGIL_SERVER_BIN to run the specs against another build; running them
// against Debian's redis-server 7.0 checks the specs themselves:
//
//	VIGIL_SERVER_BIN=/usr/bin/redis-server go test ./integration/
//
// Labels: "interop" (needs Debian's redis-tools: redis-cli, redis-benchmark;
// such specs skip when the tools are absent), "slow" (heavy load: mass
// insertion, redis-benchmark, 10 MB of random input), "failover" (kills or
// partitions instances). Select with -ginkgo.label-filter='!slow'.
//
// The suites that run vigil-sentinel or vigil take them from
// VIGIL_SENTINEL_BIN and VIGIL_BIN when set, as they take vigil-server from
// VIGIL_SERVER_BIN (binaries.go), so that .ci/run builds each command once.
//
// The helpers (process.go, raw.go, binaries.go, pushwriter.go) are ordinary
// package code so that the suites in integration/... subpackages can share
// them. The package may
// import ginkgo, gomega (gexec, gbytes), go-redis and the standard library;
// it drives the servers only through their binaries and sockets, never by
// importing server-side packages.
package integration
