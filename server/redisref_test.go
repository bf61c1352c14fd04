package server

import (
	"bufio"
	"net"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/testutil"
)

// redisServerBin is Debian's redis-server 7.0.15, the oracle of the
// differential tests.
const redisServerBin = testutil.RedisBin

// redisDialer dials r on demand: a RESP2 connection, or RESP3 after
// HELLO 3; the test's cleanup closes each.
func redisDialer(t *testing.T, r *testutil.Redis) func(proto int) (net.Conn, *bufio.Reader) {
	return func(proto int) (net.Conn, *bufio.Reader) {
		c := r.Dial(t)
		br := bufio.NewReader(c)
		if proto == 3 {
			rawDo(t, c, br, "HELLO", "3")
		}
		return c, br
	}
}

// startRedis starts redis-server on a unix socket and returns a dialer, or
// skips the test when it is not installed.
func startRedis(t *testing.T) func(proto int) (net.Conn, *bufio.Reader) {
	t.Helper()
	return redisDialer(t, testutil.StartRedis(t, testutil.RedisOptions{}))
}

// startRedisOracle starts redis-server on a unix socket (no TCP port, no
// persistence) with directives ("--name", "value", ...) and returns the
// socket path. It makes no connection: see dialOracle.
func startRedisOracle(t *testing.T, directives []string) string {
	t.Helper()
	return testutil.StartRedis(t, testutil.RedisOptions{Args: directives}).Sock
}

// dialOracle connects to the oracle, retrying while it starts. There is
// no separate readiness probe: a probe connection would take a client id
// and could still be listed by CLIENT LIST when the script starts. The
// caller closes the connection.
func dialOracle(t *testing.T, sock string) *diffConn {
	t.Helper()
	var c net.Conn
	var err error
	if !testutil.PollUntil(10*time.Second, func() bool { c, err = net.Dial("unix", sock); return err == nil }) {
		t.Fatalf("redis-server did not start: %v", err)
	}
	return &diffConn{c: c, br: bufio.NewReader(c)}
}

// startRedisIn starts redis-server 7.0 with dir (loading its dump.rdb) and
// returns a connection once the load has ended.
func startRedisIn(t *testing.T, dir string) (net.Conn, *bufio.Reader) {
	t.Helper()
	r := testutil.StartRedis(t, testutil.RedisOptions{Dir: dir, WaitLoaded: true,
		Args: []string{"--enable-debug-command", "yes"}})
	c := r.Dial(t)
	return c, bufio.NewReader(c)
}
