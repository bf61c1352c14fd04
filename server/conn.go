package server

// Connection I/O: accepting a client (netshell's admission), the read loop
// and its raw-read fast path, writing replies and asynchronous pushes, and
// closing. The client's state and the batch that runs its commands are in
// client.go.

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"time"
	"unsafe"

	"github.com/vigil-kv/vigil/internal/netshell"
	"github.com/vigil-kv/vigil/internal/resp"
)

func (s *Server) serveConn(conn net.Conn) {
	c := &Client{
		srv:     s,
		conn:    conn,
		id:      s.nextID.Add(1),
		created: s.clock.Now(),
		user:    "default",
	}
	c.w.Proto = 2
	c.lastInteraction.Store(time.Now().UnixMilli())
	// Nothing here takes mu: a script holding it past the busy threshold
	// must not keep a new client from connecting (it is answered by
	// serveBusy, scripting_busy.go).
	nc := netshell.Accepted(conn, int(s.admKeepAlive.Load()))
	c.unix, c.addr, c.laddr = nc.Unix, nc.Addr, nc.LAddr
	_, c.tls = conn.(*tls.Conn)
	// Admission, as networking.c acceptCommonHandler.
	s.clientsMu.Lock()
	n := len(s.clients)
	s.clientsMu.Unlock()
	protected := s.admProtected.Load()
	needAuth := !s.admDefaultOpen.Load()
	if refusal := netshell.Admit(nc, conn.RemoteAddr(), n, int(s.maxClients.Load()), protected); refusal != "" {
		netshell.Refuse(conn, refusal)
		s.stats.rejectedConns.Add(1)
		s.connWG.Done() // else runLoop's, at the loop's end
		return
	}
	c.authed = !needAuth
	var rd io.Reader = conn
	if raw := newRawReader(conn); raw != nil {
		c.raw, rd = raw, raw
		raw.ord = &c.ord
		c.ord.fdp1 = ordFD(raw)
		c.ord.seq = &s.ord.pollSeq
		if p := s.ready; p != nil {
			_ = raw.rc.Control(func(fd uintptr) { raw.rw = p.add(int(fd)) })
			if raw.rw != nil {
				raw.rw.spawn = func() { go s.runLoop(c) } // idleconn.go
			}
		}
	}
	c.rd = resp.NewReader(rd, resp.Limits{MaxBulkLen: s.protoMaxBulk.Load(), MaxArgs: resp.DefaultLimits.MaxArgs})
	c.rd.SetUnauthenticated(!c.authed)
	c.initBufModel(s.clock.Now().UnixMilli()) // before the cron can see the client
	s.clientsMu.Lock()
	s.clients[c.id] = c
	s.clientsMu.Unlock()
	s.stats.totalConns.Add(1)
	if s.closing.Load() {
		conn.Close()
	}
	s.runLoop(c)
}

// runLoop runs the client's loop on this goroutine until the connection
// ends, then unlinks the client; or until the loop retires (idleconn.go),
// when it returns at once: the next input starts runLoop again on a new
// goroutine.
func (s *Server) runLoop(c *Client) {
	if s.loop(c) {
		return
	}
	s.unlinkClient(c)
	if r := c.raw; r != nil && r.rw != nil {
		s.ready.remove(c.ord.fdp1-1, r.rw)
	}
	s.connWG.Done()
}

// loop is readLoop until the connection ends (false) or the loop retired
// (true: after the waiter's retire, another goroutine may run the client).
func (s *Server) loop(c *Client) (retired bool) {
	defer s.crashOnPanic(c) // before the unlink (crash.go)
	for {
		s.readLoop(c)
		if !c.retiring {
			return false
		}
		c.retiring = false
		// Idle: no buffers (the read that found nothing may have
		// allocated one since the cron dropped them).
		c.dropEmptyBuffers()
		c.waitForInput() // the buffers stay the cron's while no goroutine runs
		if c.raw.rw.retire() {
			return true // the client is not touched after this
		}
		// Input came meanwhile (or a stale event): read it, and retire
		// at the next read that finds nothing unless a batch runs.
		c.ownBuffers()
		c.retireReq.Store(true)
	}
}

func isLoopback(a net.Addr) bool { return netshell.IsLoopback(a) }

// readLoop is the per-connection loop of docs/architecture.md ("The
// server's shell"), netshell.Loop: read what the socket has, run every
// complete command under one lock, write all replies once; with the
// raw-read fast path (rawReadLoop) when the socket allows it.
func (s *Server) readLoop(c *Client) { netshell.Loop(connLoop{s, c}) }

// connLoop is the server's hooks of netshell.Loop.
type connLoop struct {
	s *Server
	c *Client
}

func (l connLoop) BeforeRead()                          {} // the idle timeout is the cron's (clientsCronHandleTimeout)
func (l connLoop) Fill() error                          { return l.s.fill(l.c) }
func (l connLoop) RunBatch() bool                       { return l.s.runBatch(l.c) }
func (l connLoop) UseRaw() bool                         { return l.c.raw != nil }
func (l connLoop) RawLoop() (closeConn bool, err error) { return l.s.rawReadLoop(l.c) }

// ReadFailed: a kill or the shutdown closes; a read deadline is only
// another goroutine's wake-up (the cron's, for a retirement), cleared.
func (l connLoop) ReadFailed(err error) bool {
	s, c := l.s, l.c
	if err == errRetired {
		return false // loop retires the goroutine (idleconn.go)
	}
	if c.killed.Load() || s.closing.Load() {
		return false
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		// The cron's wake-up for a retirement (idleconn.go; the loop
		// then reads, and retires if nothing came), possibly after a
		// batch already served the loop.
		c.conn.SetReadDeadline(time.Time{})
		return true
	}
	if err != io.EOF && !errors.Is(err, net.ErrClosed) && !errors.Is(err, syscall.ECONNRESET) {
		s.log.Debug().Err(err).Str("addr", c.addr).Msg("Client read error")
	}
	if err == io.EOF {
		s.flushBeforeClose(c)
	}
	return false
}

// fill reads once from the socket into the query buffer.
func (s *Server) fill(c *Client) error {
	before := c.rd.Buffered()
	err := c.rd.Fill()
	if n := c.rd.Buffered() - before; n > 0 {
		s.stats.netInput.Add(int64(n))
		s.adm.reads.Add(1)
	}
	return err
}

// rawReadLoop is readLoop's body run inside the socket's RawConn.Read, so
// that after a batch whose read drained the socket the loop waits for
// readiness instead of trying a read that would return EAGAIN: conn.Read
// always tries first, one wasted system call per request when each client
// waits for its reply (redis-benchmark -P 1).
//
// Waiting is safe only when the socket is known to be drained, data and
// end of stream alike. The netpoller is edge-triggered: anything that
// arrives after a read raises a readiness event that the next wait sees
// (even when it came before the wait; a stale readiness only costs one
// EAGAIN), but what was already queued when the read ran raised its event
// before, and that event was consumed by the wait that led to the read (or
// cleared when RawConn.Read began). A short read does not prove the socket
// drained: a read returns the queued data without the FIN behind it (the
// next read returns 0), so a client that sends its last request and
// half-closes (nc -q, proxies, health checkers) would never be seen to
// leave when the FIN came with the data. So a read tells whether more
// waits (rawReader.more): on TCP the kernel says so itself (TCP_INQ, see
// enableInq: the count of bytes still queued, non-zero after a FIN), at no
// extra system call; elsewhere (unix sockets, kernels before 4.18) the
// loop reads again until EAGAIN. It returns closeConn when the connection
// must be closed without looking at err (a batch ended it), else the
// error that stopped reading (deadline, EOF, close).
func (s *Server) rawReadLoop(c *Client) (closeConn bool, err error) {
	r := c.raw
	if r.fn == nil {
		r.fn = func(fd uintptr) bool {
			r.fd = int(fd)
			if r.rw != nil {
				r.rw.resume() // back from Go's poller, if it waited there
			}
			c.ownBuffers() // the cron may have dropped them meanwhile (idlebuf.go)
			for {
				if err := s.fill(c); err != nil {
					if err == errWouldBlock {
						if c.retireReq.Load() && s.retireNow(c) {
							r.err = errRetired // out of RawConn.Read, then loop retires
							return true
						}
						switch s.waitInput(c, r.batched) {
						case waitRead:
							continue
						case waitRetire:
							r.err = errRetired
							return true
						}
						return false // wait for readiness in Go's poller
					}
					r.err = err
					return true
				}
				if !s.runBatch(c) {
					r.closeConn = true
					return true
				}
				r.batched = true
				s.ordSettle(c)
				if !r.more {
					s.drained(c)
					switch s.waitInput(c, true) {
					case waitRead:
						continue
					case waitRetire:
						r.err = errRetired
						return true
					}
					return false // drained: wait before reading again
				}
			}
		}
	}
	r.err, r.closeConn = nil, false
	err = r.rc.Read(r.fn)
	r.fd = -1
	c.ownBuffers() // back from a wait that ended without a read (deadline, close)
	if err != nil {
		return false, err
	}
	return r.closeConn, r.err
}

// waitInput's outcomes.
const (
	waitGoPoller = iota // wait in Go's poller (the buffers stay the cron's)
	waitRead            // woken: read
	waitRetire          // woken to retire (idleconn.go): leave RawConn.Read
)

// waitInput is parkForInput with the client's buffers handed to the cron
// while it waits (idlebuf.go). A loop woken with retireReq set retires
// without a read: a loop parks only with its socket drained, and input
// that comes after either woke it first (then the cron's wake-up, which
// follows its request, finds the waiter retired and starts a new loop) or
// comes after it, and makes the retirement fail (idleconn.go).
func (s *Server) waitInput(c *Client, afterBatch bool) int {
	c.raw.batched = false
	c.waitForInput()
	if !s.parkForInput(c, afterBatch) {
		return waitGoPoller
	}
	c.ownBuffers()
	if c.retireReq.Load() && s.retireNow(c) {
		return waitRetire
	}
	return waitRead
}

// drained is the end of a client's input (the socket read empty): the idle
// spinner is kicked (idleSpinner.activity), unless the client is a replica
// (its acknowledgements) or pipelined: more than one command ran since the
// socket was last drained. A pipelining client sends one packet for many
// commands, so a spin would save it one wake-up per batch, not one per
// command, and it would cost the server's thread, busy with the other
// clients' batches, a poll and two goroutine switches per batch: at -P 16
// (50 clients) the spinner took 6% of vigil-server's CPU under RPOP on an
// empty key, and without it the server spent 10% less CPU per request
// (docs/benchmarks.md, Throughput). Single-command batches (-P 1) kick it
// as before.
func (s *Server) drained(c *Client) {
	if sp := s.spinner; sp != nil && c.batchCmds <= 1 && c.replRole.Load() != kindReplica {
		sp.activity(c.id)
	}
	c.batchCmds = 0
	if c.retireReq.Load() {
		c.retireReq.Store(false) // it is not idle (idleconn.go)
	}
}

// clientsCronHandleTimeout is clientsCronHandleTimeout: with the timeout
// directive set, a normal client (not a replica, a master's link, a
// MONITOR, a subscriber or a blocked or paused client) idle for more than
// that many seconds is closed. Its loop must be waiting for input (or
// retired, idleconn.go): one writing a reply or running a command is not
// idle. The cron visits each client about once a second, as Redis's, so
// the close comes within a second or two past the timeout; the loops need
// no read deadline of their own, and idle ones park and retire as without
// the directive. Called with the server lock held; reports whether it
// closed c.
func (s *Server) clientsCronHandleTimeout(c *Client) bool {
	t := s.timeoutSec.Load()
	if t <= 0 || c.kind() != kindNormal || c.monitor || c.blockedFlag() || c.ldbMode != ldbOff ||
		c.ldbDetached.Load() || c.killed.Load() || c.bufIdle.Load() != bufWaiting || c.inflight.Load() != 0 {
		return false
	}
	if c.idleSeconds() <= t { // Redis's now - c->lastinteraction > maxidletime
		return false
	}
	s.log.Debug().Int64("id", c.id).Msg("Closing idle client")
	c.kill()
	return true
}

// write sends b on the socket, serialised with asynchronous pushes.
func (c *Client) write(b []byte, now time.Time) bool {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.writeLocked(b, now)
}

// There is no write deadline: as with Redis, a peer that does not read is
// disconnected only by client-output-buffer-limit (obuf.go) or a kill;
// either closes the socket, which ends the write. The write goes in
// pieces so that inflight tells what the kernel has not taken.
//
// A socket read directly (c.raw) is written with raw system calls inside
// its RawConn.Write, which holds a reference on the descriptor (a
// concurrent close cannot hand the number to another file) and, when the
// socket is full, waits for it to drain in the netpoller. A write through
// net.Conn goes through the runtime's entersyscall, which wakes the
// runtime's sysmon thread whenever the process was idle: for a replica's
// writer, two futex wake-ups per SET + WAIT (the SET, then the GETACK),
// and a thread polling every 20 µs for a millisecond beside the peers on
// a shared machine (issue 24).
func (c *Client) writeLocked(b []byte, _ time.Time) bool {
	if r := c.raw; r != nil {
		return c.writeRawConn(r, b)
	}
	for len(b) > 0 {
		c.inflight.Store(int64(len(b)))
		n := min(len(b), writeChunk)
		if _, err := c.conn.Write(b[:n]); err != nil {
			c.inflight.Store(0)
			return false
		}
		b = b[n:]
	}
	c.inflight.Store(0)
	return true
}

// writeRawConn is writeLocked on a socket read directly (wmu held).
func (c *Client) writeRawConn(r *rawReader, b []byte) bool {
	if len(b) == 0 {
		return true
	}
	o := c.rout
	if o == nil {
		o = &rawOut{c: c}
		o.fn = o.write
		c.rout = o
	}
	o.b, o.errno = b, 0
	c.inflight.Store(int64(len(b)))
	err := r.rc.Write(o.fn)
	ok := err == nil && o.errno == 0 && len(o.b) == 0
	o.b = nil // do not keep the caller's buffer alive
	c.inflight.Store(0)
	return ok
}

// rawOut is writeRawConn's state, guarded by the client's wmu; its
// callback is built once per client, so that a write allocates nothing.
type rawOut struct {
	c     *Client
	b     []byte // what the kernel has not taken yet
	errno syscall.Errno
	fn    func(fd uintptr) bool
}

// write is RawConn.Write's callback: false asks it to wait until the
// socket is writable and call again.
func (o *rawOut) write(fd uintptr) bool {
	for len(o.b) > 0 {
		n, errno := rawWrite(int(fd), o.b)
		switch {
		case errno == syscall.EINTR:
			continue
		case errno == syscall.EAGAIN:
			return false
		case errno != 0:
			o.errno = errno
			return true
		}
		o.b = o.b[n:]
		o.c.inflight.Store(int64(len(o.b)))
	}
	return true
}

// writeReplies is write for the client's own loop while it runs inside
// rawReadLoop's callback: the socket is written directly (it is
// non-blocking, so the write cannot block the thread); only what the
// kernel does not take at once goes through conn.Write, which waits for
// the socket to drain.
func (c *Client) writeReplies(b []byte, now time.Time) bool {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.writeRepliesLocked(b, now)
}

func (c *Client) writeRepliesLocked(b []byte, now time.Time) bool {
	r := c.raw
	if r == nil || r.fd < 0 {
		return c.writeLocked(b, now)
	}
	for len(b) > 0 {
		n, errno := rawWrite(r.fd, b)
		switch {
		case errno == syscall.EINTR:
			continue
		case errno == syscall.EAGAIN:
			return c.writeLocked(b, now)
		case errno != 0:
			return false
		}
		b = b[n:]
	}
	return true
}

// maxKeptReplyBuf is the largest reply buffer kept between batches.
const maxKeptReplyBuf = 4 << 20

// push queues out-of-band output (pub/sub, MONITOR). Called with the
// server lock held by another client's goroutine; never blocks on the
// network. A client over its client-output-buffer-limit is closed
// (obuf.go), and one being closed gets nothing more.
func (c *Client) push(b []byte) {
	c.amu.Lock()
	if c.aclosed || c.killed.Load() {
		c.amu.Unlock()
		return
	}
	c.startAsync()
	c.abuf = append(c.abuf, b...)
	select {
	case c.asig <- struct{}{}:
	default:
	}
	c.amu.Unlock()
	s := c.srv
	if !s.checkObuf(c, 0) && s.cmem.track {
		s.clientMemAfterCommand(c, 0, -1) // clientevict.go: pubsub.c's update
	}
}

// startAsync starts the client's asynchronous queue (amu held).
func (c *Client) startAsync() {
	if !c.asyncOn {
		c.asyncOn = true
		c.asyncLive.Store(true)
		c.asig = make(chan struct{}, 1)
		c.drained = make(chan struct{}, 1)
		go c.pushLoop()
	}
}

// queueReplies appends the client's replies to its asynchronous queue when
// it has one or may get one (a subscriber, a monitor), so that they keep
// their place among the pushes; it reports whether it did. Called by the
// client's loop with the server lock held, like push.
func (c *Client) queueReplies(b []byte) bool {
	if !c.monitor && c.kind() != kindPubSub && !c.asyncLive.Load() {
		return false
	}
	c.amu.Lock()
	defer c.amu.Unlock()
	if c.aclosed {
		return true // the connection is going away: drop
	}
	c.startAsync()
	c.abuf = append(c.abuf, b...)
	return true
}

// flushQueued writes the asynchronous queue from the client's own loop,
// right after queueReplies, so that replies are not left to pushLoop's
// next turn. Taking wmu before the queue keeps the queue's order on the
// wire against pushLoop.
func (c *Client) flushQueued(now time.Time) bool {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.amu.Lock()
	out := c.abuf
	c.abuf = c.aspare[:0]
	c.inflight.Store(int64(len(out)))
	c.amu.Unlock()
	ok := len(out) == 0 || c.writeRepliesLocked(out, now)
	c.amu.Lock()
	c.inflight.Store(0)
	c.aspare = out[:0]
	c.amu.Unlock()
	return ok
}

// flushQueuedNB is flushQueued without waiting for the peer: what the
// socket takes at once is written, the rest goes back to the front of the
// queue for pushLoop. When pushLoop is writing, it takes the queue after
// its write.
func (c *Client) flushQueuedNB() {
	r := c.raw
	if !c.wmu.TryLock() {
		c.signalPush()
		return
	}
	defer c.wmu.Unlock()
	if r == nil || r.fd < 0 {
		c.signalPush() // no direct access to the socket: pushLoop writes
		return
	}
	c.amu.Lock()
	out := c.abuf
	c.abuf = c.aspare[:0]
	c.inflight.Store(int64(len(out)))
	c.amu.Unlock()
	rest := out
	for len(rest) > 0 {
		n, errno := rawWrite(r.fd, rest)
		if errno == syscall.EINTR {
			continue
		}
		if errno != 0 {
			break // EAGAIN: pushLoop waits; an error: pushLoop sees it
		}
		rest = rest[n:]
		c.inflight.Store(int64(len(rest)))
	}
	c.amu.Lock()
	if len(rest) > 0 {
		// Before what was pushed meanwhile (wmu kept pushLoop out).
		if len(c.abuf) == 0 {
			c.abuf = rest
		} else {
			c.abuf = append(append(out[:0:0], rest...), c.abuf...)
		}
	} else {
		c.aspare = out[:0]
	}
	c.inflight.Store(0)
	c.amu.Unlock()
	if len(rest) > 0 {
		c.signalPush()
	}
}

// writeNB writes b as far as the socket takes it now and returns the
// rest (with the socket not read directly, all of it, waiting; on a TLS
// connection none of it). ok is false when the connection failed.
func (c *Client) writeNB(b []byte, now time.Time) (rest []byte, ok bool) {
	if c.tls {
		// A TLS connection cannot be written without blocking: all of it
		// goes to the queue, which pushLoop writes as the peer reads, so
		// that, as with Redis, the client's commands go on being read and
		// its output limits and client eviction see its output (obuf.go),
		// instead of a write waiting for a peer that never reads
		// (auth.tcl's unauthenticated client, client-eviction.tcl, --tls).
		return b, true
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	r := c.raw
	if r == nil || r.fd < 0 {
		return nil, c.writeLocked(b, now)
	}
	for len(b) > 0 {
		n, errno := rawWrite(r.fd, b)
		switch {
		case errno == syscall.EINTR:
			continue
		case errno == syscall.EAGAIN:
			return b, true
		case errno != 0:
			return nil, false
		}
		b = b[n:]
	}
	return nil, true
}

// queueRest hands the unwritten rest of the client's replies to its
// queue, which takes the buffer over when it is empty.
func (c *Client) queueRest(rest []byte) {
	c.amu.Lock()
	if !c.aclosed {
		c.startAsync()
		if len(c.abuf) == 0 {
			c.abuf = rest
		} else {
			c.abuf = append(c.abuf, rest...)
		}
		select {
		case c.asig <- struct{}{}:
		default:
		}
	}
	c.amu.Unlock()
}

// signalPush wakes pushLoop.
func (c *Client) signalPush() {
	c.amu.Lock()
	if c.asyncOn && !c.aclosed {
		select {
		case c.asig <- struct{}{}:
		default:
		}
	}
	c.amu.Unlock()
}

// signalDrained wakes flushBeforeClose.
func (c *Client) signalDrained() {
	c.amu.Lock()
	if c.drained != nil {
		select {
		case c.drained <- struct{}{}:
		default:
		}
	}
	c.amu.Unlock()
}

// flushBeforeClose is the end of a connection whose peer closed its side
// (EOF): the output still queued goes out first, so that a client that
// half-closes after its requests gets every reply, then EOF (a peer gone
// altogether makes the writes fail). It waits without the lock; a kill
// (an output limit, CLIENT KILL, client eviction) ends it.
func (s *Server) flushBeforeClose(c *Client) {
	for !c.killed.Load() {
		c.amu.Lock()
		n := int64(len(c.abuf)) + c.inflight.Load()
		done := !c.asyncOn || c.aclosed || n == 0
		c.amu.Unlock()
		if done {
			return
		}
		// A peer that does not read: publishers do not wait for the
		// input behind (order.go).
		s.ordHold(c, 1)
		<-c.drained
		s.ordHold(c, -1)
	}
}

func (c *Client) pushLoop() {
	defer c.signalDrained()
	for range c.asig {
		c.wmu.Lock()
		c.amu.Lock()
		out := c.abuf
		c.abuf = c.aspare[:0]
		c.inflight.Store(int64(len(out)))
		c.amu.Unlock()
		ok := len(out) == 0 || c.writeLocked(out, time.Now())
		c.amu.Lock()
		c.inflight.Store(0)
		c.aspare = out[:0]
		c.amu.Unlock()
		c.wmu.Unlock()
		c.signalDrained()
		if !ok {
			c.kill()
			return
		}
	}
}

// kill closes the connection; the client's loop then unlinks it.
//
// The close runs on its own goroutine. A client's loop runs its batches
// inside RawConn.Read (rawReadLoop), holding a reference on the socket, and
// net.Conn.Close waits until references drop: a killer holding the
// execution lock (CLIENT KILL, PUBLISH over the output buffer limit) would
// wait for a batch that waits for that lock, and a client killing itself
// would wait for itself. The close still wakes the loop at once when it is
// waiting for input or for a write to drain; a loop inside a batch stops
// at the next command (runBatch checks killed). The socket is shut down
// first, which needs no exclusive access, so that the peer sees the
// connection end now even while the loop is parked (CLIENT PAUSE).
func (c *Client) kill() {
	if c.killed.CompareAndSwap(false, true) {
		if c.raw != nil && !c.ldbDetached.Load() {
			_ = c.raw.rc.Control(func(fd uintptr) { _ = syscall.Shutdown(int(fd), syscall.SHUT_RDWR) })
		}
		c.closeAsync()
		c.signalDrained() // flushBeforeClose
		c.srv.ordNotify() // publishers waiting for it (order.go)
	}
}

// parkForInput waits, inside rawReadLoop's callback, for the socket to
// be readable, woken in arrival order (readyPoller), and reports whether
// to read again; false: wait in Go's poller (RawConn.Read's wait), which
// applies a read deadline (the timeout directive, shutdown) and the
// close of a killed connection. Every goroutine that arms a deadline or
// kills first interrupts the wait (interruptWait).
//
// A loop also waits in Go's poller when the last loop to wait was its own
// (a client alone: one round trip at a time, where the dispatcher would
// only add a goroutine switch to each) and for a replica's link (its
// acknowledgements: WAIT's latency). Only after a batch (afterBatch: on a
// unix socket, whose loop reads until EAGAIN, the batch before that read):
// a wait after a stale event's empty read is no round trip, and a loop
// waiting in Go's poller cannot retire (idleconn.go).
func (s *Server) parkForInput(c *Client, afterBatch bool) bool {
	w := c.raw.rw
	if w == nil {
		return false
	}
	if c.killed.Load() || s.closing.Load() || c.replRole.Load() != 0 ||
		(afterBatch && s.lastWait.Swap(c.id) == c.id) {
		w.goPoller()
		return false
	}
	return w.park()
}

// interruptWait sends the client's loop from a wait on readyPoller to Go's
// poller (see parkForInput).
func (c *Client) interruptWait() {
	if c.raw != nil && c.raw.rw != nil {
		c.raw.rw.interrupt()
	}
}

// setReadDeadlineFromOutside is conn.SetReadDeadline for a goroutine
// other than the client's own (CONFIG SET timeout, shutdown): a loop
// parked on readyPoller is sent to Go's poller, which applies it.
func (c *Client) setReadDeadlineFromOutside(t time.Time) {
	c.conn.SetReadDeadline(t)
	c.interruptWait()
}

// closeAsync closes the connection on its own goroutine (see kill), after
// sending a loop parked on readyPoller to Go's poller, which the close
// wakes.
func (c *Client) closeAsync() {
	c.interruptWait()
	go c.conn.Close()
}

// errWouldBlock is rawReader's EAGAIN: wait for readiness, then read.
var errWouldBlock = errors.New("read would block")

// rawReader reads the socket's file descriptor directly; its Read is only
// called from rawReadLoop's callback, which sets fd.
type rawReader struct {
	rc        syscall.RawConn
	fn        func(fd uintptr) bool // built once: no closure per read
	fd        int
	rw        *readyWaiter // the wait for input, in arrival order (readywait.go); nil: Go's poller
	more      bool         // the last read may have left data or EOF queued: read again before waiting
	batched   bool         // a batch ran since the loop last waited (parkForInput's afterBatch)
	queued    int          // bytes the kernel said were still queued after the last read (TCP_INQ), 0 if unknown
	inq       *inqState    // non-nil: reads are recvmsg with TCP_INQ (rawread_inq.go)
	ord       *ordState    // the client's read counts (order.go)
	err       error
	closeConn bool
}

func newRawReader(conn net.Conn) *rawReader {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	r := &rawReader{rc: rc, fd: -1, ord: new(ordState)} // serveConn gives it the client's
	if _, tcp := conn.(*net.TCPConn); tcp {
		enableInq(r)
	}
	return r
}

// Queued is how many bytes the kernel said were still queued on the
// socket after the last read (TCP_INQ; 0 when unknown or none): the
// request reader sizes its next read by it (resp.Reader.Fill).
func (r *rawReader) Queued() int { return r.queued }

func (r *rawReader) Read(p []byte) (int, error) {
	r.more = true
	if len(p) == 0 {
		return 0, nil
	}
	// Publishers read in and the socket's queue as one (order.go): rseq
	// is odd while the kernel's queue and in may disagree.
	o := r.ord
	o.rseq.Add(1)
	n, err := r.read(p)
	if n > 0 {
		o.in.Add(int64(n))
		if o.seq != nil {
			o.stamp = o.seq.Load()
		}
	}
	o.rseq.Add(1)
	return n, err
}

func (r *rawReader) read(p []byte) (int, error) {
	for {
		var n int
		var errno syscall.Errno
		if r.inq != nil {
			n, r.more, r.queued, errno = r.readInq(p)
		} else {
			// A raw system call: the socket is non-blocking, so the
			// scheduler need not know (no entersyscall, no sysmon
			// hand-off of the P).
			r0, _, e := syscall.RawSyscall(syscall.SYS_READ, uintptr(r.fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
			n, errno = int(r0), e
		}
		switch {
		case errno == syscall.EINTR:
			continue
		case errno == syscall.EAGAIN:
			r.more, r.queued = false, 0
			return 0, errWouldBlock
		case errno != 0:
			return 0, os.NewSyscallError("read", errno)
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// rawWrite is write(2) on a non-blocking socket, as a raw system call.
func rawWrite(fd int, b []byte) (int, syscall.Errno) {
	r0, _, errno := syscall.RawSyscall(syscall.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	return int(r0), errno
}
