//go:build linux

package server

import (
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// ReadyOrderEnv names the environment variable that, set to 0, leaves the
// connection loops' waits for input to Go's network poller (the order it
// wakes them in is newest first, see readyPoller), for comparisons.
const ReadyOrderEnv = "VIGIL_READY_ORDER"

// readyPoller wakes the connection loops waiting for input in the order
// their sockets became readable, oldest first, as redis-server's event
// loop serves them (issue 24, the -P 1 tail latency).
//
// Why: a loop that waits in Go's network poller (RawConn.Read) is woken
// by runtime.netpoll, which reads epoll's events oldest first but links
// the goroutines it readies newest first, and the scheduler runs that list
// from its head. With one thread running Go code (io-threads 1, the
// default) and many clients, every poll's batch was served newest first:
// the request that arrived first waited for all the others of its batch.
// Same mean, a wider spread: at redis-benchmark -c 50 -P 1 the p99 was
// 1.11-1.14x redis-server's, 0.98x with the runtime's list reversed
// (scripts/build-fifo-netpoll.sh, docs/benchmarks.md).
//
// How: every client socket is also in an edge-triggered epoll set of the
// server's own (a socket may be in several; a closed one leaves by
// itself). A loop that found its socket drained parks on its readyWaiter
// instead of in Go's poller. The set's descriptor is itself in Go's
// poller (an epoll descriptor is readable while events are queued), so
// one dispatcher goroutine is woken when input comes, reads the set's
// events in the kernel's order and wakes their waiters in that order; the
// idle spinner (spin.go), which polls the same set, hands what it finds
// to the waiters the same way. A wake-up puts the goroutine in the
// scheduler's next slot and moves the one there to its queue's tail, so
// the first event is woken last: the scheduler then runs the first, then
// the rest in order.
//
// A loop falls back to Go's poller for a wait whenever a read deadline
// may fire (the timeout directive, shutdown) or the connection is being
// killed: the goroutine that arms such a deadline or kills interrupts the
// wait (readyWaiter.interrupt), and Go's poller applies the deadline or
// the close as before. It also waits there when order cannot matter and
// the dispatcher would only add a goroutine switch to the round trip:
// when the last loop to wait was its own (one client at a time, as
// redis-benchmark -c 1 or SET then WAIT), and for a replica's link
// (parkForInput).
type readyPoller struct {
	epfd    int
	ordered bool     // waiters are registered and woken (else the set serves the spinner alone)
	file    *os.File // epfd in Go's poller (ordered): the dispatcher waits on it
	mu      sync.RWMutex
	slots   []*readyWaiter // by socket descriptor (ordered)
}

// readyWaiter is one connection loop's wait for input.
type readyWaiter struct {
	state atomic.Uint32 // wsRunning, wsPending, wsWaiting, wsGo or wsRetired
	intr  atomic.Bool   // the next wait goes through Go's poller
	ch    chan struct{} // capacity 1: the wake-up of a waiting loop
	// spawn starts a new goroutine for the loop of a retired waiter (set
	// before the loop first waits).
	spawn func()
}

const (
	wsRunning uint32 = iota // the loop is reading or running a batch
	wsPending               // input came while it was: do not park, read again
	wsWaiting               // parked on ch
	wsGo                    // waiting in Go's poller: events are not the waiter's
	wsRetired               // the loop's goroutine has ended (idleconn.go): the next event starts one
)

// newReadyPoller creates the server's set; nil when epoll fails.
func newReadyPoller() *readyPoller {
	fd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil
	}
	p := &readyPoller{epfd: fd}
	if os.Getenv(ReadyOrderEnv) == "0" {
		return p
	}
	if err := syscall.SetNonblock(fd, true); err != nil {
		return p
	}
	f := os.NewFile(uintptr(fd), "vigil-ready")
	rc, err := f.SyscallConn()
	if err != nil {
		// Not pollable: os.File keeps the descriptor; serve the spinner.
		p.file = f
		return p
	}
	p.file, p.ordered = f, true
	go p.run(rc)
	return p
}

// close releases the set (Run's end); the dispatcher returns.
func (p *readyPoller) close() {
	if p.file != nil {
		p.file.Close()
		return
	}
	syscall.Close(p.epfd)
}

// add watches a client socket (edge-triggered: each arrival of data is
// reported once) and, ordered, returns the waiter its loop parks on (nil
// otherwise).
func (p *readyPoller) add(fd int) *readyWaiter {
	var w *readyWaiter
	if p.ordered {
		w = &readyWaiter{ch: make(chan struct{}, 1)}
		p.mu.Lock()
		if fd >= len(p.slots) {
			n := max(2*len(p.slots), fd+1, 64)
			slots := make([]*readyWaiter, n)
			copy(slots, p.slots)
			p.slots = slots
		}
		p.slots[fd] = w // before the socket joins the set: its first event finds it
		p.mu.Unlock()
	}
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP | epollET, Fd: int32(fd)}
	if err := syscall.EpollCtl(p.epfd, syscall.EPOLL_CTL_ADD, fd, &ev); err == syscall.EEXIST {
		_ = syscall.EpollCtl(p.epfd, syscall.EPOLL_CTL_MOD, fd, &ev)
	} else if err != nil && w != nil {
		p.remove(fd, w)
		return nil
	}
	return w
}

// remove forgets the waiter of a socket that closes, unless another
// connection has its descriptor already.
func (p *readyPoller) remove(fd int, w *readyWaiter) {
	p.mu.Lock()
	if fd >= 0 && fd < len(p.slots) && p.slots[fd] == w {
		p.slots[fd] = nil
	}
	p.mu.Unlock()
}

// epollET is EPOLLET as an unsigned event mask.
const epollET = 1 << 31

// poll reads the set's events without blocking, as a raw system call.
func (p *readyPoller) poll(evs []syscall.EpollEvent) int {
	n, _, errno := syscall.RawSyscall6(syscall.SYS_EPOLL_PWAIT, uintptr(p.epfd),
		uintptr(unsafe.Pointer(&evs[0])), uintptr(len(evs)), 0, 0, 0)
	if errno != 0 {
		return 0
	}
	return int(n)
}

// dispatch wakes the waiters of events, in the kernel's order: the first
// last (see readyPoller).
func (p *readyPoller) dispatch(evs []syscall.EpollEvent) {
	if !p.ordered || len(evs) == 0 {
		return
	}
	p.mu.RLock()
	for i := 1; i < len(evs); i++ {
		p.notify(int(evs[i].Fd))
	}
	p.notify(int(evs[0].Fd))
	p.mu.RUnlock()
}

func (p *readyPoller) notify(fd int) {
	if fd >= 0 && fd < len(p.slots) {
		if w := p.slots[fd]; w != nil {
			w.notify()
		}
	}
}

// run is the dispatcher: it waits in Go's poller for the set to have
// events, then hands them out until it has none (Go's poller reports the
// set edge-triggered, and any event queued after a poll that came back
// short reports it again).
func (p *readyPoller) run(rc syscall.RawConn) {
	var evs [64]syscall.EpollEvent
	_ = rc.Read(func(uintptr) bool {
		for {
			n := p.poll(evs[:])
			p.dispatch(evs[:n])
			if n < len(evs) {
				return false // wait for more
			}
		}
	})
}

// notify: input came for the loop.
func (w *readyWaiter) notify() {
	for {
		switch w.state.Load() {
		case wsWaiting:
			if w.state.CompareAndSwap(wsWaiting, wsRunning) {
				w.ch <- struct{}{} // one send per wait: never blocks
				return
			}
		case wsRunning:
			if w.state.CompareAndSwap(wsRunning, wsPending) {
				return
			}
		case wsRetired:
			if w.state.CompareAndSwap(wsRetired, wsRunning) {
				w.spawn()
				return
			}
		default: // pending already, or waiting in Go's poller
			return
		}
	}
}

// retire is a loop's last act before its goroutine ends (idleconn.go):
// from now on an event starts a new one. False when input came since the
// loop last read (pending): it reads again instead.
func (w *readyWaiter) retire() bool {
	if w.state.CompareAndSwap(wsRunning, wsRetired) {
		return true
	}
	w.state.Store(wsRunning) // pending: consumed by the read that follows
	return false
}

// waiting reports whether the loop is parked on the waiter.
func (w *readyWaiter) waiting() bool { return w.state.Load() == wsWaiting }

// inGoPoller reports whether the loop waits in Go's poller.
func (w *readyWaiter) inGoPoller() bool { return w.state.Load() == wsGo }

// goPoller: the loop waits in Go's poller, which wakes it for the events
// this set reports too (each socket is in both): notify leaves it alone
// until resume. A pending event is dropped for the same reason.
func (w *readyWaiter) goPoller() { w.state.Store(wsGo) }

// resume: the loop is back from Go's poller and reads before it waits
// again, so events from now on are the waiter's.
func (w *readyWaiter) resume() {
	if w.state.Load() == wsGo {
		w.state.CompareAndSwap(wsGo, wsRunning)
	}
}

// park waits for input and reports whether to read again; false: the wait
// was interrupted, wait in Go's poller instead (the waiter is left in
// wsGo until resume).
func (w *readyWaiter) park() bool {
	if !w.intr.Swap(false) {
		if w.state.CompareAndSwap(wsRunning, wsWaiting) {
			<-w.ch
		} else {
			w.state.Store(wsRunning) // pending: input came while it ran
		}
		if !w.intr.Swap(false) {
			return true
		}
	}
	w.goPoller()
	return false
}

// interrupt sends the loop's next (or current) wait to Go's poller: a
// deadline was armed or the connection is closing.
func (w *readyWaiter) interrupt() {
	w.intr.Store(true)
	w.notify()
}
