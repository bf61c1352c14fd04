package server

import (
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/vigil-kv/vigil/internal/clock"
	"github.com/vigil-kv/vigil/internal/redisutil"
	"github.com/vigil-kv/vigil/internal/resp"
	"github.com/vigil-kv/vigil/server/keyspace"
)

// stats are INFO stats counters; guarded by mu unless atomic.
type stats struct {
	commands       int64
	totalConns     atomic.Int64 // counted by serveConn without mu
	rejectedConns  atomic.Int64
	expiredKeys    int64
	evictedKeys    int64
	keyspaceHits   int64
	keyspaceMisses int64
	rejectedCalls  int64
	failedCalls    int64
	errorReplies   int64
	// unexpectedErrorReplies counts the errors sent to a master link, a
	// replica or the AOF loader (afterErrorReply).
	unexpectedErrorReplies int64
	errorCodes             map[string]int64
	cronLoops              int64
	cmds                   []cmdStat
	netInput               atomic.Int64
	netOutput              atomic.Int64
	pubsubMessages         int64
	// lazyfreed is INFO's lazyfreed_objects: what Redis's lazyfree thread
	// would have freed (Vigil frees at once; lazyfree_pending_objects is 0).
	lazyfreed uint64
	// forks and forkUsec are INFO's total_forks and latest_fork_usec:
	// Vigil forks no child, so they count the background snapshots that
	// stand for one (BGSAVE, an AOF rewrite, a full sync's RDB) and the
	// time taking the snapshot held the server, as redisFork counts.
	forks    int64
	forkUsec int64
}

// beginChildSnapshot is BeginSnapshot for work Redis does in a fork child
// (redisFork's stat_total_forks, stat_fork_time).
func (s *Server) beginChildSnapshot() (*keyspace.Snapshot, error) {
	start := time.Now()
	s.ldbFinishCopy() // a debugging child's copy does not wait
	snap, err := s.ks.BeginSnapshot()
	if err == nil {
		s.stats.forks++
		s.stats.forkUsec = time.Since(start).Microseconds()
	}
	return snap, err
}

// lazyfree counts v as freeObjAsync would hand it to the lazyfree thread:
// when its free effort is above LAZYFREE_THRESHOLD.
func (s *Server) lazyfree(v keyspace.Value) {
	if v != nil && keyspace.FreeEffort(v) > keyspace.LazyfreeThreshold {
		s.stats.lazyfreed++
	}
}

// resetStats is CONFIG RESETSTAT.
func (s *Server) resetStats() {
	st := &s.stats
	st.commands, st.expiredKeys = 0, 0
	st.lazyfreed = 0 // lazyfreeResetStats
	st.totalConns.Store(0)
	st.rejectedConns.Store(0)
	st.evictedKeys, st.keyspaceHits, st.keyspaceMisses = 0, 0, 0
	s.cmem.evicted = 0 // stat_evictedclients
	st.rejectedCalls, st.failedCalls, st.errorReplies = 0, 0, 0
	st.unexpectedErrorReplies = 0
	st.errorCodes = nil
	st.cmds = nil
	st.netInput.Store(0)
	st.netOutput.Store(0)
	st.pubsubMessages = 0
	st.forks, st.forkUsec = 0, 0
	s.ks.Stats = keyspace.Stats{}
	s.repl.syncFull, s.repl.partialOK, s.repl.partialErr = 0, 0, 0 // stat_sync_*
	s.bufm.shrinks, s.bufm.expands = 0, 0                          // stat_reply_buffer_*
}

// selectedDB is the database the client has SELECTed (Redis's c->db).
func (c *Client) selectedDB() *keyspace.DB { return c.srv.ks.DBs[c.db] }

// --- slowlog ---------------------------------------------------------------

type slowEntry struct {
	id       int64
	at       int64 // unix seconds
	usec     int64
	args     []string
	addr     string
	name     string
	argcOrig int
}

type slowlog struct {
	entries []slowEntry // newest first
	nextID  int64
}

func (l *slowlog) init() {}

// maybeAdd is slowlogPushEntryIfNeeded: arguments are capped at 32, each at
// 128 bytes, as Redis's SLOWLOG_ENTRY_MAX_ARGC / MAX_STRING.
func (l *slowlog) maybeAdd(s *Server, c *Client, args [][]byte, dur time.Duration) {
	th := s.cfg.SlowlogLogSlowerThan
	if th < 0 || dur.Microseconds() < th {
		return
	}
	e := slowEntry{id: l.nextID, at: s.now.Unix(), usec: dur.Microseconds(), addr: c.addr, name: c.name, argcOrig: len(args)}
	l.nextID++
	n := len(args)
	if n > 32 {
		n = 32
	}
	for i := 0; i < n; i++ {
		if i == 31 && len(args) > 32 {
			e.args = append(e.args, "... ("+strconv.Itoa(len(args)-31)+" more arguments)")
			break
		}
		a := args[i]
		if len(a) > 128 {
			e.args = append(e.args, string(a[:128])+"... ("+strconv.Itoa(len(a)-128)+" more bytes)")
		} else {
			e.args = append(e.args, string(a))
		}
	}
	l.entries = append([]slowEntry{e}, l.entries...)
	if max := s.cfg.SlowlogMaxLen; len(l.entries) > max {
		l.entries = l.entries[:max]
	}
}

// --- pause (CLIENT PAUSE, FAILOVER) ----------------------------------------

// pauseState is Redis 7.0's client pause, per purpose: CLIENT PAUSE
// (PAUSE_BY_CLIENT_COMMAND: until a deadline, WRITE or ALL) and FAILOVER
// (PAUSE_DURING_FAILOVER: writes, until the failover ends; failover.go).
// The effective pause is the union; CLIENT UNPAUSE ends only its own. ch
// is non-nil while any pause is active and is closed whenever one ends,
// so that the parked commands look again.
type pauseState struct {
	client   bool      // a CLIENT PAUSE is active
	until    time.Time // its deadline
	all      bool      // ALL, else WRITE
	failover bool      // PAUSE_DURING_FAILOVER
	shutdown bool      // PAUSE_DURING_SHUTDOWN (shutdown_wait.go)
	ch       chan struct{}
	waiters  int // commands parked in wait
}

// blocks reports whether cmd from c must wait for the pause to end. It
// marks c postponed by cmd while it does (c.postponed: CLIENT LIST shows
// flags=b cmd=<cmd>, as Redis's blockPostponeClient) and clears the mark
// when it does not.
func (p *pauseState) blocks(c *Client, cmd *Command, now time.Time) bool {
	if p.ch == nil && c.postponed == nil {
		return false
	}
	b := p.mustWait(cmd, now)
	if b {
		c.postponed = cmd
	} else {
		c.postponed = nil
	}
	return b
}

func (p *pauseState) mustWait(cmd *Command, now time.Time) bool {
	if !p.active(now) {
		return false
	}
	if p.client && p.all {
		return true
	}
	return cmd.Has(FlagWrite | FlagMayReplicate)
}

// active is checkClientPauseTimeoutAndReturnIfPaused: an expired CLIENT
// PAUSE ends here.
func (p *pauseState) active(now time.Time) bool {
	if p.client && !now.Before(p.until) {
		p.end()
	}
	return p.ch != nil
}

func (p *pauseState) start(until time.Time, all bool) {
	if p.ch == nil {
		p.ch = make(chan struct{})
	}
	if !p.client {
		p.until, p.all = time.Time{}, false
	}
	p.client = true
	// Redis keeps the later deadline and the stricter mode.
	if until.After(p.until) {
		p.until = until
	}
	p.all = p.all || all
}

// end ends the CLIENT PAUSE (CLIENT UNPAUSE, or its deadline).
func (p *pauseState) end() {
	if !p.client {
		return
	}
	p.client, p.all, p.until = false, false, time.Time{}
	p.changed()
}

// startFailover is pauseClients(PAUSE_DURING_FAILOVER, LLONG_MAX,
// CLIENT_PAUSE_WRITE).
func (p *pauseState) startFailover() {
	if p.ch == nil {
		p.ch = make(chan struct{})
	}
	p.failover = true
}

// endFailover is unpauseClients(PAUSE_DURING_FAILOVER).
func (p *pauseState) endFailover() {
	if !p.failover {
		return
	}
	p.failover = false
	p.changed()
}

// startShutdown is pauseClients(PAUSE_DURING_SHUTDOWN, LLONG_MAX,
// CLIENT_PAUSE_WRITE).
func (p *pauseState) startShutdown() {
	if p.ch == nil {
		p.ch = make(chan struct{})
	}
	p.shutdown = true
}

// endShutdown is unpauseClients(PAUSE_DURING_SHUTDOWN).
func (p *pauseState) endShutdown() {
	if !p.shutdown {
		return
	}
	p.shutdown = false
	p.changed()
}

// changed wakes the parked commands after a pause ended; ch stays non-nil
// while another pause is active.
func (p *pauseState) changed() {
	if p.ch != nil {
		close(p.ch)
		p.ch = nil
	}
	if p.client || p.failover || p.shutdown {
		p.ch = make(chan struct{})
	}
}

// wait releases the server lock until a pause ends or the CLIENT PAUSE
// expires (on the server's clock, so a fake clock drives it in tests).
func (p *pauseState) wait(s *Server) {
	ch, client := p.ch, p.client
	var d time.Duration
	if client {
		d = p.until.Sub(s.clock.Now())
	}
	p.waiters++
	s.mu.Unlock()
	if ch != nil && (!client || d > 0) {
		var expired chan struct{}
		var t clock.Timer
		if d > 0 {
			expired = make(chan struct{})
			t = s.clock.AfterFunc(d, func() { close(expired) })
		}
		select {
		case <-ch:
		case <-expired:
		}
		if t != nil {
			t.Stop()
		}
	}
	s.mu.Lock()
	p.waiters--
	s.setNow()
}

// --- MONITOR ---------------------------------------------------------------

// feedMonitors is replicationFeedMonitors: one status line per command.
func (s *Server) feedMonitors(c *Client, args [][]byte) {
	b := make([]byte, 0, 64)
	b = append(b, '+')
	b = strconv.AppendInt(b, s.now.Unix(), 10)
	b = append(b, '.')
	us := strconv.FormatInt(int64(s.now.Nanosecond()/1000), 10)
	for i := len(us); i < 6; i++ {
		b = append(b, '0')
	}
	b = append(b, us...)
	b = append(b, " ["...)
	b = strconv.AppendInt(b, int64(c.db), 10)
	b = append(b, ' ')
	if c.inScript {
		b = append(b, "lua"...) // a command a script called
	} else if c.unix {
		// Redis prints the server's socket path: "unix:/tmp/redis.sock".
		b = append(b, "unix:"...)
		b = append(b, strings.TrimSuffix(c.laddr, ":0")...)
	} else {
		b = append(b, c.addr...)
	}
	b = append(b, ']')
	for _, a := range args {
		b = append(b, ' ')
		b = redisutil.AppendRepr(b, a)
	}
	b = append(b, '\r', '\n')
	for m := range s.monitors {
		if m == c {
			// A monitor's own command: its line follows its reply, as
			// in Redis 7.0 (call feeds monitors after the command ran).
			c.w.B = append(c.w.B, b...)
			continue
		}
		m.push(b)
	}
}

// encodePush renders a pub/sub frame in the client's protocol.
func encodePush(proto int, parts ...[]byte) []byte {
	w := resp.Writer{Proto: proto}
	w.PushLen(len(parts))
	for _, p := range parts {
		w.Bulk(p)
	}
	return w.B
}
