package server

import (
	"testing"
	"time"
)

// TestConfigSetMaxmemoryInMulti is maxmemory.tcl's "propagation with
// eviction in MULTI" (external:skip), on Vigil and redis-server 7.0.15: a
// CONFIG SET maxmemory inside MULTI evicts nothing before EXEC ends
// (updateMaxmemory only starts the eviction time event), so the second
// INCR finds the key; the key is evicted after. Vigil evicted in the
// middle of the transaction (EXEC gave 1 OK 1).
func TestConfigSetMaxmemoryInMulti(t *testing.T) {
	l, dialRedis := startLiveBesideRedis(t)
	scenario := func(c *rconn, tick func()) []string {
		out := []string{c.do("CONFIG", "SET", "maxmemory-policy", "allkeys-lru"),
			c.do("MULTI"), c.do("INCR", "x"), c.do("CONFIG", "SET", "maxmemory", "1"), c.do("INCR", "x"), c.do("EXEC")}
		eventually(t, "x to be evicted", func() bool {
			tick()
			return c.do("DBSIZE") == "(integer) 0"
		})
		return append(out, c.do("CONFIG", "SET", "maxmemory", "0"), c.do("CONFIG", "SET", "maxmemory-policy", "noeviction"))
	}
	redis := scenario(dialRedis(), func() {})
	vigil := scenario(l.dial(t), func() { l.clk.Advance(10 * time.Millisecond) })
	want := []string{"+OK", "+OK", "+QUEUED", "+QUEUED", "+QUEUED", "[(integer) 1, +OK, (integer) 2]", "+OK", "+OK"}
	sameAsRedis(t, "CONFIG SET maxmemory in MULTI", redis, vigil, want)
}
