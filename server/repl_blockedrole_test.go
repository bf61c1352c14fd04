package server

import (
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/testutil"
)

// TestBlockedClientsUnblockedOnReplicaof is replication.tcl's "BLPOP
// followed by role change, issue #2473" (external:skip), on Vigil and
// redis-server 7.0.15 turned into replicas of a redis-server master while
// a client waits in BLPOP: the waiter gets -UNBLOCKED and is disconnected
// (disconnectAllBlockedClients), so the master's RPUSH that follows is not
// popped on the replica. Vigil kept it blocked and served it the pushed
// element from the master's stream: the replica's list then differed from
// the master's.
func TestBlockedClientsUnblockedOnReplicaof(t *testing.T) {
	m, port := redisMaster(t)
	redis, vigil := replicasOfRedis(t, 10*time.Millisecond, false, func(dial func() *rconn, key string, tick func()) []string {
		c, w := dial(), dial()
		w.send("BLPOP", key, "0")
		eventually(t, "the client to block", func() bool {
			return liveInfoField(t, c, "clients", "blocked_clients") == "1"
		})
		out := []string{c.do("REPLICAOF", "127.0.0.1", port)}
		out = append(out, w.read()) // the waiter's reply
		eventually(t, "the replica's link to be up", func() bool {
			return liveInfoField(t, c, "replication", "master_link_status") == "up"
		})
		out = append(out, m.do("RPUSH", key, "a", "b", "c"))
		if !testutil.PollUntil(30*time.Second, func() bool { tick(); return c.do("EXISTS", key) == "(integer) 1" }) {
			t.Errorf("%s: the replica did not apply the RPUSH", key)
		}
		out = append(out, c.do("LRANGE", key, "0", "-1"), c.do("REPLICAOF", "NO", "ONE"))
		return out
	})
	want := []string{"+OK", "-UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)",
		"(integer) 3", `["a", "b", "c"]`, "+OK"}
	sameAsRedis(t, "BLPOP then REPLICAOF", redis, vigil, want)
}
