package server

import (
	"bufio"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/testutil"
)

// TestMasterauthSetAfterReplicaof is auth.tcl's "MASTERAUTH test with
// binary password" (external:skip), on a Vigil replica and a redis-server
// 7.0.15 replica of a redis-server master with requirepass: REPLICAOF
// first, then CONFIG SET masterauth. Redis reads masterauth at each
// connection attempt, so the replica syncs once it is right (and, while
// it is wrong, logs "Unable to AUTH to MASTER"). Vigil kept the
// credentials of the REPLICAOF's time and never authenticated.
func TestMasterauthSetAfterReplicaof(t *testing.T) {
	m, port := redisMaster(t)
	if got := m.do("CONFIG", "SET", "requirepass", "abc\x00def"); got != "+OK" {
		t.Fatalf("CONFIG SET requirepass on the master: %s", got)
	}
	scenario := func(c *rconn) []string {
		out := []string{c.do("REPLICAOF", "127.0.0.1", port), c.do("CONFIG", "SET", "masterauth", "abc\x00def")}
		// Attempts are a second apart (and Redis's first may wait on
		// its failed one): a generous deadline.
		if !testutil.PollUntil(30*time.Second, func() bool {
			return liveInfoField(t, c, "replication", "master_link_status") == "up"
		}) {
			out = append(out, "link never up")
		}
		return append(out, c.do("REPLICAOF", "NO", "ONE"))
	}
	r := testutil.StartRedis(t, testutil.RedisOptions{})
	rc := r.Dial(t)
	t.Cleanup(func() { rc.Close() })
	redis := scenario(&rconn{t: t, c: rc, br: bufio.NewReader(rc)})
	vigil := scenario(startLive(t).dial(t))
	sameAsRedis(t, "masterauth set after REPLICAOF", redis, vigil, []string{"+OK", "+OK", "+OK"})
}
