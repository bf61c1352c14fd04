package lua

import (
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"unsafe"

	lua "github.com/yuin/gopher-lua"
)

// Lua 5.1's wording for the runtime errors the gopher-lua VM raises itself.
//
// gopher-lua words them its own way ("cannot perform add operation between
// number and nil", "attempt to index a non-table object(nil) with key 'x'",
// "attempt to call a non-function object", "bad argument #1 to rep (...)").
// Redis 7.0 answers with Lua 5.1's (luaG_typeerror and friends), which name
// the variable at fault: "attempt to index local 't' (a nil value)". The
// error handler below runs while the failing frame is still on the stack
// (PCall calls its error function before unwinding), finds the failing
// instruction and its operands, and rewrites the message as Lua 5.1's
// ldebug.c would: getobjname over the function's bytecode (gopher-lua
// compiles to Lua 5.1's instruction set) and its debug information.

// frameView is what the handler reads of one of gopher-lua's call frames
// (unexported: read through reflection).
type frameView struct {
	fn        *lua.LFunction
	pc        int // the instruction being executed (Lua's currentpc)
	localBase int
	nargs     int
	tailCall  int
	parent    reflect.Value
}

func viewFrame(f reflect.Value) (frameView, bool) {
	if !f.IsValid() || f.IsNil() {
		return frameView{}, false
	}
	s := f.Elem()
	fnp := s.FieldByName("Fn")
	if fnp.IsNil() {
		return frameView{}, false
	}
	return frameView{
		fn:        (*lua.LFunction)(unsafe.Pointer(fnp.Pointer())),
		pc:        int(s.FieldByName("Pc").Int()) - 1,
		localBase: int(s.FieldByName("LocalBase").Int()),
		nargs:     int(s.FieldByName("NArgs").Int()),
		tailCall:  int(s.FieldByName("TailCall").Int()),
		parent:    s.FieldByName("Parent"),
	}, true
}

// stackFrame is the frame at level (0: the running function), as
// LState.GetStack counts them.
func stackFrame(L *lua.LState, level int) (frameView, bool) {
	dbg, ok := L.GetStack(level)
	if !ok {
		return frameView{}, false
	}
	return viewFrame(reflect.ValueOf(dbg).Elem().FieldByName("frame"))
}

// register is the value of register r of frame f.
func register(L *lua.LState, f frameView, r int) lua.LValue {
	reg := reflect.ValueOf(L).Elem().FieldByName("reg").Elem().FieldByName("array")
	i := f.localBase + r
	if i < 0 || i >= reg.Len() {
		return lua.LNil
	}
	el := reg.Index(i)
	v, _ := reflect.NewAt(el.Type(), unsafe.Pointer(el.UnsafeAddr())).Elem().Interface().(lua.LValue)
	if v == nil {
		return lua.LNil
	}
	return v
}

// gopher-lua's instruction layout (opcode.go): opcode in the top 6
// bits, then A (8), C (9) and B (9); Bx is the low 18 bits.
func opcode(i uint32) int { return int(i >> 26) }
func argA(i uint32) int   { return int(i>>18) & 0xff }
func argB(i uint32) int   { return int(i & 0x1ff) }
func argC(i uint32) int   { return int(i>>9) & 0x1ff }
func argBx(i uint32) int  { return int(i & 0x3ffff) }
func argSbx(i uint32) int { return argBx(i) - (1<<18-1)>>1 }

const bitRK = 1 << 8

// localName is luaF_getlocalname: the name of the n-th (1-based) local
// active at pc.
func localName(p *lua.FunctionProto, n, pc int) string {
	for _, lv := range p.DbgLocals {
		if lv.StartPc > pc {
			break
		}
		if pc < lv.EndPc {
			n--
			if n == 0 {
				return lv.Name
			}
		}
	}
	return ""
}

// symbexec is the part of Lua 5.1's symbexec getobjname uses: the last
// instruction before lastpc that changed reg, following forward jumps;
// -1 when none.
func symbexec(p *lua.FunctionProto, lastpc, reg int) int {
	last := -1
	for pc := 0; pc < lastpc && pc < len(p.Code); pc++ {
		i := p.Code[pc]
		a, b, c := argA(i), argB(i), argC(i)
		switch opcode(i) {
		case lua.OP_LOADNIL:
			if a <= reg && reg <= b {
				last = pc
			}
			continue
		case lua.OP_TFORLOOP:
			if reg >= a+2 {
				last = pc
			}
			continue
		case lua.OP_CALL, lua.OP_TAILCALL:
			if reg >= a {
				last = pc
			}
			continue
		case lua.OP_JMP:
			if dest := pc + 1 + argSbx(i); pc < dest && dest <= lastpc {
				pc += argSbx(i)
			}
			continue
		case lua.OP_MOVEN:
			if reg == a || (reg > a && reg <= a+c) {
				last = pc
			}
			continue
		case lua.OP_SELF:
			if reg == a+1 {
				last = pc
			}
		case lua.OP_SETGLOBAL, lua.OP_SETUPVAL, lua.OP_SETTABLE, lua.OP_SETTABLEKS, lua.OP_EQ, lua.OP_LT, lua.OP_LE,
			lua.OP_TEST, lua.OP_RETURN, lua.OP_FORPREP, lua.OP_SETLIST, lua.OP_CLOSE, lua.OP_NOP:
			continue
		case lua.OP_LOADBOOL:
			if reg == a {
				last = pc
			}
			if c != 0 {
				pc++
			}
			continue
		case lua.OP_FORLOOP:
			if reg == a || reg == a+3 {
				last = pc
			}
			continue
		case lua.OP_VARARG:
			if reg >= a {
				last = pc
			}
			continue
		}
		_ = b
		if reg == a {
			last = pc
		}
	}
	return last
}

// kname is a constant operand's name when it is a string, else "?".
func kname(p *lua.FunctionProto, rk int) string {
	if rk&bitRK != 0 {
		if k := rk &^ bitRK; k < len(p.Constants) {
			if s, ok := p.Constants[k].(lua.LString); ok {
				return string(s)
			}
		}
	}
	return "?"
}

// objName is getobjname: what register reg of frame f holds at pc (kind
// "local", "global", "field", "upvalue" or "method", and the name), or "".
func objName(f frameView, pc, reg int) (kind, name string) {
	p := f.fn.Proto
	if p == nil {
		return "", ""
	}
	if n := localName(p, reg+1, pc); n != "" {
		return "local", n
	}
	return symbolicName(f, pc, reg)
}

// symbolicName is getobjname past the locals: what the instruction that
// last set reg loaded into it.
func symbolicName(f frameView, pc, reg int) (kind, name string) {
	p := f.fn.Proto
	at := symbexec(p, pc, reg)
	if at < 0 {
		return "", ""
	}
	i := p.Code[at]
	switch opcode(i) {
	case lua.OP_GETGLOBAL:
		if k := argBx(i); k < len(p.Constants) {
			return "global", lua.LVAsString(p.Constants[k])
		}
	case lua.OP_MOVE, lua.OP_MOVEN:
		a, b := argA(i), argB(i)
		if opcode(i) == lua.OP_MOVEN && reg != a {
			return "", ""
		}
		if b < a {
			return objName(f, at, b)
		}
	case lua.OP_GETTABLE, lua.OP_GETTABLEKS:
		return "field", kname(p, argC(i))
	case lua.OP_GETUPVAL:
		if u := argB(i); u < len(p.DbgUpvalues) {
			return "upvalue", p.DbgUpvalues[u]
		}
		return "upvalue", "?"
	case lua.OP_SELF:
		return "method", kname(p, argC(i))
	}
	return "", ""
}

// typeDesc is luaG_typeerror's operand: "local 'a' (a nil value)", or
// "a nil value" for a constant or a temporary without a name.
func typeDesc(L *lua.LState, f frameView, rk int) string {
	var v lua.LValue
	inStack := rk&bitRK == 0
	if inStack {
		v = register(L, f, rk)
	} else if k := rk &^ bitRK; k < len(f.fn.Proto.Constants) {
		v = f.fn.Proto.Constants[k]
	} else {
		v = lua.LNil
	}
	t := v.Type().String()
	if inStack {
		if kind, name := objName(f, f.pc, rk); kind != "" {
			return kind + " '" + name + "' (a " + t + " value)"
		}
	}
	return "a " + t + " value"
}

func isNumberLike(v lua.LValue) bool {
	switch x := v.(type) {
	case lua.LNumber:
		return true
	case lua.LString:
		_, err := strconv.ParseFloat(strings.TrimSpace(string(x)), 64)
		return err == nil || strings.HasPrefix(strings.TrimSpace(string(x)), "0x")
	}
	return false
}

func isStringLike(v lua.LValue) bool {
	switch v.(type) {
	case lua.LNumber, lua.LString:
		return true
	}
	return false
}

var (
	rePosPrefix = regexp.MustCompile(`^[^\n]*?:\d+: `)
	reBadArg    = regexp.MustCompile(`^bad argument #(\d+) to (\S+) \((.*)\)$`)
	reCompare   = regexp.MustCompile(`^attempt to compare (\w+) with (\w+)$`)
)

// lua51Wording rewrites msg, the error gopher-lua raised in the frame at
// level 1 of L (the handler runs at level 0), in Lua 5.1's words; msg
// comes back unchanged when it is not one of gopher-lua's own.
func lua51Wording(L *lua.LState, msg string, forwarders map[*lua.LFunction]bool) string {
	return lua51WordingAt(L, 1, msg, forwarders)
}

// lua51WordingAt is lua51Wording for the error raised by the function
// at level (GetStack's) of L's stack.
func lua51WordingAt(L *lua.LState, level int, msg string, forwarders map[*lua.LFunction]bool) string {
	prefix := rePosPrefix.FindString(msg)
	body := msg[len(prefix):]
	f, ok := stackFrame(L, level)
	if !ok {
		return msg
	}
	if f.fn.IsG {
		return goFuncWording(L, f, prefix, body, msg, forwarders)
	}
	p := f.fn.Proto
	if p == nil || f.pc < 0 || f.pc >= len(p.Code) {
		return msg
	}
	i := p.Code[f.pc]
	a, b, c := argA(i), argB(i), argC(i)
	op := opcode(i)
	switch {
	case strings.HasPrefix(body, "cannot perform concat operation between"):
		if op != lua.OP_CONCAT {
			return msg
		}
		culprit := -1
		for r := c; r >= b; r-- {
			if !isStringLike(register(L, f, r)) {
				culprit = r
				break
			}
		}
		if culprit < 0 {
			return msg
		}
		if culprit == c && c-1 >= b && !isStringLike(register(L, f, c-1)) {
			culprit = c - 1
		}
		return prefix + "attempt to concatenate " + typeDesc(L, f, culprit)
	case strings.HasPrefix(body, "cannot perform "), body == "__unm undefined":
		var culprit int
		switch op {
		case lua.OP_ADD, lua.OP_SUB, lua.OP_MUL, lua.OP_DIV, lua.OP_MOD, lua.OP_POW:
			culprit = c
			if !isNumberLike(rkValue(L, f, b)) {
				culprit = b
			}
		case lua.OP_UNM:
			culprit = b
		default:
			return msg
		}
		return prefix + "attempt to perform arithmetic on " + typeDesc(L, f, culprit)
	case body == "__len undefined":
		if op != lua.OP_LEN {
			return msg
		}
		return prefix + "attempt to get length of " + typeDesc(L, f, b)
	case strings.HasPrefix(body, "attempt to index a non-table object("):
		switch op {
		case lua.OP_GETTABLE, lua.OP_GETTABLEKS, lua.OP_SELF:
			return prefix + "attempt to index " + typeDesc(L, f, b)
		case lua.OP_SETTABLE, lua.OP_SETTABLEKS:
			return prefix + "attempt to index " + typeDesc(L, f, a)
		}
		return msg
	case body == "attempt to call a non-function object":
		switch op {
		case lua.OP_CALL, lua.OP_TAILCALL, lua.OP_TFORLOOP:
			return prefix + "attempt to call " + typeDesc(L, f, a)
		}
		return msg
	case body == "for statement init must be a number":
		return prefix + "'for' initial value must be a number"
	case body == "for statement limit must be a number":
		return prefix + "'for' limit must be a number"
	case body == "for statement step must be a number":
		return prefix + "'for' step must be a number"
	}
	if m := reCompare.FindStringSubmatch(body); m != nil && m[1] == m[2] {
		return prefix + "attempt to compare two " + m[1] + " values"
	}
	return msg
}

func rkValue(L *lua.LState, f frameView, rk int) lua.LValue {
	if rk&bitRK != 0 {
		if k := rk &^ bitRK; k < len(f.fn.Proto.Constants) {
			return f.fn.Proto.Constants[k]
		}
		return lua.LNil
	}
	return register(L, f, rk)
}

// goFuncWording is luaL_argerror for a Go function f: "bad argument #n to
// 'name' (...)", the name as the calling instruction gives it ("?" when a
// Go function such as pcall called it), #n less one for a method call,
// "got no value" for a missing argument, and the position of f's caller
// only when it is Lua code.
func goFuncWording(L *lua.LState, f frameView, prefix, body, msg string, forwarders map[*lua.LFunction]bool) string {
	// luaG_runerror adds a position only in Lua code: a comparison made
	// by a Go function (table.sort) has none.
	if m := reCompare.FindStringSubmatch(body); m != nil {
		if m[1] == m[2] {
			return "attempt to compare two " + m[1] + " values"
		}
		return body
	}
	if strings.HasSuffix(body, " in table for concat") {
		return prefix + strings.TrimSuffix(body, "concat") + "'concat'"
	}
	wrongNumber := body == "wrong number of arguments"
	if wrongNumber { // math.max, math.min: luaL_checknumber(L, 1)
		body = "bad argument #1 to ? (number expected, got no value)"
	}
	m := reBadArg.FindStringSubmatch(body)
	if m == nil {
		return msg
	}
	n, _ := strconv.Atoi(m[1])
	extra := m[3]
	if strings.HasSuffix(extra, ", got nil)") || strings.HasSuffix(extra, "got nil") {
		// (struct.pack pushes a nil after its arguments: the one after
		// the last is that nil)
		if n > f.nargs && !(n >= 2 && n == f.nargs+1 && isStructPack(f.fn)) {
			extra = strings.TrimSuffix(extra, "nil") + "no value"
		}
	}
	name, namewhat := "?", ""
	caller, ok := viewFrame(f.parent)
	for ok && caller.fn.IsG && forwarders[caller.fn] {
		caller, ok = viewFrame(caller.parent)
	}
	if ok && !caller.fn.IsG && caller.fn.Proto != nil && caller.pc >= 0 && caller.pc < len(caller.fn.Proto.Code) {
		i := caller.fn.Proto.Code[caller.pc]
		switch opcode(i) {
		case lua.OP_CALL, lua.OP_TAILCALL, lua.OP_TFORLOOP:
			kind, nm := objName(caller, caller.pc, argA(i))
			if kind == "local" && strings.HasPrefix(nm, "(") {
				// gopher-lua activates a generic for's hidden locals
				// before the call that makes the generator; Lua 5.1
				// after it.
				kind, nm = symbolicName(caller, caller.pc, argA(i))
			}
			if kind != "" {
				name, namewhat = nm, kind
			}
		}
	} else {
		prefix = ""
	}
	if wrongNumber && name == "insert" { // table.insert's own check
		return prefix + "wrong number of arguments to 'insert'"
	}
	if namewhat == "method" {
		n--
		if n == 0 {
			return prefix + "calling '" + name + "' on bad self (" + extra + ")"
		}
	}
	return prefix + "bad argument #" + strconv.Itoa(n) + " to '" + name + "' (" + extra + ")"
}

// wordError is the error handler (errHandler): a string error gopher-lua
// raised gets Lua 5.1's wording; error()'s own value and tables pass.
func (e *Engine) wordError(L *lua.LState) int {
	obj := L.Get(1)
	if s, ok := obj.(lua.LString); ok {
		if r, ok := e.errRaised.(lua.LString); !ok || r != s {
			w := lua51Wording(L, string(s), e.forwarders)
			if rePosPrefix.MatchString(string(s)) && !rePosPrefix.MatchString(w) {
				// The message lost its position (raised in a Go
				// function): the reply's "on <source>:<line>." is the
				// calling Lua code's, as Redis's error handler finds it.
				e.noteCaller(L)
			} else if w == "C stack overflow" {
				// raised at a Go function's call (lua.MaxCCalls)
				e.noteCaller(L)
			} else if f, ok := stackFrame(L, 1); ok && f.fn.IsG && !rePosPrefix.MatchString(w) {
				// A Go function's error without a position (lua_settable's
				// "table index is nil" in cmsgpack.unpack): Redis's error
				// handler takes the line of the function's caller.
				e.noteCaller(L)
			}
			obj = lua.LString(w)
		}
	}
	L.Push(obj)
	return 1
}

// threadError words the error that ends a coroutine as wordError words
// the main thread's (lua.Global.ThreadError: the raising function is at
// level 0 of the coroutine's stack).
func (e *Engine) threadError(L *lua.LState, obj lua.LValue) lua.LValue {
	s, ok := obj.(lua.LString)
	if !ok {
		return obj
	}
	if r, ok := e.errRaised.(lua.LString); ok && r == s {
		return obj
	}
	return lua.LString(lua51WordingAt(L, 0, string(s), e.forwarders))
}

// luaPCall is the base library's pcall under errHandler, as Redis 7.0's
// luaRedisPcall wraps it: an error that is a table with a string (or
// number) err field, as redis.call and the redis library raise, is
// returned as that field, so that pcall(redis.call, ...) gives the
// message as in Redis 6 (xpcall's handler still sees the table).
func (e *Engine) luaPCall(L *lua.LState) int {
	if L.GetTop() == 0 {
		// Lua 5.1.5's luaB_pcall does not check for a function: with no
		// arguments it calls the stack slot above them, which in Redis
		// holds a boolean.
		L.Push(lua.LFalse)
		L.Push(lua.LString("attempt to call a boolean value"))
		return 2
	}
	v := L.Get(1)
	if v.Type() != lua.LTFunction && L.GetMetaField(v, "__call").Type() != lua.LTFunction {
		L.Push(lua.LFalse)
		L.Push(lua.LString("attempt to call a " + v.Type().String() + " value"))
		return 2
	}
	nargs := L.GetTop() - 1
	e.protected++
	defer func() { e.protected-- }()
	L.Insert(e.guardFn, 1)
	err := L.PCall(nargs+1, lua.MultRet, e.errHandler)
	if err != nil {
		shrinkStack(L)
	}
	if err != nil {
		L.Push(lua.LFalse)
		if aerr, ok := err.(*lua.ApiError); ok {
			obj := aerr.Object
			if t, ok := obj.(*lua.LTable); ok {
				switch m := t.RawGetString("err"); m.Type() {
				case lua.LTString, lua.LTNumber:
					obj = m
				}
			}
			L.Push(obj)
		} else {
			L.Push(lua.LString(err.Error()))
		}
		return 2
	}
	L.Insert(lua.LTrue, 1)
	return L.GetTop()
}

// luaXPCall is xpcall(f, handler): the handler sees the error in Lua
// 5.1's words.
func (e *Engine) luaXPCall(L *lua.LState) int {
	L.CheckAny(2) // luaB_xpcall: any handler; a bad one fails when called
	fn := L.Get(1)
	handler := L.Get(2)
	top := L.GetTop()
	L.Push(e.guardFn)
	L.Push(fn)
	wrapped := L.NewFunction(func(L *lua.LState) int {
		e.wordError(L)
		msg := L.Get(-1)
		L.SetTop(0)
		if handler.Type() != lua.LTFunction {
			L.Push(lua.LString("error in error handling"))
			return 1
		}
		L.Push(handler)
		L.Push(msg)
		uncounted(L, 1) // Lua 5.1 calls the handler itself
		L.Call(1, 1)
		uncounted(L, -1)
		return 1
	})
	e.protected++
	defer func() { e.protected-- }()
	err := L.PCall(1, lua.MultRet, wrapped)
	if err != nil {
		shrinkStack(L)
	}
	if err != nil {
		L.Push(lua.LFalse)
		if aerr, ok := err.(*lua.ApiError); ok {
			if aerr.Type == lua.ApiErrorPanic && aerr.Object == lua.LString(gopherOverflow) {
				// The handler overflowed the room overflow gave it:
				// LUA_ERRERR.
				L.Push(lua.LString("error in error handling"))
				return 2
			}
			L.Push(aerr.Object)
		} else {
			L.Push(lua.LString(err.Error()))
		}
		return 2
	}
	L.Insert(lua.LTrue, top+1)
	return L.GetTop() - top
}

// forwarder makes a wrapper function that calls the library function it
// stands for: argument errors raised below it are worded as raised by the
// function the script called.
func (e *Engine) forwarder(f lua.LGFunction) *lua.LFunction {
	fn := e.L.NewFunction(f)
	if e.forwarders == nil {
		e.forwarders = map[*lua.LFunction]bool{}
	}
	e.forwarders[fn] = true
	return fn
}
