package server

import (
	"strings"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/resp"
	"github.com/vigil-kv/vigil/internal/testutil"
)

// TestStreamBlockDifferential (interop): blocked XREAD and XREADGROUP
// clients on redis-server 7.0.15 and on Vigil, woken by the same writes:
// the same replies, in the same order, and the same propagated stream
// (the served XREADGROUP as XCLAIMs, XGROUP SETID with NOACK). Each
// scenario blocks its clients (on Redis, until INFO counts them as
// blocked), runs writes on another connection and reads the woken
// replies.
func TestStreamBlockDifferential(t *testing.T) {
	h := newDiffHarness(t, nil)
	w := h.side(2)
	h.begin(w)
	type blocked struct {
		s    *diffSide
		args []string
	}
	waitBlocked := func(n int) {
		t.Helper()
		want := "blocked_clients:" + string(rune('0'+n))
		if !testutil.PollUntil(5*time.Second, func() bool {
			return strings.Contains(h.redis(w, "INFO", "clients"), want)
		}) {
			t.Fatalf("redis-server: not %d blocked clients", n)
		}
	}
	run := func(name string, setup [][]string, waiters []blocked, writes [][]string) {
		t.Helper()
		for _, cmd := range setup {
			if r, v := h.both(w, cmd...); r != v {
				h.fatalf("%s: setup %v: vigil %q, redis %q", name, cmd, v, r)
			}
		}
		for i, b := range waiters {
			h.record(strings.Join(b.args, " "))
			if _, err := b.s.rc.Write(resp.AppendCommandStrings(nil, b.args...)); err != nil {
				t.Fatal(err)
			}
			waitBlocked(i + 1)
			if got := h.vigil(b.s, b.args...); got != "" {
				h.fatalf("%s: %v did not block on Vigil: %q", name, b.args, got)
			}
		}
		for _, cmd := range writes {
			if r, v := h.both(w, cmd...); r != v {
				h.fatalf("%s: %v: vigil %q, redis %q", name, cmd, v, r)
			}
		}
		for _, b := range waiters {
			r := rawRead(t, b.s.rc, b.s.rbr)
			v := h.ts.take(b.s.vc)
			if r != v {
				h.fatalf("%s: woken %v: vigil %q, redis %q", name, b.args, v, r)
			}
		}
	}
	a, b, c3 := h.side(2), h.side(2), h.side(3)
	run("xread", [][]string{{"XADD", "s", "1-0", "f", "v"}},
		[]blocked{
			{a, []string{"XREAD", "BLOCK", "0", "STREAMS", "s", "$"}},
			{b, []string{"XREAD", "COUNT", "1", "BLOCK", "0", "STREAMS", "nokey", "s", "$", "1-0"}},
			{c3, []string{"XREAD", "BLOCK", "0", "STREAMS", "s", "$"}},
		},
		[][]string{{"MULTI"}, {"XADD", "s", "2-0", "a", "1"}, {"XADD", "s", "3-0", "b", "2"}, {"EXEC"}})
	run("xreadgroup", [][]string{{"XGROUP", "CREATE", "s", "g", "$"}},
		[]blocked{
			{a, []string{"XREADGROUP", "GROUP", "g", "alice", "COUNT", "1", "BLOCK", "0", "STREAMS", "s", ">"}},
			{b, []string{"XREADGROUP", "GROUP", "g", "bob", "NOACK", "BLOCK", "0", "STREAMS", "s", ">"}},
			{c3, []string{"XREADGROUP", "GROUP", "g", "carol", "BLOCK", "0", "STREAMS", "s", ">"}},
		},
		[][]string{{"XADD", "s", "4-0", "a", "1"}, {"XADD", "s", "5-0", "b", "2"}, {"XSETID", "s", "9-0"}, {"XADD", "s", "10-0", "c", "3"}})
	run("gone", [][]string{{"XGROUP", "CREATE", "s", "g2", "$"}, {"XADD", "t", "1-0", "f", "v"}, {"XGROUP", "CREATE", "t", "g", "$"}},
		[]blocked{
			{a, []string{"XREADGROUP", "GROUP", "g2", "alice", "BLOCK", "0", "STREAMS", "s", ">"}},
			{b, []string{"XREADGROUP", "GROUP", "g", "bob", "BLOCK", "0", "STREAMS", "t", ">"}},
			{c3, []string{"XREAD", "BLOCK", "0", "STREAMS", "t", "$"}},
		},
		[][]string{{"XGROUP", "DESTROY", "s", "g2"}, {"DEL", "t"}, {"XADD", "t", "7-0", "x", "y"}})
	h.checkAOF()
}
