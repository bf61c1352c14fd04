package server

import (
	"runtime"
	"sync"
	"time"
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

// snapshotDuty is the share of wall time a background snapshot job (BGSAVE,
// the AOF rewrite) spends working: after each step it sleeps for
// (1-duty)/duty of the time the step took. Redis's fork child competes
// with the parent and the clients for the cores as one more process; a
// goroutine that only parks for a microsecond between steps took about two
// thirds of a core on a 2-core machine and left clients a third of their
// normal throughput (1 M keys, 8 clients: 0.33-0.45 of normal, the save
// 0.55x Redis's duration). At 60% the clients keep 0.64-0.70 of normal
// throughput and the save still takes 0.74-0.85x Redis's (50%: 0.78, but
// 0.92x Redis's duration). Lowering the thread's priority (nice 5 or 19)
// instead did worse on both counts.
const snapshotDuty = 0.6

// snapshotPacer paces a background snapshot job to snapshotDuty.
type snapshotPacer struct{ last time.Time }

func newSnapshotPacer() *snapshotPacer { return &snapshotPacer{last: time.Now()} }

// pause is called after each step (its lock hold and its encoding): it
// sleeps in proportion to the time since the previous pause returned. The
// sleep also parks the goroutine, which lets a single P poll the network
// and run clients at once rather than at sysmon's next 10 ms poll.
func (p *snapshotPacer) pause() {
	work := time.Since(p.last)
	time.Sleep(max(time.Duration(float64(work)*(1-snapshotDuty)/snapshotDuty), time.Microsecond))
	p.last = time.Now()
}
