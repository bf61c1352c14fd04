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
