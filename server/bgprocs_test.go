package server

import (
	"runtime"
	"testing"
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
	borrowProc()()
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
	r1 := borrowProc()
	r2 := borrowProc()
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
