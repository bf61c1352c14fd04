package lua

import (
	"encoding/binary"
	"math"

	lua "github.com/yuin/gopher-lua"
)

// cmsgpack (deps/lua/src/lua_cmsgpack.c, as bundled by Redis 7.0): pack
// and unpack between Lua values and MessagePack.

const cmsgpackMaxNesting = 16 // LUACMSGPACK_MAX_NESTING

func openCMsgpack(L *lua.LState, g *lua.LTable) {
	t := L.NewTable()
	// lua_cmsgpack.c's module fields.
	t.RawSetString("_NAME", lua.LString("cmsgpack"))
	t.RawSetString("_VERSION", lua.LString("lua-cmsgpack 0.4.0"))
	t.RawSetString("_COPYRIGHT", lua.LString("Copyright (C) 2012, Salvatore Sanfilippo"))
	t.RawSetString("_DESCRIPTION", lua.LString("MessagePack C implementation for Lua"))
	t.RawSetString("pack", L.NewFunction(func(L *lua.LState) int {
		n := L.GetTop()
		if n == 0 {
			L.RaiseError("bad argument #0 to 'pack' (MessagePack pack needs input.)")
		}
		var buf []byte
		for i := 1; i <= n; i++ {
			buf = msgpackEncode(buf, L.Get(i), 0)
		}
		L.Push(lua.LString(buf))
		return 1
	}))
	// mp_unpack_full: limit and offset both 0 decode everything and
	// return no offset; otherwise at most limit values from offset,
	// after the offset to go on from (-1 at the end of the input).
	unpackFull := func(L *lua.LState, limit, offset int) int {
		s := checkString(L, 1)
		decodeAll := limit == 0 && offset == 0
		if offset < 0 || limit < 0 {
			L.RaiseError("Invalid request to unpack with offset of %d and limit of %d.", offset, len(s))
		}
		if offset > len(s) {
			L.RaiseError("Start offset %d greater than input length %d.", offset, len(s))
		}
		if decodeAll {
			limit = math.MaxInt32
		}
		d := msgpackDecoder{L: L, b: []byte(s), pos: offset}
		var out []lua.LValue
		for d.pos < len(d.b) && len(out) < limit {
			v := d.value(0)
			if d.err != "" {
				L.RaiseError("%s", d.err)
			}
			out = append(out, v)
		}
		n := 0
		if !decodeAll {
			next := d.pos
			if next >= len(d.b) {
				next = -1
			}
			L.Push(lua.LNumber(next))
			n++
		}
		for _, v := range out {
			L.Push(v)
		}
		return n + len(out)
	}
	t.RawSetString("unpack", L.NewFunction(func(L *lua.LState) int {
		return unpackFull(L, 0, 0)
	}))
	t.RawSetString("unpack_one", L.NewFunction(func(L *lua.LState) int {
		offset := optInt(L, 2, 0)
		L.SetTop(min(L.GetTop(), 1))
		return unpackFull(L, 1, offset)
	}))
	t.RawSetString("unpack_limit", L.NewFunction(func(L *lua.LState) int {
		limit := checkInt(L, 2)
		offset := optInt(L, 3, 0)
		L.SetTop(1)
		return unpackFull(L, limit, offset)
	}))
	g.RawSetString("cmsgpack", t)
}

func msgpackInt(b []byte, n int64) []byte {
	switch {
	case n >= 0 && n <= 127:
		return append(b, byte(n))
	case n >= 0 && n <= 0xff:
		return append(b, 0xcc, byte(n))
	case n >= 0 && n <= 0xffff:
		return binary.BigEndian.AppendUint16(append(b, 0xcd), uint16(n))
	case n >= 0 && n <= 0xffffffff:
		return binary.BigEndian.AppendUint32(append(b, 0xce), uint32(n))
	case n >= 0:
		return binary.BigEndian.AppendUint64(append(b, 0xcf), uint64(n))
	case n >= -32:
		return append(b, byte(int8(n)))
	case n >= -128:
		return append(b, 0xd0, byte(int8(n)))
	case n >= -32768:
		return binary.BigEndian.AppendUint16(append(b, 0xd1), uint16(int16(n)))
	case n >= math.MinInt32:
		return binary.BigEndian.AppendUint32(append(b, 0xd2), uint32(int32(n)))
	}
	return binary.BigEndian.AppendUint64(append(b, 0xd3), uint64(n))
}

func msgpackLen(b []byte, n int, fix, small byte, b8, b16, b32 byte) []byte {
	switch {
	case n < int(small):
		return append(b, fix|byte(n))
	case b8 != 0 && n <= 0xff:
		return append(b, b8, byte(n))
	case n <= 0xffff:
		return binary.BigEndian.AppendUint16(append(b, b16), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(b, b32), uint32(n))
}

// msgpackEncode is mp_encode_lua_type: beyond the nesting limit a value
// encodes as nil.
func msgpackEncode(b []byte, v lua.LValue, level int) []byte {
	switch x := v.(type) {
	case lua.LBool:
		if x {
			return append(b, 0xc3)
		}
		return append(b, 0xc2)
	case lua.LNumber:
		f := float64(x)
		if !math.IsInf(f, 0) && !math.IsNaN(f) && f == float64(int64(f)) {
			return msgpackInt(b, int64(f))
		}
		if float64(float32(f)) == f {
			return binary.BigEndian.AppendUint32(append(b, 0xca), math.Float32bits(float32(f)))
		}
		return binary.BigEndian.AppendUint64(append(b, 0xcb), math.Float64bits(f))
	case lua.LString:
		b = msgpackLen(b, len(x), 0xa0, 32, 0xd9, 0xda, 0xdb)
		return append(b, x...)
	case *lua.LTable:
		if level >= cmsgpackMaxNesting {
			return append(b, 0xc0)
		}
		count, max, isArray := 0, 0, true
		x.ForEach(func(k, _ lua.LValue) {
			count++
			n, ok := k.(lua.LNumber)
			if !ok || n < 1 || float64(n) != math.Trunc(float64(n)) {
				isArray = false
				return
			}
			if int(n) > max {
				max = int(n)
			}
		})
		if isArray && max == count {
			b = msgpackLen(b, count, 0x90, 16, 0, 0xdc, 0xdd)
			for i := 1; i <= count; i++ {
				b = msgpackEncode(b, x.RawGetInt(i), level+1)
			}
			return b
		}
		b = msgpackLen(b, count, 0x80, 16, 0, 0xde, 0xdf)
		x.ForEach(func(k, val lua.LValue) {
			b = msgpackEncode(b, k, level+1)
			b = msgpackEncode(b, val, level+1)
		})
		return b
	}
	return append(b, 0xc0)
}

type msgpackDecoder struct {
	L   *lua.LState
	b   []byte
	pos int
	err string
}

func (d *msgpackDecoder) need(n int) bool {
	if d.err != "" {
		return false
	}
	if len(d.b)-d.pos < n {
		d.err = "Missing bytes in input."
		return false
	}
	return true
}

func (d *msgpackDecoder) take(n int) []byte {
	if !d.need(n) {
		return nil
	}
	p := d.b[d.pos : d.pos+n]
	d.pos += n
	return p
}

func (d *msgpackDecoder) uint(n int) uint64 {
	p := d.take(n)
	var v uint64
	for _, c := range p {
		v = v<<8 | uint64(c)
	}
	return v
}

func (d *msgpackDecoder) value(depth int) lua.LValue {
	if depth > 1000 {
		d.err = "Bad data format in input."
		return lua.LNil
	}
	if !d.need(1) {
		return lua.LNil
	}
	c := d.b[d.pos]
	d.pos++
	switch {
	case c <= 0x7f:
		return lua.LNumber(c)
	case c >= 0xe0:
		return lua.LNumber(int8(c))
	case c&0xe0 == 0xa0:
		return lua.LString(d.take(int(c & 0x1f)))
	case c&0xf0 == 0x90:
		return d.array(int(c&0x0f), depth)
	case c&0xf0 == 0x80:
		return d.mapv(int(c&0x0f), depth)
	}
	switch c {
	case 0xc0:
		return lua.LNil
	case 0xc2:
		return lua.LFalse
	case 0xc3:
		return lua.LTrue
	case 0xcc:
		return lua.LNumber(d.uint(1))
	case 0xcd:
		return lua.LNumber(d.uint(2))
	case 0xce:
		return lua.LNumber(d.uint(4))
	case 0xcf:
		return lua.LNumber(d.uint(8))
	case 0xd0:
		return lua.LNumber(int8(d.uint(1)))
	case 0xd1:
		return lua.LNumber(int16(d.uint(2)))
	case 0xd2:
		return lua.LNumber(int32(d.uint(4)))
	case 0xd3:
		return lua.LNumber(int64(d.uint(8)))
	case 0xca:
		return lua.LNumber(math.Float32frombits(uint32(d.uint(4))))
	case 0xcb:
		return lua.LNumber(math.Float64frombits(d.uint(8)))
	case 0xd9, 0xc4:
		return lua.LString(d.take(int(d.uint(1))))
	case 0xda, 0xc5:
		return lua.LString(d.take(int(d.uint(2))))
	case 0xdb, 0xc6:
		return lua.LString(d.take(int(d.uint(4))))
	case 0xdc:
		return d.array(int(d.uint(2)), depth)
	case 0xdd:
		return d.array(int(d.uint(4)), depth)
	case 0xde:
		return d.mapv(int(d.uint(2)), depth)
	case 0xdf:
		return d.mapv(int(d.uint(4)), depth)
	}
	d.err = "Bad data format in input."
	return lua.LNil
}

func (d *msgpackDecoder) array(n int, depth int) lua.LValue {
	if n > len(d.b)-d.pos { // every element takes a byte at least
		d.err = "Missing bytes in input."
		return lua.LNil
	}
	t := d.L.NewTable() // lua_newtable, as mp_decode_to_lua_array
	for i := 1; i <= n && d.err == ""; i++ {
		t.RawSetInt(i, d.value(depth+1))
	}
	return t
}

func (d *msgpackDecoder) mapv(n int, depth int) lua.LValue {
	if 2*n > len(d.b)-d.pos {
		d.err = "Missing bytes in input."
		return lua.LNil
	}
	t := d.L.NewTable() // lua_newtable, as mp_decode_to_lua_hash
	for i := 0; i < n && d.err == ""; i++ {
		k := d.value(depth + 1)
		v := d.value(depth + 1)
		if k != lua.LNil && d.err == "" {
			t.RawSet(k, v)
		}
	}
	return t
}
