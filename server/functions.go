package server

import (
	"context"
	"errors"
	"sort"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"

	"github.com/vigil-kv/vigil/internal/redisutil"
	vlua "github.com/vigil-kv/vigil/server/lua"
)

// Redis 7.0 functions (functions.c, function_lua.c): libraries of Lua
// functions loaded with FUNCTION LOAD, called with FCALL / FCALL_RO, kept
// in RDB files (RDB_OPCODE_FUNCTION2), dumped and restored with FUNCTION
// DUMP / RESTORE. The engine has its own gopher-lua state, as Redis's Lua
// engine has its own lua_State; a library's code runs once at load time in
// a sandbox whose only global is a reduced redis table (register_function,
// log, the LOG_* levels and the version), and its functions run later with
// the scripting globals (no KEYS/ARGV: keys and args are the function's
// two parameters).

// Script flags (script.h's SCRIPT_FLAG_*), in scripts_flags_def's order.
type fnFlags uint8

const (
	fnNoWrites fnFlags = 1 << iota
	fnAllowOOM
	fnAllowStale
	fnNoCluster
	fnAllowCrossSlot
)

var fnFlagNames = []struct {
	f    fnFlags
	name string
}{
	{fnNoWrites, "no-writes"}, {fnAllowOOM, "allow-oom"}, {fnAllowStale, "allow-stale"},
	{fnNoCluster, "no-cluster"}, {fnAllowCrossSlot, "allow-cross-slot-keys"},
}

// fnLoadTimeout is LOAD_TIMEOUT_MS: a library's load-time code is stopped
// after it (not for the master's or the AOF's FUNCTION LOAD).
const fnLoadTimeout = 500 * time.Millisecond

// fnInfo is a registered function (functionInfo).
type fnInfo struct {
	name    string
	desc    string
	hasDesc bool
	flags   fnFlags
	fn      *lua.LFunction
	lib     *fnLib
}

// fnLib is a library (functionLibInfo): its name and whole code, the
// shebang included.
type fnLib struct {
	name  string
	code  string
	funcs map[string]*fnInfo
}

// fnCtx is a set of libraries (functionsLibCtx).
type fnCtx struct {
	libs  map[string]*fnLib
	funcs map[string]*fnInfo
}

func newFnCtx() *fnCtx { return &fnCtx{libs: map[string]*fnLib{}, funcs: map[string]*fnInfo{}} }

func (x *fnCtx) link(l *fnLib) {
	x.libs[l.name] = l
	for n, f := range l.funcs {
		x.funcs[n] = f
	}
}

func (x *fnCtx) unlink(l *fnLib) {
	delete(x.libs, l.name)
	for n := range l.funcs {
		delete(x.funcs, n)
	}
}

// sortedLibs is the libraries by name (Redis's order is its dict's, which
// is seeded at random: FUNCTION LIST is flagged nondeterministic_output_order).
func (x *fnCtx) sortedLibs() []*fnLib {
	out := make([]*fnLib, 0, len(x.libs))
	for _, l := range x.libs {
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// codes are the libraries' codes for an RDB or a FUNCTION DUMP.
func (x *fnCtx) codes() []string {
	var out []string
	for _, l := range x.sortedLibs() {
		out = append(out, l.code)
	}
	return out
}

// functionsEngine is the Lua engine (luaEngineCtx) and the current
// libraries (curr_functions_lib_ctx).
type functionsEngine struct {
	e       *scriptEngine
	cur     *fnCtx
	loading *fnLib      // the library whose code runs now (the load ctx)
	loadAPI *lua.LTable // the load-time redis table
}

// functions is the server's functions engine, created on first use.
func (s *Server) functions() *functionsEngine {
	if s.fns == nil {
		s.fns = s.newFunctionsEngine()
	}
	return s.fns
}

func (s *Server) newFunctionsEngine() *functionsEngine {
	e := s.newScriptEngine()
	e.chunk = "user_function"
	fe := &functionsEngine{e: e, cur: newFnCtx()}
	L := e.L
	g := e.globals
	runRedis := e.lib("redis")

	// The load-time redis table (LIBRARY_API): reading a missing field or
	// writing any fails as with the globals.
	api := L.NewTable()
	api.RawSetString("register_function", L.NewFunction(fe.registerFunction))
	api.RawSetString("log", runRedis.RawGetString("log"))
	for _, k := range []string{"LOG_DEBUG", "LOG_VERBOSE", "LOG_NOTICE", "LOG_WARNING", "REDIS_VERSION", "REDIS_VERSION_NUM"} {
		api.RawSetString(k, runRedis.RawGetString(k))
	}
	L.SetMetatable(api, guardMeta(L, func(k lua.LValue) lua.LValue { return lua.LNil }))
	fe.loadAPI = L.NewTable()
	fe.loadAPI.RawSetString("redis", api)

	// One globals proxy for load and run time, as Redis swaps the
	// metatable's __index of its globals: while a library loads, only the
	// load API is visible.
	L.SetMetatable(e.env, guardMeta(L, func(k lua.LValue) lua.LValue {
		if fe.loading != nil {
			return fe.loadAPI.RawGet(k)
		}
		return g.RawGet(k)
	}))
	return fe
}

// guardMeta is luaSetErrorMetatable + the readonly protection: a missing
// key read is an error, and so is every write.
func guardMeta(L *lua.LState, get func(k lua.LValue) lua.LValue) *lua.LTable {
	mt := L.NewTable()
	mt.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		k := L.Get(2)
		v := get(k)
		if v == lua.LNil {
			L.RaiseError("Script attempted to access nonexistent global variable '%s'", k.String())
		}
		L.Push(v)
		return 1
	}))
	mt.RawSetString("__newindex", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError("Attempt to modify a readonly table")
		return 0
	}))
	mt.RawSetString("__metatable", lua.LFalse)
	return mt
}

// validName is functionsVerifyName: [a-zA-Z0-9_]+.
func validName(n string) bool {
	if n == "" {
		return false
	}
	for i := 0; i < len(n); i++ {
		ch := n[i]
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '_') {
			return false
		}
	}
	return true
}

// libMeta is functionExtractLibMetaData: the engine and name of the
// shebang ("#!lua name=mylib") and the code after it (from its newline).
func libMeta(payload string) (engine, name, code string, err string) {
	if !strings.HasPrefix(payload, "#!") {
		return "", "", "", "Missing library metadata"
	}
	nl := strings.IndexByte(payload, '\n')
	if nl < 0 {
		return "", "", "", "Invalid library metadata"
	}
	parts, perr := redisutil.SplitArgs(payload[:nl])
	if perr != nil || len(parts) == 0 {
		return "", "", "", "Invalid library metadata"
	}
	engine = parts[0][2:]
	found := false
	for _, p := range parts[1:] {
		if len(p) >= 5 && strings.EqualFold(p[:5], "name=") {
			if found {
				return "", "", "", "Invalid metadata value, name argument was given multiple times"
			}
			name, found = p[5:], true
			continue
		}
		return "", "", "", "Invalid metadata value given: " + p
	}
	if !found {
		return "", "", "", "Library name was not given"
	}
	return engine, name, payload[nl:], ""
}

// create is functionsCreateWithLibraryCtx: it compiles the library in
// payload into x (replacing a library of the same name with replace) and
// returns its name, or the error text without "ERR ".
func (fe *functionsEngine) create(payload string, replace bool, x *fnCtx, timeout time.Duration) (string, string) {
	engine, name, code, msg := libMeta(payload)
	if msg != "" {
		return "", msg
	}
	if !validName(name) {
		return "", "Library names can only contain letters, numbers, or underscores(_) and must be at least one character long"
	}
	if !strings.EqualFold(engine, "lua") {
		return "", "Engine '" + engine + "' not found"
	}
	old := x.libs[name]
	if old != nil && !replace {
		return "", "Library '" + name + "' already exists"
	}
	if old != nil {
		x.unlink(old)
	}
	fail := func(msg string) (string, string) {
		if old != nil {
			x.link(old)
		}
		return "", msg
	}
	lib := &fnLib{name: name, code: payload, funcs: map[string]*fnInfo{}}
	if msg := fe.runLoad(lib, code, timeout); msg != "" {
		return fail(msg)
	}
	if len(lib.funcs) == 0 {
		return fail("No functions registered")
	}
	for _, n := range sortedFnNames(lib) {
		if x.funcs[n] != nil {
			return fail("Function " + n + " already exists")
		}
	}
	x.link(lib)
	return name, ""
}

func sortedFnNames(l *fnLib) []string {
	out := make([]string, 0, len(l.funcs))
	for n := range l.funcs {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// runLoad is luaEngineCreate: compile code and run it with the load API,
// the functions it registers going to lib.
func (fe *functionsEngine) runLoad(lib *fnLib, code string, timeout time.Duration) string {
	L := fe.e.L
	code, cmsg := vlua.SyntaxCheckStrip(code, "user_function")
	if cmsg != "" {
		return "Error compiling function: " + cmsg
	}
	fn, err := L.Load(strings.NewReader(code), "user_function")
	if err != nil {
		msg := err.Error()
		if ae, ok := err.(*lua.ApiError); ok {
			msg = ae.Object.String()
		}
		return "Error compiling function: " + msg
	}
	fn.Env = fe.e.env
	fe.loading = lib
	if fe.e.cancel != nil { // the scripts' context (scripting_busy.go) is not the load's
		fe.e.dropContext()
	}
	var cancel context.CancelFunc
	if timeout > 0 {
		var ctx context.Context
		ctx, cancel = context.WithTimeout(context.Background(), timeout)
		L.SetContext(ctx)
	}
	L.Push(fn)
	err = L.PCall(0, 0, nil)
	if cancel != nil {
		cancel()
		L.RemoveContext()
	}
	fe.loading = nil
	L.SetTop(0)
	if err == nil {
		return ""
	}
	var obj lua.LValue = lua.LString(err.Error())
	ae, isAPI := err.(*lua.ApiError)
	if isAPI {
		obj = ae.Object
	}
	var msg string
	switch {
	case isAPI && ae.Type == lua.ApiErrorRun && ae.Cause != nil && errors.Is(ae.Cause, context.DeadlineExceeded),
		timeout > 0 && strings.Contains(err.Error(), "context deadline exceeded"):
		msg = "ERR FUNCTION LOAD timeout"
	default:
		if t, ok := obj.(*lua.LTable); ok {
			if ev, ok := t.RawGetString("err").(lua.LString); ok {
				msg = string(ev)
			} else {
				msg = "ERR " + lua.LVAsString(obj)
			}
		} else {
			msg = "ERR " + obj.String()
		}
	}
	return "Error registering functions: " + msg
}

// registerFunction is redis.register_function (luaRegisterFunction).
func (fe *functionsEngine) registerFunction(L *lua.LState) int {
	e := fe.e
	lib := fe.loading
	if lib == nil {
		e.libError(L, "redis.register_function can only be called on FUNCTION LOAD command")
	}
	var f fnInfo
	switch L.GetTop() {
	case 1:
		t, ok := L.Get(1).(*lua.LTable)
		if !ok {
			e.libError(L, "calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments).")
		}
		var errMsg string
		t.ForEach(func(k, v lua.LValue) {
			if errMsg != "" {
				return
			}
			ks, ok := luaStringish(k)
			if !ok {
				errMsg = "named argument key given to redis.register_function is not a string"
				return
			}
			switch strings.ToLower(ks) {
			case "function_name":
				if f.name, ok = luaStringish(v); !ok {
					errMsg = "function_name argument given to redis.register_function must be a string"
				}
			case "description":
				if f.desc, ok = luaStringish(v); !ok {
					errMsg = "description argument given to redis.register_function must be a string"
				}
				f.hasDesc = true
			case "callback":
				cb, ok := v.(*lua.LFunction)
				if !ok {
					errMsg = "callback argument given to redis.register_function must be a function"
					return
				}
				f.fn = cb
			case "flags":
				ft, ok := v.(*lua.LTable)
				if !ok {
					errMsg = "flags argument to redis.register_function must be a table representing function flags"
					return
				}
				for j := 1; ; j++ {
					fv := ft.RawGetInt(j)
					if fv == lua.LNil {
						break
					}
					fs, ok := luaStringish(fv)
					found := false
					for _, fl := range fnFlagNames {
						if ok && strings.EqualFold(fl.name, fs) {
							f.flags |= fl.f
							found = true
							break
						}
					}
					if !found {
						errMsg = "unknown flag given"
						return
					}
				}
			default:
				errMsg = "unknown argument given to redis.register_function"
			}
		})
		if errMsg == "" && f.name == "" && !hasKey(t, "function_name") {
			errMsg = "redis.register_function must get a function name argument"
		}
		if errMsg == "" && f.fn == nil {
			errMsg = "redis.register_function must get a callback argument"
		}
		if errMsg != "" {
			e.libError(L, errMsg)
		}
	case 2:
		name, ok := luaStringish(L.Get(1))
		if !ok {
			e.libError(L, "first argument to redis.register_function must be a string")
		}
		cb, ok := L.Get(2).(*lua.LFunction)
		if !ok {
			e.libError(L, "second argument to redis.register_function must be a function")
		}
		f.name, f.fn = name, cb
	default:
		e.libError(L, "wrong number of arguments to redis.register_function")
	}
	// functionLibCreateFunction (7.0's text names libraries here too)
	if !validName(f.name) {
		e.libError(L, "Library names can only contain letters, numbers, or underscores(_) and must be at least one character long")
	}
	if lib.funcs[f.name] != nil {
		e.libError(L, "Function already exists in the library")
	}
	f.lib = lib
	lib.funcs[f.name] = &f
	return 0
}

func hasKey(t *lua.LTable, key string) bool {
	found := false
	t.ForEach(func(k, _ lua.LValue) {
		if s, ok := luaStringish(k); ok && strings.EqualFold(s, key) {
			found = true
		}
	})
	return found
}

// luaStringish is lua_isstring + lua_tostring: strings and numbers.
func luaStringish(v lua.LValue) (string, bool) {
	switch x := v.(type) {
	case lua.LString:
		return string(x), true
	case lua.LNumber:
		return vlua.FormatNumber(float64(x)), true
	}
	return "", false
}

// --- INFO and persistence -----------------------------------------------------

// functionCounts is INFO's number_of_functions and number_of_libraries.
func (s *Server) functionCounts() (funcs, libs int) {
	if s.fns == nil {
		return 0, 0
	}
	return len(s.fns.cur.funcs), len(s.fns.cur.libs)
}

// functionsMemory is used_memory_functions (functionsMemoryEngine): the
// bytes the libraries' structures hold, their names, codes and
// descriptions, counted as Redis counts its dict entries and sds strings
// (their Lua state's memory is not counted: gopher-lua does not account
// for it).
func (s *Server) functionsMemory() int64 {
	if s.fns == nil {
		return 0
	}
	const libOverhead, fnOverhead, entry = 64, 48, 24
	var n int64
	for _, l := range s.fns.cur.libs {
		n += libOverhead + entry + int64(len(l.name)+len(l.code))
		for _, f := range l.funcs {
			n += fnOverhead + 2*entry + int64(len(f.name)+len(f.desc))
		}
	}
	return n
}

// functionCodes are the libraries written to an RDB (rdbSaveFunctions).
func (s *Server) functionCodes() []string {
	if s.fns == nil {
		return nil
	}
	return s.fns.cur.codes()
}

// loadFunctionCodes installs the libraries an RDB held (rdbFunctionLoad
// for each, the master's or the file's code trusted: no load timeout).
// Unless merge, they replace every current library (the dataset an RDB
// load replaces includes the functions: emptyData); with merge a library
// of the same name is replaced (RDBFLAGS_ALLOW_DUP).
func (s *Server) loadFunctionCodes(codes []string, merge bool) error {
	if len(codes) == 0 && s.fns == nil {
		return nil
	}
	fe := s.functions()
	x := newFnCtx()
	if merge {
		x = fe.cur
	}
	for _, code := range codes {
		if _, msg := fe.create(code, merge, x, 0); msg != "" {
			s.log.Warn().Msgf("Failed loading library, %s", msg)
			return errors.New("Failed loading library, " + msg)
		}
	}
	fe.cur = x
	return nil
}
