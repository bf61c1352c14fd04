package lua

import (
	"testing"

	lua "github.com/yuin/gopher-lua"
)

// TestOpenLibs runs the bundled libraries on a bare state; server's golden
// scripts (testdata/scripts/scripting.txt) compare them with redis-server.
func TestOpenLibs(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	OpenLibs(L, L.G.Global)
	for _, tc := range []struct{ code, want string }{
		{"return bit.tohex(bit.band(0xff, 0x0f) + bit.lshift(1, 8))", "0000010f"},
		{"return bit.tohex(65535, -2147483648)", "0000FFFF"}, // scripting.tcl's "lua bit.tohex bug"
		{"return bit.tobit(4294967297)", "1"},
		{"return cjson.encode({1, 2, {a = 1.5}})", `[1,2,{"a":1.5}]`},
		{"return cjson.decode('[1,null]')[2] == cjson.null", "true"},
		{"local a, b = cmsgpack.unpack(cmsgpack.pack({1, 'x'}, 3.25)) return a[2] .. b", "x3.25"},
		{"return #cmsgpack.pack(70000)", "5"},
		{"return struct.unpack('>i', struct.pack('>i', -100000))", "-100000"},
		{"return struct.size('!8bd')", "16"},
		{"return " + `"` + FormatNumber(1.0/3) + `"`, "0.33333333333333"},
	} {
		if err := L.DoString(tc.code); err != nil {
			t.Errorf("%s: %v", tc.code, err)
			continue
		}
		if got := L.Get(1).String(); got != tc.want {
			t.Errorf("%s: got %q want %q", tc.code, got, tc.want)
		}
		L.SetTop(0)
	}
}

// TestCStrtod checks the strtod emulation cjson.decode reads numbers with
// against glibc's answers (value, bytes read), as a C program calling
// strtod printed them.
func TestCStrtod(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // FormatNumber of the value
		n    int
	}{
		{"12]", "12", 2},
		{"-0", "-0", 2},
		{"+1", "1", 2},
		{"01", "1", 2},
		{"1.", "1", 2},
		{".5", "0.5", 2},
		{"1.e1", "10", 4},
		{"1e", "1", 1},
		{"1e+", "1", 1},
		{"1E2x", "100", 3},
		{"1e400", "inf", 5},
		{"-1e400", "-inf", 6},
		{"1e-400", "0", 6},
		{"0x10", "16", 4},
		{"0X1F", "31", 4},
		{"-0x10", "-16", 5},
		{"0x1.8p1", "3", 7},
		{"0x.8", "0.5", 4},
		{"0x1p", "1", 3},
		{"0x", "0", 1},
		{"0xg", "0", 1},
		{"Infinity", "inf", 8},
		{"infinit", "inf", 3},
		{"-INF", "-inf", 4},
		{"nan", "nan", 3},
		{"NaN(12ab_)x", "nan", 10},
		{"nan(1", "nan", 3},
		{"-", "0", 0},
		{"+", "0", 0},
		{"- 1", "0", 0},
		{".", "0", 0},
		{"", "0", 0},
		{"1\x002", "1", 1},
	} {
		f, n := cStrtod(tc.in)
		if got := FormatNumber(f); got != tc.want || n != tc.n {
			t.Errorf("cStrtod(%q) = %s, %d; want %s, %d", tc.in, got, n, tc.want, tc.n)
		}
	}
}
