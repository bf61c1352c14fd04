package lua

import (
	"math"
	"strconv"

	lua "github.com/yuin/gopher-lua"
)

// struct (deps/lua/src/lua_struct.c, Roberto Ierusalimschy's library as
// bundled by Redis 7.0): pack, unpack and size of binary records, on
// x86-64's sizes (long and size_t 8 bytes).

type structFmt struct {
	L        *lua.LState
	fn       string // the library function, for argument errors
	f        string
	i        int
	little   bool
	maxAlign int
}

// next returns the next option and its size (0 for options without one).
func (s *structFmt) next() (byte, int, bool) {
	for s.i < len(s.f) {
		opt := s.f[s.i]
		s.i++
		switch opt {
		case ' ':
			continue
		case '>':
			s.little = false
			continue
		case '<':
			s.little = true
			continue
		case '!':
			s.maxAlign = s.num(8)
			continue
		case 'b', 'B', 'x':
			return opt, 1, true
		case 'h', 'H':
			return opt, 2, true
		case 'l', 'L', 'T':
			return opt, 8, true
		case 'f':
			return opt, 4, true
		case 'd':
			return opt, 8, true
		case 'c':
			return opt, s.num(1), true
		case 's':
			return opt, 0, true
		case 'i', 'I':
			n := s.num(4)
			if n > 32 { // MAXINTSIZE
				s.L.RaiseError("integral size %d is larger than limit of %d", n, 32)
			}
			return opt, n, true
		default:
			s.L.RaiseError("bad argument #1 to '%s' (invalid format option '%c')", s.fn, opt)
		}
	}
	return 0, 0, false
}

func (s *structFmt) num(def int) int {
	j := s.i
	for j < len(s.f) && s.f[j] >= '0' && s.f[j] <= '9' {
		j++
	}
	if j == s.i {
		return def
	}
	n, _ := strconv.Atoi(s.f[s.i:j])
	s.i = j
	return n
}

// align is gettoalign: the padding before an option of size n at pos.
func (s *structFmt) align(pos int, opt byte, n int) int {
	if opt == 'c' || opt == 's' || opt == 'x' || n <= 1 {
		return 0
	}
	a := n
	if a > s.maxAlign {
		a = s.maxAlign
	}
	if a <= 1 || a&(a-1) != 0 {
		return 0
	}
	return (a - pos&(a-1)) & (a - 1)
}

func (s *structFmt) putInt(b []byte, v uint64, n int) []byte {
	buf := make([]byte, n)
	for i := 0; i < n; i++ {
		byteV := byte(v >> (8 * i))
		if s.little {
			buf[i] = byteV
		} else {
			buf[n-1-i] = byteV
		}
	}
	return append(b, buf...)
}

func openStruct(L *lua.LState, g *lua.LTable) {
	t := L.NewTable()
	t.RawSetString("pack", L.NewFunction(func(L *lua.LState) int {
		f := &structFmt{L: L, fn: "pack", f: L.CheckString(1), little: true, maxAlign: 1}
		var b []byte
		arg := 2
		for {
			opt, n, ok := f.next()
			if !ok {
				break
			}
			for pad := f.align(len(b), opt, n); pad > 0; pad-- {
				b = append(b, 0)
			}
			switch opt {
			case 'x':
				b = append(b, 0)
				continue
			case 'b', 'B', 'h', 'H', 'l', 'L', 'T', 'i', 'I':
				v := float64(L.CheckNumber(arg))
				var u uint64
				if opt >= 'a' && opt <= 'z' { // signed
					u = uint64(int64(v))
				} else {
					u = uint64(v)
				}
				b = f.putInt(b, u, n)
			case 'f':
				b = f.putInt(b, uint64(math.Float32bits(float32(L.CheckNumber(arg)))), 4)
			case 'd':
				b = f.putInt(b, math.Float64bits(float64(L.CheckNumber(arg))), 8)
			case 'c', 's':
				str := L.CheckString(arg)
				l := len(str)
				if opt == 'c' && n != 0 {
					if l < n {
						L.ArgError(arg, "string too short")
					}
					l = n
				}
				b = append(b, str[:l]...)
				if opt == 's' {
					b = append(b, 0)
				}
			}
			arg++
		}
		L.Push(lua.LString(b))
		return 1
	}))
	t.RawSetString("unpack", L.NewFunction(func(L *lua.LState) int {
		f := &structFmt{L: L, fn: "unpack", f: L.CheckString(1), little: true, maxAlign: 1}
		data := L.CheckString(2)
		pos := L.OptInt(3, 1) - 1
		if pos < 0 || pos > len(data) {
			L.ArgError(3, "offset must be 1 or greater")
		}
		count := 0
		prev := 0
		for {
			opt, n, ok := f.next()
			if !ok {
				break
			}
			pos += f.align(pos, opt, n)
			if opt != 's' && (pos+n > len(data)) {
				L.ArgError(2, "data string too short")
			}
			switch opt {
			case 'x':
				pos++
				continue
			case 'b', 'B', 'h', 'H', 'l', 'L', 'T', 'i', 'I':
				var u uint64
				for i := 0; i < n; i++ {
					var c byte
					if f.little {
						c = data[pos+n-1-i]
					} else {
						c = data[pos+i]
					}
					u = u<<8 | uint64(c)
				}
				var v float64
				if opt >= 'a' && opt <= 'z' && n < 8 {
					shift := uint(64 - 8*n)
					v = float64(int64(u<<shift) >> shift)
				} else if opt >= 'a' && opt <= 'z' {
					v = float64(int64(u))
				} else {
					v = float64(u)
				}
				prev = int(v)
				L.Push(lua.LNumber(v))
			case 'f':
				L.Push(lua.LNumber(math.Float32frombits(uint32(readUint(data[pos:pos+4], f.little)))))
			case 'd':
				L.Push(lua.LNumber(math.Float64frombits(readUint(data[pos:pos+8], f.little))))
			case 'c':
				if n == 0 {
					if count == 0 {
						L.RaiseError("format 'c0' needs a previous size")
					}
					n = prev
					L.Pop(1)
					count--
					if pos+n > len(data) {
						L.ArgError(2, "data string too short")
					}
				}
				L.Push(lua.LString(data[pos : pos+n]))
			case 's':
				end := pos
				for end < len(data) && data[end] != 0 {
					end++
				}
				if end >= len(data) {
					L.RaiseError("unfinished string in data")
				}
				L.Push(lua.LString(data[pos:end]))
				n = end - pos + 1
			}
			pos += n
			count++
		}
		L.Push(lua.LNumber(pos + 1))
		return count + 1
	}))
	t.RawSetString("size", L.NewFunction(func(L *lua.LState) int {
		f := &structFmt{L: L, fn: "size", f: L.CheckString(1), little: true, maxAlign: 1}
		pos := 0
		for {
			opt, n, ok := f.next()
			if !ok {
				break
			}
			if opt == 's' || (opt == 'c' && n == 0) {
				L.ArgError(1, "options 'c0' - 's' have undefined sizes")
			}
			pos += f.align(pos, opt, n) + n
		}
		L.Push(lua.LNumber(pos))
		return 1
	}))
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
