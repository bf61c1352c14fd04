package server

import (
	"errors"
	"sort"
	"strings"
	"time"

	"github.com/vigil-kv/vigil/internal/redisutil"
	vlua "github.com/vigil-kv/vigil/server/lua"
)

// Redis 7.0 functions (functions.c, function_lua.c): libraries of Lua
// functions loaded with FUNCTION LOAD, called with FCALL / FCALL_RO, kept
// in RDB files (RDB_OPCODE_FUNCTION2), dumped and restored with FUNCTION
// DUMP / RESTORE. The engine (server/lua's functions.go, Redis's
// function_lua.c) has its own Lua state, as Redis's Lua engine has its own
// lua_State; this file keeps the libraries.

// fnLoadTimeout is LOAD_TIMEOUT_MS: a library's load-time code is stopped
// after it (not for the master's or the AOF's FUNCTION LOAD).
const fnLoadTimeout = 500 * time.Millisecond

// fnLib is a library (functionLibInfo): its name and whole code, the
// shebang included.
type fnLib struct {
	name  string
	code  string
	funcs map[string]*vlua.Function
}

// fnCtx is a set of libraries (functionsLibCtx). funcs is keyed by the
// lowercased function name (functionDictType compares names ignoring
// case: FCALL TEST calls test); library names and a library's own
// function names keep their case.
type fnCtx struct {
	libs  map[string]*fnLib
	funcs map[string]*vlua.Function
}

// fnKey is a function's key in fnCtx.funcs.
func fnKey(name string) string { return strings.ToLower(name) }

func newFnCtx() *fnCtx {
	return &fnCtx{libs: map[string]*fnLib{}, funcs: map[string]*vlua.Function{}}
}

func (x *fnCtx) link(l *fnLib) {
	x.libs[l.name] = l
	for n, f := range l.funcs {
		x.funcs[fnKey(n)] = f
	}
}

func (x *fnCtx) unlink(l *fnLib) {
	delete(x.libs, l.name)
	for n := range l.funcs {
		delete(x.funcs, fnKey(n))
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
	h   *luaHost
	cur *fnCtx
}

// functions is the server's functions engine, created on first use.
func (s *Server) functions() *functionsEngine {
	if s.fns == nil {
		s.fns = s.newFunctionsEngine()
	}
	return s.fns
}

func (s *Server) newFunctionsEngine() *functionsEngine {
	h := s.newLuaHost(functionClientID)
	h.e.EnableFunctions()
	return &functionsEngine{h: h, cur: newFnCtx()}
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
	if !vlua.ValidName(name) {
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
	funcs, msg := fe.h.e.LoadLibrary(code, timeout)
	if msg != "" {
		return fail(msg)
	}
	lib := &fnLib{name: name, code: payload, funcs: funcs}
	if len(lib.funcs) == 0 {
		return fail("No functions registered")
	}
	for _, n := range sortedFnNames(lib) {
		if x.funcs[fnKey(n)] != nil {
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
			n += fnOverhead + 2*entry + int64(len(f.Name)+len(f.Desc))
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
	if merge || s.rdb.keepFunctions {
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
