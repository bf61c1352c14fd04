package lua

import (
	"math"
	"reflect"

	lua "github.com/yuin/gopher-lua"
)

// struct (deps/lua/src/lua_struct.c, Roberto Ierusalimschy's library
// v1.4 as bundled by Redis 7.0, with its CVE fixes): pack, unpack and size of binary records,
// on x86-64's sizes (long and size_t 8 bytes, alignment up to 8), ported
// with its quirks: pack's argument after the last is the nil it pushes as
// a mark ("got nil"), "string too short" names the argument after the
// string, unpack's offset is a size_t (a negative one wraps around).

const (
	structMaxIntSize = 32 // MAXINTSIZE
	structMaxAlign   = 8  // MAXALIGN
)

type structHeader struct {
	little bool
	align  int
}

// structFormat walks a format string (a C string: it ends at a NUL).
type structFormat struct {
	L *lua.LState
	f string
	i int
}

func newStructFormat(L *lua.LState, f string) *structFormat {
	return &structFormat{L: L, f: cPattern(f)}
}

func (s *structFormat) more() bool { return s.i < len(s.f) }

// getnum reads a decimal number, df when there is none.
func (s *structFormat) getnum(df int) int {
	if s.i >= len(s.f) || !isDigit(s.f[s.i]) {
		return df
	}
	a := 0
	for s.i < len(s.f) && isDigit(s.f[s.i]) {
		d := int(s.f[s.i] - '0')
		if a > math.MaxInt32/10 || a*10 > math.MaxInt32-d {
			luaLError(s.L, "integral size overflow")
		}
		a = a*10 + d
		s.i++
	}
	return a
}

// optsize reads an option and its size (0 for options without one).
func (s *structFormat) optsize() (byte, int) {
	opt := s.f[s.i]
	s.i++
	switch opt {
	case 'B', 'b', 'x':
		return opt, 1
	case 'H', 'h':
		return opt, 2
	case 'L', 'l', 'T', 'd':
		return opt, 8
	case 'f':
		return opt, 4
	case 'c':
		return opt, s.getnum(1)
	case 'i', 'I':
		sz := s.getnum(4)
		if sz > structMaxIntSize {
			luaLError(s.L, "integral size "+itoa(sz)+" is larger than limit of "+itoa(structMaxIntSize))
		}
		return opt, sz
	}
	return opt, 0
}

func itoa(n int) string { return FormatNumber(float64(n)) }

// gettoalign is the padding before an option of size at len.
func (h *structHeader) gettoalign(len uint64, opt byte, size int) uint64 {
	if size == 0 || opt == 'c' {
		return 0
	}
	if size > h.align {
		size = h.align
	}
	sz := uint64(size)
	return (sz - (len & (sz - 1))) & (sz - 1)
}

// controloptions handles ' ', '>', '<', '!' and refuses any other option.
func (s *structFormat) controloptions(opt byte, h *structHeader) {
	switch opt {
	case ' ':
	case '>':
		h.little = false
	case '<':
		h.little = true
	case '!':
		a := s.getnum(structMaxAlign)
		if a <= 0 || a&(a-1) != 0 {
			luaLError(s.L, "alignment "+itoa(a)+" is not a power of 2")
		}
		h.align = a
	default:
		s.L.ArgError(1, "invalid format option '"+string(opt)+"'")
	}
}

// structPack is b_pack.
func structPack(L *lua.LState) int {
	f := newStructFormat(L, checkString(L, 1))
	h := structHeader{little: true, align: 1}
	arg := 2
	L.Push(lua.LNil) // the mark separating the arguments from the buffer
	var b []byte
	for f.more() {
		opt, size := f.optsize()
		toalign := h.gettoalign(uint64(len(b)), opt, size)
		for ; toalign > 0; toalign-- {
			b = append(b, 0)
		}
		switch opt {
		case 'b', 'B', 'h', 'H', 'l', 'L', 'T', 'i', 'I':
			n := checkNumber(L, arg)
			arg++
			var value uint64
			if n < 0 {
				value = uint64(int64(n))
			} else {
				value = uint64(n)
			}
			b = structPutInt(b, value, size, h.little)
		case 'x':
			b = append(b, 0)
		case 'f':
			v := float32(checkNumber(L, arg))
			arg++
			b = structPutInt(b, uint64(math.Float32bits(v)), 4, h.little)
		case 'd':
			v := checkNumber(L, arg)
			arg++
			b = structPutInt(b, math.Float64bits(v), 8, h.little)
		case 'c', 's':
			str := checkString(L, arg)
			arg++
			if size == 0 {
				size = len(str)
			}
			if len(str) < size {
				L.ArgError(arg, "string too short")
			}
			b = append(b, str[:size]...)
			if opt == 's' {
				b = append(b, 0)
			}
		default:
			f.controloptions(opt, &h)
		}
	}
	L.Push(lua.LString(b))
	return 1
}

// structPackPC identifies structPack's frames for the error wording:
// its argument after the last is the nil mark it pushed.
var structPackPC = reflect.ValueOf(structPack).Pointer()

func isStructPack(fn *lua.LFunction) bool {
	return fn != nil && fn.IsG && fn.GFunction != nil && reflect.ValueOf(fn.GFunction).Pointer() == structPackPC
}

// structPutInt appends the size low bytes of v (zeros past 8) in order.
func structPutInt(b []byte, v uint64, size int, little bool) []byte {
	start := len(b)
	for range size {
		b = append(b, 0)
	}
	for i := 0; i < size && i < 8; i++ {
		c := byte(v >> (8 * i))
		if little {
			b[start+i] = c
		} else {
			b[start+size-1-i] = c
		}
	}
	return b
}

// structGetInt is getinteger.
func structGetInt(buf string, little, signed bool, size int) float64 {
	var l uint64
	for i := range size {
		c := buf[i]
		if little {
			c = buf[size-1-i]
		}
		l = l<<8 | uint64(c)
	}
	if !signed {
		return float64(l)
	}
	mask := ^uint64(0) << (uint(size*8-1) & 63) // x86's shift count
	if l&mask != 0 {
		l |= mask
	}
	return float64(int64(l))
}

// structUnpack is b_unpack.
func structUnpack(L *lua.LState) int {
	f := newStructFormat(L, checkString(L, 1))
	data := checkString(L, 2)
	ld := uint64(len(data))
	pos := uint64(int64(optNumber(L, 3, 1))) // a size_t: below 0 wraps around
	if pos == 0 {
		L.ArgError(3, "offset must be 1 or greater")
	}
	pos--
	h := structHeader{little: true, align: 1}
	n := 0 // the number of results
	for f.more() {
		opt, size := f.optsize()
		pos += h.gettoalign(pos, opt, size)
		if uint64(size) > ld || pos > ld-uint64(size) {
			L.ArgError(2, "data string too short")
		}
		checkStack(L, 2, "too many results")
		switch opt {
		case 'b', 'B', 'h', 'H', 'l', 'L', 'T', 'i', 'I':
			L.Push(lua.LNumber(structGetInt(data[pos:pos+uint64(size)], h.little, opt >= 'a', size)))
			n++
		case 'x':
		case 'f':
			L.Push(lua.LNumber(math.Float32frombits(uint32(structGetInt(data[pos:pos+4], h.little, false, 4)))))
			n++
		case 'd':
			L.Push(lua.LNumber(math.Float64frombits(readUint(data[pos:pos+8], h.little))))
			n++
		case 'c':
			if size == 0 {
				prev, ok := toNumber(L.Get(-1))
				if n == 0 || !ok {
					luaLError(L, "format 'c0' needs a previous size")
				}
				L.Pop(1)
				n--
				if prev < 0 || prev > float64(ld-pos) {
					L.ArgError(2, "data string too short")
				}
				size = int(prev)
			}
			L.Push(lua.LString(data[pos : pos+uint64(size)]))
			n++
		case 's':
			e := -1
			for i := pos; i < ld; i++ {
				if data[i] == 0 {
					e = int(i)
					break
				}
			}
			if e < 0 {
				luaLError(L, "unfinished string in data")
			}
			size = e - int(pos) + 1
			L.Push(lua.LString(data[pos : pos+uint64(size)-1]))
			n++
		default:
			f.controloptions(opt, &h)
		}
		pos += uint64(size)
	}
	L.Push(lua.LNumber(float64(int64(pos + 1))))
	return n + 1
}

// structSize is b_size.
func structSize(L *lua.LState) int {
	f := newStructFormat(L, checkString(L, 1))
	h := structHeader{little: true, align: 1}
	var pos uint64
	for f.more() {
		opt, size := f.optsize()
		pos += h.gettoalign(pos, opt, size)
		if opt == 's' {
			L.ArgError(1, "option 's' has no fixed size")
		} else if opt == 'c' && size == 0 {
			L.ArgError(1, "option 'c0' has no fixed size")
		}
		if !isDigit(opt) && !cIsAlpha(opt) {
			f.controloptions(opt, &h)
		}
		pos += uint64(size)
	}
	L.Push(lua.LNumber(float64(pos)))
	return 1
}

func openStruct(L *lua.LState, g *lua.LTable) {
	t := L.NewTable()
	t.RawSetString("pack", L.NewFunction(structPack))
	t.RawSetString("unpack", L.NewFunction(structUnpack))
	t.RawSetString("size", L.NewFunction(structSize))
	g.RawSetString("struct", t)
}

func readUint(b string, little bool) uint64 {
	var u uint64
	for i := range len(b) {
		c := b[i]
		if little {
			c = b[len(b)-1-i]
		}
		u = u<<8 | uint64(c)
	}
	return u
}
