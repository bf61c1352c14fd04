package server

import (
	"errors"
	"strings"
	"time"

	"github.com/vigil-kv/vigil/internal/resp"
	"github.com/vigil-kv/vigil/replication"
	"github.com/vigil-kv/vigil/server/keyspace"
	vlua "github.com/vigil-kv/vigil/server/lua"
	"github.com/vigil-kv/vigil/server/rdb"
)

// FUNCTION and FCALL (functions.c). The engine is functions.go's.

func init() {
	scr := FlagNoScript | FlagStale | FlagSkipMonitor | FlagNoMandatoryKeys | FlagMovableKeys
	scripting := []string{"slow", "scripting"}
	writing := []string{"write", "slow", "scripting"}
	register(
		&Command{Name: "fcall", Arity: -3, Flags: scr | FlagMayReplicate, ACL: scripting, Handler: func(c *Client, a [][]byte) { fcallGeneric(c, a, false) }},
		&Command{Name: "fcall_ro", Arity: -3, Flags: scr | FlagReadonly, ACL: scripting, Handler: func(c *Client, a [][]byte) { fcallGeneric(c, a, true) }},
		&Command{Name: "function", Arity: -2, ACL: []string{"slow"}, Subs: []*Command{
			{Name: "delete", Arity: 3, Flags: FlagWrite | FlagNoScript, ACL: writing, Handler: cmdFunctionDelete},
			{Name: "dump", Arity: 2, Flags: FlagNoScript, ACL: scripting, Handler: cmdFunctionDump},
			{Name: "flush", Arity: -2, Flags: FlagWrite | FlagNoScript, ACL: writing, Handler: cmdFunctionFlush},
			{Name: "help", Arity: 2, Flags: FlagLoading | FlagStale, ACL: scripting, Handler: helpHandler("FUNCTION", functionHelp)},
			{Name: "kill", Arity: 2, Flags: FlagNoScript | FlagAllowBusy, ACL: scripting, Handler: cmdFunctionKill},
			{Name: "list", Arity: -2, Flags: FlagNoScript, ACL: scripting, Handler: cmdFunctionList},
			{Name: "load", Arity: -3, Flags: FlagWrite | FlagDenyOOM | FlagNoScript, ACL: writing, Handler: cmdFunctionLoad},
			{Name: "restore", Arity: -3, Flags: FlagWrite | FlagDenyOOM | FlagNoScript, ACL: writing, Handler: cmdFunctionRestore},
			{Name: "stats", Arity: 2, Flags: FlagNoScript | FlagAllowBusy, ACL: scripting, Handler: cmdFunctionStats},
		}},
	)
}

// mustObey is mustObeyClient: the master's link or the AOF's replay.
func (c *Client) mustObey() bool { return c.aofClient || c.replRole.Load() == kindMaster }

// cmdFunctionLoad is FUNCTION LOAD [REPLACE] <code>.
func cmdFunctionLoad(c *Client, args [][]byte) {
	replace := false
	i := 2
	for ; i < len(args)-1; i++ {
		if !eqFold(args[i], "replace") {
			c.w.Error("ERR Unknown option given: " + string(args[i]))
			return
		}
		replace = true
	}
	if i >= len(args) {
		c.w.Error("ERR Function code is missing")
		return
	}
	timeout := fnLoadTimeout
	if c.mustObey() {
		timeout = 0
	}
	s := c.srv
	fe := s.functions()
	name, msg := fe.create(string(args[i]), replace, fe.cur, timeout)
	if msg != "" {
		c.w.Error("ERR " + msg)
		return
	}
	s.ks.Dirty++
	c.w.BulkString(name)
}

// cmdFunctionDelete is FUNCTION DELETE <library>.
func cmdFunctionDelete(c *Client, args [][]byte) {
	s := c.srv
	fe := s.functions()
	l := fe.cur.libs[string(args[2])]
	if l == nil {
		c.w.Error("ERR Library not found")
		return
	}
	fe.cur.unlink(l)
	s.ks.Dirty++
	c.w.OK()
}

// cmdFunctionFlush is FUNCTION FLUSH [ASYNC|SYNC].
func cmdFunctionFlush(c *Client, args [][]byte) {
	if len(args) > 3 {
		c.w.Error(errSubcommandSyntax(args[1], "FUNCTION"))
		return
	}
	if len(args) == 3 && !eqFold(args[2], "sync") && !eqFold(args[2], "async") {
		c.w.Error("ERR FUNCTION FLUSH only supports SYNC|ASYNC option")
		return
	}
	s := c.srv
	// functionsLibCtxClearCurrent(async) -> freeFunctionsAsync
	if n := len(s.functions().cur.funcs); s.flushAsync(args[2:]) && n > keyspace.LazyfreeThreshold {
		s.stats.lazyfreed += uint64(n)
	}
	s.functions().cur = newFnCtx()
	s.ks.Dirty++
	c.w.OK()
}

// cmdFunctionKill answers FUNCTION KILL when no function is running (a
// running one is answered by serveBusy, scripting_busy.go).
func cmdFunctionKill(c *Client, args [][]byte) {
	if b := c.busyRun; b != nil {
		busyKill(c, b, false)
		return
	}
	c.w.Error("NOTBUSY No scripts in execution right now.")
}

// cmdFunctionStats is FUNCTION STATS with no script running (serveBusy
// answers it during one).
func cmdFunctionStats(c *Client, args [][]byte) {
	if b := c.busyRun; b != nil {
		busyFunctionStats(&c.w, b, c.srv.clock.Now())
		return
	}
	funcs, libs := c.srv.functionCounts()
	writeFunctionStats(&c.w, nil, libs, funcs, time.Time{})
}

// busyFunctionStats is FUNCTION STATS while a script is busy: EVAL's busy
// error during an EVAL, the running function otherwise.
func busyFunctionStats(w *resp.Writer, b *busyScript, now time.Time) {
	if b == nil {
		w.Error(errBusy)
		return
	}
	if b.fn == "" {
		w.Error(errBusy)
		return
	}
	writeFunctionStats(w, b, b.nlib, b.nfuncs, now)
}

func writeFunctionStats(w *resp.Writer, b *busyScript, libs, funcs int, now time.Time) {
	w.MapLen(2)
	w.BulkString("running_script")
	if b == nil {
		w.Null()
	} else {
		w.MapLen(3)
		w.BulkString("name")
		w.BulkString(b.fn)
		w.BulkString("command")
		w.ArrayLen(len(b.argv))
		for _, a := range b.argv {
			w.Bulk(a)
		}
		w.BulkString("duration_ms")
		w.Int(now.Sub(b.start).Milliseconds())
	}
	w.BulkString("engines")
	w.MapLen(1)
	w.BulkString("LUA")
	w.MapLen(2)
	w.BulkString("libraries_count")
	w.Int(int64(libs))
	w.BulkString("functions_count")
	w.Int(int64(funcs))
}

// cmdFunctionList is FUNCTION LIST [LIBRARYNAME pattern] [WITHCODE].
func cmdFunctionList(c *Client, args [][]byte) {
	withCode := false
	var pattern []byte
	hasPattern := false
	for i := 2; i < len(args); i++ {
		if !withCode && eqFold(args[i], "withcode") {
			withCode = true
			continue
		}
		if !hasPattern && eqFold(args[i], "libraryname") {
			if i >= len(args)-1 {
				c.w.Error("ERR library name argument was not given")
				return
			}
			i++
			pattern, hasPattern = args[i], true
			continue
		}
		c.w.Error("ERR Unknown argument " + string(args[i]))
		return
	}
	var libs []*fnLib
	for _, l := range c.srv.functions().cur.sortedLibs() {
		if hasPattern && !keyspace.GlobMatchString(pattern, l.name, true) {
			continue
		}
		libs = append(libs, l)
	}
	w := &c.w
	w.ArrayLen(len(libs))
	for _, l := range libs {
		if withCode {
			w.MapLen(4)
		} else {
			w.MapLen(3)
		}
		w.BulkString("library_name")
		w.BulkString(l.name)
		w.BulkString("engine")
		w.BulkString("LUA")
		w.BulkString("functions")
		w.ArrayLen(len(l.funcs))
		for _, n := range sortedFnNames(l) {
			f := l.funcs[n]
			w.MapLen(3)
			w.BulkString("name")
			w.BulkString(f.Name)
			w.BulkString("description")
			if f.HasDesc {
				w.BulkString(f.Desc)
			} else {
				w.Null()
			}
			w.BulkString("flags")
			var names []string
			for _, fl := range vlua.FlagNames {
				if f.Flags&fl.F != 0 {
					names = append(names, fl.Name)
				}
			}
			w.SetLen(len(names))
			for _, n := range names {
				w.Simple(n)
			}
		}
		if withCode {
			w.BulkString("library_code")
			w.BulkString(l.code)
		}
	}
}

// cmdFunctionDump is FUNCTION DUMP.
func cmdFunctionDump(c *Client, args [][]byte) {
	s := c.srv
	c.w.Bulk(rdb.FunctionsPayload(s.functionCodes(), s.cfg.RDBCompression))
}

// cmdFunctionRestore is FUNCTION RESTORE <payload> [FLUSH|APPEND|REPLACE].
func cmdFunctionRestore(c *Client, args [][]byte) {
	if len(args) > 4 {
		c.w.Error(errSubcommandSyntax(args[1], "FUNCTION"))
		return
	}
	policy := "append"
	if len(args) == 4 {
		switch {
		case eqFold(args[3], "append"), eqFold(args[3], "replace"), eqFold(args[3], "flush"):
			policy = strings.ToLower(string(args[3]))
		default:
			c.w.Error("ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.")
			return
		}
	}
	s := c.srv
	fe := s.functions()
	x := newFnCtx()
	err := rdb.ParseFunctionsPayload(args[2], func(code string) error {
		if _, msg := fe.create(code, false, x, 0); msg != "" {
			return errors.New(msg)
		}
		return nil
	})
	if err != nil {
		c.w.Error("ERR " + err.Error())
		return
	}
	if policy == "flush" {
		fe.cur = x
	} else if msg := fe.cur.join(x, policy == "replace"); msg != "" {
		c.w.Error("ERR " + msg)
		return
	}
	s.ks.Dirty++
	c.w.OK()
}

// join is libraryJoin: src's libraries into x, replacing those of the same
// name with replace; on a collision nothing changes.
func (x *fnCtx) join(src *fnCtx, replace bool) string {
	var old []*fnLib
	restore := func() {
		for _, l := range old {
			x.link(l)
		}
	}
	for _, l := range src.sortedLibs() {
		if o := x.libs[l.name]; o != nil {
			if !replace {
				restore()
				return "Library " + l.name + " already exists"
			}
			x.unlink(o)
			old = append(old, o)
		}
	}
	for _, l := range src.sortedLibs() {
		for _, n := range sortedFnNames(l) {
			if x.funcs[fnKey(n)] != nil {
				restore()
				return "Function " + n + " already exists"
			}
		}
	}
	for _, l := range src.sortedLibs() {
		x.link(l)
	}
	return ""
}

// fcallGeneric is fcallCommandGeneric.
func fcallGeneric(c *Client, args [][]byte, ro bool) {
	s := c.srv
	// fcallCommandGeneric feeds the monitors first (FCALL is
	// CMD_SKIP_MONITOR): the function's commands follow it.
	if len(s.monitors) > 0 {
		s.feedMonitors(c, args)
	}
	fe := s.functions()
	f := fe.cur.funcs[fnKey(string(args[1]))]
	if f == nil {
		c.w.Error("ERR Function not found")
		return
	}
	numkeys, ok := parseInt(args[2])
	if !ok {
		c.w.Error("ERR Bad number of keys provided")
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
	if msg := s.fcallDenied(c, f, ro); msg != "" {
		c.w.Error(msg)
		return
	}
	fe.h.run(c, nil, f, ro || f.Flags&vlua.NoWrites != 0, args[3:3+numkeys], args[3+numkeys:], args)
}

// fcallDenied is scriptPrepareForRun's checks of a function's flags
// against the server's state (no cluster mode here: no-cluster never
// refuses).
func (s *Server) fcallDenied(c *Client, f *vlua.Function, ro bool) string {
	return s.scriptDenied(c, f.Flags, ro)
}

// scriptDenied is scriptPrepareForRun's checks of a function's or a
// shebang script's flags.
func (s *Server) scriptDenied(c *Client, flags vlua.Flags, ro bool) string {
	obey := c.mustObey()
	l := s.repl.link
	if l != nil && !s.cfg.ReplicaServeStaleData && l.hs.State != replication.StateConnected && flags&vlua.AllowStale == 0 {
		return "MASTERDOWN Link with MASTER is down, replica-serve-stale-data is set to 'no' and 'allow-stale' flag is not set on the script."
	}
	if flags&vlua.NoWrites == 0 {
		if l != nil && s.cfg.ReplicaReadOnly && !obey {
			return "READONLY Can not run script with write flag on readonly replica"
		}
		if !obey && (s.rdb.bgsaveErr || s.aof.mgr != nil) {
			if msg := s.diskErrorDenies(); msg != "" {
				if msg == errBgsaveErr {
					return "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. Writable scripts are blocked. Use 'no-writes' flag for read only scripts."
				}
				return msg
			}
		}
		if ro {
			return "ERR Can not execute a script with write flag using *_ro command."
		}
		if l == nil && (s.cfg.MinReplicasToWrite > 0 || s.fenceActive()) {
			if msg := s.writesDenied(c, fcallWriteCmd); msg != "" {
				return msg
			}
		}
	}
	// The OOM check, after the write checks: no-writes implies allow-oom.
	// processCommand has refused a plain FCALL already; this is for one
	// that got past it (queued in MULTI before memory ran out).
	if s.cfg.Maxmemory > 0 && s.evict.preOOM && !obey && flags&(vlua.AllowOOM|vlua.NoWrites) == 0 {
		return "OOM allow-oom flag is not set on the script, can not run it when used memory > 'maxmemory'"
	}
	return ""
}

// fcallWriteCmd stands for a write command in writesDenied's check.
var fcallWriteCmd = &Command{Name: "fcall", Flags: FlagWrite}

var functionHelp = []string{
	"LOAD [REPLACE] <FUNCTION CODE>",
	"    Create a new library with the given library name and code.",
	"DELETE <LIBRARY NAME>",
	"    Delete the given library.",
	"LIST [LIBRARYNAME PATTERN] [WITHCODE]",
	"    Return general information on all the libraries:",
	"    * Library name",
	"    * The engine used to run the Library",
	"    * Library description",
	"    * Functions list",
	"    * Library code (if WITHCODE is given)",
	"    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
	"STATS",
	"    Return information about the current function running:",
	"    * Function name",
	"    * Command used to run the function",
	"    * Duration in MS that the function is running",
	"    If no function is running, return nil",
	"    In addition, returns a list of available engines.",
	"KILL",
	"    Kill the current running function.",
	"FLUSH [ASYNC|SYNC]",
	"    Delete all the libraries.",
	"    When called without the optional mode argument, the behavior is determined by the",
	"    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
	"    * ASYNC: Asynchronously flush the libraries.",
	"    * SYNC: Synchronously flush the libraries.",
	"DUMP",
	"    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
	"RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
	"    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
	"    control how to handle existing libraries (default APPEND):",
	"    * FLUSH: delete all existing libraries.",
	"    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
	"    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
	"      libraries with the new libraries (notice that even on this option there is a chance of failure",
	"      in case of functions name collision with another library).",
}
