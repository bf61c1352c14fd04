package lua

import (
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// Lua 5.1's pattern matching (lstrlib.c's match machinery and str_find,
// str_match, gmatch, str_gsub), replacing gopher-lua's, which compiles a
// pattern its own way: it words malformed patterns otherwise, accepts
// some that Lua 5.1 refuses and refuses some that it accepts. This is a
// port of the C code, C strings and all: a pattern ends at its first NUL
// byte, and the byte after the end of the subject or of a replacement
// string reads as NUL, as the terminator Lua keeps after every string.

const (
	maxCaptures   = 32 // LUA_MAXCAPTURES
	capUnfinished = -1
	capPosition   = -2
	patSpecials   = "^$*+?.([%-"
)

type capture struct {
	init, len int
}

type matchState struct {
	L       *lua.LState
	src     string
	pat     string
	level   int
	depth   int // match's recursion
	capture [maxCaptures]capture
}

// luaLError is luaL_error: msg with the position of the calling Lua code
// (none when a Go function such as pcall called).
func luaLError(L *lua.LState, msg string) {
	L.Error(lua.LString(luaWhere(L, 1)+msg), 0)
}

// p is the pattern byte at i, NUL past the end.
func (ms *matchState) p(i int) byte {
	if i < len(ms.pat) {
		return ms.pat[i]
	}
	return 0
}

// s is the subject byte at i, NUL past the end.
func (ms *matchState) s(i int) byte {
	if i < len(ms.src) {
		return ms.src[i]
	}
	return 0
}

// cPattern is a pattern as C reads it: up to its first NUL.
func cPattern(p string) string {
	if i := strings.IndexByte(p, 0); i >= 0 {
		return p[:i]
	}
	return p
}

func (ms *matchState) checkCapture(l int) int {
	l -= '1'
	if l < 0 || l >= ms.level || ms.capture[l].len == capUnfinished {
		luaLError(ms.L, "invalid capture index")
	}
	return l
}

func (ms *matchState) captureToClose() int {
	for level := ms.level - 1; level >= 0; level-- {
		if ms.capture[level].len == capUnfinished {
			return level
		}
	}
	luaLError(ms.L, "invalid pattern capture")
	return 0
}

// classEnd is classend: the index just past the single-character class
// at p.
func (ms *matchState) classEnd(p int) int {
	c := ms.p(p)
	p++
	switch c {
	case '%':
		if ms.p(p) == 0 {
			luaLError(ms.L, "malformed pattern (ends with '%')")
		}
		return p + 1
	case '[':
		if ms.p(p) == '^' {
			p++
		}
		for { // look for a ']'
			if ms.p(p) == 0 {
				luaLError(ms.L, "malformed pattern (missing ']')")
			}
			c := ms.p(p)
			p++
			if c == '%' && ms.p(p) != 0 {
				p++ // skip escapes (e.g. '%]')
			}
			if ms.p(p) == ']' {
				return p + 1
			}
		}
	}
	return p
}

// The C locale's ctype classes.
func cIsAlpha(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func cIsLower(c byte) bool { return c >= 'a' && c <= 'z' }
func cIsUpper(c byte) bool { return c >= 'A' && c <= 'Z' }
func cIsSpace(c byte) bool { return c == ' ' || c >= '\t' && c <= '\r' }
func cIsCntrl(c byte) bool { return c < 32 || c == 127 }
func cIsPunct(c byte) bool {
	return c > 32 && c < 127 && !cIsAlpha(c) && !isDigit(c)
}

// matchClass is match_class: c in the class %cl (cl|0x20 is tolower
// for a letter and no letter for any other byte).
func matchClass(c, cl byte) bool {
	var res bool
	switch cl | 0x20 {
	case 'a':
		res = cIsAlpha(c)
	case 'c':
		res = cIsCntrl(c)
	case 'd':
		res = isDigit(c)
	case 'l':
		res = cIsLower(c)
	case 'p':
		res = cIsPunct(c)
	case 's':
		res = cIsSpace(c)
	case 'u':
		res = cIsUpper(c)
	case 'w':
		res = cIsAlpha(c) || isDigit(c)
	case 'x':
		res = isHex(c)
	case 'z':
		res = c == 0
	default:
		return cl == c
	}
	if cIsLower(cl) {
		return res
	}
	return !res
}

// matchBracketClass is matchbracketclass: p at the '[', ec at the ']'.
func (ms *matchState) matchBracketClass(c byte, p, ec int) bool {
	sig := true
	if ms.p(p+1) == '^' {
		sig = false
		p++
	}
	for p++; p < ec; p++ {
		switch {
		case ms.p(p) == '%':
			p++
			if matchClass(c, ms.p(p)) {
				return sig
			}
		case ms.p(p+1) == '-' && p+2 < ec:
			p += 2
			if ms.p(p-2) <= c && c <= ms.p(p) {
				return sig
			}
		case ms.p(p) == c:
			return sig
		}
	}
	return !sig
}

func (ms *matchState) singleMatch(c byte, p, ep int) bool {
	switch ms.p(p) {
	case '.':
		return true
	case '%':
		return matchClass(c, ms.p(p+1))
	case '[':
		return ms.matchBracketClass(c, p, ep-1)
	}
	return ms.p(p) == c
}

func (ms *matchState) matchBalance(s, p int) int {
	if ms.p(p) == 0 || ms.p(p+1) == 0 {
		luaLError(ms.L, "unbalanced pattern")
	}
	if ms.s(s) != ms.p(p) {
		return -1
	}
	b, e := ms.p(p), ms.p(p+1)
	cont := 1
	for s++; s < len(ms.src); s++ {
		switch ms.src[s] {
		case e:
			if cont--; cont == 0 {
				return s + 1
			}
		case b:
			cont++
		}
	}
	return -1
}

func (ms *matchState) maxExpand(s, p, ep int) int {
	i := 0
	for s+i < len(ms.src) && ms.singleMatch(ms.src[s+i], p, ep) {
		i++
	}
	for ; i >= 0; i-- {
		if res := ms.match(s+i, ep+1); res >= 0 {
			return res
		}
	}
	return -1
}

func (ms *matchState) minExpand(s, p, ep int) int {
	for {
		if res := ms.match(s, ep+1); res >= 0 {
			return res
		}
		if s < len(ms.src) && ms.singleMatch(ms.src[s], p, ep) {
			s++
		} else {
			return -1
		}
	}
}

func (ms *matchState) startCapture(s, p, what int) int {
	level := ms.level
	if level >= maxCaptures {
		luaLError(ms.L, "too many captures")
	}
	ms.capture[level] = capture{s, what}
	ms.level = level + 1
	res := ms.match(s, p)
	if res < 0 {
		ms.level--
	}
	return res
}

func (ms *matchState) endCapture(s, p int) int {
	l := ms.captureToClose()
	ms.capture[l].len = s - ms.capture[l].init
	res := ms.match(s, p)
	if res < 0 {
		ms.capture[l].len = capUnfinished
	}
	return res
}

func (ms *matchState) matchCapture(s, l int) int {
	l = ms.checkCapture(l)
	n := ms.capture[l].len
	if n >= 0 && len(ms.src)-s >= n && ms.src[ms.capture[l].init:ms.capture[l].init+n] == ms.src[s:s+n] {
		return s + n
	}
	return -1
}

// maxMatchDepth bounds match's recursion (one level per pattern item at
// most). Lua 5.1 has no bound: redis-server 7.0 overflows its C stack
// somewhere between 150000 and 200000 levels ('a?' items) and crashes;
// Vigil stops there with Lua 5.2's error instead of growing its stack
// without end.
const maxMatchDepth = 200000

// match is match: the end of the match of the pattern from p at subject
// position s, -1 for none.
func (ms *matchState) match(s, p int) int {
	if ms.depth++; ms.depth > maxMatchDepth {
		luaLError(ms.L, "pattern too complex")
	}
	r := ms.doMatch(s, p)
	ms.depth--
	return r
}

func (ms *matchState) doMatch(s, p int) int {
	for {
		switch ms.p(p) {
		case '(':
			if ms.p(p+1) == ')' {
				return ms.startCapture(s, p+2, capPosition)
			}
			return ms.startCapture(s, p+1, capUnfinished)
		case ')':
			return ms.endCapture(s, p+1)
		case 0:
			return s
		case '%':
			switch c := ms.p(p + 1); {
			case c == 'b':
				if s = ms.matchBalance(s, p+2); s < 0 {
					return -1
				}
				p += 4
				continue
			case c == 'f':
				p += 2
				if ms.p(p) != '[' {
					luaLError(ms.L, "missing '[' after '%f' in pattern")
				}
				ep := ms.classEnd(p)
				var previous byte
				if s > 0 {
					previous = ms.src[s-1]
				}
				if ms.matchBracketClass(previous, p, ep-1) || !ms.matchBracketClass(ms.s(s), p, ep-1) {
					return -1
				}
				p = ep
				continue
			case isDigit(c):
				if s = ms.matchCapture(s, int(c)); s < 0 {
					return -1
				}
				p += 2
				continue
			}
		case '$':
			if p+1 == len(ms.pat) {
				if s == len(ms.src) {
					return s
				}
				return -1
			}
		}
		// a single-character class with an optional repetition
		ep := ms.classEnd(p)
		m := s < len(ms.src) && ms.singleMatch(ms.src[s], p, ep)
		switch ms.p(ep) {
		case '?':
			if m {
				if res := ms.match(s+1, ep+1); res >= 0 {
					return res
				}
			}
			p = ep + 1
		case '*':
			return ms.maxExpand(s, p, ep)
		case '+':
			if m {
				return ms.maxExpand(s+1, p, ep)
			}
			return -1
		case '-':
			return ms.minExpand(s, p, ep)
		default:
			if !m {
				return -1
			}
			s++
			p = ep
		}
	}
}

// captureValue is push_onecapture's value: capture i of the match s..e.
func (ms *matchState) captureValue(i, s, e int) lua.LValue {
	if i >= ms.level {
		if i != 0 {
			luaLError(ms.L, "invalid capture index")
		}
		return lua.LString(ms.src[s:e]) // the whole match
	}
	c := ms.capture[i]
	switch c.len {
	case capUnfinished:
		luaLError(ms.L, "unfinished capture")
	case capPosition:
		return lua.LNumber(c.init + 1)
	}
	return lua.LString(ms.src[c.init : c.init+c.len])
}

// pushCaptures is push_captures: the captures, or the whole match s..e
// when there are none and whole is set.
func (ms *matchState) pushCaptures(whole bool, s, e int) int {
	n := ms.level
	if n == 0 && whole {
		n = 1
	}
	checkStack(ms.L, n, "too many captures")
	for i := 0; i < n; i++ {
		ms.L.Push(ms.captureValue(i, s, e))
	}
	return n
}

// strFindAux is str_find_aux.
func strFindAux(L *lua.LState, find bool) int {
	s := checkString(L, 1)
	p := checkString(L, 2)
	init := posrelat(int(int64(optNumber(L, 3, 1))), len(s)) - 1
	if init < 0 {
		init = 0
	} else if init > len(s) {
		init = len(s)
	}
	if find && (lua.LVAsBool(L.Get(4)) || !strings.ContainsAny(cPattern(p), patSpecials)) {
		// a plain search
		if i := strings.Index(s[init:], p); i >= 0 {
			L.Push(lua.LNumber(init + i + 1))
			L.Push(lua.LNumber(init + i + len(p)))
			return 2
		}
		L.Push(lua.LNil)
		return 1
	}
	ms := matchState{L: L, src: s, pat: cPattern(p)}
	pi := 0
	anchor := ms.p(0) == '^'
	if anchor {
		pi = 1
	}
	for s1 := init; ; s1++ {
		ms.level = 0
		if res := ms.match(s1, pi); res >= 0 {
			if find {
				L.Push(lua.LNumber(s1 + 1))
				L.Push(lua.LNumber(res))
				return ms.pushCaptures(false, 0, 0) + 2
			}
			return ms.pushCaptures(true, s1, res)
		}
		if s1 >= len(s) || anchor {
			break
		}
	}
	L.Push(lua.LNil)
	return 1
}

// optNumber is luaL_optnumber.
func optNumber(L *lua.LState, n int, def float64) float64 {
	if L.Get(n) == lua.LNil {
		return def
	}
	return checkNumber(L, n)
}

func strFind(L *lua.LState) int  { return strFindAux(L, true) }
func strMatch(L *lua.LState) int { return strFindAux(L, false) }

// strGmatch is gmatch: an iterator over the matches, which takes no
// arguments.
func strGmatch(L *lua.LState) int {
	s := checkString(L, 1)
	p := cPattern(checkString(L, 2))
	start := 0
	L.Push(L.NewFunction(func(L *lua.LState) int {
		ms := matchState{L: L, src: s, pat: p}
		for src := start; src <= len(s); src++ {
			ms.level = 0
			if e := ms.match(src, 0); e >= 0 {
				start = e
				if e == src {
					start++ // an empty match: go at least one position
				}
				return ms.pushCaptures(true, src, e)
			}
		}
		return 0
	}))
	return 1
}

// strGsub is str_gsub.
func strGsub(L *lua.LState) int {
	src := checkString(L, 1)
	p := cPattern(checkString(L, 2))
	repl := L.Get(3)
	tr := repl.Type()
	maxS := len(src) + 1
	if L.Get(4) != lua.LNil {
		maxS = checkInt(L, 4)
	}
	if tr != lua.LTNumber && tr != lua.LTString && tr != lua.LTFunction && tr != lua.LTTable {
		L.ArgError(3, "string/function/table expected")
	}
	var news string
	switch r := repl.(type) {
	case lua.LString:
		news = string(r)
	case lua.LNumber:
		news = FormatNumber(float64(r))
	}
	ms := matchState{L: L, src: src, pat: p}
	pi := 0
	anchor := ms.p(0) == '^'
	if anchor {
		pi = 1
	}
	var b []byte
	n := 0
	s := 0
	for n < maxS {
		ms.level = 0
		e := ms.match(s, pi)
		if e >= 0 {
			n++
			b = ms.addValue(b, repl, news, s, e)
		}
		switch {
		case e > s: // a non-empty match: skip it
			s = e
		case s < len(src):
			b = append(b, src[s])
			s++
		default:
			goto done
		}
		if anchor {
			break
		}
	}
done:
	b = append(b, src[s:]...)
	L.Push(lua.LString(b))
	L.Push(lua.LNumber(n))
	return 2
}

// addValue is add_value: the replacement of the match s..e appended to b.
func (ms *matchState) addValue(b []byte, repl lua.LValue, news string, s, e int) []byte {
	L := ms.L
	var v lua.LValue
	switch r := repl.(type) {
	case lua.LString, lua.LNumber:
		return ms.addS(b, news, s, e)
	case *lua.LFunction:
		L.Push(r)
		n := ms.pushCaptures(true, s, e)
		L.Call(n, 1)
		v = L.Get(-1)
		L.Pop(1)
	case *lua.LTable:
		v = L.GetTable(r, ms.captureValue(0, s, e))
	}
	switch x := v.(type) {
	case lua.LString:
		return append(b, x...)
	case lua.LNumber:
		return append(b, FormatNumber(float64(x))...)
	}
	if !lua.LVAsBool(v) {
		return append(b, ms.src[s:e]...) // keep the original text
	}
	luaLError(L, "invalid replacement value (a "+v.Type().String()+")")
	return b
}

// addS is add_s: the replacement string news with its %0-%9 captures.
func (ms *matchState) addS(b []byte, news string, s, e int) []byte {
	for i := 0; i < len(news); i++ {
		c := news[i]
		if c != '%' {
			b = append(b, c)
			continue
		}
		i++ // skip the escape
		c = 0
		if i < len(news) {
			c = news[i]
		}
		switch {
		case !isDigit(c):
			b = append(b, c)
		case c == '0':
			b = append(b, ms.src[s:e]...)
		default:
			switch v := ms.captureValue(int(c-'1'), s, e).(type) {
			case lua.LString:
				b = append(b, v...)
			case lua.LNumber:
				b = append(b, FormatNumber(float64(v))...)
			}
		}
	}
	return b
}
