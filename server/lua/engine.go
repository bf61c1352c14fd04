package lua

import (
	"bufio"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"unsafe"

	lua "github.com/yuin/gopher-lua"

	"github.com/vigil-kv/vigil/internal/resp"
)

// The engine (Redis 7.0's script_lua.c and the Lua half of eval.c and
// function_lua.c): one gopher-lua state (Lua 5.1, as Redis's) with the
// libraries Redis loads, the redis table, the protected globals, the
// script cache, and the conversions between RESP and Lua. The server is
// its Host: redis.call runs a command through Host.Call, so the command
// table, ACL, propagation and the busy-script replies stay in package
// server.

// Host is what the engine needs from the server.
type Host interface {
	// Call runs argv (argv[0] the command name) for the running script:
	// Redis's checks for a command called from a script, then the
	// command, its reply in protocol proto returned as a value. The
	// commands' propagation goes only to the targets repl
	// (redis.set_repl). fail is the error the script sees instead when
	// the command was refused or its reply unreadable; the host has
	// counted it in errorstats. kept reports that the host holds on to
	// argv until the script's unit ends (the command propagated); when it
	// does not, the engine reuses argv's memory for the next call. A
	// reply FlatArray accepts may come as raw, its RESP text, instead of
	// as reply ("": none).
	Call(argv [][]byte, proto int, repl Repl) (reply resp.Value, raw string, fail string, kept bool)
	// CountError counts in errorstats an error the engine gives redis.call
	// itself (a bad argument): msg is the error text, "ERR ...".
	CountError(msg string)
	// Log is redis.log: level 0 (debug) to 3 (warning).
	Log(level int, msg string)
	// ACLCheckCmd is redis.acl_check_cmd: whether the script's user may
	// run argv; known is false when no command (or subcommand) has that
	// name.
	ACLCheckCmd(argv [][]byte) (allowed, known bool)
}

// Repl is redis.set_repl's targets: server's Target values (propagate.go).
type Repl uint8

const (
	ReplAOF     Repl = 1
	ReplReplica Repl = 2
	ReplAll          = ReplAOF | ReplReplica
)

// Engine is a Lua state and its script cache (Redis's lctx); not safe for
// concurrent use: the server calls it under its execution lock.
type Engine struct {
	deprecated map[string]lua.LValue // setfenv, getfenv, newproxy
	host       Host
	L          *lua.LState
	// errHandler rewrites gopher-lua's runtime errors in Lua 5.1's words
	// (errwording.go); scripts, functions and pcall/xpcall run under it.
	errHandler *lua.LFunction
	guardFn    *lua.LFunction // guard (overflow.go), the scripts are called through
	env        *lua.LTable    // the protected globals the scripts see
	globals    *lua.LTable    // the real globals table
	// real maps each read-only table the scripts see (the library
	// proxies, the env, the visible metatables) to the table it stands
	// for; hidden is the metatable getmetatable reports for it (nil for
	// a library proxy). See protectLibraries.
	real map[*lua.LTable]*lua.LTable
	// forwarders are the wrappers that call the library function they
	// stand for (forward): an argument error names the function as the
	// script called it (errwording.go).
	forwarders map[*lua.LFunction]bool
	hidden     map[*lua.LTable]lua.LValue
	scripts    map[string]*Script
	// lastScript is the script LookupSha found last: EVALSHA in a
	// pipeline usually repeats one sha (Compile clears it).
	lastScript *Script
	// ldb is the Lua debugger's session while one runs (ldb.go).
	ldb *ldbState
	// shebang holds the flags of the cached scripts that start with a
	// "#!lua" shebang; a script absent from it runs in eval's
	// compatibility mode.
	shebang map[string]Flags
	rand    uint64 // redisLrand48's state

	// the running script (scriptRunCtx)
	sha     string
	resp    int
	repl    Repl
	errLine int // the line of the latest error raised by redis.call or error()
	// errSource is the chunk (gopher-lua's name) errLine is in; chunkSrc
	// the whole source names of loaded chunks (chunk.go).
	errSource string
	chunkSrc  map[string]string
	// errRaised is what error() raised last: its position, not the one in
	// its message (error's level), is the one the handler cites.
	errRaised lua.LValue
	// cancel cancels the context L keeps across scripts while
	// busy-reply-threshold is on (nil: L has none); coroutines tells
	// that the running script made threads, whose contexts are children
	// of L's (busy.go).
	cancel     context.CancelFunc
	coroutines bool
	chunk      string // the code's chunk name, "" for user_script (EnableFunctions sets user_function)
	// protected counts the pcall and xpcall calls running: outside them
	// an error in load's reader meets the script's error handler.
	protected int
	// loadHandler is that handler for load's reader (chunk.go).
	loadHandler *lua.LFunction
	// The tables of the last script's KEYS and ARGV (setArgTable).
	keysT, argvT *lua.LTable
	// argArena and byteArena hold the argv of the commands the running
	// script calls (redisCall), append-only while anything may refer to
	// them, so that redis.call allocates nothing for its arguments: see
	// ResetArenas.
	argArena  [][]byte
	byteArena []byte

	// functions (functions.go): the load-time API and the library whose
	// code runs now (nil: none).
	loadAPI *lua.LTable
	loading map[string]*Function

	// The Lua 5.1 heap estimate (memory.go): the state with no script,
	// the strings it counted, and what the cached scripts add.
	memBase          int64
	memStrings       map[string]struct{}
	memSeen          map[any]struct{}
	memBaseCount     int
	memScripts       int64
	memScriptStrings int
}

// Script is a script of the cache with its sha (the map's key, kept so
// that EVALSHA finds it without making a string).
type Script struct {
	fn  *lua.LFunction
	sha string
	// guarded: the script is called through guard (overflow.go), which
	// costs a call; only code that defines functions or loads chunks can
	// recurse (mayRecurse).
	guarded bool
}

// SHA is the script's sha1 in lowercase hex.
func (sc *Script) SHA() string { return sc.sha }

// maxKeptArena is the largest arena ResetArenas keeps for the next script.
const maxKeptArena = 64 << 10

// ResetArenas lets a script about to run reuse the arenas of the scripts
// before it. The arguments a command receives are valid only for the
// batch it runs in (they alias the read buffer: whatever a handler keeps
// it copies), and the only reference to them that outlives the command is
// its propagation until the unit ends; the propagators serialize at once.
// So the arenas are reused only when no unit is open: unitOpen (a script
// inside MULTI leaves its commands pending until EXEC) makes them only
// grow, on fresh arrays once full.
func (e *Engine) ResetArenas(unitOpen bool) {
	if unitOpen {
		e.argArena, e.byteArena = e.argArena[len(e.argArena):], e.byteArena[len(e.byteArena):]
		return
	}
	if cap(e.byteArena) > maxKeptArena {
		e.byteArena = nil
	}
	if cap(e.argArena) > maxKeptArena/8 {
		e.argArena = nil
	}
	// No stale slices kept alive: only [0, len) was ever written since
	// the last reset (the MULTI path above starts past it, on entries
	// never written), so clearing the length is enough, and a script
	// pays for what the previous one used, not for the arena's capacity.
	clear(e.argArena)
	e.argArena, e.byteArena = e.argArena[:0], e.byteArena[:0]
}

// New is scriptingInit: a Lua state with the libraries Redis loads, the
// redis table, the protected globals.
// EnableDeprecatedAPI puts setfenv, getfenv and newproxy back in the
// globals (lua-enable-deprecated-api yes: luaNewIndexAllowList lets
// lua_builtins_deprecated in).
func (e *Engine) EnableDeprecatedAPI() {
	for name, v := range e.deprecated {
		e.globals.RawSetString(name, v)
	}
}

func New(host Host) *Engine {
	e := &Engine{host: host, scripts: map[string]*Script{}, shebang: map[string]Flags{}}
	e.rand = 0x1234ABCD330E // rand.c's initial X: Redis never reseeds it for scripts
	L := lua.NewState(stateOptions())
	L.CallInfos = lua.NewCallInfos()
	for _, lib := range []struct {
		name string
		fn   lua.LGFunction
	}{
		{lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable},
		{lua.StringLibName, lua.OpenString}, {lua.MathLibName, lua.OpenMath},
		{lua.CoroutineLibName, lua.OpenCoroutine},
	} {
		L.Push(L.NewFunction(lib.fn))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	e.L = L
	g := L.G.Global
	e.globals = g
	// lua_builtins_deprecated: kept for EnableDeprecatedAPI.
	e.deprecated = map[string]lua.LValue{}
	for _, name := range []string{"newproxy", "getfenv", "setfenv"} {
		e.deprecated[name] = g.RawGetString(name)
	}
	// Redis removes these (luaRemoveUnsupportedFunctions / not loaded).
	for _, name := range []string{"loadfile", "dofile", "print", "module", "require", "newproxy", "getfenv", "setfenv", "_printregs", "channel", "_GOPHER_LUA_VERSION"} {
		g.RawSetString(name, lua.LNil)
	}
	e.L = L
	e.patchStdlib(L, g)
	g.RawSetString("rawset", L.NewFunction(func(L *lua.LState) int {
		L.CheckTable(1)
		L.CheckAny(2)
		L.CheckAny(3)
		if k := L.Get(2); k == lua.LNil || k.Type() == lua.LTNumber && math.IsNaN(float64(k.(lua.LNumber))) {
			e.noteCaller(L) // luaG_runerror in a C function: no position
			msg := "table index is nil"
			if k != lua.LNil {
				msg = "table index is NaN"
			}
			L.Error(lua.LString(msg), 0)
		}
		t := L.Get(1).(*lua.LTable)
		t.RawSet(L.Get(2), L.Get(3))
		L.SetTop(1) // luaB_rawset returns the table
		return 1
	}))
	g.RawSetString("next", L.NewFunction(func(L *lua.LState) int {
		if t, ok := L.Get(1).(*lua.LTable); ok && L.Get(2) != lua.LNil && !tableHasKey(t, L.Get(2)) {
			e.noteCaller(L) // luaG_runerror in a C function: no position
			L.Error(lua.LString("invalid key to 'next'"), 0)
		}
		return baseNext(L)
	}))
	g.RawSetString("error", L.NewFunction(e.luaError))
	e.errHandler = L.NewFunction(e.wordError)
	L.G.ThreadError = e.threadError
	e.guardFn = L.NewFunction(guard)
	g.RawSetString("pcall", L.NewFunction(e.luaPCall))
	g.RawSetString("xpcall", L.NewFunction(e.luaXPCall))
	tostring := g.RawGetString("tostring")
	g.RawSetString("tostring", L.NewFunction(func(L *lua.LState) int {
		L.CheckAny(1) // luaB_tostring: "bad argument #1 to 'tostring' (value expected)"
		if n, ok := L.Get(1).(lua.LNumber); ok && L.GetTop() == 1 {
			L.Push(lua.LString(FormatNumber(float64(n))))
			return 1
		}
		if u, ok := L.Get(1).(*lua.LUserData); ok && u.Value == cjsonNullKey && u.Metatable == lua.LNil {
			// lua-cjson's null is a lightuserdata NULL: "%p" of it in glibc
			L.Push(lua.LString("userdata: (nil)"))
			return 1
		}
		L.Push(tostring)
		L.Push(L.Get(1))
		L.CCalls-- // one function of Lua 5.1's: its __tostring counts once
		L.Call(1, 1)
		L.CCalls++
		return 1
	}))
	// A coroutine's thread gets a child of L's context, which L keeps
	// across scripts (busy.go): Disarm drops it after a script that made
	// threads, so the children do not pile up.
	co := g.RawGetString("coroutine").(*lua.LTable)
	for _, name := range []string{"create", "wrap"} {
		orig := co.RawGetString(name).(*lua.LFunction).GFunction
		co.RawSetString(name, L.NewFunction(func(L *lua.LState) int {
			e.coroutines = true
			return orig(L)
		}))
	}
	math := g.RawGetString("math").(*lua.LTable)
	math.RawSetString("random", L.NewFunction(e.mathRandom))
	math.RawSetString("randomseed", L.NewFunction(e.mathRandomSeed))
	e.openRedis(g)
	OpenLibs(L, g, func(t *lua.LTable) *lua.LTable {
		if r, ok := e.real[t]; ok {
			return r
		}
		return t
	})

	// The scripts' environment: reads of missing globals and every write
	// fail, as lua_enablereadonlytable and the __index guard of 7.0. The
	// proxy's __index is the globals table itself, so that a global read
	// (redis, KEYS) is a table-to-table lookup inside the VM with no Go
	// call; a miss there reaches the globals' own guard, which raises.
	e.env = L.NewTable()
	mt := L.NewTable()
	mt.RawSetString("__index", g)
	mt.RawSetString("__newindex", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError("Attempt to modify a readonly table")
		return 0
	}))
	mt.RawSetString("__metatable", lua.LFalse)
	L.SetMetatable(e.env, mt)
	e.env.SetFastIndex(g) // a global's lookup skips reading mt's __index
	gm := L.NewTable()
	gm.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError("Script attempted to access nonexistent global variable '%s'", L.Get(2).String())
		return 0
	}))
	L.SetMetatable(g, gm)
	g.RawSetString("_G", e.env)
	e.protectLibraries(gm)
	e.measureBase()
	return e
}

// Close closes the Lua state (SCRIPT FLUSH's scriptingReset).
func (e *Engine) Close() { e.L.Close() }

// KeepRandom gives e old's PRNG state: rand.c's global state survives
// SCRIPT FLUSH's new Lua state.
func (e *Engine) KeepRandom(old *Engine) { e.rand = old.rand }

// NumScripts is the number of cached scripts (INFO's
// number_of_cached_scripts).
func (e *Engine) NumScripts() int { return len(e.scripts) }

// HasShebangScripts reports whether a cached script has a shebang.
func (e *Engine) HasShebangScripts() bool { return len(e.shebang) != 0 }

// ShebangFlags are the flags of the cached script sha when it has a
// shebang (ok false: none, or not cached).
func (e *Engine) ShebangFlags(sha string) (f Flags, ok bool) {
	f, ok = e.shebang[sha]
	return f, ok
}

// Script is the cached script sha (lowercase), nil if absent.
func (e *Engine) Script(sha string) *Script { return e.scripts[sha] }

// SHA1Hex is the sha1 of b in lowercase hex, a script's name in the cache.
func SHA1Hex(b []byte) string {
	h := sha1.Sum(b)
	return hex.EncodeToString(h[:])
}

// Compile compiles code, the body of the script sha without its shebang
// line (from its newline, so line numbers stay the user's), into the
// cache (luaCreateFunction); shebang tells the body had one, with flags.
// It returns the compile error text, "" on success.
func (e *Engine) Compile(sha string, code []byte, flags Flags, shebang bool) string {
	fn, msg := loadLua(e.L, string(code), "user_script")
	if msg != "" {
		return "ERR Error compiling script (new function): " + msg
	}
	fn.Env = e.env
	// The chunk is a vararg function that never reads "..."; Lua 5.1's
	// compatibility "arg" table gopher-lua would build on every call is
	// no local of a main chunk (luaY_parser marks it VARARG_ISVARARG
	// only), so nothing can see it: skip it.
	fn.Proto.IsVarArg &^= lua.VarArgNeedsArg
	e.scripts[sha] = &Script{fn: fn, sha: sha, guarded: mayRecurse(fn.Proto)}
	mem, strs := e.protoMemory(fn, "f_"+sha, true)
	e.memScripts += mem
	e.memScriptStrings += strs
	e.lastScript = nil
	if shebang {
		e.shebang[sha] = flags
	}
	return ""
}

// LookupSha finds a cached script by its sha in any case (nil if absent);
// a lowercase sha costs no allocation.
func (e *Engine) LookupSha(b []byte) *Script {
	if sc := e.lastScript; sc != nil && string(b) == sc.sha {
		return sc
	}
	for _, ch := range b {
		if 'A' <= ch && ch <= 'Z' {
			return e.scripts[strings.ToLower(string(b))]
		}
	}
	sc := e.scripts[string(b)]
	if sc != nil {
		e.lastScript = sc
	}
	return sc
}

// SetArgs sets the globals KEYS and ARGV of the next EVAL.
func (e *Engine) SetArgs(keys, argv [][]byte) {
	e.setArgTable(&e.keysT, "KEYS", keys)
	e.setArgTable(&e.argvT, "ARGV", argv)
}

// Prepare starts a run (scriptPrepareForRun's context): name is what
// errors cite (the sha, or a function's name); the script starts in RESP2
// with its effects going everywhere.
func (e *Engine) Prepare(name string) {
	e.sha, e.resp, e.repl, e.errLine, e.errSource, e.errRaised = name, 2, ReplAll, 0, "", nil
	e.protected = 0
}

// RunScript calls the cached script sc (luaCallFunction), leaving its
// result for WriteResult.
func (e *Engine) RunScript(sc *Script) error {
	if !sc.guarded {
		e.L.Push(sc.fn)
		return e.L.PCall(0, 1, e.errHandler)
	}
	e.L.Push(e.guardFn)
	e.L.Push(sc.fn)
	err := e.L.PCall(1, 1, e.errHandler)
	if err != nil {
		shrinkStack(e.L)
	}
	return err
}

// RunFunction calls the function f with keys and args as its two
// parameters (the KEYS and ARGV tables of a function), leaving its result
// for WriteResult.
func (e *Engine) RunFunction(f *Function, keys, args [][]byte) error {
	L := e.L
	kt := L.NewTable() // luaCreateArray's lua_newtable
	for i, k := range keys {
		kt.RawSetInt(i+1, lua.LString(k))
	}
	at := L.NewTable()
	for i, a := range args {
		at.RawSetInt(i+1, lua.LString(a))
	}
	L.Push(e.guardFn)
	L.Push(f.fn)
	L.Push(kt)
	L.Push(at)
	err := L.PCall(3, 1, e.errHandler)
	if err != nil {
		shrinkStack(L)
	}
	return err
}

// WriteResult writes the outcome of the run to w in the caller's
// protocol: the script's result converted (luaReplyToRedisReply), or its
// error err formatted as Redis 7.0's error handler does; killed tells
// that SCRIPT KILL or FUNCTION KILL stopped it. counted reports an error
// reply already counted in errorstats (ignore_error_stats_update).
func (e *Engine) WriteResult(w *resp.Writer, err error, killed bool) (counted bool) {
	L := e.L
	if err != nil {
		var obj lua.LValue = lua.LString(err.Error())
		if ae, ok := err.(*lua.ApiError); ok {
			obj = ae.Object
		}
		if killed {
			// The context's error carries the line it stopped at.
			if str, ok := obj.(lua.LString); ok {
				if line := lineOf(string(str)); line > 0 {
					e.errLine = line
				}
			}
			obj = plainErrTable(L, ErrKilled)
		}
		counted = e.replyError(w, obj)
	} else {
		ret := L.Get(-1)
		L.Pop(1)
		counted = luaToResp(w, ret, e.resp, 0)
	}
	L.SetTop(0)
	return counted
}

// ErrKilled is the error of a script stopped by SCRIPT KILL or FUNCTION
// KILL.
const ErrKilled = "ERR Script killed by user with SCRIPT KILL..."

// redisCall is luaRedisGenericCommand: redis.call's arguments (strings
// and numbers) into the engine's arenas, the command through the host,
// its reply converted to Lua; raise is redis.call, not redis.pcall.
func (e *Engine) redisCall(L *lua.LState, raise bool) int {
	// luaArgsToRedisArgv's errors are plain error tables (luaPushError),
	// counted in errorstats only if they become the script's reply.
	argFail := func(msg string) int {
		if raise {
			e.raisePlain(L, msg)
		}
		L.Push(plainErrTable(L, msg))
		return 1
	}
	n := L.GetTop()
	if n == 0 {
		return argFail("ERR Please specify at least one argument for this redis lib call")
	}
	// The argv lives in the engine's arenas (ResetArenas): propagation
	// keeps it until the script's unit ends.
	if cap(e.argArena)-len(e.argArena) < n {
		// a new block rather than append's copy of the old one, which
		// the argv handed out so far keep alive as long as they need it
		e.argArena = make([][]byte, 0, max(2*cap(e.argArena), n, 64))
	}
	base, prevBytes := len(e.argArena), e.byteArena
	for i := 1; i <= n; i++ {
		a, ok := e.luaArg(L.Get(i))
		if !ok {
			e.rewindArenas(base, prevBytes)
			return argFail("ERR Lua redis lib command arguments must be strings or integers")
		}
		e.argArena = append(e.argArena, a)
	}
	args := e.argArena[base:len(e.argArena):len(e.argArena)]
	if e.ldb != nil {
		e.ldbLogCall(args)
	}
	v, raw, msg, kept := e.host.Call(args, e.resp, e.repl)
	if !kept {
		// Nothing holds this argv: the next call reuses its memory, so a
		// long loop of reads (or of writes nobody propagates) runs in
		// the same few blocks instead of growing the arenas by its whole
		// argument volume until the script ends.
		e.rewindArenas(base, prevBytes)
	}
	if raw != "" {
		// an array of strings and integers, converted from its text
		if e.ldb != nil {
			if rv, err := resp.ReadValue(bufio.NewReader(strings.NewReader(raw)), resp.DefaultReplyLimits); err == nil {
				e.ldbLogReply(rv)
			}
		}
		L.Push(FlatArrayToLua(L, raw, e.resp))
		return 1
	}
	if e.ldb != nil {
		if msg != "" {
			e.ldbLogError(ldbErrBuffer(msg))
		} else {
			if v.IsError() {
				e.ldbLogError("-" + v.Str)
			}
			e.ldbLogReply(v)
		}
	}
	if msg != "" {
		if raise {
			e.raiseTable(L, msg)
		}
		L.Push(errTable(L, msg))
		return 1
	}
	if v.IsError() && raise {
		e.raiseTable(L, v.Str)
	}
	L.Push(respToLua(L, v, e.resp))
	return 1
}

// protectLibraries is the rest of luaSetTableProtectionRecursively:
// Redis 7.0 makes every table reachable from the globals read-only (the
// libraries, the string metatable), which gopher-lua cannot flag. Each
// table-valued global becomes an empty proxy whose metatable's __index is
// the real table (a table, so that a lookup like redis.call stays inside
// the VM) and whose __newindex raises; nested tables are proxied the same
// way. The raw functions (rawset, rawget, next, pairs, ipairs,
// getmetatable, setmetatable) and the table library see through the
// proxies and refuse to write into them, with the position-less error
// Redis's C functions raise. gm is the globals' metatable: getmetatable(_G)
// shows a read-only table holding its __index guard, as Redis's
// luaSetErrorMetatable.
func (e *Engine) protectLibraries(gm *lua.LTable) {
	L, g := e.L, e.globals
	e.real = map[*lua.LTable]*lua.LTable{}
	e.hidden = map[*lua.LTable]lua.LValue{}
	newindex := L.NewFunction(func(L *lua.LState) int {
		L.RaiseError("Attempt to modify a readonly table")
		return 0
	})
	proxies := map[*lua.LTable]*lua.LTable{}
	var proxy func(t *lua.LTable) *lua.LTable
	proxy = func(t *lua.LTable) *lua.LTable {
		if p, ok := proxies[t]; ok {
			return p
		}
		p := L.NewTable()
		proxies[t] = p
		var nested []lua.LValue
		t.ForEach(func(k, v lua.LValue) {
			if n, ok := v.(*lua.LTable); ok && e.real[n] == nil {
				nested = append(nested, k)
			}
		})
		for _, k := range nested {
			t.RawSet(k, proxy(t.RawGet(k).(*lua.LTable)))
		}
		mt := L.NewTable()
		mt.RawSetString("__index", t)
		mt.RawSetString("__newindex", newindex)
		p.Metatable = mt
		// mt is out of the scripts' reach (getmetatable shows hidden):
		// redis.call and string.format go from the proxy to t directly
		p.SetFastIndex(t)
		e.real[p] = t
		e.hidden[p] = lua.LNil
		return p
	}
	// gopher-lua's string table is its own metatable (string.__index is
	// string); Redis's string table holds only the functions. The string
	// metatable becomes a table of its own whose raw __index is the real
	// string table (gopher-lua reads it raw); getmetatable('') shows,
	// through __metatable, a read-only table whose __index is the string
	// proxy.
	st := g.RawGetString("string").(*lua.LTable)
	st.RawSetString("__index", lua.LNil)
	smt := L.NewTable()
	smt.RawSetString("__index", st)
	L.SetMetatable(lua.LString(""), smt)
	var libs []lua.LValue
	g.ForEach(func(k, v lua.LValue) {
		if t, ok := v.(*lua.LTable); ok && t != e.env {
			libs = append(libs, k)
		}
	})
	for _, k := range libs {
		g.RawSet(k, proxy(g.RawGet(k).(*lua.LTable)))
	}
	// The env (_G): its metatable as the scripts see it is a read-only
	// table with the globals' __index guard.
	e.real[e.env] = g
	shownG := L.NewTable()
	shownG.RawSetString("__index", gm.RawGetString("__index"))
	e.hidden[e.env] = proxy(shownG)
	shownS := L.NewTable()
	shownS.RawSetString("__index", proxy(st))
	smt.RawSetString("__metatable", proxy(shownS))

	refuse := func(L *lua.LState) {
		e.noteCaller(L)
		L.Error(lua.LString("Attempt to modify a readonly table"), 0)
	}
	protected := func(v lua.LValue) bool {
		t, ok := v.(*lua.LTable)
		if !ok {
			return false
		}
		_, ok = e.real[t]
		return ok || t == g || proxies[t] != nil
	}
	// see calls orig with its first argument seen through a proxy.
	see := func(orig lua.LValue) *lua.LFunction {
		return e.forwarder(func(L *lua.LState) int {
			var first lua.LValue
			if t, ok := L.Get(1).(*lua.LTable); ok {
				if r, ok := e.real[t]; ok {
					first = r
				}
			}
			return forward(L, orig, first)
		})
	}
	// write refuses orig on a protected first argument.
	write := func(orig lua.LValue) *lua.LFunction {
		return e.forwarder(func(L *lua.LState) int {
			if protected(L.Get(1)) {
				refuse(L)
			}
			return forward(L, orig, nil)
		})
	}
	next := see(g.RawGetString("next"))
	g.RawSetString("next", next)
	for _, name := range []string{"rawget", "unpack"} {
		g.RawSetString(name, see(g.RawGetString(name)))
	}
	g.RawSetString("rawset", write(g.RawGetString("rawset")))
	// luaB_setmetatable's checks: a table, and a nil or table metatable
	// (gopher-lua's accepts any value and sets nothing).
	setmt := write(g.RawGetString("setmetatable"))
	g.RawSetString("setmetatable", e.forwarder(func(L *lua.LState) int {
		L.CheckTable(1)
		if t := L.Get(2).Type(); L.GetTop() < 2 || t != lua.LTNil && t != lua.LTTable {
			L.ArgError(2, "nil or table expected")
		}
		return forward(L, setmt, nil)
	}))
	// pairs and ipairs over a proxy iterate the real table but return the
	// proxy as their state, so the real table never reaches the script.
	for _, name := range []string{"pairs", "ipairs"} {
		orig := g.RawGetString(name)
		g.RawSetString(name, e.forwarder(func(L *lua.LState) int {
			t, ok := L.Get(1).(*lua.LTable)
			r, isProxy := e.real[t]
			if !ok || !isProxy {
				return forward(L, orig, nil)
			}
			L.Push(orig)
			L.Push(r)
			L.Call(1, 3)
			iter := L.Get(-3)
			L.Pop(3)
			if name == "pairs" {
				L.Push(next)
			} else {
				L.Push(see(iter))
			}
			L.Push(t)
			if name == "pairs" {
				L.Push(lua.LNil)
			} else {
				L.Push(lua.LNumber(0))
			}
			return 3
		}))
	}
	// loadstring and load compile as Lua 5.1 names and checks their
	// chunks (chunk.go), which run in the scripts' environment.
	if g.RawGetString("loadstring") != lua.LNil {
		g.RawSetString("loadstring", L.NewFunction(e.luaLoadString))
	}
	if g.RawGetString("load") != lua.LNil {
		g.RawSetString("load", L.NewFunction(e.luaLoad))
	}
	getmt := g.RawGetString("getmetatable")
	g.RawSetString("getmetatable", e.forwarder(func(L *lua.LState) int {
		L.CheckAny(1) // luaB_getmetatable
		if t, ok := L.Get(1).(*lua.LTable); ok {
			if h, ok := e.hidden[t]; ok {
				L.Push(h)
				return 1
			}
		}
		L.Push(getmt)
		L.Push(L.Get(1))
		L.Call(1, 1)
		return 1
	}))
	tbl := e.real[g.RawGetString("table").(*lua.LTable)]
	for _, name := range []string{"insert", "setn"} {
		if f := tbl.RawGetString(name); f != lua.LNil {
			tbl.RawSetString(name, write(f))
		}
	}
	// table.remove and table.sort write nothing into an empty array (so
	// Redis lets them run on a library table).
	for _, name := range []string{"remove", "sort"} {
		if f := tbl.RawGetString(name); f != lua.LNil {
			seen, written := see(f), write(f)
			tbl.RawSetString(name, e.forwarder(func(L *lua.LState) int {
				fn := written
				if t, ok := L.Get(1).(*lua.LTable); ok {
					if r, ok := e.real[t]; ok && r.Len() == 0 {
						fn = seen
					}
				}
				return forward(L, fn, nil)
			}))
		}
	}
	for _, name := range []string{"concat", "getn", "maxn", "foreach", "foreachi"} {
		if f := tbl.RawGetString(name); f != lua.LNil {
			tbl.RawSetString(name, see(f))
		}
	}
}

// lib is the real table of the library global name (behind its proxy).
func (e *Engine) lib(name string) *lua.LTable {
	t := e.globals.RawGetString(name).(*lua.LTable)
	if r, ok := e.real[t]; ok {
		return r
	}
	return t
}

// forward calls fn with the calling Go function's arguments, the first
// replaced by first unless it is nil, and returns all fn's results: a
// wrapper's tail call.
func forward(L *lua.LState, fn, first lua.LValue) int {
	if f, ok := fn.(*lua.LFunction); ok && f.IsG && len(f.Upvalues) == 0 && first == nil {
		// A Go function with the same arguments and no upvalues (which it
		// would read from the running frame's function) runs in this
		// frame: its results are on top as a call's would be, without a
		// second frame (table.remove's wrapper's wrapper was three calls).
		return f.GFunction(L)
	}
	top := L.GetTop()
	L.Push(fn)
	for i := 1; i <= top; i++ {
		if i == 1 && first != nil {
			L.Push(first)
		} else {
			L.Push(L.Get(i))
		}
	}
	L.CCalls-- // not a call of Lua 5.1's (nCcalls): the wrapped function's
	L.Call(top, lua.MultRet)
	L.CCalls++
	return L.GetTop() - top
}

// setArgTable sets the global KEYS or ARGV to the array vals, as
// luaCreateArray + lua_setglobal. The table of the previous script is
// refilled when that script left it as it found it (the same length, the
// same array part and no node part, as lua_newtable and n lua_rawseti
// make it: no key added, even one set back to nil, no metatable), which
// spares a new table and the globals' map assignment per call; otherwise a
// new one is made. No script can have kept a reference to it: the globals
// are read-only.
func (e *Engine) setArgTable(slot **lua.LTable, name string, vals [][]byte) {
	n := len(vals)
	t := *slot
	if t != nil {
		if asize, nsize := t.Sizes(); t.Len() != n || t.Metatable != lua.LNil || nsize != 0 || asize != freshArraySize(n) {
			t = nil
		} else {
			for i := n + 1; i <= asize; i++ {
				if t.RawGetInt(i) != lua.LNil {
					t = nil
					break
				}
			}
		}
	}
	if t == nil {
		t = e.L.NewTable()
		*slot = t
		e.globals.RawSetString(name, t)
	}
	for i, v := range vals {
		// The same string as the last script's (a counter's key, a
		// lock's name) is kept: no new string, no boxing.
		if old, ok := t.RawGetInt(i + 1).(lua.LString); ok && string(old) == string(v) {
			continue
		}
		t.RawSetInt(i+1, lua.LString(v))
	}
}

// freshArraySize is the size of the array part of a table that
// lua_newtable and lua_rawseti of the keys 1..n in order made: each growth
// (ltable.c's rehash) makes it the power of two at or above the key.
func freshArraySize(n int) int {
	if n == 0 {
		return 0
	}
	return 1 << bits.Len(uint(n-1))
}

// lookupSha finds a cached script by its sha in any case, returning it
// and the sha (nil if absent); a lowercase sha costs no allocation.
func (e *Engine) lookupSha(b []byte) (*lua.LFunction, string) {
	for _, ch := range b {
		if 'A' <= ch && ch <= 'Z' {
			sc := e.scripts[strings.ToLower(string(b))]
			return sc.fn, sc.sha
		}
	}
	sc := e.scripts[string(b)]
	return sc.fn, sc.sha
}

// replyError formats a script's failure as luaCallFunction with 7.0's
// error handler: "<err> script: <sha>, on @user_script:<line>.", where a
// non-table error becomes "ERR <text>".
func (e *Engine) replyError(w *resp.Writer, obj lua.LValue) (counted bool) {
	line, id := e.errLine, e.errSource
	var msg string
	if t, ok := obj.(*lua.LTable); ok {
		if ev, ok := t.RawGetString("err").(lua.LString); ok {
			msg = string(ev)
			counted = lua.LVAsBool(t.RawGetString("ignore_error_stats_update"))
		} else {
			msg = "ERR " + lua.LVAsString(obj)
		}
	} else {
		s := obj.String()
		if obj.Type() == lua.LTNil {
			s = "nil"
		}
		msg = "ERR " + s
		if raised, ok := e.errRaised.(lua.LString); !ok || string(raised) != s {
			if at, n := e.positionOf(s); n > 0 {
				id, line = at, n
			}
		}
	}
	// The chunk by its whole source name: "@user_script", or the code of
	// a loadstring chunk.
	source := "@" + e.chunkName()
	if id != "" {
		source = e.sourceOf(id)
	}
	if line > 0 {
		msg += " script: " + e.sha + ", on " + source + ":" + strconv.Itoa(line) + "."
	} else {
		msg += " script: " + e.sha + ", on " + source + ":?."
	}
	w.Error(msg)
	return counted
}

// chunkName is the name errors give the code: user_script, or
// user_function for the functions engine (functions.go).
func (e *Engine) chunkName() string {
	if e.chunk != "" {
		return e.chunk
	}
	return "user_script"
}

// lineOf is the line of a Lua error message "user_script:<line>: ..." (or
// "user_function:<line>: ...").
func lineOf(s string) int {
	rest, ok := strings.CutPrefix(s, "user_script:")
	if !ok {
		rest, ok = strings.CutPrefix(s, "user_function:")
	}
	if ok {
		if i := strings.IndexByte(rest, ':'); i > 0 {
			if n, err := strconv.Atoi(rest[:i]); err == nil {
				return n
			}
		}
	}
	return 0
}

// callerLine is the line of the script calling the running Go function.
func callerLine(L *lua.LState) int {
	_, line := callerPos(L)
	return line
}

// callerPos is the chunk (gopher-lua's name) and line of the Lua code
// calling the running Go function.
func callerPos(L *lua.LState) (string, int) {
	for lvl := 1; lvl < 8; lvl++ {
		dbg, ok := L.GetStack(lvl)
		if !ok {
			break
		}
		if _, err := L.GetInfo("Sl", dbg, nil); err == nil && dbg.CurrentLine > 0 {
			return dbg.Source, dbg.CurrentLine
		}
	}
	return "", 0
}

// noteCaller records where the error about to be raised comes from: the
// error handler's "on <source>:<line>.".
func (e *Engine) noteCaller(L *lua.LState) {
	e.errSource, e.errLine = callerPos(L)
}

// luaError replaces Lua's error() to remember the line it was raised at
// (7.0's error handler records it with debug.getinfo).
func (e *Engine) luaError(L *lua.LState) int {
	obj := L.Get(1) // error() raises nil
	level := L.OptInt(2, 1)
	e.noteCaller(L)
	// luaB_error: a string or a number gets the position of the function
	// at level (1: error's caller; luaL_where).
	switch v := obj.(type) {
	case lua.LString:
		if level > 0 {
			obj = lua.LString(luaWhere(L, level) + string(v))
		}
	case lua.LNumber:
		if level > 0 {
			obj = lua.LString(luaWhere(L, level) + FormatNumber(float64(v)))
		}
	}
	e.errRaised = obj
	L.Error(obj, 0)
	return 0
}

// raiseVerbatim is luaL_error(L, msg) in a library function: msg at the
// calling Lua code's position, which the error handler leaves as it is.
func (e *Engine) raiseVerbatim(L *lua.LState, msg string) {
	e.noteCaller(L)
	obj := lua.LString(e.where(L) + msg)
	e.errRaised = obj
	L.Error(obj, 0)
}

// libError raises a redis library's argument error (luaPushError +
// luaError): "ERR <msg>", without a position.
func (e *Engine) libError(L *lua.LState, msg string) {
	e.raisePlain(L, "ERR "+msg)
}

// raisePlain raises a plain error table (luaPushError + luaError), counted
// in errorstats when it becomes the script's error reply (nothing counted
// it yet).
func (e *Engine) raisePlain(L *lua.LState, msg string) {
	e.noteCaller(L)
	L.Error(plainErrTable(L, msg), 0)
}

// raiseTable raises a Redis error table from a Go function.
func (e *Engine) raiseTable(L *lua.LState, msg string) {
	e.noteCaller(L)
	L.Error(errTable(L, msg), 0)
}

// errTable is the error table of an error already counted in errorstats:
// {err=msg, ignore_error_stats_update=true}.
func errTable(L *lua.LState, msg string) *lua.LTable {
	t := plainErrTable(L, msg)
	t.RawSetString("ignore_error_stats_update", lua.LTrue)
	return t
}

// plainErrTable is the error table {err=msg}, not yet counted in
// errorstats.
func plainErrTable(L *lua.LState, msg string) *lua.LTable {
	t := L.CreateTable(0, 1) // respToLua's status table
	t.RawSetString("err", lua.LString(msg))
	return t
}

// luaErrorReplyText is the err field redis.error_reply(s) makes, as Redis
// 7.0's luaPushErrorBuff builds it: a leading '-' is added when missing,
// the first word after it is the error code ("ERR" when s has no space),
// and the message loses its surrounding CR and LF. So "x" gives "ERR x",
// "" gives "ERR " and "-MY err" gives "MY err".
func luaErrorReplyText(s string) string {
	s = strings.TrimPrefix(s, "-")
	code, msg := "ERR", s
	if i := strings.IndexByte(s, ' '); i >= 0 {
		code, msg = s[:i], s[i+1:]
	}
	return code + " " + strings.Trim(msg, "\r\n")
}

func (e *Engine) openRedis(g *lua.LTable) {
	L := e.L
	r := L.NewTable()
	set := func(name string, fn lua.LGFunction) { r.RawSetString(name, L.NewFunction(fn)) }
	set("call", func(L *lua.LState) int { return e.redisCall(L, true) })
	set("pcall", func(L *lua.LState) int { return e.redisCall(L, false) })
	set("sha1hex", func(L *lua.LState) int {
		if L.GetTop() != 1 {
			e.libError(L, "wrong number of arguments")
		}
		L.Push(lua.LString(SHA1Hex([]byte(L.ToString(1)))))
		return 1
	})
	set("error_reply", func(L *lua.LState) int {
		if L.GetTop() != 1 || L.Get(1).Type() != lua.LTString {
			L.Push(plainErrTable(L, "ERR wrong number or type of arguments"))
			return 1
		}
		L.Push(plainErrTable(L, luaErrorReplyText(L.ToString(1))))
		return 1
	})
	set("status_reply", func(L *lua.LState) int {
		if L.GetTop() != 1 || L.Get(1).Type() != lua.LTString {
			L.Push(plainErrTable(L, "ERR wrong number or type of arguments"))
			return 1
		}
		t := L.NewTable()
		t.RawSetString("ok", L.Get(1))
		L.Push(t)
		return 1
	})
	set("log", func(L *lua.LState) int {
		if L.GetTop() < 2 {
			e.libError(L, "redis.log() requires two arguments or more.")
		}
		lvl, ok := L.Get(1).(lua.LNumber)
		if !ok {
			e.libError(L, "First argument must be a number (log level).")
		}
		if lvl < 0 || lvl > 3 {
			e.libError(L, "Invalid debug level.")
		}
		parts := make([]string, 0, L.GetTop()-1)
		for i := 2; i <= L.GetTop(); i++ {
			parts = append(parts, L.ToString(i))
		}
		text := strings.Join(parts, " ")
		e.host.Log(int(lvl), text)
		return 0
	})
	set("setresp", func(L *lua.LState) int {
		if L.GetTop() != 1 {
			e.libError(L, "redis.setresp() requires one argument.")
		}
		n := L.ToInt(1)
		if n != 2 && n != 3 {
			e.libError(L, "RESP version must be 2 or 3.")
		}
		e.resp = n
		return 0
	})
	set("set_repl", func(L *lua.LState) int {
		if L.GetTop() != 1 {
			e.libError(L, "redis.set_repl() requires two arguments.")
		}
		n := L.ToInt(1)
		if n&^int(ReplAll) != 0 {
			e.libError(L, "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.")
		}
		e.repl = Repl(n)
		return 0
	})
	set("acl_check_cmd", func(L *lua.LState) int {
		// luaRedisAclCheckCmdPermissionsCommand: luaArgsToRedisArgv's
		// checks, then lookupCommand (no arity check) and the ACL check
		// of the command with its keys and channels.
		n := L.GetTop()
		if n == 0 {
			e.libError(L, "Please specify at least one argument for this redis lib call")
		}
		args := make([][]byte, 0, n)
		for i := 1; i <= n; i++ {
			a, ok := e.luaArg(L.Get(i))
			if !ok {
				e.libError(L, "Lua redis lib command arguments must be strings or integers")
			}
			args = append(args, a)
		}
		allowed, known := e.host.ACLCheckCmd(args)
		if !known {
			e.libError(L, "Invalid command passed to redis.acl_check_cmd()")
		}
		L.Push(lua.LBool(allowed))
		return 1
	})
	set("replicate_commands", func(L *lua.LState) int { L.Push(lua.LTrue); return 1 })
	// redis.breakpoint and redis.debug (luaRedisBreakpointCommand,
	// luaRedisDebugCommand): outside a debugging session false and a no-op.
	set("breakpoint", func(L *lua.LState) int {
		if e.ldb == nil {
			L.Push(lua.LFalse)
			return 1
		}
		e.ldb.luabp = true
		L.Push(lua.LTrue)
		return 1
	})
	set("debug", func(L *lua.LState) int {
		d := e.ldb
		if d == nil {
			return 0
		}
		n := L.GetTop()
		var b strings.Builder
		fmt.Fprintf(&b, "<debug> line %d: ", d.current)
		for i := 1; i <= n; i++ {
			b.WriteString(e.catValue(L.Get(i), 0))
			if i != n {
				b.WriteString(", ")
			}
		}
		d.log(b.String())
		return 0
	})
	for name, v := range map[string]int{"LOG_DEBUG": 0, "LOG_VERBOSE": 1, "LOG_NOTICE": 2, "LOG_WARNING": 3,
		"REPL_NONE": 0, "REPL_AOF": int(ReplAOF), "REPL_SLAVE": int(ReplReplica), "REPL_REPLICA": int(ReplReplica), "REPL_ALL": int(ReplAll)} {
		r.RawSetString(name, lua.LNumber(v))
	}
	r.RawSetString("REDIS_VERSION", lua.LString("7.0.15"))
	r.RawSetString("REDIS_VERSION_NUM", lua.LNumber(0x07000f))
	g.RawSetString("redis", r)
}

// rewindArenas hands the arenas' space from argArena[base] and past
// prevBytes (byteArena as it was before the call's arguments) back for reuse.
// A byte block allocated for the call's arguments holds only theirs, so it
// is emptied instead.
func (e *Engine) rewindArenas(base int, prevBytes []byte) {
	clear(e.argArena[base:])
	e.argArena = e.argArena[:base]
	if cap(e.byteArena) == cap(prevBytes) && unsafe.SliceData(e.byteArena) == unsafe.SliceData(prevBytes) {
		e.byteArena = e.byteArena[:len(prevBytes)]
	} else {
		e.byteArena = e.byteArena[:0]
	}
}

// luaArg converts one of redis.call's arguments, strings and numbers
// only, appending its bytes to the engine's byte arena; the slice returned
// is capped at its length, so appending to it never writes into the
// arguments after it.
func (e *Engine) luaArg(v lua.LValue) ([]byte, bool) {
	// a new block when this one is full, as for argArena in redisCall
	need := 24 // "%.17g"
	if x, ok := v.(lua.LString); ok {
		need = len(x)
	}
	if cap(e.byteArena)-len(e.byteArena) < need {
		e.byteArena = make([]byte, 0, max(2*cap(e.byteArena), need, 1024))
	}
	off := len(e.byteArena)
	switch x := v.(type) {
	case lua.LString:
		e.byteArena = append(e.byteArena, x...)
	case lua.LNumber:
		// 7.0 formats a number argument with "%.17g" (luaRedisGenericCommand),
		// which writes an integer of up to 17 digits as its digits (no
		// exponent below 1e17; -0 keeps its sign) and spells infinities
		// and NaNs as glibc does ("inf", "-nan").
		switch f := float64(x); {
		case f == math.Trunc(f) && f > -1e17 && f < 1e17 && (f != 0 || !math.Signbit(f)):
			e.byteArena = strconv.AppendInt(e.byteArena, int64(f), 10)
		case math.IsInf(f, 0) || math.IsNaN(f):
			e.byteArena = append(e.byteArena, formatG(f, 17)...)
		default:
			e.byteArena = strconv.AppendFloat(e.byteArena, f, 'g', 17, 64)
		}
	default:
		return nil, false
	}
	end := len(e.byteArena)
	return e.byteArena[off:end:end], true
}

// mathRandom is redis_math_random: Lua's math.random on redisLrand48
// (rand.c), whose state starts at 0x1234ABCD330E when the server starts
// and goes on across scripts, as in 7.0.15.
func (e *Engine) mathRandom(L *lua.LState) int {
	e.rand = (0x5DEECE66D*e.rand + 0xB) & (1<<48 - 1)
	r := float64(int32(e.rand>>17)%0x7fffffff) / float64(0x7fffffff)
	switch L.GetTop() {
	case 0:
		L.Push(lua.LNumber(r))
	case 1:
		u := int(L.CheckNumber(1))
		if u < 1 {
			L.RaiseError("bad argument #1 to 'random' (interval is empty)")
		}
		L.Push(lua.LNumber(float64(int(r*float64(u)) + 1)))
	case 2:
		l, u := int(L.CheckNumber(1)), int(L.CheckNumber(2))
		if l > u {
			L.RaiseError("bad argument #2 to 'random' (interval is empty)")
		}
		L.Push(lua.LNumber(float64(int(r*float64(u-l+1)) + l)))
	default:
		e.raiseVerbatim(L, "wrong number of arguments")
	}
	return 1
}

func (e *Engine) mathRandomSeed(L *lua.LState) int {
	e.rand = uint64(int32(L.CheckNumber(1)))<<16 | 0x330E
	return 0
}
