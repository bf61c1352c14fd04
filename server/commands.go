package server

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/vigil-kv/vigil/internal/netshell"
)

// Flag is a command flag, named as in Redis 7.0's command table: the one
// Flag set of both binaries (netshell).
type Flag = netshell.Flag

// Command flags (netshell's). Their Redis names (Flag.Names) are what
// COMMAND INFO prints, except may_replicate, which Redis 7.0 hides there.
const (
	FlagWrite           = netshell.FlagWrite
	FlagReadonly        = netshell.FlagReadonly
	FlagDenyOOM         = netshell.FlagDenyOOM
	FlagAdmin           = netshell.FlagAdmin
	FlagPubSub          = netshell.FlagPubSub
	FlagNoScript        = netshell.FlagNoScript
	FlagBlocking        = netshell.FlagBlocking
	FlagLoading         = netshell.FlagLoading
	FlagStale           = netshell.FlagStale
	FlagSkipMonitor     = netshell.FlagSkipMonitor
	FlagSkipSlowlog     = netshell.FlagSkipSlowlog
	FlagFast            = netshell.FlagFast
	FlagNoAuth          = netshell.FlagNoAuth
	FlagMayReplicate    = netshell.FlagMayReplicate
	FlagNoMandatoryKeys = netshell.FlagNoMandatoryKeys
	FlagNoMulti         = netshell.FlagNoMulti
	FlagAllowBusy       = netshell.FlagAllowBusy
	FlagNoAsyncLoading  = netshell.FlagNoAsyncLoading
	FlagProtected       = netshell.FlagProtected   // CMD_PROTECTED (DEBUG): gated by enable-debug-command, not shown by COMMAND
	FlagMovableKeys     = netshell.FlagMovableKeys // CMD_MOVABLE_KEYS: keys found by key specs other than a range (SINTERCARD's numkeys)
	FlagAsking          = netshell.FlagAsking      // CMD_ASKING (RESTORE-ASKING)
	// FlagTouchesArbitraryKeys: SCAN, RANDOMKEY (propagate.go).
	FlagTouchesArbitraryKeys = netshell.FlagTouchesArbitraryKeys
)

// Handler runs one command for c, with the server lock held, and writes
// exactly one reply into c.w.
type Handler func(c *Client, args [][]byte)

// Command is one entry of the command table (server.c's redisCommand),
// the table type both binaries share (netshell.Command: Name, Arity, Flags,
// FirstKey/LastKey/Step, ACL, Handler, Subs; FullName, Has, Resolve).
type Command = netshell.Command[Handler]

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

// indexedTable is the indexed command table (netshell.NewTable), built by
// initTable.
var indexedTable *netshell.Table[Handler]

// initTable builds allCommands once per process: every cmd_*.go init has
// registered by then, and servers started concurrently (tests) share it.
func initTable() {
	tableOnce.Do(func() {
		indexedTable = netshell.NewTable(commandTable)
		allCommands = indexedTable.All
	})
}

// buildCommandTable returns the name -> command map after rename-command
// (a rename to "" disables the command).
func buildCommandTable(renames map[string]string) (map[string]*Command, error) {
	initTable()
	return indexedTable.Renamed(renames)
}

// lookup finds a command by name case-insensitively without allocating.
func (s *Server) lookup(name []byte) *Command { return netshell.Lookup(s.cmds, name) }

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

// cmdStat is INFO commandstats for one command.
type cmdStat struct {
	calls, usec, rejected, failed int64
}

// call is processCommand + call(): lookup, arity, auth and context checks,
// execution, statistics, slowlog and MONITOR feed.
func (s *Server) call(c *Client, args [][]byte) {
	s.setCmdNow(c)
	c.resolved = nil
	cmd := c.lookupCached(args[0])
	if cmd == nil {
		s.stats.rejectedCalls++
		if c.multi != nil {
			c.multi.dirty = true
		}
		msg := errUnknownCommand(args)
		s.countError([]byte("-" + msg))
		s.afterErrorReply(c, nil, msg)
		c.w.Error(msg)
		return
	}
	// Subcommand and arity (netshell): a container with its own handler
	// (COMMAND) runs it when called without a subcommand; an unknown
	// subcommand is not charged to the container's commandstats (Redis's
	// lookup finds no command at all).
	cmd, msg := cmd.Resolve(args)
	c.resolved = cmd // tracking.go: resetClient's prevcmd (nil: unknown subcommand)
	if msg != "" {
		s.reject(c, cmd, msg)
		return
	}
	if cmd.Has(FlagProtected) {
		if ok, msg := c.protectedAllowed(cmd); !ok { // cmd_cluster.go
			s.reject(c, cmd, msg)
			return
		}
	}
	if !c.authed && !cmd.Has(FlagNoAuth) && !s.aclDefaultOpen() {
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
	if s.cfg.Maxmemory > 0 && c.busyRun == nil && s.oomRejects(c, chk) {
		s.reject(c, cmd, ErrOOM)
		return
	}
	if s.tracking.active() { // tracking.go: tracking-table-max-keys
		s.trackingLimitUsedSlots()
	}
	// persist: writeCommandsDeniedByDiskError (persist_rdb.go): -MISCONF
	// for writes and PING after a failed BGSAVE or AOF write.
	if (s.rdb.bgsaveErr || s.aof.mgr != nil) && (cmd.FullName() == "ping" || isWriteCommand(c, chk)) {
		if msg := s.diskErrorDenies(); msg != "" {
			if c.kind() != kindMaster && !c.aofClient {
				s.reject(c, cmd, msg)
				return
			}
			// processCommand's obey_client branch: a replica never
			// refuses its master's stream (that would diverge silently);
			// Redis 7.0 panics (7.2 added repl-ignore-disk-write-error).
			if !c.aofClient && cmd.FullName() != "ping" {
				s.log.Error().Str("error", msg).Msg("Replica was unable to write command to disk.")
				replicaDiskWriteExit(1)
			}
		}
	}
	// repl: -READONLY, -MASTERDOWN, -NOREPLICAS (repl_master.go).
	if s.repl.link != nil || s.cfg.MinReplicasToWrite > 0 || s.fenceActive() {
		if msg := s.writesDenied(c, chk); msg != "" {
			s.reject(c, cmd, msg)
			return
		}
	}
	if c.w.Proto == 2 && c.kind() == kindPubSub && !allowedInSubscribedContext(cmd) {
		s.reject(c, cmd, fmt.Sprintf(ErrPubSubContext, cmd.FullName()))
		return
	}
	// processCommand refuses a replica's commands that read, write or may
	// replicate: a client made a replica by SYNC/PSYNC, and a monitor
	// (flagged CLIENT_SLAVE in Redis).
	if (c.monitor || c.replRole.Load() == kindReplica) && chk.Has(FlagReadonly|FlagWrite|FlagMayReplicate) {
		s.reject(c, cmd, ErrReplicaKeyspace)
		return
	}
	// persist: -LOADING while the startup load yields (persist_rdb.go);
	// the AOF's own replay is the load.
	// repl: during a swapdb async load (repl_replica.go) the old data is
	// served; only the commands flagged no-async-loading are refused.
	async := s.asyncLoading()
	if s.rdb.loading && !async && !cmd.Has(FlagLoading) && !c.aofClient {
		s.reject(c, cmd, errLoadingMsg)
		return
	}
	if async && cmd.Has(FlagNoAsyncLoading) {
		s.reject(c, cmd, errLoadingMsg)
		return
	}
	// processCommand's busy check: while a script is busy (serveBusy),
	// only the allow-busy commands run.
	if b := c.busyRun; b != nil && !cmd.Has(FlagAllowBusy) {
		s.reject(c, cmd, b.busyErr())
		return
	}
	if c.multi != nil && !runsInMulti(cmd) {
		if cmd.Has(FlagNoMulti) {
			s.reject(c, cmd, "ERR Command not allowed inside a transaction")
			return
		}
		// Queued with the flags the checks saw: EXEC checks the queued
		// commands' flags (mstate.cmd_flags), a function's included.
		s.queueMulti(c, chk, args)
		return
	}
	if pc := s.pausedCmd(c, chk); c.busyRun == nil && s.pause.blocks(c, pc, s.now) {
		for s.pause.blocks(c, pc, s.now) {
			s.ordHold(c, 1) // parked: publishers do not wait for its input (order.go)
			s.pause.wait(s)
			s.ordHold(c, -1)
			// CLIENT KILL while parked, or a shutdown ending the pause
			// (shutdown_wait.go): never runs.
			if c.killed.Load() || s.closing.Load() {
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
	s.freezeExpiry()
	s.exec(c, cmd, args)
	// Blocking (blocking.go): serve the clients blocked on the keys this
	// command made ready, after it (after EXEC as a whole, never between
	// its commands), as processCommand -> handleClientsBlockedOnKeys.
	if len(s.blocking.ready) > 0 && c.busyRun == nil {
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
	if cmd.Has(FlagWrite) {
		return true
	}
	if cmd.FullName() == "exec" && c.multi != nil {
		for _, q := range c.multi.cmds {
			if q.cmd.Has(FlagWrite) {
				return true
			}
		}
	}
	return false
}

// isDenyStaleCommand is processCommand's is_denystale_command: a command
// not flagged stale, or an EXEC whose queue holds one (mstate's
// cmd_inv_flags), so that a transaction of reads queued before the link
// to the master went down is refused with -EXECABORT ... MASTERDOWN.
func isDenyStaleCommand(c *Client, cmd *Command) bool {
	if !cmd.Has(FlagStale) {
		return true
	}
	if cmd.FullName() == "exec" && c.multi != nil {
		for _, q := range c.multi.cmds {
			if !q.cmd.Has(FlagStale) {
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
	switch cmd.FullName() {
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
	if cmd != nil && cmd.FullName() == "exec" {
		// execCommandAbort: a rejected EXEC discards the transaction (if
		// any) and says why, without the ERR prefix.
		c.multi = nil
		s.unwatchAll(c, true)
		msg = "EXECABORT Transaction discarded because of: " + strings.TrimPrefix(msg, "ERR ")
	}
	s.countError([]byte("-" + msg))
	// addReplyErrorFormat: the reply (_addReplyToBufferOrList, which drops
	// a replica that gets one), then afterErrorReply's log.
	c.w.Error(msg)
	if c.replRole.Load() == kindReplica {
		s.replicaGeneratedReply(c, cmd)
	}
	s.afterErrorReply(c, cmd, msg)
}

// replicaGeneratedReply is _addReplyToBufferOrList's check (networking.c):
// a command a replica sent on its link produced a reply, which would land
// in the replication stream; the replica is dropped, logged as
// logInvalidUseAndFreeClientAsync does. Lock held.
func (s *Server) replicaGeneratedReply(c *Client, cmd *Command) {
	if c.killed.Load() {
		return
	}
	name := "<unknown>"
	if cmd != nil {
		name = cmd.FullName()
	}
	info := s.appendClientInfo(nil, c, nil, nil, "")
	s.log.Warn().Msgf("Replica generated a reply to command '%s', disconnecting it: %s", name, info)
	if rp := s.replicaOf(c); rp != nil {
		s.dropReplica(rp, "")
		return
	}
	c.kill()
}

func (s *Server) cmdStats(cmd *Command) *cmdStat {
	if len(s.stats.cmds) != len(allCommands) {
		s.stats.cmds = make([]cmdStat, len(allCommands))
	}
	return &s.stats.cmds[cmd.Index()]
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
	tracking := s.tracking.active()
	if tracking {
		s.trackingBeforeExec(c, cmd, args) // tracking.go
	}
	s.execDepth++
	forced := s.ks.ForceExpire
	if s.ks.Replica && !s.expiryFrozen && !s.cfg.ReplicaReadOnly && cmd.Has(FlagWrite) &&
		s.isReplica() && c.replRole.Load() != kindMaster {
		// expireIfNeeded's force_delete_expired on a writable replica
		// (lookupKeyWrite: LOOKUP_WRITE and not a read-only replica).
		s.ks.ForceExpire = true
	}
	cmd.Handler(c, args)
	s.ks.ForceExpire = forced
	// The memory sums (keyspace's "Memory accounting") are settled at the
	// batch's end (runBatchPart), not per command: whatever reads them
	// (used_memory, the maxmemory check before each command) settles
	// first, and a key written by every command of a pipelined batch
	// (LPUSH, INCR on one key) is measured once instead of once each.
	s.execDepth--
	if tracking && cmd.Has(FlagReadonly) {
		s.trackingAfterRead(c, cmd, args) // tracking.go: trackingRememberKeys
	}
	if s.execDepth == 0 && tracking {
		s.tracking.callerCmd, s.tracking.callerArgs = nil, nil
	}
	if s.execDepth == 0 && len(s.tracking.pending) != 0 {
		s.trackingHandlePending() // after the top-level command's reply
	}
	if cmd.Has(FlagAdmin) { // ACL SETUSER, ACL LOAD, CONFIG SET... (serveConn's admission)
		s.syncAdmission()
	}
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
		if k := c.replRole.Load(); k == kindMaster || k == kindReplica || c.aofClient {
			msg := string(c.w.B[mark+1:])
			if i := strings.IndexByte(msg, '\r'); i >= 0 {
				msg = msg[:i]
			}
			s.afterErrorReply(c, cmd, msg)
		}
	}
	c.errCounted = false
	s.stats.commands++
	c.lastCmd = cmd.FullName()
	if len(c.w.B) > mark && c.replRole.Load() == kindReplica {
		s.replicaGeneratedReply(c, cmd)
	}
	if bs := c.blocked; bs != nil && !bs.syncAck {
		// call() leaves a blocked command out of the slowlog: it is
		// logged when served or unblocked by CLIENT UNBLOCK
		// (updateStatsOnUnblock, blocking.go), with this duration.
		bs.dur = dur
		if !cmd.Has(FlagSkipSlowlog) {
			bs.args = copyArgs(args)
		}
	} else if !cmd.Has(FlagSkipSlowlog) {
		s.slowlog.maybeAdd(s, c, args, dur)
	}
	if len(s.monitors) > 0 && !cmd.Has(FlagSkipMonitor|FlagAdmin) {
		s.feedMonitors(c, args)
	}
	// CLIENT REPLY OFF/SKIP apply in runBatch (applyReplyMode), to every
	// top-level command, rejected ones too.
}

// afterErrorReply is the logging half of Redis's afterErrorReply
// (networking.c, translated): an error that a master link, a replica or the
// AOF loader's client gets is logged as "== CRITICAL ==" and counted in
// unexpected_error_replies; propagation-error-behavior panic(-on-replicas)
// stops the server as serverPanic does.
func (s *Server) afterErrorReply(c *Client, cmd *Command, msg string) {
	k := c.replRole.Load()
	var from, to string
	switch {
	case c.aofClient:
		from, to = "server", "AOF-loading-client"
	case k == kindMaster:
		from, to = "replica", "master"
	case k == kindReplica:
		from, to = "master", "replica"
	default:
		return
	}
	if len(msg) > 4096 {
		msg = msg[:4096]
	}
	name := "<unknown>"
	if cmd != nil {
		name = cmd.FullName()
	}
	s.log.Warn().Msgf("== CRITICAL == This %s is sending an error to its %s: '%s' after processing the command '%s'", from, to, msg, name)
	s.stats.unexpectedErrorReplies++
	behavior := s.cfg.PropagationErrorBehavior
	if (k == kindMaster && s.cfg.ReplicaReadOnly && behavior != "ignore" && behavior != "") || (c.aofClient && behavior == "panic") {
		panic(fmt.Sprintf("This %s panicked sending an error to its %s after processing the command '%s'", from, to, name))
	}
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

func allowedInSubscribedContext(cmd *Command) bool { return cmd.AllowedSubscribed() }

// freezeExpiry is the pause check of Redis 7.0's expireIfNeeded
// (checkClientPauseTimeoutAndReturnIfPaused): while a CLIENT PAUSE (WRITE
// or ALL) or a FAILOVER pauses clients, an expired key reads as missing
// but is not deleted, as on a replica; the commands that run then (reads)
// leave the dataset as it was.
func (s *Server) freezeExpiry() {
	if p := s.pause.active(s.now); p || s.expiryFrozen {
		s.expiryFrozen = p
		s.ks.Replica = p || s.isReplica()
	}
}
