package lua

import (
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
)

type LValueType int

const (
	LTNil LValueType = iota
	LTBool
	LTNumber
	LTString
	LTFunction
	LTUserData
	LTThread
	LTTable
	LTChannel
)

var lValueNames = [9]string{"nil", "boolean", "number", "string", "function", "userdata", "thread", "table", "channel"}

func (vt LValueType) String() string {
	return lValueNames[int(vt)]
}

type LValue interface {
	String() string
	Type() LValueType
}

// LVIsFalse returns true if a given LValue is a nil or false otherwise false.
func LVIsFalse(v LValue) bool { return v == LNil || v == LFalse }

// LVIsFalse returns false if a given LValue is a nil or false otherwise true.
func LVAsBool(v LValue) bool { return v != LNil && v != LFalse }

// LVAsString returns string representation of a given LValue
// if the LValue is a string or number, otherwise an empty string.
func LVAsString(v LValue) string {
	switch sn := v.(type) {
	case LString, LNumber:
		return sn.String()
	default:
		return ""
	}
}

// LVCanConvToString returns true if a given LValue is a string or number
// otherwise false.
func LVCanConvToString(v LValue) bool {
	switch v.(type) {
	case LString, LNumber:
		return true
	default:
		return false
	}
}

// LVAsNumber tries to convert a given LValue to a number.
func LVAsNumber(v LValue) LNumber {
	switch lv := v.(type) {
	case LNumber:
		return lv
	case LString:
		if num, err := parseNumber(string(lv)); err == nil {
			return num
		}
	}
	return LNumber(0)
}

type LNilType struct{}

func (nl *LNilType) String() string   { return "nil" }
func (nl *LNilType) Type() LValueType { return LTNil }

var LNil = LValue(&LNilType{})

type LBool bool

func (bl LBool) String() string {
	if bool(bl) {
		return "true"
	}
	return "false"
}
func (bl LBool) Type() LValueType { return LTBool }

var LTrue = LBool(true)
var LFalse = LBool(false)

type LString string

func (st LString) String() string   { return string(st) }
func (st LString) Type() LValueType { return LTString }

// fmt.Formatter interface
func (st LString) Format(f fmt.State, c rune) {
	switch c {
	case 'd', 'i':
		if nm, err := parseNumber(string(st)); err != nil {
			defaultFormat(nm, f, 'd')
		} else {
			defaultFormat(string(st), f, 's')
		}
	default:
		defaultFormat(string(st), f, c)
	}
}

// String is Lua 5.1's lua_Number2str, "%.14g" as C prints it (Vigil:
// upstream printed Go's shortest form, so that a concatenation gave
// "0.30000000000000004" for 0.1+0.2 and "+Inf" for 1/0).
func (nm LNumber) String() string {
	f := float64(nm)
	if f == float64(int64(f)) && f > -1e14 && f < 1e14 && (f != 0 || !math.Signbit(f)) {
		return strconv.FormatInt(int64(f), 10)
	}
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		if math.Signbit(f) {
			return "-nan"
		}
		return "nan"
	}
	return strconv.FormatFloat(f, 'g', 14, 64)
}

func (nm LNumber) Type() LValueType { return LTNumber }

// fmt.Formatter interface
func (nm LNumber) Format(f fmt.State, c rune) {
	switch c {
	case 'q', 's':
		defaultFormat(nm.String(), f, c)
	case 'b', 'c', 'd', 'o', 'x', 'X', 'U':
		defaultFormat(int64(nm), f, c)
	case 'e', 'E', 'f', 'F', 'g', 'G':
		defaultFormat(float64(nm), f, c)
	case 'i':
		defaultFormat(int64(nm), f, 'd')
	default:
		if isInteger(nm) {
			defaultFormat(int64(nm), f, c)
		} else {
			defaultFormat(float64(nm), f, c)
		}
	}
}

type LTable struct {
	Metatable LValue

	array    []LValue // the array part: keys 1..len(array)
	node     []lNode  // the node part: nil, or a power of two long
	lastFree int      // free nodes are searched below this index
	border   int      // see storeArray
	// fastIndex (Vigil) is the table the metatable's __index names, for a
	// lookup that misses here to go to without reading the metatable
	// (SetFastIndex; SetMetatable clears it).
	fastIndex *LTable
}

// SetFastIndex (Vigil) records that tb's metatable, which scripts cannot
// reach or change, has __index idx (a table): lookups that miss in tb go
// on in idx directly, as the metatable would send them. Set it after the
// metatable; SetMetatable clears it.
func (tb *LTable) SetFastIndex(idx *LTable) { tb.fastIndex = idx }

func (tb *LTable) String() string   { return fmt.Sprintf("table: %p", tb) }
func (tb *LTable) Type() LValueType { return LTTable }

type LFunction struct {
	IsG       bool
	Env       *LTable
	Proto     *FunctionProto
	GFunction LGFunction
	Upvalues  []*Upvalue
}
type LGFunction func(*LState) int

func (fn *LFunction) String() string   { return fmt.Sprintf("function: %p", fn) }
func (fn *LFunction) Type() LValueType { return LTFunction }

type Global struct {
	MainThread    *LState
	CurrentThread *LState
	Registry      *LTable
	Global        *LTable
	// ThreadError, when set, may reword the error that ends a coroutine
	// (threadRun), called while its frames are still on its stack (level
	// 0 of GetStack is the function that raised it).
	ThreadError func(L *LState, err LValue) LValue

	// pairsIter and ipairsIter are the iterators pairs and ipairs
	// return (OpenBase's), which OP_TFORLOOP runs without a call
	// (Vigil, tforBuiltin).
	pairsIter, ipairsIter *LFunction

	builtinMts map[int]LValue
	tempFiles  []*os.File
	gccount    int32
}

type LState struct {
	G       *Global
	Parent  *LState
	Env     *LTable
	Panic   func(*LState)
	Dead    bool
	Options Options
	// CCalls counts the calls made from Go into the VM (callR: Call,
	// PCall, metamethods, the generic for's iterator), as Lua 5.1's
	// nCcalls counts luaD_call; at MaxCCalls a call raises "C stack
	// overflow". PCall restores it when it catches an error.
	CCalls int
	// CallInfos, when set, models Lua 5.1's CallInfo array (callinfo.go):
	// the call depth at which "stack overflow" comes.
	CallInfos *CallInfos

	stop         int32
	reg          *registry
	stack        callFrameStack
	alloc        *allocator
	currentFrame *callFrame
	wrapped      bool
	uvcache      *Upvalue
	hasErrorFunc bool
	mainLoop     func(*LState, *callFrame)
	ctx          context.Context
	ctxCancelFn  context.CancelFunc
	ctxTick      uint32 // instructions run with a context (mainLoopWithContext's poll)
	lineHook     *lineHookState
	// loopBoxes are the boxes of numeric for variables that stay in
	// their register (Vigil, forLoopVarPrivate), by register.
	loopBoxes []float64
	// nextHint is where the last step of a pairs loop over
	// nextHintTable found its key (Vigil, tforBuiltin, LTable.nextAt).
	nextHintTable *LTable
	nextHint      int
}

func (ls *LState) String() string   { return fmt.Sprintf("thread: %p", ls) }
func (ls *LState) Type() LValueType { return LTThread }

type LUserData struct {
	Value     interface{}
	Env       *LTable
	Metatable LValue
}

func (ud *LUserData) String() string   { return fmt.Sprintf("userdata: %p", ud) }
func (ud *LUserData) Type() LValueType { return LTUserData }

type LChannel chan LValue

func (ch LChannel) String() string   { return fmt.Sprintf("channel: %p", ch) }
func (ch LChannel) Type() LValueType { return LTChannel }
