package server

import (
	"strconv"
	"strings"
	"testing"

	"github.com/vigil-kv/vigil/internal/testutil"
)

// TestDebugSdsLenMallctlDiff compares DEBUG SDSLEN, MALLCTL and MALLCTL-STR
// (and their errors) with redis-server 7.0.15's replies, for strings written
// by SET (int, embstr, raw, big arguments), APPEND and SETRANGE growing an
// embstr, INCRBYFLOAT and the HyperLogLog commands. (Like MEMORY USAGE,
// SDSLEN models a string grown in place as one greedy growth past its
// block: a growth that fits the block Redis had, a SETRANGE creating the
// key or successive APPENDs can show other sizes; String.Size says so.)
func TestDebugSdsLenMallctlDiff(t *testing.T) {
	dial := redisDialer(t, testutil.StartRedis(t, testutil.RedisOptions{Args: []string{"--enable-debug-command", "yes"}}))
	rc, rbr := dial(2)
	ts := newTestServer(t, "--enable-debug-command", "yes")
	vc := ts.client()
	both := func(args ...string) {
		t.Helper()
		want := rawDo(t, rc, rbr, args...)
		if got := ts.do(vc, args...); got != want {
			t.Fatalf("%q:\nvigil %q\nredis %q", strings.Join(args, " "), got, want)
		}
	}
	str := func(n int) string { return strings.Repeat("x", n) }
	key := func(n int) string { return "k" + strings.Repeat("y", n) }
	for _, n := range []int{0, 1, 5, 20, 31, 32, 40, 44, 45, 60, 100, 200, 255, 256, 300, 1000, 5000, 40000, 70000} {
		k := key(n % 300)
		both("SET", k, str(n))
		both("DEBUG", "SDSLEN", k)
		if n == 0 || n > 44 {
			continue // see below
		}
		both("SET", "a"+k, str(n))
		both("APPEND", "a"+k, strings.Repeat("z", n+1))
		both("DEBUG", "SDSLEN", "a"+k)
		both("SET", "r"+k, str(n))
		both("SETRANGE", "r"+k, strconv.Itoa(n), strings.Repeat("z", n+1))
		both("DEBUG", "SDSLEN", "r"+k)
	}
	for _, v := range []string{"0", "12", "-7", "12345678901234567890", "3.5"} {
		both("SET", "num", v)
		both("DEBUG", "SDSLEN", "num")
	}
	both("INCRBYFLOAT", "f", "1.25")
	both("DEBUG", "SDSLEN", "f")
	both("PFADD", "hll", "a", "b", "c")
	both("DEBUG", "SDSLEN", "hll")
	both("RPUSH", "list", "a")
	both("DEBUG", "SDSLEN", "list")
	both("DEBUG", "SDSLEN", "missing")
	both("DEBUG", "SDSLEN")
	for _, args := range [][]string{
		{"MALLCTL", "no.such.name"}, {"MALLCTL", "x", "12"}, {"MALLCTL", "x", "nan"}, {"MALLCTL", "x", "1", "2"},
		{"MALLCTL"}, {"MALLCTL-STR", "no.such.name"}, {"MALLCTL-STR", "x", "VOID"}, {"MALLCTL-STR"},
		{"RESTART", "abc"}, {"CRASH-AND-RECOVER", "1.5"},
	} {
		both(append([]string{"DEBUG"}, args...)...)
	}
}
