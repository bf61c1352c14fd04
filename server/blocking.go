package server

import (
	"math"
	"math/big"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/vigil-kv/vigil/internal/clock"
	"github.com/vigil-kv/vigil/server/keyspace"
)

// Blocking commands: the registry of clients blocked on keys (BLPOP, BLMOVE,
// BZPOPMIN, XREAD BLOCK, ...) and on replication offsets (WAIT), as Redis
// 7.0.15's blocked.c (blockClient, unblockClient, signalKeyAsReady,
// handleClientsBlockedOnKeys), timeout.c (getTimeoutFromObjectOrReply,
// handleBlockedClientsTimeout) and replication.c
// (processClientsWaitingReplicas).
//
// Life of a blocked client, all state guarded by Server.mu:
//
//  1. Its handler finds nothing to serve and calls blockOnKeys (or WAIT
//     blockForAcks). The client is registered (c.blocked, per (db, key)
//     lists in blocking order, a timer on the server's clock for the
//     deadline) and no reply is written. Inside MULTI/EXEC (and scripts,
//     via denyBlocking) it never blocks: the timed-out reply is written at
//     once, as Redis's CLIENT_DENY_BLOCKING.
//  2. runBatch (client.go) sees c.blocked after call and parks the
//     connection's goroutine in parkBlocked: the replies of the batch so far
//     are written, the execution lock is released, and the goroutine waits
//     on the blockState's done channel. It holds no lock while parked; the
//     rest of its pipelined batch stays in its query buffer, as in Redis.
//  3. Whoever holds mu wakes it by unblock, having first written its reply
//     into c.w (the parked goroutine does not touch c.w):
//     - a writer: any write touching a key with waiters calls
//     signalKeyAsReady (from touchWatched, Redis's signalModifiedKey);
//     after the writer's command, a whole MULTI/EXEC included, call()
//     runs handleClientsBlockedOnKeys, which serves, per ready key in
//     signal order, the waiters longest-waiting first, each served
//     command running in the writer's goroutine as its own execution unit
//     (serveBlocked: counted on the blocked command, then afterServed,
//     the write path's propagation hook);
//     - the timer (blockTimedOut), CLIENT UNBLOCK (TIMEOUT or ERROR),
//     replication acknowledging an offset (ReplicasAcked, for WAIT);
//     - CLIENT KILL, the cron's sweep (a killed client or a closed peer),
//     shutdown: no reply, the connection closes.
//  4. The parked goroutine takes mu again and goes on with its batch: the
//     served reply, then the replies of the commands it had pipelined.
type blockingState struct {
	keys     map[dbKey][]*blockState // blocking_keys: waiters per key, oldest first
	ready    []dbKey                 // ready_keys, in signal order
	readySet map[dbKey]struct{}      // db->ready_keys: keys already in ready
	acks     []*blockState           // clients_waiting_acks (WAIT), oldest first
	n        int                     // blocked clients (INFO blocked_clients)
	timed    int                     // of which with a deadline (clients_in_timeout_table)
	serving  bool                    // handleClientsBlockedOnKeys is running
	replicas ReplicaAcks             // nil: no replication (no replicas ack)
}

// dbKey names a key in a database.
type dbKey struct {
	db  int
	key string
}

// Block kinds (Redis's BLOCKED_LIST/ZSET/STREAM share blockKeys: what a
// key can serve is the waiter's serve function's business).
const (
	blockKeys = iota + 1 // waiting for keys (signalKeyAsReady)
	blockAcks            // WAIT: waiting for replicas to acknowledge an offset
)

// blockState is one blocked command (Redis's client->bpop).
type blockState struct {
	c        *Client
	kind     int
	cmd      *Command
	db       int
	keys     []string  // blockKeys: the distinct keys waited on
	deadline time.Time // zero: forever
	timer    clock.Timer
	done     chan struct{} // closed by unblock: wakes the parked goroutine
	// closeConn: the client was unblocked because it is gone (killed,
	// peer closed, shutdown); its loop closes the connection.
	closeConn bool
	// ordHeld: parkBlocked counts the parked goroutine in c.ord.hold; the
	// count ends when the client is served (unblock, with mu held), not
	// when its goroutine next takes mu, so a PUBLISH run in between
	// waits for the commands behind the served one, as Redis would have
	// run them (order.go). Only once the goroutine waits for done
	// (parked): before, it is writing the replies that preceded the
	// blocked command, and may stay there if its client does not read.
	ordHeld bool
	parked  atomic.Bool

	serve    ServeFunc
	timedOut func(c *Client) // nil: a null array
	// shutdown: a SHUTDOWN waiting for replicas or its hand-over
	// (BLOCKED_SHUTDOWN). CLIENT UNBLOCK ... ERROR unblocks it as any
	// other, as 7.0.15 does (the shutdown goes on); CLIENT UNBLOCK
	// [TIMEOUT] leaves it blocked and answers 0, where 7.0.15 panics
	// (replyToBlockedClientTimedOut knows no BLOCKED_SHUTDOWN).
	shutdown bool

	// The blocked command's arguments (a copy; nil when the command
	// skips the slowlog) and the duration of its call, for the slowlog
	// entry written when it is served or unblocked by CLIENT UNBLOCK
	// (updateStatsOnUnblock).
	args [][]byte
	dur  time.Duration

	reploff     int64 // blockAcks: the offset to be acknowledged
	numreplicas int64 // blockAcks: how many replicas must acknowledge it

	// Sync-ack mode (syncack.go): a write's reply held until the acks.
	syncAck    bool
	ackRead    bool   // a read's reply (held until what it saw is acknowledged)
	held       []byte // the held reply
	ackTimeout int    // min-replicas-ack-timeout when it blocked (ms)
}

// ServeFunc serves a client blocked on keys after key (in the client's
// database) was signalled ready, with the execution lock held, in the
// writer's goroutine. It re-checks the key (a signal only says it may
// serve: it can be missing or of another type by now); if it cannot serve,
// it writes nothing and returns false and the client stays blocked. If it
// serves, it does the command's work as its handler would (dirty counter,
// keyspace notifications, c.touch, alsoPropagate of its effect, e.g. LPOP
// for BLPOP), writes c's reply and returns true.
type ServeFunc func(c *Client, key []byte) bool

// ReplicaAcks is what WAIT asks replication, implemented by the
// replication shell and installed with SetReplicaAcks.
type ReplicaAcks interface {
	// CountAcks is replicationCountAcksByOffset: how many replicas have
	// acknowledged offset.
	CountAcks(offset int64) int
	// RequestAcks is replicationRequestAckFromSlaves: ask the replicas for
	// an acknowledgement (REPLCONF GETACK) soon. Called when a WAIT blocks.
	RequestAcks()
}

// SetReplicaAcks installs the replication side of WAIT (nil: none).
func (s *Server) SetReplicaAcks(r ReplicaAcks) {
	s.mu.Lock()
	s.blocking.replicas = r
	s.mu.Unlock()
}

// countAcks is replicationCountAcksByOffset; 0 without replication.
func (s *Server) countAcks(offset int64) int64 {
	if s.blocking.replicas == nil {
		return 0
	}
	return int64(s.blocking.replicas.CountAcks(offset))
}

// --- timeouts ----------------------------------------------------------------

// blockDeadline is getTimeoutFromObjectOrReply: the timeout argument of a
// blocking command, in seconds (UNIT_SECONDS: a long double, "0.1") or in
// milliseconds (UNIT_MILLISECONDS: an integer, WAIT), as a deadline on the
// server's clock from the command's time; zero means forever. On a bad
// argument it writes Redis's error and returns false.
//
// As 7.0.15 on x86-64: seconds are parsed by strtold, multiplied by 1000
// and rounded up (ceill) to whole milliseconds, so 0.0001 is 1 ms and -0 is
// forever; a product outside int64 (1e16, inf) converts to LLONG_MIN and is
// "timeout is negative". A deadline past the int64 millisecond range, which
// Redis stores wrapped and never reaches, is forever here.
func (s *Server) blockDeadline(c *Client, arg []byte, seconds bool) (time.Time, bool) {
	var ms int64
	if seconds {
		f, ok := parseLongDouble(arg)
		if !ok {
			c.w.Error(ErrTimeoutFloat)
			return time.Time{}, false
		}
		ms = ceilMillis(f)
	} else {
		v, ok := parseInt(arg)
		if !ok {
			c.w.Error(ErrTimeout)
			return time.Time{}, false
		}
		ms = v
	}
	if ms < 0 {
		c.w.Error(ErrTimeoutNegative)
		return time.Time{}, false
	}
	if ms == 0 || ms > math.MaxInt64-s.nowMs {
		return time.Time{}, true
	}
	return time.UnixMilli(s.nowMs + ms), true
}

// ceilMillis is (long long) ceill(ftval * 1000.0) on x86-64: out of range
// (and infinities) give LLONG_MIN.
func ceilMillis(f *big.Float) int64 {
	if f.IsInf() {
		return math.MinInt64
	}
	m := new(big.Float).SetPrec(ldPrec).SetMode(big.ToNearestEven)
	m.Mul(f, big.NewFloat(1000))
	i, acc := m.Int(nil)  // toward zero
	if acc == big.Below { // positive with a fraction: round up
		i.Add(i, big.NewInt(1))
	}
	if !i.IsInt64() {
		return math.MinInt64
	}
	return i.Int64()
}

// --- blocking ----------------------------------------------------------------

// denyBlocking is CLIENT_DENY_BLOCKING: inside MULTI/EXEC (and, when it
// lands, a script) a blocking command does not block; it replies as if
// timed out at once.
func (c *Client) denyBlocking() bool { return c.multi != nil || c.inScript }

// blockOnKeys blocks c, running cmd, until one of keys (in c's database)
// is made ready and serve serves it, or until deadline (zero: forever).
// timedOut writes the reply on timeout or CLIENT UNBLOCK TIMEOUT (nil: a
// null array, as BLPOP, BZPOPMIN and XREAD). Called by a handler that
// found nothing to serve at once; it writes no reply, except in a context
// that denies blocking, where it writes the timed-out reply at once.
// blockForKeys in blocked.c.
func (c *Client) blockOnKeys(cmd *Command, keys [][]byte, deadline time.Time, serve ServeFunc, timedOut func(*Client)) {
	if c.denyBlocking() {
		replyTimedOut(c, timedOut)
		return
	}
	s := c.srv
	b := &s.blocking
	bs := &blockState{c: c, kind: blockKeys, cmd: cmd, db: c.db, deadline: deadline, serve: serve, timedOut: timedOut}
	if b.keys == nil {
		b.keys = map[dbKey][]*blockState{}
	}
	for _, k := range keys {
		key := string(k)
		dup := false
		for _, x := range bs.keys {
			if x == key {
				dup = true
				break
			}
		}
		if dup {
			continue
		}
		bs.keys = append(bs.keys, key)
		dk := dbKey{c.db, key}
		b.keys[dk] = append(b.keys[dk], bs)
	}
	s.block(bs)
}

// blockForAcks blocks c (WAIT) until numreplicas replicas acknowledged
// offset, or until deadline (zero: forever). waitCommand's blocking half.
func (c *Client) blockForAcks(cmd *Command, offset, numreplicas int64, deadline time.Time) {
	s := c.srv
	bs := &blockState{c: c, kind: blockAcks, cmd: cmd, db: c.db, deadline: deadline, reploff: offset, numreplicas: numreplicas}
	s.blocking.acks = append(s.blocking.acks, bs)
	s.block(bs)
	if r := s.blocking.replicas; r != nil {
		r.RequestAcks()
	}
}

// block is blockClient: count the client and arm its deadline.
func (s *Server) block(bs *blockState) {
	bs.done = make(chan struct{})
	bs.c.blocked = bs
	s.blocking.n++
	if !bs.deadline.IsZero() {
		s.blocking.timed++
		bs.timer = s.clock.AfterFunc(bs.deadline.Sub(s.clock.Now()), func() { s.blockTimedOut(bs) })
	}
}

// unblock is unblockClient: forget bs in every index, stop its timer and
// wake the parked goroutine. The caller has written the client's reply
// (none when closeConn).
func (s *Server) unblock(bs *blockState, closeConn bool) {
	c := bs.c
	if c.blocked != bs {
		return
	}
	b := &s.blocking
	switch bs.kind {
	case blockKeys:
		for _, key := range bs.keys {
			dk := dbKey{bs.db, key}
			list := b.keys[dk]
			for i, x := range list {
				if x == bs {
					list = append(list[:i:i], list[i+1:]...)
					break
				}
			}
			if len(list) == 0 {
				delete(b.keys, dk)
			} else {
				b.keys[dk] = list
			}
		}
	case blockAcks:
		for i, x := range b.acks {
			if x == bs {
				b.acks = append(b.acks[:i:i], b.acks[i+1:]...)
				break
			}
		}
	}
	if bs.timer != nil {
		bs.timer.Stop()
		b.timed--
	}
	b.n--
	c.blocked = nil
	bs.closeConn = closeConn
	if bs.ordHeld && bs.parked.Load() {
		bs.ordHeld = false
		c.ord.hold.Add(-1)
	}
	close(bs.done)
}

// replyTimedOut is replyToBlockedClientTimedOut for key waiters.
func replyTimedOut(c *Client, timedOut func(*Client)) {
	if timedOut != nil {
		timedOut(c)
		return
	}
	c.w.NullArray()
}

// replyBlockTimedOut writes bs's timed-out reply: WAIT answers the
// replicas that acknowledged so far.
func (s *Server) replyBlockTimedOut(bs *blockState) {
	if bs.syncAck {
		s.replySyncAckTimedOut(bs)
		return
	}
	if bs.kind == blockAcks {
		bs.c.w.Int(s.countAcks(bs.reploff))
		return
	}
	replyTimedOut(bs.c, bs.timedOut)
}

// blockTimedOut runs on the clock's timer goroutine when bs's deadline
// passes (handleBlockedClientsTimeout): the timed-out reply, unblock.
func (s *Server) blockTimedOut(bs *blockState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if bs.c.blocked != bs {
		return // served, unblocked or gone meanwhile
	}
	s.setNow()
	s.replyBlockTimedOut(bs)
	s.unblock(bs, false)
}

// unblockByCommand is CLIENT UNBLOCK: it reports whether c was blocked
// (not merely postponed by CLIENT PAUSE: 7.0.15 crashes on those, with
// "Unknown btype in replyToBlockedClientTimedOut()"; 7.2 refuses them).
// As 7.0.15, the blocked command is charged a failed call either way.
func (s *Server) unblockByCommand(c *Client, withError bool) bool {
	bs := c.blocked
	if bs == nil || (bs.shutdown && !withError) {
		return false
	}
	if withError {
		c.w.Error(ErrUnblocked)
		s.countError([]byte("-" + ErrUnblocked))
	} else {
		s.replyBlockTimedOut(bs)
	}
	s.cmdStats(bs.cmd).failed++
	if bs.args != nil {
		// updateStatsOnUnblock, after unblockClient has reset the
		// client: 7.0.15 logs the entry with no arguments.
		s.slowlog.maybeAdd(s, c, [][]byte{}, bs.dur)
	}
	s.unblock(bs, false)
	return true
}

// unblockGone unblocks c, if blocked, without a reply because the
// connection is going away (CLIENT KILL, a dead peer, shutdown).
func (s *Server) unblockGone(c *Client) {
	if bs := c.blocked; bs != nil {
		s.unblock(bs, true)
	}
}

// --- ready keys ----------------------------------------------------------------

// signalKeyAsReady records that a write touched (db, key), if clients wait
// on it, for handleClientsBlockedOnKeys to serve them after the current
// command. Called from touchWatched (signalModifiedKey): any modification
// signals, a superset of 7.0's signals from dbAdd, harmless because
// serving re-checks the key.
func (s *Server) signalKeyAsReady(db int, key []byte) {
	b := &s.blocking
	if len(b.keys) == 0 {
		return
	}
	dk := dbKey{db, string(key)}
	if _, ok := b.keys[dk]; !ok {
		return
	}
	if _, ok := b.readySet[dk]; ok {
		return
	}
	if b.readySet == nil {
		b.readySet = map[dbKey]struct{}{}
	}
	b.readySet[dk] = struct{}{}
	b.ready = append(b.ready, dk)
}

// signalDBAsReady signals every waited key of db (SWAPDB's
// scanDatabaseForReadyKeys; serving re-checks each).
func (s *Server) signalDBAsReady(db int) {
	for dk := range s.blocking.keys {
		if dk.db == db {
			s.signalKeyAsReady(db, []byte(dk.key))
		}
	}
}

// signalDeletedStreams signals the waited keys of db that hold a stream,
// before db is emptied (FLUSHALL, FLUSHDB, DEBUG RELOAD):
// scanDatabaseForDeletedStreams with no replacement, called from 7.0.15's
// signalFlushedDb, so that XREADGROUP waiters get "-UNBLOCKED the stream
// key no longer exists" instead of waiting on.
func (s *Server) signalDeletedStreams(db int) {
	for dk := range s.blocking.keys {
		if dk.db != db {
			continue
		}
		if e := s.ks.DBs[db].Peek([]byte(dk.key)); e != nil {
			if _, ok := e.Value().(*keyspace.Stream); ok {
				s.signalKeyAsReady(db, []byte(dk.key))
			}
		}
	}
}

// handleClientsBlockedOnKeys serves the clients blocked on the keys made
// ready, as blocked.c: ready keys in the order they were signalled, and
// for each key its waiters in the order they blocked (the longest-waiting
// first), each served at most once even when blocked on several ready
// keys. A served command may make more keys ready (BLMOVE pushes): those
// are served in the same call. call() runs it after a top-level command
// (after EXEC as a whole, never between its commands).
func (s *Server) handleClientsBlockedOnKeys() {
	b := &s.blocking
	if b.serving {
		return
	}
	b.serving = true
	defer func() { b.serving = false }()
	for len(b.ready) > 0 {
		ready := b.ready
		b.ready = nil
		for _, dk := range ready {
			delete(b.readySet, dk)
			// updateCachedTime per ready key, as blocked.c: a key the
			// command left with a TTL that has passed meanwhile (EXEC with
			// PEXPIRE then DEBUG SLEEP) is expired, and its waiters stay
			// blocked.
			s.setNow()
			waiters := append([]*blockState(nil), b.keys[dk]...)
			for _, bs := range waiters {
				if bs.c.blocked != bs {
					continue // served through another key
				}
				if bs.c.killed.Load() || peerClosed(bs.c) {
					// Never hand data to a client that is gone.
					s.unblock(bs, true)
					continue
				}
				s.serveBlocked(bs, dk.key)
			}
		}
	}
}

// serveBlocked runs bs's serve function for key as an execution unit of
// its own, in the writer's goroutine: the reply goes to the blocked
// client, the time and any error are charged to the blocked command (its
// call was counted when it blocked), as updateStatsOnUnblock, and the
// write path propagates what it did (afterServed).
func (s *Server) serveBlocked(bs *blockState, key string) bool {
	c := bs.c
	mark := len(c.w.B)
	start := time.Now()
	// The served client is the current client meanwhile, as blocked.c
	// sets server.current_client: the invalidations of the keys it
	// tracks that its own serve writes (BLMOVE's destination) follow its
	// reply (trackingHandlePending, afterCommand), and NOLOOP skips them.
	old := s.current
	s.current = c
	defer func() { s.current = old }()
	s.execDepth++ // an execution unit: expiry DELs during the serve join it
	served := bs.serve(c, []byte(key))
	s.execDepth--
	if len(s.tracking.pending) != 0 {
		defer s.trackingHandlePending() // after the reply, before s.current is restored
	}
	if !served {
		c.w.B = c.w.B[:mark]
		c.prop = propState{}
		s.propagatePending()
		return false
	}
	st := s.cmdStats(bs.cmd)
	st.usec += time.Since(start).Microseconds()
	if bs.args != nil {
		s.slowlog.maybeAdd(s, c, bs.args, bs.dur+time.Since(start))
	}
	if len(c.w.B) > mark && c.w.B[mark] == '-' {
		st.failed++
		s.countError(c.w.B[mark:])
	}
	s.afterServed(c, bs.cmd)
	s.unblock(bs, false)
	return true
}

// afterServed ends a served command's execution unit, as afterCommand
// (receiver) in blocked.c's serveClientsBlockedOnListKey: the hook where
// the write path propagates what the serve function asked for (BLPOP's
// LPOP key) to the AOF and the replicas, as a unit of its own after the
// writer's command, and records the client's replication offset (c.woff)
// for a later WAIT (once replication exists). A serve function propagates
// with s.alsoPropagate (the served command itself is never propagated as
// sent: BLPOP's effect is LPOP).
func (s *Server) afterServed(c *Client, cmd *Command) {
	c.prop = propState{}
	s.propagatePending()
}

// --- WAIT --------------------------------------------------------------------

// ReplicasAcked is the replication shell's entry point when a replica
// acknowledged offset (REPLCONF ACK): the WAIT clients it may satisfy are
// answered and woken (processClientsWaitingReplicas). Takes the lock.
func (s *Server) ReplicasAcked(offset int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.processWaitingReplicas(offset)
}

// processWaitingReplicas answers, oldest first, every WAIT client whose
// offset is at most offset and now has enough acknowledgements.
func (s *Server) processWaitingReplicas(offset int64) {
	b := &s.blocking
	if len(b.acks) == 0 {
		return
	}
	for _, bs := range append([]*blockState(nil), b.acks...) {
		if bs.reploff > offset {
			continue // this acknowledgement does not reach it
		}
		n := s.countAcks(bs.reploff)
		if bs.syncAck {
			n = s.countSyncAcks(bs.reploff)
		}
		if n >= bs.numreplicas {
			if bs.syncAck {
				bs.c.w.Raw(bs.held)
			} else {
				bs.c.w.Int(n)
			}
			s.unblock(bs, false)
		}
	}
}

// --- parking and housekeeping ---------------------------------------------

// parkBlocked is runBatch's half of blocking, called with mu held right
// after a command blocked c: the replies of the batch so far are written,
// then the goroutine waits, without the lock, until unblock wakes it. It
// returns with mu held; false when the connection must close (the client
// was killed or its peer is gone). The served reply is then in c.w,
// ahead of the replies of the rest of the batch.
func (s *Server) parkBlocked(c *Client) bool {
	bs := c.blocked
	// From here until it is woken, c.w belongs to whoever holds mu: the
	// replies so far leave it.
	pending := c.w.B
	c.w.B = nil
	c.rep.Pushes = c.rep.Pushes[:0] // offsets into pending, settled already
	s.aofBeforeReply()              // persistence: the AOF is written before the replies (persist_aof.go)
	// A WAIT that just blocked asked for acknowledgements: the GETACK goes
	// out now, after the writes it waits for, as beforeSleep's
	// replicationRequestAckFromSlaves does before the event loop sleeps,
	// not at the next replication cron tick (up to 100 ms later).
	s.sendGetAck()
	queued := len(pending) > 0 && c.queueReplies(pending)
	s.ordHold(c, 1) // parked: publishers do not wait for its input (order.go)
	bs.ordHeld = true
	s.mu.Unlock()
	ok := true
	if len(pending) > 0 {
		now := time.Now()
		s.adm.writes.Add(1)
		s.stats.netOutput.Add(int64(len(pending)))
		if queued {
			ok = c.flushQueued(now)
		} else {
			ok = c.writeReplies(pending, now)
		}
	}
	// A client that blocked after Run's shutdown sweep (its batch was
	// in flight) is not woken by it: it closes now.
	if ok && s.closing.Load() {
		ok = false
	}
	if ok {
		bs.parked.Store(true)
		<-bs.done
	}
	s.mu.Lock()
	if bs.ordHeld { // not served (unblock ends the count when it serves)
		bs.ordHeld = false
		s.ordHold(c, -1)
	}
	if !ok {
		c.kill()
		s.unblockGone(c)
		return false
	}
	// Redis's writeToClient counts the served reply as an interaction:
	// the idle timeout starts again now.
	now := time.Now()
	c.lastInteraction.Store(now.UnixMilli())
	if s.realClock {
		c.cmdEnd, c.batchStart = time.Time{}, now
	}
	return !bs.closeConn && !c.killed.Load()
}

// blockedCron unblocks, from the cron, blocked clients that are gone: a
// killed client (output limits kill without the lock) or one whose peer
// closed the connection (Redis sees EOF through the blocked client's read
// handler; a parked goroutine does not read, so the socket is peeked).
func (s *Server) blockedCron() {
	if s.blocking.n == 0 {
		return
	}
	var gone []*Client
	for _, bs := range s.blocking.acks {
		if bs.c.killed.Load() || peerClosed(bs.c) {
			gone = append(gone, bs.c)
		}
	}
	for _, list := range s.blocking.keys {
		for _, bs := range list {
			if bs.c.killed.Load() || peerClosed(bs.c) {
				gone = append(gone, bs.c)
			}
		}
	}
	for _, c := range gone {
		s.unblockGone(c)
	}
}

// unblockAllForShutdown wakes every parked client so that its loop ends
// and the connection closes; Run calls it when shutting down.
func (s *Server) unblockAllForShutdown() {
	s.mu.Lock()
	defer s.mu.Unlock()
	var all []*blockState
	all = append(all, s.blocking.acks...)
	for _, list := range s.blocking.keys {
		all = append(all, list...)
	}
	for _, bs := range all {
		s.unblock(bs, true)
	}
}

// peerClosed reports whether c's peer closed the connection (or it was
// shut down by kill): a non-blocking MSG_PEEK reads end of file or an
// error. Pending input means the peer is still there. Connections without
// a socket (tests' pipes) are never seen closed.
func peerClosed(c *Client) bool {
	if c.raw == nil {
		return false
	}
	closed := false
	_ = c.raw.rc.Control(func(fd uintptr) {
		var buf [1]byte
		n, _, err := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case err == syscall.EAGAIN || err == syscall.EINTR:
		case err != nil:
			closed = true
		case n == 0:
			closed = true
		}
	})
	return closed
}

// blockedFlag reports whether CLIENT LIST shows c with the b flag: blocked
// here, or postponed by CLIENT PAUSE (Redis's BLOCKED_POSTPONE).
func (c *Client) blockedFlag() bool { return c.blocked != nil || c.postponed != nil }

// blockedClients is INFO's blocked_clients: blocked commands and commands
// postponed by CLIENT PAUSE, as server.blocked_clients counts both.
func (s *Server) blockedClients() int64 { return int64(s.blocking.n + s.pause.waiters) }
