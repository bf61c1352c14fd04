package lua

import (
	"math"

	lua "github.com/yuin/gopher-lua"
)

// The Lua libraries Redis 7.0 bundles besides Lua's own (deps/lua/src):
// bit (LuaBitOp) and cjson (lua-cjson).

// OpenLibs adds the libraries Redis 7.0 bundles besides Lua's own to the
// globals g: bit, cjson, cmsgpack and struct, in that order. seeThrough,
// if given, maps a read-only proxy table to the table it stands for (what
// cjson.encode's raw traversal reads, as lua_next on Redis's own table).
func OpenLibs(L *lua.LState, g *lua.LTable, seeThrough ...func(*lua.LTable) *lua.LTable) {
	openBit(L, g)
	var real func(*lua.LTable) *lua.LTable
	if len(seeThrough) > 0 {
		real = seeThrough[0]
	}
	openCJSON(L, g, real)
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
			if n == math.MinInt32 { // bit_tohex: -n would overflow
				n = math.MinInt32 + 1
			}
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
