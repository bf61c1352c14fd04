package server

import (
	"sync/atomic"

	"github.com/vigil-kv/vigil/configs"
	"github.com/vigil-kv/vigil/replication"
)

// client-output-buffer-limit (Redis's networking.c
// checkClientOutputBufferLimits, closeClientOnOutputBufferLimitReached,
// getClientOutputBufferMemoryUsage).
//
// A client's output buffer is the output the kernel has not taken yet:
// the replies of the batch being run (c.w.B, the client's own goroutine),
// the asynchronous queue (abuf: pub/sub messages, MONITOR lines, and the
// replies of clients that have one), the part of a socket write that has
// not returned (inflight), and for a replica its share of the stream: the
// backlog bytes past its cursor and its spill.
//
// Redis keeps the first PROTO_REPLY_CHUNK_BYTES (16kb) of a client's
// output in a static buffer (CLIENT LIST obl) and the rest in a list of
// blocks (oll, omem), and only the list counts against the limits; a
// replica's output is all in the shared replication buffer. Vigil reports
// and checks its pending bytes the same way (obufUsage, obufList), so a
// limit smaller than 16kb does not close a client over one small reply,
// as with Redis.
//
// Limits are checked as Redis does: when output is added (each command of
// a batch, each push, each replication feed) and from the cron for every
// client (clientsCron), so that a soft limit held for longer than its
// seconds closes a client that gets no new output. All checks run under
// the execution lock, which guards obufSoftSince.
//
// Backpressure. Redis keeps reading and running a client's commands while
// its replies wait, so with limits of 0 an unread client's buffer grows
// without bound. Vigil bounds it: the client's goroutine writes a batch's
// replies as far as the socket takes them at once, leaves the rest to its
// pushLoop, and goes on reading and running commands only while its
// pending output is under its cap (obufCap: replyChunk, plus the larger
// limit of its class when it has limits, so that a limit is reached as
// with Redis); a batch also stops at the cap. While over it the goroutine
// waits for pushLoop (waitDrain) without the execution lock, so other
// clients are not held up. The peer sees what Redis's would: no
// disconnection without a limit, every reply in order; the server holds
// at most the cap and one reply for it. New limits reach a client waiting
// there through the cron (obufState).

// replyChunk is the reply bytes after which a batch stops to write them.
const replyChunk = 1 << 20

// replyStaticBytes is PROTO_REPLY_CHUNK_BYTES, Redis's static reply
// buffer: the first bytes of a client's output, outside omem and the
// limits.
const replyStaticBytes = 16 << 10

// writeChunk is the largest piece one blocking socket write is given, so
// that inflight follows what the kernel took.
const writeChunk = 64 << 10

// obufClass is getClientType as checkClientOutputBufferLimits uses it: a
// master and a MONITOR client count as normal.
func (c *Client) obufClass() int {
	switch c.replRole.Load() {
	case kindReplica:
		return configs.ClientReplica
	case kindMaster:
		return configs.ClientNormal
	}
	if len(c.subs)+len(c.psubs)+len(c.ssubs) > 0 {
		return configs.ClientPubSub
	}
	return configs.ClientNormal
}

// obufLimit returns the limits of c's class (lock held).
func (s *Server) obufLimit(c *Client) configs.BufferLimit {
	return s.cfg.ClientOutputBufferLimits[c.obufClass()]
}

// obufCap is how much output c may have before its goroutine stops running
// commands (lock held): replyChunk, plus the larger limit of its class.
func obufCap(l configs.BufferLimit) int64 {
	return replyChunk + int64(min(max(l.HardBytes, l.SoftBytes), 1<<50))
}

// asyncBytes is the output of c other goroutines can see: the queue, the
// write in flight and, for a replica, its stream not yet written (lock
// held for the replica part).
func (s *Server) asyncBytes(c *Client) int64 {
	var n int64
	if c.asyncLive.Load() { // else abuf is empty: no lock on the batch path
		c.amu.Lock()
		n = int64(len(c.abuf))
		c.amu.Unlock()
	}
	n += c.inflight.Load()
	if c.replRole.Load() == kindReplica {
		n += s.replicaPending(c)
	}
	return n
}

// replicaPending is the replica's output not yet handed to its writer
// (lock held): what the backlog holds past its cursor and its spill. A
// replica waiting for its snapshot to start has none (Redis's
// ref_repl_buf_node is NULL until then).
func (s *Server) replicaPending(c *Client) int64 {
	rp := s.replicaOf(c)
	if rp == nil || rp.gone || rp.rdbOnly || rp.ack.State == replication.ReplicaWaitBgsaveStart || s.repl.backlog == nil {
		return 0
	}
	n := int64(len(rp.spill))
	if p := s.repl.backlog.End() + 1 - rp.cursor.Offset; p > 0 {
		n += p
	}
	return n
}

// obufLimitReached is checkClientOutputBufferLimits: the hard limit, or
// the soft limit reached continuously for more than its seconds. softSince
// is the client's obuf_soft_limit_reached_time (0: under the soft limit),
// now the unix time in seconds (server.unixtime).
func obufLimitReached(l configs.BufferLimit, used uint64, now int64, softSince *int64) bool {
	hard := l.HardBytes > 0 && used >= l.HardBytes
	soft := l.SoftBytes > 0 && used >= l.SoftBytes
	if soft {
		if *softSince == 0 {
			*softSince = now
			soft = false // the first time the soft limit is seen reached
		} else if now-*softSince <= int64(l.SoftSeconds) {
			soft = false // not for long enough yet
		}
	} else {
		*softSince = 0
	}
	return soft || hard
}

// checkObuf is closeClientOnOutputBufferLimitReached (lock held): batch is
// the reply bytes of c's running batch (0 when c is not the running
// client). It reports whether c is closed or being closed.
func (s *Server) checkObuf(c *Client, batch int) bool {
	if c.killed.Load() {
		return true
	}
	l := s.obufLimit(c)
	// An unauthenticated client (authRequired) may have no more than 1kb
	// past the static buffer, whatever the limits: it cannot make the
	// server hold replies it never reads.
	if !c.authed && !s.aclDefaultOpen() {
		if _, _, used := s.obufSplit(c, batch); used > 1024 {
			s.closeForObuf(c)
			return true
		}
	}
	if l.HardBytes == 0 && l.SoftBytes == 0 {
		c.obufSoftSince = 0
		return false
	}
	_, _, used := s.obufSplit(c, batch)
	if !obufLimitReached(l, uint64(used), s.clock.Now().Unix(), &c.obufSoftSince) {
		return false
	}
	s.closeForObuf(c)
	return true
}

// closeForObuf closes c for its output buffer (lock held), dropping the
// output it has, as a CLOSE_ASAP client gets no more.
func (s *Server) closeForObuf(c *Client) {
	var self *Client
	if s.current == c {
		self = c // its batch's replies are its obl
	}
	info := s.appendClientInfo(nil, c, self, nil, "")
	s.log.Warn().Msgf("Client %s scheduled to be closed ASAP for overcoming of output buffer limits.", info)
	c.obufClosed.Store(true)
	c.amu.Lock()
	c.abuf = c.abuf[:0]
	c.amu.Unlock()
	if rp := s.replicaOf(c); rp != nil {
		s.dropReplica(rp, "")
		return
	}
	c.kill()
}

// obufCron is clientsCron's closeClientOnOutputBufferLimitReached(c, 0)
// for every client (lock held): no batch is running.
func (s *Server) obufCron() {
	s.clientsMu.Lock()
	cls := make([]*Client, 0, len(s.clients))
	for _, c := range s.clients {
		cls = append(cls, c)
	}
	s.clientsMu.Unlock()
	changed := s.cfg.ClientOutputBufferLimits != s.obuf.last
	if changed {
		s.obuf.last = s.cfg.ClientOutputBufferLimits
		s.obuf.gen.Add(1)
	}
	for _, c := range cls {
		if !s.checkObuf(c, 0) && changed {
			c.signalDrained() // waitDrain: the new cap
		}
	}
}

// obufState is the server's part: the limits the cron saw last and a
// generation bumped when they change, so that a client waiting for its
// output to drain (waitDrain) takes its new cap, as Redis applies new
// limits to buffers already full.
type obufState struct {
	last [configs.ClientClasses]configs.BufferLimit // guarded by mu
	gen  atomic.Int64
}

// obufCapOf is the output cap of c (lock held): obufCap of its class's
// limits, replyChunk without limits.
func (s *Server) obufCapOf(c *Client) int64 {
	if l := s.obufLimit(c); l.HardBytes|l.SoftBytes != 0 {
		return s.evictCap(c, obufCap(l))
	}
	return s.evictCap(c, replyChunk)
}

// evictCap raises an output cap n for a client that client eviction may
// evict (lock held): its output grows, as Redis's would, until its memory
// reaches maxmemory-clients (clientevict.go).
func (s *Server) evictCap(c *Client, n int64) int64 {
	if s.cmem.buckets == nil || !s.clientEvictionAllowed(c) {
		return n
	}
	return max(n, s.clientEvictionLimit()+replyChunk)
}

// waitDrain blocks c's goroutine (without the lock) while its output is at
// or over max (its cap when the limits were of generation gen), until
// pushLoop wrote some; it reports false when the client is closed.
func (s *Server) waitDrain(c *Client, max, gen int64) bool {
	for {
		if c.killed.Load() {
			return false
		}
		if g := s.obuf.gen.Load(); g != gen {
			s.mu.Lock()
			max, gen = s.obufCapOf(c), g
			s.mu.Unlock()
		}
		c.amu.Lock()
		n := int64(len(c.abuf)) + c.inflight.Load()
		closed := c.aclosed
		c.amu.Unlock()
		if closed {
			return false
		}
		if n < max {
			return true
		}
		// A peer that does not read: publishers do not wait for the
		// input behind (order.go).
		s.ordHold(c, 1)
		<-c.drained
		s.ordHold(c, -1)
	}
}

// obufSplit is getClientOutputBufferMemoryUsage with CLIENT LIST's obl
// and oll (lock held): c's pending output (batch: its running batch's
// replies, 0 when it is not running) laid out as Redis would hold it: the
// static buffer first (not for a replica), then blocks of 16kb.
func (s *Server) obufSplit(c *Client, batch int) (obl, oll, omem int64) {
	p := int64(batch) + s.asyncBytes(c)
	if c.replRole.Load() != kindReplica {
		obl = min(p, replyStaticBytes)
	}
	omem = p - obl
	oll = (omem + replyStaticBytes - 1) / replyStaticBytes
	return obl, oll, omem
}
