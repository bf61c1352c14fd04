package server

// A client's state, the batch that runs its commands and CLIENT REPLY's
// flags; its connection I/O is in conn.go.

import (
	"errors"
	"net"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vigil-kv/vigil/internal/netshell"

	"github.com/vigil-kv/vigil/internal/acl"
	"github.com/vigil-kv/vigil/internal/resp"
)

// Client kinds for CLIENT LIST/KILL TYPE, numbered as netshell.ClientType
// (checked below).
const (
	kindNormal = iota
	kindReplica
	kindMaster
	kindPubSub
)

var _ = [1]struct{}{}[kindReplica-int(netshell.ClientReplica)]
var _ = [1]struct{}{}[kindMaster-int(netshell.ClientMaster)]
var _ = [1]struct{}{}[kindPubSub-int(netshell.ClientPubSub)]

// Reply flags (CLIENT REPLY), as Redis's client flags: none is ON.
const (
	replyOff      = netshell.ReplyOff      // CLIENT_REPLY_OFF: no replies
	replySkip     = netshell.ReplySkip     // CLIENT_REPLY_SKIP: no replies for the command being run
	replySkipNext = netshell.ReplySkipNext // CLIENT_REPLY_SKIP_NEXT: SKIP was issued, skip the next command
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
	tls   bool // conn is a TLS connection (tls.go): its replies go through pushLoop (writeNB)
	// aofClient marks the AOF loader's fake client: no ACL checks (persist_aof.go).
	aofClient bool
	rd        *resp.Reader
	raw       *rawReader // the socket read directly (nil: read through conn)
	// bufIdle hands rd's and w's buffers to the cron while the loop waits
	// for input (idlebuf.go): bufOwned, bufWaiting or bufTrimming.
	bufIdle atomic.Uint32
	// retireReq: the cron asks the idle loop to end its goroutine;
	// retiring: the loop is on its way out (idleconn.go).
	retireReq atomic.Bool
	retiring  bool
	ord       ordState // arrival order: progress publishers wait on (order.go)

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
	// resolved is the command the last call() looked up, subcommand
	// resolved (nil when none was found): what resetClient knows as
	// prevcmd (tracking.go).
	resolved *Command
	// rep is the CLIENT REPLY state (netshell.Replies): the flags, where
	// the reply written under them began, and the pub/sub pushes in the
	// reply buffer that OFF/SKIP must not drop (replySubAlways); its
	// pushes are empty between batches.
	rep     netshell.Replies
	noEvict bool
	monitor bool
	multi   *multiState
	// busyUnwatch: a transaction was discarded while a script was busy
	// (serveBusy, without the lock); its WATCHed keys are released
	// before the client's next command runs.
	busyUnwatch bool
	// busyRun is the busy script while serveBusy runs one of the
	// client's commands (processCommand's busy check, in call).
	busyRun *busyScript

	// Blocking (blocking.go), guarded by mu: the blocked command (nil when
	// not blocked), the command postponed by CLIENT PAUSE, and woff, the
	// replication offset after the client's last propagated write (set
	// by the write path; WAIT waits for replicas to reach it).
	blocked   *blockState
	postponed *Command
	woff      int64

	lastInteraction atomic.Int64 // unix ms

	bm bufModel // Redis's query and reply buffers, modeled; guarded by Server.mu (bufmodel.go)

	// Client memory accounting and eviction (clientevict.go), guarded
	// by Server.mu: the memory and type last counted, and the eviction
	// bucket's list.
	memUsage         int64
	memReplObuf      int64 // the replica's output buffer within memUsage (clientMemState.replObuf)
	memType          uint8
	memBucket        *memBucket
	memPrev, memNext *Client

	// cmdEnd is when the client's last command ended, within the current
	// batch, with the real clock (zero otherwise): the next command's start
	// and cached time (see setCmdNow).
	cmdEnd time.Time
	// batchStart is when the current batch took the lock (zero outside a
	// batch): command end times are batchStart plus the monotonic time
	// elapsed since.
	batchStart time.Time
	// batchCmds counts the commands run since the socket was last drained
	// (rawReadLoop): a pipelined batch does not kick the idle spinner.
	// Touched only by the client's goroutine.
	batchCmds int
	// batchSent is the reply bytes the running batch's earlier parts
	// wrote to the socket (runBatch): Redis writes none of a read's
	// replies before all its commands ran, so its output limits count
	// them (checkObuf in runBatchPart).
	batchSent       int
	killed          atomic.Bool
	closeAfterReply bool
	// ldbMode is SCRIPT DEBUG's mode for the client's next EVAL
	// (scripting_ldb.go).
	ldbMode uint8
	// ldbDetached: a forked debugging session's child took the socket;
	// closing the connection here must not shut it down
	// (scripting_ldbfork.go).
	ldbDetached atomic.Bool

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
	// asig, under amu): flushBeforeClose (conn.go) waits on it.
	drained chan struct{}
	// inflight is the bytes of the socket write in progress that the
	// kernel has not taken yet (obuf.go).
	inflight atomic.Int64
	// obufSoftSince is obuf_soft_limit_reached_time (unix seconds, 0: under
	// the soft limit), guarded by mu; obufClosed: closed for its output
	// buffer, its output is dropped.
	obufSoftSince int64
	obufClosed    atomic.Bool
	// listFrom1 is 1 + where in the running batch's replies (w.B) a
	// reply Redis writes with addReplyDeferredLen began (0: none; reset
	// at the batch's end), guarded by mu (obufSplit).
	listFrom1 int
	// obufPeak is the most output the client had when a batch of its
	// ended (tests read it).
	obufPeak atomic.Int64
	aclosed  bool
	wmu      sync.Mutex // serialises socket writes
	rout     *rawOut    // writeRawConn's state (guarded by wmu)
	subs     map[string]struct{}
	psubs    map[string]struct{}
	ssubs    map[string]struct{} // shard channels (SSUBSCRIBE)
	argvMem  int
	totalNet atomic.Int64
	prop     propState // what the running command propagates (propagate.go); guarded by mu

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
// (docs/benchmarks.md, Replication); EVALSHA at -P 16 went from 0.44x redis-server's
// throughput to 0.8-1.4x. Whether the 1 us threshold costs the -P 1 tests
// anything against 5 us is not settled (docs/benchmarks.md, Throughput). Only a
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
// A batch whose replies reach replyChunk stops there, writes them (what
// the socket does not take is queued), and goes on with the commands left
// (obuf.go, Unread clients).
func (s *Server) runBatch(c *Client) bool {
	c.batchSent = 0
	for {
		keep, more := s.runBatchPart(c)
		if !keep || !more {
			if c.ord.cmd != nil { // closing: the command that waited is dropped
				c.ord.cmd, c.ord.cmdBuf = nil, 0
				c.ord.waitBlk.Store(false)
				c.ord.hold.Add(-1)
			}
			if !keep && !c.killed.Load() {
				// Closed after its replies (QUIT, ACL LOAD of its user, a
				// protocol error): the replies still queued for pushLoop
				// go out before the close, as Redis's
				// CLIENT_CLOSE_AFTER_REPLY. A connection read through
				// net.Conn (TLS) always leaves them to pushLoop.
				s.flushBeforeClose(c)
			}
			return keep
		}
		if c.ord.cmd != nil {
			s.ordWait(c) // arrival order (order.go)
		}
	}
}

// runBatchPart is one part of runBatch: more reports that it stopped at
// replyChunk of replies with commands possibly left in the query buffer.
func (s *Server) runBatchPart(c *Client) (keep, more bool) {
	keep = true
	if b := s.lockBatch(); b != nil {
		return s.serveBusy(c, b) // a busy script holds the lock (scripting_busy.go)
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
	// bufmodel.go: the bytes this batch got are Redis's read when a
	// command runs (the chunks Vigil's reader took are not Redis's reads).
	startBuf, modelRead := int64(c.rd.Buffered()), false
	// netshell's batch: every complete command, until the buffer is
	// drained or a command stops it.
	st, err := netshell.Close, error(nil)
	if !c.killed.Load() {
		run := func(args [][]byte) netshell.Step {
			// Arrival order (order.go): a top-level command reading
			// subscriptions whose subscribers have input pending, an
			// observer, or a command whose keys a blocking command may
			// wait on (order_keys.go) ends the batch part here when
			// input arrived before it on other connections; runBatch
			// waits for them, and the next part runs it first.
			if !c.ord.again && c.multi == nil && s.cfg.PubsubArrivalOrder && c.replRole.Load() == 0 {
				k := ordSensitive(args)
				if k == ordNone {
					k = s.ordKeyed(c, args)
				}
				if k != ordNone && s.ordCollect(c, args, k) {
					c.ord.all = k == ordAll || k == ordBlock
					c.ord.stash(args)
					c.ord.waitBlk.Store(k == ordBlock)
					c.ord.cmdBuf = 0
					if !modelRead {
						c.ord.cmdBuf = startBuf - int64(c.rd.Buffered())
					}
					s.ordNotify() // it holds now: the waits for it end, unless it is blocking
					return netshell.Pause
				}
			}
			if !modelRead {
				c.bufModelRead(startBuf)
				modelRead = true
			}
			c.bufModelCommand(args)
			c.batchCmds++
			before := len(c.w.B)
			s.process(c, args)
			if c.ord.again && c.ord.waitBlk.Load() {
				// The blocking command that waited ran (it is parked
				// or answered): the waits for it end (order_keys.go).
				c.ord.waitBlk.Store(false)
				s.ordNotify()
			}
			c.bufModelReply(int64(len(c.w.B)))
			// A command that blocked the client (blocking.go) parks it
			// here, outside the lock, until it is served, times out or
			// is unblocked; the rest of the batch waits in the query
			// buffer.
			if c.blocked != nil {
				if !s.parkBlocked(c) {
					return netshell.Close
				}
				now = time.Now()
				if c.rep.Flags != 0 { // c.w holds just the reply it was given
					c.rep.Seg = 0
					c.endReplyFlags()
				}
			}
			if c.closeAfterReply {
				return netshell.Close
			}
			// client-output-buffer-limit (obuf.go): checked as each
			// reply is added. An unauthenticated client has a limit of
			// its own. The batch stops at replyChunk of replies to
			// write them (replyChunkBig after a big reply).
			if len(c.w.B) > 0 {
				chunk := replyChunk
				if len(c.w.B)-before >= bigReply {
					chunk = replyChunkBig
				}
				if l := s.obufLimit(c); l.HardBytes|l.SoftBytes != 0 || !c.authed {
					if s.checkObuf(c, len(c.w.B)+c.batchSent) {
						return netshell.Close
					}
					// A client an output limit may close gets
					// nothing before the limit is checked, as
					// from Redis (obuf-limits.tcl).
					chunk = replyChunk
				}
				if len(c.w.B) >= chunk {
					return netshell.Pause
				}
			}
			if c.killed.Load() { // before the next command, as Redis frees it
				return netshell.Close
			}
			return netshell.Continue
		}
		st = netshell.Continue
		if args := c.ord.cmd; args != nil { // stashed by the part before (order.go)
			c.ord.cmd, c.ord.again = nil, true // it waited once: it runs now
			startBuf += c.ord.cmdBuf
			c.ord.cmdBuf = 0
			st = run(args)
			c.ord.again = false
		}
		if st == netshell.Continue {
			s.prefetchBatch(c)
			st, err = netshell.Batch(c.rd, run)
		}
	}
	// The batch's writes measured while their entries are in the cache
	// (exec leaves it to here).
	s.ks.Settle()
	if err != nil {
		// pe is declared here: errors.As takes its address, which would
		// move it to the heap, one allocation per batch, if it were
		// declared on the batch's path.
		var pe *resp.ProtocolError
		if errors.As(err, &pe) {
			s.log.Debug().Str("addr", c.addr).Msg(pe.Error())
			c.w.Error("ERR " + pe.Error())
		}
	}
	if s.tracking.bcastDirty { // tracking.go: beforeSleep's BCAST invalidations
		s.trackingBroadcast()
	}
	s.replTrimMore() // repl_master.go: beforeSleep's incrementalTrimReplicationBacklog
	keep, more = st != netshell.Close, st == netshell.Pause
	if c.obufClosed.Load() || c.ldbDetached.Load() {
		// Closed for its output buffer, or its socket handed to a Lua
		// debugging child (scripting_ldbfork.go): dropped.
		c.w.B = c.w.B[:0]
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
	if len(c.rep.Pushes) != 0 {
		c.rep.Pushes = c.rep.Pushes[:0] // the buffer is about to be written
	}
	// A client that gets asynchronous output (pub/sub messages, MONITOR
	// lines) sends its replies through the same queue, in the order the
	// commands ran, as Redis's one output buffer: a SUBSCRIBE's reply
	// precedes the messages published after it.
	s.aofBeforeReply() // persistence: the AOF is written before the replies (persist_aof.go)
	queued := len(c.w.B) > 0 && c.queueReplies(c.w.B)
	c.bufModelBatchEnd(int64(c.rd.Buffered()), modelRead)
	var batch int64
	if !queued {
		batch = int64(len(c.w.B))
	}
	if s.cmem.track { // clientevict.go: processInputBuffer's update, beforeSleep's eviction
		s.clientMemAfterCommand(c, batch, -1)
		s.evictClients()
		if c.killed.Load() {
			keep = false
		}
	} else {
		// used_memory counts the client's buffers as they are, as
		// zmalloc does, so a maxmemory set from INFO's figure does not
		// evict on the next command (maxmemory.tcl); once a batch, not
		// once a command.
		s.updateClientMem(c, batch, -1)
	}
	if s.current == c {
		s.current = nil
	}
	c.listFrom1 = 0
	s.mu.Unlock()
	// Counted before the write, as writeToClient does, so a client that has
	// read this reply sees it in INFO from any connection.
	if len(c.w.B) > 0 {
		s.adm.writes.Add(1)
		s.stats.netOutput.Add(int64(len(c.w.B)))
	}
	// The replies go out as far as the socket takes them now; what it
	// does not take is left to pushLoop, and the client's commands go on
	// (obuf.go, Unread clients).
	if queued {
		c.w.B = c.w.B[:0]
		c.flushQueuedNB()
	} else if len(c.w.B) > 0 {
		if long {
			runtime.Gosched()
		}
		rest, ok := c.writeNB(c.w.B, now)
		c.batchSent += len(c.w.B) - len(rest)
		switch {
		case !ok:
			keep = false
		case len(rest) > 0:
			c.queueRest(rest) // the queue owns the buffer now
			c.w.B = nil
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
	if s.cmem.buckets != nil { // clientevict.go: processCommand's evictClients
		// c is counted as it was after its last command or batch: a
		// new client is in no bucket before its first command ends.
		if s.evictClients(); c.killed.Load() {
			return // evicted: its command does not run
		}
	}
	if c.busyUnwatch {
		c.busyUnwatch = false
		s.unwatchAll(c, true)
	}
	c.rep.Start(&c.w)
	// The sync-ack mode's marks are taken only when it is on (CONFIG SET
	// min-replicas-ack during this call takes effect from the next one).
	syncAck := s.cfg.MinReplicasAck > 0
	var mark int
	var units, off, dirty int64
	if syncAck {
		mark, units, off, dirty = len(c.w.B), s.propUnits, s.repl.offset, s.ks.Dirty
	}
	s.call(c, args)
	if s.tracking.active() {
		s.trackingAfterCommand(c, args) // tracking.go: CLIENT CACHING's one command
	}
	if s.cmem.track { // clientevict.go: processCommandAndResetClient's update
		s.clientMemAfterCommand(c, int64(len(c.w.B)), 0)
	}
	// Sync-ack mode (syncack.go): a command that moved the replication
	// stream (or changed the dataset, when no replica ever connected and
	// nothing propagates) has its reply held until enough replicas
	// acknowledge it. Dirty only counts when it grew: SAVE (and DEBUG
	// LOADAOF) reset it, and they wrote nothing.
	// PUBLISH/SPUBLISH propagate but change no data: not held, or a
	// master without acknowledging replicas would hold the sentinels'
	// hellos (and the PINGs queued behind them) and look down.
	if syncAck && c.blocked == nil && (s.propUnits != units || s.repl.offset != off || s.ks.Dirty > dirty) && s.syncAckApplies(c) {
		if cmd := s.lookup(args[0]); s.ks.Dirty > dirty || cmd == nil || !cmd.Has(FlagPubSub) {
			c.holdForAcks(cmd, mark)
		}
	} else if c.blocked == nil && s.cfg.MinReplicasAck > 0 && c.multi == nil && s.syncAckApplies(c) {
		// A read (syncack.go): its reply may show writes not yet
		// acknowledged; it waits until they are, so that no read sees a
		// value a failover then takes back.
		if cmd := s.lookup(args[0]); cmd != nil && syncAckHoldsRead(cmd) {
			c.holdReadForAcks(cmd, mark)
		}
	}
	if c.blocked != nil {
		// A blocked client is reset when it is unblocked (Redis's
		// unblockClient): its reply flags are settled on the reply it
		// gets then (runBatch, after parkBlocked).
		return
	}
	if c.rep.Flags != 0 {
		c.endReplyFlags()
	}
}

// CLIENT REPLY is emulated as netshell.Replies says, for both binaries.

// suppressing reports whether replies are being dropped now.
func (c *Client) suppressing() bool { return c.rep.Flags.Suppressing() }

// setReplyFlags is how CLIENT REPLY and RESET change the flags.
func (c *Client) setReplyFlags(f netshell.ReplyFlags) { c.rep.Set(&c.w, f) }

// endReplyFlags settles a top-level command's reply and moves SKIP on.
func (c *Client) endReplyFlags() { c.rep.End(&c.w) }

// The client state the shared AUTH and CLIENT handlers use
// (netshell.Session).

func (c *Client) Writer() *resp.Writer                { return &c.w }
func (c *Client) ClientID() int64                     { return c.id }
func (c *Client) ClientName() string                  { return c.name }
func (c *Client) SetClientName(name string)           { c.name = name }
func (c *Client) SetProto(proto int)                  { c.w.Proto = proto }
func (c *Client) ReplyFlags() netshell.ReplyFlags     { return c.rep.Flags }
func (c *Client) SetReplyFlags(f netshell.ReplyFlags) { c.setReplyFlags(f) }

// unlinkClient is freeClient: the client's subscriptions, watches and
// MONITOR go before its connection closes, so that a peer that has seen
// the connection end (after QUIT, say) finds them gone, as with Redis,
// and the registry (connected_clients) lets it go last.
//
// A script past its busy threshold does not hold the unlink back: as
// Redis's processEventsWhileBlocked frees the clients that disconnect
// meanwhile, it runs with the state the script lends (lockOrLend), so a
// replica that left is gone from INFO and min-replicas-to-write inside
// the script (scripting.tcl "not enough good replicas state change during
// long script").
func (s *Server) unlinkClient(c *Client) {
	s.lockOrLend(func() {
		delete(s.monitors, c)
		s.pubsub.unsubscribeAll(c)
		s.unwatchAll(c, true)
		s.disableTracking(c) // tracking.go
		s.replicaGone(c)     // repl: repl_master.go
		s.forgetClientMem(c) // clientevict.go
	})
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

// prefetchBatch loads, before a pipelined batch runs, the keyspace memory
// its commands' first keys will be looked up in (keyspace.DB.Prefetch): a
// batch's lookups then miss the cache together instead of one after
// another. A batch on one key (its first two commands' keys are the same:
// LPUSH, INCR on one key, HSET or SADD on a big hash or set) peeks no
// further unless the key holds a hashtable hash or set, whose fields or
// members (the commands' third arguments) it then loads instead
// (DB.PrefetchMembers). A single command gains nothing and is left alone.
func (s *Server) prefetchBatch(c *Client) {
	if c.rd.Buffered() < 64 || c.multi != nil {
		return
	}
	var kb, sb [32][]byte
	keys := c.rd.PeekKeys(kb[:0:2])
	if len(keys) < 2 {
		return
	}
	db := c.selectedDB()
	if string(keys[0]) != string(keys[1]) {
		db.Prefetch(c.rd.PeekKeys(kb[:0]))
		return
	}
	if !db.HasMemberTable(keys[0]) {
		return
	}
	keys, subs := c.rd.PeekArgs(kb[:0], sb[:0])
	if sameKeys(keys) {
		db.PrefetchMembers(keys[0], subs)
	} else {
		db.Prefetch(keys)
	}
}

// sameKeys reports whether every key is the first one: a batch on one key
// (a counter, a queue) finds it in the cache after its first command, and
// comparing costs less than hashing each key (for different keys the first
// comparison usually ends it).
func sameKeys(keys [][]byte) bool {
	for _, k := range keys[1:] {
		if string(k) != string(keys[0]) {
			return false
		}
	}
	return true
}
