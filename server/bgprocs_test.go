package server

import (
	"runtime"
	"sync"
	"testing"
	"time"
)

func TestBorrowProcRaisesGOMAXPROCSWhileJobsRun(t *testing.T) {
	orig := runtime.GOMAXPROCS(0)
	t.Cleanup(func() {
		runtime.GOMAXPROCS(orig)
		bgProcs.mu.Lock()
		bgProcs.base, bgProcs.jobs = 0, 0
		bgProcs.mu.Unlock()
	})

	// Not configured (tests, embedders): the runtime is left alone.
	runtime.GOMAXPROCS(1)
	release, borrowed := borrowProc()
	release()
	if borrowed {
		t.Fatal("unconfigured: borrowed")
	}
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Fatalf("unconfigured: GOMAXPROCS %d, want 1", got)
	}

	bgProcs.mu.Lock()
	bgProcs.base = 1
	bgProcs.mu.Unlock()
	want := 1
	if runtime.NumCPU() > 1 {
		want = 2
	}
	r1, b1 := borrowProc()
	r2, b2 := borrowProc()
	if b1 != (want == 2) || b2 != (want == 2) {
		t.Fatalf("borrowed %v %v with %d CPUs", b1, b2, runtime.NumCPU())
	}
	if got := runtime.GOMAXPROCS(0); got != want {
		t.Fatalf("two jobs: GOMAXPROCS %d, want %d", got, want)
	}
	r1()
	r1() // a second release of the same job changes nothing
	if got := runtime.GOMAXPROCS(0); got != want {
		t.Fatalf("one job left: GOMAXPROCS %d, want %d", got, want)
	}
	r2()
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Fatalf("no job: GOMAXPROCS %d, want 1", got)
	}
}

// TestSnapshotPacer: lock waits are not work; a job with a P of its own
// sleeps once per quantum of work, (1-duty)/duty of it, less what earlier
// sleeps overran; one without sleeps after every step.
func TestSnapshotPacer(t *testing.T) {
	var now time.Time
	var slept []time.Duration
	newPacer := func(borrowed bool) *snapshotPacer {
		p := newSnapshotPacer(borrowed)
		p.now = func() time.Time { return now }
		p.sleep = func(d time.Duration) { slept = append(slept, d); now = now.Add(d) }
		p.start = now
		return p
	}
	var mu sync.Mutex
	step := func(p *snapshotPacer, wait, work time.Duration) {
		// A lock wait: the clock moves while mu.Lock blocks (here it
		// does not, so the wait is simulated by moving the clock in the
		// pacer's now between its two reads).
		calls := 0
		p.now = func() time.Time {
			calls++
			if calls == 2 {
				now = now.Add(wait)
			}
			return now
		}
		p.lock(&mu)
		mu.Unlock()
		p.now = func() time.Time { return now }
		now = now.Add(work)
		p.pause()
	}
	want := func(work time.Duration) time.Duration {
		return time.Duration(float64(work) * (1 - snapshotDuty) / snapshotDuty)
	}

	p := newPacer(true)
	for range 9 {
		step(p, 50*time.Microsecond, 100*time.Microsecond)
	}
	if len(slept) != 0 {
		t.Fatalf("slept %v within the first quantum", slept)
	}
	step(p, 50*time.Microsecond, 100*time.Microsecond) // 1 ms of work
	if len(slept) != 1 || slept[0] != want(time.Millisecond) {
		t.Fatalf("slept %v, want [%v]", slept, want(time.Millisecond))
	}

	// A sleep that overran shortens the next one.
	sleep := p.sleep
	p.sleep = func(d time.Duration) { sleep(d + 300*time.Microsecond) }
	for range 10 {
		step(p, 0, 100*time.Microsecond)
	}
	p.sleep = sleep
	for range 10 {
		step(p, 0, 100*time.Microsecond)
	}
	// slept records the overrun sleep as it lasted.
	if len(slept) != 3 || slept[0]+slept[1]+slept[2] != want(3*time.Millisecond) || slept[2] >= slept[0] {
		t.Fatalf("after an overrun: slept %v", slept)
	}

	slept = nil
	p = newPacer(false)
	step(p, 50*time.Microsecond, 100*time.Microsecond)
	step(p, 0, 40*time.Microsecond)
	if len(slept) != 2 || slept[0] != want(100*time.Microsecond) || slept[0]+slept[1] != want(140*time.Microsecond) {
		t.Fatalf("without a P of its own: slept %v", slept)
	}
}
