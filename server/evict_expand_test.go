package server

import (
	"regexp"
	"strconv"
	"testing"
)

var usedMemoryRE = regexp.MustCompile(`used_memory:(\d+)`)

// TestDictExpandUnderMaxmemoryVsRedis is maxmemory.tcl's "Don't rehash if
// used memory exceeds maxmemory after rehash" on Vigil and redis-server
// 7.0.15: the key table holds 4096 keys in 4096 buckets, so the next key
// would double it (64 KB of buckets); with maxmemory 10 KB above the used
// memory, dictExpandAllowed refuses the growth and two more SETs evict
// nothing. Vigil grew the table and the second SET evicted keys.
func TestDictExpandUnderMaxmemoryVsRedis(t *testing.T) {
	l, dialRedis := startLiveBesideRedis(t)
	for name, dial := range map[string]func() *rconn{"redis": dialRedis, "vigil": func() *rconn { return l.dial(t) }} {
		c := dial()
		c.do("CONFIG", "SET", "latency-tracking", "no")
		c.do("CONFIG", "SET", "maxmemory", "0")
		c.do("CONFIG", "SET", "maxmemory-policy", "allkeys-random")
		populateSets(c, 4096)
		m := usedMemoryRE.FindStringSubmatch(c.do("INFO", "memory"))
		if m == nil {
			t.Fatalf("%s: no used_memory", name)
		}
		used, _ := strconv.Atoi(m[1])
		c.do("CONFIG", "SET", "maxmemory", strconv.Itoa(used+10*1024))
		c.do("SET", "k1", "v1")
		c.do("SET", "k2", "v2")
		if got := c.do("DBSIZE"); got != "(integer) 4098" {
			t.Errorf("%s: DBSIZE %s, want 4098 (no eviction)", name, got)
		}
		c.do("CONFIG", "SET", "maxmemory", "0")
		c.do("FLUSHALL")
	}
}

// populateSets is util.tcl's populate n "" 1: SET 0..n-1 to one byte,
// 16 commands in flight.
func populateSets(c *rconn, n int) {
	for j := 0; j < n; j++ {
		c.send("SET", strconv.Itoa(j), "x")
		if j >= 16 {
			c.read()
		}
	}
	for j := max(n-16, 0); j < n; j++ {
		c.read()
	}
}
