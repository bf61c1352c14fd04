//go:build linux

package server

import (
	"io"
	"net"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestReadyWaiterStates walks the waiter's state machine: input that came
// while the loop ran is not lost (park returns at once), input while it
// waits wakes it, and an interrupt sends the wait to Go's poller whether
// it came before the park or during it.
func TestReadyWaiterStates(t *testing.T) {
	w := &readyWaiter{ch: make(chan struct{}, 1)}
	w.notify() // input while running
	if !w.park() {
		t.Fatal("park after a pending notify: want true (read again)")
	}
	if got := w.state.Load(); got != wsRunning {
		t.Fatalf("state after a pending park = %d, want running", got)
	}

	woke := make(chan bool)
	go func() { woke <- w.park() }()
	waitState(t, w, wsWaiting)
	w.notify()
	if !<-woke {
		t.Fatal("park woken by input: want true")
	}

	w.interrupt() // before the park
	if w.park() {
		t.Fatal("park after an interrupt: want false (Go's poller)")
	}
	go func() { woke <- w.park() }()
	waitState(t, w, wsWaiting)
	w.interrupt() // during it
	if <-woke {
		t.Fatal("park interrupted while waiting: want false")
	}
	// The interrupt is consumed: input wakes the next wait as before.
	go func() { woke <- w.park() }()
	waitState(t, w, wsWaiting)
	w.notify()
	if !<-woke {
		t.Fatal("park after a consumed interrupt: want true")
	}
}

func waitState(t *testing.T, w *readyWaiter, want uint32) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for w.state.Load() != want {
		if time.Now().After(deadline) {
			t.Fatalf("waiter state %d, want %d", w.state.Load(), want)
		}
		runtime.Gosched()
	}
}

// TestReadyPollerWakesInArrivalOrder: three loops wait on sockets that
// become readable one after the other; with one thread running Go code
// (io-threads 1, the server's default) the poller's dispatch makes them
// run in that order, first readable first (Go's network poller runs them
// newest first, the issue-24 tail).
func TestReadyPollerWakesInArrivalOrder(t *testing.T) {
	p := newReadyPoller()
	if p == nil || !p.ordered {
		t.Skip("no ordered ready poller on this system")
	}
	defer p.close()
	const n = 3
	var fds [n][2]int
	ws := make([]*readyWaiter, n)
	for i := range fds {
		pair, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		fds[i] = pair
		defer syscall.Close(pair[0])
		defer syscall.Close(pair[1])
		if ws[i] = p.add(pair[0]); ws[i] == nil {
			t.Fatal("add: no waiter")
		}
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var mu sync.Mutex
	var order []int
	var wg sync.WaitGroup
	for i, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for w.park() {
				var b [8]byte
				if k, _ := syscall.Read(fds[i][0], b[:]); k > 0 {
					mu.Lock()
					order = append(order, i)
					mu.Unlock()
					return
				}
			}
		}()
	}
	for _, w := range ws {
		waitState(t, w, wsWaiting)
	}
	// Readable in the order 2, 0, 1; the dispatcher's poll (or the
	// test's) sees them in that order.
	for _, i := range []int{2, 0, 1} {
		if _, err := syscall.Write(fds[i][1], []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	if want := []int{2, 0, 1}; !equalInts(order, want) {
		t.Fatalf("loops ran in the order %v, want %v (readiness order)", order, want)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestReadyWaitShutdownWithIdleClients: loops parked on the poller (idle
// TCP and unix clients, a subscriber, a client blocked in BLPOP) end with
// the shutdown's deadline, not with the forced close 5 seconds later; a
// killed idle client and one whose timeout passes are closed.
func TestReadyWaitShutdownWithIdleClients(t *testing.T) {
	l, tcpAddr := startLiveTCP(t)
	admin := l.dial(t)
	victim := l.dial(t)
	vid := victim.id()
	if got := admin.do("CLIENT", "KILL", "ID", vid); got != "(integer) 1" {
		t.Fatalf("CLIENT KILL: %s", got)
	}
	if !victim.closed() {
		t.Fatal("killed idle client: connection still open")
	}
	idle := l.dial(t)
	idle.do("PING")
	if got := admin.do("CONFIG", "SET", "timeout", "1"); got != "+OK" {
		t.Fatalf("CONFIG SET timeout: %s", got)
	}
	if !idle.closed() {
		t.Fatal("idle client past the timeout: connection still open")
	}
	if got := l.dial(t).do("CONFIG", "SET", "timeout", "0"); got != "+OK" {
		t.Fatalf("CONFIG SET timeout 0: %s", got)
	}
	for i := 0; i < 4; i++ {
		c, err := net.Dial("tcp", tcpAddr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Write([]byte("PING\r\n")); err != nil {
			t.Fatal(err)
		}
		var b [7]byte
		if _, err := io.ReadFull(c, b[:]); err != nil || string(b[:]) != "+PONG\r\n" {
			t.Fatalf("PING over TCP: %q %v", b, err)
		}
	}
	sub := l.dial(t)
	if got := sub.do("SUBSCRIBE", "ch"); got != `["subscribe", "ch", (integer) 1]` {
		t.Fatalf("SUBSCRIBE: %s", got)
	}
	blk := l.dial(t)
	blk.send("BLPOP", "nolist", "0")
	l.dial(t).do("PING")
	start := time.Now()
	if err := l.stop(t); err != nil {
		t.Fatalf("Run: %v", err)
	}
	// Run force-closes the connections still open 5 s into the shutdown.
	if d := time.Since(start); d >= 4*time.Second {
		t.Fatalf("shutdown took %v: loops parked on the ready poller were not interrupted", d)
	}
}
