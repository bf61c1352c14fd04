package lua

// A line hook (Vigil): Lua 5.1's LUA_MASKLINE as ldo.c/lvm.c's traceexec
// calls it, for a debugger (Redis's ldb). The hook runs before the first
// instruction of a function, when a jump goes back (a loop), and when the
// instruction about to run is on another line than the one the frame ran
// last. While it runs no hook is called (Lua's allowhook).

type lineHookState struct {
	fn      func(L *LState, line int, count bool)
	frame   *callFrame
	lastPc  int
	running bool
	every   int // LUA_MASKCOUNT's count (0: no count events)
	left    int
}

// SetLineHook installs f as the state's line hook (nil removes it). With
// count > 0, f is also called (count true) every count instructions, as
// Lua 5.1's LUA_MASKCOUNT, before the line event of the same instruction.
// The state's context, if any, is still checked.
func (ls *LState) SetLineHook(f func(L *LState, line int, count bool), count int) {
	if f == nil {
		ls.lineHook = nil
		if ls.ctx != nil {
			ls.mainLoop = mainLoopWithContext
		} else {
			ls.mainLoop = mainLoop
		}
		return
	}
	ls.lineHook = &lineHookState{fn: f, every: count, left: count}
	ls.mainLoop = mainLoopWithHook
}

// FrameLine is the chunk name and current line of the Lua frame dbg
// (GetStack) stands for (the instruction running; in a line hook the one
// about to run); line is -1 for a Go frame.
func (ls *LState) FrameLine(dbg *Debug) (source string, line int) {
	f := dbg.frame
	if f == nil || f.Fn.IsG {
		return "", -1
	}
	pc := f.Pc - 1
	if pc < 0 {
		pc = 0
	}
	return f.Fn.Proto.SourceName, f.Fn.Proto.DbgSourcePositions[pc]
}

func lineOfPc(p *FunctionProto, pc int) int {
	if pc < 0 || pc >= len(p.DbgSourcePositions) {
		return -1
	}
	return p.DbgSourcePositions[pc]
}

func mainLoopWithHook(L *LState, baseframe *callFrame) {
	var inst uint32
	var cf *callFrame

	if L.stack.IsEmpty() {
		return
	}

	L.currentFrame = L.stack.Last()
	if L.currentFrame.Fn.IsG {
		callGFunction(L, false)
		return
	}

	for {
		cf = L.currentFrame
		if h := L.lineHook; h != nil && !h.running {
			pc := cf.Pc
			prev := h.lastPc
			if cf != h.frame {
				prev = pc - 1 // back from a call: the call ran last
			}
			p := cf.Fn.Proto
			line := lineOfPc(p, pc)
			if h.every > 0 {
				if h.left--; h.left == 0 {
					h.left = h.every
					h.call(L, cf, line, true)
				}
			}
			if pc == 0 || pc <= prev || line != lineOfPc(p, prev) {
				h.call(L, cf, line, false)
			}
			h.frame, h.lastPc = cf, pc
		}
		inst = cf.Fn.Proto.Code[cf.Pc]
		cf.Pc++
		if L.ctx != nil {
			select {
			case <-L.ctx.Done():
				L.RaiseError(L.ctx.Err().Error())
				return
			default:
			}
		}
		if jumpTable[int(inst>>26)](L, inst, baseframe) == 1 {
			return
		}
	}
}

// call runs the hook for the instruction about to run in cf. While it
// runs the frame's pc is past that instruction (Lua's savedpc): its line
// and active locals are the ones the debugger sees.
func (h *lineHookState) call(L *LState, cf *callFrame, line int, count bool) {
	h.running = true
	cf.Pc++
	func() {
		defer func() { h.running = false }()
		h.fn(L, line, count)
	}()
	cf.Pc-- // not when the hook raised an error: the frame stays there
}

// LocalAt is lua_getlocal with Lua 5.1's rule (luaF_getlocalname: a
// local is active from its startpc on, at the frame's current
// instruction): the name and value of the no-th active local of the Lua
// frame dbg; "" when there is none.
func (ls *LState) LocalAt(dbg *Debug, no int) (string, LValue) {
	f := dbg.frame
	if f == nil || f.Fn.IsG {
		return "", LNil
	}
	pc := f.Pc - 1
	p := f.Fn.Proto
	n := no
	for i := 0; i < len(p.DbgLocals) && p.DbgLocals[i].StartPc <= pc; i++ {
		if pc < p.DbgLocals[i].EndPc {
			n--
			if n == 0 {
				return p.DbgLocals[i].Name, ls.reg.Get(f.LocalBase + no - 1)
			}
		}
	}
	return "", LNil
}
