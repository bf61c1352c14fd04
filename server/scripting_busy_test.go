package server

import (
	"bufio"
	"bytes"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/resp"
	vlua "github.com/vigil-kv/vigil/server/lua"
)

// waitBusy polls until a script is running on l's server.
func waitBusy(t *testing.T, s *Server) *busyScript {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if b := s.loadBusy(); b != nil {
			return b
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("no script running")
	return nil
}

// TestBusyScriptKill: past busy-reply-threshold (on the server's clock)
// other clients get -BUSY; SCRIPT KILL stops a script that has not
// written, whose caller gets 7.0.15's "Script killed" error.
func TestBusyScriptKill(t *testing.T) {
	l := startLive(t)
	t.Cleanup(func() { // a failed test must not leave the script running
		if bs := l.s.loadBusy(); bs != nil {
			bs.stop()
		}
	})
	a, b := l.dial(t), l.dial(t)
	// b's connection is set up (serveConn takes the lock) before the
	// script starts.
	b.send("PING")
	if got := b.read(); got != "+PONG" {
		t.Fatal(got)
	}
	// Every instruction on line 2: the busy state is published just
	// before the script runs, so on a starved machine SCRIPT KILL can
	// land before its first instruction, which then reports the kill.
	body := "\nlocal i = 0 while true do i = i + 1 end"
	a.send("EVAL", body, "0")
	waitBusy(t, l.s)
	l.clk.Advance(5 * time.Second) // busy-reply-threshold 5000 ms
	b.send("GET", "x")
	if got := b.read(); got != "-"+errBusy {
		t.Fatalf("GET during a busy script: %s", got)
	}
	b.send("NOSUCH")
	if got := b.read(); !strings.HasPrefix(got, "-ERR unknown command 'NOSUCH'") {
		t.Fatalf("unknown command during a busy script: %s", got)
	}
	b.send("SCRIPT", "KILL")
	if got := b.read(); got != "+OK" {
		t.Fatalf("SCRIPT KILL: %s", got)
	}
	want := "-ERR Script killed by user with SCRIPT KILL... script: " + vlua.SHA1Hex([]byte(body)) + ", on @user_script:2."
	if got := a.read(); got != want {
		t.Fatalf("killed script's reply:\n got %s\nwant %s", got, want)
	}
	b.send("PING")
	if got := b.read(); got != "+PONG" {
		t.Fatalf("after the kill: %s", got)
	}
	a.send("SCRIPT", "KILL")
	if got := a.read(); got != "-NOTBUSY No scripts in execution right now." {
		t.Fatalf("SCRIPT KILL with no script: %s", got)
	}
}

// TestBusyScriptUnkillable: a busy script that wrote cannot be killed
// (serveBusy on a client of its own, with the busy state set by hand).
func TestBusyScriptUnkillable(t *testing.T) {
	ts := newTestServer(t)
	bs := &busyScript{start: ts.clk.Now(), limit: time.Second, done: make(chan struct{})}
	bs.wrote.Store(true)
	bs.live = true
	ts.s.busy.Store(bs)
	defer ts.s.busy.Store(nil)
	p1, p2 := net.Pipe()
	defer p1.Close()
	defer p2.Close()
	in := resp.AppendCommandStrings(nil, "SCRIPT", "KILL")
	in = resp.AppendCommandStrings(in, "GET")
	in = resp.AppendCommandStrings(in, "SET", "a", "b")
	c := &Client{srv: ts.s, conn: p1, user: "default", authed: true}
	c.w.Proto = 2
	c.rd = resp.NewReader(bytes.NewReader(in), resp.DefaultLimits)
	if err := c.rd.Fill(); err != nil {
		t.Fatal(err)
	}
	done := make(chan bool, 1)
	go func() { keep, _ := ts.s.serveBusy(c, bs); done <- keep }()
	br := bufio.NewReader(p2)
	for _, want := range []string{"-" + errUnkillable, "-ERR wrong number of arguments for 'get' command", "-" + errBusy} {
		v, err := resp.ReadValue(br, resp.DefaultReplyLimits)
		if err != nil {
			t.Fatal(err)
		}
		if got := renderValue(v); got != want {
			t.Fatalf("got %s want %s", got, want)
		}
	}
	if !<-done {
		t.Fatal("serveBusy closed the connection")
	}
	if bs.killed.Load() {
		t.Fatal("a script that wrote was killed")
	}
}

// TestBusyScriptShutdownNoSave: SHUTDOWN NOSAVE stops a busy script that
// wrote and the server.
func TestBusyScriptShutdownNoSave(t *testing.T) {
	l := startLive(t)
	t.Cleanup(func() {
		if bs := l.s.loadBusy(); bs != nil {
			bs.stop()
		}
	})
	a, b := l.dial(t), l.dial(t)
	b.send("PING")
	if got := b.read(); got != "+PONG" {
		t.Fatal(got)
	}
	a.send("EVAL", "redis.call('set', 'w', '1') while true do end", "0")
	waitBusy(t, l.s)
	l.clk.Advance(5 * time.Second)
	b.send("SHUTDOWN")
	if got := b.read(); got != "-"+errBusy {
		t.Fatalf("SHUTDOWN without NOSAVE: %s", got)
	}
	b.send("SCRIPT", "KILL")
	if got := b.read(); got != "-"+errUnkillable {
		t.Fatalf("SCRIPT KILL after a write: %s", got)
	}
	b.send("SHUTDOWN", "NOSAVE")
	// As redis-server, which exits inside the command: once the client
	// sees its connection end, a new connection is refused
	// (scripting.tcl's "SHUTDOWN NOSAVE can kill a timedout script
	// anyway" expects "connection refused").
	if !b.closed() {
		t.Fatal("SHUTDOWN NOSAVE did not close the connection")
	}
	if c, err := net.Dial("unix", l.sock); err == nil {
		c.Close()
		t.Fatal("a connection was accepted after SHUTDOWN NOSAVE closed its client")
	}
	select {
	case <-l.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not shut down")
	}
	l.done <- nil // for startLive's cleanup
}

// TestBusyScriptRecycled: a script's busy state that no other goroutine
// loaded serves the next script (no allocation per EVALSHA), cleared; one
// that was loaded (loadBusy: a client waiting, SCRIPT KILL) is never
// reused, as its loader may still hold it.
func TestBusyScriptRecycled(t *testing.T) {
	ts := newTestServer(t)
	c := ts.client()
	if got := ts.do(c, "EVAL", "return 1", "0"); got != ":1\r\n" {
		t.Fatal(got)
	}
	h := ts.s.scriptEngine()
	b1 := h.spareBusy
	if b1 == nil {
		t.Fatal("the ended script's busy state was not kept")
	}
	if got := ts.do(c, "EVAL", "return 2", "0"); got != ":2\r\n" {
		t.Fatal(got)
	}
	if h.spareBusy != b1 {
		t.Fatal("the second script did not reuse the first one's busy state")
	}
	if b1.ended || b1.done != nil || b1.killed.Load() || b1.live {
		t.Fatalf("recycled busy state not cleared: ended %v done %v killed %v live %v", b1.ended, b1.done != nil, b1.killed.Load(), b1.live)
	}
	// A script another goroutine saw (marked as loadBusy marks it) is
	// dropped after it ends.
	b1.seen.Store(true)
	if got := ts.do(c, "EVAL", "return 3", "0"); got != ":3\r\n" {
		t.Fatal(got)
	}
	if h.spareBusy == b1 {
		t.Fatal("a busy state another goroutine saw was kept for reuse")
	}
}
