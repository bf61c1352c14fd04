package server

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/testutil"
)

// cronTick advances l's fake clock by a cron period and waits until the
// cron has run once more.
func cronTick(t *testing.T, l *liveServer) {
	t.Helper()
	// An Advance before the cron's goroutine made its ticker is lost.
	if !testutil.PollUntil(5*time.Second, l.s.cronTicking.Load) {
		t.Fatal("the cron did not start")
	}
	l.s.mu.Lock()
	n := l.s.stats.cronLoops
	l.s.mu.Unlock()
	l.clk.Advance(100 * time.Millisecond)
	if !testutil.PollUntil(5*time.Second, func() bool {
		l.s.mu.Lock()
		defer l.s.mu.Unlock()
		return l.s.stats.cronLoops > n
	}) {
		t.Fatal("the cron did not run")
	}
}

// clientNamed is l's client with CLIENT SETNAME name.
func clientNamed(t *testing.T, l *liveServer, name string) *Client {
	t.Helper()
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	for _, c := range l.s.clientsByID() {
		if c.name == name {
			return c
		}
	}
	t.Fatalf("no client %q", name)
	return nil
}

// heldBuffers reports the capacities of c's query and reply buffers while
// its loop waits for input, taking them as the cron does (ok false: the
// loop holds them).
func heldBuffers(c *Client) (query, reply int, ok bool) {
	if !c.bufIdle.CompareAndSwap(bufWaiting, bufTrimming) {
		return 0, 0, false
	}
	defer c.bufIdle.Store(bufWaiting)
	return c.rd.BufferCap(), cap(c.w.B), true
}

// TestIdleClientBuffersDropped: a client that sent a big argument and got
// a big reply keeps both buffers while it is active, and the cron drops
// them once it has been idle for more than 2 seconds, as Redis frees an
// idle client's query buffer (clientsCronResizeQueryBuffer) and shrinks
// its reply buffer; the client then works as before.
func TestIdleClientBuffersDropped(t *testing.T) {
	l, addr := startLiveTCP(t)
	a := dialTCPLive(t, addr)
	big := strings.Repeat("v", 200<<10)
	a.do("CLIENT", "SETNAME", "big")
	a.do("SET", "k", big)
	if got := a.do("STRLEN", "k"); got != "(integer) "+strconv.Itoa(len(big)) {
		t.Fatalf("STRLEN: %s", got)
	}
	a.send("GET", "k")
	if got := a.read(); len(got) < len(big) {
		t.Fatalf("GET returned %d bytes", len(got))
	}
	cl := clientNamed(t, l, "big")
	tick := func() { cronTick(t, l) }
	var q, r int
	if !testutil.PollUntil(5*time.Second, func() bool {
		var ok bool
		q, r, ok = heldBuffers(cl)
		return ok
	}) {
		t.Fatal("the client's loop never waited for input")
	}
	if q < len(big) {
		t.Fatalf("query buffer of %d bytes after a %d-byte argument", q, len(big))
	}
	// An active client keeps them (the cron's pass over every client).
	tick()
	if q2, r2, _ := heldBuffers(cl); q2 != q || r2 != r {
		t.Fatalf("active client's buffers changed: %d/%d -> %d/%d", q, r, q2, r2)
	}
	cl.lastInteraction.Store(time.Now().UnixMilli() - 3000)
	tick()
	if !testutil.PollUntil(5*time.Second, func() bool {
		q, r, _ := heldBuffers(cl)
		return q == 0 && r == 0
	}) {
		q, r, _ := heldBuffers(cl)
		t.Fatalf("idle client's buffers: query %d, reply %d bytes", q, r)
	}
	if got := a.do("STRLEN", "k"); got != "(integer) "+strconv.Itoa(len(big)) {
		t.Fatalf("STRLEN after the drop: %s", got)
	}
	a.do("SET", "k2", big[:1000])
	if got := a.do("GET", "k2"); got != strconv.Quote(big[:1000]) {
		t.Fatalf("GET after the drop: %.40q", got)
	}
}

// TestIdleSubscriberBuffersDropped: a subscriber's asynchronous queue
// (abuf, aspare), grown by big messages, is dropped once it has been idle
// for more than 2 seconds and nothing is queued; messages published after
// the drop still arrive, in order.
func TestIdleSubscriberBuffersDropped(t *testing.T) {
	l, addr := startLiveTCP(t)
	sub, pub := dialTCPLive(t, addr), dialTCPLive(t, addr)
	sub.do("CLIENT", "SETNAME", "sub")
	sub.send("SUBSCRIBE", "ch")
	if got := sub.read(); !strings.Contains(got, "subscribe") {
		t.Fatalf("SUBSCRIBE: %s", got)
	}
	big := strings.Repeat("m", 100<<10)
	for i := range 3 {
		pub.do("PUBLISH", "ch", big+strconv.Itoa(i))
	}
	for i := range 3 {
		if got := sub.read(); !strings.Contains(got, big+strconv.Itoa(i)) {
			t.Fatalf("message %d: %.60q", i, got)
		}
	}
	cl := clientNamed(t, l, "sub")
	queues := func() (int, int) {
		cl.amu.Lock()
		defer cl.amu.Unlock()
		return cap(cl.abuf), cap(cl.aspare)
	}
	if a, s := queues(); a+s < len(big) {
		t.Fatalf("queue buffers %d + %d bytes after %d-byte messages", a, s, len(big))
	}
	cl.lastInteraction.Store(time.Now().UnixMilli() - 3000)
	if !testutil.PollUntil(5*time.Second, func() bool {
		l.clk.Advance(100 * time.Millisecond) // cron ticks
		a, s := queues()
		return a == 0 && s == 0
	}) {
		a, s := queues()
		t.Fatalf("idle subscriber's queue buffers: %d + %d bytes", a, s)
	}
	for i := range 3 {
		pub.do("PUBLISH", "ch", "after"+strconv.Itoa(i))
	}
	for i := range 3 {
		if got := sub.read(); !strings.Contains(got, "after"+strconv.Itoa(i)) {
			t.Fatalf("message after the drop %d: %.60q", i, got)
		}
	}
}
