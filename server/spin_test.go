//go:build linux

package server

import (
	"testing"
	"time"
)

// TestSpinnerSkips: a batch's end kicks the idle spinner unless the batch
// woke a replica's writer (the replica needs the CPU) or the same client
// ended the batch before too (its next request cannot come before it
// read the reply); batches of other clients in between kick it again.
func TestSpinnerSkips(t *testing.T) {
	sp := &idleSpinner{kick: make(chan struct{}, 1)}
	kicked := func() bool { return spinnerKicked(sp) }
	steps := []struct {
		handoff bool
		client  int64
		kick    bool
	}{
		{false, 1, true},  // a first batch
		{false, 2, true},  // another client's
		{false, 2, false}, // the same client again
		{false, 1, true},  // clients taking turns
		{true, 2, false},  // fed a replica
		{false, 1, true},  // the next batch of another client
		{true, 1, false},  // fed a replica, and the same client
		{false, 1, false}, // the same client
		{false, 3, true},
	}
	for i, st := range steps {
		if st.handoff {
			sp.handoff()
			sp.handoff()
		}
		sp.activity(st.client)
		if got := kicked(); got != st.kick {
			t.Fatalf("step %d (client %d, fed a replica %v): kicked %v, want %v", i, st.client, st.handoff, got, st.kick)
		}
	}
}

// TestLoadavgRunning: the runnable threads are the fourth field's
// numerator of /proc/loadavg; anything else is not a count.
func TestLoadavgRunning(t *testing.T) {
	for _, tc := range []struct {
		in string
		n  int
		ok bool
	}{
		{"0.52 0.58 0.59 3/245 12345\n", 3, true},
		{"12.00 9.10 4.00 17/1024 99\n", 17, true},
		{"0.00 0.00 0.00 0/1 1", 0, true},
		{"0.52 0.58 0.59 /245 12345\n", 0, false},
		{"0.52 0.58 0.59 3 12345\n", 0, false},
		{"0.52 0.58 0.59 3", 0, false},
		{"0.52 0.58", 0, false},
		{"", 0, false},
		{"a b c x/2 1", 0, false},
	} {
		n, ok := loadavgRunning([]byte(tc.in))
		if ok != tc.ok || (ok && n != tc.n) {
			t.Errorf("loadavgRunning(%q) = %d, %v; want %d, %v", tc.in, n, ok, tc.n, tc.ok)
		}
	}
}

// TestSpinGuardSamples: the spinner spins while fewer than spinGuardBusy
// of the last spinGuardSamples samples found the machine contended, and
// again once enough uncontended samples have pushed those out.
func TestSpinGuardSamples(t *testing.T) {
	var g spinGuard
	if !g.spare() {
		t.Fatal("no samples yet: want spare")
	}
	for i := 1; i < spinGuardBusy; i++ {
		g.record(true)
		if !g.spare() {
			t.Fatalf("%d contended samples of %d: want spare", i, spinGuardBusy)
		}
	}
	g.record(true)
	if g.spare() {
		t.Fatalf("%d contended samples: want no spinning", spinGuardBusy)
	}
	// Uncontended samples push the contended ones out of the window.
	for i := 0; i < spinGuardSamples-spinGuardBusy; i++ {
		g.record(false)
		if g.spare() {
			t.Fatalf("after %d uncontended samples the %d contended ones are still in the window: want no spinning", i+1, spinGuardBusy)
		}
	}
	g.record(false)
	if !g.spare() {
		t.Fatal("a contended sample left the window: want spare")
	}
	for i := 0; i < 2*spinGuardSamples; i++ {
		g.record(i%4 == 0) // one in four: below spinGuardBusy of 8
	}
	if !g.spare() {
		t.Fatal("one contended sample in four: want spare")
	}
}

// TestSpinGuardAllow: without /proc/loadavg (or with the guard off) the
// spinner always spins; with it, a due sample is taken (the next one is
// due spinGuardEvery later) and none before.
func TestSpinGuardAllow(t *testing.T) {
	off := spinGuard{fd: -1}
	if !off.allow(time.Now()) {
		t.Fatal("guard off: want spinning allowed")
	}
	var g spinGuard
	g.open(2)
	defer g.close()
	if g.fd < 0 {
		t.Skip("/proc/loadavg not readable")
	}
	now := time.Now()
	g.allow(now)
	if want := now.Add(spinGuardEvery); !g.next.Equal(want) {
		t.Fatalf("next sample at %v, want %v", g.next, want)
	}
	// All contended: the next samples decide alone.
	g.samples = 1<<spinGuardSamples - 1
	if g.allow(now.Add(spinGuardEvery / 2)) {
		t.Fatal("no sample due and the window contended: want no spinning")
	}
	if g.samples != 1<<spinGuardSamples-1 {
		t.Fatalf("a sample was taken before it was due: samples %08b", g.samples)
	}
	g.allow(now.Add(spinGuardEvery))
	if g.samples>>1 != 1<<(spinGuardSamples-1)-1 {
		t.Fatalf("the due sample was not recorded: samples %08b", g.samples)
	}
}

// TestDrainedSkipsPipelined: the end of a client's input kicks the idle
// spinner after a batch of one command, not after a pipelined one (more
// than one command since the socket was last drained), and the count
// starts again either way.
func TestDrainedSkipsPipelined(t *testing.T) {
	sp := &idleSpinner{kick: make(chan struct{}, 1)}
	s := &Server{spinner: sp}
	kicked := func() bool { return spinnerKicked(sp) }
	for i, st := range []struct {
		id   int64
		cmds int
		kick bool
	}{
		{1, 1, true},   // one command
		{2, 16, false}, // pipelined
		{3, 2, false},  // two commands are a pipeline too
		{4, 0, true},   // nothing ran (a partial command)
		{5, 1, true},
	} {
		c := &Client{id: st.id, batchCmds: st.cmds}
		s.drained(c)
		if got := kicked(); got != st.kick {
			t.Fatalf("step %d (%d commands): kicked %v, want %v", i, st.cmds, got, st.kick)
		}
		if c.batchCmds != 0 {
			t.Fatalf("step %d: batchCmds %d after drained, want 0", i, c.batchCmds)
		}
	}
}

// spinnerKicked reports (and takes) a pending kick of sp.
func spinnerKicked(sp *idleSpinner) bool {
	select {
	case <-sp.kick:
		return true
	default:
		return false
	}
}
