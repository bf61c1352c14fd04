package lua

import (
	"encoding/binary"
	"math"

	lua "github.com/yuin/gopher-lua"
)

// string.dump (lstrlib.c's str_dump through ldump.c): a Lua function as a
// binary chunk. Redis 7.0 refuses to load binary chunks (loadstring reads
// one as source, and fails on its first byte), so a dump is only ever a
// string to a script. Vigil's has Lua 5.1's header and layout (ldump.c:
// the function's source, lines, upvalue and parameter counts, code,
// constants, nested functions, debug information), but its code is
// gopher-lua's instructions and register count, not luac's: the bytes
// after the header and the length differ from Redis's.

// dumpHeader is luaU_header on x86-64: "\033Lua", version 0x51, format 0,
// little endian, sizeof int 4, size_t 8, Instruction 4, lua_Number 8,
// floating-point numbers.
const dumpHeader = "\x1bLuaQ\x00\x01\x04\x08\x04\x08\x00"

func (e *Engine) strDump(L *lua.LState) int {
	fn := L.CheckFunction(1)
	if fn.IsG || fn.Proto == nil {
		luaLError(L, "unable to dump given function") // lua_dump of a C function
	}
	b := []byte(dumpHeader)
	b = e.dumpFunction(b, fn.Proto, "")
	L.Push(lua.LString(b))
	return 1
}

func dumpInt(b []byte, n int) []byte { return binary.LittleEndian.AppendUint32(b, uint32(int32(n))) }

// dumpString is DumpString: size_t length with the NUL, the bytes, the
// NUL; 0 for none.
func dumpString(b []byte, s string, none bool) []byte {
	if none {
		return binary.LittleEndian.AppendUint64(b, 0)
	}
	b = binary.LittleEndian.AppendUint64(b, uint64(len(s)+1))
	return append(append(b, s...), 0)
}

// dumpFunction is DumpFunction: a nested function's source is left out
// when it is its parent's.
func (e *Engine) dumpFunction(b []byte, p *lua.FunctionProto, parent string) []byte {
	b = dumpString(b, e.sourceOf(p.SourceName), parent == p.SourceName)
	b = dumpInt(b, p.LineDefined)
	if p.LineDefined == 0 {
		b = dumpInt(b, 0) // a main chunk's, as lparser.c's open_func leaves it
	} else {
		b = dumpInt(b, p.LastLineDefined)
	}
	b = append(b, p.NumUpvalues, p.NumParameters, p.IsVarArg, p.NumUsedRegisters)
	b = dumpInt(b, len(p.Code))
	for _, i := range p.Code {
		b = binary.LittleEndian.AppendUint32(b, i)
	}
	b = dumpInt(b, len(p.Constants))
	for _, k := range p.Constants {
		switch v := k.(type) {
		case lua.LBool:
			b = append(b, 1)
			if v {
				b = append(b, 1)
			} else {
				b = append(b, 0)
			}
		case lua.LNumber:
			b = binary.LittleEndian.AppendUint64(append(b, 3), math.Float64bits(float64(v)))
		case lua.LString:
			b = dumpString(append(b, 4), string(v), false)
		default:
			b = append(b, 0)
		}
	}
	b = dumpInt(b, len(p.FunctionPrototypes))
	for _, f := range p.FunctionPrototypes {
		b = e.dumpFunction(b, f, p.SourceName)
	}
	b = dumpInt(b, len(p.DbgSourcePositions))
	for _, line := range p.DbgSourcePositions {
		b = dumpInt(b, line)
	}
	b = dumpInt(b, len(p.DbgLocals))
	for _, l := range p.DbgLocals {
		b = dumpString(b, l.Name, false)
		b = dumpInt(b, l.StartPc)
		b = dumpInt(b, l.EndPc)
	}
	b = dumpInt(b, len(p.DbgUpvalues))
	for _, u := range p.DbgUpvalues {
		b = dumpString(b, u, false)
	}
	return b
}
