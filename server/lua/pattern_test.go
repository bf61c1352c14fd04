package lua

import (
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
)

// patternState is a bare state with the Lua 5.1 pattern functions as
// globals.
func patternState() *lua.LState {
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	for name, fn := range map[string]lua.LGFunction{
		"find": strFind, "match": strMatch, "gmatch": strGmatch, "gsub": strGsub, "rep": strRep,
	} {
		L.SetGlobal(name, L.NewFunction(fn))
	}
	return L
}

// TestPatterns checks a few matches against Lua 5.1's answers (the golden
// script testdata/scripts/lua_libs.txt compares many more with
// redis-server).
func TestPatterns(t *testing.T) {
	L := patternState()
	defer L.Close()
	for _, tc := range []struct{ code, want string }{
		{`return find('hello world', 'o w')`, "5 7"},
		{`return find('a.b', '.', 1, true)`, "2 2"},
		{`return match('  key = value  ', '^%s*(%S+)%s*=%s*(%S+)%s*$')`, "key value"},
		{`return match('f(a(b)c)d', '%b()')`, "(a(b)c)"},
		{`return match('THE (quick) fox', '%f[%a]%a+')`, "THE"},
		{`return match('hello', '()ll()')`, "3 5"},
		{`return gsub('hello world', '(%w+)', '<%1>')`, "<hello> <world> 2"},
		{`return gsub('abc', '%w', {a = 1, b = true})`, "error: invalid replacement value (a boolean)"},
		{`return gsub('abc', 'b', '%')`, "a\x00c 1"},
		{`return gsub('hello', '', '-')`, "-h-e-l-l-o- 6"},
		{`local t = {} for k, v in gmatch('a=1, b=2', '(%w+)=(%w+)') do t[#t + 1] = k .. v end return t[1], t[2]`, "a1 b2"},
		{`return find('abc', '[a')`, "error: malformed pattern (missing ']')"},
		{`return match('abc', '%1')`, "error: invalid capture index"},
		{`return match('abc', ')')`, "error: invalid pattern capture"},
		{`return find('abc', '(()')`, "error: unfinished capture"},
		{`return #match(rep('a', 150000), rep('a?', 150000))`, "150000"},
		{`return match(rep('a', 300000), rep('a?', 300000))`, "error: pattern too complex"},
	} {
		got := runPattern(L, tc.code)
		if got != tc.want {
			t.Errorf("%s: got %q want %q", tc.code, got, tc.want)
		}
	}
}

// runPattern runs code and shows its results, or its error without the
// position.
func runPattern(L *lua.LState, code string) string {
	top := L.GetTop()
	fn, err := L.LoadString(code)
	if err != nil {
		return "compile: " + err.Error()
	}
	L.Push(fn)
	if err := L.PCall(0, lua.MultRet, nil); err != nil {
		ae, ok := err.(*lua.ApiError)
		if !ok || ae.Type != lua.ApiErrorRun {
			return "panic: " + err.Error()
		}
		msg := ae.Object.String()
		if i := strings.Index(msg, ": "); i >= 0 && strings.HasPrefix(msg, "<string>") {
			msg = msg[i+2:]
		}
		return "error: " + msg
	}
	var parts []string
	for i := top + 1; i <= L.GetTop(); i++ {
		parts = append(parts, L.Get(i).String())
	}
	L.SetTop(top)
	return strings.Join(parts, " ")
}

// FuzzPatterns runs the pattern functions on any subject, pattern and
// replacement: a Lua error is fine, a Go panic is not.
func FuzzPatterns(f *testing.F) {
	for _, s := range [][3]string{
		{"hello world", "(%w+)", "<%1>"},
		{"f(a(b)c)d", "%b()", "%0"},
		{"THE (quick) fox", "%f[%a]%a+", "x"},
		{"abc", "[a", "%"},
		{"a\x00b", "%z", "%2"},
		{"aaa", "a-$", ""},
		{"abc", "((()))", "%3"},
		{"x", "[%", "%1"},
		{"", "^$", "y"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	L := patternState()
	defer L.Close()
	L.SetGlobal("s", lua.LNil)
	code := `
		find(s, p) find(s, p, 2) find(s, p, -1) match(s, p) match(s, p, 3)
		gsub(s, p, r) gsub(s, p, {}) gsub(s, p, function(...) return ... end, 3)
		for a, b in gmatch(s, p) do end`
	fn, err := L.LoadString(code)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s, p, r string) {
		L.SetGlobal("s", lua.LString(s))
		L.SetGlobal("p", lua.LString(p))
		L.SetGlobal("r", lua.LString(r))
		L.Push(fn)
		if err := L.PCall(0, 0, nil); err != nil {
			if ae, ok := err.(*lua.ApiError); !ok || ae.Type != lua.ApiErrorRun {
				t.Fatalf("s=%q p=%q r=%q: %v", s, p, r, err)
			}
		}
		L.SetTop(0)
	})
}

// BenchmarkPatterns is a pattern-heavy script's loop: gsub with a string
// and a table, find with a capture and plain, match, gmatch.
func BenchmarkPatterns(b *testing.B) {
	L := patternState()
	defer L.Close()
	fn, err := L.LoadString(`
		local s = 'the quick brown fox jumps over the lazy dog 12345 key=value'
		local n = 0
		for i = 1, 50 do
			local r = gsub(s, '%w+', '<%0>')
			local a = find(s, '(%d+)')
			local k, v = match(s, '(%w+)=(%w+)')
			for w in gmatch(s, '%a+') do n = n + 1 end
			n = n + #r + a + #gsub(s, 'o', {o = '0'}) + find(s, 'lazy', 1, true)
		end
		return n`)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		L.Push(fn)
		L.Call(0, 1)
		L.Pop(1)
	}
}
