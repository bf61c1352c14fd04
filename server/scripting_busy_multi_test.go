package server

import (
	"strings"
	"testing"
	"time"
)

// TestBusyMultiFlagged: while a script is busy, MULTI and DISCARD are
// served (CMD_ALLOW_BUSY), a command queued after MULTI is refused with
// -BUSY and flags the transaction, and EXEC is refused with
// "-EXECABORT Transaction discarded because of: BUSY ..." (rejectCommand
// -> execCommandAbort); an EXEC sent once the script has ended answers
// "previous errors". Checked against redis-server 7.0.15 by hand (a
// 600 ms Lua loop, busy-reply-threshold 50): the same replies.
func TestBusyMultiFlagged(t *testing.T) {
	l := startLive(t)
	t.Cleanup(func() {
		if bs := l.s.loadBusy(); bs != nil {
			bs.stop()
		}
	})
	a, b := l.dial(t), l.dial(t)
	if got := b.do("WATCH", "w"); got != "+OK" {
		t.Fatal(got)
	}
	spin := func() {
		a.send("EVAL", "while true do end", "0")
		waitBusy(t, l.s)
		l.clk.Advance(5 * time.Second)
	}
	kill := func() {
		// From a new connection: b is in MULTI, where SCRIPT KILL is
		// queued (as redis-server 7.0.15 does).
		if got := l.dial(t).do("SCRIPT", "KILL"); got != "+OK" {
			t.Fatalf("SCRIPT KILL: %s", got)
		}
		a.read()
	}
	spin()
	for _, tc := range [][2]string{
		{"MULTI", "+OK"},
		{"MULTI", "-ERR MULTI calls can not be nested"},
		{"SET x 1", "-" + errBusy},
		{"EXEC", "-EXECABORT Transaction discarded because of: " + errBusy},
		// No longer in MULTI: rejectCommand still answers EXEC with
		// execCommandAbort (redis-server 7.0.15 does).
		{"EXEC", "-EXECABORT Transaction discarded because of: " + errBusy},
		{"DISCARD", "-ERR DISCARD without MULTI"},
		{"MULTI", "+OK"},
		{"DISCARD", "+OK"},
		{"MULTI", "+OK"},
		{"SET x 1", "-" + errBusy},
	} {
		if got := b.do(strings.Fields(tc[0])...); got != tc[1] {
			t.Fatalf("%s during a busy script:\n got %s\nwant %s", tc[0], got, tc[1])
		}
	}
	kill()
	if got := b.do("EXEC"); got != "-EXECABORT Transaction discarded because of previous errors." {
		t.Fatalf("EXEC after the script: %s", got)
	}
	if got := b.do("GET", "x"); got != "(nil)" {
		t.Fatalf("GET x: %s", got)
	}
	// The discarded transactions released the WATCH: a change of w by
	// another client does not fail the next one.
	if got := a.do("SET", "w", "1"); got != "+OK" {
		t.Fatal(got)
	}
	for _, tc := range [][2]string{{"MULTI", "+OK"}, {"SET x 2", "+QUEUED"}, {"EXEC", "[+OK]"}} {
		if got := b.do(strings.Fields(tc[0])...); got != tc[1] {
			t.Fatalf("%s after the script:\n got %s\nwant %s", tc[0], got, tc[1])
		}
	}
}
