package server

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
)

// Flag is a command flag, named as in Redis 7.0's command table.
type Flag uint32

// Command flags. Their Redis names (Flag.Names) are what COMMAND INFO prints,
// except may_replicate, which Redis 7.0 hides there.
const (
	FlagWrite Flag = 1 << iota
	FlagReadonly
	FlagDenyOOM
	FlagAdmin
	FlagPubSub
	FlagNoScript
	FlagBlocking
	FlagLoading
	FlagStale
	FlagSkipMonitor
	FlagSkipSlowlog
	FlagFast
	FlagNoAuth
	FlagMayReplicate
	FlagNoMandatoryKeys
	FlagNoMulti
	FlagAllowBusy
	FlagNoAsyncLoading
	FlagProtected   // CMD_PROTECTED (DEBUG): gated by enable-debug-command, not shown by COMMAND
	FlagMovableKeys // CMD_MOVABLE_KEYS: keys found by key specs other than a range (SINTERCARD's numkeys)
)

var flagNames = []struct {
	f    Flag
	name string
}{
	{FlagWrite, "write"}, {FlagReadonly, "readonly"}, {FlagDenyOOM, "denyoom"},
	{FlagAdmin, "admin"}, {FlagPubSub, "pubsub"}, {FlagNoScript, "noscript"},
	{FlagBlocking, "blocking"}, {FlagLoading, "loading"}, {FlagStale, "stale"},
	{FlagSkipMonitor, "skip_monitor"}, {FlagSkipSlowlog, "skip_slowlog"},
	{FlagFast, "fast"}, {FlagNoAuth, "no_auth"},
	{FlagNoMandatoryKeys, "no_mandatory_keys"}, {FlagNoAsyncLoading, "no_async_loading"},
	{FlagNoMulti, "no_multi"}, {FlagMovableKeys, "movablekeys"}, {FlagAllowBusy, "allow_busy"},
}

// Names lists the flag names in Redis's order, as addReplyFlagsForCommand
// prints them (may_replicate is "hidden on purpose" there).
func (f Flag) Names() []string {
	var out []string
	for _, n := range flagNames {
		if f&n.f != 0 {
			out = append(out, n.name)
		}
	}
	return out
}

// Handler runs one command for c, with the server lock held, and writes
// exactly one reply into c.w.
type Handler func(c *Client, args [][]byte)

// Command is one entry of the command table (server.c's redisCommand).
// Arity is Redis's: N means exactly N arguments including the name, -N at
// least N. FirstKey/LastKey/Step locate keys (LastKey -1 = last argument).
type Command struct {
	Name     string
	Arity    int
	Flags    Flag
	FirstKey int
	LastKey  int
	Step     int
	ACL      []string // ACL categories without '@'
	Handler  Handler
	Subs     []*Command // subcommands (CONFIG GET ...), Name is the subcommand

	parent   *Command
	fullName string // "get", "config|get"
	idx      int    // index into Server.cmdStats
	subMap   map[string]*Command
}

// FullName is Redis's fullname: "name" or "parent|sub".
func (c *Command) FullName() string { return c.fullName }

func (c *Command) has(f Flag) bool { return c.Flags&f != 0 }

var commandTable []*Command

// replicaDiskWriteExit is serverPanic("Replica was unable to write command
// to disk."): a variable so tests can observe it.
var replicaDiskWriteExit = os.Exit

// register adds commands to the table; called from init in cmd_*.go files.
func register(cmds ...*Command) { commandTable = append(commandTable, cmds...) }

// allCommands flattens the table (parents then subcommands), indexing each.
// Written once by initTable; read-only afterwards.
var allCommands []*Command

var tableOnce sync.Once

// initTable builds allCommands once per process: every cmd_*.go init has
// registered by then, and servers started concurrently (tests) share it.
func initTable() { tableOnce.Do(buildTable) }

func buildTable() {
	sort.Slice(commandTable, func(i, j int) bool { return commandTable[i].Name < commandTable[j].Name })
	for _, c := range commandTable {
		c.fullName = c.Name
		c.idx = len(allCommands)
		allCommands = append(allCommands, c)
		if len(c.Subs) > 0 {
			c.subMap = map[string]*Command{}
			for _, sc := range c.Subs {
				sc.parent = c
				sc.fullName = c.Name + "|" + sc.Name
				sc.idx = len(allCommands)
				allCommands = append(allCommands, sc)
				c.subMap[sc.Name] = sc
			}
		}
	}
}

// buildCommandTable returns the name -> command map after rename-command
// (a rename to "" disables the command).
func buildCommandTable(renames map[string]string) (map[string]*Command, error) {
	initTable()
	m := make(map[string]*Command, len(commandTable))
	for _, c := range commandTable {
		m[c.Name] = c
	}
	for from, to := range renames {
		from = strings.ToLower(from)
		c, ok := m[from]
		if !ok {
			return nil, fmt.Errorf("No such command in rename-command: '%s'", from)
		}
		delete(m, from)
		if to != "" {
			to = strings.ToLower(to)
			if _, dup := m[to]; dup {
				return nil, fmt.Errorf("Target command name already exists in rename-command: '%s'", to)
			}
			m[to] = c
		}
	}
	return m, nil
}

// lookup finds a command by name case-insensitively without allocating.
func (s *Server) lookup(name []byte) *Command {
	var buf [32]byte
	if len(name) > len(buf) {
		return s.cmds[strings.ToLower(string(name))]
	}
	for i, ch := range name {
		if ch >= 'A' && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		buf[i] = ch
	}
	return s.cmds[string(buf[:len(name)])]
}

// lookupCached is lookup with a one-entry cache of the client's last
// command name, as typed (a pipeline usually repeats one command): a hit
// costs a byte comparison instead of lowercasing and hashing. The table
// does not change after start (rename-command is applied in New).
func (c *Client) lookupCached(name []byte) *Command {
	if c.lastLookup != nil && len(name) == int(c.lastNameLen) && string(name) == string(c.lastName[:c.lastNameLen]) {
		return c.lastLookup
	}
	cmd := c.srv.lookup(name)
	if cmd != nil && len(name) <= len(c.lastName) {
		c.lastNameLen = uint8(copy(c.lastName[:], name))
		c.lastLookup = cmd
	}
	return cmd
}

func lowerASCII(b []byte) string {
	var buf [32]byte
	if len(b) > len(buf) {
		return strings.ToLower(string(b))
	}
	for i, ch := range b {
		if ch >= 'A' && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		buf[i] = ch
	}
	return string(buf[:len(b)])
}

// cmdStat is INFO commandstats for one command.
type cmdStat struct {
	calls, usec, rejected, failed int64
}

// call is processCommand + call(): lookup, arity, auth and context checks,
// execution, statistics, slowlog and MONITOR feed.
func (s *Server) call(c *Client, args [][]byte) {
	s.setCmdNow(c)
	cmd := c.lookupCached(args[0])
	if cmd == nil {
		s.stats.rejectedCalls++
		if c.multi != nil {
			c.multi.dirty = true
		}
		msg := errUnknownCommand(args)
		s.countError([]byte("-" + msg))
		c.w.Error(msg)
		return
	}
	// A container with its own handler (COMMAND) runs it when called
	// without a subcommand.
	if cmd.subMap != nil && (len(args) >= 2 || cmd.Handler == nil) {
		if len(args) < 2 {
			s.reject(c, cmd, errWrongArgs(cmd.fullName))
			return
		}
		sub := cmd.subMap[lowerASCII(args[1])]
		if sub == nil {
			// Not charged to the container's commandstats: Redis's lookup
			// finds no command at all.
			s.reject(c, nil, errUnknownSubcommand(string(args[1]), strings.ToUpper(cmd.Name)))
			return
		}
		cmd = sub
	}
	if (cmd.Arity > 0 && len(args) != cmd.Arity) || len(args) < -cmd.Arity {
		s.reject(c, cmd, errWrongArgs(cmd.fullName))
		return
	}
	if cmd.has(FlagProtected) && !c.debugAllowed() {
		s.reject(c, cmd, ErrDebugDisabled)
		return
	}
	if !c.authed && !cmd.has(FlagNoAuth) && !s.aclDefaultOpen() {
		s.reject(c, cmd, ErrNoAuth)
		return
	}
	if !s.aclAllowed(c, cmd, args) {
		return
	}
	// FCALL/FCALL_RO: the checks below see the function's flags
	// (functions_flags.go); chk is cmd for every other command.
	chk := s.checkedCmd(cmd, args)
	// evict.go: processCommand's maxmemory check (performEvictions, -OOM).
	if s.cfg.Maxmemory > 0 && s.oomRejects(c, chk) {
		s.reject(c, cmd, ErrOOM)
		return
	}
	// persist: writeCommandsDeniedByDiskError (persist_rdb.go): -MISCONF
	// for writes and PING after a failed BGSAVE or AOF write.
	if (s.rdb.bgsaveErr || s.aof.mgr != nil) && (cmd.fullName == "ping" || isWriteCommand(c, chk)) {
		if msg := s.diskErrorDenies(); msg != "" {
			if c.kind() != kindMaster && !c.aofClient {
				s.reject(c, cmd, msg)
				return
			}
			// processCommand's obey_client branch: a replica never
			// refuses its master's stream (that would diverge silently);
			// Redis 7.0 panics (7.2 added repl-ignore-disk-write-error).
			if !c.aofClient && cmd.fullName != "ping" {
				s.log.Error().Str("error", msg).Msg("Replica was unable to write command to disk.")
				replicaDiskWriteExit(1)
			}
		}
	}
	// repl: -READONLY, -MASTERDOWN, -NOREPLICAS (repl_master.go).
	if s.repl.link != nil || s.cfg.MinReplicasToWrite > 0 {
		if msg := s.writesDenied(c, chk); msg != "" {
			s.reject(c, cmd, msg)
			return
		}
	}
	if c.w.Proto == 2 && c.kind() == kindPubSub && !allowedInSubscribedContext(cmd) {
		s.reject(c, cmd, fmt.Sprintf(ErrPubSubContext, cmd.fullName))
		return
	}
	// A monitor is flagged CLIENT_SLAVE in Redis, and processCommand
	// refuses a replica's commands that read, write or may replicate.
	if c.monitor && chk.has(FlagReadonly|FlagWrite|FlagMayReplicate) {
		s.reject(c, cmd, ErrReplicaKeyspace)
		return
	}
	// persist: -LOADING while the startup load yields (persist_rdb.go);
	// the AOF's own replay is the load.
	// repl: during a swapdb async load (repl_replica.go) the old data is
	// served; only the commands flagged no-async-loading are refused.
	async := s.asyncLoading()
	if s.rdb.loading && !async && !cmd.has(FlagLoading) && !c.aofClient {
		s.reject(c, cmd, errLoadingMsg)
		return
	}
	if async && cmd.has(FlagNoAsyncLoading) {
		s.reject(c, cmd, errLoadingMsg)
		return
	}
	if c.multi != nil && !runsInMulti(cmd) {
		if cmd.has(FlagNoMulti) {
			s.reject(c, cmd, "ERR Command not allowed inside a transaction")
			return
		}
		// Queued with the flags the checks saw: EXEC checks the queued
		// commands' flags (mstate.cmd_flags), a function's included.
		s.queueMulti(c, chk, args)
		return
	}
	if pc := s.pausedCmd(c, cmd); s.pause.blocks(c, pc, s.now) {
		for s.pause.blocks(c, pc, s.now) {
			s.pause.wait(s)
			if c.killed.Load() { // CLIENT KILL while parked: never runs
				return
			}
		}
		// A postponed command goes through processCommand again, as Redis
		// reprocesses an unblocked client's input: the node may have become
		// a replica meanwhile (FAILOVER), and its write gets -READONLY.
		s.call(c, args)
		return
	}
	if s.realClock {
		c.cmdEnd = s.now // exec's start: after any pause
	}
	s.exec(c, cmd, args)
	// Blocking (blocking.go): serve the clients blocked on the keys this
	// command made ready, after it (after EXEC as a whole, never between
	// its commands), as processCommand -> handleClientsBlockedOnKeys.
	if len(s.blocking.ready) > 0 {
		s.handleClientsBlockedOnKeys()
	}
}

// setCmdNow sets the time of the command about to run for c (Redis 7.0's
// call() updateCachedTime). With the real clock, the end time exec read for
// the client's previous command of the same batch is reused: it is the
// current time to within the parse of one command, and saves reading the
// clock two more times per command (clock_gettime was the top entry of a
// pipelined profile).
func (s *Server) setCmdNow(c *Client) {
	if s.realClock && !c.cmdEnd.IsZero() {
		s.now = c.cmdEnd
		s.nowMs = s.now.UnixMilli()
		return
	}
	s.setNow()
}

// isWriteCommand is processCommand's is_write_command: a write command,
// or an EXEC whose queue holds one (mstate.cmd_flags), so that a
// transaction queued before a failed BGSAVE is refused as a whole.
func isWriteCommand(c *Client, cmd *Command) bool {
	if cmd.has(FlagWrite) {
		return true
	}
	if cmd.fullName == "exec" && c.multi != nil {
		for _, q := range c.multi.cmds {
			if q.cmd.has(FlagWrite) {
				return true
			}
		}
	}
	return false
}

// runsInMulti reports the commands that run at once inside MULTI instead
// of being queued (processCommand's list: EXEC, DISCARD, MULTI, WATCH, QUIT,
// RESET). Commands flagged no_multi (SHUTDOWN, SAVE...) are refused there.
func runsInMulti(cmd *Command) bool {
	switch cmd.fullName {
	case "exec", "discard", "multi", "watch", "quit", "reset":
		return true
	}
	return false
}

func (s *Server) reject(c *Client, cmd *Command, msg string) {
	s.stats.rejectedCalls++
	if cmd != nil {
		s.cmdStats(cmd).rejected++
	}
	if c.multi != nil {
		c.multi.dirty = true
	}
	if cmd != nil && cmd.fullName == "exec" {
		// execCommandAbort: a rejected EXEC discards the transaction (if
		// any) and says why, without the ERR prefix.
		c.multi = nil
		s.unwatchAll(c, true)
		msg = "EXECABORT Transaction discarded because of: " + strings.TrimPrefix(msg, "ERR ")
	}
	s.countError([]byte("-" + msg))
	c.w.Error(msg)
}

func (s *Server) cmdStats(cmd *Command) *cmdStat {
	if len(s.stats.cmds) != len(allCommands) {
		s.stats.cmds = make([]cmdStat, len(allCommands))
	}
	return &s.stats.cmds[cmd.idx]
}

// exec runs an accepted command and accounts for it.
func (s *Server) exec(c *Client, cmd *Command, args [][]byte) {
	mark := len(c.w.B)
	var start time.Time
	if s.realClock && !c.cmdEnd.IsZero() {
		// call (or the previous command of EXEC) read the clock just now.
		start = c.cmdEnd
	} else {
		start = s.clock.Now()
	}
	dirty := s.ks.Dirty
	woff := s.repl.offset // repl
	s.execDepth++
	cmd.Handler(c, args)
	s.ks.Settle() // evict.go: used_memory follows what the command wrote
	s.execDepth--
	s.afterHandler(c, cmd, args, s.ks.Dirty-dirty)
	if s.repl.offset != woff { // repl: WAIT's target, as call()
		c.woff = s.repl.offset
	}
	var end time.Time
	if s.realClock && !c.batchStart.IsZero() {
		// The monotonic clock alone is half the price of time.Now; the
		// wall time follows from the batch's start.
		end = c.batchStart.Add(time.Since(c.batchStart))
		c.cmdEnd = end
	} else {
		end = s.clock.Now()
	}
	dur := end.Sub(start)
	st := s.cmdStats(cmd)
	st.calls++
	st.usec += dur.Microseconds()
	s.afterCommand(cmd, dur)
	if len(c.w.B) > mark && c.w.B[mark] == '-' {
		st.failed++
		s.stats.failedCalls++
		if !c.errCounted {
			s.countError(c.w.B[mark:])
		}
	}
	c.errCounted = false
	s.stats.commands++
	c.lastCmd = cmd.fullName
	if !cmd.has(FlagSkipSlowlog) {
		s.slowlog.maybeAdd(s, c, args, dur)
	}
	if len(s.monitors) > 0 && !cmd.has(FlagSkipMonitor|FlagAdmin) {
		s.feedMonitors(c, args)
	}
	// CLIENT REPLY OFF/SKIP apply in runBatch (applyReplyMode), to every
	// top-level command, rejected ones too.
}

// countError records an error reply in errorstats (by its code).
func (s *Server) countError(reply []byte) {
	s.stats.errorReplies++
	end := 1
	for end < len(reply) && reply[end] != ' ' && reply[end] != '\r' {
		end++
	}
	code := string(reply[1:end])
	if s.stats.errorCodes == nil {
		s.stats.errorCodes = map[string]int64{}
	}
	if len(s.stats.errorCodes) < 128 || s.stats.errorCodes[code] > 0 {
		s.stats.errorCodes[code]++
	}
}

func allowedInSubscribedContext(cmd *Command) bool {
	switch cmd.fullName {
	case "subscribe", "unsubscribe", "psubscribe", "punsubscribe", "ssubscribe", "sunsubscribe", "ping", "quit", "reset":
		return true
	}
	return false
}
