package server

import (
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/vigil-kv/vigil/internal/redisutil"
	"github.com/vigil-kv/vigil/internal/resp"
	"github.com/vigil-kv/vigil/server/keyspace"
)

// stats are INFO stats counters; guarded by mu unless atomic.
type stats struct {
	commands       int64
	totalConns     int64
	rejectedConns  int64
	expiredKeys    int64
	evictedKeys    int64
	keyspaceHits   int64
	keyspaceMisses int64
	rejectedCalls  int64
	failedCalls    int64
	errorReplies   int64
	errorCodes     map[string]int64
	cronLoops      int64
	cmds           []cmdStat
	netInput       atomic.Int64
	netOutput      atomic.Int64
	pubsubMessages int64
}

// resetStats is CONFIG RESETSTAT.
func (s *Server) resetStats() {
	st := &s.stats
	st.commands, st.totalConns, st.rejectedConns, st.expiredKeys = 0, 0, 0, 0
	st.evictedKeys, st.keyspaceHits, st.keyspaceMisses = 0, 0, 0
	st.rejectedCalls, st.failedCalls, st.errorReplies = 0, 0, 0
	st.errorCodes = nil
	st.cmds = nil
	st.netInput.Store(0)
	st.netOutput.Store(0)
	st.pubsubMessages = 0
	s.ks.Stats = keyspace.Stats{}
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

// --- pause (CLIENT PAUSE) ------------------------------------------------

type pauseState struct {
	until   time.Time
	all     bool // ALL, else WRITE
	ch      chan struct{}
	waiters int // commands parked in wait
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
	if p.ch == nil {
		return false
	}
	if !now.Before(p.until) {
		p.end()
		return false
	}
	if p.all {
		return true
	}
	return cmd.Has(FlagWrite | FlagMayReplicate)
}

func (p *pauseState) start(until time.Time, all bool) {
	if p.ch == nil {
		p.ch = make(chan struct{})
	}
	// Redis keeps the later deadline and the stricter mode.
	if until.After(p.until) {
		p.until = until
	}
	p.all = p.all || all
}

func (p *pauseState) end() {
	if p.ch != nil {
		close(p.ch)
		p.ch = nil
		p.all = false
		p.until = time.Time{}
	}
}

// wait releases the server lock until the pause ends or expires (on the
// server's clock, so a fake clock drives it in tests).
func (p *pauseState) wait(s *Server) {
	ch := p.ch
	d := p.until.Sub(s.clock.Now())
	p.waiters++
	s.mu.Unlock()
	if ch != nil && d > 0 {
		expired := make(chan struct{})
		t := s.clock.AfterFunc(d, func() { close(expired) })
		select {
		case <-ch:
		case <-expired:
		}
		t.Stop()
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
	if c.unix {
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
