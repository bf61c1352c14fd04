package server

import (
	"testing"
	"time"
)

// TestIdleGCDue: a collection and scavenge are due only once the server
// has idled for idleGCAfter and what the heap allocated and the keyspace
// freed since the last collection, plus the free resident pages, is at
// least max(idleGCMinGarbage, an eighth of the live heap).
func TestIdleGCDue(t *testing.T) {
	const mb = 1 << 20
	for _, tc := range []struct {
		idle                         time.Duration
		allocated, freed, free, live uint64
		want                         bool
	}{
		{idleGCAfter, 4 * mb, 0, 0, 8 * mb, true},
		{idleGCAfter - time.Millisecond, 1 << 30, 1 << 30, 1 << 30, 0, false}, // still busy
		{time.Hour, 4*mb - 1, 0, 0, 8 * mb, false},                            // too little to bother
		{idleGCAfter, 49 * mb, 0, 0, 400 * mb, false},                         // below an eighth of the live heap
		{idleGCAfter, 50 * mb, 0, 0, 400 * mb, true},
		{idleGCAfter, 0, 50 * mb, 0, 400 * mb, true}, // a FLUSHALL allocates nothing
		{idleGCAfter, 0, 0, 50 * mb, 400 * mb, true}, // free pages the scavenger keeps
		{idleGCAfter, 20 * mb, 15 * mb, 15 * mb, 400 * mb, true},
	} {
		if got := idleGCDue(tc.idle, tc.allocated, tc.freed, tc.free, tc.live); got != tc.want {
			t.Errorf("idleGCDue(%v, %d, %d, %d, %d) = %v, want %v", tc.idle, tc.allocated, tc.freed, tc.free, tc.live, got, tc.want)
		}
	}
}

var idleGarbage []byte

// TestIdleRelease: the hook SetIdleRelease sets runs once the idle
// collection is due, after it.
func TestIdleRelease(t *testing.T) {
	ts := newTestServer(t)
	released := make(chan struct{}, 1)
	ts.s.SetIdleRelease(func() {
		select {
		case released <- struct{}{}:
		default:
		}
	})
	deadline := time.After(30 * time.Second)
	for {
		ts.s.mu.Lock()
		ts.s.idleGCCron()
		ts.s.mu.Unlock()
		select {
		case <-released:
			return
		case <-deadline:
			t.Fatal("the idle release hook did not run")
		case <-time.After(10 * time.Millisecond):
		}
		// Garbage for the collection to be due, and idle time.
		idleGarbage = make([]byte, 2*idleGCMinGarbage)
		ts.clk.Advance(idleGCAfter)
	}
}

// TestIdleGCForDroppedBuffers: client buffers the cron dropped
// (idlebuf.go), at least an eighth of the live heap, start the collection
// and release while other clients run commands (the server is not idle),
// once; less than that does not.
func TestIdleGCForDroppedBuffers(t *testing.T) {
	ts := newTestServer(t)
	released := make(chan struct{}, 4)
	ts.s.SetIdleRelease(func() { released <- struct{}{} })
	busyTick := func(dropped uint64) {
		ts.s.mu.Lock()
		defer ts.s.mu.Unlock()
		ts.s.stats.commands++ // a command ran since the last tick
		ts.s.idleGC.dropped += dropped
		ts.s.idleGCCron()
	}
	busyTick(0)
	busyTick(idleGCMinGarbage - 1)
	select {
	case <-released:
		t.Fatal("a collection for less than idleGCMinGarbage of dropped buffers")
	case <-time.After(50 * time.Millisecond):
	}
	busyTick(1 << 30) // more than an eighth of any heap this test has
	select {
	case <-released:
	case <-time.After(30 * time.Second):
		t.Fatal("no collection for the dropped buffers")
	}
	ts.s.mu.Lock()
	left := ts.s.idleGC.dropped
	ts.s.mu.Unlock()
	if left != 0 {
		t.Fatalf("dropped count %d after the collection started, want 0", left)
	}
}

// TestGCFloorPercent: the GC percent puts the next goal at live +
// max(live, floor), with Go's 4 MB minimum (which scales with the
// percent) at most the floor.
func TestGCFloorPercent(t *testing.T) {
	const mb = 1 << 20
	for _, tc := range []struct {
		floor, live uint64
		want        int
	}{
		{64 * mb, 0, 1600},
		{64 * mb, 2 * mb, 1600},
		{64 * mb, 4 * mb, 1600},
		{64 * mb, 16 * mb, 400},
		{64 * mb, 32 * mb, 200},
		{64 * mb, 64 * mb, 100},
		{64 * mb, 500 * mb, 100},
	} {
		if got := gcFloorPercent(tc.floor, tc.live); got != tc.want {
			t.Errorf("gcFloorPercent(%d MB, %d MB) = %d, want %d", tc.floor/mb, tc.live/mb, got, tc.want)
		}
	}
}
