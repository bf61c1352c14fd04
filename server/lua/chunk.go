package lua

// Chunk names as Lua 5.1 gives them. A chunk's source name ("@user_script"
// for a script, the code itself for loadstring(s), "=(load)" for load) is
// shown two ways in Redis's errors: shortened by luaO_chunkid at the front
// of a message ("user_script:1:", `[string "error(1)"]:1:`), and whole in
// the error handler's "on <source>:<line>." (debug.getinfo's source).
// gopher-lua keeps one name per function prototype (SourceName): the
// engine gives it the short form, and remembers the whole one for the
// names it cannot rebuild from it.

import (
	"reflect"
	"strconv"
	"strings"
	"unsafe"

	lua "github.com/yuin/gopher-lua"
)

// luaIDSize is LUA_IDSIZE, the size of the buffer luaO_chunkid fills.
const luaIDSize = 60

// chunkSrcMax bounds the remembered source names: a script that loads
// many chunks in a loop does not grow the map without end (a name
// forgotten is then shown in its short form).
const chunkSrcMax = 256

// luaChunkID is luaO_chunkid(source, LUA_IDSIZE): "=name" gives name (at
// most 59 bytes), "@file" the file (its last 52 bytes after "..." when
// longer), anything else `[string "first line"]`, the line cut at 43
// bytes with "..." when the source goes on. A NUL ends source, as in C.
func luaChunkID(source string) string {
	if i := strings.IndexByte(source, 0); i >= 0 {
		source = source[:i]
	}
	switch {
	case strings.HasPrefix(source, "="):
		s := source[1:]
		if len(s) > luaIDSize-1 {
			s = s[:luaIDSize-1]
		}
		return s
	case strings.HasPrefix(source, "@"):
		s := source[1:]
		if n := luaIDSize - len(" '...' ") - 1; len(s) > n {
			s = "..." + s[len(s)-n:]
		}
		return s
	}
	n := strings.IndexAny(source, "\n\r")
	if n < 0 {
		n = len(source)
	}
	n = min(n, luaIDSize-len(` [string "..."] `)-1)
	if n < len(source) {
		return `[string "` + source[:n] + `..."]`
	}
	return `[string "` + source + `"]`
}

// noteChunk remembers source, the whole name of a chunk whose short name
// is id, unless id gives it back by itself.
func (e *Engine) noteChunk(id, source string) {
	if e.sourceOf(id) == source {
		return
	}
	if e.chunkSrc == nil || len(e.chunkSrc) >= chunkSrcMax {
		e.chunkSrc = make(map[string]string)
	}
	e.chunkSrc[id] = source
}

// sourceOf is the whole source name of the chunk named id in gopher-lua.
func (e *Engine) sourceOf(id string) string {
	if s, ok := e.chunkSrc[id]; ok {
		return s
	}
	switch id {
	case "user_script", "user_function":
		return "@" + id
	}
	if s, ok := strings.CutPrefix(id, `[string "`); ok && strings.HasSuffix(s, `"]`) && !strings.HasSuffix(s, `..."]`) {
		return s[:len(s)-2]
	}
	return id
}

// positionOf finds the chunk (its short name, gopher-lua's) and line at
// the front of an error message ("<id>:<line>: ..."); line 0 when the
// message has none.
func (e *Engine) positionOf(msg string) (id string, line int) {
	at := func(id string) int {
		rest, ok := strings.CutPrefix(msg, id+":")
		if !ok {
			return 0
		}
		i := strings.IndexByte(rest, ':')
		if i <= 0 || strings.Trim(rest[:i], "0123456789") != "" {
			return 0
		}
		n, _ := strconv.Atoi(rest[:i])
		return n
	}
	for _, id := range [...]string{"user_script", "user_function"} {
		if n := at(id); n > 0 {
			return id, n
		}
	}
	best := ""
	for id := range e.chunkSrc {
		if len(id) > len(best) && at(id) > 0 {
			best = id
		}
	}
	if best != "" {
		return best, at(best)
	}
	if strings.HasPrefix(msg, `[string "`) {
		for i := len(`[string "`); ; {
			j := strings.Index(msg[i:], `"]:`)
			if j < 0 {
				break
			}
			id := msg[:i+j+2]
			if n := at(id); n > 0 && !strings.ContainsAny(id, "\r\n") {
				return id, n
			}
			i += j + 1
		}
	}
	return "", 0
}

// luaLoadString is Lua 5.1's loadstring(s [, chunkname]): the chunk is
// named chunkname, or s itself, compiled after Lua 5.1's syntax check (so
// a syntax error reads as Lua 5.1's, `[string "x="]:1: unexpected symbol
// near '<eof>'`), returned as nil and the message on error. The chunk
// runs in the scripts' environment, not in the real globals (gopher-lua
// gives it L's globals table), so that it cannot replace a global for
// every later script.
func (e *Engine) luaLoadString(L *lua.LState) int {
	s := L.CheckString(1)
	source := s
	if L.GetTop() >= 2 && L.Get(2) != lua.LNil {
		source = L.CheckString(2)
	}
	return e.loadChunk(L, s, source)
}

// luaLoad is Lua 5.1's load(reader [, chunkname]) (luaB_load): the pieces
// the reader returns until nil or "" make the chunk, named chunkname or
// "=(load)", compiled as loadstring compiles; an error of the reader, or
// a piece that is not a string, is load's nil and message.
func (e *Engine) luaLoad(L *lua.LState) int {
	source := "=(load)"
	if L.Get(2) != lua.LNil {
		source = checkString(L, 2)
	}
	reader := L.CheckFunction(1)
	var b strings.Builder
	for {
		checkStack(L, 2, "too many nested functions")
		L.Push(reader)
		if err := L.PCall(0, 1, e.readerHandler()); err != nil {
			L.Push(lua.LNil)
			if ae, ok := err.(*lua.ApiError); ok {
				L.Push(ae.Object)
			} else {
				L.Push(lua.LString(err.Error()))
			}
			return 2
		}
		piece := L.Get(-1)
		L.Pop(1)
		switch v := piece.(type) {
		case lua.LString:
			if v == "" {
				return e.loadChunk(L, b.String(), source)
			}
			b.WriteString(string(v))
			continue
		case lua.LNumber:
			b.WriteString(FormatNumber(float64(v)))
			continue
		}
		if piece == lua.LNil {
			return e.loadChunk(L, b.String(), source)
		}
		// luaL_error in the reader, under the same handler
		msg := lua.LString(luaWhere(L, 1) + "reader function must return a string")
		L.Push(lua.LNil)
		L.Push(e.readerHandler())
		L.Push(msg)
		L.Call(1, 1)
		return 2
	}
}

// readerHandler is the error handler of load's reader. lua_load runs
// the reader under the error function of the running pcall: outside any
// pcall or xpcall that is Redis's script error handler, which makes a
// non-table error the table {err = "ERR " .. msg, source =, line =}
// (returned by load as its message); inside, the message stays a string.
func (e *Engine) readerHandler() *lua.LFunction {
	if e.loadHandler == nil {
		e.loadHandler = e.L.NewFunction(func(L *lua.LState) int {
			e.wordError(L)
			obj := L.Get(-1)
			if _, ok := obj.(*lua.LTable); ok || e.protected > 0 {
				return 1
			}
			s := obj.String()
			if obj == lua.LNil {
				s = "nil"
			}
			t := plainErrTable(L, "ERR "+s)
			if id, line := callerPos(L); line > 0 {
				t.RawSetString("source", lua.LString(e.sourceOf(id)))
				t.RawSetString("line", lua.LNumber(line))
			}
			L.Push(t)
			return 1
		})
	}
	return e.loadHandler
}

// loadChunk compiles s as a chunk named source (Lua 5.1's syntax check
// first) and returns the function, or nil and the error message.
func (e *Engine) loadChunk(L *lua.LState, s, source string) int {
	id := luaChunkID(source)
	fn, msg := loadLua(L, s, id)
	if msg != "" {
		L.Push(lua.LNil)
		L.Push(lua.LString(msg))
		return 2
	}
	fn.Env = e.env
	// A main chunk: vararg without Lua 5.1's "arg" table (see Compile).
	fn.Proto.IsVarArg &^= lua.VarArgNeedsArg
	e.noteChunk(id, source)
	L.Push(fn)
	return 1
}

// luaWhere is luaL_where(L, level) called from a Go function (level 1 its
// caller): "<chunk>:<line>: " of the Lua function at that level, "" when
// it is a Go function, has no current line or does not exist. Levels are
// lua_getstack's: a frame that replaced its caller by tail calls stands
// for those lost levels too (which have no position), and guard's frames
// (overflow.go), which Lua 5.1 does not have, are not counted.
func luaWhere(L *lua.LState, level int) string {
	f, ok := stackFrame(L, 0)
	for ok && (level > 0 || isGuard(f.fn)) {
		if !isGuard(f.fn) {
			level--
			if !f.fn.IsG {
				level -= f.tailCall
			}
		}
		f, ok = viewFrame(f.parent)
	}
	if !ok || level < 0 || f.fn.IsG || f.fn.Proto == nil {
		return ""
	}
	p := f.fn.Proto
	if f.pc < 0 || f.pc >= len(p.DbgSourcePositions) || p.DbgSourcePositions[f.pc] <= 0 {
		return ""
	}
	return p.SourceName + ":" + strconv.Itoa(p.DbgSourcePositions[f.pc]) + ": "
}

// loadLua compiles src as the chunk named chunk: Lua 5.1's syntax check,
// then gopher-lua's compiler on the rewritten source (syntaxRewrite). It
// returns the function, or nil and the error message.
func loadLua(L *lua.LState, src, chunk string) (*lua.LFunction, string) {
	code, fresh, msg := syntaxRewrite(src, chunk)
	if msg != "" {
		return nil, msg
	}
	fn, err := L.Load(strings.NewReader(code), chunk)
	if err != nil {
		if ae, ok := err.(*lua.ApiError); ok {
			return nil, ae.Object.String()
		}
		return nil, err.Error()
	}
	if fresh != "" {
		renameFresh(fn.Proto, fresh)
	}
	return fn, ""
}

// renameFresh gives back the name goto where the chunk had it and
// gopher-lua was given fresh: in p's and its nested functions' string
// constants (the key of a method call p:goto()) and debug names (locals,
// upvalues, calls). fresh is no other name or string of the chunk.
func renameFresh(p *lua.FunctionProto, fresh string) {
	sc := reflect.ValueOf(p).Elem().FieldByName("stringConstants")
	strs := *(*[]string)(unsafe.Pointer(sc.UnsafeAddr()))
	for i, k := range p.Constants {
		if s, ok := k.(lua.LString); ok && string(s) == fresh {
			p.Constants[i] = lua.LString("goto")
			if i < len(strs) {
				strs[i] = "goto"
			}
		}
	}
	for _, l := range p.DbgLocals {
		if l.Name == fresh {
			l.Name = "goto"
		}
	}
	for i, u := range p.DbgUpvalues {
		if u == fresh {
			p.DbgUpvalues[i] = "goto"
		}
	}
	for i := range p.DbgCalls {
		if p.DbgCalls[i].Name == fresh {
			p.DbgCalls[i].Name = "goto"
		}
	}
	for _, q := range p.FunctionPrototypes {
		renameFresh(q, fresh)
	}
}
