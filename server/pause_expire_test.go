package server

import (
	"bufio"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/testutil"
)

// TestPauseKeepsExpiredKeys compares with redis-server 7.0.15: while CLIENT
// PAUSE is in effect, an expired key reads as missing but is
// not deleted (expireIfNeeded returns 1 without deleting when clients are
// paused), so DBSIZE still counts it during and after the pause; once
// unpaused, a read deletes it.
func TestPauseKeepsExpiredKeys(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server")
	}
	r := testutil.StartRedis(t, testutil.RedisOptions{Args: []string{"--enable-debug-command", "yes"}})
	rc := r.Dial(t)
	rbr := bufio.NewReader(rc)
	ts := newTestServer(t, "--enable-debug-command", "yes")
	vc := ts.client()
	both := func(args ...string) {
		t.Helper()
		want := rawDo(t, rc, rbr, args...)
		if got := ts.do(vc, args...); got != want {
			t.Fatalf("%q: vigil %q, redis %q", args, got, want)
		}
	}
	both("DEBUG", "SET-ACTIVE-EXPIRE", "0")
	for _, round := range []int{1, 2} {
		both("FLUSHALL")
		both("SET", "k", "v", "PX", "20")
		both("SET", "k2", "v", "PX", "20")
		both("SET", "keep", "v")
		// Expire both sides' keys: the oracle's real clock, Vigil's fake one.
		time.Sleep(30 * time.Millisecond)
		ts.clk.Advance(30 * time.Millisecond)
		both("CLIENT", "PAUSE", "100000", "WRITE")
		both("EXISTS", "k")
		both("GET", "k2")
		if round == 1 {
			both("SCAN", "0")
			both("KEYS", "*")
			both("TTL", "k")
			both("MULTI")
			both("GET", "k")
			both("EXEC")
		}
		both("DBSIZE") // 3: nothing deleted
		both("CLIENT", "UNPAUSE")
		both("DBSIZE") // still 3 after the pause
		both("EXISTS", "k")
		both("DBSIZE") // 2: the read after the pause deleted k
	}
	both("DEBUG", "SET-ACTIVE-EXPIRE", "1")
}
