package lua

import (
	"strings"
	"testing"
)

// syntaxCases are a sample of Lua 5.1's compile errors; server's
// scripting_syntax_test.go holds the whole table, checked through EVAL and
// against redis-server.
var syntaxCases = []struct{ body, want string }{
	{"syntax error here", "user_script:1: '=' expected near 'error'"},
	{"return 1 +", "user_script:1: unexpected symbol near '<eof>'"},
	{"if true then\nreturn 1", "user_script:2: 'end' expected (to close 'if' at line 1) near '<eof>'"},
	{"return 'abc\nx'", "user_script:1: unfinished string near ''abc'"},
	{"return --[[ unfinished", "user_script:1: unfinished long comment near '<eof>'"},
	{"break", "user_script:1: no loop to break near '<eof>'"},
	{"return 1e", "user_script:1: malformed number near '1e'"},
	{"goto x", "user_script:1: '=' expected near 'x'"},
	{"f\n(g)()", "user_script:2: ambiguous syntax (function call x new statement) near '('"},
	{"local function f() return ... end", "user_script:1: cannot use '...' outside a vararg function near '...'"},
	{"return [[a [[b]] c]]", "user_script:1: '<eof>' expected near 'c'"},
	{"return [[a [[b]]", ""},
	{"return 1", ""},
	{"x = {[1] = 2, y = 3; 4,}", ""},
	{"local s = 'a\\z\\0b\\\nc\\065' return #s", ""},
	{"return [==[ ]] ]==] .. [[\nx]] --[==[ comment ]] ]==] -- line\n", ""},
}

func TestSyntaxCheck(t *testing.T) {
	for _, tc := range syntaxCases {
		if got := SyntaxCheck(tc.body, "user_script"); got != tc.want {
			t.Errorf("%q:\n got %q\nwant %q", tc.body, got, tc.want)
		}
	}
	// The chunk name is the one given; the stripped code keeps its lines.
	if got := SyntaxCheck("return +", "user_function"); got != "user_function:1: unexpected symbol near '+'" {
		t.Errorf("chunk name: got %q", got)
	}
	code, msg := SyntaxCheckStrip("--[=x comment\nreturn 1 -- tail", "user_script")
	if msg != "" || strings.Count(code, "\n") != 1 || strings.Contains(code, "comment") || !strings.Contains(code, "return 1") {
		t.Errorf("SyntaxCheckStrip: %q %q", code, msg)
	}
}

// FuzzSyntaxCheck: the checker never panics and reports its errors with
// the chunk's name and a line.
func FuzzSyntaxCheck(f *testing.F) {
	for _, tc := range syntaxCases {
		f.Add(tc.body)
	}
	f.Fuzz(func(t *testing.T, body string) {
		msg := SyntaxCheck(body, "user_script")
		if msg != "" && !strings.HasPrefix(msg, "user_script:") {
			t.Fatalf("%q: %q", body, msg)
		}
	})
}
