package server

import (
	"bufio"
	"testing"

	"github.com/vigil-kv/vigil/internal/testutil"
)

// TestConnectedClientsExcludesReplicas: INFO's connected_clients does not
// count the replicas' connections (listLength(server.clients) -
// listLength(server.slaves)); Vigil counted them (shutdown.tcl asserts
// connected_clients:3 on a master with a replica and three clients). On
// redis-server 7.0.15 and Vigil, a raw replica in wait_bgsave.
func TestConnectedClientsExcludesReplicas(t *testing.T) {
	testutil.NeedRedis(t)
	scenario := func(dial func() *rconn) []string {
		c, r := dial(), dial()
		if got := r.do("PING"); got != "+PONG" {
			t.Fatalf("PING: %s", got)
		}
		before := liveInfoField(t, c, "clients", "connected_clients")
		r.send("REPLCONF", "listening-port", "1234")
		if got := r.read(); got != "+OK" {
			t.Fatalf("REPLCONF: %s", got)
		}
		r.send("PSYNC", "?", "-1")
		eventually(t, "the replica to be registered", func() bool {
			return liveInfoField(t, c, "replication", "connected_slaves") == "1"
		})
		return []string{before, liveInfoField(t, c, "clients", "connected_clients")}
	}
	rs := testutil.StartRedis(t, testutil.RedisOptions{})
	redis := scenario(func() *rconn {
		rc := rs.Dial(t)
		t.Cleanup(func() { rc.Close() })
		return &rconn{t: t, c: rc, br: bufio.NewReader(rc)}
	})
	l := startLive(t)
	vigil := scenario(func() *rconn { return l.dial(t) })
	sameAsRedis(t, "connected_clients with a replica", redis, vigil, []string{"2", "1"})
}
