package server

import (
	"testing"
	"time"
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
	m, port := redisMaster(t)
	m.do("DEBUG", "SET-ACTIVE-EXPIRE", "0")
	redis, vigil := replicasOfRedis(t, 50*time.Millisecond, true, func(dial func() *rconn, tag string, tick func()) []string {
		k1, k2 := tag+"1", tag+"2"
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
	})
	want := []string{"+OK", "+OK", "+OK", "+OK", "(integer) 2", "(integer) 1", "(integer) -1", "(nil)",
		"(integer) 2", "+OK", "+OK"}
	sameAsRedis(t, "writable replica write on an expired key", redis, vigil, want)
}
