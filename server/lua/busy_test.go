package lua

import (
	"runtime"
	"strings"
	"testing"
)

// TestForLoopBoxesIndexOnce: a numeric for loop boxes its new index once
// per iteration (the same value is the internal index and the loop
// variable), so an empty loop allocates 8 bytes an iteration, not 16.
// Redis 7.0's replication.tcl "Master stream is correctly processed while
// the replica has a script in -BUSY state" runs 3e9 empty iterations on
// the replica; the second copy's allocations and the garbage collection
// they cost took vigil-server past the suite's timeout.
func TestForLoopBoxesIndexOnce(t *testing.T) {
	e := New(&fakeHost{})
	defer e.Close()
	cancel := e.Arm(true) // the interruptible loop, as with busy-reply-threshold
	defer cancel()
	const n = 1 << 20
	// Indices past gopher-lua's preloaded small numbers are boxed.
	body := "for i = 1e9, 1e9 + " + itoa(n) + " do end return 1"
	eval(t, e, body, nil, nil) // compile and warm up
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if got := eval(t, e, body, nil, nil); got != ":1\r\n" {
		t.Fatalf("loop: %q", got)
	}
	runtime.ReadMemStats(&after)
	if per := float64(after.TotalAlloc-before.TotalAlloc) / n; per > 12 {
		t.Errorf("an empty for loop allocates %.1f bytes an iteration, want 8 (one boxed index)", per)
	}
}

// TestCancelStopsRunningScript: with the context polled on an
// instruction count, a cancelled script still stops, in a tight loop and
// in a loop of short Lua calls made through pcall (each a nested run of
// the VM shorter than the poll interval) and in a pcall'd endless loop
// (the error it catches is raised again by the next instruction, not
// the next poll, which would land in the pcall'd loop again).
func TestCancelStopsRunningScript(t *testing.T) {
	for _, body := range []string{
		"while true do end",
		"local f = function() return 1 end while true do pcall(f) end",
		"while true do pcall(function() local i = 0 while true do i = i + 1 end end) end",
		"local t = {} for i = 1, 100 do t[i] = 100 - i end while true do table.sort(t, function(a, b) return a < b end) end",
	} {
		e := New(&fakeHost{})
		cancel := e.Arm(true)
		cancel()
		got := eval(t, e, body, nil, nil)
		if !strings.HasPrefix(got, "-") || !strings.Contains(got, "context canceled") {
			t.Errorf("%q after cancel: %q, want the context's error", body, got)
		}
		e.Disarm(true)
		if got := eval(t, e, "return 7", nil, nil); got != ":7\r\n" {
			t.Errorf("after a stopped script: %q", got)
		}
		e.Close()
	}
}
