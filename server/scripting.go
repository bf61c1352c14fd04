package server

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"strconv"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"

	"github.com/vigil-kv/vigil/internal/acl"
	"github.com/vigil-kv/vigil/internal/redisutil"
	"github.com/vigil-kv/vigil/internal/resp"
	"github.com/vigil-kv/vigil/replication"
	vlua "github.com/vigil-kv/vigil/server/lua"
)

// Lua scripting (Redis 7.0's eval.c, script_lua.c and script.c): EVAL,
// EVALSHA, their _RO forms and SCRIPT, on one gopher-lua state per server
// (Lua 5.1, as Redis's). A script runs under the execution lock inside
// EVAL's handler; redis.call runs commands through exec for the
// scripting client, so they join EVAL's execution unit: the script
// propagates its effects (its write commands, wrapped in MULTI/EXEC when
// more than one) and EVAL itself is never propagated, as Redis 7.0's
// effects replication.

// scriptEngine is the server's Lua state and script cache (lctx).
type scriptEngine struct {
	L       *lua.LState
	env     *lua.LTable // the protected globals the scripts see
	globals *lua.LTable // the real globals table
	// real maps each read-only table the scripts see (the library
	// proxies, the env, the visible metatables) to the table it stands
	// for; hidden is the metatable getmetatable reports for it (nil for
	// a library proxy). See protectLibraries.
	real    map[*lua.LTable]*lua.LTable
	hidden  map[*lua.LTable]lua.LValue
	scripts map[string]cachedScript
	bodies  map[string]string
	fake    *Client // the scripting client (server.script_caller's fake)
	rand    uint64  // redisLrand48's state

	// the running script (scriptRunCtx)
	caller *Client
	sha    string
	ro     bool
	// allowOOM: the running function has the allow-oom flag
	// (SCRIPT_ALLOW_OOM): its commands skip scriptVerifyOOM.
	allowOOM bool
	// shebang holds the flags of the cached scripts that start with a
	// "#!lua" shebang; a script absent from it runs in eval's
	// compatibility mode. evalFlags are those of the EVAL about to run.
	shebang   map[string]fnFlags
	evalFlags fnFlags
	resp      int
	repl      Target
	errLine   int         // the line of the latest error raised by redis.call or error()
	busy      *busyScript // the running script's busy state (scripting_busy.go)
	// cancel cancels the context L keeps across scripts while
	// busy-reply-threshold is on (nil: L has none); coroutines tells
	// that the running script made threads, whose contexts are children
	// of L's (scripting_busy.go).
	cancel     context.CancelFunc
	coroutines bool
	chunk      string // the code's chunk name, "" for user_script (functions.go sets user_function)
	// The tables of the last script's KEYS and ARGV (setArgTable).
	keysT, argvT *lua.LTable
	// argArena and byteArena hold the argv of the commands the running
	// script calls (redisCall), append-only while anything may refer to
	// them, so that redis.call allocates nothing for its arguments: see
	// resetArenas.
	argArena  [][]byte
	byteArena []byte
}

// maxKeptArena is the largest arena resetArenas keeps for the next script.
const maxKeptArena = 64 << 10

// resetArenas lets a script about to run reuse the arenas of the scripts
// before it. The arguments a command receives are valid only for the
// batch it runs in (they alias the read buffer: whatever a handler keeps
// it copies, cmd_string.go), and the only reference to them that outlives
// the command is its propagation (s.pending) until the unit ends; the
// propagators serialize at once. So the arenas are reused only when no
// unit is open (a script inside MULTI leaves its commands in s.pending
// until EXEC: then they only grow, on fresh arrays once full).
func (e *scriptEngine) resetArenas(s *Server) {
	if len(s.pending) != 0 {
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

// cachedScript is a script of the cache with its sha (the map's key, kept
// so that EVALSHA finds it without making a string).
type cachedScript struct {
	fn  *lua.LFunction
	sha string
}

func (s *Server) scriptEngine() *scriptEngine {
	if s.lua == nil {
		s.lua = s.newScriptEngine()
	}
	return s.lua
}

// newScriptEngine is scriptingInit: the libraries Redis loads, the redis
// table, the protected globals.
func (s *Server) newScriptEngine() *scriptEngine {
	e := &scriptEngine{scripts: map[string]cachedScript{}, bodies: map[string]string{}, shebang: map[string]fnFlags{}}
	e.rand = 0x1234ABCD330E // rand.c's initial X: Redis never reseeds it for scripts
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
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
	// Redis removes these (luaRemoveUnsupportedFunctions / not loaded).
	for _, name := range []string{"loadfile", "dofile", "print", "module", "require", "newproxy", "getfenv", "setfenv", "_printregs", "channel", "_GOPHER_LUA_VERSION"} {
		g.RawSetString(name, lua.LNil)
	}
	g.RawSetString("error", L.NewFunction(e.luaError))
	tostring := g.RawGetString("tostring")
	g.RawSetString("tostring", L.NewFunction(func(L *lua.LState) int {
		if n, ok := L.Get(1).(lua.LNumber); ok && L.GetTop() == 1 {
			L.Push(lua.LString(vlua.FormatNumber(float64(n))))
			return 1
		}
		L.Push(tostring)
		L.Push(L.Get(1))
		L.Call(1, 1)
		return 1
	}))
	// A coroutine's thread gets a child of L's context, which L keeps
	// across scripts (scripting_busy.go): endBusy drops it after a script
	// that made threads, so the children do not pile up.
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
	e.openRedis(s, g)
	vlua.OpenLibs(L, g)

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
	gm := L.NewTable()
	gm.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError("Script attempted to access nonexistent global variable '%s'", L.Get(2).String())
		return 0
	}))
	L.SetMetatable(g, gm)
	g.RawSetString("_G", e.env)
	e.protectLibraries(gm)

	c := &Client{srv: s, id: -1, addr: "lua", user: "default", authed: true, inScript: true}
	c.w.Proto = 2
	e.fake = c
	return e
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
func (e *scriptEngine) protectLibraries(gm *lua.LTable) {
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
		e.errLine = callerLine(L)
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
		return L.NewFunction(func(L *lua.LState) int {
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
		return L.NewFunction(func(L *lua.LState) int {
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
	for _, name := range []string{"rawset", "setmetatable"} {
		g.RawSetString(name, write(g.RawGetString(name)))
	}
	// pairs and ipairs over a proxy iterate the real table but return the
	// proxy as their state, so the real table never reaches the script.
	for _, name := range []string{"pairs", "ipairs"} {
		orig := g.RawGetString(name)
		g.RawSetString(name, L.NewFunction(func(L *lua.LState) int {
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
	// A chunk of loadstring/load runs in the scripts' environment, not
	// in the real globals (gopher-lua gives it L's globals table), so
	// that it cannot replace a global for every later script.
	for _, name := range []string{"loadstring", "load"} {
		orig := g.RawGetString(name)
		if orig == lua.LNil {
			continue
		}
		g.RawSetString(name, L.NewFunction(func(L *lua.LState) int {
			top := L.GetTop()
			n := forward(L, orig, nil)
			if fn, ok := L.Get(top + 1).(*lua.LFunction); ok {
				fn.Env = e.env
			}
			return n
		}))
	}
	getmt := g.RawGetString("getmetatable")
	g.RawSetString("getmetatable", L.NewFunction(func(L *lua.LState) int {
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
			tbl.RawSetString(name, L.NewFunction(func(L *lua.LState) int {
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
func (e *scriptEngine) lib(name string) *lua.LTable {
	t := e.globals.RawGetString(name).(*lua.LTable)
	if r, ok := e.real[t]; ok {
		return r
	}
	return t
}

// cachedScripts is INFO's number_of_cached_scripts.
func (s *Server) cachedScripts() int {
	if s.lua == nil {
		return 0
	}
	return len(s.lua.scripts)
}

func sha1hex(b []byte) string {
	h := sha1.Sum(b)
	return hex.EncodeToString(h[:])
}

// load compiles body into the cache (luaCreateFunction), returning its sha
// or the compile error text.
func (e *scriptEngine) load(body []byte) (string, string) {
	sha := sha1hex(body)
	if _, ok := e.scripts[sha]; ok {
		return sha, ""
	}
	code, flags, shebang := body, fnFlags(0), false
	if bytes.HasPrefix(body, []byte("#!")) { // scripting_shebang.go
		f, n, msg := evalShebangFlags(body)
		if msg != "" {
			return "", "ERR " + msg
		}
		code, flags, shebang = body[n:], f, true
	}
	stripped, msg := vlua.SyntaxCheckStrip(string(code), "user_script")
	if msg != "" {
		return "", "ERR Error compiling script (new function): " + msg
	}
	fn, err := e.L.Load(strings.NewReader(stripped), "user_script")
	if err != nil {
		msg := err.Error()
		if ae, ok := err.(*lua.ApiError); ok {
			msg = ae.Object.String()
		}
		return "", "ERR Error compiling script (new function): " + msg
	}
	fn.Env = e.env
	// The chunk is a vararg function that never reads "..."; Lua 5.1's
	// compatibility "arg" table gopher-lua would build on every call is
	// no local of a main chunk (luaY_parser marks it VARARG_ISVARARG
	// only), so nothing can see it: skip it.
	fn.Proto.IsVarArg &^= lua.VarArgNeedsArg
	e.scripts[sha] = cachedScript{fn: fn, sha: sha}
	e.bodies[sha] = string(body)
	if shebang {
		e.shebang[sha] = flags
	}
	return sha, ""
}

func init() {
	scr := FlagNoScript | FlagStale | FlagSkipMonitor | FlagNoMandatoryKeys | FlagMovableKeys
	scriptingACL := []string{"slow", "scripting"}
	eval := func(bySha, ro bool) Handler {
		return func(c *Client, a [][]byte) { evalGeneric(c, a, bySha, ro) }
	}
	register(
		&Command{Name: "eval", Arity: -3, Flags: scr, ACL: scriptingACL, Handler: eval(false, false)},
		&Command{Name: "evalsha", Arity: -3, Flags: scr, ACL: scriptingACL, Handler: eval(true, false)},
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

// forward calls fn with the calling Go function's arguments, the first
// replaced by first unless it is nil, and returns all fn's results: a
// wrapper's tail call.
func forward(L *lua.LState, fn, first lua.LValue) int {
	top := L.GetTop()
	L.Push(fn)
	for i := 1; i <= top; i++ {
		if i == 1 && first != nil {
			L.Push(first)
		} else {
			L.Push(L.Get(i))
		}
	}
	L.Call(top, lua.MultRet)
	return L.GetTop() - top
}

// evalGeneric is evalGenericCommand.
func evalGeneric(c *Client, args [][]byte, bySha, ro bool) {
	s := c.srv
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
	var sha string
	var fn *lua.LFunction
	if bySha {
		fn, sha = e.lookupSha(args[1])
		if fn == nil {
			c.w.Error(ErrNoScript)
			return
		}
	} else {
		var msg string
		sha, msg = e.load(args[1])
		if msg != "" {
			c.w.Error(msg)
			return
		}
	}
	// scriptPrepareForRun: a script with a shebang is checked against its
	// flags as a function is; in eval's compatibility mode (no shebang) a
	// stale replica refuses the script, whatever it calls.
	flags, shebang := e.shebang[sha]
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
	ro = ro || flags&fnNoWrites != 0
	if fn == nil {
		fn = e.scripts[sha].fn
	}
	e.setArgTable(&e.keysT, "KEYS", args[3:3+numkeys])
	e.setArgTable(&e.argvT, "ARGV", args[3+numkeys:])
	e.run(c, fn, nil, sha, ro, nil, nil)
}

// setArgTable sets the global KEYS or ARGV to the array vals, as
// luaCreateArray + lua_setglobal. The table of the previous script is
// refilled when that script left it as it found it (the same length,
// nothing added, no metatable), which spares a new table and the globals'
// map assignment per call; otherwise a new one is made. No script can
// have kept a reference to it: the globals are read-only.
func (e *scriptEngine) setArgTable(slot **lua.LTable, name string, vals [][]byte) {
	n := len(vals)
	t := *slot
	if t != nil {
		if t.Len() != n || t.Metatable != lua.LNil {
			t = nil
		} else if k, _ := t.Next(lua.LNumber(n)); k != lua.LNil {
			t = nil
		}
	}
	if t == nil {
		t = e.L.CreateTable(n, 0)
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

// lookupSha finds a cached script by its sha in any case, returning it
// and the sha (nil if absent); a lowercase sha costs no allocation.
func (e *scriptEngine) lookupSha(b []byte) (*lua.LFunction, string) {
	for _, ch := range b {
		if 'A' <= ch && ch <= 'Z' {
			sc := e.scripts[strings.ToLower(string(b))]
			return sc.fn, sc.sha
		}
	}
	sc := e.scripts[string(b)]
	return sc.fn, sc.sha
}

// run calls fn with params under the busy-script machinery (luaCallFunction
// + scriptPrepareForRun's context): name is what errors cite (the sha, or a
// function's name), fi the running function (nil for EVAL) called with
// argv. The script's
// effects propagate, the calling command itself does not.
func (e *scriptEngine) run(c *Client, fn *lua.LFunction, params []lua.LValue, name string, ro bool, fi *fnInfo, argv [][]byte) {
	s := c.srv
	e.caller, e.sha, e.ro, e.resp, e.repl, e.errLine = c, name, ro, 2, TargetAll, 0
	e.allowOOM = fi != nil && fi.flags&fnAllowOOM != 0 || fi == nil && e.evalFlags&fnAllowOOM != 0
	e.fake.db = c.db
	e.fake.aclUser, e.fake.user = c.aclUser, c.user
	e.resetArenas(s)
	L := e.L
	L.Push(fn)
	for _, p := range params {
		L.Push(p)
	}
	b := s.startBusyFn(e, fi, argv)
	e.busy = b
	pendingMark := len(s.pending)
	err := L.PCall(len(params), 1, nil)
	s.endBusy(e, b)
	if b.shutdown.Load() {
		clear(s.pending[pendingMark:])
		s.pending = s.pending[:pendingMark]
	}
	e.caller, e.busy = nil, nil
	if err != nil {
		var obj lua.LValue = lua.LString(err.Error())
		if ae, ok := err.(*lua.ApiError); ok {
			obj = ae.Object
		}
		if b.killed.Load() {
			// The context's error carries the line it stopped at.
			if str, ok := obj.(lua.LString); ok {
				if line := lineOf(string(str)); line > 0 {
					e.errLine = line
				}
			}
			t := L.NewTable()
			t.RawSetString("err", lua.LString(errKilledMsg))
			obj = t
		}
		e.replyError(c, obj)
	} else {
		ret := L.Get(-1)
		L.Pop(1)
		luaToResp(c, L, ret, e.resp, 0)
	}
	L.SetTop(0)
	// Effects replication: the commands the script ran propagate, EVAL
	// does not (scriptCall's propagation; EVAL is never in the stream).
	c.preventPropagation()
}

// replyError formats a script's failure as luaCallFunction with 7.0's
// error handler: "<err> script: <sha>, on @user_script:<line>.", where a
// non-table error becomes "ERR <text>".
func (e *scriptEngine) replyError(c *Client, obj lua.LValue) {
	line := e.errLine
	var msg string
	if t, ok := obj.(*lua.LTable); ok {
		if ev, ok := t.RawGetString("err").(lua.LString); ok {
			msg = string(ev)
			c.errCounted = lua.LVAsBool(t.RawGetString("ignore_error_stats_update"))
		} else {
			msg = "ERR " + lua.LVAsString(obj)
		}
	} else {
		s := obj.String()
		if obj.Type() == lua.LTNil {
			s = "nil"
		}
		msg = "ERR " + s
		if n := lineOf(s); n > 0 {
			line = n
		}
	}
	if line > 0 {
		msg += " script: " + e.sha + ", on @" + e.chunkName() + ":" + strconv.Itoa(line) + "."
	} else {
		msg += " script: " + e.sha + ", on @" + e.chunkName() + ":?."
	}
	c.w.Error(msg)
}

// chunkName is the name errors give the code: user_script, or
// user_function for the functions engine (functions.go).
func (e *scriptEngine) chunkName() string {
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
	for lvl := 1; lvl < 8; lvl++ {
		dbg, ok := L.GetStack(lvl)
		if !ok {
			break
		}
		if _, err := L.GetInfo("Sl", dbg, nil); err == nil && dbg.CurrentLine > 0 {
			return dbg.CurrentLine
		}
	}
	return 0
}

// luaError replaces Lua's error() to remember the line it was raised at
// (7.0's error handler records it with debug.getinfo).
func (e *scriptEngine) luaError(L *lua.LState) int {
	obj := L.CheckAny(1)
	level := L.OptInt(2, 1)
	e.errLine = callerLine(L)
	if str, ok := obj.(lua.LString); ok && level > 0 {
		L.Error(lua.LString(string(str)), level)
	}
	L.Error(obj, 0)
	return 0
}

// libError raises a redis library's argument error (luaPushError +
// luaError): "ERR <msg>", without a position.
func (e *scriptEngine) libError(L *lua.LState, msg string) {
	e.raiseTable(L, "ERR "+msg)
}

// raiseTable raises a Redis error table from a Go function.
func (e *scriptEngine) raiseTable(L *lua.LState, msg string) {
	e.errLine = callerLine(L)
	L.Error(errTable(L, msg), 0)
}

// errTable is the error table of an error already counted in errorstats:
// {err=msg, ignore_error_stats_update=true}.
func errTable(L *lua.LState, msg string) *lua.LTable {
	t := L.NewTable()
	t.RawSetString("err", lua.LString(msg))
	t.RawSetString("ignore_error_stats_update", lua.LTrue)
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

func (e *scriptEngine) openRedis(s *Server, g *lua.LTable) {
	L := e.L
	r := L.NewTable()
	set := func(name string, fn lua.LGFunction) { r.RawSetString(name, L.NewFunction(fn)) }
	set("call", func(L *lua.LState) int { return e.redisCall(s, L, true) })
	set("pcall", func(L *lua.LState) int { return e.redisCall(s, L, false) })
	set("sha1hex", func(L *lua.LState) int {
		if L.GetTop() != 1 {
			e.libError(L, "wrong number of arguments")
		}
		L.Push(lua.LString(sha1hex([]byte(L.ToString(1)))))
		return 1
	})
	set("error_reply", func(L *lua.LState) int {
		if L.GetTop() != 1 || L.Get(1).Type() != lua.LTString {
			t := L.NewTable()
			t.RawSetString("err", lua.LString("ERR wrong number or type of arguments"))
			L.Push(t)
			return 1
		}
		t := L.NewTable()
		t.RawSetString("err", lua.LString(luaErrorReplyText(L.ToString(1))))
		L.Push(t)
		return 1
	})
	set("status_reply", func(L *lua.LState) int {
		if L.GetTop() != 1 || L.Get(1).Type() != lua.LTString {
			t := L.NewTable()
			t.RawSetString("err", lua.LString("ERR wrong number or type of arguments"))
			L.Push(t)
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
		switch int(lvl) {
		case 0:
			s.log.Debug().Msg(text)
		case 1, 2:
			s.log.Info().Msg(text)
		default:
			s.log.Warn().Msg(text)
		}
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
		if n&^int(TargetAll) != 0 {
			e.libError(L, "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.")
		}
		e.repl = Target(n)
		return 0
	})
	set("replicate_commands", func(L *lua.LState) int { L.Push(lua.LTrue); return 1 })
	set("breakpoint", func(L *lua.LState) int { L.Push(lua.LFalse); return 1 })
	set("debug", func(L *lua.LState) int { return 0 })
	for name, v := range map[string]int{"LOG_DEBUG": 0, "LOG_VERBOSE": 1, "LOG_NOTICE": 2, "LOG_WARNING": 3,
		"REPL_NONE": 0, "REPL_AOF": int(TargetAOF), "REPL_SLAVE": int(TargetRepl), "REPL_REPLICA": int(TargetRepl), "REPL_ALL": int(TargetAll)} {
		r.RawSetString(name, lua.LNumber(v))
	}
	r.RawSetString("REDIS_VERSION", lua.LString("7.0.15"))
	r.RawSetString("REDIS_VERSION_NUM", lua.LNumber(0x07000f))
	g.RawSetString("redis", r)
}

// luaArg converts one of redis.call's arguments, strings and numbers
// only, appending its bytes to the engine's byte arena; the slice returned
// is capped at its length, so appending to it never writes into the
// arguments after it.
func (e *scriptEngine) luaArg(v lua.LValue) ([]byte, bool) {
	off := len(e.byteArena)
	switch x := v.(type) {
	case lua.LString:
		e.byteArena = append(e.byteArena, x...)
	case lua.LNumber:
		// 7.0 formats a number argument with "%.17g" (luaRedisGenericCommand).
		e.byteArena = strconv.AppendFloat(e.byteArena, float64(x), 'g', 17, 64)
	default:
		return nil, false
	}
	end := len(e.byteArena)
	return e.byteArena[off:end:end], true
}

// redisCall is luaRedisGenericCommand + scriptCall: the checks Redis makes
// for a command run from a script, then the command through exec, its reply
// converted to Lua.
func (e *scriptEngine) redisCall(s *Server, L *lua.LState, raise bool) int {
	// An error the script's checks produce is counted in errorstats at
	// once; like a command's error reply (counted by exec), the table
	// carries ignore_error_stats_update so the script's reply is not
	// counted again (luaPushErrorBuff).
	fail := func(msg string) int {
		s.countError([]byte("-" + msg))
		if raise {
			e.raiseTable(L, msg)
		}
		L.Push(errTable(L, msg))
		return 1
	}
	n := L.GetTop()
	if n == 0 {
		return fail("ERR Please specify at least one argument for this redis lib call")
	}
	// The argv lives in the engine's arenas (resetArenas): propagation
	// keeps it until the script's unit ends.
	base := len(e.argArena)
	for i := 1; i <= n; i++ {
		a, ok := e.luaArg(L.Get(i))
		if !ok {
			return fail("ERR Lua redis lib command arguments must be strings or integers")
		}
		e.argArena = append(e.argArena, a)
	}
	args := e.argArena[base:len(e.argArena):len(e.argArena)]
	cmd := s.lookup(args[0])
	if cmd != nil && cmd.subMap != nil && (len(args) >= 2 || cmd.Handler == nil) {
		if len(args) < 2 {
			return fail("ERR Wrong number of args calling Redis command from script")
		}
		cmd = cmd.subMap[lowerASCII(args[1])]
	}
	if cmd == nil {
		return fail("ERR Unknown Redis command called from script")
	}
	if (cmd.Arity > 0 && len(args) != cmd.Arity) || len(args) < -cmd.Arity {
		return fail("ERR Wrong number of args calling Redis command from script")
	}
	if cmd.has(FlagNoScript) {
		return fail("ERR This Redis command is not allowed from script")
	}
	if cmd.has(FlagWrite) && e.ro {
		return fail("ERR Write commands are not allowed from read-only scripts.")
	}
	c := e.fake
	if res, idx := s.aclCheck(c, cmd, args); res != acl.OK {
		// scriptVerifyACL: logged with the context "lua".
		s.aclLogDenied(e.caller, res, "lua", cmd, args, idx, cmd.fullName)
		switch res {
		case acl.DeniedKey:
			return fail("ERR The user executing the script can't access at least one of the keys mentioned in the command arguments")
		case acl.DeniedChannel:
			return fail("ERR The user executing the script can't publish to the channel mentioned in the command")
		}
		return fail("ERR The user executing the script can't run this command or subcommand")
	}
	if msg := s.scriptVerifyOOM(e.caller, cmd); msg != "" && !e.allowOOM { // evict.go
		return fail(msg)
	}
	// scriptVerifyAllowStale: a function flagged allow-stale runs on a
	// stale replica, the commands it calls only if they are flagged stale.
	if l := s.repl.link; l != nil && !s.cfg.ReplicaServeStaleData && l.hs.State != replication.StateConnected && !cmd.has(FlagStale) {
		return fail("ERR Can not execute the command on a stale replica")
	}
	c.w.Reset()
	c.w.Proto = e.resp
	if s.realClock && !e.caller.batchStart.IsZero() {
		// exec times the command from cmdEnd on the monotonic clock
		// alone, as it does a batch's commands (one time.Now less).
		c.batchStart = e.caller.batchStart
		c.cmdEnd = c.batchStart.Add(time.Since(c.batchStart))
	}
	mark, dirty := len(s.pending), s.ks.Dirty
	s.exec(c, cmd, args)
	if s.ks.Dirty != dirty && e.busy != nil {
		e.busy.wrote.Store(true) // SCRIPT KILL is refused from now on
	}
	if e.repl != TargetAll {
		// redis.set_repl: what the command propagated goes only to the
		// script's targets (none: dropped).
		kept := s.pending[:mark]
		for _, op := range s.pending[mark:] {
			if op.Target &= e.repl; op.Target != 0 {
				kept = append(kept, op)
			}
		}
		clear(s.pending[len(kept):])
		s.pending = kept
	}
	v, ok := scalarReply(c.w.B)
	if !ok {
		var err error
		v, err = resp.ReadValue(bufio.NewReader(bytes.NewReader(c.w.B)), resp.DefaultReplyLimits)
		if err != nil {
			c.w.Reset()
			return fail("ERR reply not readable")
		}
	}
	c.w.Reset()
	if v.IsError() && raise {
		e.raiseTable(L, v.Str)
	}
	L.Push(respToLua(L, v, e.resp))
	return 1
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

// respToLua is redisProtocolToLuaType.
func respToLua(L *lua.LState, v resp.Value, proto int) lua.LValue {
	switch v.Kind {
	case resp.KindInt:
		return lua.LNumber(v.Int)
	case resp.KindBulk:
		return lua.LString(v.Str)
	case resp.KindSimple:
		t := L.NewTable()
		t.RawSetString("ok", lua.LString(v.Str))
		return t
	case resp.KindError, resp.KindBlobErr:
		return errTable(L, v.Str)
	case resp.KindNull:
		if proto == 3 {
			return lua.LNil
		}
		return lua.LFalse
	case resp.KindArray, resp.KindPush:
		t := L.CreateTable(len(v.Elems), 0)
		for i, el := range v.Elems {
			t.RawSetInt(i+1, respToLua(L, el, proto))
		}
		return t
	case resp.KindMap:
		m := L.NewTable()
		for i := 0; i+1 < len(v.Elems); i += 2 {
			m.RawSet(respToLua(L, v.Elems[i], proto), respToLua(L, v.Elems[i+1], proto))
		}
		t := L.NewTable()
		t.RawSetString("map", m)
		return t
	case resp.KindSet:
		m := L.NewTable()
		for _, el := range v.Elems {
			m.RawSet(respToLua(L, el, proto), lua.LTrue)
		}
		t := L.NewTable()
		t.RawSetString("set", m)
		return t
	case resp.KindDouble:
		f, _ := strconv.ParseFloat(v.Str, 64)
		t := L.NewTable()
		t.RawSetString("double", lua.LNumber(f))
		return t
	case resp.KindBool:
		return lua.LBool(v.Int != 0)
	case resp.KindBigNum:
		t := L.NewTable()
		t.RawSetString("big_number", lua.LString(v.Str))
		return t
	case resp.KindVerbatim:
		vt := L.NewTable()
		format, text := "txt", v.Str
		if len(text) >= 4 && text[3] == ':' {
			format, text = text[:3], text[4:]
		}
		vt.RawSetString("string", lua.LString(text))
		vt.RawSetString("format", lua.LString(format))
		t := L.NewTable()
		t.RawSetString("verbatim_string", vt)
		return t
	}
	return lua.LFalse
}

// luaToResp is luaReplyToRedisReply, in the caller's protocol.
// A boolean follows the script's protocol (redis.setresp): with 2, true is
// 1 and false a null; with 3 a RESP3 boolean (1/0 to a RESP2 caller).
func luaToResp(c *Client, L *lua.LState, v lua.LValue, proto, depth int) {
	w := &c.w
	switch x := v.(type) {
	case lua.LString:
		w.Bulk([]byte(string(x)))
	case lua.LBool:
		if proto == 2 {
			if x {
				w.Int(1)
			} else {
				w.Null()
			}
		} else {
			w.Bool(bool(x))
		}
	case lua.LNumber:
		w.Int(int64(float64(x)))
	case *lua.LTable:
		if depth > 1000 {
			w.Error("ERR reached lua stack limit")
			return
		}
		if ev, ok := x.RawGetString("err").(lua.LString); ok {
			if depth == 0 && lua.LVAsBool(x.RawGetString("ignore_error_stats_update")) {
				c.errCounted = true
			}
			w.Error(string(ev))
			return
		}
		if ok, is := x.RawGetString("ok").(lua.LString); is {
			w.Simple(string(ok))
			return
		}
		if d, is := x.RawGetString("double").(lua.LNumber); is {
			w.Double(float64(d))
			return
		}
		if b, is := x.RawGetString("big_number").(lua.LString); is {
			w.BigNumber(string(b))
			return
		}
		if m, is := x.RawGetString("map").(*lua.LTable); is {
			var ks, vs []lua.LValue
			m.ForEach(func(k, v lua.LValue) { ks, vs = append(ks, k), append(vs, v) })
			w.MapLen(len(ks))
			for i := range ks {
				luaToResp(c, L, ks[i], proto, depth+1)
				luaToResp(c, L, vs[i], proto, depth+1)
			}
			return
		}
		if m, is := x.RawGetString("set").(*lua.LTable); is {
			var ks []lua.LValue
			m.ForEach(func(k, _ lua.LValue) { ks = append(ks, k) })
			w.SetLen(len(ks))
			for _, k := range ks {
				luaToResp(c, L, k, proto, depth+1)
			}
			return
		}
		if vt, is := x.RawGetString("verbatim_string").(*lua.LTable); is {
			f, _ := vt.RawGetString("format").(lua.LString)
			t, _ := vt.RawGetString("string").(lua.LString)
			w.Verbatim(string(f), string(t))
			return
		}
		n := 0
		for x.RawGetInt(n+1) != lua.LNil {
			n++
		}
		w.ArrayLen(n)
		for i := 1; i <= n; i++ {
			luaToResp(c, L, x.RawGetInt(i), proto, depth+1)
		}
	default:
		w.Null()
	}
}

// mathRandom is redis_math_random: Lua's math.random on redisLrand48
// (rand.c), whose state starts at 0x1234ABCD330E when the server starts
// and goes on across scripts, as in 7.0.15.
func (e *scriptEngine) mathRandom(L *lua.LState) int {
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
		L.RaiseError("wrong number of arguments")
	}
	return 1
}

func (e *scriptEngine) mathRandomSeed(L *lua.LState) int {
	e.rand = uint64(int32(L.CheckNumber(1)))<<16 | 0x330E
	return 0
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
		if _, ok := e.scripts[strings.ToLower(string(a))]; ok {
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
	if old := c.srv.lua; old != nil {
		// A new Lua state (scriptingReset); the PRNG is rand.c's global
		// state, which survives it.
		old.L.Close()
		c.srv.lua = c.srv.newScriptEngine()
		c.srv.lua.rand = old.rand
	}
	c.w.OK()
}

// cmdScriptDebug accepts NO; Vigil has no Lua debugger (ldb.c), so YES and
// SYNC are refused.
func cmdScriptDebug(c *Client, args [][]byte) {
	switch strings.ToLower(string(args[2])) {
	case "no":
		c.w.OK()
	case "yes", "sync":
		c.w.Error("ERR SCRIPT DEBUG YES|SYNC: the Lua debugger is not supported")
	default:
		c.w.Error("ERR Use SCRIPT DEBUG YES/SYNC/NO")
	}
}

func cmdScriptKill(c *Client, args [][]byte) {
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
