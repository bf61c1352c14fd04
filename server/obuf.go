package server

import (
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
// not returned (inflight); a replica's is its share of the stream: the
// shared buffer's blocks from the one holding its cursor (replicaObufMem).
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
// Unread clients. As Redis, Vigil keeps reading and running the commands
// of a client that does not read its replies: the client's goroutine
// writes a batch's replies as far as the socket takes them at once and
// queues the rest for its pushLoop (abuf), which writes it as the peer
// reads. Nothing else bounds that output: with the normal class's default
// 0 0 0 and no maxmemory-clients it grows as Redis's does (CLIENT LIST
// omem and tot-mem, INFO mem_clients_normal count it); the output limits
// close the client (checkObuf, after each command and from the cron) and
// client eviction frees it (clientevict.go). A command whose reply size
// the caller chooses stops once its client is closed (closeASAP).

// replyChunk is the reply bytes after which a batch stops to write them
// (and queue what the socket does not take).
//
// A batch of big replies stops at replyChunkBig already (Redis's
// NET_MAX_WRITES_PER_EVENT): once the command just run replied
// bigReply bytes or more, the replies go out while the rest of the batch
// runs, from a buffer that stays small and in the cache. GET of 16 KB
// values at -P 16 (50 clients) had a p99 of 2.7-2.9x redis-server's with
// 1 MB (a new connection's first batch of 256 KB took 0.7 ms against
// Redis's 0.3), 0.64-0.79x with 64 KB. Smaller replies keep replyChunk:
// LRANGE_600 at -P 16 (5.4 KB replies) spent 45% more CPU a request when
// its batches went out in two writes (0.80-1.01x redis-server's against
// 1.09; issue 24, docs/benchmarks.md).
//
// A client that has an output limit (its class's, or the unauthenticated
// client's 1 KB) keeps replyChunk too: Redis closes a client whose
// pipeline's replies pass the limit before it wrote any of them, which a
// client closed after an early write would see.
const (
	replyChunk    = 1 << 20
	replyChunkBig = 64 << 10
	bigReply      = 16 << 10
)

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

// obufLimit returns the limits of c's class (lock held). A replica's
// hard limit under repl-backlog-size counts as repl-backlog-size, as
// checkClientOutputBufferLimits takes it (a partial resync would succeed
// and the replica be dropped at once).
func (s *Server) obufLimit(c *Client) configs.BufferLimit {
	class := c.obufClass()
	l := s.cfg.ClientOutputBufferLimits[class]
	if class == configs.ClientReplica && l.HardBytes > 0 {
		if size := uint64(s.replBacklogSize()); l.HardBytes < size {
			l.HardBytes = size
		}
	}
	return l
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
// (lock held): what the shared buffer holds past its cursor. A
// replica waiting for its snapshot to start has none (Redis's
// ref_repl_buf_node is NULL until then).
func (s *Server) replicaPending(c *Client) int64 {
	rp := s.replicaOf(c)
	if rp == nil || rp.gone || rp.rdbOnly || rp.ack.State == replication.ReplicaWaitBgsaveStart || s.repl.backlog == nil {
		return 0
	}
	return max(s.repl.backlog.End()+1-rp.cursor.Offset, 0)
}

// replicaObufMem is getClientOutputBufferMemoryUsage of a replica (lock
// held): its share of the shared replication buffer, the blocks from the
// one holding the first byte the kernel has not taken (its
// ref_repl_buf_node and ref_block_pos: the cursor less the write in
// flight) to the end of the list, whole blocks with their headers
// (Backlog.MemFrom). A replica is given a node by the first feed once its
// save started (feedReplicationBuffer), by +CONTINUE from a non-empty
// backlog (addReplyReplicationBacklog), or by the replica whose save it
// joined (copyReplicaOutputBuffer); before that, and for a replica that
// wants only the RDB, the figure is 0. Its other output (the +FULLRESYNC
// line, the RDB payload) is not counted, as Redis writes it outside the
// output buffer.
func (s *Server) replicaObufMem(c *Client) int64 {
	rp := s.replicaOf(c)
	if rp == nil || rp.gone || !rp.fed || s.repl.backlog == nil {
		return 0
	}
	off := rp.cursor.Offset
	if rp.streaming {
		off -= c.inflight.Load()
	}
	return s.repl.backlog.MemFrom(off)
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
// for every client of cls (lock held): no batch is running.
func (s *Server) obufCron(cls []*Client) {
	for _, c := range cls {
		s.checkObuf(c, 0)
	}
}

// obufSplit is getClientOutputBufferMemoryUsage with CLIENT LIST's obl
// and oll (lock held): c's pending output (batch: its running batch's
// replies, 0 when it is not running) laid out as Redis would hold it: the
// static buffer first (not for a replica), then blocks of 16kb.
//
// A reply Redis writes with addReplyDeferredLen (KEYS) puts a placeholder
// in its reply list, after which the client's replies go to the list even
// while the static buffer has room: the running batch's replies from that
// reply on are counted in omem (replyDeferredLen).
func (s *Server) obufSplit(c *Client, batch int) (obl, oll, omem int64) {
	if c.replRole.Load() == kindReplica {
		return 0, 0, s.replicaObufMem(c)
	}
	async := s.asyncBytes(c)
	p := int64(batch) + async
	if c.replRole.Load() != kindReplica {
		static := int64(replyStaticBytes)
		if batch > 0 && c.listFrom1 > 0 {
			static = min(static, async+int64(c.listFrom1-1))
		}
		obl = min(p, static)
	}
	omem = p - obl
	oll = (omem + replyStaticBytes - 1) / replyStaticBytes
	return obl, oll, omem
}

// replyDeferredLen marks the start of a reply that Redis writes with
// addReplyDeferredLen (its length set once its elements are out), for
// obufSplit: the running connection's client, its replies not suppressed.
func (c *Client) replyDeferredLen() {
	if c.listFrom1 == 0 && c.bm.on && c.srv.current == c && !c.suppressing() {
		c.listFrom1 = len(c.w.B) + 1
	}
}

// hugeReplyCheckEvery is how many elements a command emitting a reply of
// a caller-chosen size adds between two closeASAP checks (Redis checks
// after each; its listpack HRANDFIELD after each HRANDFIELD_RANDOM_SAMPLE_LIMIT,
// 1000).
const hugeReplyCheckEvery = 1024

// closeASAP is Redis's `c->flags & CLIENT_CLOSE_ASAP` test in the loops of
// the commands whose reply size the caller chooses (HRANDFIELD,
// SRANDMEMBER and ZRANDMEMBER with a negative count): Redis checks the
// output limits as each reply is added (closeClientOnOutputBufferLimitReached
// from _addReplyProtoToList) and such a loop stops once the client is to be
// closed, so that a huge count does not build a reply without bound. Here
// the running client's output so far (its batch's replies, c.w.B, and
// what waits to be written) is checked (lock held); true: the client is
// closed (or being closed) and the command stops. A script's or another
// internal client, and a client whose replies are suppressed (CLIENT
// REPLY OFF/SKIP: Redis adds nothing), are never closed here.
func (c *Client) closeASAP() bool {
	s := c.srv
	if s.current != c || !c.bm.on || c.suppressing() {
		return false
	}
	return s.checkObuf(c, len(c.w.B))
}
