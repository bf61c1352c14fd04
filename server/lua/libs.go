package lua

import (
	"encoding/json"
	"math"

	lua "github.com/yuin/gopher-lua"
)

// The Lua libraries Redis 7.0 bundles besides Lua's own (deps/lua/src):
// bit (LuaBitOp) and cjson (lua-cjson).

// OpenLibs adds the libraries Redis 7.0 bundles besides Lua's own to the
// globals g: bit, cjson, cmsgpack and struct, in that order.
func OpenLibs(L *lua.LState, g *lua.LTable) {
	openBit(L, g)
	openCJSON(L, g)
	openCMsgpack(L, g)
	openStruct(L, g)
}

// bitArg is LuaBitOp's barg: a number normalised to a signed 32-bit value.
func bitArg(L *lua.LState, i int) int32 {
	f := float64(L.CheckNumber(i))
	// The low 32 bits of f + 2^52 + 2^51 (bit.c's BIT_USE_D2I off): the
	// value rounded to even, modulo 2^32, and Lua BitOp's own answer for
	// numbers past 2^51 (bit.tobit(1e300)).
	return int32(uint32(math.Float64bits(f + 6755399441055744.0)))
}

func openBit(L *lua.LState, g *lua.LTable) {
	b := L.NewTable()
	ret := func(L *lua.LState, v int32) int { L.Push(lua.LNumber(v)); return 1 }
	fold := func(op func(a, b int32) int32) lua.LGFunction {
		return func(L *lua.LState) int {
			r := bitArg(L, 1)
			for i := 2; i <= L.GetTop(); i++ {
				r = op(r, bitArg(L, i))
			}
			return ret(L, r)
		}
	}
	shift := func(op func(a uint32, n uint) uint32) lua.LGFunction {
		return func(L *lua.LState) int {
			return ret(L, int32(op(uint32(bitArg(L, 1)), uint(bitArg(L, 2))&31)))
		}
	}
	fns := map[string]lua.LGFunction{
		"tobit":   func(L *lua.LState) int { return ret(L, bitArg(L, 1)) },
		"bnot":    func(L *lua.LState) int { return ret(L, ^bitArg(L, 1)) },
		"band":    fold(func(a, b int32) int32 { return a & b }),
		"bor":     fold(func(a, b int32) int32 { return a | b }),
		"bxor":    fold(func(a, b int32) int32 { return a ^ b }),
		"lshift":  shift(func(a uint32, n uint) uint32 { return a << n }),
		"rshift":  shift(func(a uint32, n uint) uint32 { return a >> n }),
		"arshift": shift(func(a uint32, n uint) uint32 { return uint32(int32(a) >> n) }),
		"rol":     shift(func(a uint32, n uint) uint32 { return a<<n | a>>(32-n) }),
		"ror":     shift(func(a uint32, n uint) uint32 { return a>>n | a<<(32-n) }),
		"bswap": func(L *lua.LState) int {
			x := uint32(bitArg(L, 1))
			return ret(L, int32(x>>24|(x>>8)&0xff00|(x&0xff00)<<8|x<<24))
		},
		"tohex": func(L *lua.LState) int {
			x := uint32(bitArg(L, 1))
			n := int32(8)
			if L.GetTop() >= 2 {
				n = bitArg(L, 2)
			}
			digits := "0123456789abcdef"
			if n < 0 {
				n = -n
				digits = "0123456789ABCDEF"
			}
			if n > 8 {
				n = 8
			}
			buf := make([]byte, n)
			for i := int(n) - 1; i >= 0; i-- {
				buf[i] = digits[x&15]
				x >>= 4
			}
			L.Push(lua.LString(buf))
			return 1
		},
	}
	for name, fn := range fns {
		b.RawSetString(name, L.NewFunction(fn))
	}
	g.RawSetString("bit", b)
}

// cjsonNull is cjson.null (a lightuserdata NULL in lua-cjson).
var cjsonNullKey = "cjson.null"

func openCJSON(L *lua.LState, g *lua.LTable) {
	null := L.NewUserData()
	null.Value = cjsonNullKey
	t := L.NewTable()
	t.RawSetString("null", null)
	t.RawSetString("_NAME", lua.LString("cjson"))
	t.RawSetString("_VERSION", lua.LString("2.1.0"))
	t.RawSetString("encode", L.NewFunction(func(L *lua.LState) int {
		if L.GetTop() != 1 {
			L.RaiseError("bad argument #1 to 'encode' (expected 1 argument)")
		}
		buf, msg := cjsonEncode(nil, L.Get(1), 0)
		if msg != "" {
			L.RaiseError("Cannot serialise%s", msg)
		}
		L.Push(lua.LString(buf))
		return 1
	}))
	t.RawSetString("decode", L.NewFunction(func(L *lua.LState) int {
		if L.GetTop() != 1 {
			L.RaiseError("bad argument #1 to 'decode' (expected 1 argument)")
		}
		var v any
		if err := json.Unmarshal([]byte(L.CheckString(1)), &v); err != nil {
			L.RaiseError("Expected value but found invalid token")
		}
		L.Push(cjsonToLua(L, v, null))
		return 1
	}))
	g.RawSetString("cjson", t)
}

func cjsonToLua(L *lua.LState, v any, null *lua.LUserData) lua.LValue {
	switch x := v.(type) {
	case nil:
		return null
	case bool:
		return lua.LBool(x)
	case float64:
		return lua.LNumber(x)
	case string:
		return lua.LString(x)
	case []any:
		t := L.CreateTable(len(x), 0)
		for i, e := range x {
			t.RawSetInt(i+1, cjsonToLua(L, e, null))
		}
		return t
	case map[string]any:
		t := L.CreateTable(0, len(x))
		for k, e := range x {
			t.RawSetString(k, cjsonToLua(L, e, null))
		}
		return t
	}
	return null
}

// cjsonNumber is lua-cjson's "%.14g" number format.
func cjsonNumber(buf []byte, f float64) []byte {
	return append(buf, FormatNumber(f)...)
}

func cjsonString(buf []byte, s string) []byte {
	buf = append(buf, '"')
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch ch {
		case '"':
			buf = append(buf, '\\', '"')
		case '\\':
			buf = append(buf, '\\', '\\')
		case '/':
			buf = append(buf, '\\', '/')
		case '\b':
			buf = append(buf, '\\', 'b')
		case '\f':
			buf = append(buf, '\\', 'f')
		case '\n':
			buf = append(buf, '\\', 'n')
		case '\r':
			buf = append(buf, '\\', 'r')
		case '\t':
			buf = append(buf, '\\', 't')
		default:
			if ch < 0x20 || ch == 0x7f {
				buf = append(buf, '\\', 'u', '0', '0', "0123456789abcdef"[ch>>4], "0123456789abcdef"[ch&15])
			} else {
				buf = append(buf, ch)
			}
		}
	}
	return append(buf, '"')
}

// cjsonEncode is json_append_data; a non-empty msg names what cannot be
// serialised.
func cjsonEncode(buf []byte, v lua.LValue, depth int) ([]byte, string) {
	if depth > 1000 {
		return buf, ", excessive nesting (1001)"
	}
	switch x := v.(type) {
	case lua.LString:
		return cjsonString(buf, string(x)), ""
	case lua.LNumber:
		f := float64(x)
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return buf, " number: must not be NaN or Inf"
		}
		return cjsonNumber(buf, f), ""
	case lua.LBool:
		if x {
			return append(buf, "true"...), ""
		}
		return append(buf, "false"...), ""
	case *lua.LNilType:
		return append(buf, "null"...), ""
	case *lua.LUserData:
		if x.Value == cjsonNullKey {
			return append(buf, "null"...), ""
		}
		return buf, " userdata: type not supported"
	case *lua.LTable:
		// An array when every key is a positive integer (lua_array_length).
		max, items, isArray := 0, 0, true
		x.ForEach(func(k, _ lua.LValue) {
			items++
			n, ok := k.(lua.LNumber)
			if !ok || float64(n) != math.Trunc(float64(n)) || n < 1 {
				isArray = false
				return
			}
			if int(n) > max {
				max = int(n)
			}
		})
		if isArray && items > 0 {
			if max > items*2 && max > 10 {
				return buf, " table: excessively sparse array"
			}
			buf = append(buf, '[')
			for i := 1; i <= max; i++ {
				if i > 1 {
					buf = append(buf, ',')
				}
				var msg string
				if buf, msg = cjsonEncode(buf, x.RawGetInt(i), depth+1); msg != "" {
					return buf, msg
				}
			}
			return append(buf, ']'), ""
		}
		type kv struct {
			k string
			v lua.LValue
		}
		var kvs []kv
		bad := ""
		x.ForEach(func(k, v lua.LValue) {
			switch kk := k.(type) {
			case lua.LString:
				kvs = append(kvs, kv{string(kk), v})
			case lua.LNumber:
				kvs = append(kvs, kv{string(cjsonNumber(nil, float64(kk))), v})
			default:
				bad = " table: table key must be a number or string"
			}
		})
		if bad != "" {
			return buf, bad
		}
		buf = append(buf, '{')
		for i, e := range kvs {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = cjsonString(buf, e.k)
			buf = append(buf, ':')
			var msg string
			if buf, msg = cjsonEncode(buf, e.v, depth+1); msg != "" {
				return buf, msg
			}
		}
		return append(buf, '}'), ""
	}
	return buf, " " + v.Type().String() + ": type not supported"
}
