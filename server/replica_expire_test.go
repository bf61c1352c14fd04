package server

import (
	"bufio"
	"strconv"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/testutil"
)

// TestWritableReplicaExpiresOwnKeys is expire.tcl's "expired key which is
// created in writeable replicas should be deleted by active expiry" (an
// external:skip test), on a Vigil replica and a redis-server 7.0.15
// replica of the same redis-server master: a key that a client of a
// writable replica (replica-read-only no) gives a TTL is remembered
// (rememberSlaveKeyWithExpire: INFO's slave_expires_tracked_keys) and,
// once expired, deleted by the replica's cron (expireSlaveKeys), counted in
// expired_keys; the master sends no DEL for a key it does not have. Lazily
// it only reads as missing, as any key on a replica. FLUSHALL forgets the
// remembered keys. Vigil ran no expiry at all on a replica, so such a key
// stayed forever, and slave_expires_tracked_keys was always 0.
func TestWritableReplicaExpiresOwnKeys(t *testing.T) {
	testutil.NeedRedis(t)
	master := testutil.StartRedis(t, testutil.RedisOptions{TCP: true})
	port := strconv.Itoa(master.Port)
	redisReplica := testutil.StartRedis(t, testutil.RedisOptions{Args: []string{"--enable-debug-command", "yes"}})
	vigilReplica := startLive(t, "--enable-debug-command", "yes")

	scenario := func(c *rconn, tick func()) []string {
		var out []string
		step := func(args ...string) { out = append(out, c.do(args...)) }
		info := func(field string) { out = append(out, field+"="+liveInfoField(t, c, "stats", field)) }
		step("REPLICAOF", "127.0.0.1", port)
		eventually(t, "the replica's link to be up", func() bool {
			return liveInfoField(t, c, "replication", "master_link_status") == "up"
		})
		step("CONFIG", "SET", "replica-read-only", "no")
		step("DEBUG", "SET-ACTIVE-EXPIRE", "0")
		step("SET", "foo", "bar", "PX", "1")
		step("SET", "bar", "v", "EX", "100")
		step("SET", "baz", "v")
		step("PEXPIRE", "baz", "1")
		step("SET", "plain", "v")
		eventually(t, "foo and baz to read as expired", func() bool {
			tick()
			return c.do("EXISTS", "foo", "baz") == "(integer) 0"
		})
		step("DBSIZE") // logically expired, still there
		info("slave_expires_tracked_keys")
		info("expired_keys")
		step("DEBUG", "SET-ACTIVE-EXPIRE", "1")
		eventually(t, "the cron to delete foo and baz", func() bool {
			tick()
			return c.do("DBSIZE") == "(integer) 2"
		})
		info("slave_expires_tracked_keys")
		info("expired_keys")
		step("EXISTS", "bar")
		step("FLUSHALL")
		info("slave_expires_tracked_keys")
		step("REPLICAOF", "NO", "ONE")
		return out
	}
	want := []string{"+OK", "+OK", "+OK", "+OK", "+OK", "+OK", "(integer) 1", "+OK", "(integer) 4",
		"slave_expires_tracked_keys=3", "expired_keys=0", "+OK",
		"slave_expires_tracked_keys=1", "expired_keys=2", "(integer) 1", "+OK",
		"slave_expires_tracked_keys=0", "+OK"}
	rc := redisReplica.Dial(t)
	t.Cleanup(func() { rc.Close() })
	redis := scenario(&rconn{t: t, c: rc, br: bufio.NewReader(rc)}, func() {})
	// Vigil's test server runs on a fake clock: time (and its cron) moves
	// when the test says.
	vigil := scenario(vigilReplica.dial(t), func() { vigilReplica.clk.Advance(10 * time.Millisecond) })
	sameAsRedis(t, "writable replica's own TTLs", redis, vigil, want)
}
