package server

import (
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/testutil"
)

// TestPartialResyncKeepsMasterDB is what integration/psync2.tcl found: a
// replica whose master link is killed (CLIENT KILL TYPE master) and which
// resumes with +CONTINUE keeps the database its master's stream selected
// last, as Redis resurrects the cached master client with its db; the
// master sends no SELECT again. Vigil's new master client started in db
// 0, so the master's INCRs in db 9 went to db 0 on the replica while the
// offsets matched. On redis-server 7.0.15 and on Vigil as replicas of a
// redis-server master.
func TestPartialResyncKeepsMasterDB(t *testing.T) {
	m, port := redisMaster(t)
	m.do("SELECT", "9")
	redis, vigil := replicasOfRedis(t, 10*time.Millisecond, false, func(dial func() *rconn, key string, tick func()) []string {
		c := dial()
		out := []string{c.do("SELECT", "9"), c.do("REPLICAOF", "127.0.0.1", port)}
		linkUp := func() bool { tick(); return liveInfoField(t, c, "replication", "master_link_status") == "up" }
		eventually(t, "the replica's link to be up", linkUp)
		out = append(out, m.do("SET", key, "1"))
		eventually(t, "the SET to reach the replica", func() bool { tick(); return c.do("GET", key) == `"1"` })
		partial := liveInfoField(t, m, "stats", "sync_partial_ok")
		out = append(out, c.do("CLIENT", "KILL", "TYPE", "master"))
		eventually(t, "a partial resync", func() bool {
			tick()
			return liveInfoField(t, m, "stats", "sync_partial_ok") != partial && linkUp()
		})
		out = append(out, m.do("INCR", key))
		testutil.PollUntil(10*time.Second, func() bool { tick(); return c.do("GET", key) == `"2"` })
		out = append(out, c.do("GET", key), c.do("SELECT", "0"), c.do("EXISTS", key), c.do("REPLICAOF", "NO", "ONE"))
		return out
	})
	want := []string{"+OK", "+OK", "+OK", "(integer) 1", "(integer) 2", `"2"`, "+OK", "(integer) 0", "+OK"}
	sameAsRedis(t, "partial resync in db 9", redis, vigil, want)
}
