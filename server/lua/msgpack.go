package lua

import (
	"encoding/binary"
	"fmt"
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
		// lua_checkstack(L, nargs): the arguments' copies must fit
		// under LUAI_MAXCSTACK.
		if 2*n > maxCStack {
			L.RaiseError("bad argument #0 to 'pack' (Too many arguments for MessagePack pack.)")
		}
		e := msgpackEncoder{L: L}
		for i := 1; i <= n; i++ {
			// Argument i is pushed above the arguments and the i-1
			// strings packed before it.
			e.encode(L.Get(i), 0, n+i)
		}
		buf := e.b
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
			luaLError(L, fmt.Sprintf("Invalid request to unpack with offset of %d and limit of %d.", offset, len(s)))
		}
		if offset > len(s) {
			luaLError(L, fmt.Sprintf("Start offset %d greater than input length %d.", offset, len(s)))
		}
		if decodeAll {
			limit = math.MaxInt32
		}
		d := msgpackDecoder{L: L, b: []byte(s), pos: offset}
		var out []lua.LValue
		for d.pos < len(d.b) && len(out) < limit {
			// The values decoded so far are on the stack above the
			// arguments.
			v := d.value(L.GetTop() + len(out))
			if d.err != "" {
				luaLError(L, d.err)
			}
			out = append(out, v)
		}
		n := 0
		if !decodeAll {
			if L.GetTop()+len(out)+1 > maxCStack {
				luaLError(L, "stack overflow (in function mp_unpack_full)")
			}
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

// msgpackEncoder packs values as mp_pack does, keeping count of the Lua
// stack lua_cmsgpack.c would use (top: the stack's height with the value
// being packed on top of it), so that its luaL_checkstack calls fail
// where Redis's do: past LUAI_MAXCSTACK slots.
type msgpackEncoder struct {
	L *lua.LState
	b []byte
}

func (e *msgpackEncoder) checkStack(top, n int, fn string) {
	if top+n > maxCStack {
		luaLError(e.L, "stack overflow (in function "+fn+")")
	}
}

// encode is mp_encode_lua_type: beyond the nesting limit a table encodes
// as nil.
func (e *msgpackEncoder) encode(v lua.LValue, level, top int) {
	switch x := v.(type) {
	case lua.LBool:
		if x {
			e.b = append(e.b, 0xc3)
		} else {
			e.b = append(e.b, 0xc2)
		}
	case lua.LNumber:
		f := float64(x)
		switch {
		case !math.IsInf(f, 0) && !math.IsNaN(f) && f == float64(int64(f)):
			e.b = msgpackInt(e.b, int64(f))
		case float64(float32(f)) == f:
			e.b = binary.BigEndian.AppendUint32(append(e.b, 0xca), math.Float32bits(float32(f)))
		default:
			e.b = binary.BigEndian.AppendUint64(append(e.b, 0xcb), math.Float64bits(f))
		}
	case lua.LString:
		e.b = msgpackLen(e.b, len(x), 0xa0, 32, 0xd9, 0xda, 0xdb)
		e.b = append(e.b, x...)
	case *lua.LTable:
		if level >= cmsgpackMaxNesting {
			e.b = append(e.b, 0xc0)
			return
		}
		e.table(x, level, top)
	default:
		e.b = append(e.b, 0xc0)
	}
}

// table is mp_encode_lua_table: an array when the keys are 1..n, else a
// map.
func (e *msgpackEncoder) table(x *lua.LTable, level, top int) {
	e.checkStack(top, 2, "table_is_an_array")
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
		e.b = msgpackLen(e.b, count, 0x90, 16, 0, 0xdc, 0xdd)
		e.checkStack(top, 1, "mp_encode_lua_table_as_array")
		for i := 1; i <= count; i++ {
			e.encode(x.RawGetInt(i), level+1, top+1) // stack: ... table element
		}
		return
	}
	e.checkStack(top, 3, "mp_encode_lua_table_as_map")
	e.b = msgpackLen(e.b, count, 0x80, 16, 0, 0xde, 0xdf)
	x.ForEach(func(k, val lua.LValue) {
		e.encode(k, level+1, top+3)   // stack: ... table key value key
		e.encode(val, level+1, top+2) // stack: ... table key value
	})
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

// value is mp_decode_to_lua_type; top is the height of the Lua stack
// lua_cmsgpack.c would push the value on: past LUAI_MAXCSTACK its
// luaL_checkstack fails (a deep nesting or too many values).
func (d *msgpackDecoder) value(top int) lua.LValue {
	if !d.need(1) {
		return lua.LNil
	}
	if top+1 > maxCStack {
		luaLError(d.L, "stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)")
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
		return d.array(int(c&0x0f), top)
	case c&0xf0 == 0x80:
		return d.mapv(int(c&0x0f), top)
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
		return d.array(int(d.uint(2)), top)
	case 0xdd:
		return d.array(int(d.uint(4)), top)
	case 0xde:
		return d.mapv(int(d.uint(2)), top)
	case 0xdf:
		return d.mapv(int(d.uint(4)), top)
	}
	d.err = "Bad data format in input."
	return lua.LNil
}

// array is mp_decode_to_lua_array: the new table is pushed on top, then
// each element's index and value above it.
func (d *msgpackDecoder) array(n int, top int) lua.LValue {
	if d.err != "" {
		return lua.LNil
	}
	t := d.L.NewTable() // lua_newtable
	if top+2 > maxCStack {
		luaLError(d.L, "stack overflow (in function mp_decode_to_lua_array)")
	}
	for i := 1; i <= n && d.err == ""; i++ {
		v := d.value(top + 2)
		if d.err == "" {
			t.RawSetInt(i, v)
		}
	}
	return t
}

// mapv is mp_decode_to_lua_hash: the new table is pushed on top, then
// each key and value above it.
func (d *msgpackDecoder) mapv(n int, top int) lua.LValue {
	if d.err != "" {
		return lua.LNil
	}
	t := d.L.NewTable() // lua_newtable
	for i := 0; i < n && d.err == ""; i++ {
		k := d.value(top + 1)
		if d.err != "" {
			break
		}
		v := d.value(top + 2)
		if d.err != "" {
			break
		}
		// lua_settable: luaG_runerror in a C function has no position.
		switch n, isNum := k.(lua.LNumber); {
		case k == lua.LNil:
			d.L.Error(lua.LString("table index is nil"), 0)
		case isNum && math.IsNaN(float64(n)):
			d.L.Error(lua.LString("table index is NaN"), 0)
		}
		t.RawSet(k, v)
	}
	return t
}
