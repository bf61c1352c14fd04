package server

import (
	"bufio"
	"strconv"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/testutil"
)

// TestWritableReplicaWriteExpires is integration/replication-3.tcl's
// "Writable replica doesn't return expired keys": on a replica with
// replica-read-only no, a client's write command deletes an expired key it
// looks up (lookupKeyWrite's force_delete_expired), so INCR recreates it
// without the master's TTL, while a read only hides an expired key and
// leaves it in DBSIZE. Vigil kept the key and its TTL (TTL -2 after INCR).
// On redis-server 7.0.15 and on Vigil as replicas of a redis-server master
// with active expiry off.
func TestWritableReplicaWriteExpires(t *testing.T) {
	testutil.NeedRedis(t)
	master := testutil.StartRedis(t, testutil.RedisOptions{TCP: true})
	port := strconv.Itoa(master.Port)
	mc := master.Dial(t)
	t.Cleanup(func() { mc.Close() })
	m := &rconn{t: t, c: mc, br: bufio.NewReader(mc)}
	m.do("DEBUG", "SET-ACTIVE-EXPIRE", "0")
	scenario := func(dial func() *rconn, k1, k2 string, tick func()) []string {
		c := dial()
		out := []string{c.do("REPLICAOF", "127.0.0.1", port)}
		eventually(t, "the replica's link to be up", func() bool {
			tick()
			return liveInfoField(t, c, "replication", "master_link_status") == "up"
		})
		out = append(out, m.do("SET", k1, "5", "PX", "10"), m.do("SET", k2, "5", "PX", "10"))
		eventually(t, "the keys to reach the replica and expire there", func() bool {
			tick()
			return c.do("DBSIZE") == "(integer) 2" && c.do("EXISTS", k1, k2) == "(integer) 0"
		})
		out = append(out,
			c.do("CONFIG", "SET", "replica-read-only", "no"),
			c.do("DBSIZE"),
			c.do("INCR", k1),
			c.do("TTL", k1),
			c.do("GET", k2),
			c.do("DBSIZE"),
			c.do("CONFIG", "SET", "replica-read-only", "yes"),
			c.do("REPLICAOF", "NO", "ONE"))
		m.do("DEL", k1, k2) // 0 or 2: the replica's clock may run ahead of the master's
		return out
	}
	r := testutil.StartRedis(t, testutil.RedisOptions{})
	redis := scenario(func() *rconn {
		rc := r.Dial(t)
		t.Cleanup(func() { rc.Close() })
		return &rconn{t: t, c: rc, br: bufio.NewReader(rc)}
	}, "a1", "a2", func() {})
	l := startLive(t)
	l.clk.Advance(time.Since(l.clk.Now())) // the master's TTLs are on the real clock
	vigil := scenario(func() *rconn { return l.dial(t) }, "b1", "b2", func() { l.clk.Advance(50 * time.Millisecond) })
	want := []string{"+OK", "+OK", "+OK", "+OK", "(integer) 2", "(integer) 1", "(integer) -1", "(nil)",
		"(integer) 2", "+OK", "+OK"}
	sameAsRedis(t, "writable replica write on an expired key", redis, vigil, want)
}
