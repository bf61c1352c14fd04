package lua

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unsafe"

	lua "github.com/yuin/gopher-lua"
)

// lua-cjson 2.1.0 as Redis 7.0 bundles it (deps/lua/src/lua_cjson.c):
// the module table, its configuration functions, the encoder and the
// decoder with lua-cjson's tokenizer, number syntax (strtod's) and error
// texts.

// cjsonNullKey marks cjson.null (a lightuserdata NULL in lua-cjson).
var cjsonNullKey = "cjson.null"

// cjsonConfig is json_config_t: the settings one module table's functions
// share (cjson.new makes a table with its own).
type cjsonConfig struct {
	sparseConvert   int
	sparseRatio     int
	sparseSafe      int
	encodeMaxDepth  int
	decodeMaxDepth  int
	encodeInvalid   int // 0 off, 1 on, 2 "null"
	decodeInvalid   int
	encodeKeepBuf   int
	numberPrecision int

	// Go-side scratch, kept between calls (none of it is visible to
	// scripts): the encoder's buffer (encode_keep_buffer's strbuf), the
	// decoder's stacks of the open objects' keys and values, its table
	// builder and its cache of short strings.
	encBuf  []byte
	keys    []lua.LValue
	vals    []lua.LValue
	builder lua.StringTableBuilder
	strs    cjsonStrCache
}

// cjsonKeepBufMax is the largest encoder buffer kept for the next call.
const cjsonKeepBufMax = 1 << 20

func openCJSON(L *lua.LState, g *lua.LTable, real func(*lua.LTable) *lua.LTable) {
	null := L.NewUserData()
	null.Value = cjsonNullKey
	g.RawSetString("cjson", newCJSON(L, null, real))
}

// newCJSON is lua_cjson_new: a module table with a fresh configuration.
func newCJSON(L *lua.LState, null *lua.LUserData, real func(*lua.LTable) *lua.LTable) *lua.LTable {
	cfg := &cjsonConfig{
		sparseRatio:     2,
		sparseSafe:      10,
		encodeMaxDepth:  1000,
		decodeMaxDepth:  1000,
		decodeInvalid:   1,
		encodeKeepBuf:   1,
		numberPrecision: 14,
	}
	t := L.NewTable()
	fns := map[string]lua.LGFunction{
		"encode": func(L *lua.LState) int {
			if L.GetTop() != 1 {
				L.RaiseError("bad argument #1 to 'encode' (expected 1 argument)")
			}
			e := cjsonEncoder{cfg: cfg, real: real, buf: cfg.encBuf[:0]}
			msg := e.value(L.Get(1), 0, 1)
			if cfg.encodeKeepBuf != 0 && cap(e.buf) <= cjsonKeepBufMax {
				cfg.encBuf = e.buf
			} else {
				cfg.encBuf = nil
			}
			if msg != "" {
				cjsonRaise(L, "%s", msg)
			}
			L.Push(lua.LString(e.buf))
			return 1
		},
		"decode": func(L *lua.LState) int {
			if L.GetTop() != 1 {
				L.RaiseError("bad argument #1 to 'decode' (expected 1 argument)")
			}
			s := L.CheckString(1)
			if len(s) >= 2 && (s[0] == 0 || s[1] == 0) {
				cjsonRaise(L, "JSON parser does not support UTF-16 or UTF-32")
			}
			// what a decode that raised an error left on the stacks
			clear(cfg.keys)
			clear(cfg.vals)
			cfg.keys, cfg.vals = cfg.keys[:0], cfg.vals[:0]
			d := cjsonDecoder{L: L, cfg: cfg, data: s, null: null, stack: 1}
			var tok cjsonToken
			d.next(&tok)
			v := d.value(&tok)
			d.next(&tok)
			if tok.typ != tEnd {
				d.parseError("the end", &tok)
			}
			L.Push(v)
			return 1
		},
		"encode_sparse_array": func(L *lua.LState) int {
			cjsonArgInit(L, 3, "encode_sparse_array")
			cjsonEnumOption(L, 1, &cfg.sparseConvert, nil, "encode_sparse_array")
			cjsonIntegerOption(L, 2, &cfg.sparseRatio, 0, math.MaxInt32, "encode_sparse_array")
			cjsonIntegerOption(L, 3, &cfg.sparseSafe, 0, math.MaxInt32, "encode_sparse_array")
			return 3
		},
		"encode_max_depth":        intConfig("encode_max_depth", &cfg.encodeMaxDepth, 1, math.MaxInt32),
		"decode_max_depth":        intConfig("decode_max_depth", &cfg.decodeMaxDepth, 1, math.MaxInt32),
		"encode_number_precision": intConfig("encode_number_precision", &cfg.numberPrecision, 1, 14),
		"encode_keep_buffer":      enumConfig("encode_keep_buffer", &cfg.encodeKeepBuf, nil),
		"encode_invalid_numbers":  enumConfig("encode_invalid_numbers", &cfg.encodeInvalid, []string{"off", "on", "null"}),
		"decode_invalid_numbers":  enumConfig("decode_invalid_numbers", &cfg.decodeInvalid, nil),
		"new": func(L *lua.LState) int {
			L.Push(newCJSON(L, null, real))
			return 1
		},
	}
	for name, fn := range fns {
		t.RawSetString(name, L.NewFunction(fn))
	}
	t.RawSetString("null", null)
	t.RawSetString("_NAME", lua.LString("cjson"))
	t.RawSetString("_VERSION", lua.LString("2.1.0"))
	return t
}

// cjsonRaise is luaL_error: the message after the position of the calling
// code when that is Lua, bare when a Go function (pcall) called.
func cjsonRaise(L *lua.LState, format string, args ...any) {
	if dbg, ok := L.GetStack(1); ok {
		if _, err := L.GetInfo("S", dbg, lua.LNil); err == nil && dbg.What == "G" {
			L.Error(lua.LString(fmt.Sprintf(format, args...)), 0)
		}
	}
	L.RaiseError(format, args...)
}

// intConfig and enumConfig are the configuration functions of one
// setting (lua_cjson.c's json_cfg_* with json_arg_init(l, 1)): the
// setting's current value is the result, an argument sets it first.
func intConfig(name string, setting *int, min, max int) lua.LGFunction {
	return func(L *lua.LState) int {
		cjsonArgInit(L, 1, name)
		cjsonIntegerOption(L, 1, setting, min, max, name)
		return 1
	}
}

func enumConfig(name string, setting *int, options []string) lua.LGFunction {
	return func(L *lua.LState) int {
		cjsonArgInit(L, 1, name)
		cjsonEnumOption(L, 1, setting, options, name)
		return 1
	}
}

// cjsonArgInit is json_arg_init: at most n arguments, padded with nil.
func cjsonArgInit(L *lua.LState, n int, fn string) {
	if L.GetTop() > n {
		L.RaiseError("bad argument #%d to '%s' (found too many arguments)", n+1, fn)
	}
	for L.GetTop() < n {
		L.Push(lua.LNil)
	}
}

// cjsonIntegerOption is json_integer_option (its range error names
// argument #1 whichever argument it is).
func cjsonIntegerOption(L *lua.LState, i int, setting *int, min, max int, fn string) {
	if L.Get(i) != lua.LNil {
		f := float64(L.CheckNumber(i)) // luaL_checkinteger
		// lua_Integer (ptrdiff_t) conversion, then C's int.
		n := int(int32(int64(f)))
		if n < min || n > max {
			L.RaiseError("bad argument #1 to '%s' (expected integer between %d and %d)", fn, min, max)
		}
		*setting = n
	}
	L.Push(lua.LNumber(*setting))
}

// cjsonEnumOption is json_enum_option with bool_true 1: a boolean or one
// of the option names; answers false/true for 0/1, else the name.
func cjsonEnumOption(L *lua.LState, i int, setting *int, options []string, fn string) {
	if options == nil {
		options = []string{"off", "on"}
	}
	if v := L.Get(i); v != lua.LNil {
		if b, ok := v.(lua.LBool); ok {
			*setting = 0
			if b {
				*setting = 1
			}
		} else {
			var name string
			switch x := v.(type) {
			case lua.LString:
				name = string(x)
			case lua.LNumber:
				name = FormatNumber(float64(x))
			default:
				L.RaiseError("bad argument #%d to '%s' (string expected, got %s)", i, fn, cjsonTypeName(v))
			}
			found := -1
			for k, o := range options {
				if o == name {
					found = k
				}
			}
			if found < 0 {
				L.RaiseError("bad argument #%d to '%s' (invalid option '%s')", i, fn, name)
			}
			*setting = found
		}
	}
	if *setting < 2 {
		L.Push(lua.LBool(*setting == 1))
	} else {
		L.Push(lua.LString(options[*setting]))
	}
}

// cjsonTypeName is lua_typename (cjson.null, a lightuserdata, is
// "userdata" too).
func cjsonTypeName(v lua.LValue) string {
	switch v.(type) {
	case *lua.LNilType:
		return "nil"
	case *lua.LUserData:
		return "userdata"
	case *lua.LFunction:
		return "function"
	}
	return v.Type().String()
}

// cjsonFormat is fpconv_g_fmt: "%.<prec>g".
func cjsonFormat(buf []byte, f float64, prec int) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(buf, "inf"...)
	case math.IsInf(f, -1):
		return append(buf, "-inf"...)
	case math.IsNaN(f):
		if math.Signbit(f) {
			return append(buf, "-nan"...)
		}
		return append(buf, "nan"...)
	}
	// an integer of at most prec digits: %g prints its digits (not -0)
	if f == math.Trunc(f) && math.Abs(f) < cjsonPow10[prec] && (f != 0 || !math.Signbit(f)) {
		return strconv.AppendInt(buf, int64(f), 10)
	}
	return strconv.AppendFloat(buf, f, 'g', prec, 64)
}

// cjsonPow10[p] is 10^p, for the precisions 1 to 14.
var cjsonPow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14}

// cjsonEscapes is char2escape: the escape of each byte that has one
// ("" for the bytes copied as they are).
var cjsonEscapes = func() (t [256]string) {
	for ch := 0; ch < 0x20; ch++ {
		t[ch] = "\\u00" + string("0123456789abcdef"[ch>>4]) + string("0123456789abcdef"[ch&15])
	}
	t[0x7f] = "\\u007f"
	for ch, esc := range map[byte]string{'"': `\"`, '\\': `\\`, '/': `\/`, '\b': `\b`, '\f': `\f`, '\n': `\n`, '\r': `\r`, '\t': `\t`} {
		t[ch] = esc
	}
	return
}()

// cjsonString is json_append_string.
func cjsonString(buf []byte, s string) []byte {
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		if esc := cjsonEscapes[s[i]]; esc != "" {
			buf = append(buf, s[start:i]...)
			buf = append(buf, esc...)
			start = i + 1
		}
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}

// cjsonEncoder is json_append_data and its helpers; a non-empty answer is
// the error text.
type cjsonEncoder struct {
	cfg  *cjsonConfig
	buf  []byte
	real func(*lua.LTable) *lua.LTable // sees through read-only proxies
}

func cjsonCannot(v lua.LValue, reason string) string {
	return "Cannot serialise " + cjsonTypeName(v) + ": " + reason
}

// number is json_append_number.
func (e *cjsonEncoder) number(v lua.LNumber) string {
	f := float64(v)
	bad := math.IsInf(f, 0) || math.IsNaN(f)
	switch e.cfg.encodeInvalid {
	case 0:
		if bad {
			return cjsonCannot(v, "must not be NaN or Inf")
		}
	case 1:
		if math.IsNaN(f) {
			e.buf = append(e.buf, "nan"...)
			return ""
		}
	default:
		if bad {
			e.buf = append(e.buf, "null"...)
			return ""
		}
	}
	e.buf = cjsonFormat(e.buf, f, e.cfg.numberPrecision)
	return ""
}

// value is json_append_data for v at the nesting depth and with top
// values on the Lua stack (v the last; json_check_encode_depth's
// lua_checkstack(3) bounds it).
func (e *cjsonEncoder) value(v lua.LValue, depth, top int) string {
	switch x := v.(type) {
	case lua.LString:
		e.buf = cjsonString(e.buf, string(x))
		return ""
	case lua.LNumber:
		return e.number(x)
	case lua.LBool:
		if x {
			e.buf = append(e.buf, "true"...)
		} else {
			e.buf = append(e.buf, "false"...)
		}
		return ""
	case *lua.LNilType:
		e.buf = append(e.buf, "null"...)
		return ""
	case *lua.LUserData:
		if x.Value == cjsonNullKey {
			e.buf = append(e.buf, "null"...)
			return ""
		}
	case *lua.LTable:
		if e.real != nil {
			x = e.real(x)
		}
		depth++
		if depth > e.cfg.encodeMaxDepth || top+3 > cjsonMaxCStack {
			return "Cannot serialise, excessive nesting (" + strconv.Itoa(depth) + ")"
		}
		n, msg := e.arrayLength(x)
		if msg != "" {
			return msg
		}
		if n > 0 {
			e.buf = append(e.buf, '[')
			for i := 1; i <= n; i++ {
				if i > 1 {
					e.buf = append(e.buf, ',')
				}
				if msg := e.value(x.RawGetInt(i), depth, top+1); msg != "" {
					return msg
				}
			}
			e.buf = append(e.buf, ']')
			return ""
		}
		// the pairs in next()'s order: the array part, then the nodes
		e.buf = append(e.buf, '{')
		first := true
		asize, nsize := x.Sizes()
		for i := 1; i <= asize; i++ {
			val := x.RawGetInt(i)
			if cjsonIsNil(val) {
				continue
			}
			if !first {
				e.buf = append(e.buf, ',')
			}
			first = false
			e.buf = append(e.buf, '"')
			e.buf = cjsonFormat(e.buf, float64(i), e.cfg.numberPrecision)
			e.buf = append(e.buf, '"', ':')
			if msg := e.value(val, depth, top+2); msg != "" { // lua_next's key and value
				return msg
			}
		}
		for j := 0; j < nsize; j++ {
			k, val := x.Node(j)
			if cjsonIsNil(val) {
				continue
			}
			if !first {
				e.buf = append(e.buf, ',')
			}
			first = false
			switch kk := k.(type) {
			case lua.LNumber:
				e.buf = append(e.buf, '"')
				if msg := e.number(kk); msg != "" {
					return msg
				}
				e.buf = append(e.buf, '"', ':')
			case lua.LString:
				e.buf = cjsonString(e.buf, string(kk))
				e.buf = append(e.buf, ':')
			default:
				return cjsonCannot(k, "table key must be a number or string")
			}
			if msg := e.value(val, depth, top+2); msg != "" {
				return msg
			}
		}
		e.buf = append(e.buf, '}')
		return ""
	}
	return cjsonCannot(v, "type not supported")
}

// cjsonIsNil reports whether v is nil (a free slot of a table).
func cjsonIsNil(v lua.LValue) bool {
	_, ok := v.(*lua.LNilType)
	return ok
}

// arrayLength is lua_array_length: the array's length, or -1 for an
// object (any key not a positive integer, or an excessively sparse array
// when encode_sparse_array converts).
func (e *cjsonEncoder) arrayLength(t *lua.LTable) (int, string) {
	max, items := 0, 0
	asize, nsize := t.Sizes()
	for i := 1; i <= asize; i++ {
		if !cjsonIsNil(t.RawGetInt(i)) {
			max = i
			items++
		}
	}
	for j := 0; j < nsize; j++ {
		k, v := t.Node(j)
		if cjsonIsNil(v) {
			continue
		}
		n, ok := k.(lua.LNumber)
		f := float64(n)
		if !ok || f == 0 || math.Floor(f) != f || f < 1 {
			return -1, ""
		}
		if f > float64(max) {
			// C's int max = k: x86 turns a double past int's range into
			// INT_MIN, which leaves such a key out of the length.
			max = math.MinInt32
			if f < 1<<31 {
				max = int(f)
			}
		}
		items++
	}
	cfg := e.cfg
	if cfg.sparseRatio > 0 && max > items*cfg.sparseRatio && max > cfg.sparseSafe {
		if cfg.sparseConvert == 0 {
			return -1, "Cannot serialise table: excessively sparse array"
		}
		return -1, ""
	}
	return max, ""
}

// The decoder's token types (json_token_type_t) and their names in errors.
const (
	tObjBegin = iota
	tObjEnd
	tArrBegin
	tArrEnd
	tString
	tNumber
	tBoolean
	tNull
	tColon
	tComma
	tEnd
	tWhitespace
	tError
	tUnknown
)

var cjsonTokenNames = [...]string{"T_OBJ_BEGIN", "T_OBJ_END", "T_ARR_BEGIN", "T_ARR_END", "T_STRING",
	"T_NUMBER", "T_BOOLEAN", "T_NULL", "T_COLON", "T_COMMA", "T_END", "T_WHITESPACE", "T_ERROR", "T_UNKNOWN"}

// cjsonCh2Token is json_create_config's ch2token table.
var cjsonCh2Token = func() (t [256]int) {
	for i := range t {
		t[i] = tError
	}
	for ch, typ := range map[byte]int{'{': tObjBegin, '}': tObjEnd, '[': tArrBegin, ']': tArrEnd, ',': tComma,
		':': tColon, 0: tEnd, ' ': tWhitespace, '\t': tWhitespace, '\n': tWhitespace, '\r': tWhitespace} {
		t[ch] = typ
	}
	for _, ch := range []byte("fiInNt\"+-0123456789") {
		t[ch] = tUnknown
	}
	return
}()

// cjsonEscape2Char is escape2char: the byte a \x escape stands for, 0 for
// an invalid escape.
var cjsonEscape2Char = func() (t [256]byte) {
	for k, v := range map[byte]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 't': '\t', 'n': '\n', 'f': '\f', 'r': '\r', 'u': 'u'} {
		t[k] = v
	}
	return
}()

type cjsonToken struct {
	typ   int
	index int
	str   string     // the error's kind for tError
	sv    lua.LValue // the string's value for tString
	num   float64
	b     bool
}

type cjsonDecoder struct {
	L     *lua.LState
	cfg   *cjsonConfig
	data  string
	ptr   int
	depth int
	stack int // values on the Lua stack: the argument, open tables and keys
	null  *lua.LUserData
	tmp   []byte
}

// at is *ptr on the C string: a NUL past the end.
func (d *cjsonDecoder) at(i int) byte {
	if i < len(d.data) {
		return d.data[i]
	}
	return 0
}

func (d *cjsonDecoder) setError(tok *cjsonToken, kind string) {
	tok.typ = tError
	tok.index = d.ptr
	tok.str = kind
}

// hasPrefix is strncmp(ptr, s, len(s)) == 0 on the C string.
func (d *cjsonDecoder) hasPrefix(s string) bool {
	return strings.HasPrefix(d.data[d.ptr:], s) && !strings.Contains(d.data[d.ptr:d.ptr+len(s)], "\x00")
}

// next is json_next_token.
func (d *cjsonDecoder) next(tok *cjsonToken) {
	var ch byte
	for {
		ch = d.at(d.ptr)
		tok.typ = cjsonCh2Token[ch]
		if tok.typ != tWhitespace {
			break
		}
		d.ptr++
	}
	tok.index = d.ptr
	switch {
	case tok.typ == tError:
		d.setError(tok, "invalid token")
		return
	case tok.typ == tEnd:
		return
	case tok.typ != tUnknown:
		d.ptr++
		return
	}
	switch {
	case ch == '"':
		d.stringToken(tok)
	case ch == '-' || '0' <= ch && ch <= '9':
		if d.cfg.decodeInvalid == 0 && d.invalidNumber() {
			d.setError(tok, "invalid number")
			return
		}
		d.numberToken(tok)
	case d.hasPrefix("true"):
		tok.typ, tok.b = tBoolean, true
		d.ptr += 4
	case d.hasPrefix("false"):
		tok.typ, tok.b = tBoolean, false
		d.ptr += 5
	case d.hasPrefix("null"):
		tok.typ = tNull
		d.ptr += 4
	case d.cfg.decodeInvalid != 0 && d.invalidNumber():
		d.numberToken(tok)
	default:
		d.setError(tok, "invalid token")
	}
}

// invalidNumber is json_is_invalid_number: a number strtod reads but
// strict JSON refuses ('+', hex, leading zeros, inf, nan).
func (d *cjsonDecoder) invalidNumber() bool {
	p := d.ptr
	if d.at(p) == '+' {
		return true
	}
	if d.at(p) == '-' {
		p++
	}
	if d.at(p) == '0' {
		ch2 := d.at(p + 1)
		return ch2|0x20 == 'x' || '0' <= ch2 && ch2 <= '9'
	} else if d.at(p) <= '9' {
		return false
	}
	rest := d.data[p:]
	return len(rest) >= 3 && (strings.EqualFold(rest[:3], "inf") || strings.EqualFold(rest[:3], "nan"))
}

func (d *cjsonDecoder) numberToken(tok *cjsonToken) {
	tok.typ = tNumber
	// the common case: an integer of at most 15 digits (exact), which no
	// '.', exponent or hex 'x' follows
	p := d.ptr
	neg := p < len(d.data) && d.data[p] == '-'
	if neg {
		p++
	}
	q := p
	var v int64
	for q < len(d.data) && q-p < 16 && '0' <= d.data[q] && d.data[q] <= '9' {
		v = v*10 + int64(d.data[q]-'0')
		q++
	}
	if q > p && q-p <= 15 {
		if q == len(d.data) {
			d.fastNumber(tok, v, neg, q)
			return
		}
		switch d.data[q] {
		case '.', 'e', 'E', 'x', 'X':
		default:
			d.fastNumber(tok, v, neg, q)
			return
		}
	}
	f, n := cStrtod(d.data[d.ptr:])
	if n == 0 {
		d.setError(tok, "invalid number")
		return
	}
	tok.num = f
	d.ptr += n
}

func (d *cjsonDecoder) fastNumber(tok *cjsonToken, v int64, neg bool, end int) {
	f := float64(v)
	if neg {
		f = -f // -0 too
	}
	tok.num = f
	d.ptr = end
}

func cjsonHex(ch byte) int {
	switch {
	case '0' <= ch && ch <= '9':
		return int(ch - '0')
	case 'a' <= ch|0x20 && ch|0x20 <= 'f':
		return int(ch|0x20-'a') + 10
	}
	return -1
}

// hex4 is decode_hex4 at p: -1 unless four hex digits.
func (d *cjsonDecoder) hex4(p int) int {
	v := 0
	for i := 0; i < 4; i++ {
		h := cjsonHex(d.at(p + i))
		if h < 0 {
			return -1
		}
		v = v<<4 | h
	}
	return v
}

// unicodeEscape is json_append_unicode_escape at a \u: false on error.
func (d *cjsonDecoder) unicodeEscape() bool {
	cp := d.hex4(d.ptr + 2)
	if cp < 0 {
		return false
	}
	escLen := 6
	if cp&0xF800 == 0xD800 {
		if cp&0x400 != 0 {
			return false
		}
		if d.at(d.ptr+6) != '\\' || d.at(d.ptr+7) != 'u' {
			return false
		}
		low := d.hex4(d.ptr + 8)
		if low < 0 || low&0xFC00 != 0xDC00 {
			return false
		}
		cp = ((cp&0x3FF)<<10 | low&0x3FF) + 0x10000
		escLen = 12
	}
	switch {
	case cp <= 0x7F:
		d.tmp = append(d.tmp, byte(cp))
	case cp <= 0x7FF:
		d.tmp = append(d.tmp, byte(cp>>6|0xC0), byte(cp&0x3F|0x80))
	case cp <= 0xFFFF:
		d.tmp = append(d.tmp, byte(cp>>12|0xE0), byte(cp>>6&0x3F|0x80), byte(cp&0x3F|0x80))
	default:
		d.tmp = append(d.tmp, byte(cp>>18|0xF0), byte(cp>>12&0x3F|0x80), byte(cp>>6&0x3F|0x80), byte(cp&0x3F|0x80))
	}
	d.ptr += escLen
	return true
}

// stringToken is json_next_string_token: raw control bytes pass as they
// are; a NUL ends the input.
func (d *cjsonDecoder) stringToken(tok *cjsonToken) {
	d.ptr++
	// the common case: no escape up to the closing quote
	start := d.ptr
	i := start
	for i < len(d.data) && d.data[i] != '"' && d.data[i] != '\\' && d.data[i] != 0 {
		i++
	}
	if i < len(d.data) && d.data[i] == '"' {
		d.ptr = i + 1
		tok.typ = tString
		tok.sv = d.cfg.strs.get(d.data[start:i])
		return
	}
	d.tmp = append(d.tmp[:0], d.data[start:i]...)
	d.ptr = i
	for {
		ch := d.at(d.ptr)
		if ch == '"' {
			break
		}
		if ch == 0 {
			d.setError(tok, "unexpected end of string")
			return
		}
		if ch == '\\' {
			ch = cjsonEscape2Char[d.at(d.ptr+1)]
			if ch == 'u' {
				if d.unicodeEscape() {
					continue
				}
				d.setError(tok, "invalid unicode escape code")
				return
			}
			if ch == 0 {
				d.setError(tok, "invalid escape code")
				return
			}
			d.ptr++
		}
		d.tmp = append(d.tmp, ch)
		d.ptr++
	}
	d.ptr++
	tok.typ = tString
	tok.sv = d.cfg.strs.get(unsafe.String(unsafe.SliceData(d.tmp), len(d.tmp)))
}

// cjsonStrCache holds the values of the short strings decoded lately, so
// that a string decoded again (an object's keys, mostly) is not
// allocated again, as Lua's string table finds a string it holds: a
// direct-mapped cache of cjsonStrSlots.
type cjsonStrCache struct {
	slots *[cjsonStrSlots]cjsonStrSlot
}

type cjsonStrSlot struct {
	s string
	v lua.LValue
}

const (
	cjsonStrSlots  = 512
	cjsonStrCached = 32 // the longest string cached
)

// get returns the value of the string s, which may be a transient view
// (the cache keeps, and a value holds, a copy).
func (c *cjsonStrCache) get(s string) lua.LValue {
	if len(s) > cjsonStrCached {
		return lua.LString(strings.Clone(s))
	}
	if c.slots == nil {
		c.slots = new([cjsonStrSlots]cjsonStrSlot)
	}
	h := uint32(len(s))
	for i := 0; i < len(s); i++ {
		h = h*31 + uint32(s[i])
	}
	slot := &c.slots[h%cjsonStrSlots]
	if slot.v != nil && slot.s == s {
		return slot.v
	}
	slot.s = strings.Clone(s)
	slot.v = lua.LString(slot.s)
	return slot.v
}

// parseError is json_throw_parse_error.
func (d *cjsonDecoder) parseError(exp string, tok *cjsonToken) {
	found := cjsonTokenNames[tok.typ]
	if tok.typ == tError {
		found = tok.str
	}
	cjsonRaise(d.L, "Expected %s but found %s at character %d", exp, found, tok.index+1)
}

// cjsonMaxCStack is LUAI_MAXCSTACK: lua_checkstack refuses to grow a C
// function's stack past 8000 values, which bounds the nesting the encoder
// and decoder reach when their max depth is raised (7999 arrays, 4000
// objects for decode).
const cjsonMaxCStack = 8000

// descend is json_decode_descend: past decode_max_depth, or when the
// values the decoder holds on the Lua stack (the argument, each open
// array's table, each open object's table and key) plus slots would pass
// LUAI_MAXCSTACK.
func (d *cjsonDecoder) descend(slots int) {
	d.depth++
	if d.depth > d.cfg.decodeMaxDepth || d.stack+slots > cjsonMaxCStack {
		cjsonRaise(d.L, "Found too many nested data structures (%d) at character %d", d.depth, d.ptr)
	}
}

// closes reports whether tok ends the open object or array (end), and
// then leaves it: one level less deep, its table off the stack.
func (d *cjsonDecoder) closes(tok *cjsonToken, end int) bool {
	if tok.typ != end {
		return false
	}
	d.depth--
	d.stack--
	return true
}

// comma requires tok to be the comma between two elements (else the parse
// error expecting what) and reads the token after it.
func (d *cjsonDecoder) comma(tok *cjsonToken, what string) {
	if tok.typ != tComma {
		d.parseError(what, tok)
	}
	d.next(tok)
}

// value is json_process_value.
func (d *cjsonDecoder) value(tok *cjsonToken) lua.LValue {
	switch tok.typ {
	case tString:
		return tok.sv
	case tNumber:
		return cjsonNumber(tok.num)
	case tBoolean:
		return lua.LBool(tok.b)
	case tNull:
		return d.null
	case tObjBegin:
		// lua_newtable, then lua_rawset of each pair in order: the pairs
		// wait on the stacks, the builder makes the table that those
		// rawsets would at the end
		d.descend(3)
		d.stack++
		cfg := d.cfg
		kbase, vbase := len(cfg.keys), len(cfg.vals)
		d.next(tok)
		if d.closes(tok, tObjEnd) {
			return d.L.NewTable()
		}
		for {
			if tok.typ != tString {
				d.parseError("object key string", tok)
			}
			key := tok.sv
			d.next(tok)
			if tok.typ != tColon {
				d.parseError("colon", tok)
			}
			d.next(tok)
			d.stack++ // the key
			v := d.value(tok)
			d.stack--
			cfg.keys = append(cfg.keys, key)
			cfg.vals = append(cfg.vals, v)
			d.next(tok)
			if d.closes(tok, tObjEnd) {
				t := cfg.builder.Build(cfg.keys[kbase:], cfg.vals[vbase:])
				clear(cfg.keys[kbase:])
				clear(cfg.vals[vbase:])
				cfg.keys, cfg.vals = cfg.keys[:kbase], cfg.vals[:vbase]
				return t
			}
			d.comma(tok, "comma or object end")
		}
	case tArrBegin:
		// lua_newtable, then lua_rawseti of each value
		d.descend(2)
		d.stack++
		cfg := d.cfg
		vbase := len(cfg.vals)
		d.next(tok)
		if d.closes(tok, tArrEnd) {
			return d.L.NewTable()
		}
		for {
			v := d.value(tok)
			cfg.vals = append(cfg.vals, v)
			d.next(tok)
			if d.closes(tok, tArrEnd) {
				t := lua.NewArrayTable(cfg.vals[vbase:])
				clear(cfg.vals[vbase:])
				cfg.vals = cfg.vals[:vbase]
				return t
			}
			d.comma(tok, "comma or array end")
		}
	}
	d.parseError("value", tok)
	return nil
}

// cjsonNumbers are the values of the integers 0 to 255, boxed once.
var cjsonNumbers = func() (t [256]lua.LValue) {
	for i := range t {
		t[i] = lua.LNumber(i)
	}
	return
}()

// cjsonNumber is f as a value, the boxed one for 0 to 255 (not -0).
func cjsonNumber(f float64) lua.LValue {
	if f >= 0 && f < 256 {
		if i := int(f); float64(i) == f && (i != 0 || !math.Signbit(f)) {
			return cjsonNumbers[i]
		}
	}
	return lua.LNumber(f)
}

// cStrtod is glibc's strtod on the C string s (a NUL, or the end, stops
// it): the value and how many bytes it read, 0 when none. Beyond JSON it
// reads a '+' sign, leading zeros, "1." and ".5", hex numbers (0x10,
// 0x1.8p1), inf/infinity and nan/nan(chars) in any case; out of range
// values are ±inf or 0.
func cStrtod(s string) (float64, int) {
	at := func(i int) byte {
		if i < len(s) {
			return s[i]
		}
		return 0
	}
	isDigit := func(ch byte) bool { return '0' <= ch && ch <= '9' }
	i := 0
	neg := false
	if ch := at(0); ch == '+' || ch == '-' {
		neg = ch == '-'
		i++
	}
	sign := func(f float64) float64 {
		if neg {
			return -f
		}
		return f
	}
	fold := func(p int, w string) bool {
		return p+len(w) <= len(s) && strings.EqualFold(s[p:p+len(w)], w)
	}
	switch {
	case fold(i, "infinity"):
		return sign(math.Inf(1)), i + 8
	case fold(i, "inf"):
		return sign(math.Inf(1)), i + 3
	case fold(i, "nan"):
		n := i + 3
		if at(n) == '(' {
			j := n + 1
			for ch := at(j); isDigit(ch) || 'a' <= ch|0x20 && ch|0x20 <= 'z' || ch == '_'; ch = at(j) {
				j++
			}
			if at(j) == ')' {
				n = j + 1
			}
		}
		nan := math.NaN()
		if neg {
			nan = math.Float64frombits(math.Float64bits(nan) | 1<<63)
		}
		return nan, n
	}
	if at(i) == '0' && at(i+1)|0x20 == 'x' {
		j := i + 2
		digits := 0
		for cjsonHex(at(j)) >= 0 {
			j++
			digits++
		}
		if at(j) == '.' {
			j++
			for cjsonHex(at(j)) >= 0 {
				j++
				digits++
			}
		}
		if digits > 0 {
			mant := s[i+2 : j]
			exp := "p0"
			if at(j)|0x20 == 'p' {
				k := j + 1
				if at(k) == '+' || at(k) == '-' {
					k++
				}
				if isDigit(at(k)) {
					for isDigit(at(k)) {
						k++
					}
					exp = "p" + s[j+1:k]
					j = k
				}
			}
			if strings.HasPrefix(mant, ".") {
				mant = "0" + mant
			}
			f, _ := strconv.ParseFloat("0x"+mant+exp, 64)
			return sign(f), j
		}
		// "0x" without hex digits: strtod reads the 0.
		return sign(0), i + 1
	}
	j := i
	digits := 0
	for isDigit(at(j)) {
		j++
		digits++
	}
	if at(j) == '.' {
		j++
		for isDigit(at(j)) {
			j++
			digits++
		}
	}
	if digits == 0 {
		return 0, 0
	}
	if at(j)|0x20 == 'e' {
		k := j + 1
		if at(k) == '+' || at(k) == '-' {
			k++
		}
		if isDigit(at(k)) {
			for isDigit(at(k)) {
				k++
			}
			j = k
		}
	}
	num := s[i:j]
	mant := num
	if e := strings.IndexAny(num, "eE"); e >= 0 {
		mant = num[:e]
	}
	if strings.HasSuffix(mant, ".") {
		num = strings.Replace(num, ".", "", 1)
	}
	f, _ := strconv.ParseFloat(num, 64)
	return sign(f), j
}
