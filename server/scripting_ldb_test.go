package server

import (
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/testutil"
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

const ldbTraceScript = `local function f(x)
  local y = x + 1
  return y
end
local t = {}
function t.m(x)
  local r = f(x)
  return r
end
local o = {}
function o:meth(x)
  local r = t.m(x)
  return r
end
local r = o:meth(1)
local r2 = pcall(f, 2)
local r3 = ({f})[1](3)
for k, v in pairs({1}) do f(v) end
local function tc(x) return f(x) end
tc(1)
return r
`

const ldbLinesScript = `local a = 0
for i = 1, 2 do
  a = a + i
end
local ok = pcall(function()
  return 1
end)
local t = {
  x = 1,
  y = function() return 2 end,
  z = function()
    return 3
  end,
}
function gf(x)
  return x
end
return a
`

// ldbRun runs a session: SCRIPT DEBUG SYNC, EVAL, then each debugger
// command; it returns every reply read, and whether the server closed
// the connection after the last. tick (nil: none) runs from the sending
// of each command to the reading of its reply (Vigil's fake clock moves).
func ldbRun(t *testing.T, c *rconn, script string, steps [][]string, tail int, tick func() (stop func())) []string {
	t.Helper()
	return ldbRunMode(t, c, "SYNC", script, steps, tail, tick)
}

// ldbRunMode is ldbRun with SCRIPT DEBUG mode (SYNC or YES).
func ldbRunMode(t *testing.T, c *rconn, mode, script string, steps [][]string, tail int, tick func() (stop func())) []string {
	t.Helper()
	out := []string{c.do("SCRIPT", "DEBUG", mode)}
	out = append(out, c.do("EVAL", script, "1", "k1", "v1"))
	for _, s := range steps {
		c.send(s...)
		stop := func() {}
		if tick != nil {
			stop = tick()
		}
		out = append(out, c.read())
		stop()
	}
	for i := 0; i < tail; i++ { // <endsession> was read: the EVAL reply
		out = append(out, c.read())
	}
	if c.closed() {
		out = append(out, "<closed>")
	}
	return out
}

type ldbCase struct {
	name   string
	script string
	steps  [][]string
	tail   int
	want   []string // substrings expected in Redis's replies, in order
}

func TestLuaDebuggerSyncLikeRedis(t *testing.T) {
	l, dialRedis := startLiveBesideRedis(t)
	ldbCompare(t, l, dialRedis, "SYNC", ldbCases)
}

var ldbCases = []ldbCase{
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
	// unit/scripting's "Test scripting debug protocol parsing" and
	// "Test scripting debug lua stack overflow".
	{"parsing", "return 'hello'\n", [][]string{
		{"hello\x00world"}, {"hello\x00"}, {"\x00hello"}, {"\x00hello\x00"}, {"SCRIPT", "DEBUG", "NO"}, {"c"},
	}, 1, []string{"Unknown Redis Lua debugger command"}},
	{"redis100", "return 'hello'\n", [][]string{
		append([]string{"redis"}, strings.Fields(strings.Repeat("test ", 100))...), {"c"},
	}, 1, []string{"... (89 more)", "Unknown Redis command called from script"}},
	// Commands the debugger's redis refuses, many in a row; eval's
	// redis.breakpoint() makes the next line stop.
	{"refused", "local a = 1\nreturn a\n", [][]string{
		{"r", "client", "kill", "id", "1"}, {"r", "shutdown"}, {"r", "script", "kill"}, {"r", "nosuchcommand"},
		{"e", "redis.call('ping')"}, {"e", "redis.breakpoint()"}, {"c"}, {"c"},
	}, 1, []string{"This Redis command is not allowed from script", "redis.breakpoint() called"}},
	// trace names the frames as Lua 5.1's getfuncname (local, upvalue,
	// field, method, "?"; "top level" for a tail call, the chunk and a
	// function pcall called).
	{"trace", ldbTraceScript, [][]string{
		{"b", "2"}, {"c"}, {"t"}, {"p"}, {"c"}, {"t"}, {"c"}, {"t"}, {"c"}, {"t"}, {"c"}, {"t"}, {"c"},
	}, 1, []string{"In f:", "From meth:", "In ?:"}},
	// Lua 5.1's line table: a closure is made on its function's last
	// line, a keyed constructor field on its value's; the locals a
	// numeric for declares, printed inside and after the loop.
	{"lines", ldbLinesScript, [][]string{
		{"s"}, {"s"}, {"p"}, {"s"}, {"s"}, {"p"}, {"s"}, {"s"}, {"s"}, {"s"}, {"s"}, {"s"}, {"s"}, {"s"}, {"s"}, {"p"}, {"s"}, {"s"}, {"c"},
	}, 1, []string{"Stopped at 7, stop reason = step over", "Stopped at 13,", "(for index) = 1", "Stopped at 17,"}},
}

// ldbCompare runs each case's session in mode on both servers; after
// it, another client reads the key the scripts write (k1): kept by a
// sync session, rolled back by a forked one.
func ldbCompare(t *testing.T, l *liveServer, dialRedis func() *rconn, mode string, cases []ldbCase) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := dialRedis()
			r.t = t
			r.do("FLUSHALL")
			redis := ldbRunMode(t, r, mode, tc.script, tc.steps, tc.tail, nil)
			r = dialRedis()
			r.t = t
			redis = append(redis, r.do("TYPE", "k1"))
			v := l.dial(t)
			v.do("FLUSHALL")
			vigil := ldbRunMode(t, v, mode, tc.script, tc.steps, tc.tail, nil)
			vigil = append(vigil, l.dial(t).do("TYPE", "k1"))
			ldbSameReplies(t, redis, vigil, tc.want)
		})
	}
}

// ldbSameReplies checks debugging sessions run on redis-server and on
// Vigil: redis's replies hold each of want (the sessions show what they
// should), and Vigil's are the same, reply by reply.
func ldbSameReplies(t *testing.T, redis, vigil, want []string) {
	t.Helper()
	all := strings.Join(redis, "\n")
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("redis's sessions lack %q:\n%s", w, all)
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
}

// Outside a session redis.debug does nothing and redis.breakpoint is
// false; EVALSHA in a debug mode answers an error.
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
	r := dialRedis()
	for _, mode := range []string{"SYNC", "YES"} {
		for _, c := range []*rconn{r, v} {
			sha := c.do("SCRIPT", "LOAD", "return 1")
			if got := c.do("SCRIPT", "DEBUG", mode); got != "+OK" {
				t.Errorf("SCRIPT DEBUG %s: %q", mode, got)
			}
			got := c.do("EVALSHA", strings.Trim(sha, "\"+$"), "0")
			if !strings.Contains(got, "Please use EVAL instead of EVALSHA for debugging") {
				t.Errorf("EVALSHA in debug mode %s: %q (sha %q)", mode, got, sha)
			}
		}
	}
}

// ticking moves the live server's fake clock by 10 ms every millisecond
// until stop is called: a debugging session's time limit passes while a
// script runs (the session's clock restarts when it resumes the script,
// at a moment the test cannot see).
func (l *liveServer) ticking() (stop func()) {
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				l.clk.Advance(10 * time.Millisecond)
			}
		}
	}()
	return func() { close(done); <-exited }
}

// A script that runs busy-reply-threshold (lua-time-limit) without
// stopping stops in the debugger, "timeout reached, infinite loop?"
// (luaLdbLineHook's COUNT event), on both servers.
func TestLuaDebuggerTimeoutLikeRedis(t *testing.T) {
	l, dialRedis := startLiveBesideRedis(t, "--lua-time-limit", "50")
	const loop = "local i = 0\nwhile true do i = i + 1 end\n"
	steps := [][]string{{"c"}, {"s"}, {"c"}, {"a"}}
	r := dialRedis()
	r.t = t
	redis := ldbRun(t, r, loop, steps, 1, nil)
	// Vigil's test server runs on a fake clock: the time limit passes
	// once each command is sent (the limit counts from the last stop).
	vigil := ldbRun(t, l.dial(t), loop, steps, 1, l.ticking)
	if want := "timeout reached, infinite loop?"; !strings.Contains(strings.Join(redis, "\n"), want) {
		t.Errorf("redis's session lacks %q: %q", want, redis)
	}
	if strings.Join(redis, "\n") != strings.Join(vigil, "\n") {
		t.Errorf("redis %q\nvigil %q", redis, vigil)
	}
}

// A debugging client that closes its connection ends the session as in
// Redis: at a stop, the script runs on without stopping (its later writes
// are made); at a timeout stop, the script is killed (else the server
// stays blocked). The server serves the other clients after it.
func TestLuaDebuggerClientCloses(t *testing.T) {
	l, dialRedis := startLiveBesideRedis(t, "--lua-time-limit", "50")
	scenario := func(dial func() *rconn, tick func() func()) []string {
		var out []string
		o := dial()
		o.do("FLUSHALL")
		c := dial()
		c.do("SCRIPT", "DEBUG", "SYNC")
		out = append(out, c.do("EVAL", "local a = 1\nredis.call('set', 'after', 'yes')\nreturn a\n", "0"))
		c.c.Close()
		out = append(out, o.do("GET", "after"))
		c = dial()
		c.do("SCRIPT", "DEBUG", "SYNC")
		c.do("EVAL", "redis.call('set', 'loop', '1')\nwhile true do end\n", "0")
		c.send("c")
		stop := tick()
		out = append(out, c.read()) // the timeout stop
		stop()
		c.c.Close()
		out = append(out, o.do("GET", "loop"), o.do("PING"))
		return out
	}
	redis := scenario(func() *rconn { r := dialRedis(); r.t = t; return r }, func() func() { return func() {} })
	vigil := scenario(func() *rconn { return l.dial(t) }, l.ticking)
	want := []string{"[+* Stopped at 1, stop reason = step over, +-> 1   local a = 1]", `"yes"`,
		"[+* Stopped at 2, stop reason = timeout reached, infinite loop?, +-> 2   while true do end]", `"1"`, "+PONG"}
	sameAsRedis(t, "client closes", redis, vigil, want)
}

// A signal (SIGTERM: Run's context) interrupts a session waiting for its
// client, as a signal's EINTR interrupts Redis's blocking read: the
// script runs on without stopping, the session ends (<endsession>, the
// reply, the connection closed) and the server shuts down. Redis's
// interruption depends on which of its threads takes the signal; Vigil's
// always happens.
func TestLuaDebuggerSignalEndsSession(t *testing.T) {
	l := startLive(t, "--save", "")
	c := l.dial(t)
	c.do("SCRIPT", "DEBUG", "SYNC")
	if got := c.do("EVAL", "local a = 1\nlocal b = 2\nreturn a + b\n", "0"); !strings.Contains(got, "Stopped at 1") {
		t.Fatalf("EVAL: %s", got)
	}
	l.cancel() // as SIGTERM
	if got := c.read(); got != "[+<endsession>]" {
		t.Fatalf("after the signal: %s", got)
	}
	if got := c.read(); got != "(integer) 3" {
		t.Fatalf("the reply: %s", got)
	}
	if !c.closed() {
		t.Error("the connection is open")
	}
	l.stop(t) // fails the test if the server does not stop
}

// SHUTDOWN from another client waits for the session's end (the session
// holds the server, as Redis's main thread); when the debugging client
// leaves, the script ends and the server shuts down.
func TestLuaDebuggerShutdownWaitsForSession(t *testing.T) {
	l := startLive(t, "--save", "")
	c, o := l.dial(t), l.dial(t)
	c.do("SCRIPT", "DEBUG", "SYNC")
	c.do("EVAL", "local a = 1\nredis.call('set', 'k', 'v')\nreturn a\n", "0")
	o.send("SHUTDOWN", "NOSAVE")
	select {
	case <-l.done:
		t.Fatal("the server stopped with the session open")
	case <-time.After(100 * time.Millisecond): // no state to poll: nothing may happen
	}
	c.c.Close()
	select {
	case <-l.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not stop")
	}
	l.done <- nil // for startLive's cleanup
	if !o.closed() {
		t.Error("SHUTDOWN's connection is open")
	}
}

// SCRIPT DEBUG YES: the session runs in a child process on a copy of
// the dataset (Redis forks); every debugger reply is the same as Redis's,
// and what the script wrote is rolled back (TYPE k1 after it: none).
func TestLuaDebuggerForkedLikeRedis(t *testing.T) {
	l, dialRedis := startLiveBesideRedis(t)
	ldbCompare(t, l, dialRedis, "YES", ldbCases)
}

// A forked session's time limit runs on the child's clock, the real one,
// as Redis's child's: the timeout stop comes as in Redis.
func TestLuaDebuggerForkedTimeoutLikeRedis(t *testing.T) {
	l, dialRedis := startLiveBesideRedis(t, "--lua-time-limit", "50")
	const loop = "local i = 0\nwhile true do i = i + 1 end\n"
	steps := [][]string{{"c"}, {"s"}, {"c"}, {"a"}}
	r := dialRedis()
	r.t = t
	redis := ldbRunMode(t, r, "YES", loop, steps, 1, nil)
	vigil := ldbRunMode(t, l.dial(t), "YES", loop, steps, 1, nil)
	if want := "timeout reached, infinite loop?"; !strings.Contains(strings.Join(redis, "\n"), want) {
		t.Errorf("redis's session lacks %q: %q", want, redis)
	}
	if strings.Join(redis, "\n") != strings.Join(vigil, "\n") {
		t.Errorf("redis %q\nvigil %q", redis, vigil)
	}
}

// ldbChildPids lists the server's debugging children.
func (l *liveServer) ldbChildPids() []int {
	l.s.ldbMu.Lock()
	defer l.s.ldbMu.Unlock()
	var pids []int
	for pid := range l.s.ldbChildren {
		pids = append(pids, pid)
	}
	return pids
}

// processGone reports whether pid no longer exists (reaped).
func processGone(pid int) bool {
	return syscall.Kill(pid, 0) == syscall.ESRCH
}

// While a forked session is stopped, the server serves the other
// clients (their writes are not in the session's copy, SCRIPT KILL has
// no script to kill); the session's writes are rolled back at its end.
// A debugging client that leaves ends its child.
func TestLuaDebuggerForkedServesOthers(t *testing.T) {
	l, dialRedis := startLiveBesideRedis(t)
	const script = "redis.call('set', KEYS[1], 'changed')\nredis.breakpoint()\nreturn redis.call('get', KEYS[1])\n"
	scenario := func(dial func() *rconn) []string {
		o := dial()
		out := []string{o.do("FLUSHALL"), o.do("SET", "k", "v0")}
		c := dial()
		out = append(out, c.do("SCRIPT", "DEBUG", "YES"), c.do("EVAL", script, "1", "k"), c.do("c"))
		out = append(out, o.do("GET", "k"), o.do("SET", "k", "v1"), o.do("SCRIPT", "KILL"), o.do("PING"))
		out = append(out, c.do("r", "get", "k"), c.do("c"), c.read())
		if c.closed() {
			out = append(out, "<closed>")
		}
		return append(out, o.do("GET", "k"))
	}
	redis := scenario(func() *rconn { r := dialRedis(); r.t = t; return r })
	vigil := scenario(func() *rconn { return l.dial(t) })
	want := []string{"+OK", "+OK", "+OK",
		"[+* Stopped at 1, stop reason = step over, +-> 1   redis.call('set', KEYS[1], 'changed')]",
		"[+* Stopped at 3, stop reason = redis.breakpoint() called, +-> 3   return redis.call('get', KEYS[1])]",
		`"v0"`, "+OK", "-NOTBUSY No scripts in execution right now.", "+PONG",
		`[+<redis> get k, +<reply> "changed"]`, "[+<endsession>]", `"changed"`, "<closed>", `"v1"`}
	sameAsRedis(t, "forked session", redis, vigil, want)
	if !testutil.PollUntil(10*time.Second, func() bool { return len(l.ldbChildPids()) == 0 }) {
		t.Fatalf("children left after the session: %v", l.ldbChildPids())
	}

	// The client leaves while the session is stopped: the child's read
	// ends, the script runs on to its end and the child exits.
	c := l.dial(t)
	c.do("SCRIPT", "DEBUG", "YES")
	if got := c.do("EVAL", script, "1", "k"); !strings.Contains(got, "Stopped at 1") {
		t.Fatalf("EVAL: %s", got)
	}
	pids := l.ldbChildPids()
	if len(pids) != 1 {
		t.Fatalf("children: %v", pids)
	}
	c.c.Close()
	if !testutil.PollUntil(10*time.Second, func() bool { return len(l.ldbChildPids()) == 0 && processGone(pids[0]) }) {
		t.Fatalf("the child %d did not end", pids[0])
	}
	if got := l.dial(t).do("GET", "k"); got != `"v1"` {
		t.Errorf("GET k after the session: %s", got)
	}
}

// SHUTDOWN kills the debugging children (ldbKillForkedSessions): the
// debugging client's connection closes, no child outlives the server.
func TestLuaDebuggerForkedShutdown(t *testing.T) {
	l := startLive(t, "--save", "")
	c, o := l.dial(t), l.dial(t)
	c.do("SCRIPT", "DEBUG", "YES")
	if got := c.do("EVAL", "local a = 1\nreturn a\n", "0"); !strings.Contains(got, "Stopped at 1") {
		t.Fatalf("EVAL: %s", got)
	}
	pids := l.ldbChildPids()
	if len(pids) != 1 {
		t.Fatalf("children: %v", pids)
	}
	if got := o.do("INFO", "stats"); !strings.Contains(got, "total_forks:1") {
		t.Errorf("INFO stats: %s", got)
	}
	o.send("SHUTDOWN", "NOSAVE")
	select {
	case <-l.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not stop")
	}
	l.done <- nil // for startLive's cleanup
	if !c.closed() {
		t.Error("the debugging client's connection is open")
	}
	if !processGone(pids[0]) {
		t.Errorf("the child %d outlived the server", pids[0])
	}
}

// A child that cannot be started: Redis's fork failure error, and the
// client leaves the debug mode (ldbDisable).
func TestLuaDebuggerForkFails(t *testing.T) {
	l := startLive(t)
	ldbForkEnabled.Store(false)
	defer ldbForkEnabled.Store(true)
	c := l.dial(t)
	c.do("SCRIPT", "DEBUG", "YES")
	if got := c.do("EVAL", "return 1", "0"); !strings.HasPrefix(got, "-ERR Fork() failed: can't run EVAL in debugging mode: ") {
		t.Errorf("EVAL: %s", got)
	}
	if got := c.do("EVAL", "return 1", "0"); got != "(integer) 1" {
		t.Errorf("EVAL after: %s", got)
	}
}

// rawSteps writes each step's bytes on conn and reads until what was
// read so far contains the step's mark ("<EOF>": until the server
// closes); it returns everything read.
func rawSteps(t *testing.T, conn net.Conn, steps [][2]string) string {
	t.Helper()
	var got []byte
	buf := make([]byte, 4096)
	for _, st := range steps {
		if _, err := conn.Write([]byte(st[0])); err != nil {
			t.Fatalf("write %q: %v", st[0], err)
		}
		for !strings.Contains(string(got), st[1]) {
			conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			n, err := conn.Read(buf)
			got = append(got, buf[:n]...)
			if err == io.EOF {
				got = append(got, "<EOF>"...)
				break
			}
			if err != nil {
				t.Fatalf("read after %q: %v (read %q)", st[0], err, got)
			}
		}
	}
	return string(got)
}

// SCRIPT DEBUG after replies not written yet is refused; the replies
// pipelined before the EVAL (SCRIPT DEBUG's +OK, a transaction's) follow
// "<endsession>", with the EVAL's, in both modes, as Redis writes its
// buffer after the session's logs.
func TestLuaDebuggerPipelineLikeRedis(t *testing.T) {
	l, dialRedis := startLiveBesideRedis(t)
	const eval = "EVAL \"return 1\" 0\r\n"
	const c = "*1\r\n$1\r\nc\r\n"
	cases := [][][2]string{
		{{"PING\r\nSCRIPT DEBUG SYNC\r\n", "pipeline\r\n"}},
		{{"PING\r\nSCRIPT DEBUG YES\r\n", "pipeline\r\n"}},
		{{"SCRIPT DEBUG SYNC\r\n" + eval, "return 1\r\n"}, {c, "<EOF>"}},
		{{"SCRIPT DEBUG YES\r\n" + eval, "return 1\r\n"}, {c, "<EOF>"}},
		{{"SCRIPT DEBUG YES\r\n", "+OK\r\n"}, {"MULTI\r\n", "+OK\r\n+OK\r\n"},
			{"SET a 1\r\n" + eval + "GET a\r\nEXEC\r\n", "return 1\r\n"}, {c, "<EOF>"}},
	}
	for i, steps := range cases {
		r := dialRedis()
		r.t = t
		redis := rawSteps(t, r.c, steps)
		vigil := rawSteps(t, l.dial(t).c, steps)
		if !sameButDismissed(redis, vigil) {
			t.Errorf("case %d:\nredis %q\nvigil %q", i, redis, vigil)
		}
	}
}

// sameButDismissed compares a forked session's output: redis-server's
// child writes the client's reply buffer after dismissMemoryInChild
// madvised its whole pages away (dismissClientMemory), so the replies
// pipelined before the EVAL come out as NUL bytes when the buffer's
// allocation puts them on such a page, and as themselves when not (it
// varies from run to run). Vigil writes the replies: a NUL in redis's
// output matches any byte of Vigil's at the same place.
func sameButDismissed(redis, vigil string) bool {
	if len(redis) != len(vigil) {
		return false
	}
	for i := 0; i < len(redis); i++ {
		if redis[i] != vigil[i] && redis[i] != 0 {
			return false
		}
	}
	return true
}

// While a forked session's child lives the cron's save points wait
// (serverCron checks ldbPendingChildren); once it is reaped they apply.
func TestLuaDebuggerForkedDelaysSavePoints(t *testing.T) {
	l := startLive(t, "--save", "10 1")
	cron := func() bool {
		l.s.mu.Lock()
		defer l.s.mu.Unlock()
		l.s.rdbCron()
		return l.s.rdb.job != nil
	}
	c, o := l.dial(t), l.dial(t)
	c.do("SCRIPT", "DEBUG", "YES")
	if got := c.do("EVAL", "local a = 1\nreturn a\n", "0"); !strings.Contains(got, "Stopped at 1") {
		t.Fatalf("EVAL: %s", got)
	}
	o.do("SET", "a", "1")
	l.clk.Advance(11 * time.Second)
	if cron() {
		t.Fatal("a save point started a BGSAVE while the session's child lives")
	}
	l.s.mu.Lock()
	saved := l.s.rdb.lastSave
	l.s.mu.Unlock()
	if saved != 0 {
		t.Fatal("saved while the session's child lives")
	}
	c.send("c")
	c.read() // <endsession>
	c.read() // the reply
	if !testutil.PollUntil(10*time.Second, func() bool { return len(l.ldbChildPids()) == 0 }) {
		t.Fatalf("children left: %v", l.ldbChildPids())
	}
	// The save point applies now (this cron, or Run's own if its tick
	// came after the child was reaped).
	cron()
	if !testutil.PollUntil(10*time.Second, func() bool {
		l.s.mu.Lock()
		defer l.s.mu.Unlock()
		return l.s.rdb.job == nil && l.s.rdb.lastSave != 0
	}) {
		t.Fatal("no BGSAVE after the session")
	}
}
