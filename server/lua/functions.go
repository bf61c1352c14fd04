package lua

import (
	"context"
	"errors"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// Functions (Redis 7.0's function_lua.c): a library's code runs once at
// load time in a sandbox whose only global is a reduced redis table
// (register_function, log, the LOG_* levels and the version), and the
// functions it registers run later with the scripting globals (no
// KEYS/ARGV: keys and args are the function's two parameters). Package
// server keeps the libraries (functions.c): their names, codes, FUNCTION
// LIST, DUMP and RESTORE.

// Flags are a script's flags (script.h's SCRIPT_FLAG_*), of a function
// or of a script with a "#!lua" shebang.
type Flags uint8

const (
	NoWrites Flags = 1 << iota
	AllowOOM
	AllowStale
	NoCluster
	AllowCrossSlot
)

// FlagNames are the flags' names, in scripts_flags_def's order.
var FlagNames = []struct {
	F    Flags
	Name string
}{
	{NoWrites, "no-writes"}, {AllowOOM, "allow-oom"}, {AllowStale, "allow-stale"},
	{NoCluster, "no-cluster"}, {AllowCrossSlot, "allow-cross-slot-keys"},
}

// Function is a registered function (functionInfo).
type Function struct {
	Name    string
	Desc    string
	HasDesc bool
	Flags   Flags
	fn      *lua.LFunction
	// what it adds to the Lua heap estimate (memory.go)
	mem        int64
	memStrings int
}

// EnableFunctions makes e the functions engine (luaEngineInitEngine): its
// code is user_function, and while a library loads the only global is
// the load-time redis table.
func (e *Engine) EnableFunctions() {
	e.chunk = "user_function"
	L := e.L
	g := e.globals
	runRedis := e.lib("redis")

	// The load-time redis table (LIBRARY_API): reading a missing field or
	// writing any fails as with the globals.
	api := L.NewTable()
	api.RawSetString("register_function", L.NewFunction(e.registerFunction))
	api.RawSetString("log", runRedis.RawGetString("log"))
	for _, k := range []string{"LOG_DEBUG", "LOG_VERBOSE", "LOG_NOTICE", "LOG_WARNING", "REDIS_VERSION", "REDIS_VERSION_NUM"} {
		api.RawSetString(k, runRedis.RawGetString(k))
	}
	L.SetMetatable(api, guardMeta(L, func(k lua.LValue) lua.LValue { return lua.LNil }))
	e.loadAPI = L.NewTable()
	e.loadAPI.RawSetString("redis", api)

	// One globals proxy for load and run time, as Redis swaps the
	// metatable's __index of its globals: while a library loads, only the
	// load API is visible.
	L.SetMetatable(e.env, guardMeta(L, func(k lua.LValue) lua.LValue {
		if e.loading != nil {
			return e.loadAPI.RawGet(k)
		}
		return g.RawGet(k)
	}))
	e.measureBase()
}

// guardMeta is luaSetErrorMetatable + the readonly protection: a missing
// key read is an error, and so is every write.
func guardMeta(L *lua.LState, get func(k lua.LValue) lua.LValue) *lua.LTable {
	mt := L.NewTable()
	mt.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		k := L.Get(2)
		v := get(k)
		if v == lua.LNil {
			L.RaiseError("Script attempted to access nonexistent global variable '%s'", k.String())
		}
		L.Push(v)
		return 1
	}))
	mt.RawSetString("__newindex", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError("Attempt to modify a readonly table")
		return 0
	}))
	mt.RawSetString("__metatable", lua.LFalse)
	return mt
}

// ValidName is functionsVerifyName: [a-zA-Z0-9_]+.
func ValidName(n string) bool {
	if n == "" {
		return false
	}
	for i := 0; i < len(n); i++ {
		ch := n[i]
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '_') {
			return false
		}
	}
	return true
}

// LoadLibrary is luaEngineCreate: it compiles code, a library's code after
// its shebang line, and runs it with the load API, stopped after timeout
// (0: none), returning the functions it registered, or the error text
// (without "ERR ") when it fails.
func (e *Engine) LoadLibrary(code string, timeout time.Duration) (map[string]*Function, string) {
	funcs := map[string]*Function{}
	if msg := e.runLoad(funcs, code, timeout); msg != "" {
		return nil, msg
	}
	return funcs, ""
}

func (e *Engine) runLoad(funcs map[string]*Function, code string, timeout time.Duration) string {
	L := e.L
	fn, cmsg := loadLua(L, code, "user_function")
	if cmsg != "" {
		return "Error compiling function: " + cmsg
	}
	fn.Env = e.env
	e.loading = funcs
	if e.cancel != nil { // the scripts' context (busy.go) is not the load's
		e.dropContext()
	}
	var cancel context.CancelFunc
	if timeout > 0 {
		var ctx context.Context
		ctx, cancel = context.WithTimeout(context.Background(), timeout)
		L.SetContext(ctx)
	}
	L.Push(fn)
	err := L.PCall(0, 0, nil)
	if cancel != nil {
		cancel()
		L.RemoveContext()
	}
	e.loading = nil
	L.SetTop(0)
	if err == nil {
		return ""
	}
	var obj lua.LValue = lua.LString(err.Error())
	ae, isAPI := err.(*lua.ApiError)
	if isAPI {
		obj = ae.Object
	}
	var msg string
	switch {
	case isAPI && ae.Type == lua.ApiErrorRun && ae.Cause != nil && errors.Is(ae.Cause, context.DeadlineExceeded),
		timeout > 0 && strings.Contains(err.Error(), "context deadline exceeded"):
		msg = "ERR FUNCTION LOAD timeout"
	default:
		if t, ok := obj.(*lua.LTable); ok {
			if ev, ok := t.RawGetString("err").(lua.LString); ok {
				msg = string(ev)
			} else {
				msg = "ERR " + lua.LVAsString(obj)
			}
		} else {
			msg = "ERR " + obj.String()
		}
	}
	return "Error registering functions: " + msg
}

// registerFunction is redis.register_function (luaRegisterFunction).
func (e *Engine) registerFunction(L *lua.LState) int {
	funcs := e.loading
	if funcs == nil {
		e.libError(L, "redis.register_function can only be called on FUNCTION LOAD command")
	}
	var f Function
	switch L.GetTop() {
	case 1:
		t, ok := L.Get(1).(*lua.LTable)
		if !ok {
			e.libError(L, "calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments).")
		}
		var errMsg string
		t.ForEach(func(k, v lua.LValue) {
			if errMsg != "" {
				return
			}
			ks, ok := luaStringish(k)
			if !ok {
				errMsg = "named argument key given to redis.register_function is not a string"
				return
			}
			switch strings.ToLower(ks) {
			case "function_name":
				if f.Name, ok = luaStringish(v); !ok {
					errMsg = "function_name argument given to redis.register_function must be a string"
				}
			case "description":
				if f.Desc, ok = luaStringish(v); !ok {
					errMsg = "description argument given to redis.register_function must be a string"
				}
				f.HasDesc = true
			case "callback":
				cb, ok := v.(*lua.LFunction)
				if !ok {
					errMsg = "callback argument given to redis.register_function must be a function"
					return
				}
				f.fn = cb
			case "flags":
				ft, ok := v.(*lua.LTable)
				if !ok {
					errMsg = "flags argument to redis.register_function must be a table representing function flags"
					return
				}
				for j := 1; ; j++ {
					fv := ft.RawGetInt(j)
					if fv == lua.LNil {
						break
					}
					fs, ok := luaStringish(fv)
					found := false
					for _, fl := range FlagNames {
						if ok && strings.EqualFold(fl.Name, fs) {
							f.Flags |= fl.F
							found = true
							break
						}
					}
					if !found {
						errMsg = "unknown flag given"
						return
					}
				}
			default:
				errMsg = "unknown argument given to redis.register_function"
			}
		})
		if errMsg == "" && f.Name == "" && !hasKey(t, "function_name") {
			errMsg = "redis.register_function must get a function name argument"
		}
		if errMsg == "" && f.fn == nil {
			errMsg = "redis.register_function must get a callback argument"
		}
		if errMsg != "" {
			e.libError(L, errMsg)
		}
	case 2:
		name, ok := luaStringish(L.Get(1))
		if !ok {
			e.libError(L, "first argument to redis.register_function must be a string")
		}
		cb, ok := L.Get(2).(*lua.LFunction)
		if !ok {
			e.libError(L, "second argument to redis.register_function must be a function")
		}
		f.Name, f.fn = name, cb
	default:
		e.libError(L, "wrong number of arguments to redis.register_function")
	}
	// functionLibCreateFunction (7.0's text names libraries here too)
	if !ValidName(f.Name) {
		e.libError(L, "Library names can only contain letters, numbers, or underscores(_) and must be at least one character long")
	}
	if funcs[f.Name] != nil {
		e.libError(L, "Function already exists in the library")
	}
	f.mem, f.memStrings = e.protoMemory(f.fn, "", false)
	funcs[f.Name] = &f
	return 0
}

func hasKey(t *lua.LTable, key string) bool {
	found := false
	t.ForEach(func(k, _ lua.LValue) {
		if s, ok := luaStringish(k); ok && strings.EqualFold(s, key) {
			found = true
		}
	})
	return found
}

// luaStringish is lua_isstring + lua_tostring: strings and numbers.
func luaStringish(v lua.LValue) (string, bool) {
	switch x := v.(type) {
	case lua.LString:
		return string(x), true
	case lua.LNumber:
		return FormatNumber(float64(x)), true
	}
	return "", false
}
