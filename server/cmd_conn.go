package server

import (
	"github.com/vigil-kv/vigil/internal/redistext"

	"math"

	"github.com/vigil-kv/vigil/internal/netshell"
	"github.com/vigil-kv/vigil/internal/redisutil"
)

// helpHandler replies like Redis's addReplyHelp.
func helpHandler(cmd string, lines []string) Handler {
	return func(c *Client, args [][]byte) {
		redistext.Help(&c.w, cmd, lines)
	}
}

// parseInt is an integer argument as getLongLongFromObject reads it:
// util.c's string2ll (redisutil.String2ll).
func parseInt(b []byte) (int64, bool) { return redisutil.String2ll(b) }

// eqFold compares an argument to a lower-case keyword (redisutil.EqFold).
func eqFold(b []byte, lower string) bool { return redisutil.EqFold(b, lower) }

func cmdPing(c *Client, args [][]byte) {
	if c.name != "" {
		c.srv.fenceSentinelCmd(c) // fence.go: a sentinel's PING is contact
	}
	redistext.Ping(&c.w, c.w.Proto == 2 && c.kind() == kindPubSub, args)
}

func cmdEcho(c *Client, args [][]byte) { c.w.Bulk(args[1]) }

func cmdQuit(c *Client, args [][]byte) {
	c.w.OK()
	c.closeAfterReply = true
}

func cmdAuth(c *Client, args [][]byte) {
	if netshell.Auth(&c.w, args, c.srv.aclDefaultNoPass(), func(user, pass string) bool {
		ok := c.srv.aclAuthenticate(c, user, pass, args)
		if !ok {
			c.srv.log.Debug().Str("addr", c.addr).Msg("AUTH failed")
		}
		return ok
	}) {
		redactArgs(args, 1, len(args)-1) // the handler has read them
	}
}

// setAuthed records whether the client is authenticated; until it is, its
// requests are parsed with Redis's pre-AUTH limits.
func (c *Client) setAuthed(on bool) {
	c.authed = on
	if c.rd != nil {
		c.rd.SetUnauthenticated(!on)
	}
}

// redactedArg replaces credentials in what SLOWLOG and MONITOR show of a
// command (shared.redacted).
var redactedArg = []byte("(redacted)")

// redactArgs is redactClientCommandArgument for args[from..to]: the
// handler has read them; the slowlog and MONITOR, fed after it with the
// same args, show "(redacted)".
func redactArgs(args [][]byte, from, to int) {
	for i := from; i <= to; i++ {
		args[i] = redactedArg
	}
}

// cmdHello is networking.c helloCommand (parsed by netshell.ParseHello).
func cmdHello(c *Client, args [][]byte) {
	netshell.HelloCommand(c, args, func(i int) bool {
		ok := c.srv.aclAuthenticate(c, string(args[i]), string(args[i+1]), args)
		redactArgs(args, i, i+1)
		return ok
	}, func() bool { return c.authed }, RedisVersion, "standalone", "master")
}

// cmdSelect is selectCommand: getIntFromObjectOrReply, then selectDb.
func cmdSelect(c *Client, args [][]byte) {
	if _, n, ok := c.parseDBIndex(args[1]); ok {
		c.db = n
		c.w.OK()
	}
}

func cmdSwapDB(c *Client, args [][]byte) {
	// getIntFromObjectOrReply: the indexes must fit a C int.
	a, ok1 := parseInt(args[1])
	b, ok2 := parseInt(args[2])
	ok1 = ok1 && a >= math.MinInt32 && a <= math.MaxInt32
	ok2 = ok2 && b >= math.MinInt32 && b <= math.MaxInt32
	if !ok1 {
		c.w.Error("ERR invalid first DB index")
		return
	}
	if !ok2 {
		c.w.Error("ERR invalid second DB index")
		return
	}
	n := int64(len(c.srv.ks.DBs))
	if a < 0 || a >= n || b < 0 || b >= n {
		c.w.Error(ErrDBIndex)
		return
	}
	// Watchers of either database see the swap as a change
	// (dbSwapDatabases; swapping a database with itself changes nothing).
	if a != b {
		c.srv.touchAllWatchedInDB(int(a), int(b))
		c.srv.touchAllWatchedInDB(int(b), int(a))
	}
	c.srv.ks.Swap(int(a), int(b))
	c.srv.ks.Dirty++
	c.w.OK()
}

func cmdDBSize(c *Client, args [][]byte) { c.w.Int(int64(c.selectedDB().Len())) }

// flushAsync is getFlushCommandFlags's EMPTYDB_ASYNC for a FLUSHDB,
// FLUSHALL, SCRIPT FLUSH or FUNCTION FLUSH whose arguments after the
// command's words are opt (already checked): ASYNC, or none and
// lazyfree-lazy-user-flush.
func (s *Server) flushAsync(opt [][]byte) bool {
	if len(opt) > 0 {
		return eqFold(opt[0], "async")
	}
	return s.cfg.LazyfreeLazyUserFlush
}

// flushMode parses FLUSHDB/FLUSHALL's optional ASYNC|SYNC.
func flushMode(c *Client, args [][]byte) bool {
	if len(args) > 2 {
		c.w.Error(ErrSyntax)
		return false
	}
	if len(args) == 2 && !eqFold(args[1], "async") && !eqFold(args[1], "sync") {
		c.w.Error(ErrSyntax)
		return false
	}
	return true
}

func cmdFlushDB(c *Client, args [][]byte) {
	if !flushMode(c, args) {
		return
	}
	db := c.selectedDB()
	c.srv.touchAllWatchedInDB(c.db, -1)
	c.srv.ks.Dirty += int64(db.Len()) // emptyData: the keys removed
	async := c.srv.flushAsync(args[1:])
	if async {
		c.srv.stats.lazyfreed += uint64(db.Len()) // emptyDbAsync
	}
	db.Flush()
	c.srv.trackingFlush(async) // tracking.go: signalFlushedDb
	// Propagated even when the database was empty (forceCommandPropagation).
	c.forcePropagation(TargetAll)
	c.w.OK()
}

func cmdFlushAll(c *Client, args [][]byte) {
	if !flushMode(c, args) {
		return
	}
	async := c.srv.flushAsync(args[1:])
	for i, db := range c.srv.ks.DBs {
		c.srv.touchAllWatchedInDB(i, -1)
		c.srv.ks.Dirty += int64(db.Len())
		if async {
			c.srv.stats.lazyfreed += uint64(db.Len()) // emptyDbAsync
		}
		db.Flush()
	}
	c.srv.ks.FlushReplicaKeysWithExpire() // emptyData(-1)
	c.srv.trackingFlush(async)            // tracking.go: signalFlushedDb
	c.srv.flushAllResetRDB()              // persist: persist_rdb.go
	c.forcePropagation(TargetAll)         // even when every database was empty
	c.w.OK()
}

// cmdTime reads the clock, as timeCommand's gettimeofday: not the
// command's cached time, which a script keeps for its whole run (its key
// expiry), so redis.call('time') moves during a long script as in Redis
// 7.0.15 (a Lua loop waiting on TIME ends).
func cmdTime(c *Client, args [][]byte) {
	now := c.srv.clock.Now()
	c.w.ArrayLen(2)
	c.w.BulkInt(now.Unix())
	c.w.BulkInt(int64(now.Nanosecond() / 1000))
}

func cmdReset(c *Client, args [][]byte) {
	s := c.srv
	c.multi = nil
	s.unwatchAll(c, true)
	s.pubsub.unsubscribeAll(c)
	s.disableTracking(c) // tracking.go
	if c.monitor {
		delete(s.monitors, c)
		c.monitor = false
	}
	c.db = 0
	c.w.Proto = 2
	c.name = ""
	c.setReplyFlags(c.rep.Flags &^ (replyOff | replySkipNext)) // clearClientConnectionState
	c.noEvict = false
	s.updateClientMemBucket(c, 0, -1) // clientevict.go
	c.setAuthed(s.aclDefaultOpen())   // clientSetDefaultAuth
	c.user = "default"
	c.aclUser = nil
	c.w.Simple("RESET")
}

// --- MULTI/EXEC ------------------------------------------------------------

type queued struct {
	cmd  *Command
	args [][]byte
}

type multiState struct {
	cmds      []queued
	dirty     bool  // a command failed to queue: EXEC aborts
	executing bool  // EXEC is running the queue (CLIENT INFO shows it, as Redis)
	mem       int64 // mstate.argv_len_sums: the queued arguments and a pointer each
}

func cmdMulti(c *Client, args [][]byte) {
	if c.multi != nil {
		c.w.Error("ERR MULTI calls can not be nested")
		return
	}
	c.multi = &multiState{}
	c.w.OK()
}

func (s *Server) queueMulti(c *Client, cmd *Command, args [][]byte) {
	cp := make([][]byte, len(args))
	for i, a := range args {
		cp[i] = append([]byte(nil), a...)
	}
	c.multi.cmds = append(c.multi.cmds, queued{cmd, cp})
	c.multi.mem += argvMem(args)
	c.w.Simple("QUEUED")
}

func cmdExec(c *Client, args [][]byte) {
	m := c.multi
	if m == nil {
		c.w.Error("ERR EXEC without MULTI")
		return
	}
	s := c.srv
	if m.dirty {
		c.multi = nil
		s.unwatchAll(c, true)
		c.w.Error("EXECABORT Transaction discarded because of previous errors.")
		return
	}
	if s.execWatchFailed(c) { // a watched key changed: nothing runs
		c.multi = nil
		s.unwatchAll(c, true)
		c.w.NullArray()
		return
	}
	s.unwatchAll(c, true)
	// The client stays in MULTI state while the queue runs, as Redis's
	// CLIENT_MULTI flag does (CLIENT INFO inside EXEC shows flags=x,
	// multi=<queued> and cmd=exec).
	m.executing = true
	s.ks.BeginExec()
	c.w.ArrayLen(len(m.cmds))
	for _, q := range m.cmds {
		if !s.aclExecAllowed(c, q.cmd, q.args) {
			continue
		}
		c.srv.exec(c, q.cmd, q.args)
	}
	c.multi = nil
}

func cmdDiscard(c *Client, args [][]byte) {
	if c.multi == nil {
		c.w.Error("ERR DISCARD without MULTI")
		return
	}
	c.multi = nil
	c.srv.unwatchAll(c, true)
	c.w.OK()
}

func init() {
	ls := FlagLoading | FlagStale
	register(
		&Command{Name: "ping", Arity: -1, Flags: FlagFast, ACL: []string{"fast", "connection"}, Handler: cmdPing},
		&Command{Name: "echo", Arity: 2, Flags: FlagFast | ls, ACL: []string{"fast", "connection"}, Handler: cmdEcho},
		&Command{Name: "quit", Arity: -1, Flags: FlagNoAuth | FlagNoScript | ls | FlagFast | FlagAllowBusy, ACL: []string{"fast", "connection"}, Handler: cmdQuit},
		&Command{Name: "auth", Arity: -2, Flags: FlagNoScript | ls | FlagFast | FlagNoAuth | FlagAllowBusy, ACL: []string{"fast", "connection"}, Handler: cmdAuth},
		&Command{Name: "hello", Arity: -1, Flags: FlagNoScript | ls | FlagFast | FlagNoAuth | FlagAllowBusy, ACL: []string{"fast", "connection"}, Handler: cmdHello},
		&Command{Name: "select", Arity: 2, Flags: ls | FlagFast, ACL: []string{"fast", "connection"}, Handler: cmdSelect},
		&Command{Name: "swapdb", Arity: 3, Flags: FlagWrite | FlagFast, ACL: []string{"keyspace", "write", "fast", "dangerous"}, Handler: cmdSwapDB},
		&Command{Name: "dbsize", Arity: 1, Flags: FlagReadonly | FlagFast, ACL: []string{"keyspace", "read", "fast"}, Handler: cmdDBSize},
		&Command{Name: "flushdb", Arity: -1, Flags: FlagWrite, ACL: []string{"keyspace", "write", "slow", "dangerous"}, Handler: cmdFlushDB},
		&Command{Name: "flushall", Arity: -1, Flags: FlagWrite, ACL: []string{"keyspace", "write", "slow", "dangerous"}, Handler: cmdFlushAll},
		&Command{Name: "time", Arity: 1, Flags: ls | FlagFast, ACL: []string{"fast"}, Handler: cmdTime},
		&Command{Name: "reset", Arity: 1, Flags: FlagNoScript | ls | FlagFast | FlagNoAuth | FlagAllowBusy, ACL: []string{"fast", "connection"}, Handler: cmdReset},
		&Command{Name: "multi", Arity: 1, Flags: FlagNoScript | ls | FlagFast | FlagAllowBusy, ACL: []string{"fast", "transaction"}, Handler: cmdMulti},
		&Command{Name: "exec", Arity: 1, Flags: FlagNoScript | ls | FlagSkipSlowlog, ACL: []string{"slow", "transaction"}, Handler: cmdExec},
		&Command{Name: "discard", Arity: 1, Flags: FlagNoScript | ls | FlagFast | FlagAllowBusy, ACL: []string{"fast", "transaction"}, Handler: cmdDiscard},
	)
}
