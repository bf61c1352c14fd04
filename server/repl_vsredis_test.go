package server

import (
	"bufio"
	"strconv"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/testutil"
)

// redisMaster starts the redis-server 7.0.15 master of the tests that make
// redis-server and Vigil its replicas in turn (replicasOfRedis): a
// connection to it and its TCP port.
func redisMaster(t *testing.T) (m *rconn, port string) {
	t.Helper()
	testutil.NeedRedis(t)
	master := testutil.StartRedis(t, testutil.RedisOptions{TCP: true})
	mc := master.Dial(t)
	t.Cleanup(func() { mc.Close() })
	return &rconn{t: t, c: mc, br: bufio.NewReader(mc)}, strconv.Itoa(master.Port)
}

// replicasOfRedis runs scenario on a fresh redis-server and then on Vigil's
// live test server; the scenario makes each a replica of redisMaster's
// master and returns the replies it compares (sameAsRedis). tag ("r", then
// "v") keeps the two runs' keys apart on the one master. Vigil's server
// runs on a fake clock, which tick advances by step (redis-server's tick
// does nothing); with realNow it is first set to the real time, for TTLs
// the master sets on its own clock.
func replicasOfRedis(t *testing.T, step time.Duration, realNow bool,
	scenario func(dial func() *rconn, tag string, tick func()) []string) (redis, vigil []string) {
	t.Helper()
	r := testutil.StartRedis(t, testutil.RedisOptions{})
	redis = scenario(func() *rconn {
		rc := r.Dial(t)
		t.Cleanup(func() { rc.Close() })
		return &rconn{t: t, c: rc, br: bufio.NewReader(rc)}
	}, "r", func() {})
	l := startLive(t)
	if realNow {
		l.clk.Advance(time.Since(l.clk.Now()))
	}
	vigil = scenario(func() *rconn { return l.dial(t) }, "v", func() { l.clk.Advance(step) })
	return redis, vigil
}
