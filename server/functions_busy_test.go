package server

import (
	"strings"
	"testing"
	"time"
)

// TestFunctionBusyKill: a function running past busy-reply-threshold gets
// other clients FUNCTION's -BUSY; SCRIPT KILL is refused for it, FUNCTION
// STATS shows it, FUNCTION KILL stops it and its caller gets 7.0.15's
// error (checked against redis-server by hand: "ERR Script killed by user
// with SCRIPT KILL... script: spin, on @user_function:3.").
func TestFunctionBusyKill(t *testing.T) {
	l := startLive(t)
	t.Cleanup(func() {
		if bs := l.s.loadBusy(); bs != nil {
			bs.stop()
		}
	})
	a, b := l.dial(t), l.dial(t)
	if got := a.do("FUNCTION", "LOAD", "#!lua name=spin\nredis.register_function('spin', function(keys, args)\nlocal i = 0 while true do i = i + 1 end end)"); got != `"spin"` {
		t.Fatalf("FUNCTION LOAD: %s", got)
	}
	if got := b.do("PING"); got != "+PONG" {
		t.Fatal(got)
	}
	a.send("FCALL", "spin", "1", "kk", "argx")
	waitBusy(t, l.s)
	l.clk.Advance(5 * time.Second)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"GET", "x"}, "-" + errBusyFn},
		{[]string{"SCRIPT", "KILL"}, "-" + errBusyFn},
		{[]string{"FUNCTION", "STATS"}, `["running_script", ["name", "spin", "command", ["FCALL", "spin", "1", "kk", "argx"], "duration_ms", (integer) 5000], "engines", ["LUA", ["libraries_count", (integer) 1, "functions_count", (integer) 1]]]`},
		{[]string{"FUNCTION", "KILL"}, "+OK"},
	} {
		if got := b.do(tc.args...); got != tc.want {
			t.Fatalf("%q during a busy function:\n got %s\nwant %s", tc.args, got, tc.want)
		}
	}
	want := "-ERR Script killed by user with SCRIPT KILL... script: spin, on @user_function:3."
	if got := a.read(); got != want {
		t.Fatalf("killed function's reply:\n got %s\nwant %s", got, want)
	}
	if got := b.do("FUNCTION", "KILL"); got != "-NOTBUSY No scripts in execution right now." {
		t.Fatalf("FUNCTION KILL with nothing running: %s", got)
	}
	if got := b.do("FUNCTION", "STATS"); got != `["running_script", (nil), "engines", ["LUA", ["libraries_count", (integer) 1, "functions_count", (integer) 1]]]` {
		t.Fatalf("FUNCTION STATS after the kill: %s", got)
	}

	// An EVAL is killed with SCRIPT KILL only.
	a.send("EVAL", "while true do end", "0")
	waitBusy(t, l.s)
	l.clk.Advance(5 * time.Second)
	for _, args := range [][]string{{"FUNCTION", "KILL"}, {"FUNCTION", "STATS"}, {"GET", "x"}} {
		if got := b.do(args...); got != "-"+errBusy {
			t.Fatalf("%q during a busy EVAL: %s", args, got)
		}
	}
	if got := b.do("SCRIPT", "KILL"); got != "+OK" {
		t.Fatalf("SCRIPT KILL: %s", got)
	}
	if got := a.read(); !strings.HasPrefix(got, "-ERR Script killed by user with SCRIPT KILL... script: ") {
		t.Fatalf("killed EVAL: %s", got)
	}
}

// TestFunctionLoadTimeout: a library whose load-time code does not end is
// stopped after 500 ms (LOAD_TIMEOUT_MS) with Redis's error, and nothing
// is registered.
func TestFunctionLoadTimeout(t *testing.T) {
	ts := newTestServer(t)
	c := ts.client()
	got := ts.do(c, "FUNCTION", "LOAD", "#!lua name=loop\nredis.register_function('x', function() end)\nwhile true do end")
	if got != "-ERR Error registering functions: ERR FUNCTION LOAD timeout\r\n" {
		t.Fatalf("FUNCTION LOAD of a library that loops: %q", got)
	}
	if got := ts.do(c, "FCALL", "x", "0"); got != "-ERR Function not found\r\n" {
		t.Fatalf("FCALL after the timeout: %q", got)
	}
	if got := ts.do(c, "FUNCTION", "LOAD", "#!lua name=loop\nredis.register_function('x', function() return 7 end)"); got != "$4\r\nloop\r\n" {
		t.Fatalf("FUNCTION LOAD after the timeout: %q", got)
	}
	if got := ts.do(c, "FCALL", "x", "0"); got != ":7\r\n" {
		t.Fatalf("FCALL: %q", got)
	}
}
