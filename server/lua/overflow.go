package lua

import (
	"reflect"
	"strconv"
	"unsafe"

	lua "github.com/yuin/gopher-lua"
)

// Call depth past LUAI_MAXCALLS. Lua 5.1 raises "stack overflow" with the
// calling code's position when a call finds its CallInfo array full and
// doubling it passes LUAI_MAXCALLS (luaD_growCI through luaG_runerror),
// and lets the error handler run in the doubled array. The main thread
// models that array (lua.CallInfos, set by New): its call stack is made
// deep enough (mainCallStack) for the model to raise first. Frames Lua
// 5.1 has no CallInfo for (guard's, xpcall's handler wrapper's) are not
// counted (uncounted).
//
// A coroutine's thread has the model too (its own array), but a call
// stack of threadCallStack frames only (MinimizeStackMemory keeps each
// coroutine small): after a caught overflow, when Lua 5.1's array would
// allow 20000 calls, or in an error handler, the stack fills first and
// panics with the Go string "lua callstack overflow", and PCall then
// fails to call the error handler on the full stack. guard is a Go function the engine calls the
// script through (and pcall, xpcall their function): its deferred recover
// sees that panic before PCall does, while the frames are still on the
// stack. It words the error as Lua 5.1, gives the stack handlerRoom more
// frames for the error handler and raises it as a Lua error; shrinkStack
// takes the room back once PCall has unwound (after a failed PCall only:
// the room is given only on the way to an error). Levels (luaWhere) do
// not count guard's frames, so that error(msg, 2) names the code Lua 5.1
// names. The vendored gopher-lua words the overflow itself when the
// thread dies of it (threadRun).

// gopherOverflow is gopher-lua's panic for a full call stack.
const gopherOverflow = "lua callstack overflow"

// handlerRoom is the frames added for the error handler after an
// overflow (in gopher-lua's segments of FramesPerSegment frames).
const handlerRoom = 200

// stackSegments is the number of segments of a state's call stack
// (CallStackSize maxCalls), threadSegments of a coroutine's
// (ThreadCallStackSize maxThreadCalls).
const (
	stackSegments  = (mainCallStack + lua.FramesPerSegment - 1) / lua.FramesPerSegment
	threadSegments = (threadCallStack + lua.FramesPerSegment - 1) / lua.FramesPerSegment
)

// baseSegments is the number of segments L's call stack was made with.
func baseSegments(L *lua.LState) int {
	if L.G != nil && L.G.MainThread != L {
		return threadSegments
	}
	return stackSegments
}

// guard calls its first argument with the others and returns all its
// results (lua_call with LUA_MULTRET), turning gopher-lua's call stack
// overflow into Lua 5.1's error.
func guard(L *lua.LState) int {
	defer func() {
		if r := recover(); r != nil {
			if s, ok := r.(string); !ok || s != gopherOverflow {
				panic(r)
			}
			overflow(L)
		}
	}()
	// guard is not a call of Lua 5.1's: the call through it counts once
	// (a PCall that catches an error restores the count), and its frame
	// takes no CallInfo.
	uncounted(L, 1)
	L.CCalls--
	L.Call(L.GetTop()-1, lua.MultRet)
	L.CCalls++
	uncounted(L, -1)
	return L.GetTop()
}

// uncounted adds n to the frames on L's call stack that take no CallInfo
// of Lua 5.1 (lua.CallInfos): guard's, xpcall's handler wrapper's. A
// frame adds itself before its call and takes itself off after it
// returns; PCall takes off those an error unwound.
func uncounted(L *lua.LState, n int) {
	if ci := L.CallInfos; ci != nil {
		ci.Uncounted += n
	}
}

// overflow raises "stack overflow" at the position of the function that
// made the call (none when it is a Go function, as luaG_runerror), after
// giving the error handler room.
func overflow(L *lua.LState) {
	msg := "stack overflow"
	if dbg, ok := L.GetStack(0); ok {
		if _, err := L.GetInfo("Sl", dbg, nil); err == nil && dbg.What != "G" && dbg.CurrentLine > 0 {
			msg = dbg.Source + ":" + strconv.Itoa(dbg.CurrentLine) + ": " + msg
		}
	}
	if segs, ok := callSegments(L); ok && segs.Len() == baseSegments(L) {
		more := reflect.MakeSlice(segs.Type(), handlerRoom/lua.FramesPerSegment, handlerRoom/lua.FramesPerSegment)
		segs.Set(reflect.AppendSlice(segs, more))
	}
	panic(&lua.ApiError{Type: lua.ApiErrorRun, Object: lua.LString(msg)})
}

// shrinkStack takes back the room overflow gave L's call stack, once the
// stack is back within maxCalls (the segments above its top are nil).
func shrinkStack(L *lua.LState) {
	segs, ok := callSegments(L)
	base := baseSegments(L)
	if !ok || segs.Len() <= base {
		return
	}
	for i := base; i < segs.Len(); i++ {
		if !segs.Index(i).IsNil() {
			return // still in use: a later PCall's return shrinks it
		}
	}
	segs.SetLen(base)
}

// guardPC identifies guard's frames.
var guardPC = reflect.ValueOf(guard).Pointer()

// isGuard reports a function made of guard.
func isGuard(fn *lua.LFunction) bool {
	return fn.IsG && fn.GFunction != nil && reflect.ValueOf(fn.GFunction).Pointer() == guardPC
}

// callSegments is the (settable) slice of segments of L's growing call
// stack; ok false for another kind of stack.
func callSegments(L *lua.LState) (reflect.Value, bool) {
	st := reflect.ValueOf(L).Elem().FieldByName("stack")
	if st.Kind() != reflect.Interface || st.IsNil() {
		return reflect.Value{}, false
	}
	p := st.Elem()
	if p.Kind() != reflect.Pointer || p.Elem().Kind() != reflect.Struct {
		return reflect.Value{}, false
	}
	f := p.Elem().FieldByName("segments")
	if f.Kind() != reflect.Slice {
		return reflect.Value{}, false
	}
	return reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem(), true
}

// mayRecurse reports a chunk that can call deeper than a few levels: one
// that defines a function, or names load or loadstring (a loaded chunk
// defines them). Other code calls only the libraries, which do not recurse
// into Lua without a function of the script's: RunScript calls it without
// guard's cost.
func mayRecurse(p *lua.FunctionProto) bool {
	if len(p.FunctionPrototypes) > 0 {
		return true
	}
	for _, k := range p.Constants {
		if s, ok := k.(lua.LString); ok && (s == "load" || s == "loadstring") {
			return true
		}
	}
	return false
}
