// Package up is the Ginkgo suite of `vigil up` and `vigil status` as a user
// runs them: it builds cmd/vigil with gexec, starts a deployment of Debian's
// redis-server and redis-sentinel (`--server redis`) on free loopback ports
// with --json, kills the master and watches the failover in the JSON lines,
// asks `vigil status`, and checks Ctrl-C (and a SIGKILL of `vigil up`)
// leaves no process behind. Specs skip when redis-server or redis-sentinel
// are not installed. The `--server vigil` spec (the README's first command,
// no Debian package needed) starts vigil-server and vigil-sentinel, kills the
// master and waits for +switch-master, then stops on SIGINT.
//
// It may import internal/deploy (for the JSON types), go-redis, Ginkgo and
// Gomega; nothing imports it.
package up
