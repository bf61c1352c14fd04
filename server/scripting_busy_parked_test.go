package server

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/testutil"
)

// busyParkedCase is a client's transcript around a busy script: before
// runs before the script starts, during is sent while it runs (with its
// reply), after once it was killed.
type busyParkedCase struct {
	name                  string
	before, during, after [][2]string
}

var busyParkedCases = []busyParkedCase{
	{name: "plain",
		during: [][2]string{{"SET x 1", "-" + errBusy}},
		after:  [][2]string{{"GET x", "(nil)"}},
	},
	// A command queued while the script is busy is refused and flags
	// the transaction (processCommand's busy check -> flagTransaction).
	{name: "multi",
		before: [][2]string{{"MULTI", "+OK"}},
		during: [][2]string{{"SET x 1", "-" + errBusy}},
		after: [][2]string{
			{"EXEC", "-EXECABORT Transaction discarded because of previous errors."},
			{"GET x", "(nil)"},
		},
	},
}

const busyParkedBody = "\nlocal i = 0 while true do i = i + 1 end"

// runTranscript sends each command of steps on r and checks its reply.
func runTranscript(t *testing.T, what string, r *rconn, steps [][2]string) {
	t.Helper()
	for _, st := range steps {
		if got := r.do(strings.Fields(st[0])...); got != st[1] {
			t.Fatalf("%s: %s:\n got %s\nwant %s", what, st[0], got, st[1])
		}
	}
}

// TestBusyParkedBatch: batches that found the lock taken just before a
// script began (parked in lockBatch's mu.Lock while the script's batch
// held mu and had not yet published the script) are answered -BUSY once
// the script passes busy-reply-threshold, as Redis answers every
// command that arrives while the script runs, instead of waiting for the
// script's end. The pause point (Server.beforeBusy) holds the script
// until the clients' batches are parked. The rescue is started by the
// cron (nobody else sends) or by a client that finds the script busy.
// The same transcripts are checked against redis-server 7.0.15
// (TestBusyParkedBatchRedis).
func TestBusyParkedBatch(t *testing.T) {
	for _, tc := range busyParkedCases {
		for _, by := range []string{"cron", "client"} {
			t.Run(tc.name+"/"+by, func(t *testing.T) { testBusyParked(t, tc, by == "client") })
		}
	}
}

func testBusyParked(t *testing.T, tc busyParkedCase, byClient bool) {
	const nParked = 3
	entered := make(chan struct{})
	var fired atomic.Bool
	l := startLiveAfter(t, func(s *Server) {
		s.beforeBusy = func() {
			if !fired.CompareAndSwap(false, true) {
				return
			}
			close(entered)
			if !testutil.PollUntil(10*time.Second, func() bool { return s.parked.Load() >= nParked }) {
				t.Errorf("parked batches: %d, want %d", s.parked.Load(), nParked)
			}
		}
	})
	t.Cleanup(func() {
		if bs := l.s.loadBusy(); bs != nil {
			bs.stop()
		}
	})
	a, c := l.dial(t), l.dial(t)
	var bs []*rconn
	for range nParked {
		b := l.dial(t)
		runTranscript(t, "before", b, append([][2]string{{"PING", "+PONG"}}, tc.before...))
		bs = append(bs, b)
	}
	runTranscript(t, "before", c, [][2]string{{"PING", "+PONG"}})
	// Run starts the cron after the listeners (and takes mu before):
	// a script begun before then would hold it back.
	select {
	case <-l.s.serving:
	case <-time.After(10 * time.Second):
		t.Fatal("the server is not serving")
	}
	a.send("EVAL", busyParkedBody, "0")
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the script did not start")
	}
	for _, b := range bs {
		b.send(strings.Fields(tc.during[0][0])...)
	}
	waitBusy(t, l.s)
	l.clk.Advance(5 * time.Second) // busy-reply-threshold 5000 ms
	if byClient {
		runTranscript(t, "other client", c, [][2]string{{"PING", "-" + errBusy}})
	} else if !testutil.PollUntil(10*time.Second, func() bool {
		// The cron's ticker may be made after the first Advance: the
		// clock moves on until a tick lets the batches out.
		if l.s.parked.Load() == 0 {
			return true
		}
		l.clk.Advance(100 * time.Millisecond)
		return false
	}) {
		t.Fatalf("still parked: %d", l.s.parked.Load())
	}
	for _, b := range bs {
		if got := b.read(); got != tc.during[0][1] {
			t.Fatalf("parked %s during the script:\n got %s\nwant %s", tc.during[0][0], got, tc.during[0][1])
		}
		runTranscript(t, "during", b, tc.during[1:])
	}
	if l.s.loadBusy() == nil {
		t.Fatal("the script ended before SCRIPT KILL")
	}
	runTranscript(t, "kill", c, [][2]string{{"SCRIPT KILL", "+OK"}})
	if got := a.read(); !strings.HasPrefix(got, "-ERR Script killed by user with SCRIPT KILL") {
		t.Fatalf("killed script's reply: %s", got)
	}
	for _, b := range bs {
		runTranscript(t, "after", b, tc.after)
	}
	runTranscript(t, "after", a, [][2]string{{"PING", "+PONG"}})
	l.s.mu.Lock()
	parked, hand := l.s.parked.Load(), l.s.mu.handoff.Load()
	l.s.mu.Unlock()
	if parked != 0 || hand != nil {
		t.Fatalf("after: parked %d, handoff %v", parked, hand)
	}
}

// TestBusyParkedBatchRedis: busyParkedCases' transcripts on redis-server
// 7.0.15, its commands sent once the script is busy (another client's
// PING answers -BUSY).
func TestBusyParkedBatchRedis(t *testing.T) {
	for _, tc := range busyParkedCases {
		t.Run(tc.name, func(t *testing.T) {
			sock := startRedisOracle(t, []string{"--busy-reply-threshold", "50"})
			dial := func() *rconn {
				d := dialOracle(t, sock)
				t.Cleanup(func() { d.c.Close() })
				return &rconn{t: t, c: d.c, br: d.br}
			}
			a, b, c := dial(), dial(), dial()
			runTranscript(t, "before", b, append([][2]string{{"PING", "+PONG"}}, tc.before...))
			a.send("EVAL", busyParkedBody, "0")
			if !testutil.PollUntil(10*time.Second, func() bool { return c.do("PING") == "-"+errBusy }) {
				t.Fatal("the script did not become busy")
			}
			runTranscript(t, "during", b, tc.during)
			runTranscript(t, "kill", c, [][2]string{{"SCRIPT KILL", "+OK"}})
			if got := a.read(); !strings.HasPrefix(got, "-ERR Script killed by user with SCRIPT KILL") {
				t.Fatalf("killed script's reply: %s", got)
			}
			runTranscript(t, "after", b, tc.after)
		})
	}
}
