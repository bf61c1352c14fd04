package lua

// Lua 5.1's CallInfo array (ldo.c, lstate.c, lgc.c), which decides how
// deep calls can go before "stack overflow".

// MaxCalls is LUAI_MAXCALLS, BasicCISize BASIC_CI_SIZE.
const (
	MaxCalls    = 20000
	BasicCISize = 8
)

// CallInfos models a lua_State's CallInfo array (base_ci, size_ci) when
// set on a state (LState.CallInfos): its entry 0 is the state's base,
// each frame on the call stack takes the next one. A call that finds the
// array full doubles it (growCI); past MaxCalls entries that call fails
// with "stack overflow", so that the first overflow of a new state comes
// at 16384 entries (8 doubled eleven times). An error a PCall catches
// takes an array grown past MaxCalls back to MaxCalls entries
// (restore_stack_limit): later overflows come at 20000. A full garbage
// collection halves an array used to less than a quarter
// (checkstacksizes, ShrinkCallInfos).
type CallInfos struct {
	// Size is size_ci.
	Size int
	// Uncounted is the number of frames on the call stack that Lua 5.1
	// has no CallInfo for (a host's wrappers around a call): the host
	// adds them when they call and takes them off when they return;
	// PCall resets the count when it catches an error.
	Uncounted int
}

// NewCallInfos is a new state's array (stack_init).
func NewCallInfos() *CallInfos { return &CallInfos{Size: BasicCISize} }

// ciInUse is L->ci - L->base_ci: the index of the top frame's entry.
func (ls *LState) ciInUse() int { return ls.stack.Sp() - ls.CallInfos.Uncounted }

// checkCI is inc_ci, before a call pushes its frame.
func (ls *LState) checkCI() {
	if ci := ls.CallInfos; ci != nil && ls.stack.Sp()-ci.Uncounted >= ci.Size-1 {
		ls.growCI()
	}
}

// growCI doubles the full array; past MaxCalls the call fails with
// luaG_runerror's "stack overflow" (at the calling Lua code's position),
// and a call that finds the array full again while the error is handled
// fails with LUA_ERRERR's "error in error handling".
func (ls *LState) growCI() {
	ci := ls.CallInfos
	if ci.Size > MaxCalls {
		ls.raiseError(0, "error in error handling")
	}
	ci.Size *= 2
	if ci.Size > MaxCalls {
		ls.raiseError(0, ls.overflowMessage())
	}
}

// restoreCI is restore_stack_limit, after PCall caught an error and took
// the call stack back to its own frames, with the count of uncounted
// frames they had.
func (ls *LState) restoreCI(uncounted int) {
	ci := ls.CallInfos
	if ci == nil {
		return
	}
	ci.Uncounted = uncounted
	if ci.Size > MaxCalls && ls.ciInUse()+1 < MaxCalls {
		ci.Size = MaxCalls
	}
}

// ShrinkCallInfos is checkstacksizes' CallInfo part, run times (a full
// collection, lua_gc LUA_GCCOLLECT, traverses a thread twice: in the
// propagate phase and again in the atomic phase): an array less than a
// quarter used is halved, unless an overflow is being handled or it is
// down to twice BASIC_CI_SIZE.
func (ls *LState) ShrinkCallInfos(times int) {
	ci := ls.CallInfos
	if ci == nil {
		return
	}
	for i := 0; i < times; i++ {
		if ci.Size > MaxCalls {
			return
		}
		if 4*ls.ciInUse() < ci.Size && 2*BasicCISize < ci.Size {
			ci.Size /= 2
		}
	}
}
