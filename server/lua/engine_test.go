package lua

import (
	"strings"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/resp"
)

// fakeHost answers redis.call from a table of replies by command name.
type fakeHost struct {
	calls   []string
	protos  []int
	repls   []Repl
	replies map[string]resp.Value
	errors  []string
	logs    []string
}

func (h *fakeHost) Call(argv [][]byte, proto int, repl Repl) (resp.Value, string, string, bool) {
	var parts []string
	for _, a := range argv {
		parts = append(parts, string(a))
	}
	h.calls = append(h.calls, strings.Join(parts, " "))
	h.protos, h.repls = append(h.protos, proto), append(h.repls, repl)
	v, ok := h.replies[strings.ToLower(string(argv[0]))]
	if !ok {
		h.errors = append(h.errors, "ERR Unknown Redis command called from script")
		return resp.Value{}, "", "ERR Unknown Redis command called from script", false
	}
	return v, "", "", false
}

func (h *fakeHost) CountError(msg string) { h.errors = append(h.errors, msg) }
func (h *fakeHost) ACLCheckCmd(argv [][]byte) (bool, bool) {
	_, ok := h.replies[strings.ToLower(string(argv[0]))]
	return ok, ok
}
func (h *fakeHost) Log(level int, msg string) {
	h.logs = append(h.logs, string(rune('0'+level))+" "+msg)
}

// eval runs body as EVAL would and returns its reply.
func eval(t *testing.T, e *Engine, body string, keys, argv []string) string {
	t.Helper()
	sha := SHA1Hex([]byte(body))
	if e.Script(sha) == nil {
		if msg := e.Compile(sha, []byte(body), 0, false); msg != "" {
			return "-" + msg
		}
	}
	bs := func(ss []string) [][]byte {
		var out [][]byte
		for _, s := range ss {
			out = append(out, []byte(s))
		}
		return out
	}
	e.SetArgs(bs(keys), bs(argv))
	e.ResetArenas(false)
	e.Prepare(sha)
	var w resp.Writer
	w.Proto = 2
	e.WriteResult(&w, e.RunScript(e.Script(sha)), false)
	return string(w.B)
}

func TestEngineEval(t *testing.T) {
	h := &fakeHost{replies: map[string]resp.Value{
		"incr": {Kind: resp.KindInt, Int: 7},
		"ping": {Kind: resp.KindSimple, Str: "PONG"},
		"get":  {Kind: resp.KindNull},
		"bad":  {Kind: resp.KindError, Str: "WRONGTYPE no"},
		"arr":  {Kind: resp.KindArray, Elems: []resp.Value{{Kind: resp.KindBulk, Str: "a"}, {Kind: resp.KindInt, Int: 2}}},
	}}
	e := New(h)
	defer e.Close()
	for _, tc := range []struct {
		body       string
		keys, argv []string
		want       string
	}{
		{"return redis.call('incr', KEYS[1])", []string{"k"}, nil, ":7\r\n"},
		{"return redis.call('ping')", nil, nil, "+PONG\r\n"},
		{"return redis.call('get', 'x')", nil, nil, "$-1\r\n"},
		{"return redis.call('arr')", nil, nil, "*2\r\n$1\r\na\r\n:2\r\n"},
		{"return {ARGV[1], 1.5, true, false}", nil, []string{"v"}, "*4\r\n$1\r\nv\r\n:1\r\n:1\r\n$-1\r\n"},
		{"return redis.pcall('bad')", nil, nil, "-WRONGTYPE no\r\n"},
		{"return redis.call('bad')", nil, nil, "-WRONGTYPE no script: " + SHA1Hex([]byte("return redis.call('bad')")) + ", on @user_script:1.\r\n"},
		{"redis.setresp(3) return redis.call('get', 'x') == nil", nil, nil, ":1\r\n"},
		{"return redis.call('incr', 10, 2.5)", nil, nil, ":7\r\n"},
		{"return redis.call({})", nil, nil, "-ERR Lua redis lib command arguments must be strings or integers script: " + SHA1Hex([]byte("return redis.call({})")) + ", on @user_script:1.\r\n"},
		{"return 1 +", nil, nil, "-ERR Error compiling script (new function): user_script:1: unexpected symbol near '<eof>'"},
	} {
		got := eval(t, e, tc.body, tc.keys, tc.argv)
		if got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.body, got, tc.want)
		}
	}
	// The numbers went as "%.17g" strings; the arena kept each argv intact.
	if want := "incr 10 2.5"; h.calls[len(h.calls)-1] != want {
		t.Errorf("last call %q want %q", h.calls[len(h.calls)-1], want)
	}
	// An argument error is a plain error table (luaPushError): the engine
	// counts nothing, the server counts the script's error reply.
	if got := strings.Join(h.errors, "|"); got != "" {
		t.Errorf("errors counted: %q", got)
	}
	// redis.set_repl reaches the host; redis.log too.
	h.calls = nil
	eval(t, e, "redis.set_repl(redis.REPL_AOF) redis.call('ping') redis.log(redis.LOG_WARNING, 'hi', 1)", nil, nil)
	if len(h.repls) == 0 || h.repls[len(h.repls)-1] != ReplAOF || len(h.logs) != 1 || h.logs[0] != "3 hi 1" {
		t.Errorf("set_repl/log: %v %q", h.repls, h.logs)
	}
	// A stopped script reports the kill.
	body := "local i = 0 while true do i = i + 1 end"
	sha := SHA1Hex([]byte(body))
	if msg := e.Compile(sha, []byte(body), 0, false); msg != "" {
		t.Fatal(msg)
	}
	cancel := e.Arm(true)
	time.AfterFunc(10*time.Millisecond, cancel)
	e.Prepare(sha)
	var w resp.Writer
	e.WriteResult(&w, e.RunScript(e.Script(sha)), true)
	e.Disarm(true)
	if want := "-" + ErrKilled + " script: " + sha + ", on @user_script:1.\r\n"; string(w.B) != want {
		t.Errorf("killed: got %q want %q", w.B, want)
	}
}

func TestEngineFunctions(t *testing.T) {
	h := &fakeHost{replies: map[string]resp.Value{"ping": {Kind: resp.KindSimple, Str: "PONG"}}}
	e := New(h)
	defer e.Close()
	e.EnableFunctions()
	funcs, msg := e.LoadLibrary("\nredis.register_function{function_name='f', callback=function(keys, args) return {keys[1], args[1], redis.call('ping')} end, flags={'no-writes'}, description='d'}", 0)
	if msg != "" {
		t.Fatal(msg)
	}
	f := funcs["f"]
	if f == nil || f.Flags != NoWrites || f.Desc != "d" || !f.HasDesc {
		t.Fatalf("registered %+v", f)
	}
	e.Prepare("f")
	var w resp.Writer
	e.WriteResult(&w, e.RunFunction(f, [][]byte{[]byte("k")}, [][]byte{[]byte("a")}), false)
	if want := "*3\r\n$1\r\nk\r\n$1\r\na\r\n+PONG\r\n"; string(w.B) != want {
		t.Errorf("FCALL: got %q want %q", w.B, want)
	}
	if _, msg := e.LoadLibrary("redis.call('ping')", 0); !strings.Contains(msg, "Script attempted to access nonexistent global variable 'call'") {
		t.Errorf("load-time redis.call: %q", msg)
	}
	if _, msg := e.LoadLibrary("while true do end", 20*time.Millisecond); msg != "Error registering functions: ERR FUNCTION LOAD timeout" {
		t.Errorf("timeout: %q", msg)
	}
}

// TestMethodGoto: p:goto() is a method call gopher-lua compiles under a
// fresh name and the engine renames back: its errors are Lua 5.1's, at the
// call's own line also as a tail call, and __index sees the key "goto".
func TestMethodGoto(t *testing.T) {
	e := New(&fakeHost{})
	defer e.Close()
	for _, tc := range []struct{ body, want string }{
		{"local p = {}\n\nreturn p:goto()", "-ERR user_script:3: attempt to call method 'goto' (a nil value)"},
		{"local p = nil\n\nreturn p:goto()", "-ERR user_script:3: attempt to index local 'p' (a nil value)"},
		{"local goto = nil\nreturn goto.x", "-ERR user_script:2: attempt to index local 'goto' (a nil value)"},
		{"local goto = nil\nreturn (function() return goto.x end)()", "-ERR user_script:2: attempt to index upvalue 'goto' (a nil value)"},
		{"local t = setmetatable({}, {__index = function(_, k) return function() return k end end})\nreturn {t:goto(), 'goto_'}", "*2\r\n$4\r\ngoto\r\n$5\r\ngoto_\r\n"},
		{"local t = {}\nfunction t:goto(n) if n == 0 then return 'done' end return self:goto(n - 1) end\nreturn t:goto(3)", "$4\r\ndone\r\n"},
	} {
		if got := eval(t, e, tc.body, nil, nil); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%q:\n got %q\nwant %q...", tc.body, got, tc.want)
		}
	}
}

// TestStackOverflow: a call past LUAI_MAXCALLS raises Lua 5.1's "stack
// overflow" at the calling line (in pcall too), the handler runs, and the
// room given to it is taken back: the limit stays where it was.
func TestStackOverflow(t *testing.T) {
	e := New(&fakeHost{})
	defer e.Close()
	const f = "local function f(n) if n == 0 then return 0 end return 1 + f(n - 1) end\n"
	for _, tc := range []struct{ body, want string }{
		{f + "return f(30000)", "-ERR user_script:1: stack overflow script: "},
		{f + "return f(19998)", ":19998\r\n"},
		{f + "return f(19999)", "-ERR user_script:1: stack overflow script: "},
		{f + "local ok, e = pcall(f, 30000) return {e, f(100)}", "*2\r\n$29\r\nuser_script:1: stack overflow\r\n:100\r\n"},
		{f + "local ok, e = pcall(f, 19999) return e", "$29\r\nuser_script:1: stack overflow\r\n"},
		{f + "return {xpcall(function() return f(30000) end, function(m) return 'h:' .. m end)}", "*2\r\n$-1\r\n$31\r\nh:user_script:1: stack overflow\r\n"},
		{"local function h(m) return h(m) .. 'x' end\n" + f + "return {xpcall(function() return f(30000) end, h)}", "*2\r\n$-1\r\n$23\r\nerror in error handling\r\n"},
		{"local function h(n) return 1 + h(n) end\nlocal function g() return h(1) end\nreturn string.gsub('x', 'x', g)", "-ERR user_script:1: stack overflow script: "},
		{f + "return f(19998)", ":19998\r\n"},
		{"return {pcall(error, 'x', 2)}", "*2\r\n$-1\r\n$16\r\nuser_script:1: x\r\n"},
	} {
		if got := eval(t, e, tc.body, nil, nil); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%q:\n got %q\nwant %q...", tc.body, got, tc.want)
		}
	}
	if segs, ok := callSegments(e.L); !ok || segs.Len() != stackSegments {
		t.Errorf("call stack segments after the overflows: %d (%v), want %d", segs.Len(), ok, stackSegments)
	}
}

// TestMayRecurse: only code that defines functions or loads chunks is
// called through guard.
func TestMayRecurse(t *testing.T) {
	e := New(&fakeHost{})
	defer e.Close()
	for body, want := range map[string]bool{
		"return redis.call('incr', KEYS[1])":             false,
		"local function f() end return 1":                true,
		"return loadstring('return 1')()":                true,
		"local l = load return 1":                        true,
		"return setmetatable({}, {__index = {a = 1}}).a": false,
	} {
		sha := SHA1Hex([]byte(body))
		if msg := e.Compile(sha, []byte(body), 0, false); msg != "" {
			t.Fatal(msg)
		}
		if got := e.Script(sha).guarded; got != want {
			t.Errorf("%q: guarded %v, want %v", body, got, want)
		}
	}
	// A loaded chunk's recursion is guarded too.
	got := eval(t, e, "return loadstring('local function f(n) return 1 + f(n) end return f(1)')()", nil, nil)
	if want := "-ERR [string \"local function f(n) return 1 + f(n) end ret...\"]:1: stack overflow"; !strings.HasPrefix(got, want) {
		t.Errorf("loadstring recursion: %q, want %q...", got, want)
	}
}
