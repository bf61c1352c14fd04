package server

import (
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/vigil-kv/vigil/internal/acl"
	"github.com/vigil-kv/vigil/internal/netshell"
	"github.com/vigil-kv/vigil/internal/resp"
)

// Client kinds for CLIENT LIST/KILL TYPE.
const (
	kindNormal = iota
	kindReplica
	kindMaster
	kindPubSub
)

// Reply flags (CLIENT REPLY), as Redis's client flags: none is ON.
const (
	replyOff      = 1 << iota // CLIENT_REPLY_OFF: no replies
	replySkip                 // CLIENT_REPLY_SKIP: no replies for the command being run
	replySkipNext             // CLIENT_REPLY_SKIP_NEXT: SKIP was issued, skip the next command
)

// Client is one connection. Fields without a note are touched only by the
// client's own goroutine while it holds the server's mu (so other commands,
// e.g. CLIENT LIST, may read them under mu too).
type Client struct {
	srv   *Server
	conn  net.Conn
	id    int64
	addr  string
	laddr string
	unix  bool
	// aofClient marks the AOF loader's fake client: no ACL checks (persist_aof.go).
	aofClient bool
	rd        *resp.Reader
	raw       *rawReader // the socket read directly (nil: read through conn)

	// the last command name looked up and its command (lookupCached)
	lastName    [16]byte
	lastNameLen uint8
	lastLookup  *Command
	w           resp.Writer

	db      int
	name    string
	libName string
	libVer  string
	authed  bool
	user    string
	aclUser *acl.User // the authenticated ACL user; nil: the default user (acl.go)
	created time.Time
	lastCmd string
	// replyFlags are the CLIENT REPLY flags; replySeg is where the reply
	// written under the current flags began (applyReplyFlags).
	replyFlags uint8
	replySeg   int
	noEvict    bool
	monitor    bool
	multi      *multiState

	// Blocking (blocking.go), guarded by mu: the blocked command (nil when
	// not blocked), the command postponed by CLIENT PAUSE, and woff, the
	// replication offset after the client's last propagated write (set
	// by the write path; WAIT waits for replicas to reach it).
	blocked   *blockState
	postponed *Command
	woff      int64

	lastInteraction atomic.Int64 // unix ms

	// cmdEnd is when the client's last command ended, within the current
	// batch, with the real clock (zero otherwise): the next command's start
	// and cached time (see setCmdNow).
	cmdEnd time.Time
	// batchStart is when the current batch took the lock (zero outside a
	// batch): command end times are batchStart plus the monotonic time
	// elapsed since.
	batchStart time.Time
	// readDeadline is the read deadline the loop set last (zero: none);
	// touched only by the client's goroutine.
	readDeadline    time.Time
	killed          atomic.Bool
	closeAfterReply bool

	// Asynchronous output (pub/sub messages, MONITOR lines) written by other
	// goroutines: appended under amu and flushed by pushLoop.
	amu     sync.Mutex
	abuf    []byte
	aspare  []byte // the buffer abuf was swapped with, for reuse (under amu)
	asig    chan struct{}
	asyncOn bool
	// asyncLive mirrors asyncOn for readers without amu: set (under amu)
	// before the queue gets its first byte, never cleared. A client that
	// never had a queue skips amu on the batch path (asyncBytes,
	// queueReplies).
	asyncLive atomic.Bool
	// drained is signalled by pushLoop after each write (created with
	// asig, under amu): waitDrain (obuf.go) waits on it.
	drained chan struct{}
	// inflight is the bytes of the socket write in progress that the
	// kernel has not taken yet (obuf.go).
	inflight atomic.Int64
	// obufSoftSince is obuf_soft_limit_reached_time (unix seconds, 0: under
	// the soft limit), guarded by mu; obufClosed: closed for its output
	// buffer, its output is dropped.
	obufSoftSince int64
	obufClosed    atomic.Bool
	// obufPeak is the most output the client had when a batch of its
	// ended (tests check the backpressure bound with it).
	obufPeak atomic.Int64
	aclosed  bool
	wmu      sync.Mutex // serialises socket writes
	subs     map[string]struct{}
	psubs    map[string]struct{}
	ssubs    map[string]struct{} // shard channels (SSUBSCRIBE)
	argvMem  int
	totalNet atomic.Int64
	prop     propState // what the running command propagates (propagate.go); guarded by mu

	// pushSpans are the pub/sub pushes in the reply buffer that CLIENT
	// REPLY OFF/SKIP must not drop (replySubAlways, dropReply); empty
	// between batches.
	pushSpans [][2]int

	// inScript marks the scripting client (scripting.go): Redis's
	// CLIENT_SCRIPT, which may not block.
	inScript bool
	// errCounted: the error reply of the running command was already
	// counted in errorstats (a script's error that a command inside it
	// replied: Redis's ERR_REPLY_FLAG_NO_STATS_UPDATE); exec clears it.
	errCounted bool

	// repl: kindReplica once PSYNC/SYNC made this a replica client,
	// kindMaster for the master client of a replica (repl_*.go), and what
	// the client announced with REPLCONF (guarded by mu).
	replRole atomic.Int32
	replInfo *replicaInfo
}

// kind reports the client's type for CLIENT LIST/KILL.
func (c *Client) kind() int {
	if k := c.replRole.Load(); k != 0 { // repl
		return int(k)
	}
	if len(c.subs)+len(c.psubs)+len(c.ssubs) > 0 {
		return kindPubSub
	}
	return kindNormal
}

func (s *Server) serveConn(conn net.Conn) {
	defer s.connWG.Done()
	c := &Client{
		srv:     s,
		conn:    conn,
		id:      s.nextID.Add(1),
		created: s.clock.Now(),
		user:    "default",
	}
	c.w.Proto = 2
	c.lastInteraction.Store(time.Now().UnixMilli())
	s.mu.Lock()
	ka := s.cfg.TCPKeepAlive
	s.mu.Unlock()
	nc := netshell.Accepted(conn, ka)
	c.unix, c.addr, c.laddr = nc.Unix, nc.Addr, nc.LAddr
	// Admission, as networking.c acceptCommonHandler.
	s.clientsMu.Lock()
	n := len(s.clients)
	s.clientsMu.Unlock()
	s.mu.Lock()
	protected := s.cfg.ProtectedMode && s.aclDefaultNoPass()
	needAuth := !s.aclDefaultOpen()
	s.mu.Unlock()
	if refusal := netshell.Admit(nc, conn.RemoteAddr(), n, int(s.maxClients.Load()), protected); refusal != "" {
		netshell.Refuse(conn, refusal)
		s.mu.Lock()
		s.stats.rejectedConns++
		s.mu.Unlock()
		return
	}
	c.authed = !needAuth
	var rd io.Reader = conn
	if raw := newRawReader(conn); raw != nil {
		c.raw, rd = raw, raw
		if sp := s.spinner; sp != nil {
			_ = raw.rc.Control(func(fd uintptr) { sp.add(int(fd)) })
		}
	}
	c.rd = resp.NewReader(rd, resp.Limits{MaxBulkLen: s.protoMaxBulk.Load(), MaxArgs: resp.DefaultLimits.MaxArgs})
	c.rd.SetUnauthenticated(!c.authed)
	s.clientsMu.Lock()
	s.clients[c.id] = c
	s.clientsMu.Unlock()
	s.mu.Lock()
	s.stats.totalConns++
	s.mu.Unlock()
	if s.closing.Load() {
		conn.Close()
	}
	defer s.unlinkClient(c)
	s.readLoop(c)
}

func isLoopback(a net.Addr) bool { return netshell.IsLoopback(a) }

// readLoop is the per-connection loop of design.md: read what the socket
// has, run every complete command under one lock, write all replies once.
func (s *Server) readLoop(c *Client) {
	for {
		var err error
		if c.raw != nil {
			var closeConn bool
			closeConn, err = s.rawReadLoop(c)
			if closeConn {
				return
			}
		} else {
			s.setReadDeadline(c)
			if err = s.fill(c); err == nil {
				if !s.runBatch(c) {
					return
				}
				continue
			}
		}
		if c.killed.Load() || s.closing.Load() {
			return
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			if s.idleTimedOut(c) {
				s.log.Debug().Int64("id", c.id).Msg("Closing idle client")
				return
			}
			continue // the deadline was stale: set the current one
		}
		if err != io.EOF && !errors.Is(err, net.ErrClosed) && !errors.Is(err, syscall.ECONNRESET) {
			s.log.Debug().Err(err).Str("addr", c.addr).Msg("Client read error")
		}
		return
	}
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
			for {
				s.setReadDeadline(c)
				if err := s.fill(c); err != nil {
					if err == errWouldBlock {
						return false // wait for readiness
					}
					r.err = err
					return true
				}
				if !s.runBatch(c) {
					r.closeConn = true
					return true
				}
				if !r.more {
					if sp := s.spinner; sp != nil {
						sp.activity()
					}
					return false // drained: wait before reading again
				}
			}
		}
	}
	r.err, r.closeConn = nil, false
	s.setReadDeadline(c) // before RawConn.Read checks it
	err = r.rc.Read(r.fn)
	r.fd = -1
	if err != nil {
		return false, err
	}
	return r.closeConn, r.err
}

// setReadDeadline arms the idle timeout (the timeout directive) before a
// read. A deadline is set only when there is none or when the timeout
// changed: an armed deadline that fires early is re-armed from the last
// interaction by idleTimedOut, so the common case costs no syscall or timer
// update per read. While the server shuts down the deadline Run set is left
// alone.
func (s *Server) setReadDeadline(c *Client) {
	if s.closing.Load() {
		return
	}
	if t := s.timeoutSec.Load(); t > 0 && c.kind() == kindNormal && !c.monitor {
		if c.readDeadline.IsZero() {
			last := time.UnixMilli(c.lastInteraction.Load())
			c.readDeadline = last.Add(time.Duration(t) * time.Second)
			c.conn.SetReadDeadline(c.readDeadline)
		}
		return
	}
	if !c.readDeadline.IsZero() {
		c.readDeadline = time.Time{}
		c.conn.SetReadDeadline(time.Time{})
	}
}

// idleTimedOut reports, after a read deadline fired, whether the client
// has really been idle for the configured timeout (as clientsCronHandleTimeout);
// if not, the deadline is cleared so that setReadDeadline re-arms it.
func (s *Server) idleTimedOut(c *Client) bool {
	t := s.timeoutSec.Load()
	c.readDeadline = time.Time{}
	if t <= 0 || c.kind() != kindNormal || c.monitor {
		return false
	}
	idle := time.Now().UnixMilli() - c.lastInteraction.Load()
	return idle >= t*1000
}

// YieldEnv names the environment variable that sets, in microseconds, how
// long a batch must have run for its connection to yield before writing
// its replies (default defaultYieldAfter; 0 turns it off).
const YieldEnv = "VIGIL_YIELD_US"

const defaultYieldAfter = 1 * time.Microsecond

// yieldAfter: a connection whose batch ran at least this long lets the
// other runnable connections run their batches before it writes its
// replies (runtime.Gosched), so that replies ready together go out
// together, as Redis writes every client's replies at the end of one
// event-loop turn (beforeSleep -> handleClientsWithPendingWrites).
//
// Why: a reply written to a client that has gone to sleep waiting for it
// wakes the client, and the kernel charges that wake-up (an IPI, a VM exit
// on a virtual machine) to the writer's write(2). Whenever the server is
// the bottleneck the client sleeps between two replies: under EVALSHA
// -P 16, vigil-server spent 12-13% of its CPU in those wake-ups, against
// 3-5% for redis-server (perf). With SET -P 16 on 1 M random keys the yield
// took the server's system time per request from about 1.1 us to 0.8 us
// (README.md, Replication); EVALSHA at -P 16 went from 0.44x redis-server's
// throughput to 0.8-1.4x. Whether the 1 us threshold costs the -P 1 tests
// anything against 5 us is not settled (README.md, Benchmarks). Only a
// batch shorter than
// yieldAfter (nothing, or next to nothing, to run) is written at once.
var yieldAfter = func() time.Duration {
	if v := os.Getenv(YieldEnv); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n >= 0 {
			return time.Duration(n) * time.Microsecond
		}
	}
	return defaultYieldAfter
}()

// runBatch parses and executes every complete command buffered, then
// writes the replies. It returns false when the connection must close.
// A batch whose replies reach the client's output cap stops there, writes
// them, and goes on with the commands left (obuf.go, Backpressure).
func (s *Server) runBatch(c *Client) bool {
	for {
		keep, more := s.runBatchPart(c)
		if !keep || !more {
			return keep
		}
	}
}

// runBatchPart is one part of runBatch: more reports that it stopped at
// the output cap with commands possibly left in the query buffer.
func (s *Server) runBatchPart(c *Client) (keep, more bool) {
	keep = true
	if !s.lockBatch() {
		return s.serveBusy(c), false // a busy script holds the lock (scripting_busy.go)
	}
	s.current = c
	// The real clock on purpose: lastInteraction arms the socket's idle
	// deadline and now the write deadline (real time to the kernel); with
	// the real clock it is also the batch's command time (exec). A fake
	// clock times commands itself (Server.clock).
	now := time.Now()
	c.lastInteraction.Store(now.UnixMilli())
	if s.realClock {
		c.cmdEnd = now // the first command's time: read under the lock
		c.batchStart = now
	}
	// The client's output not in this batch: it only shrinks while the
	// batch holds the lock (pushLoop writes), so the cap below is kept.
	base := s.asyncBytes(c)
	for {
		if c.killed.Load() {
			keep = false
			break
		}
		args, err := c.rd.Next()
		if err != nil {
			var pe *resp.ProtocolError
			if errors.As(err, &pe) {
				s.log.Debug().Str("addr", c.addr).Msg(pe.Error())
				c.w.Error("ERR " + pe.Error())
			}
			keep = false
			break
		}
		if args == nil {
			break
		}
		s.process(c, args)
		// A command that blocked the client (blocking.go) parks it here,
		// outside the lock, until it is served, times out or is
		// unblocked; the rest of the batch waits in the query buffer.
		if c.blocked != nil {
			if !s.parkBlocked(c) {
				keep = false
				break
			}
			now = time.Now()
			if c.replyFlags != 0 { // c.w holds just the reply it was given
				c.replySeg = 0
				c.endReplyFlags()
			}
		}
		if c.closeAfterReply {
			keep = false
			break
		}
		// client-output-buffer-limit (obuf.go): checked as each reply
		// is added; the batch stops at the client's output cap.
		if len(c.w.B) > 0 {
			if l := s.obufLimit(c); l.HardBytes|l.SoftBytes != 0 {
				if s.checkObuf(c, len(c.w.B)) {
					keep = false
					break
				}
				if int64(len(c.w.B))+base >= obufCap(l) {
					more = true
					break
				}
			} else if int64(len(c.w.B))+base >= replyChunk {
				more = true
				break
			}
		}
	}
	maxOut, gen := s.obufCapOf(c), s.obuf.gen.Load()
	if c.obufClosed.Load() {
		c.w.B = c.w.B[:0] // closed for its output buffer: dropped
	}
	if n := int64(len(c.w.B)) + s.asyncBytes(c); n > c.obufPeak.Load() {
		c.obufPeak.Store(n)
	}
	// A batch that did work yields before it writes (yieldAfter).
	long := yieldAfter > 0 && s.realClock && !c.cmdEnd.IsZero() && c.cmdEnd.Sub(now) >= yieldAfter
	c.cmdEnd, c.batchStart = time.Time{}, time.Time{}
	if c.replRole.Load() == kindReplica {
		// repl: a replica's output belongs to its writer goroutine
		// (repl_master.go); what it asks gets no reply once it is one.
		c.w.B = c.w.B[:0]
	}
	if len(c.pushSpans) != 0 {
		c.pushSpans = c.pushSpans[:0] // the buffer is about to be written
	}
	// A client that gets asynchronous output (pub/sub messages, MONITOR
	// lines) sends its replies through the same queue, in the order the
	// commands ran, as Redis's one output buffer: a SUBSCRIBE's reply
	// precedes the messages published after it.
	s.aofBeforeReply() // persistence: the AOF is written before the replies (persist_aof.go)
	queued := len(c.w.B) > 0 && c.queueReplies(c.w.B)
	if s.current == c {
		s.current = nil
	}
	s.mu.Unlock()
	// Counted before the write, as writeToClient does, so a client that has
	// read this reply sees it in INFO from any connection.
	if len(c.w.B) > 0 {
		s.adm.writes.Add(1)
		s.stats.netOutput.Add(int64(len(c.w.B)))
	}
	// The replies go out as far as the socket takes them now; what it
	// does not take is left to pushLoop, and the client's commands go on
	// while its output is under its cap (obuf.go, Backpressure).
	if queued {
		c.w.B = c.w.B[:0]
		c.flushQueuedNB()
		if !s.waitDrain(c, maxOut, gen) {
			keep = false
		}
	} else if len(c.w.B) > 0 {
		if long {
			runtime.Gosched()
		}
		rest, ok := c.writeNB(c.w.B, now)
		switch {
		case !ok:
			keep = false
		case len(rest) > 0:
			c.queueRest(rest) // the queue owns the buffer now
			c.w.B = nil
			if !s.waitDrain(c, maxOut, gen) {
				keep = false
			}
		default:
			// Keep a grown reply buffer while batches fill a quarter
			// of it (big values in a row reuse it), drop it after a
			// small batch or when it is very large.
			if n := cap(c.w.B); n > 64<<10 && (n > maxKeptReplyBuf || len(c.w.B) < n/4) {
				c.w.B = nil
			} else {
				c.w.B = c.w.B[:0]
			}
		}
	}
	return keep, more && keep
}

// process runs one top-level command (not one queued in MULTI or called
// by a script): call, then the reply flags, as Redis's processCommand and
// resetClient.
func (s *Server) process(c *Client, args [][]byte) {
	c.replySeg = len(c.w.B)
	s.call(c, args)
	if c.blocked != nil {
		// A blocked client is reset when it is unblocked (Redis's
		// unblockClient): its reply flags are settled on the reply it
		// gets then (runBatch, after parkBlocked).
		return
	}
	if c.replyFlags != 0 {
		c.endReplyFlags()
	}
}

// CLIENT REPLY is emulated as Redis does it: prepareClientToWrite refuses
// every reply written while CLIENT_REPLY_OFF or CLIENT_REPLY_SKIP is set
// (pub/sub pushes excepted: CLIENT_PUSHING), CLIENT REPLY and RESET change
// the flags in the middle of a command (of EXEC, say), and resetClient
// clears SKIP and turns SKIP_NEXT into SKIP after each top-level command.
// So a command refused before it runs (unknown, arity, NOAUTH) counts as
// the skipped one, commands inside EXEC do not, and the EXEC header is
// sent or not by the flags when EXEC began. Vigil writes replies first and
// drops them after: the reply since replySeg is dropped (dropReply, which
// keeps pushes) when a segment written under suppression ends, that is
// when the flags change (setReplyFlags) or the command ends.

// suppressing reports whether replies are being dropped now.
func (c *Client) suppressing() bool { return c.replyFlags&(replyOff|replySkip) != 0 }

// setReplyFlags is how CLIENT REPLY and RESET change the flags: the reply
// written before, under the old flags, is settled first.
func (c *Client) setReplyFlags(f uint8) {
	if c.suppressing() {
		c.dropReply(c.replySeg)
	}
	c.replyFlags = f
	c.replySeg = len(c.w.B)
}

// endReplyFlags settles a top-level command's reply and moves SKIP on.
func (c *Client) endReplyFlags() {
	if c.suppressing() {
		c.dropReply(c.replySeg)
	}
	f := c.replyFlags &^ replySkip
	if f&replySkipNext != 0 {
		f = f&^replySkipNext | replySkip
	}
	c.replyFlags = f
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
func (c *Client) writeLocked(b []byte, _ time.Time) bool {
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
	c.srv.checkObuf(c, 0)
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
// rest (with the socket not read directly, all of it, waiting). ok is
// false when the connection failed.
func (c *Client) writeNB(b []byte, now time.Time) (rest []byte, ok bool) {
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

// signalDrained wakes waitDrain.
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
		if c.raw != nil {
			_ = c.raw.rc.Control(func(fd uintptr) { _ = syscall.Shutdown(int(fd), syscall.SHUT_RDWR) })
		}
		go c.conn.Close()
		c.signalDrained() // a loop waiting for its output to drain (obuf.go)
	}
}

// unlinkClient is freeClient: the client's subscriptions, watches and
// MONITOR go before its connection closes, so that a peer that has seen
// the connection end (after QUIT, say) finds them gone, as with Redis,
// and the registry (connected_clients) lets it go last.
func (s *Server) unlinkClient(c *Client) {
	s.mu.Lock()
	delete(s.monitors, c)
	s.pubsub.unsubscribeAll(c)
	s.unwatchAll(c, true)
	s.replicaGone(c) // repl: repl_master.go
	s.mu.Unlock()
	c.kill()
	s.clientsMu.Lock()
	delete(s.clients, c.id)
	s.clientsMu.Unlock()
	c.amu.Lock()
	if c.asyncOn {
		close(c.asig)
	}
	c.aclosed = true
	c.amu.Unlock()
}

// isEPIPE reports broken-pipe style errors (quiet in logs).
func isEPIPE(err error) bool {
	return errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed)
}

// errWouldBlock is rawReader's EAGAIN: wait for readiness, then read.
var errWouldBlock = errors.New("read would block")

// rawReader reads the socket's file descriptor directly; its Read is only
// called from rawReadLoop's callback, which sets fd.
type rawReader struct {
	rc        syscall.RawConn
	fn        func(fd uintptr) bool // built once: no closure per read
	fd        int
	more      bool      // the last read may have left data or EOF queued: read again before waiting
	inq       *inqState // non-nil: reads are recvmsg with TCP_INQ (rawread_inq.go)
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
	r := &rawReader{rc: rc, fd: -1}
	if _, tcp := conn.(*net.TCPConn); tcp {
		enableInq(r)
	}
	return r
}

func (r *rawReader) Read(p []byte) (int, error) {
	r.more = true
	if len(p) == 0 {
		return 0, nil
	}
	for {
		var n int
		var errno syscall.Errno
		if r.inq != nil {
			n, r.more, errno = r.readInq(p)
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
			r.more = false
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
