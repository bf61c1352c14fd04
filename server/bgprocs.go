package server

import (
	"fmt"
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
// it returns is called once when that job ends. borrowed reports whether
// the job runs with a P of its own (GOMAXPROCS was raised for it, or by
// another running job).
func borrowProc() (release func(), borrowed bool) {
	bgProcs.mu.Lock()
	defer bgProcs.mu.Unlock()
	if bgProcs.base == 0 {
		return func() {}, false
	}
	bgProcs.jobs++
	if bgProcs.jobs == 1 && bgProcs.base < runtime.NumCPU() {
		runtime.GOMAXPROCS(bgProcs.base + 1)
	}
	borrowed = runtime.GOMAXPROCS(0) > bgProcs.base
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
	}, borrowed
}

// snapshotDuty is the share of wall time a background snapshot job (BGSAVE,
// the AOF rewrite) spends working; the rest it sleeps. Redis's fork child
// competes with the parent and the clients for the cores as one more
// process; an unpaced goroutine took about two thirds of a core on a
// 2-core machine and left clients a third of their normal throughput
// (1 M keys, 8 clients: 0.33-0.45 of normal, the save 0.55x Redis's
// duration). Lowering the thread's priority (nice 5 or 19) instead did
// worse on both counts. docs/benchmarks.md ("Snapshots without stopping the world")
// has the runs that chose the share.
const snapshotDuty = 0.45

// snapshotQuantum is how long a job with a P of its own works before it
// sleeps: sleeping after every step (about 128 keys, tens of µs) cost a
// timer, a wake-up and cold caches each time, and sub-millisecond sleeps
// overshoot. A job without a P of its own sleeps after every step, which
// also parks it so that the one P polls the network and runs the clients
// rather than waiting for sysmon's next 10 ms poll.
const snapshotQuantum = time.Millisecond

// snapshotPacer paces a background snapshot job to snapshotDuty. The job
// takes the execution lock through lock and calls pause after each step
// (its lock hold and its encoding). Time spent waiting for the lock is not
// work: the clients hold the lock and the job uses no CPU meanwhile.
type snapshotPacer struct {
	quantum time.Duration
	start   time.Time     // when the current stretch of work began
	waited  time.Duration // lock waits within the stretch
	now     func() time.Time
	sleep   func(time.Duration)
	// Totals for the log: work, lock waits, time asleep, sleeps.
	worked, lockWaits, asleep time.Duration
	sleeps                    int
}

func newSnapshotPacer(borrowed bool) *snapshotPacer {
	p := &snapshotPacer{now: time.Now, sleep: time.Sleep}
	if borrowed {
		p.quantum = snapshotQuantum
	}
	p.start = p.now()
	return p
}

// lock takes mu, counting the wait.
func (p *snapshotPacer) lock(mu sync.Locker) {
	t := p.now()
	mu.Lock()
	w := p.now().Sub(t)
	p.waited += w
	p.lockWaits += w
}

// pause ends a step: once the stretch has worked for a quantum it sleeps
// so that the time asleep so far is (1-duty)/duty of the work so far. A
// sleep that overran (timers fire late, the woken thread waits for a core)
// shortens the next one, so the job gets its share, no less. A job without
// a P of its own sleeps at least 1µs after every step all the same.
func (p *snapshotPacer) pause() {
	work := p.now().Sub(p.start) - p.waited
	if work < p.quantum {
		return
	}
	p.worked += work
	due := time.Duration(float64(p.worked)*(1-snapshotDuty)/snapshotDuty) - p.asleep
	if p.quantum == 0 {
		due = max(due, time.Microsecond)
	}
	if due > 0 {
		t := p.now()
		p.sleep(due)
		p.asleep += p.now().Sub(t)
		p.sleeps++
	}
	p.start, p.waited = p.now(), 0
}

// String sums up the pacing for the log.
func (p *snapshotPacer) String() string {
	return fmt.Sprintf("worked %v, waited for the lock %v, slept %v in %d sleeps",
		p.worked.Round(time.Millisecond), p.lockWaits.Round(time.Millisecond), p.asleep.Round(time.Millisecond), p.sleeps)
}
