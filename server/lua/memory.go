package lua

import lua "github.com/yuin/gopher-lua"

// The Lua heap as Redis reports it (used_memory_vm_eval and
// used_memory_vm_functions: lua_gc(LUA_GCCOUNT) of its Lua 5.1 VM), which
// gopher-lua does not count: an estimate, the objects reachable from the
// state sized as Lua 5.1.5 allocates them on a 64-bit build (lobject.h,
// lstate.h, ltable.c, lfunc.c). Garbage not yet collected, which Redis's
// figure includes, is not here: it is the heap just after a collection.
const (
	szTString  = 24 // TString, then the bytes and a NUL
	szTable    = 64 // Table
	szTValue   = 16 // an array slot
	szNode     = 40 // a hash slot: TValue + TKey
	szLClosure = 40 // LClosure with no upvalue, 8 more each
	szCClosure = 40 // CClosure with no upvalue, 16 more each
	szProto    = 120
	szLocVar   = 16
	szUpVal    = 40
	szUdata    = 40
	// The state: lua_State + global_State (LG), the initial stack (45
	// TValues), CallInfo array (8), the buffer.
	szState = 376 + 45*szTValue + 8*40 + 32
)

// luaFixedStrings are the strings a Lua 5.1 state interns at creation
// (luaT_init's tag method names, luaX_init's reserved words).
var luaFixedStrings = []string{
	"__index", "__newindex", "__gc", "__mode", "__eq", "__add", "__sub", "__mul", "__div", "__mod",
	"__pow", "__unm", "__len", "__lt", "__le", "__concat", "__call",
	"and", "break", "do", "else", "elseif", "end", "false", "for", "function", "if", "in", "local",
	"nil", "not", "or", "repeat", "return", "then", "true", "until", "while",
}

// memWalk sums the Lua 5.1 sizes of what it visits, each object and each
// string once.
type memWalk struct {
	seen map[any]struct{}
	// baseSeen: objects counted in the base state's figure
	baseSeen map[any]struct{}
	strs     map[string]struct{}
	base     map[string]struct{} // strings already counted elsewhere
	n        int64
}

func newMemWalk(base map[string]struct{}) *memWalk {
	return &memWalk{seen: map[any]struct{}{}, strs: map[string]struct{}{}, base: base}
}

func (w *memWalk) str(s string) {
	if _, ok := w.base[s]; ok {
		return
	}
	if _, ok := w.strs[s]; ok {
		return
	}
	w.strs[s] = struct{}{}
	w.n += szTString + int64(len(s)) + 1
}

func (w *memWalk) once(p any) bool {
	if _, ok := w.baseSeen[p]; ok {
		return false
	}
	if _, ok := w.seen[p]; ok {
		return false
	}
	w.seen[p] = struct{}{}
	return true
}

func (w *memWalk) value(v lua.LValue) {
	switch v := v.(type) {
	case lua.LString:
		w.str(string(v))
	case *lua.LTable:
		w.table(v)
	case *lua.LFunction:
		w.function(v)
	case *lua.LUserData:
		if w.once(v) {
			w.n += szUdata
			if v.Metatable != nil {
				w.value(v.Metatable)
			}
		}
	}
}

// table sizes t by its parts, which have Lua 5.1's sizes (the vendored
// gopher-lua's table is a port of ltable.c).
func (w *memWalk) table(t *lua.LTable) {
	if !w.once(t) {
		return
	}
	t.ForEach(func(k, v lua.LValue) {
		w.value(k)
		w.value(v)
	})
	array, node := t.Sizes()
	w.n += szTable + int64(array)*szTValue + int64(node)*szNode
	if mt := t.Metatable; mt != nil && mt != lua.LNil {
		w.value(mt)
	}
}

func (w *memWalk) function(f *lua.LFunction) {
	if !w.once(f) {
		return
	}
	if f.IsG {
		w.n += szCClosure
	} else {
		w.n += szLClosure + 8*int64(len(f.Upvalues))
		for _, uv := range f.Upvalues {
			if uv != nil && w.once(uv) {
				w.n += szUpVal
				w.value(uv.Value())
			}
		}
		w.proto(f.Proto)
	}
	if f.Env != nil {
		w.table(f.Env)
	}
}

func (w *memWalk) proto(p *lua.FunctionProto) {
	if p == nil || !w.once(p) {
		return
	}
	code := int64(len(p.Code))
	w.n += szProto + code*4 + code*4 + // code and lineinfo
		int64(len(p.Constants))*szTValue + int64(len(p.FunctionPrototypes))*8 +
		int64(len(p.DbgLocals))*szLocVar + int64(len(p.DbgUpvalues))*8
	w.str(p.SourceName)
	for _, k := range p.Constants {
		w.value(k)
	}
	for _, l := range p.DbgLocals {
		w.str(l.Name)
	}
	for _, u := range p.DbgUpvalues {
		w.str(u)
	}
	for _, c := range p.FunctionPrototypes {
		w.proto(c)
	}
}

// stringTable is the size of the string table holding n strings
// (luaS_resize doubles it past one string a slot, from 32).
func stringTable(n int) int64 {
	size := 32
	for n > size {
		size *= 2
	}
	return int64(size) * 8
}

// measureBase walks the state's globals and registry: the figure of a
// state that holds no script, kept with the strings it counted.
func (e *Engine) measureBase() {
	w := newMemWalk(nil)
	for _, s := range luaFixedStrings {
		w.str(s)
	}
	w.table(e.globals)
	w.table(e.env)
	w.table(e.L.G.Registry)
	if e.loadAPI != nil {
		w.table(e.loadAPI)
	}
	e.memBase = w.n + szState
	e.memStrings = w.strs
	e.memSeen = w.seen
	e.memBaseCount = len(w.strs)
}

// protoMemory is what a compiled function adds to the heap: its closure,
// its prototypes and their strings (those already counted are not), and
// the registry slot it is kept in under name ("f_<sha>" for a script);
// and the number of strings it added. keep adds its strings to the
// counted ones, as Lua interns them once: for scripts, which only a
// SCRIPT FLUSH (a new engine) removes.
func (e *Engine) protoMemory(fn *lua.LFunction, name string, keep bool) (int64, int) {
	w := newMemWalk(e.memStrings)
	w.baseSeen = e.memSeen
	w.function(fn)
	w.str(name)
	if keep {
		for s := range w.strs {
			e.memStrings[s] = struct{}{}
		}
	}
	return w.n + szNode, len(w.strs)
}

// VMMemory is the estimate of the Lua heap used_memory_vm_eval reports:
// the state, its libraries and every cached script, as Lua 5.1 would
// allocate them.
func (e *Engine) VMMemory() int64 {
	return e.memBase + e.memScripts + stringTable(e.memBaseCount+e.memScriptStrings)
}

// FunctionsVMMemory is used_memory_vm_functions for the functions engine
// e holding funcs.
func (e *Engine) FunctionsVMMemory(funcs map[string]*Function) int64 {
	n, strs := e.memBase, e.memBaseCount
	for _, f := range funcs {
		n += f.mem
		strs += f.memStrings
	}
	return n + stringTable(strs)
}
