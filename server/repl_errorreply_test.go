package server

import (
	"bufio"
	"strconv"
	"testing"

	"github.com/vigil-kv/vigil/internal/testutil"
)

// TestReplicaErrorFromMasterCounted is replication-4.tcl's "Data divergence
// can happen under default conditions" and "... is allowed on writable
// replicas" (external:skip tests), on a Vigil replica and a redis-server
// 7.0.15 replica of the same redis-server master: a command from the master
// that fails on the replica (an unknown command sent by DEBUG REPLICATE, an
// INCRBY of a key the writable replica made a string) is logged as "==
// CRITICAL == This replica is sending an error to its master: ..." and
// counted in INFO's unexpected_error_replies (networking.c's
// afterErrorReply), with propagation-error-behavior ignore. Vigil logged
// nothing and the field was always 0.
func TestReplicaErrorFromMasterCounted(t *testing.T) {
	testutil.NeedRedis(t)
	master := testutil.StartRedis(t, testutil.RedisOptions{TCP: true, Args: []string{"--enable-debug-command", "yes"}})
	port := strconv.Itoa(master.Port)
	mc := master.Dial(t)
	t.Cleanup(func() { mc.Close() })
	m := &rconn{t: t, c: mc, br: bufio.NewReader(mc)}
	redisReplica := testutil.StartRedis(t, testutil.RedisOptions{})
	vigilReplica := startLive(t)

	scenario := func(c *rconn) []string {
		var out []string
		step := func(args ...string) { out = append(out, c.do(args...)) }
		step("REPLICAOF", "127.0.0.1", port)
		eventually(t, "the replica's link to be up", func() bool {
			return liveInfoField(t, c, "replication", "master_link_status") == "up"
		})
		step("CONFIG", "SET", "propagation-error-behavior", "ignore")
		step("CONFIG", "SET", "replica-read-only", "no")
		step("SET", "number2", "foo")
		m.do("DEBUG", "REPLICATE", "fake-command-1")
		m.do("INCRBY", "number2", "1")
		m.do("SET", "after", "x")
		eventually(t, "the master's writes to arrive", func() bool {
			return c.do("EXISTS", "after") == "(integer) 1"
		})
		step("GET", "number2")
		out = append(out, "unexpected_error_replies="+liveInfoField(t, c, "stats", "unexpected_error_replies"))
		step("CONFIG", "RESETSTAT")
		out = append(out, "unexpected_error_replies="+liveInfoField(t, c, "stats", "unexpected_error_replies"))
		step("REPLICAOF", "NO", "ONE")
		m.do("FLUSHALL")
		return out
	}
	want := []string{"+OK", "+OK", "+OK", "+OK", `"foo"`, "unexpected_error_replies=2", "+OK",
		"unexpected_error_replies=0", "+OK"}
	rc := redisReplica.Dial(t)
	t.Cleanup(func() { rc.Close() })
	redis := scenario(&rconn{t: t, c: rc, br: bufio.NewReader(rc)})
	vigil := scenario(vigilReplica.dial(t))
	sameAsRedis(t, "errors sent to the master", redis, vigil, want)
}
