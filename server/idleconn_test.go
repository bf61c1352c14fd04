package server

import (
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/testutil"
)

// retireAll makes every client idle for the cron and ticks it until each
// loop retired, or fails.
func retireAll(t *testing.T, l *liveServer, clients ...*Client) {
	t.Helper()
	for _, c := range clients {
		c.lastInteraction.Store(time.Now().UnixMilli() - 3000)
	}
	if !testutil.PollUntil(10*time.Second, func() bool {
		l.clk.Advance(100 * time.Millisecond) // a cron tick
		for _, c := range clients {
			if c.raw.rw.state.Load() != wsRetired {
				return false
			}
		}
		return true
	}) {
		for _, c := range clients {
			t.Logf("client %d: waiter state %d", c.id, c.raw.rw.state.Load())
		}
		t.Fatal("idle loops did not retire")
	}
}

// TestIdleLoopsRetire: idle connections' loops end their goroutines
// (idleconn.go), and each comes back at the next event: a command (also
// one sent in pieces), a pipeline, a message to a subscriber, CLIENT KILL,
// the peer's close, and the server's shutdown.
func TestIdleLoopsRetire(t *testing.T) {
	l, addr := startLiveTCP(t)
	const n = 20
	ctl := dialTCPLive(t, addr)
	conns := make([]*rconn, n)
	cls := make([]*Client, n)
	for i := range conns {
		conns[i] = dialTCPLive(t, addr)
		conns[i].do("CLIENT", "SETNAME", "c"+strconv.Itoa(i))
		cls[i] = clientNamed(t, l, "c"+strconv.Itoa(i))
	}
	sub := conns[n-1]
	sub.send("SUBSCRIBE", "ch")
	if got := sub.read(); !strings.Contains(got, "subscribe") {
		t.Fatalf("SUBSCRIBE: %s", got)
	}
	// Two commands in a row with no other loop waiting in between: the
	// loop then waits in Go's poller (parkForInput), and retires through
	// the cron's past read deadline instead of the set's wake-up.
	conns[3].do("PING")
	conns[3].do("PING")
	before := runtime.NumGoroutine()
	retireAll(t, l, cls...)
	if after := runtime.NumGoroutine(); after > before-n+2 {
		t.Errorf("goroutines %d -> %d with %d loops retired", before, after, n)
	}
	// A command wakes its loop.
	if got := conns[0].do("SET", "k", "v"); got != "+OK" {
		t.Fatalf("SET after retiring: %s", got)
	}
	// A command in pieces, then a pipeline.
	raw := "*3\r\n$3\r\nSET\r\n$2\r\nk2\r\n$2\r\nv2\r\n"
	for i := 0; i < len(raw); i += 5 {
		if _, err := conns[1].c.Write([]byte(raw[i:min(i+5, len(raw))])); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond) // separate segments (not a wait for a state)
	}
	if got := conns[1].read(); got != "+OK" {
		t.Fatalf("SET in pieces: %s", got)
	}
	conns[2].send("INCR", "n")
	conns[2].send("INCR", "n")
	conns[2].send("GET", "k2")
	for _, want := range []string{"(integer) 1", "(integer) 2", `"v2"`} {
		if got := conns[2].read(); got != want {
			t.Fatalf("pipeline: %s, want %s", got, want)
		}
	}
	// Retired again, then a message for the subscriber (pushLoop writes it;
	// its loop stays retired) and its UNSUBSCRIBE.
	retireAll(t, l, cls[0], cls[1], cls[2], cls[n-1])
	if got := ctl.do("PUBLISH", "ch", "hello"); got != "(integer) 1" {
		t.Fatalf("PUBLISH: %s", got)
	}
	if got := sub.read(); !strings.Contains(got, "hello") {
		t.Fatalf("message: %s", got)
	}
	sub.send("UNSUBSCRIBE")
	if got := sub.read(); !strings.Contains(got, "unsubscribe") {
		t.Fatalf("UNSUBSCRIBE: %s", got)
	}
	// CLIENT KILL of a retired loop's client, the peer's close of another:
	// both are unlinked.
	retireAll(t, l, cls[4], cls[5])
	if got := ctl.do("CLIENT", "KILL", "ID", strconv.FormatInt(cls[4].id, 10)); got != "(integer) 1" {
		t.Fatalf("CLIENT KILL: %s", got)
	}
	if !testutil.PollUntil(5*time.Second, conns[4].closed) {
		t.Fatal("killed client's connection still open")
	}
	conns[5].c.Close()
	if !testutil.PollUntil(5*time.Second, func() bool {
		return !strings.Contains(ctl.do("CLIENT", "LIST"), "name=c5 ")
	}) {
		t.Fatal("closed client still listed")
	}
	if strings.Contains(ctl.do("CLIENT", "LIST"), "name=c4 ") {
		t.Fatal("killed client still listed")
	}
	// Shutdown with retired loops: Run ends (connWG) and their
	// connections close.
	retireAll(t, l, cls[6], cls[7])
	if err := l.stop(t); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !testutil.PollUntil(5*time.Second, conns[6].closed) {
		t.Fatal("retired client's connection open after shutdown")
	}
}
