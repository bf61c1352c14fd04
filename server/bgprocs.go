package server

import (
	"runtime"
	"sync"
)

// bgProcs lends background snapshot work (BGSAVE, the AOF rewrite, a full
// sync's payload) a thread of its own. Redis forks a child for these, which
// the kernel runs on another core while the parent keeps serving; here the
// snapshot is a goroutine, and with vigil-server's default of one P
// (ConfigureRuntime) it would take turns with every client on one thread.
// While at least one such job runs, GOMAXPROCS is raised by one (when the
// machine has the core) and put back when the last one ends. Only a process
// whose runtime ConfigureRuntime set is touched: tests and embedders keep
// theirs.
var bgProcs struct {
	mu   sync.Mutex
	base int // GOMAXPROCS set by ConfigureRuntime; 0: leave the runtime alone
	jobs int
}

// borrowProc is called when a background snapshot job starts; the function
// it returns is called once when that job ends.
func borrowProc() (release func()) {
	bgProcs.mu.Lock()
	defer bgProcs.mu.Unlock()
	if bgProcs.base == 0 {
		return func() {}
	}
	bgProcs.jobs++
	if bgProcs.jobs == 1 && bgProcs.base < runtime.NumCPU() {
		runtime.GOMAXPROCS(bgProcs.base + 1)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			bgProcs.mu.Lock()
			defer bgProcs.mu.Unlock()
			bgProcs.jobs--
			if bgProcs.jobs == 0 {
				runtime.GOMAXPROCS(bgProcs.base)
			}
		})
	}
}
