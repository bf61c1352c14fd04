// Package up is the Ginkgo suite of `vigil up` and `vigil status` as a user
// runs them: it builds cmd/vigil with gexec, starts a deployment of Debian's
// redis-server and redis-sentinel (`--server redis`) on free loopback ports
// with --json, kills the master and watches the failover in the JSON lines,
// asks `vigil status`, and checks Ctrl-C (and a SIGKILL of `vigil up`)
// leaves no process behind. Specs skip when redis-server or redis-sentinel
// are not installed; `--server vigil` specs need replication and skip, with
// "needs replication (issue 12)", until a probe finds a replica replicating.
//
// It may import internal/deploy (for the JSON types), go-redis, Ginkgo and
// Gomega; nothing imports it.
package up
