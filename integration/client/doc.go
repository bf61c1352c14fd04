// Package client holds the Ginkgo suite of the sentinel-aware client
// (github.com/vigil-kv/vigil/client) and its lock (client/lock) against a
// real deployment: Debian's redis-server as master and replicas, and the
// vigil-sentinel built from ./cmd/vigil-sentinel (VIGIL_SENTINEL_BIN picks
// another one, e.g. /usr/bin/redis-sentinel; VIGIL_DATA_SERVER_BIN replaces
// redis-server, e.g. with a built vigil-server).
//
// Data servers are started with the integration package's StartServer;
// sentinels with a small launcher here (integration/sentinel's helpers live
// in its _test files and cannot be imported).
//
//	go test ./integration/client/
//	go test ./integration/client/ -ginkgo.v   # prints the failover timings
//	go build -o /tmp/vigil-server ./cmd/vigil-server &&
//	  VIGIL_DATA_SERVER_BIN=/tmp/vigil-server go test ./integration/client/
package client
