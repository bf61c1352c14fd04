package server

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestLRUFieldAcrossPolicies (interop): Redis keeps a key's LRU clock and
// its LFU data in one field (robj.lru), so after CONFIG SET
// maxmemory-policy a key last accessed under the other policy reads as
// that data misread: OBJECT FREQ of a key set under LRU, OBJECT IDLETIME
// and DEBUG OBJECT's lru and lru_seconds_idle of one set under LFU; RESTORE
// applies FREQ only under LFU and IDLETIME only under LRU. Vigil answers
// as redis-server 7.0.15 (the figures that follow the clock within a
// second, or a minute for the minutes in lru).
func TestLRUFieldAcrossPolicies(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server")
	}
	dial, _ := startRedisAOF(t)
	rc, rbr := dial(2)
	ts := newTestServer(t, "--enable-debug-command", "yes")
	c := ts.client()
	both := func(args ...string) (string, string) {
		t.Helper()
		if d := time.Since(ts.clk.Now()); d > 0 { // the test server's clock follows the real one
			ts.clk.Advance(d)
		}
		return ts.do(c, args...), rawDo(t, rc, rbr, args...)
	}
	same := func(args ...string) string {
		t.Helper()
		got, want := both(args...)
		if got != want {
			t.Fatalf("%q: vigil %q, redis %q", args, got, want)
		}
		return got
	}
	num := func(s string) int64 {
		n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimPrefix(s, ":")), 10, 64)
		return n
	}
	near := func(what string, got, want, tol int64) {
		t.Helper()
		if got < want-tol || got > want+tol {
			t.Errorf("%s: vigil %d, redis %d", what, got, want)
		}
	}
	fields := regexp.MustCompile(`lru:(\d+) lru_seconds_idle:(\d+)`)
	debugLRU := func(key string) {
		t.Helper()
		got, want := both("DEBUG", "OBJECT", key)
		g, w := fields.FindStringSubmatch(got), fields.FindStringSubmatch(want)
		if g == nil || w == nil {
			t.Fatalf("DEBUG OBJECT %s: vigil %q, redis %q", key, got, want)
		}
		gl, _ := strconv.ParseInt(g[1], 10, 64)
		wl, _ := strconv.ParseInt(w[1], 10, 64)
		gi, _ := strconv.ParseInt(g[2], 10, 64)
		wi, _ := strconv.ParseInt(w[2], 10, 64)
		near("DEBUG OBJECT "+key+" lru", gl, wl, 256)
		near("DEBUG OBJECT "+key+" lru_seconds_idle", gi, wi, 2)
	}
	same("FLUSHALL")
	same("SET", "src", "v")
	dump := bulkOf(t, rawDo(t, rc, rbr, "DUMP", "src"))

	same("CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
	same("SET", "a", "v")
	same("RESTORE", "r1", "0", dump, "FREQ", "100") // ignored under LRU
	same("RESTORE", "r2", "0", dump, "IDLETIME", "1000")
	debugLRU("a")
	same("CONFIG", "SET", "maxmemory-policy", "allkeys-lfu")
	same("OBJECT", "FREQ", "a") // the LRU clock read as LFU data
	same("OBJECT", "FREQ", "r1")
	same("SET", "b", "v")
	same("OBJECT", "FREQ", "b")
	same("RESTORE", "r3", "0", dump, "FREQ", "100")
	same("RESTORE", "r4", "0", dump, "IDLETIME", "1000") // ignored under LFU
	same("OBJECT", "FREQ", "r3")
	same("OBJECT", "FREQ", "r4")
	same("SET", "a", "w") // overwritten under LFU: keeps its field
	same("OBJECT", "FREQ", "a")
	debugLRU("b")
	same("CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
	for _, k := range []string{"b", "r3", "r4", "r2"} {
		got, want := both("OBJECT", "IDLETIME", k)
		near("OBJECT IDLETIME "+k, num(got), num(want), 2)
		debugLRU(k)
	}
	same("GET", "b") // an access under LRU writes the clock again
	same("OBJECT", "IDLETIME", "b")
	same("CONFIG", "SET", "maxmemory-policy", "noeviction")
}
