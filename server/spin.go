//go:build linux

package server

import (
	"math/bits"
	"os"
	"runtime"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// SpinEnv names the environment variable that sets the idle spin budget in
// microseconds (default defaultSpinBudget; 0 turns spinning off).
const SpinEnv = "VIGIL_SPIN_US"

// SpinGuardEnv names the environment variable that, set to 0, makes the
// spinner spin whatever the machine's load (spinGuard), for comparisons.
const SpinGuardEnv = "VIGIL_SPIN_GUARD"

// defaultSpinBudget is how long the spinner keeps polling after the last
// batch before it lets the thread sleep.
const defaultSpinBudget = 20 * time.Microsecond

// idleSpinner keeps the server's thread awake for a short while after each
// batch, polling the client sockets, instead of letting Go's scheduler
// sleep in epoll_wait as soon as no goroutine is runnable.
//
// Why: when the server thread sleeps in epoll_wait, the client's next send
// must wake it, and the kernel charges that wake-up (an inter-processor
// interrupt, a VM exit on a virtual machine) to the client's send. With a
// client that is the bottleneck (redis-benchmark on a 2-core machine) this
// costs the client about 10% of its CPU per request (docs/benchmarks.md,
// Throughput). While the thread polls, a send only marks the socket ready.
//
// How, without starving Go's netpoller: a goroutine that spins with
// runtime.Gosched stays runnable, and the scheduler polls the network only
// when nothing is runnable, so the connection goroutines parked on their
// sockets would not be woken while it spins. The spinner therefore watches
// every client socket through the server's epoll set (readyPoller; Go's
// netpoller keeps its own registration: a socket may be in several epoll
// sets) with a non-blocking epoll_wait between yields, and as soon as a
// socket became readable it wakes the loops waiting for it (in the
// order they became readable) and parks, as it does when its budget is
// spent: the scheduler then runs them (with Go's poller waking the
// loops, VIGIL_READY_ORDER=0, it finds nothing runnable, polls the
// network without blocking and runs the goroutines the data is for), and
// each batch's end (activity) makes the spinner runnable
// again. Network events other than client input (accept, a socket
// draining after EAGAIN, replication links) wait at most one budget. An
// idle server does not spin: the spinner sleeps until the next batch.
//
// The spin pays only when another client's request may come while the
// client just answered is still busy with its reply, so it is skipped
// when it cannot (issue 24: one client's SET then WAIT 1 on a 2-core
// machine took a third longer with it). A batch that gave a replica's
// writer something to send does not spin (handoff): the replica process
// needs a CPU right after it, and a spinning server takes it from the
// replica or from the client waiting for both. Nor does the second batch
// in a row of the same client (activity's id): its next request comes
// only after it read the reply, and the socket's wake-up of the client is
// a synchronous one, which the kernel may serve on this CPU expecting the
// server to sleep. Replicas' batches (their acknowledgements) do not
// count, nor do pipelined ones (Server.drained: a spin would save a
// pipelining client one wake-up per many commands).
type idleSpinner struct {
	poller *readyPoller  // the client sockets' epoll set (readywait.go)
	kick   chan struct{} // capacity 1: a batch ended
	stop   chan struct{}
	budget time.Duration
	// fed: a replica's writer was woken since the last batch end
	// (handoff), so activity does not spin.
	fed atomic.Bool
	// last is the client whose batch ended last (activity).
	last atomic.Int64
	// guard: whether the machine has a CPU to spare (run only).
	guard spinGuard
}

// newIdleSpinner starts the spinner, or returns nil when spinning is off
// (VIGIL_SPIN_US=0) or unavailable.
func newIdleSpinner(p *readyPoller) *idleSpinner {
	budget := defaultSpinBudget
	if v := os.Getenv(SpinEnv); v != "" {
		us, err := strconv.Atoi(v)
		if err != nil || us < 0 {
			return nil
		}
		budget = time.Duration(us) * time.Microsecond
	}
	if budget <= 0 || runtime.NumCPU() < 2 || p == nil {
		return nil // on one CPU, polling only delays the client
	}
	sp := &idleSpinner{poller: p, kick: make(chan struct{}, 1), stop: make(chan struct{}), budget: budget}
	if os.Getenv(SpinGuardEnv) == "0" {
		sp.guard.fd = -1
	} else {
		sp.guard.open(runtime.NumCPU())
	}
	go sp.run()
	return sp
}

// activity tells the spinner that a batch of client id ended: spin
// again, unless the batch fed a replica or the client's previous batch
// was the last one too. It never blocks and does not allocate.
func (sp *idleSpinner) activity(id int64) {
	prev := sp.last.Swap(id)
	if sp.fed.Load() && sp.fed.Swap(false) {
		return
	}
	if prev == id {
		return
	}
	select {
	case sp.kick <- struct{}{}:
	default:
	}
}

// handoff tells the spinner that a replica's writer has output to send:
// the batch's end does not spin.
func (sp *idleSpinner) handoff() {
	if !sp.fed.Load() {
		sp.fed.Store(true)
	}
}

// close stops the spinner (server shutdown).
func (sp *idleSpinner) close() { close(sp.stop) }

func (sp *idleSpinner) run() {
	defer sp.guard.close()
	var evs [32]syscall.EpollEvent
	for {
		select {
		case <-sp.kick:
		case <-sp.stop:
			return
		}
		now := time.Now()
		if !sp.guard.allow(now) {
			continue // another process wants a CPU: sleep as Redis does
		}
		// A batch's end made the spinner runnable ahead of the goroutines
		// the same network poll woke: let them run first.
		runtime.Gosched()
		deadline := now.Add(sp.budget)
		for {
			// Non-blocking, and a raw system call: the scheduler need
			// not know.
			if n := sp.poller.poll(evs[:]); n > 0 {
				// Input: wake the loops it is for (readyPoller), or,
				// when Go's poller wakes them, park so that the
				// scheduler polls the network.
				sp.poller.dispatch(evs[:n])
				// A kick left by a batch that ended during the spin is
				// dropped: taken, it would spin again at once, and while
				// the spinner is runnable the scheduler runs it instead
				// of polling the network (it polls only with no
				// goroutine runnable), so the input just seen would wait
				// for the next arrival or the budget's end. The batches
				// this input starts kick again.
				select {
				case <-sp.kick:
				default:
				}
				break
			}
			if !time.Now().Before(deadline) {
				break
			}
			// Let other goroutines, then other threads of the machine
			// (the clients, on a shared core) run between polls.
			runtime.Gosched()
			syscall.RawSyscall(syscall.SYS_SCHED_YIELD, 0, 0, 0)
		}
	}
}

// spinGuard tells the spinner whether the machine has a CPU to spare: it
// samples the number of runnable threads of the whole machine (the fourth
// field of /proc/loadavg, "running/total": the kernel's nr_running, which
// counts threads waiting for a CPU as well as those on one) at most every
// spinGuardEvery, and the spinner spins only while fewer than
// spinGuardBusy of the last spinGuardSamples samples found more runnable
// threads than CPUs. The server's own thread and its client (the
// redis-benchmark process that the spinner is for) are two of them, so on
// a 2-core machine a third runnable thread, a compiler or another server,
// means the spinner's polls and yields take a core that thread or the
// clients wait for. A sample costs one pread (about 3 us, at most 100 a
// second); where /proc/loadavg cannot be read, or with VIGIL_SPIN_GUARD=0,
// the spinner always spins.
type spinGuard struct {
	fd      int // /proc/loadavg, or -1
	ncpu    int
	next    time.Time // when the next sample is due
	samples uint32    // the last samples, a bit each: 1 = contended
	buf     [128]byte
}

const (
	spinGuardEvery   = 10 * time.Millisecond
	spinGuardSamples = 8
	spinGuardBusy    = 3
)

func (g *spinGuard) open(ncpu int) {
	g.ncpu = ncpu
	fd, err := syscall.Open("/proc/loadavg", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		fd = -1
	}
	g.fd = fd
}

func (g *spinGuard) close() {
	if g.fd >= 0 {
		syscall.Close(g.fd)
		g.fd = -1
	}
}

// allow samples the run queue when a sample is due and reports whether
// the spinner may spin.
func (g *spinGuard) allow(now time.Time) bool {
	if g.fd < 0 {
		return true
	}
	if !now.Before(g.next) {
		g.next = now.Add(spinGuardEvery)
		n, _, errno := syscall.RawSyscall6(syscall.SYS_PREAD64, uintptr(g.fd),
			uintptr(unsafe.Pointer(&g.buf[0])), uintptr(len(g.buf)), 0, 0, 0)
		running, ok := 0, errno == 0
		if ok {
			running, ok = loadavgRunning(g.buf[:n])
		}
		g.record(ok && running > g.ncpu)
	}
	return g.spare()
}

// record adds a sample.
func (g *spinGuard) record(contended bool) {
	g.samples <<= 1
	if contended {
		g.samples |= 1
	}
	g.samples &= 1<<spinGuardSamples - 1
}

// spare: fewer than spinGuardBusy of the last samples were contended.
func (g *spinGuard) spare() bool {
	return bits.OnesCount32(g.samples) < spinGuardBusy
}

// loadavgRunning parses the runnable threads out of /proc/loadavg's text
// ("0.52 0.58 0.59 3/245 12345": the fourth field's numerator).
func loadavgRunning(b []byte) (int, bool) {
	field := 0
	for i := 0; i < len(b); i++ {
		if b[i] == ' ' {
			field++
			if field == 3 {
				n, digits := 0, 0
				for i++; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
					n = n*10 + int(b[i]-'0')
					digits++
				}
				return n, digits > 0 && i < len(b) && b[i] == '/'
			}
		}
	}
	return 0, false
}
