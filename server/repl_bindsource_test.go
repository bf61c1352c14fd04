package server

import (
	"bufio"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/testutil"
)

// TestReplicaBindSourceAddr is networking.tcl's "CONFIG SET
// bind-source-addr" (external:skip): a replica with bind-source-addr
// 127.0.0.2 connects to its master from that address, so the master lists
// it with ip=127.0.0.2. The master is redis-server 7.0.15, the replicas
// redis-server and vigil-server. Vigil ignored the directive.
func TestReplicaBindSourceAddr(t *testing.T) {
	testutil.NeedRedis(t)
	// A master of its own for each replica: its slave0 is that replica.
	scenario := func(c *rconn) []string {
		master := testutil.StartRedis(t, testutil.RedisOptions{TCP: true, Args: []string{"--protected-mode", "no", "--repl-diskless-sync-delay", "0"}})
		mc := master.Dial(t)
		t.Cleanup(func() { mc.Close() })
		m := &rconn{t: t, c: mc, br: bufio.NewReader(mc)}
		out := []string{c.do("CONFIG", "SET", "bind-source-addr", "127.0.0.2"), c.do("CONFIG", "GET", "bind-source-addr"),
			c.do("REPLICAOF", "127.0.0.1", strconv.Itoa(master.Port))}
		if !testutil.PollUntil(30*time.Second, func() bool {
			return liveInfoField(t, c, "replication", "master_link_status") == "up"
		}) {
			out = append(out, "link never up")
		}
		slave := liveInfoField(t, m, "replication", "slave0")
		out = append(out, "ip from 127.0.0.2: "+strconv.FormatBool(strings.Contains(slave, "ip=127.0.0.2,")))
		return append(out, c.do("REPLICAOF", "NO", "ONE"))
	}
	r := testutil.StartRedis(t, testutil.RedisOptions{})
	rc := r.Dial(t)
	t.Cleanup(func() { rc.Close() })
	redis := scenario(&rconn{t: t, c: rc, br: bufio.NewReader(rc)})
	vigil := scenario(startLive(t).dial(t))
	sameAsRedis(t, "bind-source-addr", redis, vigil,
		[]string{"+OK", `["bind-source-addr", "127.0.0.2"]`, "+OK", "ip from 127.0.0.2: true", "+OK"})
}
