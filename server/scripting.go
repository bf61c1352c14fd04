package server

import (
	"bufio"
	"bytes"
	"strings"
	"time"

	"github.com/vigil-kv/vigil/internal/acl"
	"github.com/vigil-kv/vigil/internal/redisutil"
	"github.com/vigil-kv/vigil/internal/resp"
	"github.com/vigil-kv/vigil/replication"
	"github.com/vigil-kv/vigil/server/keyspace"
	vlua "github.com/vigil-kv/vigil/server/lua"
)

// Lua scripting (Redis 7.0's eval.c and script.c): EVAL, EVALSHA, their
// _RO forms and SCRIPT, on one Lua engine per server (server/lua, Redis's
// script_lua.c). A script runs under the execution lock inside EVAL's
// handler; redis.call runs commands through exec for the scripting
// client (luaHost.Call), so they join EVAL's execution unit: the script
// propagates its effects (its write commands, wrapped in MULTI/EXEC when
// more than one) and EVAL itself is never propagated, as Redis 7.0's
// effects replication.

// luaHost is a Lua engine and what the server keeps for it: the
// scripting client and the running script's context (scriptRunCtx). It
// is the engine's vlua.Host.
type luaHost struct {
	s    *Server
	e    *vlua.Engine
	fake *Client // the scripting client (server.script_caller's fake)

	// the running script
	caller *Client
	ro     bool
	// allowOOM: the running script has the allow-oom flag
	// (SCRIPT_ALLOW_OOM): its commands skip scriptVerifyOOM.
	allowOOM bool
	// wrote is SCRIPT_WRITE_DIRTY: the running script called a write
	// command, so the server-state checks no longer refuse its writes.
	wrote bool
	// evalFlags are the shebang flags of the EVAL about to run.
	evalFlags vlua.Flags
	busy      *busyScript // the running script's busy state (scripting_busy.go)
	// spareBusy is the last script's busy state, for the next one
	// (recycleBusy).
	spareBusy *busyScript
	// scriptsMem is lctx.lua_scripts_mem: the cached scripts' sha and
	// body strings as Redis allocates them (luaCreateFunction keeps EVAL's or SCRIPT
	// LOAD's argument object; keyspace.ArgObjectSize).
	scriptsMem uint64
	// cmds caches the commands scripts called, by the name they used:
	// a loop alternating several commands misses the fake client's
	// one-entry cache on every call (the command table never changes
	// once the server runs).
	cmds    [8]cachedCmd
	cmdNext uint8
}

type cachedCmd struct {
	name string
	cmd  *Command
}

// lookup is the command a script names (lookupCommand), through cmds.
func (h *luaHost) lookup(name []byte) *Command {
	for i := range h.cmds {
		if e := &h.cmds[i]; e.cmd != nil && e.name == string(name) {
			return e.cmd
		}
	}
	cmd := h.s.lookup(name)
	if cmd != nil {
		h.cmds[h.cmdNext%uint8(len(h.cmds))] = cachedCmd{string(name), cmd}
		h.cmdNext++
	}
	return cmd
}

// The scripting clients' ids: Redis creates EVAL's client (scriptingInit)
// and the function engine's (luaEngineInitEngine) at startup, before any
// connection, so they are 1 and 2 and the first connection is 3 (New
// reserves them); they keep their ids across SCRIPT FLUSH and FUNCTION
// FLUSH, whose clients Redis keeps.
const (
	evalClientID     = 1
	functionClientID = 2
)

// newLuaHost is scriptingInit: a Lua engine and its scripting client,
// whose id is id (evalClientID, functionClientID). Its address is a
// connectionless client's "?:0" (CLIENT INFO from a script).
func (s *Server) newLuaHost(id int64) *luaHost {
	h := &luaHost{s: s}
	h.e = vlua.New(h)
	if s.cfg.LuaEnableDeprecatedAPI {
		h.e.EnableDeprecatedAPI()
	}
	c := &Client{srv: s, id: id, addr: "?:0", laddr: "?:0", created: s.clock.Now(), user: "default", authed: true, inScript: true}
	c.w.Proto = 2
	h.fake = c
	return h
}

func (s *Server) scriptEngine() *luaHost {
	if s.lua == nil {
		s.lua = s.newLuaHost(evalClientID)
	}
	return s.lua
}

// cachedScripts is INFO's number_of_cached_scripts.
func (s *Server) cachedScripts() int {
	if s.lua == nil {
		return 0
	}
	return s.lua.e.NumScripts()
}

// load compiles body into the cache (luaCreateFunction), returning its sha
// or the compile error text.
func (h *luaHost) load(body []byte) (string, string) {
	sha := vlua.SHA1Hex(body)
	if h.e.Script(sha) != nil {
		return sha, ""
	}
	code, flags, shebang := body, vlua.Flags(0), false
	if bytes.HasPrefix(body, []byte("#!")) { // scripting_shebang.go
		f, n, msg := evalShebangFlags(body)
		if msg != "" {
			return "", "ERR " + msg
		}
		code, flags, shebang = body[n:], f, true
	}
	if msg := h.e.Compile(sha, code, flags, shebang); msg != "" {
		return "", msg
	}
	h.scriptsMem += keyspace.SdsNewSize(uint64(len(sha))) + keyspace.ArgObjectSize(uint64(len(body)))
	return sha, ""
}

// scriptsEvalMemory is evalScriptsMemory: the cached scripts' strings, a
// dictEntry and a luaScript (16 bytes) each, and the dict's slots (a
// power of two from 4, as the dict grows when it is full; Redis's
// figure also counts the old table while it rehashes, for the few
// lookups that takes, which this does not).
func (s *Server) scriptsEvalMemory() uint64 {
	if s.lua == nil {
		return 0
	}
	n := uint64(s.lua.e.NumScripts())
	if n == 0 {
		return 0
	}
	slots := uint64(4)
	for slots < n {
		slots *= 2
	}
	return s.lua.scriptsMem + n*(keyspace.DictEntrySize+16) + slots*keyspace.DictEntryPtrSize
}

func init() {
	scr := FlagNoScript | FlagStale | FlagSkipMonitor | FlagNoMandatoryKeys | FlagMovableKeys
	scriptingACL := []string{"slow", "scripting"}
	eval := func(bySha, ro bool) Handler {
		return func(c *Client, a [][]byte) { evalGeneric(c, a, bySha, ro) }
	}
	register(
		// EVAL and EVALSHA may replicate (CMD_MAY_REPLICATE, hidden from
		// COMMAND INFO): CLIENT PAUSE WRITE postpones them, unless a
		// shebang declares no-writes.
		&Command{Name: "eval", Arity: -3, Flags: scr | FlagMayReplicate, ACL: scriptingACL, Handler: eval(false, false)},
		&Command{Name: "evalsha", Arity: -3, Flags: scr | FlagMayReplicate, ACL: scriptingACL, Handler: eval(true, false)},
		&Command{Name: "eval_ro", Arity: -3, Flags: scr | FlagReadonly, ACL: scriptingACL, Handler: eval(false, true)},
		&Command{Name: "evalsha_ro", Arity: -3, Flags: scr | FlagReadonly, ACL: scriptingACL, Handler: eval(true, true)},
		&Command{Name: "script", Arity: -2, ACL: []string{"slow"}, Subs: []*Command{
			{Name: "debug", Arity: 3, Flags: FlagNoScript, ACL: scriptingACL, Handler: cmdScriptDebug},
			{Name: "exists", Arity: -3, Flags: FlagNoScript, ACL: scriptingACL, Handler: cmdScriptExists},
			{Name: "flush", Arity: -2, Flags: FlagNoScript, ACL: scriptingACL, Handler: cmdScriptFlush},
			{Name: "help", Arity: 2, Flags: FlagLoading | FlagStale, ACL: scriptingACL, Handler: cmdScriptHelp},
			{Name: "kill", Arity: 2, Flags: FlagNoScript | FlagAllowBusy, ACL: scriptingACL, Handler: cmdScriptKill},
			{Name: "load", Arity: 3, Flags: FlagNoScript | FlagStale, ACL: scriptingACL, Handler: cmdScriptLoad},
		}},
	)
}

// evalGeneric is evalGenericCommand.
func evalGeneric(c *Client, args [][]byte, bySha, ro bool) {
	s := c.srv
	if c.ldbMode != ldbOff {
		if bySha {
			// evalShaCommand: a sha of the wrong length is NOSCRIPT first.
			if len(args[1]) != 40 {
				c.w.Error(ErrNoScript)
				return
			}
			c.w.Error("ERR Please use EVAL instead of EVALSHA for debugging")
			return
		}
		evalDebug(c, args, ro)
		return
	}
	// evalCommand feeds the monitors itself (EVAL is CMD_SKIP_MONITOR),
	// first, so that the script's commands follow it.
	if len(s.monitors) > 0 {
		s.feedMonitors(c, args)
	}
	numkeys, ok := parseInt(args[2])
	if !ok {
		c.w.Error(ErrNotInteger)
		return
	}
	if numkeys > int64(len(args)-3) {
		c.w.Error("ERR Number of keys can't be greater than number of args")
		return
	}
	if numkeys < 0 {
		c.w.Error("ERR Number of keys can't be negative")
		return
	}
	e := s.scriptEngine()
	var sc *vlua.Script
	if bySha {
		sc = e.e.LookupSha(args[1])
		if sc == nil {
			c.w.Error(ErrNoScript)
			return
		}
	} else {
		sha, msg := e.load(args[1])
		if msg != "" {
			c.w.Error(msg)
			return
		}
		sc = e.e.Script(sha)
	}
	// scriptPrepareForRun: a script with a shebang is checked against its
	// flags as a function is; in eval's compatibility mode (no shebang) a
	// stale replica refuses the script, whatever it calls.
	flags, shebang := e.e.ShebangFlags(sc.SHA())
	if shebang {
		if msg := s.scriptDenied(c, flags, ro); msg != "" {
			c.w.Error(msg)
			return
		}
	} else if l := s.repl.link; l != nil && !s.cfg.ReplicaServeStaleData && l.hs.State != replication.StateConnected {
		c.w.Error("MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.")
		return
	}
	e.evalFlags = flags
	ro = ro || flags&vlua.NoWrites != 0
	e.e.SetArgs(args[3:3+numkeys], args[3+numkeys:])
	e.run(c, sc, nil, ro, nil, nil, nil)
}

// run runs the script sc, or the function fi (sc nil) with keys and
// fargs, under the busy-script machinery (luaCallFunction +
// scriptPrepareForRun's context); argv is FCALL's whole command, for
// FUNCTION STATS. The script's effects propagate, the calling command
// itself does not.
func (h *luaHost) run(c *Client, sc *vlua.Script, fi *vlua.Function, ro bool, keys, fargs, argv [][]byte) {
	s, e := c.srv, h.e
	h.caller, h.ro, h.wrote = c, ro, false
	h.allowOOM = fi != nil && fi.Flags&vlua.AllowOOM != 0 || fi == nil && h.evalFlags&vlua.AllowOOM != 0
	h.fake.db = c.db
	h.fake.aclUser, h.fake.user = c.aclUser, c.user
	e.ResetArenas(len(s.pending) != 0)
	if fi != nil {
		e.Prepare(fi.Name)
	} else {
		e.Prepare(sc.SHA())
	}
	sha := ""
	if fi == nil {
		sha = sc.SHA()
	}
	b := s.startBusyFn(h, fi, sha, argv)
	if e.Debugging() {
		// A debugging session's hook is the debugger's (luaLdbLineHook
		// replaces luaMaskCountHook): the script is never busy for the
		// other clients, who wait.
		s.busy.Store(nil)
	}
	h.busy = b
	pendingMark := len(s.pending)
	var err error
	if fi != nil {
		err = e.RunFunction(fi, keys, fargs)
	} else {
		err = e.RunScript(sc)
	}
	s.endBusy(h, b)
	if b.shutdown.Load() {
		clear(s.pending[pendingMark:])
		s.pending = s.pending[:pendingMark]
	}
	h.caller, h.busy = nil, nil
	if e.WriteResult(&c.w, err, b.killed.Load()) {
		c.errCounted = true
	}
	h.recycleBusy(b)
	// Effects replication: the commands the script ran propagate, EVAL
	// does not (scriptCall's propagation; EVAL is never in the stream).
	c.preventPropagation()
}

// Call is scriptCall (vlua.Host): the checks Redis makes for a command
// run from a script, then the command through exec for the scripting
// client, its reply decoded.
func (h *luaHost) Call(args [][]byte, proto int, repl vlua.Repl) (resp.Value, string, string, bool) {
	s := h.s
	if b := h.busy; b != nil { // not lent to serveBusy while the command runs
		b.lendMu.Lock()
		defer b.lendMu.Unlock()
	}
	// An error the script's checks produce is counted in errorstats at
	// once; like a command's error reply (counted by exec), the table
	// carries ignore_error_stats_update so the script's reply is not
	// counted again (luaPushErrorBuff).
	// An error of these checks is counted in errorstats at once; the
	// engine's error table carries ignore_error_stats_update so the
	// script's reply is not counted again (luaPushErrorBuff).
	// A refused known command counts in its rejected_calls
	// (incrCommandStatsOnError with ERROR_COMMAND_REJECTED).
	var refused *Command
	// Only the unit's pending propagation holds on to argv past the
	// call (alsoPropagate's contract): the engine reuses the memory of an
	// argv nothing propagated.
	mark := len(s.pending)
	fail := func(msg string) (resp.Value, string, string, bool) {
		s.countError([]byte("-" + msg))
		if refused != nil {
			s.cmdStats(refused).rejected++
		}
		return resp.Value{}, "", msg, len(s.pending) > mark
	}
	cmd := h.lookup(args[0])
	if cmd == nil {
		return fail("ERR Unknown Redis command called from script")
	}
	// scriptCall's lookup (netshell's Resolve): an unknown subcommand is
	// an unknown command, a wrong count a wrong number of args.
	cmd, msg := cmd.Resolve(args)
	if cmd == nil {
		return fail("ERR Unknown Redis command called from script")
	}
	refused = cmd
	if msg != "" {
		return fail("ERR Wrong number of args calling Redis command from script")
	}
	if cmd.Has(FlagNoScript) && !s.dbg.disableDenyScripts { // DEBUG SET-DISABLE-DENY-SCRIPTS
		return fail("ERR This Redis command is not allowed from script")
	}
	// scriptCall's checks, in its order.
	// scriptVerifyAllowStale: a function flagged allow-stale runs on a
	// stale replica, the commands it calls only if they are flagged stale.
	if l := s.repl.link; l != nil && !s.cfg.ReplicaServeStaleData && l.hs.State != replication.StateConnected && !cmd.Has(FlagStale) {
		return fail("ERR Can not execute the command on a stale replica")
	}
	c := h.fake
	if res, idx := s.aclCheck(c, cmd, args); res != acl.OK {
		// scriptVerifyACL: logged with the context "lua".
		s.aclLogDenied(h.caller, res, "lua", cmd, args, idx, cmd.FullName())
		switch res {
		case acl.DeniedKey:
			return fail("ERR The user executing the script can't access at least one of the keys mentioned in the command arguments")
		case acl.DeniedChannel:
			return fail("ERR The user executing the script can't publish to the channel mentioned in the command")
		}
		return fail("ERR The user executing the script can't run this command or subcommand")
	}
	if msg := h.verifyWriteAllowed(cmd); msg != "" {
		return fail(msg)
	}
	if msg := s.scriptVerifyOOM(h.caller, cmd, h.wrote); msg != "" && !h.allowOOM { // evict.go
		return fail(msg)
	}
	if cmd.Has(FlagWrite) {
		h.wrote = true
	}
	c.w.Reset()
	c.w.Proto = proto
	if s.realClock && !h.caller.batchStart.IsZero() {
		// exec times the command from cmdEnd on the monotonic clock
		// alone, as it does a batch's commands (one time.Now less).
		c.batchStart = h.caller.batchStart
		c.cmdEnd = c.batchStart.Add(time.Since(c.batchStart))
	}
	dirty := s.ks.Dirty
	s.exec(c, cmd, args)
	if s.ks.Dirty != dirty && h.busy != nil {
		h.busy.wrote.Store(true) // SCRIPT KILL is refused from now on
	}
	if t := Target(repl); t != TargetAll {
		// redis.set_repl: what the command propagated goes only to the
		// script's targets (none: dropped).
		kept := s.pending[:mark]
		for _, op := range s.pending[mark:] {
			if op.Target &= t; op.Target != 0 {
				kept = append(kept, op)
			}
		}
		clear(s.pending[len(kept):])
		s.pending = kept
	}
	if len(c.w.B) > 0 && c.w.B[0] == '>' {
		// A push (DEBUG PROTOCOL push under redis.setresp(3)): Redis's
		// reply parser has no callback for it and hands the script
		// nothing, which reads as nil.
		c.w.Reset()
		return resp.Value{Kind: resp.KindNull}, "", "", len(s.pending) > mark
	}
	v, ok := scalarReply(c.w.B)
	if !ok && vlua.FlatArray(c.w.B, proto) {
		// the engine converts it from a copy of its text (taken while
		// the state is not lent: c.w is the scripting client's)
		raw := string(c.w.B)
		c.w.Reset()
		return resp.Value{}, raw, "", len(s.pending) > mark
	}
	if !ok {
		var err error
		v, err = resp.ReadValue(bufio.NewReader(bytes.NewReader(c.w.B)), resp.DefaultReplyLimits)
		if err != nil {
			c.w.Reset()
			return fail("ERR reply not readable")
		}
	}
	c.w.Reset()
	return v, "", "", len(s.pending) > mark
}

// verifyWriteAllowed is scriptVerifyWriteCommandAllow: a read-only
// script counts may-replicate commands (PUBLISH...) as writes; until the
// script wrote, a write is refused on a read-only replica (unless the
// script came from the master or the AOF), after a failed BGSAVE or AOF
// write (-MISCONF; not for the master's scripts, which a replica never
// refuses: see processCommand) and without enough good replicas. A
// fenced master (Vigil: fence.go) refuses every write.
func (h *luaHost) verifyWriteAllowed(cmd *Command) string {
	s := h.s
	if cmd.Has(FlagWrite|FlagMayReplicate) && h.ro {
		return "ERR Write commands are not allowed from read-only scripts."
	}
	if !cmd.Has(FlagWrite) {
		return ""
	}
	obey := h.caller != nil && h.caller.mustObey()
	// fence.go: a fenced master refuses a script's writes too, whether
	// or not it wrote already.
	if s.repl.link == nil && s.fenceActive() && !obey {
		if msg := s.fenceDenies(); msg != "" {
			return msg
		}
	}
	if h.wrote {
		return ""
	}
	if s.repl.link != nil && s.cfg.ReplicaReadOnly && !obey {
		return ErrReadOnly
	}
	if (s.rdb.bgsaveErr || s.aof.mgr != nil) && !obey {
		if msg := s.diskErrorDenies(); msg != "" {
			return msg
		}
	}
	if s.repl.link == nil && s.cfg.MinReplicasToWrite > 0 && s.cfg.MinReplicasMaxLag > 0 {
		if !replication.WritesAllowed(false, s.cfg.MinReplicasToWrite, s.cfg.MinReplicasMaxLag, s.goodReplicas()) {
			return "NOREPLICAS Not enough good replicas to write."
		}
	}
	return ""
}

// ACLCheckCmd is redis.acl_check_cmd (vlua.Host): lookupCommand of argv
// (the subcommand of a container called with one; no arity check), then
// ACLCheckAllUserCommandPerm for the script's user.
func (h *luaHost) ACLCheckCmd(args [][]byte) (allowed, known bool) {
	s := h.s
	cmd := s.lookup(args[0])
	if cmd != nil && cmd.IsContainer() && len(args) > 1 {
		cmd = cmd.Sub(args[1])
	}
	if cmd == nil {
		return false, false
	}
	res, _ := s.aclCheck(h.fake, cmd, args)
	return res == acl.OK, true
}

// CountError counts an error the engine gives redis.call (vlua.Host).
func (h *luaHost) CountError(msg string) {
	if b := h.busy; b != nil {
		b.lendMu.Lock()
		defer b.lendMu.Unlock()
	}
	h.s.countError([]byte("-" + msg))
}

// Log is redis.log (vlua.Host).
func (h *luaHost) Log(level int, text string) {
	switch level {
	case 0:
		h.s.log.Debug().Msg(text)
	case 1, 2:
		h.s.log.Info().Msg(text)
	default:
		h.s.log.Warn().Msg(text)
	}
}

// scalarReply decodes a command's reply that is one integer, bulk string,
// null bulk, simple string or error, as resp.ReadValue would without its
// 4 KB reader; ok is false for anything else (aggregates, RESP3 types),
// which goes to resp.ReadValue.
func scalarReply(b []byte) (v resp.Value, ok bool) {
	if len(b) < 3 {
		return v, false
	}
	eol := bytes.IndexByte(b, '\n')
	if eol < 2 || b[eol-1] != '\r' {
		return v, false
	}
	line := b[1 : eol-1]
	switch k := resp.Kind(b[0]); k {
	case resp.KindSimple, resp.KindError:
		if k == resp.KindSimple && string(line) == "OK" {
			return resp.Value{Kind: k, Str: "OK"}, true // the common status, without a copy
		}
		return resp.Value{Kind: k, Str: string(line)}, true
	case resp.KindInt:
		n, ok := redisutil.String2ll(line)
		return resp.Value{Kind: k, Int: n}, ok
	case resp.KindBulk:
		n, ok := redisutil.String2ll(line)
		if !ok || n < -1 || n > resp.DefaultReplyLimits.MaxBulk {
			return v, false
		}
		if n == -1 {
			return resp.Value{Kind: resp.KindNull}, true
		}
		body := b[eol+1:]
		if int64(len(body)) < n+2 || body[n] != '\r' || body[n+1] != '\n' {
			return v, false
		}
		return resp.Value{Kind: k, Str: string(body[:n])}, true
	}
	return v, false
}

func cmdScriptLoad(c *Client, args [][]byte) {
	sha, msg := c.srv.scriptEngine().load(args[2])
	if msg != "" {
		c.w.Error(msg)
		return
	}
	c.w.BulkString(sha)
}

func cmdScriptExists(c *Client, args [][]byte) {
	e := c.srv.scriptEngine()
	c.w.ArrayLen(len(args) - 2)
	for _, a := range args[2:] {
		if e.e.Script(strings.ToLower(string(a))) != nil {
			c.w.Int(1)
		} else {
			c.w.Int(0)
		}
	}
}

func cmdScriptFlush(c *Client, args [][]byte) {
	if len(args) > 3 {
		c.w.Error("ERR SCRIPT FLUSH only support SYNC|ASYNC option")
		return
	}
	if len(args) == 3 {
		switch strings.ToLower(string(args[2])) {
		case "sync", "async":
		default:
			c.w.Error("ERR SCRIPT FLUSH only support SYNC|ASYNC option")
			return
		}
	}
	if old := c.srv.lua; old != nil && c.srv.flushAsync(args[2:]) && old.e.NumScripts() > keyspace.LazyfreeThreshold {
		c.srv.stats.lazyfreed += uint64(old.e.NumScripts()) // freeLuaScriptsAsync
	}
	if old := c.srv.lua; old != nil {
		// A new Lua state (scriptingReset); the PRNG is rand.c's global
		// state, which survives it.
		old.e.Close()
		c.srv.lua = c.srv.newLuaHost(evalClientID)
		c.srv.lua.e.KeepRandom(old.e)
	}
	c.w.OK()
}

// cmdScriptDebug is SCRIPT DEBUG: SYNC makes the client's next EVAL a
// debugging session (scripting_ldb.go), YES a forked one, run by a child
// process on a copy of the dataset (scripting_ldbfork.go).
func cmdScriptDebug(c *Client, args [][]byte) {
	if c.multi != nil {
		c.w.Error("ERR SCRIPT DEBUG must be called outside MULTI")
		return
	}
	// clientHasPendingReplies: replies not written yet (the commands
	// before it in the pipeline).
	if len(c.w.B) > 0 || c.srv.asyncBytes(c) > 0 {
		c.w.Error("ERR SCRIPT DEBUG must be called outside a pipeline")
		return
	}
	switch strings.ToLower(string(args[2])) {
	case "no":
		c.ldbMode = ldbOff
		c.w.OK()
	case "sync":
		c.ldbMode = ldbSync
		c.w.OK()
	case "yes":
		c.ldbMode = ldbFork
		c.w.OK()
	default:
		c.w.Error("ERR Use SCRIPT DEBUG YES/SYNC/NO")
	}
}

func cmdScriptKill(c *Client, args [][]byte) {
	if b := c.busyRun; b != nil {
		busyKill(c, b, true)
		return
	}
	c.w.Error("NOTBUSY No scripts in execution right now.")
}

var scriptHelp = []string{
	"SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"DEBUG (YES|SYNC|NO)",
	"    Set the debug mode for subsequent scripts executed.",
	"EXISTS <sha1> [<sha1> ...]",
	"    Return information about the existence of the scripts in the script cache.",
	"FLUSH [ASYNC|SYNC]",
	"    Flush the Lua scripts cache. Very dangerous on replicas.",
	"    When called without the optional mode argument, the behavior is determined by the",
	"    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
	"    * ASYNC: Asynchronously flush the scripts cache.",
	"    * SYNC: Synchronously flush the scripts cache.",
	"KILL",
	"    Kill the currently executing Lua script.",
	"LOAD <script>",
	"    Load a script into the scripts cache without executing it.",
	"HELP",
	"    Prints this help.",
}

func cmdScriptHelp(c *Client, args [][]byte) {
	c.w.ArrayLen(len(scriptHelp))
	for _, l := range scriptHelp {
		c.w.Simple(l)
	}
}
