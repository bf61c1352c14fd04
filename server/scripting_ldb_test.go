package server

import (
	"strings"
	"testing"
)

// The Lua debugger's sync sessions, driven with raw RESP on Vigil and on
// redis-server 7.0.15 side by side: every reply (the log arrays of status
// lines, <endsession>, the EVAL reply, the closed connection) must be the
// same bytes' rendering.

const ldbScript = `local a = 1
redis.debug(a, "x\n", {1,2}, {x=1})
local t = {1,2,3}
redis.call('set', KEYS[1], ARGV[1])
redis.breakpoint()
for i=1,2 do
  a = a + i
end
redis.pcall('lpush', KEYS[1], 'x')
return redis.call('get', KEYS[1])
`

// ldbRun runs a session: SCRIPT DEBUG SYNC, EVAL, then each debugger
// command; it returns every reply read, and whether the server closed
// the connection after the last.
func ldbRun(t *testing.T, c *rconn, script string, steps [][]string, tail int) []string {
	t.Helper()
	out := []string{c.do("SCRIPT", "DEBUG", "SYNC")}
	out = append(out, c.do("EVAL", script, "1", "k1", "v1"))
	for _, s := range steps {
		out = append(out, c.do(s...))
	}
	for i := 0; i < tail; i++ { // <endsession> was read: the EVAL reply
		out = append(out, c.read())
	}
	if c.closed() {
		out = append(out, "<closed>")
	}
	return out
}

func TestLuaDebuggerSyncLikeRedis(t *testing.T) {
	l, dialRedis := startLiveBesideRedis(t)
	cases := []struct {
		name   string
		script string
		steps  [][]string
		tail   int
		want   []string // substrings expected in Redis's replies, in order
	}{
		{"inspect", ldbScript, [][]string{
			{"s"}, {"p"}, {"p", "a"}, {"p", "KEYS"}, {"p", "nope"}, {"b", "7"}, {"b"}, {"l"}, {"l", "3", "1"}, {"w"}, {"t"},
			{"e", "1+1"}, {"e", "a+1"}, {"e", "bad("}, {"r", "get", "k1"}, {"r", "ping"}, {"m", "10"}, {"m"}, {"m", "0"},
			{"bogus"}, {"h"}, {"b", "-7"}, {"b", "-7"}, {"b", "0"}, {"b", "x"}, {"b", "99"},
			{"s"}, {"s"}, {"s"}, {"c"}, {"s"}, {"s"}, {"s"}, {"s"}, {"s"}, {"s"}, {"s"},
		}, 1, []string{"Stopped at 1", "<value> a = 1", "{\"k1\"}", "redis.breakpoint() called", "<endsession>"}},
		{"abort", ldbScript, [][]string{{"s"}, {"a"}}, 1, []string{"script aborted for user request"}},
		{"continue", "return {1,'a'}\n", [][]string{{"c"}}, 1, []string{"<endsession>"}},
		{"breakpoint", ldbScript, [][]string{{"b", "7"}, {"c"}, {"p", "i"}, {"c"}, {"p", "i"}, {"c"}, {"p", "i"}, {"c"}}, 1, []string{"break point"}},
		{"callerror", "redis.call('incr','x','y')\n", [][]string{{"s"}}, 1, []string{"Wrong number of args"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := dialRedis()
			r.t = t
			r.do("FLUSHALL")
			redis := ldbRun(t, r, tc.script, tc.steps, tc.tail)
			v := l.dial(t)
			v.do("FLUSHALL")
			vigil := ldbRun(t, v, tc.script, tc.steps, tc.tail)
			all := strings.Join(redis, "\n")
			for _, w := range tc.want {
				if !strings.Contains(all, w) {
					t.Errorf("redis's session lacks %q:\n%s", w, all)
				}
			}
			if len(redis) != len(vigil) {
				t.Fatalf("redis %d replies, vigil %d:\nredis %q\nvigil %q", len(redis), len(vigil), redis, vigil)
			}
			for i := range redis {
				if redis[i] != vigil[i] {
					t.Errorf("reply %d:\nredis %q\nvigil %q", i, redis[i], vigil[i])
				}
			}
		})
	}
}

// Outside a session redis.debug does nothing and redis.breakpoint is
// false; EVALSHA and SCRIPT DEBUG YES answer errors.
func TestLuaDebuggerOutsideSession(t *testing.T) {
	l, dialRedis := startLiveBesideRedis(t)
	for _, c := range []*rconn{dialRedis(), l.dial(t)} {
		if got := c.do("EVAL", "redis.debug('x') return redis.breakpoint()", "0"); got != c.do("EVAL", "return false", "0") {
			t.Errorf("breakpoint outside a session: %q", got)
		}
		c.do("SCRIPT", "DEBUG", "NO")
		if got := c.do("SCRIPT", "DEBUG", "maybe"); !strings.Contains(got, "Use SCRIPT DEBUG YES/SYNC/NO") {
			t.Errorf("SCRIPT DEBUG maybe: %q", got)
		}
	}
	v := l.dial(t)
	if got := v.do("SCRIPT", "DEBUG", "YES"); !strings.Contains(got, "not supported") {
		t.Errorf("SCRIPT DEBUG YES: %q", got)
	}
	r := dialRedis()
	for _, c := range []*rconn{r, v} {
		sha := c.do("SCRIPT", "LOAD", "return 1")
		c.do("SCRIPT", "DEBUG", "SYNC")
		got := c.do("EVALSHA", strings.Trim(sha, "\"+$"), "0")
		if !strings.Contains(got, "Please use EVAL instead of EVALSHA for debugging") {
			t.Errorf("EVALSHA in debug mode: %q (sha %q)", got, sha)
		}
	}
}
