package lua

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// Lua 5.1's library functions where gopher-lua's accept what Lua 5.1
// refuses or answer otherwise (lbaselib.c, lstrlib.c, ltablib.c,
// lmathlib.c as Redis 7.0 bundles them). patchStdlib replaces them in the
// library tables before protectLibraries wraps those.

// maxCStack is LUAI_MAXCSTACK: lua_checkstack and luaL_checkstack refuse
// to grow a C function's stack past it.
const maxCStack = 8000

// stateOptions are the options of an engine's state: a call stack deep
// enough for Lua 5.1's CallInfo array (lua.CallInfos, which raises "stack
// overflow" at its own depth) and a data stack that grows, so that a
// deep recursion or a long unpack fails with Lua 5.1's error instead of
// overflowing gopher-lua's fixed registry (whose overflow escapes PCall).
func stateOptions() lua.Options {
	return lua.Options{
		SkipOpenLibs:        true,
		CallStackSize:       mainCallStack,
		ThreadCallStackSize: threadCallStack,
		MinimizeStackMemory: true,
		RegistrySize:        lua.RegistrySize,
		RegistryMaxSize:     1 << 21,
		RegistryGrowStep:    lua.RegistryGrowStep,
	}
}

// maxCalls is LUAI_MAXCALLS.
const maxCalls = lua.MaxCalls

// mainCallStack is the frames the main thread's call stack can hold: the
// CallInfo array's largest size (twice maxCalls, while an error handler
// runs after an overflow) and the frames Lua 5.1 has no CallInfo for
// (guard's and xpcall's handler wrapper's, a few a C call at most:
// LUAI_MAXCCALLS bounds them).
const mainCallStack = 2*maxCalls + 4*lua.MaxCCalls

// maxThreadCalls is a coroutine's call depth: a new thread's CallInfo
// array (BASIC_CI_SIZE 8) doubles up to 16384 entries, and the next
// doubling passes LUAI_MAXCALLS: "stack overflow" (luaD_growCI). Its first
// entry is the thread's own, which gopher-lua has no frame for.
const maxThreadCalls = 16384 - 1

// threadCallStack is the frames a coroutine's call stack can hold: its
// CallInfo array (lua.CallInfos) raises "stack overflow" first, at
// maxThreadCalls Lua calls, not counting guard's frames. Lua 5.1's array
// would then allow 20000 calls after a caught overflow: a coroutine's
// stack stops at this size (each coroutine's stack is allocated for its
// size).
const threadCallStack = maxThreadCalls + 4*lua.MaxCCalls

func (e *Engine) patchStdlib(L *lua.LState, g *lua.LTable) {
	g.RawSetString("unpack", L.NewFunction(baseUnpack))
	g.RawSetString("tonumber", L.NewFunction(baseToNumber))
	g.RawSetString("select", L.NewFunction(baseSelect))
	g.RawSetString("assert", L.NewFunction(baseAssert))
	g.RawSetString("gcinfo", L.NewFunction(baseGCInfo))
	g.RawSetString("collectgarbage", L.NewFunction(baseCollectGarbage))
	tbl := g.RawGetString("table").(*lua.LTable)
	for name, fn := range map[string]lua.LGFunction{
		"insert": tabInsert, "remove": tabRemove, "concat": tabConcat, "maxn": tabMaxn,
		"setn": func(L *lua.LState) int { L.RaiseError("'setn' is obsolete"); return 0 },
	} {
		tbl.RawSetString(name, L.NewFunction(fn))
	}
	tbl.RawSetString("sort", L.NewFunction(e.tabSort))
	g.RawGetString("string").(*lua.LTable).RawSetString("dump", L.NewFunction(e.strDump))
	m := g.RawGetString("math").(*lua.LTable)
	m.RawSetString("huge", lua.LNumber(math.Inf(1)))
	m.RawSetString("modf", L.NewFunction(func(L *lua.LState) int {
		f := checkNumber(L, 1)
		ip, fp := math.Modf(f)
		if math.IsInf(f, 0) {
			fp = 0 // C's modf
		}
		L.Push(lua.LNumber(ip))
		L.Push(lua.LNumber(fp))
		return 2
	}))
	str := g.RawGetString("string").(*lua.LTable)
	for name, fn := range map[string]lua.LGFunction{
		"byte": strByte, "char": strChar, "rep": strRep, "sub": strSub, "format": strFormat,
		"find": strFind, "match": strMatch, "gmatch": strGmatch, "gfind": strGmatch, "gsub": strGsub,
	} {
		str.RawSetString(name, L.NewFunction(fn))
	}
}

// str2d is luaO_str2d: a number as Lua 5.1 reads one from a string
// (strtod's syntax, hexadecimal integers, spaces around).
func str2d(s string) (float64, bool) {
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	t := strings.TrimLeft(s, " \t\n\v\f\r")
	n := strtodPrefix(t)
	if n == 0 {
		return 0, false
	}
	f, ok := parsePrefix(t[:n])
	if !ok {
		return 0, false
	}
	if strings.TrimRight(t[n:], " \t\n\v\f\r") != "" {
		return 0, false
	}
	return f, true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isHex(c byte) bool {
	return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// strtodPrefix is the length of the longest prefix of s strtod reads.
func strtodPrefix(s string) int {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	low := strings.ToLower(s[i:])
	switch {
	case strings.HasPrefix(low, "infinity"):
		return i + 8
	case strings.HasPrefix(low, "inf"):
		return i + 3
	case strings.HasPrefix(low, "nan"):
		return i + 3
	}
	digit, exp := isDigit, byte('e')
	start := i
	if strings.HasPrefix(low, "0x") && len(low) > 2 && (isHex(low[2]) || low[2] == '.' && len(low) > 3 && isHex(low[3])) {
		i += 2
		start = i
		digit, exp = isHex, 'p'
	}
	nd := 0
	for i < len(s) && digit(s[i]) {
		i++
		nd++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && digit(s[i]) {
			i++
			nd++
		}
	}
	if nd == 0 {
		if exp == 'p' {
			return start - 1 // "0x" without digits: the "0"
		}
		return 0
	}
	if i < len(s) && (s[i]|0x20) == exp {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if j < len(s) && isDigit(s[j]) {
			for j < len(s) && isDigit(s[j]) {
				j++
			}
			i = j
		}
	}
	return i
}

func parsePrefix(p string) (float64, bool) {
	q := strings.ToLower(p)
	neg := strings.HasPrefix(q, "-")
	q = strings.TrimLeft(q, "+-")
	var f float64
	switch {
	case strings.HasPrefix(q, "inf"):
		f = math.Inf(1)
	case q == "nan":
		f = math.NaN()
	case strings.HasPrefix(q, "0x"):
		if !strings.Contains(q, "p") {
			q += "p0"
		}
		if strings.HasPrefix(q, "0x.") {
			q = "0x0." + q[3:]
		}
		v, err := strconv.ParseFloat(q, 64)
		if err != nil && !isRange(err) {
			return 0, false
		}
		f = v
	default:
		v, err := strconv.ParseFloat(q, 64)
		if err != nil && !isRange(err) {
			return 0, false
		}
		f = v
	}
	if neg {
		f = -f
	}
	return f, true
}

func isRange(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// toNumber is lua_tonumber: a number, or a string that reads as one.
func toNumber(v lua.LValue) (float64, bool) {
	switch x := v.(type) {
	case lua.LNumber:
		return float64(x), true
	case lua.LString:
		return str2d(string(x))
	}
	return 0, false
}

// checkNumber is luaL_checknumber.
func checkNumber(L *lua.LState, n int) float64 {
	f, ok := toNumber(L.Get(n))
	if !ok {
		L.TypeError(n, lua.LTNumber)
	}
	return f
}

// checkInt is luaL_checkint (lua_Integer truncation of the number).
func checkInt(L *lua.LState, n int) int {
	return int(int64(checkNumber(L, n)))
}

// optInt is luaL_optint.
func optInt(L *lua.LState, n, def int) int {
	if L.Get(n) == lua.LNil {
		return def
	}
	return checkInt(L, n)
}

// checkString is luaL_checklstring: a string, or a number in Lua's format.
func checkString(L *lua.LState, n int) string {
	switch x := L.Get(n).(type) {
	case lua.LString:
		return string(x)
	case lua.LNumber:
		return FormatNumber(float64(x))
	}
	L.TypeError(n, lua.LTString)
	return ""
}

// baseToNumber is luaB_tonumber.
func baseToNumber(L *lua.LState) int {
	base := optInt(L, 2, 10)
	if base == 10 {
		L.CheckAny(1)
		if f, ok := toNumber(L.Get(1)); ok {
			L.Push(lua.LNumber(f))
			return 1
		}
		L.Push(lua.LNil)
		return 1
	}
	s := checkString(L, 1)
	if base < 2 || base > 36 {
		L.ArgError(2, "base out of range")
	}
	if n, rest, ok := strtoul(s, base); ok && strings.TrimLeft(rest, " \t\n\v\f\r") == "" {
		L.Push(lua.LNumber(float64(n)))
		return 1
	}
	L.Push(lua.LNil)
	return 1
}

// strtoul is C's: spaces, a sign (a minus negates as unsigned), "0x"
// for base 16, digits; ULONG_MAX on overflow; ok when a digit was read.
func strtoul(s string, base int) (uint64, string, bool) {
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	t := strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if t != "" && (t[0] == '+' || t[0] == '-') {
		neg = t[0] == '-'
		t = t[1:]
	}
	if base == 16 && len(t) > 2 && t[0] == '0' && (t[1]|0x20) == 'x' && digitVal(t[2]) < 16 {
		t = t[2:]
	}
	var n uint64
	over := false
	i := 0
	for ; i < len(t); i++ {
		d := digitVal(t[i])
		if d >= base {
			break
		}
		if n > (math.MaxUint64-uint64(d))/uint64(base) {
			over = true
		}
		n = n*uint64(base) + uint64(d)
	}
	if i == 0 {
		return 0, s, false
	}
	if over {
		return math.MaxUint64, t[i:], true
	}
	if neg {
		n = -n
	}
	return n, t[i:], true
}

func digitVal(c byte) int {
	switch {
	case isDigit(c):
		return int(c - '0')
	case c >= 'a' && c <= 'z':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'Z':
		return int(c-'A') + 10
	}
	return 99
}

// baseNext is luaB_next: a key the table does not hold is "invalid key to
// 'next'" (a key whose value was set to nil during a traversal stays
// valid, as in Lua: its node keeps it until a rehash).
func baseNext(L *lua.LState) int {
	t := L.CheckTable(1)
	key := L.Get(2)
	k, v, ok := t.NextKey(key)
	if !ok {
		L.Error(lua.LString("invalid key to 'next'"), 0)
	}
	if k == lua.LNil {
		L.Push(lua.LNil)
		return 1
	}
	L.Push(k)
	L.Push(v)
	return 2
}

// tableHasKey reports whether next accepts key: a key of t's array part
// or of one of its nodes (ltable.c's findindex).
func tableHasKey(t *lua.LTable, key lua.LValue) bool {
	_, _, ok := t.NextKey(key)
	return ok
}

// strChar is str_char.
func strChar(L *lua.LState) int {
	n := L.GetTop()
	b := make([]byte, n)
	for i := 1; i <= n; i++ {
		c := checkInt(L, i)
		if c < 0 || c > 255 {
			L.ArgError(i, "invalid value")
		}
		b[i-1] = byte(c)
	}
	L.Push(lua.LString(b))
	return 1
}

// strRep is str_rep.
func strRep(L *lua.LState) int {
	s := checkString(L, 1)
	n := checkInt(L, 2)
	if n <= 0 || s == "" {
		L.Push(lua.LString(""))
		return 1
	}
	L.Push(lua.LString(strings.Repeat(s, n)))
	return 1
}

// strSub is str_sub.
func strSub(L *lua.LState) int {
	s := checkString(L, 1)
	l := len(s)
	start := posrelat(checkInt(L, 2), l)
	end := posrelat(optInt(L, 3, -1), l)
	if start < 1 {
		start = 1
	}
	if end > l {
		end = l
	}
	if start <= end {
		L.Push(lua.LString(s[start-1 : end]))
	} else {
		L.Push(lua.LString(""))
	}
	return 1
}

// strFormat is str_format.
func strFormat(L *lua.LState) int {
	top := L.GetTop()
	arg := 1
	f := checkString(L, 1)
	var b strings.Builder
	for i := 0; i < len(f); {
		if f[i] != '%' {
			b.WriteByte(f[i])
			i++
			continue
		}
		i++
		if i < len(f) && f[i] == '%' {
			b.WriteByte('%')
			i++
			continue
		}
		arg++
		if arg > top {
			L.ArgError(arg, "no value")
		}
		// scanformat
		p := i
		for p < len(f) && strings.IndexByte("-+ #0", f[p]) >= 0 {
			p++
		}
		if p-i >= 6 {
			L.RaiseError("invalid format (repeated flags)")
		}
		for k := 0; k < 2 && p < len(f) && isDigit(f[p]); k++ {
			p++
		}
		if p < len(f) && f[p] == '.' {
			p++
			for k := 0; k < 2 && p < len(f) && isDigit(f[p]); k++ {
				p++
			}
		}
		if p < len(f) && isDigit(f[p]) {
			L.RaiseError("invalid format (width or precision too long)")
		}
		spec := f[i:p]
		var conv byte
		if p < len(f) {
			conv = f[p]
		}
		i = p + 1
		switch conv {
		case 'c':
			c := byte(int32(int64(checkNumber(L, arg))))
			b.WriteString(cPad(spec, string([]byte{c})))
		case 'd', 'i':
			b.WriteString(fmt.Sprintf("%"+spec+"d", int64(checkNumber(L, arg))))
		case 'o', 'u', 'x', 'X':
			v := uint64(int64(checkNumber(L, arg)))
			verb := string(conv)
			if conv == 'u' {
				verb = "d"
			}
			b.WriteString(fmt.Sprintf("%"+spec+verb, v))
		case 'e', 'E', 'f', 'g', 'G':
			b.WriteString(cFloat(spec, conv, checkNumber(L, arg)))
		case 'q':
			s := checkString(L, arg)
			b.WriteByte('"')
			for k := 0; k < len(s); k++ {
				switch c := s[k]; c {
				case '"', '\\', '\n':
					b.WriteByte('\\')
					b.WriteByte(c)
				case '\r':
					b.WriteString("\\r")
				case 0:
					b.WriteString("\\000")
				default:
					b.WriteByte(c)
				}
			}
			b.WriteByte('"')
		case 's':
			s := checkString(L, arg)
			if !strings.Contains(spec, ".") && len(s) >= 100 {
				b.WriteString(s)
			} else {
				if i := strings.IndexByte(s, 0); i >= 0 {
					s = s[:i] // sprintf's %s stops at a NUL
				}
				b.WriteString(cPad(spec, s))
			}
		default:
			msg := "invalid option '%"
			if conv != 0 {
				msg += string([]byte{conv})
			}
			L.RaiseError("%s' to 'format'", msg)
		}
	}
	L.Push(lua.LString(b.String()))
	return 1
}

// cPad is sprintf's %s with spec's flags, width and precision, in bytes.
func cPad(spec, s string) string {
	left := strings.Contains(spec, "-")
	spec = strings.TrimLeft(spec, "-+ #0")
	width, prec := spec, ""
	if i := strings.IndexByte(spec, '.'); i >= 0 {
		width, prec = spec[:i], spec[i+1:]
		p, _ := strconv.Atoi(prec)
		if p < len(s) {
			s = s[:p]
		}
	}
	w, _ := strconv.Atoi(width)
	if pad := w - len(s); pad > 0 {
		if left {
			return s + strings.Repeat(" ", pad)
		}
		return strings.Repeat(" ", pad) + s
	}
	return s
}

// cFloat is sprintf's %e, %f, %g for spec: Go's formatting with C's
// default precision for %g and C's spelling of infinities and NaN.
func cFloat(spec string, conv byte, f float64) string {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		s := "inf"
		if math.IsNaN(f) {
			s = "nan"
			if math.Signbit(f) {
				s = "-nan"
			}
		} else if f < 0 {
			s = "-inf"
		}
		if f > 0 || math.IsNaN(f) && !math.Signbit(f) {
			if strings.Contains(spec, "+") {
				s = "+" + s
			} else if strings.Contains(spec, " ") {
				s = " " + s
			}
		}
		if conv == 'E' || conv == 'G' {
			s = strings.ToUpper(s)
		}
		return cPad(strings.ReplaceAll(strings.Split(spec, ".")[0], "0", ""), s)
	}
	if (conv == 'g' || conv == 'G') && !strings.Contains(spec, ".") {
		spec += ".6"
	}
	if (conv == 'g' || conv == 'G') && strings.Contains(spec, "#") {
		// Go's %#g keeps trailing zeros as C's does.
		return fmt.Sprintf("%"+spec+string(conv), f)
	}
	return fmt.Sprintf("%"+spec+string(conv), f)
}

// checkStack is luaL_checkstack: room for n more values.
func checkStack(L *lua.LState, n int, msg string) {
	if n > maxCStack || L.GetTop()+n > maxCStack {
		L.RaiseError("stack overflow (%s)", msg)
	}
}

// posrelat is lstrlib.c's: a negative position counts from the end.
func posrelat(pos, l int) int {
	if pos < 0 {
		pos += l + 1
	}
	if pos >= 0 {
		return pos
	}
	return 0
}

// baseUnpack is luaB_unpack.
func baseUnpack(L *lua.LState) int {
	t := L.CheckTable(1)
	i := optInt(L, 2, 1)
	e := 0
	if L.Get(3) == lua.LNil {
		e = t.Len()
	} else {
		e = checkInt(L, 3)
	}
	if i > e {
		return 0
	}
	n := e - i + 1
	if n <= 0 || n >= maxCStack || L.GetTop()+n > maxCStack {
		L.RaiseError("too many results to unpack")
	}
	for ; i <= e; i++ {
		L.Push(t.RawGetInt(i))
	}
	return n
}

// strByte is str_byte.
func strByte(L *lua.LState) int {
	s := checkString(L, 1)
	l := len(s)
	posi := posrelat(optInt(L, 2, 1), l)
	pose := posrelat(optInt(L, 3, posi), l)
	if posi <= 0 {
		posi = 1
	}
	if pose > l {
		pose = l
	}
	if posi > pose {
		return 0
	}
	n := pose - posi + 1
	checkStack(L, n, "string slice too long")
	for i := 0; i < n; i++ {
		L.Push(lua.LNumber(s[posi+i-1]))
	}
	return n
}

// baseSelect is luaB_select.
func baseSelect(L *lua.LState) int {
	n := L.GetTop()
	if s, ok := L.Get(1).(lua.LString); ok && len(s) > 0 && s[0] == '#' {
		L.Push(lua.LNumber(n - 1))
		return 1
	}
	i := checkInt(L, 1)
	if i < 0 {
		i = n + i
	} else if i > n {
		i = n
	}
	if i < 1 {
		L.ArgError(1, "index out of range")
	}
	return n - i
}

// baseAssert is luaB_assert.
func baseAssert(L *lua.LState) int {
	L.CheckAny(1)
	if !lua.LVAsBool(L.Get(1)) {
		msg := "assertion failed!"
		if L.Get(2) != lua.LNil {
			msg = checkString(L, 2)
		}
		L.RaiseError("%s", msg)
	}
	return L.GetTop()
}

// vmMemory is an estimate of the Lua heap in bytes (what lua_gc's
// LUA_GCCOUNT reports): gopher-lua's values live on Go's heap, so a
// figure from the state's sizes stands for it.
func vmMemory(L *lua.LState) int {
	return 20*1024 + 16*L.GetTop()
}

// baseGCInfo is luaB_gcinfo: the heap in kilobytes.
func baseGCInfo(L *lua.LState) int {
	L.Push(lua.LNumber(vmMemory(L) / 1024))
	return 1
}

// baseCollectGarbage is luaB_collectgarbage.
func baseCollectGarbage(L *lua.LState) int {
	opt := "collect"
	if L.Get(1) != lua.LNil {
		opt = checkString(L, 1)
	}
	optInt(L, 2, 0)
	switch opt {
	case "collect":
		// A full collection shrinks the main thread's CallInfo array
		// (checkstacksizes), which moves where a deep call overflows.
		L.G.MainThread.ShrinkCallInfos(2)
		L.Push(lua.LNumber(0))
	case "stop", "restart":
		L.Push(lua.LNumber(0))
	case "count":
		L.Push(lua.LNumber(float64(vmMemory(L)) / 1024))
	case "step":
		L.Push(lua.LFalse)
	case "setpause", "setstepmul":
		L.Push(lua.LNumber(200))
	default:
		L.ArgError(1, "invalid option '"+opt+"'")
	}
	return 1
}

// tabInsert is tinsert.
func tabInsert(L *lua.LState) int {
	t := L.CheckTable(1)
	e := t.Len() + 1
	pos := e
	switch L.GetTop() {
	case 2:
	case 3:
		pos = checkInt(L, 2)
		if pos > e {
			e = pos
		}
		for i := e; i > pos; i-- {
			t.RawSetInt(i, t.RawGetInt(i-1))
		}
	default:
		L.RaiseError("wrong number of arguments to 'insert'")
	}
	t.RawSetInt(pos, L.Get(-1))
	return 0
}

// tabRemove is tremove.
func tabRemove(L *lua.LState) int {
	t := L.CheckTable(1)
	e := t.Len()
	pos := optInt(L, 2, e)
	if pos < 1 || pos > e {
		return 0
	}
	v := t.RawGetInt(pos)
	for ; pos < e; pos++ {
		t.RawSetInt(pos, t.RawGetInt(pos+1))
	}
	t.RawSetInt(e, lua.LNil)
	L.Push(v)
	return 1
}

// tabConcat is tconcat.
func tabConcat(L *lua.LState) int {
	sep := ""
	if L.Get(2) != lua.LNil {
		sep = checkString(L, 2)
	}
	t := L.CheckTable(1)
	i := optInt(L, 3, 1)
	last := 0
	if L.Get(4) == lua.LNil {
		last = t.Len()
	} else {
		last = checkInt(L, 4)
	}
	var b strings.Builder
	add := func(i int) {
		switch v := t.RawGetInt(i).(type) {
		case lua.LString:
			b.WriteString(string(v))
		case lua.LNumber:
			b.WriteString(FormatNumber(float64(v)))
		default:
			L.RaiseError("invalid value (%s) at index %d in table for 'concat'", v.Type().String(), i)
		}
	}
	for ; i < last; i++ {
		add(i)
		b.WriteString(sep)
	}
	if i == last {
		add(i)
	}
	L.Push(lua.LString(b.String()))
	return 1
}

// tabMaxn is maxn: the largest positive numeric key.
func tabMaxn(L *lua.LState) int {
	t := L.CheckTable(1)
	max := 0.0
	t.ForEach(func(k, _ lua.LValue) {
		if n, ok := k.(lua.LNumber); ok && float64(n) > max {
			max = float64(n)
		}
	})
	L.Push(lua.LNumber(max))
	return 1
}

// where is luaL_where(L, 1) for a library function that may run under
// forwarders (the wrappers protectLibraries puts around it): the position
// of the Lua code that called it.
func (e *Engine) where(L *lua.LState) string {
	level := 1
	for {
		f, ok := stackFrame(L, level)
		if !ok || !f.fn.IsG || !e.forwarders[f.fn] {
			break
		}
		level++
	}
	return luaWhere(L, level)
}

// tabSort is ltablib.c's sort: Lua 5.1's quicksort (auxsort), so that the
// comparator sees the same calls, equal elements end in the same order
// and an inconsistent comparator fails as in Lua 5.1.
func (e *Engine) tabSort(L *lua.LState) int {
	t := L.CheckTable(1)
	n := t.Len()
	checkStack(L, 40, "")
	var cmp *lua.LFunction
	if L.Get(2) != lua.LNil {
		cmp = L.CheckFunction(2)
	}
	s := sorter{L: L, t: t, cmp: cmp, e: e}
	s.auxsort(1, n)
	return 0
}

type sorter struct {
	L   *lua.LState
	t   *lua.LTable
	cmp *lua.LFunction
	e   *Engine
}

// get and set are lua_rawgeti and lua_rawseti.
func (s *sorter) get(i int) lua.LValue {
	if i >= 1 {
		return s.t.RawGetInt(i)
	}
	return s.t.RawGet(lua.LNumber(i))
}

func (s *sorter) set(i int, v lua.LValue) {
	if i >= 1 {
		s.t.RawSetInt(i, v)
		return
	}
	s.t.RawSet(lua.LNumber(i), v)
}

// less is sort_comp: a < b by the comparator, or by lua_lessthan.
func (s *sorter) less(a, b lua.LValue) bool {
	if s.cmp == nil {
		return s.L.LessThan(a, b)
	}
	s.L.Push(s.cmp)
	s.L.Push(a)
	s.L.Push(b)
	s.L.Call(2, 1)
	res := lua.LVAsBool(s.L.Get(-1))
	s.L.Pop(1)
	return res
}

func (s *sorter) invalid() {
	s.e.raiseVerbatim(s.L, "invalid order function for sorting")
}

// auxsort is Lua 5.1's, with the values it keeps on the stack in
// variables.
func (s *sorter) auxsort(l, u int) {
	for l < u {
		a, b := s.get(l), s.get(u)
		if s.less(b, a) { // a[u] < a[l]?
			s.set(l, b)
			s.set(u, a)
		}
		if u-l == 1 {
			break // only 2 elements
		}
		i := (l + u) / 2
		a, b = s.get(i), s.get(l)
		if s.less(a, b) { // a[i] < a[l]?
			s.set(i, b)
			s.set(l, a)
		} else if c := s.get(u); s.less(c, a) { // a[u] < a[i]?
			s.set(i, c)
			s.set(u, a)
		}
		if u-l == 2 {
			break // only 3 elements
		}
		p := s.get(i) // the pivot
		s.set(i, s.get(u-1))
		s.set(u-1, p)
		// a[l] <= P == a[u-1] <= a[u], only need to sort from l+1 to u-2
		i, j := l, u-1
		for {
			var ai lua.LValue
			for { // repeat ++i until a[i] >= P
				i++
				ai = s.get(i)
				if !s.less(ai, p) {
					break
				}
				if i > u {
					s.invalid()
				}
			}
			var aj lua.LValue
			for { // repeat --j until a[j] <= P
				j--
				aj = s.get(j)
				if !s.less(p, aj) {
					break
				}
				if j < l {
					s.invalid()
				}
			}
			if j < i {
				break
			}
			s.set(i, aj)
			s.set(j, ai)
		}
		y, z := s.get(u-1), s.get(i)
		s.set(u-1, z)
		s.set(i, y) // swap the pivot (a[u-1]) with a[i]
		// a[l..i-1] <= a[i] == P <= a[i+1..u]; sort the smaller half
		// [j..i] recursively, the larger [l..u] in this loop
		if i-l < u-i {
			j, i, l = l, i-1, i+1
		} else {
			j, i, u = i+1, u, i-1
		}
		s.auxsort(j, i)
	}
}
