package lua

import (
	"strings"
	"testing"
)

// TestLuaChunkID: luaO_chunkid's names, LUA_IDSIZE 60.
func TestLuaChunkID(t *testing.T) {
	long := strings.Repeat("x", 43)
	for _, tc := range []struct{ source, want string }{
		{"@user_script", "user_script"},
		{"=(load)", "(load)"},
		{"error(1)", `[string "error(1)"]`},
		{long, `[string "` + long + `"]`},
		{long + "y", `[string "` + long + `..."]`},
		{"a\nb", `[string "a..."]`},
		{"\r\nb", `[string "..."]`},
		{"a\x00b", `[string "a"]`},
		{"=" + strings.Repeat("n", 70), strings.Repeat("n", 59)},
		{"@" + strings.Repeat("f", 60) + "tail", "..." + strings.Repeat("f", 48) + "tail"},
		{"@short", "short"},
	} {
		if got := luaChunkID(tc.source); got != tc.want {
			t.Errorf("luaChunkID(%q) = %q, want %q", tc.source, got, tc.want)
		}
	}
}

// TestSyntaxCheckStripRewrites: what gopher-lua is given instead of Lua
// 5.1 it cannot read, line breaks kept.
func TestSyntaxCheckStripRewrites(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"return 0x1p4", "return 16"},
		{"return 0x1P4+0x10", "return 16+0x10"},
		{"return 0xffffffffffffffffff", "return 4.722366482869645e+21"},
		{"return 0x1p99999", "return (1/0)"},
		{"return '0x1p4' -- 0x1p4", "return '0x1p4' " + strings.Repeat(" ", len("-- 0x1p4"))},
		{"local goto = 1 return goto", "local goto_ = 1 return goto_"},
		{"local goto_ = 0 local goto = 1 return goto", "local goto_ = 0 local goto__ = 1 return goto__"},
		{"local goto = goto", `local goto_ = _G["goto"]`}, // the second is the global
		{"goto = 1", `_G["goto"] = 1`},
		{"local _G = {} return goto", "local _G = {} return goto"}, // _G shadowed: left (gopher-lua refuses it)
		{"t.goto = {goto = 1}", `t["goto"] = {["goto"] = 1}`},
		{"t.\ngoto = 1", "t[\n\"goto\"] = 1"},
		{"function t.goto(a) end", ` t["goto"] = function(a) end`},
		{"function t:goto() end", ` t["goto"] = function(self) end`},
		{"function t.goto:m(a) end", ` t["goto"].m = function(self, a) end`},
		{"function t.a.b() end", "function t.a.b() end"},
		{"local function f(goto) return function() return goto end end", "local function f(goto_) return function() return goto_ end end"},
		{"t:goto()", "t:goto_()"},
		{"t.a:goto(1, 2)", "t.a:goto_(1, 2)"},
		{"return t:goto'x'", "return t:goto_'x'"},
		{"return t:goto{}.n", "return t:goto_{}.n"},
		{"t:goto():goto(1)", "t:goto_():goto_(1)"},
		{"local goto_ = 1 goto = goto_:goto()", `local goto_ = 1 _G["goto"] = goto_:goto__()`},
		{"local goto = 1 goto:goto()", "local goto_ = 1 goto_:goto_()"},
		{"return 'goto_', t:goto()", "return 'goto_', t:goto__()"}, // no string's value
		{"return [[a goto__]], t:goto()", "return [[a goto__]], t:goto___()"},
	} {
		got, msg := SyntaxCheckStrip(tc.src, "user_script")
		if msg != "" || got != tc.want {
			t.Errorf("SyntaxCheckStrip(%q) = %q %q, want %q", tc.src, got, msg, tc.want)
		}
		if strings.Count(got, "\n") != strings.Count(tc.src, "\n") {
			t.Errorf("%q: line breaks changed: %q", tc.src, got)
		}
	}
}
