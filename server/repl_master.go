package server

import (
	"bufio"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	mrand "math/rand"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/vigil-kv/vigil/internal/clock"
	"github.com/vigil-kv/vigil/internal/redisutil"
	"github.com/vigil-kv/vigil/internal/resp"
	"github.com/vigil-kv/vigil/internal/savechild"
	"github.com/vigil-kv/vigil/replication"
	"github.com/vigil-kv/vigil/server/rdb"
)

// The replication shell (replication/doc.go, "The shells"): the master
// side here, the replica side in repl_replica.go, the commands in
// cmd_repl.go. Everything in replState is guarded by the execution lock.
//
// Master: the backlog is a Propagator attached when it is created (first
// replica). Each replica client gets a writer goroutine (replicaWriter)
// that owns the socket's output: a full sync first (a keyspace snapshot
// taken under the lock together with master_repl_offset, saved by a child
// as Redis's: a BGSAVE's dbfilename sent as $<len>, or a diskless $EOF
// payload streamed through a redis-rdb-to-slaves child; see fullSync),
// then the stream from the shared replication buffer (the Backlog's
// blocks) at the replica's own offset. The bytes produced during the
// transfer stay in the shared blocks, which are not trimmed while a
// replica still needs them (replKeep: Redis's block reference counts),
// and go out after it. client-output-buffer-limit replica bounds what a
// replica has pending (obuf.go): one over it is dropped, its blocks are
// trimmed, and it comes back with a resync.

// replState is the node's replication state (Redis's server.repl_*,
// server.master*, server.slaves).
type replState struct {
	ids      replication.IDs
	rnd      *mrand.Rand
	offset   int64 // master_repl_offset
	backlog  *replication.Backlog
	stream   resp.CommandStream
	buf      []byte
	replicas []*replica
	// noReplicasSince is repl_no_slaves_since (backlog TTL).
	noReplicasSince time.Time
	cronLoops       int64
	lastCron        time.Time
	getackPending   bool
	attached        bool // replProp is among s.props
	// trimMore: the last trim of the replication buffer stopped at its
	// limit; the end of each batch trims on (replTrimMore).
	trimMore bool
	// The repl-id / repl-offset / repl-stream-db aux fields of the RDB
	// being loaded.
	rdbID        string
	rdbOffset    int64
	rdbHasOffset bool
	rdbStreamDB  int
	// masterDB is the database the master's stream selected last on a
	// replica: server.master->db, or the cached master's when the link is
	// down. A +CONTINUE resumes in it (the master sends no SELECT again,
	// as Redis resurrects its cached master client with its db); a full
	// sync starts in the payload's repl-stream-db; the node's RDBs carry
	// it as repl-stream-db (rdbPopulateSaveInfo).
	masterDB int
	// freshStart (Vigil, the empty-restart guard): this node started as a
	// master with no data and no restored history, and has followed no
	// master since; its replication RDBs carry the aux field
	// vigil-fresh-start, which a replica's guard reads
	// (replication/emptysync.go). auxFresh: the RDB being loaded has it.
	freshStart bool
	auxFresh   bool

	syncFull, partialOK, partialErr int64

	// failover is the FAILOVER command's state (failover.go).
	failover replication.Failover

	// Replica side (repl_replica.go): nil on a master.
	link *replLink
	// applying: the master's stream is being executed: the backlog is fed
	// the master's bytes verbatim (proxy), not the re-encoded operations.
	applying bool
}

// replica is a replica client on the master.
type replica struct {
	c       *Client
	ack     replication.ReplicaAck
	ip      string
	port    int
	capaEOF bool
	psync2  bool
	// req is what the client asked of the RDB (REPLCONF rdb-filter-only,
	// slave_req): a filtered RDB is always sent over the socket and
	// shared only with replicas asking the same. rdbOnly (REPLCONF
	// rdb-only 1, CLIENT_REPL_RDBONLY, redis-cli --rdb and
	// --functions-rdb) wants the RDB and nothing else: it is fed no
	// stream and is disconnected once the RDB is sent, never online.
	req      replication.ReqFlags
	rdbOnly  bool
	cursor   replication.Cursor
	full     bool   // needs a full sync
	initial  []byte // +CONTINUE line and backlog bytes
	sig      chan struct{}
	firstAck chan struct{}
	acked    bool
	done     chan struct{}
	gone     bool
	// shared is set (under mu) when another replica's writer serves this
	// one's payload from its snapshot; it receives the outcome.
	shared chan error
	// streaming: the writer is past the payload and the +CONTINUE bytes
	// (set under mu), so the replica's output grows only by replFeed.
	streaming bool
	// fed: the replica holds blocks of the shared buffer (Redis's
	// ref_repl_buf_node is set; replicaObufMem).
	fed bool
	// obufBound bounds the replica's output from above (replCheckObuf),
	// once obufBoundOK.
	obufBound   int64
	obufBoundOK bool
	// gateAt tags the attachment for sync-ack's membership rule
	// (replication.AckGate; syncack.go).
	gateAt uint64
	// job is the disk save serving this replica's full sync (set with
	// WAIT_BGSAVE_END); rdbFile is dbfilename as its end opened it
	// (repldbfd), owned by the writer once taken, else closed by
	// dropReplica.
	job     *bgsaveJob
	rdbFile *os.File
	rdbSize int64
	rdbErr  error
	// writingSince is when the diskless payload's write to this replica
	// in progress began (unix ns; 0: none): one blocked past repl-timeout
	// is repl_last_partial_write's timeout (replicationCron).
	writingSince atomic.Int64
}

type replProp struct{ s *Server }

// Propagate feeds the backlog (replicationFeedSlaves), under the lock.
func (p replProp) Propagate(ops []Op) {
	s := p.s
	r := &s.repl
	// A replica never feeds its own commands (a PUBLISH, a write on a
	// writable replica): only the master's bytes, verbatim (applyStream),
	// as replicationFeedSlaves returns early when masterhost is set.
	if r.applying || r.backlog == nil || r.link != nil {
		return
	}
	r.buf = r.buf[:0]
	for _, op := range ops {
		if op.Target&TargetRepl != 0 {
			r.buf = r.stream.Append(r.buf, op.DB, op.Argv)
		}
	}
	s.replFeed(r.buf)
}

// replFeed appends raw stream bytes to the backlog and wakes the writers.
func (s *Server) replFeed(b []byte) {
	r := &s.repl
	if r.backlog == nil || len(b) == 0 {
		return
	}
	// The blocks a replica has not been sent stay (feedReplicationBuffer,
	// incrementalTrimReplicationBacklog): the replica's output is the
	// shared buffer from its offset, bounded by client-output-buffer-limit
	// replica, checked below. Only a history past repl-backlog-size may be
	// trimmed, so the replicas are consulted only then.
	keep := r.backlog.End() + int64(len(b)) + 1
	if r.backlog.Histlen()+int64(len(b)) > r.backlog.Size() {
		keep = s.replKeep()
	}
	pushed := r.backlog.Pushed()
	if r.backlog.AppendKeep(b, keep) == replication.SleepTrimBlocks {
		r.trimMore = true // the batch's end goes on (replTrimMore)
	}
	r.offset = r.backlog.End()
	grown := r.backlog.Pushed() - pushed
	// client-output-buffer-limit replica, as feedReplicationBuffer checks
	// each replica after adding to the replication buffer (obuf.go).
	// checkObuf may drop a replica: dropReplica gives s.repl.replicas a new
	// array, so ranging over this one is safe.
	for _, rp := range r.replicas {
		if !rp.fed && !rp.rdbOnly && rp.ack.State != replication.ReplicaWaitBgsaveStart {
			// feedReplicationBuffer gives the replica its
			// ref_repl_buf_node: from now on it holds blocks.
			rp.fed, rp.obufBoundOK = true, false
		}
		s.replCheckObuf(rp, grown)
	}
	for _, rp := range r.replicas {
		select {
		case rp.sig <- struct{}{}:
		default:
		}
	}
	if sp := s.spinner; sp != nil && len(r.replicas) > 0 {
		sp.handoff()
	}
}

// replKeep is the oldest offset a replica still needs from the shared
// buffer (lock held; End()+1 when none): the blocks from it on are its
// output (Redis's ref_repl_buf_node). A replica waiting for its save to
// start, or wanting only the RDB, is fed nothing (canFeedReplicaReplBuffer);
// a streaming one needs what its writer took but the kernel has not
// accepted yet (inflight, stored under the lock when taken).
func (s *Server) replKeep() int64 {
	keep := s.repl.backlog.End() + 1
	for _, rp := range s.repl.replicas {
		if rp.gone || rp.rdbOnly || rp.ack.State == replication.ReplicaWaitBgsaveStart {
			continue
		}
		off := rp.cursor.Offset
		if rp.streaming {
			off -= rp.c.inflight.Load()
		}
		keep = min(keep, off)
	}
	return keep
}

// replTrim is incrementalTrimReplicationBacklog(maxBlocks) outside a
// feed (lock held): after a replica moved on or left, or
// repl-backlog-size changed (TrimBlocksPerCall), and from the cron (ten
// times as many, as beforeSleep), so that a large history a replica left
// is freed a few blocks at a time, as Redis's, not in one call.
func (s *Server) replTrim(maxBlocks int) {
	s.repl.trimMore = false
	if b := s.repl.backlog; b != nil && b.Histlen() > b.Size() {
		s.repl.trimMore = b.TrimBlocks(s.replKeep(), maxBlocks) == maxBlocks
	}
}

// resizeBacklog is config.c's updateReplBacklogSize, the apply function of
// CONFIG SET repl-backlog-size (lock held): resizeReplicationBacklog
// floors server.repl_backlog_size to CONFIG_REPL_BACKLOG_MIN_SIZE (CONFIG
// GET shows the floor too) and, with a backlog, trims it at once with
// incrementalTrimReplicationBacklog(REPL_BACKLOG_TRIM_BLOCKS_PER_CALL);
// the batch's end goes on (replTrimMore, beforeSleep's ten times as
// many) if that call stopped at its limit.
func (s *Server) resizeBacklog() {
	s.cfg.ReplBacklogSize = max(s.cfg.ReplBacklogSize, replication.MinBacklogSize)
	if b := s.repl.backlog; b != nil {
		b.Resize(s.cfg.ReplBacklogSize)
		s.replTrim(replication.TrimBlocksPerCall)
	}
}

// replTrimMore is beforeSleep's incrementalTrimReplicationBacklog at the
// end of each batch (lock held), while the last trim stopped at its
// limit: a large history a replica left is freed 640 blocks per event
// loop turn, as Redis's, whatever the commands are (INFO included).
// Otherwise a flag test.
func (s *Server) replTrimMore() {
	if s.repl.trimMore {
		s.replTrim(replication.SleepTrimBlocks)
	}
}

// replTrimCron is beforeSleep's incrementalTrimReplicationBacklog(10*64)
// from each cron tick (lock held), as an idle Redis runs it about hz times
// a second: what a replica that left or caught up no longer holds goes
// 640 blocks a tick (and a feed's worth with each write).
func (s *Server) replTrimCron() { s.replTrim(replication.SleepTrimBlocks) }

// replCheckObuf is replFeed's checkObuf for rp after the feed allocated
// blocks of n bytes (their memory as the replicas' output counts it).
// Once rp streams, its output grows only by the blocks allocated (the
// writer moving bytes from the backlog to the socket only moves it to
// later blocks), so the output measured at the last check plus the
// blocks allocated since bound it:
// while that bound is under the replica class's smallest limit (and the
// soft limit's timer is not running) no limit can be reached and the
// check, a lock and a clock read per replica per command, is skipped.
func (s *Server) replCheckObuf(rp *replica, n int64) {
	c := rp.c
	if !rp.streaming {
		s.checkObuf(c, 0)
		return
	}
	l := s.obufLimit(c)
	lim := uint64(1<<63 - 1)
	if l.HardBytes > 0 {
		lim = l.HardBytes
	}
	if l.SoftBytes > 0 {
		lim = min(lim, l.SoftBytes)
	}
	rp.obufBound += n
	if rp.obufBoundOK && c.obufSoftSince == 0 && rp.obufBound >= 0 && uint64(rp.obufBound) < lim {
		return
	}
	_, _, used := s.obufSplit(c, 0)
	rp.obufBound, rp.obufBoundOK = used, true
	s.checkObuf(c, 0)
}

// initRepl sets a fresh node's IDs (initServer).
func (s *Server) initRepl() {
	var seed [8]byte
	_, _ = rand.Read(seed[:])
	s.repl.rnd = mrand.New(mrand.NewSource(int64(binary.LittleEndian.Uint64(seed[:]))))
	s.repl.ids = replication.NewIDs(s.repl.rnd)
	s.repl.noReplicasSince = s.clock.Now()
	s.blocking.replicas = replAcks{s}
}

// createBacklog is createReplicationBacklog.
func (s *Server) createBacklog() {
	s.repl.backlog = replication.NewBacklog(s.cfg.ReplBacklogSize, s.repl.offset)
	s.repl.stream.Reset()
	if !s.repl.attached {
		s.repl.attached = true
		s.props = append(s.props, replProp{s})
	}
}

// detachReplProp takes the backlog's Propagator off the write path
// (the backlog is gone); the next createBacklog attaches it again.
func (s *Server) detachReplProp() {
	if !s.repl.attached {
		return
	}
	s.repl.attached = false
	for i, p := range s.props {
		if _, ok := p.(replProp); ok {
			s.props = append(s.props[:i:i], s.props[i+1:]...)
			return
		}
	}
}

func (s *Server) isReplica() bool { return s.repl.link != nil }

// replicaOf returns the replica record of c, or nil.
func (s *Server) replicaOf(c *Client) *replica {
	for _, r := range s.repl.replicas {
		if r.c == c {
			return r
		}
	}
	return nil
}

// replicaInfo is what c announced with REPLCONF before PSYNC.
type replicaInfo struct {
	port    int
	ip      string
	capaEOF bool
	psync2  bool
	rdbOnly bool                 // rdb-only 1
	req     replication.ReqFlags // rdb-filter-only
}

// syncRequest is syncCommand: SYNC or PSYNC from c (lock held).
func (s *Server) syncRequest(c *Client, args [][]byte) {
	req := replication.PsyncRequest{Sync: len(args) == 1, AlreadyReplica: s.replicaOf(c) != nil}
	if !req.Sync {
		req.ReplID, req.Offset = string(args[1]), string(args[2])
		req.Failover = len(args) > 3 && eqFold(args[3], "failover")
	}
	info := c.replInfo
	if info == nil {
		info = &replicaInfo{}
	}
	req.PSYNC2 = info.psync2
	req.Filtered, req.CapaEOF = info.req&replication.ReqMask != 0, info.capaEOF
	if req.Failover && !req.AlreadyReplica {
		s.log.Warn().Msgf("Failover request received for replid %s.", req.ReplID)
	}
	d := replication.Decide(req, s.masterState())
	if d.Outcome == replication.PsyncPromote {
		// The master running FAILOVER hands over: promote, then serve its
		// PSYNC as any other (its replid is now this node's replid2, valid
		// up to the offset it asks for: +CONTINUE <new replid>).
		s.unsetMaster()
		s.log.Info().Msgf("MASTER MODE enabled (failover request from '%s')", s.appendClientInfo(nil, c, c, args, "psync"))
		req.Failover = false
		d = replication.Decide(req, s.masterState())
	}
	switch d.Outcome {
	case replication.PsyncIgnore:
		return
	case replication.PsyncReject, replication.PsyncPromote:
		if d.Log != "" {
			// syncCommand's serverLog(LL_WARNING, ...) of a PSYNC refused
			// for its offset, naming the replica as Redis does.
			s.log.Warn().Msg(strings.Replace(d.Log, "Replica ", "Replica "+s.replicaName(c)+" ", 1))
		}
		c.w.Raw([]byte(d.Reply))
		return
	}
	if d.PartialOK {
		s.repl.partialOK++
	}
	if d.PartialErr {
		s.repl.partialErr++
	}
	if d.Full {
		s.repl.syncFull++
	}
	if d.Log != "" {
		s.log.Info().Msg(d.Log)
	}
	// The replies of the batch so far go out first: from now on the
	// writer goroutine owns the socket's output.
	if len(c.w.B) > 0 {
		c.write(c.w.B, s.clock.Now())
		c.w.B = c.w.B[:0]
	}
	rp := &replica{c: c, ip: info.ip, port: info.port, capaEOF: info.capaEOF, psync2: info.psync2, req: info.req, rdbOnly: info.rdbOnly,
		sig: make(chan struct{}, 1), firstAck: make(chan struct{}), done: make(chan struct{})}
	if rp.ip == "" {
		rp.ip = hostOf(c.addr)
	}
	rp.ack.PrePsync = d.PrePsync
	rp.ack.Time = s.clock.Now()
	if d.Outcome == replication.PsyncContinue {
		// addReplyReplicationBacklog: the replica's output starts at
		// its offset in the shared buffer; its writer sends it after
		// the +CONTINUE line.
		rp.initial = []byte(d.Reply)
		rp.cursor = replication.Cursor{Offset: d.Offset}
		rp.fed = s.repl.backlog.Histlen() > 0
		n := s.repl.backlog.End() + 1 - d.Offset
		rp.ack.State = replication.ReplicaOnline
		rp.acked = true
		close(rp.firstAck)
		s.log.Info().Msgf("Partial resynchronization request from %s accepted. Sending %d bytes of backlog starting from offset %d.", s.replicaName(c), n, d.Offset)
	} else {
		if d.CreateBacklog {
			s.repl.ids.Reset(s.repl.rnd)
			s.createBacklog()
			s.log.Info().Msgf("Replication backlog created, my new replication IDs are '%s' and '%s'", s.repl.ids.ID, s.repl.ids.ID2)
		}
		rp.full = true
		rp.ack.State = replication.ReplicaWaitBgsaveStart
		s.log.Info().Msgf("Replica %s asks for synchronization", s.replicaName(c))
	}
	c.replRole.Store(kindReplica)
	s.ordNotify() // a replica link now: no observer waits for it (order.go)
	rp.gateAt = s.syncAck.gate.Attach()
	s.repl.replicas = append(s.repl.replicas, rp)
	go s.replicaWriter(rp)
}

// masterState is what Decide consults (lock held).
func (s *Server) masterState() replication.MasterState {
	st := replication.MasterState{IDs: s.repl.ids, MasterReplOffset: s.repl.offset, Backlog: s.repl.backlog.Window(),
		Replicas: len(s.repl.replicas), IsReplica: s.isReplica(), FailingOver: s.repl.failover.State != replication.NoFailover}
	if l := s.repl.link; l != nil {
		st.LinkUp = l.hs.State == replication.StateConnected
	}
	return st
}

// replicaName is replicationGetSlaveName: the address the replica gave
// (REPLCONF ip-address) or its peer's, with its REPLCONF listening-port, or
// "<unknown-replica-port>" when it sent none.
func (s *Server) replicaName(c *Client) string {
	ip, port := "", 0
	if info := c.replInfo; info != nil {
		ip, port = info.ip, info.port
	}
	if ip == "" {
		ip = strings.TrimSuffix(strings.TrimPrefix(hostOf(c.addr), "["), "]")
	}
	if ip == "" {
		return fmt.Sprintf("client id #%d", c.id)
	}
	if port == 0 {
		return ip + ":<unknown-replica-port>"
	}
	return net.JoinHostPort(ip, strconv.Itoa(port))
}

func hostOf(addr string) string {
	for i := len(addr) - 1; i >= 0; i-- {
		if addr[i] == ':' {
			h := addr[:i]
			if len(h) > 1 && h[0] == '[' {
				h = h[1 : len(h)-1]
			}
			return h
		}
	}
	return addr
}

// dropReplica forgets rp (freeClient of a replica); lock held.
func (s *Server) dropReplica(rp *replica, why string) {
	if rp.gone {
		return
	}
	// freeClient of a replica waiting for a disk save no one else waits
	// for: with no save points the save is useless, killed.
	killSave := false
	if job := rp.job; job != nil && job == s.rdb.job && !job.socket && len(s.cfg.Save) == 0 &&
		rp.ack.State == replication.ReplicaWaitBgsaveEnd {
		killSave = true
		for _, o := range s.repl.replicas {
			if o != rp && !o.gone && o.ack.State == replication.ReplicaWaitBgsaveEnd {
				killSave = false
				break
			}
		}
	}
	rp.gone = true
	close(rp.done)
	if killSave {
		defer s.killBgsave()
	}
	if rp.rdbFile != nil {
		rp.rdbFile.Close()
		rp.rdbFile = nil
	}
	for i, q := range s.repl.replicas {
		if q == rp {
			s.repl.replicas = append(s.repl.replicas[:i:i], s.repl.replicas[i+1:]...)
			break
		}
	}
	if len(s.repl.replicas) == 0 {
		s.repl.noReplicasSince = s.clock.Now()
	}
	// freeReplicaReferencedReplBuffer, then the beforeSleep after it, in
	// one call (as the writer's trims below).
	s.replTrim(replication.TrimBlocksPerCall + replication.SleepTrimBlocks)
	if why != "" {
		s.log.Warn().Msgf("%s: %s", why, rp.c.addr)
	}
	rp.c.kill()
}

// replicaGone is called when a replica's connection ends (unlinkClient).
func (s *Server) replicaGone(c *Client) {
	if rp := s.replicaOf(c); rp != nil {
		s.dropReplica(rp, "")
		s.log.Info().Msgf("Connection with replica %s lost.", s.replicaName(c))
	}
}

// replWriteMax bounds what a replica's writer takes from the shared
// buffer at a time (a replica far behind is sent its history in pieces).
const replWriteMax = 4 << 20

// replicaWriter owns the replica's output: the full sync, then the stream.
func (s *Server) replicaWriter(rp *replica) {
	c := rp.c
	fail := func(err error) {
		s.mu.Lock()
		s.dropReplica(rp, "Replica link failed ("+err.Error()+")")
		s.mu.Unlock()
	}
	if rp.full {
		if err := s.fullSync(rp); err == errRDBOnlyDone {
			return
		} else if err == errSyncFailed {
			// updateSlavesWaitingBgsave: freeClientAsync.
			s.mu.Lock()
			if !rp.gone {
				s.log.Warn().Msg("SYNC failed. BGSAVE child returned an error")
				s.dropReplica(rp, "")
				s.log.Warn().Msgf("Connection with replica %s lost.", s.replicaName(c))
			}
			s.mu.Unlock()
			return
		} else if err != nil {
			fail(err)
			return
		}
	} else if !c.write(rp.initial, s.clock.Now()) {
		fail(errors.New("write error"))
		return
	}
	rp.initial = nil
	select { // a +CONTINUE replica's history
	case rp.sig <- struct{}{}:
	default:
	}
	var out []byte
	var parts [][]byte
	for {
		select {
		case <-rp.done:
			return
		case <-rp.sig:
		}
		// The feed that woke the writer made it the next goroutine to
		// run (Go's runnext), ahead of the other connections' batches
		// of the same network poll: yield first so that their commands
		// go out in this write too, as Redis writes a replica's output
		// once per event-loop iteration. Each write costs the master a
		// system call and the replica a wake-up; without the yield the
		// writers wrote once per client batch (about 5 times as often
		// as redis-server under SET -P 16 from 50 clients).
		runtime.Gosched()
		s.mu.Lock()
		if rp.gone || s.repl.backlog == nil {
			s.mu.Unlock()
			return
		}
		rp.streaming = true
		// The shared blocks from the replica's offset, at most
		// replWriteMax bytes: slices of blocks whose bytes never change,
		// copied and written without the lock. The bytes taken count as
		// in flight from now on (replKeep), so their blocks are kept
		// until the kernel has them.
		var ok bool
		parts, ok = s.repl.backlog.Slices(rp.cursor.Offset, replWriteMax, parts[:0])
		if !ok {
			s.dropReplica(rp, "Client scheduled to be closed ASAP for overcoming of output buffer limits (replica fell out of the backlog)")
			s.mu.Unlock()
			return
		}
		n, blocks := 0, len(parts)
		for _, p := range parts {
			n += len(p)
		}
		rp.cursor.Advance(n)
		c.inflight.Store(int64(n))
		more := rp.cursor.Offset <= s.repl.backlog.End()
		s.mu.Unlock()
		out = out[:0]
		for _, p := range parts {
			out = append(out, p...)
		}
		clear(parts)
		if len(out) > 0 && !c.write(out, s.clock.Now()) {
			fail(errors.New("write error"))
			return
		}
		if n >= replication.BlockSize {
			// writeToClient's trim each time a replica is done with a
			// block, then the beforeSleep after the writes (a smaller
			// write is trimmed after by the next feed).
			s.mu.Lock()
			s.replTrim(blocks*replication.TrimBlocksPerCall + replication.SleepTrimBlocks)
			s.mu.Unlock()
		}
		if cap(out) > 1<<20 {
			out = nil
		}
		if more {
			select {
			case rp.sig <- struct{}{}:
			default:
			}
		}
	}
}

// fullSync is the master's half of a full resynchronization: syncCommand's
// three cases on the first pass, then replicationCron's
// replicationStartPendingFork until a save for it starts
// (startBgsaveForReplication). A disk target goes through a BGSAVE
// (rdbSaveBackground with RDBFLAGS_REPLICATION: the `redis-rdb-bgsave`
// child writing dbfilename), whose file each replica then gets as
// $<len>; a replica arriving while such a save runs for another replica
// attaches to it (copyReplicaOutputBuffer). A socket target
// (rdbSaveToSlavesSockets) streams the RDB through a
// `redis-rdb-to-slaves` child and a pipe to every replica waiting with
// the same requirements: the replica whose writer starts it serves the
// others, whose writers wait for the outcome on rp.shared.
func (s *Server) fullSync(rp *replica) error {
	s.mu.Lock()
	diskless := s.replDiskless(rp)
	// Only repl-diskless-sync waits for more replicas (syncCommand's
	// CASE 3): a filtered RDB without it starts at once.
	var delay time.Duration
	if s.cfg.ReplDisklessSync {
		delay = time.Duration(s.cfg.ReplDisklessSyncDelay) * time.Second
	}
	s.syncCase(rp, delay)
	s.mu.Unlock()
	start := s.clock.Now()
	lastNL := start
	for {
		now := s.clock.Now()
		s.mu.Lock()
		if rp.gone {
			s.mu.Unlock()
			return errors.New("replica gone")
		}
		if ch := rp.shared; ch != nil { // another writer serves this one
			s.mu.Unlock()
			select {
			case err := <-ch:
				if err != nil {
					return err
				}
				return s.afterPayload(rp, diskless)
			case <-rp.done:
				return errors.New("replica gone")
			}
		}
		if job := rp.job; job != nil { // a disk save serves this one
			s.mu.Unlock()
			return s.diskSyncWait(rp, job)
		}
		// The keepalive is written under mu: once another writer claimed
		// this replica (above) none may land inside its payload.
		if now.Sub(lastNL) >= time.Second {
			lastNL = now
			if !rp.c.write([]byte("\n"), now) {
				s.mu.Unlock()
				return errors.New("write error")
			}
		}
		if s.rdb.job == nil && !s.childActive() && (!diskless || now.Sub(start) >= delay || s.disklessMaxReplicas(rp)) {
			if diskless {
				return s.socketSync(rp) // unlocks
			}
			if err := s.startDiskSync(rp); err != nil {
				s.mu.Unlock()
				return err
			}
			s.mu.Unlock()
			continue
		}
		s.mu.Unlock()
		select {
		case <-rp.done:
			return errors.New("replica gone")
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// syncCase is syncCommand's choice for a replica needing a full sync
// (lock held): CASE 1, a disk save runs for another replica with the
// same requirements: attach to it; CASE 2, a socket save runs: wait for
// the next; CASE 3: start one now (fullSync's loop), or later.
func (s *Server) syncCase(rp *replica, delay time.Duration) {
	job := s.rdb.job
	switch {
	case job != nil && !job.socket:
		var src *replica
		for _, o := range s.repl.replicas {
			if o != rp && o.job == job && o.ack.State == replication.ReplicaWaitBgsaveEnd && (!o.rdbOnly || rp.rdbOnly) {
				src = o
				break
			}
		}
		if src != nil && (!src.capaEOF || rp.capaEOF) && (!src.psync2 || rp.psync2) && rp.req == src.req {
			// copyReplicaOutputBuffer: what src has been fed since the
			// save started.
			rp.cursor, rp.fed = src.cursor, src.fed
			s.setupFullResync(rp, job)
			s.log.Info().Msg("Waiting for end of BGSAVE for SYNC")
		} else {
			s.log.Info().Msg("Can't attach the replica to the current BGSAVE. Waiting for next BGSAVE for SYNC")
		}
	case job != nil:
		s.log.Info().Msg("Current BGSAVE has socket target. Waiting for next BGSAVE for SYNC")
	case s.cfg.ReplDisklessSync && rp.capaEOF && delay > 0:
		s.log.Info().Msg("Delay next BGSAVE for diskless SYNC")
	case s.childActive():
		s.log.Info().Msg("No BGSAVE in progress, but another BG operation is active. BGSAVE for replication delayed")
	}
}

// disklessMaxReplicas is repl-diskless-sync-max-replicas: as many
// replicas as it says wait with rp's requirements (lock held).
func (s *Server) disklessMaxReplicas(rp *replica) bool {
	lim := s.cfg.ReplDisklessSyncMaxReplicas
	if lim <= 0 {
		return false
	}
	n := 0
	for _, o := range s.repl.replicas {
		if o.full && o.shared == nil && o.job == nil && o.ack.State == replication.ReplicaWaitBgsaveStart && o.req == rp.req {
			n++
		}
	}
	return n >= lim
}

// setupFullResync is replicationSetupSlaveForFullResync for a replica a
// disk save serves (lock held): +FULLRESYNC with the save's offset.
func (s *Server) setupFullResync(o *replica, job *bgsaveJob) {
	o.job = job
	o.ack.State = replication.ReplicaWaitBgsaveEnd
	if !o.ack.PrePsync {
		o.c.write([]byte(replication.FullResyncLine(s.repl.ids.ID, job.replOff)), s.clock.Now())
	}
}

// startDiskSync is startBgsaveForReplication with a disk target (lock
// held): a BGSAVE for replication serving rp and every replica waiting
// with the same requirements. On failure rp gets
// "-ERR BGSAVE failed, replication can't continue".
func (s *Server) startDiskSync(rp *replica) error {
	s.log.Info().Msg("Starting BGSAVE for SYNC with target: disk")
	if s.repl.backlog == nil {
		s.createBacklog()
	}
	s.repl.stream.Reset() // slaveseldb = -1
	job, err := s.rdbSaveBackgroundJob(true)
	if err != nil {
		s.log.Warn().Msg("BGSAVE for replication failed")
		rp.c.write([]byte("-ERR BGSAVE failed, replication can't continue\r\n"), s.clock.Now())
		return errors.New("BGSAVE for replication failed")
	}
	for _, o := range s.repl.replicas {
		if o == rp || (o.full && o.shared == nil && o.job == nil && o.ack.State == replication.ReplicaWaitBgsaveStart &&
			!s.replDiskless(o) && o.req == rp.req) {
			o.cursor = replication.Cursor{Offset: job.replOff + 1}
			s.setupFullResync(o, job)
		}
	}
	return nil
}

// errAllReplicasGone ends an in-process socket save with no replica left.
var errAllReplicasGone = errors.New("replica gone")

// errSyncFailed: the save serving a replica failed or was killed
// (updateSlavesWaitingBgsave with an error): the replica is dropped.
var errSyncFailed = errors.New("SYNC failed. BGSAVE child returned an error")

// diskSyncWait is a disk full sync's wait for its save, then
// sendBulkToSlave: $<len> and dbfilename as updateSlavesWaitingBgsave
// opened it. A newline goes out every second meanwhile (replicationCron's
// pre-synchronization keepalive).
func (s *Server) diskSyncWait(rp *replica, job *bgsaveJob) error {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
wait:
	for {
		select {
		case <-job.finished:
			break wait
		case <-rp.done:
			return errors.New("replica gone")
		case <-tick.C:
			s.mu.Lock()
			if !rp.gone && rp.ack.State == replication.ReplicaWaitBgsaveEnd {
				rp.c.write([]byte("\n"), s.clock.Now())
			}
			s.mu.Unlock()
		}
	}
	s.mu.Lock()
	if rp.gone {
		s.mu.Unlock()
		return errors.New("replica gone")
	}
	f, size, ferr := rp.rdbFile, rp.rdbSize, rp.rdbErr
	rp.rdbFile = nil
	if !job.ok || f == nil {
		s.mu.Unlock()
		if job.ok && ferr != nil {
			return fmt.Errorf("SYNC failed. Can't open/stat DB after BGSAVE: %s", redisutil.Strerror(ferr))
		}
		return errSyncFailed
	}
	rp.ack.State = replication.ReplicaSendBulk
	s.mu.Unlock()
	defer f.Close()
	if !rp.c.write([]byte("$"+strconv.FormatInt(size, 10)+"\r\n"), s.clock.Now()) {
		return errors.New("write error")
	}
	buf := make([]byte, 256<<10)
	for off := int64(0); off < size; {
		n, err := f.ReadAt(buf[:min(int64(len(buf)), size-off)], off)
		if n > 0 {
			if !rp.c.write(buf[:n], s.clock.Now()) {
				return errors.New("write error")
			}
			off += int64(n)
		}
		if err != nil && off < size {
			return fmt.Errorf("Read error sending DB to replica: %s", map[bool]string{true: "premature EOF", false: redisutil.Strerror(err)}[err == io.EOF])
		}
	}
	return s.afterPayload(rp, false)
}

// updateSlavesWaitingBgsave hands the outcome of a save that ended (or
// was killed) to the replicas waiting for it (lock held): after a disk
// save each of them gets dbfilename opened now, as Redis opens it in the
// done handler (a later save renaming a new file over it changes nothing
// for them).
func (s *Server) updateSlavesWaitingBgsave(job *bgsaveJob, ok bool) {
	if !ok {
		// freeClientAsync of each replica waiting for it: a writer
		// blocked on a replica's socket is released too.
		for _, o := range append([]*replica(nil), s.repl.replicas...) {
			if !o.gone && o.ack.State == replication.ReplicaWaitBgsaveEnd && (o.job == job || job.group[o]) {
				s.log.Warn().Msg("SYNC failed. BGSAVE child returned an error")
				s.dropReplica(o, "")
				s.log.Warn().Msgf("Connection with replica %s lost.", s.replicaName(o.c))
			}
		}
	}
	if ok && !job.socket {
		for _, o := range s.repl.replicas {
			if o.job != job || o.gone || o.ack.State != replication.ReplicaWaitBgsaveEnd {
				continue
			}
			f, err := os.Open(job.path)
			var size int64
			if err == nil {
				var fi os.FileInfo
				if fi, err = f.Stat(); err != nil {
					f.Close()
					f = nil
				} else {
					size = fi.Size()
				}
			}
			if o.rdbFile != nil {
				o.rdbFile.Close()
			}
			o.rdbFile, o.rdbSize, o.rdbErr = f, size, err
		}
	}
	job.end(ok)
}

// socketSync is startBgsaveForReplication with a socket target, entered
// with the lock held (released on return): rdbSaveToSlavesSockets for rp
// and every replica waiting with the same target and requirements.
func (s *Server) socketSync(rp *replica) error {
	s.log.Info().Msg("Starting BGSAVE for SYNC with target: replicas sockets")
	snap, err := s.beginChildSnapshot()
	if err != nil {
		s.log.Warn().Msgf("Can't save in background: fork: %s", err)
		s.log.Warn().Msg("BGSAVE for replication failed")
		rp.c.write([]byte("-ERR BGSAVE failed, replication can't continue\r\n"), s.clock.Now())
		s.mu.Unlock()
		return errors.New("BGSAVE for replication failed")
	}
	if s.repl.backlog == nil {
		s.createBacklog()
	}
	off := s.repl.offset
	s.repl.stream.Reset() // slaveseldb = -1
	opts := s.replEncodeOptions()
	if rp.req&replication.ReqExcludeFunctions != 0 {
		opts.Functions = nil
	}
	var sizes [][2]int
	total := int64(0)
	if rp.req&replication.ReqExcludeData == 0 {
		sizes = make([][2]int, len(s.ks.DBs))
		for i, db := range s.ks.DBs {
			sizes[i] = [2]int{db.Len(), db.ExpiresLen()}
			total += int64(db.Len())
		}
	}
	group := []*replica{rp}
	for _, o := range s.repl.replicas {
		if o != rp && o.full && o.shared == nil && o.job == nil && o.ack.State == replication.ReplicaWaitBgsaveStart &&
			s.replDiskless(o) && o.req == rp.req {
			o.shared = make(chan error, 1)
			group = append(group, o)
		}
	}
	for _, o := range group {
		o.cursor = replication.Cursor{Offset: off + 1}
		o.ack.State = replication.ReplicaWaitBgsaveEnd
	}
	s.rdb.bgsaveSeq++
	job := &bgsaveJob{snap: snap, start: s.clock.Now(), total: total, done: make(chan struct{}), stop: make(chan struct{}),
		seq: s.rdb.bgsaveSeq, repl: true, socket: true, replOff: off, finished: make(chan struct{}), group: map[*replica]bool{}}
	for _, o := range group {
		job.group[o] = true
	}
	s.rdb.job = job
	s.updateDictResizePolicy()
	mw := &multiConnWriter{clock: s.clock, members: group, failed: make([]error, len(group))}
	line := []byte(replication.FullResyncLine(s.repl.ids.ID, off))
	for i, o := range group {
		if !o.ack.PrePsync && !o.c.write(line, s.clock.Now()) {
			mw.failed[i] = errors.New("write error")
		}
	}
	job.child = s.startSaveChild(savechild.Socket, "redis-rdb-to-slaves")
	pid := os.Getpid()
	if job.child != nil {
		pid = job.child.Pid
	}
	s.log.Info().Msgf("Background RDB transfer started by pid %d", pid)
	e := &snapshotEncode{snap: snap, opts: opts, sizes: sizes, delay: s.rdbKeySaveDelay(), sleep: job.sleep, processed: &job.processed}
	s.mu.Unlock()
	err = s.socketTransfer(job, mw, e)
	for i, o := range group[1:] {
		e := mw.failed[i+1]
		if e == nil {
			e = err
		}
		o.shared <- e
	}
	if mw.failed[0] != nil {
		return mw.failed[0]
	}
	if err != nil {
		return err
	}
	return s.afterPayload(rp, true)
}

// socketTransfer writes the socket save's RDB, framed as $EOF:<mark>, to
// mw's replicas and returns once the save ended: through the job's child
// (the RDB goes into its stdin, comes back on its pipe and is forwarded
// to the sockets, as rdbPipeReadHandler; the child is told it may exit
// once the pipe was read to its end), or written to the sockets directly
// when no child could be started. nil when the save succeeded.
func (s *Server) socketTransfer(job *bgsaveJob, mw *multiConnWriter, e *snapshotEncode) error {
	var m [20]byte
	_, _ = rand.Read(m[:])
	mark := hex.EncodeToString(m[:])
	release, _ := borrowProc()
	defer release()
	stopped := func() error {
		if job.stopped() {
			return errBgsaveKilled
		}
		return nil
	}
	// markGone fails the members dropped meanwhile (lock held).
	markGone := func() {
		for i, o := range mw.members {
			if o.gone && mw.failed[i] == nil {
				mw.failed[i] = errors.New("replica gone")
			}
		}
	}
	encode := func(w io.Writer, check func() error) error {
		e.stopped, e.check = stopped, check
		// 64 KB at a time, as before the child: the replicas see the
		// payload as it is encoded (a slow save, rdb-key-save-delay, of a
		// small dataset otherwise reached them only at its end).
		bw := bufio.NewWriterSize(w, 64<<10)
		bw.WriteString("$EOF:" + mark + "\r\n")
		err := s.encodeSnapshot(bw, e)
		s.mu.Lock()
		job.snap.Close() // the copy-on-write copies are freed at once
		s.mu.Unlock()
		if err == nil {
			bw.WriteString(mark)
			err = bw.Flush()
		}
		return err
	}
	child := job.child
	if child == nil {
		err := encode(mw, func() error {
			if job.stopped() {
				return errBgsaveKilled
			}
			markGone()
			if mw.allFailed() {
				return errAllReplicasGone
			}
			return nil
		})
		s.mu.Lock()
		if errors.Is(err, errAllReplicasGone) && s.rdb.job == job {
			s.log.Warn().Msg("Diskless rdb transfer, last replica dropped, killing fork child.")
			s.killBgsave()
		}
		if s.rdb.job == job && !job.kill.Load() {
			code := 0
			if err != nil {
				code = 1
			}
			s.bgsaveFinish(job, code, 0)
		}
		s.mu.Unlock()
		close(job.done)
	} else {
		encErr := make(chan error, 1)
		go func() {
			err := encode(child, stopped)
			if err == nil {
				// rdbSaveToSlavesSockets' child once its RDB is out.
				s.mu.Lock()
				cow := job.snap.Stats().CowBytes()
				s.mu.Unlock()
				l := s.childLog(child.Pid)
				l.Info().Msg(forkCowLine("RDB", cow))
			}
			encErr <- err
			child.CloseData()
		}()
		// checkChildrenDone: the child's end is handled once it exited,
		// whatever the forwarding below is doing (it may be blocked on a
		// replica that does not read: the replicas are dropped if the
		// child failed, which releases it).
		go func() {
			<-child.Done()
			code, sig := child.Status()
			s.mu.Lock()
			job.halt()
			if s.rdb.job == job && !job.kill.Load() {
				s.bgsaveFinish(job, code, sig)
			}
			s.mu.Unlock()
			close(job.done)
		}()
		buf := make([]byte, 256<<10)
		for {
			n, rerr := child.Out.Read(buf)
			if n > 0 {
				mw.Write(buf[:n]) // a member whose write fails is skipped from now on
				s.mu.Lock()
				markGone()
				if mw.allFailed() {
					s.log.Warn().Msg("Diskless rdb transfer, last replica dropped, killing fork child.")
					if s.rdb.job == job {
						s.killBgsave()
					}
					s.mu.Unlock()
					break
				}
				s.mu.Unlock()
			}
			if rerr == io.EOF {
				s.mu.Lock()
				markGone()
				up := 0
				for _, f := range mw.failed {
					if f == nil {
						up++
					}
				}
				select {
				case <-job.finished: // the child was reaped first: the pipe was closed
				default:
					s.log.Warn().Msgf("Diskless rdb transfer, done reading from pipe, %d replicas still up.", up)
				}
				s.mu.Unlock()
				break
			}
			if rerr != nil {
				s.mu.Lock()
				s.log.Warn().Msgf("Diskless rdb transfer, read error sending DB to replicas: %s", redisutil.Strerror(rerr))
				for i := range mw.failed {
					if mw.failed[i] == nil {
						mw.failed[i] = errors.New("read error")
					}
				}
				if s.rdb.job == job {
					s.killBgsave()
				}
				s.mu.Unlock()
				break
			}
		}
		child.Out.Close()
		var err error
		select {
		case err = <-encErr:
		case <-child.Done():
			// The child died before the RDB was written (checkChildrenDone
			// reaps it at once): the encoder stops at its next step.
			s.mu.Lock()
			job.halt()
			s.mu.Unlock()
			err = errBgsaveKilled
		}
		child.Release(err == nil)
		<-job.done
	}
	<-job.finished
	if !job.ok {
		return errSyncFailed
	}
	return nil
}

// replDiskless says whether rp's RDB goes over the socket: with
// repl-diskless-sync, or when it is filtered (which must not overwrite the
// snapshot files), and only to a replica that reads the EOF framing
// (startBgsaveForReplication's socket_target). Lock held.
func (s *Server) replDiskless(rp *replica) bool {
	return (s.cfg.ReplDisklessSync || rp.req&replication.ReqMask != 0) && rp.capaEOF
}

// afterPayload is the end of a replica's full sync: online, and for an
// EOF-marked payload the stream starts only at its first ACK.
func (s *Server) afterPayload(rp *replica, diskless bool) error {
	s.mu.Lock()
	if rp.gone {
		s.mu.Unlock()
		return errors.New("replica gone")
	}
	if diskless {
		s.log.Info().Msgf("Streamed RDB transfer with replica %s succeeded (socket). Waiting for REPLCONF ACK from slave to enable streaming", s.replicaName(rp.c))
	}
	if rp.rdbOnly {
		// replicaPutOnline for CLIENT_REPL_RDBONLY: the client asked for
		// the RDB only, it is closed now and never goes online.
		rp.ack.State = replication.ReplicaRDBTransmitted
		s.log.Info().Msgf("RDB transfer completed, rdb only replica (%s) should be disconnected asap", s.replicaName(rp.c))
		s.dropReplica(rp, "")
		s.log.Info().Msgf("Connection with replica %s lost.", s.replicaName(rp.c))
		s.mu.Unlock()
		return errRDBOnlyDone
	}
	rp.ack.State = replication.ReplicaOnline
	rp.ack.Time = s.clock.Now()
	s.log.Info().Msgf("Synchronization with replica %s succeeded", s.replicaName(rp.c)) // replicaPutOnline
	s.mu.Unlock()
	if diskless { // repl_start_cmd_stream_on_ack
		select {
		case <-rp.firstAck:
		case <-rp.done:
			return errors.New("replica gone")
		}
	}
	select { // the stream produced meanwhile
	case rp.sig <- struct{}{}:
	default:
	}
	return nil
}

// errRDBOnlyDone ends the writer of an rdb-only replica after its RDB.
var errRDBOnlyDone = errors.New("rdb-only replica served")

// multiConnWriter writes to several replicas' sockets; a member whose
// write fails is skipped from then on. It fails only when all did.
type multiConnWriter struct {
	clock   clock.Clock // the server's: the time handed to each write
	members []*replica
	failed  []error
}

func (m *multiConnWriter) allFailed() bool {
	for _, e := range m.failed {
		if e == nil {
			return false
		}
	}
	return true
}

func (m *multiConnWriter) Write(p []byte) (int, error) {
	now := m.clock.Now()
	for i, o := range m.members {
		if m.failed[i] != nil {
			continue
		}
		o.writingSince.Store(time.Now().UnixNano())
		if !o.c.write(p, now) {
			m.failed[i] = errors.New("write error")
		}
		o.writingSince.Store(0)
	}
	if m.allFailed() {
		return 0, errors.New("write error")
	}
	return len(p), nil
}

// replEncodeOptions are the options of a full sync's payload: encodeOptions
// carries the replication aux fields whenever a backlog exists.
func (s *Server) replEncodeOptions() rdb.EncodeOptions { return s.encodeOptions(false) }

// withReplAux adds rdbPopulateSaveInfo's aux fields (repl-stream-db,
// repl-id, repl-offset, before aof-base) when the node has a backlog, as
// Redis writes them in every RDB then (SAVE, BGSAVE, a full sync).
func (s *Server) withReplAux(o rdb.EncodeOptions) rdb.EncodeOptions {
	if s.repl.backlog == nil {
		return o
	}
	aux := make([]rdb.AuxField, 0, len(o.Aux)+3)
	for _, a := range o.Aux {
		if a.Key == "aof-base" {
			aux = append(aux, rdb.AuxField{Key: "repl-stream-db", Value: strconv.Itoa(s.replStreamDB())},
				rdb.AuxField{Key: "repl-id", Value: s.repl.ids.ID},
				rdb.AuxField{Key: "repl-offset", Value: strconv.FormatInt(s.repl.offset, 10)})
			if s.repl.freshStart {
				aux = append(aux, rdb.AuxField{Key: auxFreshStart, Value: "1"})
			}
		}
		aux = append(aux, a)
	}
	o.Aux = aux
	return o
}

// iAmMaster: the node follows no master (server.masterhost is NULL),
// also during the startup load, before the replicaof directive's link
// starts.
func (s *Server) iAmMaster() bool { return s.cfg.ReplicaOf.Host == "" && s.repl.link == nil }

// replStreamDB is rdbPopulateSaveInfo's repl_stream_db: on a replica the
// db its master's stream selected last (a restart resumes in it); on a
// master the db its own stream selected last, 0 when the next command
// selects anyway (slaveseldb -1). Lock held.
func (s *Server) replStreamDB() int {
	if s.repl.link != nil {
		return s.repl.masterDB
	}
	if db, ok := s.repl.stream.Selected(); ok {
		return db
	}
	return 0
}

// markFreshStart is run after the startup load (lock held): a master that
// starts with no data and no restored history (ID2 unset) begins a fresh
// one, for the empty-restart guard (replication/emptysync.go).
func (s *Server) markFreshStart() {
	s.repl.freshStart = s.repl.link == nil && s.ks.Len() == 0 && s.repl.ids.ID2 == replication.NoID
}

// auxFreshStart is the Vigil aux field of a freshStart master's RDBs
// (Redis ignores aux fields it does not know).
const auxFreshStart = "vigil-fresh-start"

// rdbReplAux records the repl-id and repl-offset aux fields of an RDB being
// loaded (rdbLoadRio's rsi).
func (s *Server) rdbReplAux(key, val string) {
	switch key {
	case auxFreshStart:
		s.repl.auxFresh = val == "1"
	case "repl-stream-db":
		if n, err := strconv.Atoi(val); err == nil && n >= 0 {
			s.repl.rdbStreamDB = n
		}
	case "repl-id":
		s.repl.rdbID = val
	case "repl-offset":
		if n, err := strconv.ParseInt(val, 10, 64); err == nil && n >= 0 {
			s.repl.rdbOffset, s.repl.rdbHasOffset = n, true
		}
	}
}

// restoreReplInfo is loadDataFromDisk's use of the RDB's replication info
// (lock held): a replica takes the ID and offset as its own, so that the
// replicaof link sends PSYNC <id> <offset+1> (a cached master made of its
// own history); a master keeps them as ID2, valid up to offset+1, with a
// backlog, so that its former replicas can still +CONTINUE.
func (s *Server) restoreReplInfo() {
	id, off, ok, db := s.repl.rdbID, s.repl.rdbOffset, s.repl.rdbHasOffset, s.repl.rdbStreamDB
	s.repl.rdbID, s.repl.rdbHasOffset, s.repl.rdbStreamDB = "", false, 0
	fed := s.rdb.feedRepl
	if !ok || !replication.ValidID(id) {
		return
	}
	s.repl.offset = off
	if s.cfg.ReplicaOf.Host != "" {
		s.repl.ids.ID = id
		s.repl.ids.ClearID2()
		// selectDb(server.cached_master, rsi.repl_stream_db)
		s.repl.masterDB = db
		return
	}
	s.repl.ids.ID2, s.repl.ids.SecondOffset = id, off+1
	if fed && s.repl.backlog != nil {
		// "Rebase master_repl_offset from rsi.repl_offset": the DELs fed
		// during the load follow the RDB's offset.
		s.repl.backlog.Rebase(off)
		s.repl.offset = s.repl.backlog.End()
		s.repl.noReplicasSince = s.clock.Now()
		s.rdb.feedKept = true
		return
	}
	s.createBacklog()
}

// replicaAck is REPLCONF ACK from a replica (lock held).
func (s *Server) replicaAck(c *Client, off int64) {
	rp := s.replicaOf(c)
	if rp == nil {
		return
	}
	rp.ack.OnAck(off, s.clock.Now())
	if !rp.acked {
		rp.acked = true
		close(rp.firstAck)
		rp.ack.Time = s.clock.Now()
	}
	s.processWaitingReplicas(off)
}

// CountAcks and RequestAcks implement ReplicaAcks (WAIT).
type replAcks struct{ s *Server }

func (a replAcks) CountAcks(offset int64) int {
	return replication.CountAcks(a.s.replicaAcks(), offset)
}

func (a replAcks) RequestAcks() { a.s.repl.getackPending = true }

func (s *Server) replicaAcks() []replication.ReplicaAck {
	out := make([]replication.ReplicaAck, len(s.repl.replicas))
	for i, rp := range s.repl.replicas {
		out[i] = rp.ack
	}
	return out
}

// sendGetAck is beforeSleep's replicationRequestAckFromSlaves.
func (s *Server) sendGetAck() {
	// Not while clients are paused (beforeSleep): the GETACK would move
	// master_repl_offset; it goes out after the pause if still a master.
	if !s.repl.getackPending || s.pause.active(s.clock.Now()) {
		return
	}
	s.repl.getackPending = false
	if s.repl.backlog == nil || len(s.repl.replicas) == 0 || s.isReplica() {
		return
	}
	s.replFeed(resp.AppendCommandStrings(nil, "REPLCONF", "GETACK", "*"))
}

// replCron is replicationCron, once a second (lock held).
func (s *Server) replCron() {
	now := s.clock.Now()
	s.updateFailover() // beforeSleep's updateFailoverStatus
	if l := s.repl.link; l != nil {
		l.ackAgain(now)
	}
	if now.Sub(s.repl.lastCron) < time.Second {
		s.sendGetAck()
		return
	}
	s.repl.lastCron = now
	s.sendGetAck()
	if l := s.repl.link; l != nil {
		l.cron(s)
	}
	if !s.isReplica() && !s.repl.failover.PingPaused(s.pause.active(now)) && replication.PingDue(s.repl.cronLoops, s.cfg.ReplPingReplicaPeriod, len(s.repl.replicas)) {
		s.replFeed([]byte(replication.PingCommand))
	}
	s.repl.cronLoops++ // after the PING check, as replication_cron_loops
	s.fenceCron(now)
	timeout := time.Duration(s.cfg.ReplTimeout) * time.Second
	for _, rp := range append([]*replica(nil), s.repl.replicas...) {
		if replication.ReplicaTimedOut(rp.ack, timeout, now) {
			s.dropReplica(rp, "Disconnecting timedout replica (streaming sync)")
			continue
		}
		// A diskless payload's write blocked that long (only those: a
		// stuck disk-based replica does not hold the child back).
		if job := s.rdb.job; job != nil && job.socket && rp.ack.State == replication.ReplicaWaitBgsaveEnd {
			if since := rp.writingSince.Load(); since != 0 && time.Since(time.Unix(0, since)) > timeout {
				s.dropReplica(rp, "Disconnecting timedout replica (full sync)")
			}
		}
	}
	if replication.BacklogExpired(!s.isReplica(), s.repl.backlog != nil, len(s.repl.replicas),
		time.Duration(s.cfg.ReplBacklogTTL)*time.Second, s.repl.noReplicasSince, now) {
		s.repl.ids.Reset(s.repl.rnd)
		s.repl.backlog = nil
		s.detachReplProp()
		s.log.Info().Msgf("Replication backlog freed after %d seconds without connected replicas.", s.cfg.ReplBacklogTTL)
	}
}

// writesDenied is processCommand's replication checks for c running cmd:
// -READONLY on a read-only replica, -NOREPLICAS, -MASTERDOWN (lock held);
// and Vigil's fencing of a deposed or isolated master (fence.go).
func (s *Server) writesDenied(c *Client, cmd *Command) string {
	// The master's link and the AOF's replay (which Redis runs as
	// cmd->proc, past processCommand) are never refused.
	if c.mustObey() {
		return ""
	}
	write := isWriteCommand(c, cmd)
	if l := s.repl.link; l != nil {
		if write && s.cfg.ReplicaReadOnly {
			return ErrReadOnly
		}
		if !s.cfg.ReplicaServeStaleData && l.hs.State != replication.StateConnected && isDenyStaleCommand(c, cmd) {
			return "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."
		}
		return ""
	}
	if write && s.fenceActive() {
		if msg := s.fenceDenies(); msg != "" {
			return msg
		}
	}
	if write && s.cfg.MinReplicasToWrite > 0 && s.cfg.MinReplicasMaxLag > 0 {
		if !replication.WritesAllowed(false, s.cfg.MinReplicasToWrite, s.cfg.MinReplicasMaxLag, s.goodReplicas()) {
			return "NOREPLICAS Not enough good replicas to write."
		}
	}
	return ""
}

// goodReplicas is server.repl_good_slaves_count: the replicas online that
// acknowledged within min-replicas-max-lag (lock held). A forked
// debugging session's child has its parent's count from the fork.
func (s *Server) goodReplicas() int {
	if s.ldbChild {
		return s.ldbGoodReplicas
	}
	good, _ := replication.GoodReplicas(s.replicaAcks(), s.cfg.MinReplicasToWrite, s.cfg.MinReplicasMaxLag, s.clock.Now())
	return good
}

// replInfo is INFO replication (lock held).
func (s *Server) replInfo(w *infoWriter) {
	in := replication.Info{IDs: s.repl.ids, MasterReplOffset: s.repl.offset, Backlog: s.repl.backlog,
		BacklogSize: s.replBacklogSize(), FailoverState: s.repl.failover.State}
	now := s.clock.Now()
	for _, rp := range s.repl.replicas {
		in.Replicas = append(in.Replicas, replication.InfoReplica{IP: rp.ip, Port: rp.port, State: rp.ack.State, Offset: rp.ack.Offset, Lag: rp.ack.Lag(now)})
	}
	if s.cfg.MinReplicasToWrite > 0 && s.cfg.MinReplicasMaxLag > 0 {
		in.MinReplicasActive = true
		in.GoodReplicas, _ = replication.GoodReplicas(s.replicaAcks(), s.cfg.MinReplicasToWrite, s.cfg.MinReplicasMaxLag, now)
	}
	if l := s.repl.link; l != nil {
		l.fillInfo(s, &in, now)
	}
	b := replication.AppendInfoSection(nil, &in)
	// The caller writes the section header itself.
	if i := indexCRLF(b); i >= 0 {
		b = b[i+2:]
	}
	w.b = append(w.b, b...)
}

func indexCRLF(b []byte) int {
	for i := 0; i+1 < len(b); i++ {
		if b[i] == '\r' && b[i+1] == '\n' {
			return i
		}
	}
	return -1
}

// roleReply is ROLE (lock held).
func (s *Server) roleReply(c *Client) {
	if l := s.repl.link; l != nil {
		off, has := l.offsets.Applied, l.hs.State == replication.StateConnected
		replication.WriteRoleReplica(&c.w, l.host, l.port, l.hs.State, off, has)
		return
	}
	var reps []replication.InfoReplica
	for _, rp := range s.repl.replicas {
		reps = append(reps, replication.InfoReplica{IP: rp.ip, Port: rp.port, State: rp.ack.State, Offset: rp.ack.Offset})
	}
	replication.WriteRoleMaster(&c.w, s.repl.offset, reps)
}
