package server

import (
	"bufio"
	"strconv"
	"testing"
	"time"

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

	// tick runs the replica's cron (Vigil's test clock): redis-server starts
	// the stream after a diskless sync only on an ACK that comes after it
	// reaped its save child, and the replica's first ACK can come before;
	// the replica's replicationCron ACKs once a second.
	scenario := func(name string, c *rconn, tick func()) []string {
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
		if !testutil.PollUntil(10*time.Second, func() bool { tick(); return c.do("EXISTS", "after") == "(integer) 1" }) {
			t.Fatalf("%s: timed out waiting for the master's writes to arrive; replica INFO replication:\n%s\nGET number2: %s",
				name, c.do("INFO", "replication"), c.do("GET", "number2"))
		}
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
	redis := scenario("redis", &rconn{t: t, c: rc, br: bufio.NewReader(rc)}, func() {})
	vigil := scenario("vigil", vigilReplica.dial(t), func() { vigilReplica.clk.Advance(100 * time.Millisecond) })
	sameAsRedis(t, "errors sent to the master", redis, vigil, want)
}
