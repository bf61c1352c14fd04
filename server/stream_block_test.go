package server

import (
	"strings"
	"testing"
	"time"
)

// TestXReadBlock: XREAD BLOCK parks the client in the blocking registry
// and an XADD serves it after the command, waiters in blocking order, each
// with the entries after its ID ($: the last ID when it blocked), COUNT
// (1000 when absent) applied; XDEL, XTRIM and XSETID do not serve (Redis
// 7.0 signals a stream only on XADD and key creation), so an XSETID past
// the waiter's ID leaves it blocked until an entry comes; the deadline is
// on the server's clock and a timed-out XREAD answers a null array; a
// RESP3 waiter gets a map.
func TestXReadBlock(t *testing.T) {
	ts := newTestServer(t)
	a, b, c3, d, w := ts.client(), ts.client(), ts.client(), ts.client(), ts.client()
	ts.do(c3, "HELLO", "3")
	for _, x := range []struct {
		c    *Client
		args []string
	}{
		{a, []string{"XREAD", "BLOCK", "0", "STREAMS", "s", "$"}},
		{b, []string{"XREAD", "BLOCK", "0", "STREAMS", "s", "5-0"}},
		{c3, []string{"XREAD", "COUNT", "1", "BLOCK", "0", "STREAMS", "s2", "s", "$", "$"}},
	} {
		if got := ts.do(x.c, x.args...); got != "" {
			t.Fatalf("%v replied %q, want to block", x.args, got)
		}
	}
	if n, _ := ts.blockedCount(); n != 3 {
		t.Fatalf("blocked %d, want 3", n)
	}
	ts.do(w, "MULTI")
	ts.do(w, "XADD", "s", "3-0", "a", "1")
	ts.do(w, "XADD", "s", "4-0", "b", "2")
	if got := ts.do(w, "EXEC"); got != "*2\r\n$3\r\n3-0\r\n$3\r\n4-0\r\n" {
		t.Fatalf("EXEC: %q", got)
	}
	if got := ts.take(a); got != "*1\r\n*2\r\n$1\r\ns\r\n*2\r\n*2\r\n$3\r\n3-0\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$3\r\n4-0\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n" {
		t.Errorf("a got %q", got)
	}
	if got := ts.take(c3); got != "%1\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n3-0\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n" {
		t.Errorf("c3 (RESP3, COUNT 1) got %q", got)
	}
	if got := ts.take(b); got != "" || !ts.isBlocked(b) {
		t.Fatalf("b (after 5-0) got %q, want still blocked", got)
	}
	// Moving last_id past b's ID serves nothing.
	for _, cmd := range [][]string{{"XDEL", "s", "3-0"}, {"XSETID", "s", "10-0"}, {"XTRIM", "s", "MAXLEN", "0"}} {
		ts.do(w, cmd...)
		if got := ts.take(b); got != "" || !ts.isBlocked(b) {
			t.Fatalf("after %v b got %q, want still blocked", cmd, got)
		}
	}
	ts.do(w, "XADD", "s", "11-0", "c", "3")
	if got := ts.take(b); got != "*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$4\r\n11-0\r\n*2\r\n$1\r\nc\r\n$1\r\n3\r\n" {
		t.Errorf("b got %q", got)
	}
	// The deadline.
	ts.do(d, "XREAD", "BLOCK", "1500", "STREAMS", "s", "$")
	ts.clk.Advance(1499 * time.Millisecond)
	if got := ts.take(d); got != "" || !ts.isBlocked(d) {
		t.Fatalf("before the deadline: %q", got)
	}
	ts.clk.Advance(time.Millisecond)
	if got := ts.take(d); got != nullArray || ts.isBlocked(d) {
		t.Fatalf("at the deadline: %q", got)
	}
	// Data already there: no blocking.
	if got := ts.do(d, "XREAD", "BLOCK", "0", "STREAMS", "s", "10-0"); got != "*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$4\r\n11-0\r\n*2\r\n$1\r\nc\r\n$1\r\n3\r\n" {
		t.Errorf("XREAD BLOCK with data: %q", got)
	}
	if n, _ := ts.blockedCount(); n != 0 {
		t.Errorf("blocked_clients %d at the end", n)
	}
	if err := ts.s.ks.Check(); err != nil {
		t.Fatal(err)
	}
}

// TestXReadGroupBlock: XREADGROUP BLOCK ... > waits for entries past the
// group's last ID, serving its waiters in blocking order (each delivery
// moves the group's last ID, so the second waiter gets only what is left,
// and stays blocked when nothing is), making the entries pending for the
// served consumer (none with NOACK); XGROUP DESTROY wakes the group's
// waiters with -NOGROUP, and the key's deletion or replacement with
// -UNBLOCKED (7.0.15's signalDeletedKeyAsReady), while an XREAD stays
// blocked.
func TestXReadGroupBlock(t *testing.T) {
	ts := newTestServer(t)
	a, b, w := ts.client(), ts.client(), ts.client()
	ts.do(w, "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
	for _, x := range []struct {
		c    *Client
		args []string
	}{
		{a, []string{"XREADGROUP", "GROUP", "g", "alice", "COUNT", "1", "BLOCK", "0", "STREAMS", "s", ">"}},
		{b, []string{"XREADGROUP", "GROUP", "g", "bob", "BLOCK", "0", "STREAMS", "s", ">"}},
	} {
		if got := ts.do(x.c, x.args...); got != "" {
			t.Fatalf("%v replied %q, want to block", x.args, got)
		}
	}
	ts.do(w, "XADD", "s", "1-0", "f", "v")
	if got := ts.take(a); got != "*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-0\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n" {
		t.Errorf("alice got %q", got)
	}
	if got := ts.take(b); got != "" || !ts.isBlocked(b) {
		t.Fatalf("bob got %q, want still blocked (the group's last ID moved past 1-0)", got)
	}
	if got := ts.do(w, "XPENDING", "s", "g"); got != "*4\r\n:1\r\n$3\r\n1-0\r\n$3\r\n1-0\r\n*1\r\n*2\r\n$5\r\nalice\r\n$1\r\n1\r\n" {
		t.Errorf("XPENDING: %q", got)
	}
	ts.do(w, "XADD", "s", "2-0", "f", "w")
	if got := ts.take(b); got != "*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n2-0\r\n*2\r\n$1\r\nf\r\n$1\r\nw\r\n" {
		t.Errorf("bob got %q", got)
	}
	// NOACK: delivered, not pending.
	ts.do(a, "XREADGROUP", "GROUP", "g", "alice", "NOACK", "BLOCK", "0", "STREAMS", "s", ">")
	ts.do(w, "XADD", "s", "3-0", "f", "x")
	ts.take(a)
	if got := ts.do(w, "XPENDING", "s", "g"); !strings.HasPrefix(got, "*4\r\n:2\r\n") {
		t.Errorf("XPENDING after NOACK: %q", got)
	}
	// The group goes: its waiter gets -NOGROUP.
	ts.do(b, "XREADGROUP", "GROUP", "g", "bob", "BLOCK", "0", "STREAMS", "s", ">")
	if got := ts.do(w, "XGROUP", "DESTROY", "s", "g"); got != ":1\r\n" {
		t.Fatalf("XGROUP DESTROY: %q", got)
	}
	if got := ts.take(b); got != "-NOGROUP the consumer group this client was blocked on no longer exists\r\n" {
		t.Errorf("bob after DESTROY got %q", got)
	}
	// The key goes (deleted, or replaced by another type): -UNBLOCKED.
	for _, gone := range [][]string{{"DEL", "s"}, {"SET", "s", "x"}} {
		ts.do(w, "DEL", "s")
		ts.do(w, "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
		ts.do(b, "XREADGROUP", "GROUP", "g", "bob", "BLOCK", "0", "STREAMS", "s", ">")
		ts.do(w, gone...)
		if got := ts.take(b); got != "-UNBLOCKED the stream key no longer exists\r\n" {
			t.Errorf("bob after %v got %q", gone, got)
		}
	}
	// XREAD (no group) stays blocked when its key goes.
	ts.do(w, "XADD", "r", "1-0", "f", "v")
	ts.do(a, "XREAD", "BLOCK", "0", "STREAMS", "r", "$")
	ts.do(w, "DEL", "r")
	if got := ts.take(a); got != "" || !ts.isBlocked(a) {
		t.Fatalf("XREAD after DEL got %q, want still blocked", got)
	}
	ts.do(w, "XADD", "r", "2-0", "f", "v")
	ts.take(a)
	if n, _ := ts.blockedCount(); n != 0 {
		t.Errorf("blocked_clients %d at the end", n)
	}
	if err := ts.s.ks.Check(); err != nil {
		t.Fatal(err)
	}
}
