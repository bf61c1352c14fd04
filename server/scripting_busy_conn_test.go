package server

import (
	"strings"
	"testing"
	"time"

	vlua "github.com/vigil-kv/vigil/server/lua"
)

// busyLoop is a script that runs until killed; every instruction is on
// line 2 (see TestBusyScriptKill).
const busyLoop = "\nlocal i = 0 while true do i = i + 1 end"

// stopBusyOnCleanup stops a script a failed test left running.
func stopBusyOnCleanup(t *testing.T, l *liveServer) {
	t.Cleanup(func() {
		if bs := l.s.loadBusy(); bs != nil {
			bs.stop()
		}
	})
}

// TestBusyScriptNewConnection: a client that connects while a script is
// busy is accepted and answered, as redis-server does (serveConn reads
// its admission settings without the lock): -BUSY for a plain command, and
// SCRIPT KILL stops the script.
func TestBusyScriptNewConnection(t *testing.T) {
	l := startLive(t)
	stopBusyOnCleanup(t, l)
	a := l.dial(t)
	a.send("EVAL", busyLoop, "0")
	waitBusy(t, l.s)
	l.clk.Advance(5 * time.Second) // busy-reply-threshold 5000 ms
	b := l.dial(t)                 // connects during the script
	b.send("PING")
	if got := b.read(); got != "-"+errBusy {
		t.Fatalf("PING on a new connection during a busy script: %s", got)
	}
	b.send("HELLO", "3")
	if got := b.read(); !strings.Contains(got, "server") || strings.HasPrefix(got, "-") {
		t.Fatalf("HELLO 3 during a busy script: %s", got)
	}
	b.send("SCRIPT", "KILL")
	if got := b.read(); got != "+OK" {
		t.Fatalf("SCRIPT KILL from a new connection: %s", got)
	}
	want := "-ERR Script killed by user with SCRIPT KILL... script: " + vlua.SHA1Hex([]byte(busyLoop)) + ", on @user_script:2."
	if got := a.read(); got != want {
		t.Fatalf("killed script's reply:\n got %s\nwant %s", got, want)
	}
	b.send("PING")
	if got := b.read(); got != "+PONG" {
		t.Fatalf("after the kill: %s", got)
	}
}

// TestBusyScriptNewConnectionAuth: with requirepass, a client connecting
// during a busy script gets -NOAUTH before -BUSY (processCommand checks
// authentication first), can AUTH (a wrong password fails as usual) and
// then SCRIPT KILL.
func TestBusyScriptNewConnectionAuth(t *testing.T) {
	l := startLive(t, "--requirepass", "sekret")
	stopBusyOnCleanup(t, l)
	a := l.dial(t)
	a.send("AUTH", "sekret")
	if got := a.read(); got != "+OK" {
		t.Fatal(got)
	}
	a.send("EVAL", busyLoop, "0")
	waitBusy(t, l.s)
	l.clk.Advance(5 * time.Second)
	b := l.dial(t)
	for _, step := range []struct {
		cmd  []string
		want string
	}{
		{[]string{"SCRIPT", "KILL"}, "-NOAUTH Authentication required."},
		{[]string{"GET", "x"}, "-NOAUTH Authentication required."},
		{[]string{"AUTH", "wrong"}, "-WRONGPASS invalid username-password pair or user is disabled."},
		{[]string{"AUTH", "sekret"}, "+OK"},
		{[]string{"GET", "x"}, "-" + errBusy},
		{[]string{"FUNCTION", "KILL"}, "-" + errBusy},
		{[]string{"SCRIPT", "KILL"}, "+OK"},
	} {
		b.send(step.cmd...)
		if got := b.read(); got != step.want {
			t.Fatalf("%v: got %s want %s", step.cmd, got, step.want)
		}
	}
	if got := a.read(); !strings.HasPrefix(got, "-ERR Script killed by user with SCRIPT KILL...") {
		t.Fatalf("killed script's reply: %s", got)
	}
	// The ACL log has the failed AUTH, written while the script ran.
	b.send("ACL", "LOG")
	if got := b.read(); !strings.Contains(got, "auth") {
		t.Fatalf("ACL LOG after a failed AUTH during a busy script: %s", got)
	}
}

// TestBusyScriptAdmissionFollowsConfig: what serveConn reads without the
// lock follows CONFIG SET requirepass and ACL SETUSER.
func TestBusyScriptAdmissionFollowsConfig(t *testing.T) {
	l := startLive(t)
	a := l.dial(t)
	if !l.s.admDefaultOpen.Load() {
		t.Fatal("default user open at start")
	}
	a.send("CONFIG", "SET", "requirepass", "pw")
	if got := a.read(); got != "+OK" {
		t.Fatal(got)
	}
	if l.s.admDefaultOpen.Load() || l.s.admDefNoPass.Load() {
		t.Fatal("requirepass set: new connections must authenticate")
	}
	b := l.dial(t)
	b.send("GET", "x")
	if got := b.read(); got != "-NOAUTH Authentication required." {
		t.Fatal(got)
	}
	a.send("ACL", "SETUSER", "default", "nopass")
	if got := a.read(); got != "+OK" {
		t.Fatal(got)
	}
	if !l.s.admDefaultOpen.Load() {
		t.Fatal("ACL SETUSER default nopass: new connections start authenticated")
	}
	c := l.dial(t)
	c.send("GET", "x")
	if got := c.read(); got != "(nil)" {
		t.Fatalf("GET on an open server: %s", got)
	}
}

// TestScriptTimeMoves: redis.call('time') reads the clock, so a script
// that waits for TIME to move ends (redis-server 7.0.15's TIME is
// gettimeofday; a 50 ms wait on it ends there too).
func TestScriptTimeMoves(t *testing.T) {
	l := startLive(t)
	stopBusyOnCleanup(t, l)
	a := l.dial(t)
	a.send("EVAL", "local t0 = redis.call('time') while true do local t = redis.call('time') if t[1] - t0[1] >= 10 then return 'moved' end end", "0")
	waitBusy(t, l.s)
	l.clk.Advance(11 * time.Second)
	if got := a.read(); got != `"moved"` {
		t.Fatalf("script waiting on TIME: %s", got)
	}
}

// TestScriptClientID: with DEBUG SET-DISABLE-DENY-SCRIPTS, CLIENT ID from
// a script is the scripting client's id, as redis-server 7.0.15: 1 for
// EVAL, 2 for a function, and the first connection is 3.
func TestScriptClientID(t *testing.T) {
	l := startLive(t, "--enable-debug-command", "yes")
	a := l.dial(t)
	for _, step := range [][2][]string{
		{{"CLIENT", "ID"}, {"(integer) 3"}},
		{{"EVAL", "return redis.call('client','id')", "0"}, {"-ERR This Redis command is not allowed from script"}},
		{{"DEBUG", "SET-DISABLE-DENY-SCRIPTS", "1"}, {"+OK"}},
		{{"EVAL", "return redis.call('client','id')", "0"}, {"(integer) 1"}},
		{{"SCRIPT", "FLUSH"}, {"+OK"}},
		{{"EVAL", "return redis.call('client','id')", "0"}, {"(integer) 1"}},
		{{"FUNCTION", "LOAD", "#!lua name=l\nredis.register_function('cid', function() return redis.call('client','id') end)"}, {`"l"`}},
		{{"FCALL", "cid", "0"}, {"(integer) 2"}},
	} {
		a.send(step[0]...)
		if got := a.read(); !strings.HasPrefix(got, step[1][0]) {
			t.Fatalf("%q: got %s want %s", step[0], got, step[1][0])
		}
	}
}

// TestBusyScriptKillPoints: SCRIPT KILL and FUNCTION KILL, sent on a new
// connection, stop scripts busy in different places (a tight loop,
// redis.call, redis.pcall, pcall, coroutines, a reply conversion), their
// callers get the killed error, and the server goes on serving scripts.
func TestBusyScriptKillPoints(t *testing.T) {
	l := startLive(t)
	stopBusyOnCleanup(t, l)
	a := l.dial(t)
	a.send("RPUSH", "big", "1", "2", "3", "4", "5", "6", "7", "8")
	a.read()
	bodies := []string{
		"local i = 0 while true do i = i + 1 end",
		"while true do redis.call('get', 'x') end",
		"while true do redis.pcall('get', 'x') end",
		"while true do redis.pcall('nosuch') end",
		"while true do pcall(function() local i = 0 while true do i = i + 1 end end) end",
		"while true do local ok = pcall(redis.call, 'lrange', 'big', 0, -1) end",
		"while true do local co = coroutine.create(function() while true do coroutine.yield(redis.call('ping')) end end) for i = 1, 100 do coroutine.resume(co) end end",
		"while true do local co = coroutine.wrap(function() local i = 0 while true do i = i + 1 end end) co() end",
		"local t = {} while true do t[#t + 1] = redis.call('lrange', 'big', 0, -1) if #t > 1000 then t = {} end end",
	}
	for i, body := range bodies {
		fn := i%2 == 1
		if fn {
			lib := "#!lua name=k\nredis.register_function('f', function() " + body + " end)"
			a.send("FUNCTION", "LOAD", "REPLACE", lib)
			if got := a.read(); got != `"k"` {
				t.Fatalf("FUNCTION LOAD: %s", got)
			}
			a.send("FCALL", "f", "0")
		} else {
			a.send("EVAL", body, "0")
		}
		waitBusy(t, l.s)
		l.clk.Advance(5 * time.Second)
		b := l.dial(t)
		kill := []string{"SCRIPT", "KILL"}
		if fn {
			kill = []string{"FUNCTION", "KILL"}
		}
		b.send(kill...)
		if got := b.read(); got != "+OK" {
			t.Fatalf("%s: %v: %s", body, kill, got)
		}
		if got := a.read(); !strings.HasPrefix(got, "-ERR Script killed by user with SCRIPT KILL...") {
			t.Fatalf("%s: killed script's reply: %s", body, got)
		}
		b.send("EVAL", "return redis.call('ping')", "0")
		if got := b.read(); got != "+PONG" {
			t.Fatalf("%s: after the kill: %s", body, got)
		}
	}
}
