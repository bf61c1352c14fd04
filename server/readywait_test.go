//go:build linux

package server

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
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
	if got := w.state.Load(); got != wsGo {
		t.Fatalf("state after an interrupted park = %d, want wsGo", got)
	}
	w.notify() // Go's poller wakes the loop for this one
	if got := w.state.Load(); got != wsGo {
		t.Fatalf("state after a notify in Go's poller = %d, want wsGo", got)
	}
	w.resume() // the loop is back and reads
	go func() { woke <- w.park() }()
	waitState(t, w, wsWaiting)
	w.interrupt() // during it
	if <-woke {
		t.Fatal("park interrupted while waiting: want false")
	}
	w.resume()
	// The interrupt is consumed: input wakes the next wait as before.
	go func() { woke <- w.park() }()
	waitState(t, w, wsWaiting)
	w.notify()
	if !<-woke {
		t.Fatal("park after a consumed interrupt: want true")
	}
}

// waitState waits until w is in state want.
func waitState(t *testing.T, w *readyWaiter, want uint32) {
	t.Helper()
	eventually(t, fmt.Sprintf("waiter state %d", want), func() bool { return w.state.Load() == want })
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
	if raceEnabled {
		t.Skip("the race detector randomises the order Go runs ready goroutines in")
	}
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
	if want := []int{2, 0, 1}; !slices.Equal(order, want) {
		t.Fatalf("loops ran in the order %v, want %v (readiness order)", order, want)
	}
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
	if !idle.closedByCron(l) {
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

// TestReadyWaitChurn: many connections at once come and go while others
// pipeline, idle, half-close or are killed, and the timeout directive is
// switched on and off; every request is answered (a lost wake-up would
// leave a client waiting: the read deadline fails the test) and the
// server still answers at the end.
func TestReadyWaitChurn(t *testing.T) {
	l, tcpAddr := startLiveTCP(t)
	admin := l.dial(t)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var answered atomic.Int64
	errs := make(chan error, 64)
	fail := func(err error) {
		select {
		case errs <- err:
		default:
		}
	}
	worker := func(seed int) {
		defer wg.Done()
		for round := 0; ; round++ {
			select {
			case <-stop:
				return
			default:
			}
			network, addr := "tcp", tcpAddr
			if (seed+round)%3 == 0 {
				network, addr = "unix", l.sock
			}
			c, err := net.Dial(network, addr)
			if err != nil {
				fail(err)
				return
			}
			br := bufio.NewReader(c)
			n := 1 + (seed*7+round)%16
			var req []byte
			for i := 0; i < n; i++ {
				req = append(req, "PING\r\n"...)
			}
			for k := 0; k < 3; k++ {
				if _, err := c.Write(req); err != nil {
					break // killed meanwhile
				}
				c.SetReadDeadline(time.Now().Add(10 * time.Second))
				ok := true
				for i := 0; i < n; i++ {
					line, err := br.ReadString('\n')
					if err != nil {
						var ne net.Error
						if errors.As(err, &ne) && ne.Timeout() {
							fail(fmt.Errorf("client %d round %d: no reply within 10 s (a lost wake-up?)", seed, round))
						}
						ok = false // killed or timed out by the server: both allowed
						break
					}
					if line != "+PONG\r\n" {
						fail(fmt.Errorf("client %d: reply %q", seed, line))
						ok = false
						break
					}
					answered.Add(1)
				}
				if !ok {
					break
				}
			}
			switch (seed + round) % 4 {
			case 0:
				if cw, ok := c.(interface{ CloseWrite() error }); ok {
					cw.CloseWrite()
					c.SetReadDeadline(time.Now().Add(10 * time.Second))
					if _, err := br.ReadByte(); err == nil {
						fail(fmt.Errorf("client %d: data after a half-close", seed))
					} else {
						var ne net.Error
						if errors.As(err, &ne) && ne.Timeout() {
							fail(fmt.Errorf("client %d: half-closed connection not closed within 10 s", seed))
						}
					}
				}
			case 1:
				time.Sleep(time.Millisecond) // idle a moment: the loop parks
			}
			c.Close()
		}
	}
	for i := 0; i < 24; i++ {
		wg.Add(1)
		go worker(i)
	}
	deadline := time.Now().Add(3 * time.Second)
	for i := 0; time.Now().Before(deadline); i++ {
		switch i % 3 {
		case 0:
			admin.do("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
		case 1:
			admin.do("CONFIG", "SET", "timeout", "1")
		case 2:
			admin.do("CONFIG", "SET", "timeout", "0")
		}
		time.Sleep(20 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := l.dial(t).do("PING"); got != "+PONG" {
		t.Fatalf("PING after the churn: %s", got)
	}
	if answered.Load() == 0 {
		t.Fatal("no request answered during the churn")
	}
	t.Logf("%d requests answered", answered.Load())
}
