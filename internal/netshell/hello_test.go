package netshell

import (
	"strings"
	"testing"

	"github.com/vigil-kv/vigil/internal/redistext"
)

func TestParseHello(t *testing.T) {
	for _, tc := range []struct {
		line    string
		authOK  bool
		proto   int
		name    string
		authAt  []int
		errText string
	}{
		{"hello", true, 0, "", nil, ""},
		{"hello 3", true, 3, "", nil, ""},
		{"hello 2 SetName x AUTH u p", true, 2, "x", []int{5}, ""},
		{"hello 3 auth u p auth v q", true, 3, "", []int{3, 6}, ""},
		{"hello 3 auth u p", false, 0, "", []int{3}, redistext.ErrWrongPass},
		{"hello 4", true, 0, "", nil, redistext.ErrNoProto},
		{"hello x", true, 0, "", nil, "ERR Protocol version is not an integer or out of range"},
		{"hello 3 auth u", true, 0, "", nil, "ERR Syntax error in HELLO option 'auth'"},
		{"hello 3 \u017fetname x", true, 0, "", nil, "ERR Syntax error in HELLO option '\u017fetname'"},
	} {
		var args [][]byte
		for _, f := range strings.Fields(tc.line) {
			args = append(args, []byte(f))
		}
		var at []int
		h, errText := ParseHello(args, func(i int) bool { at = append(at, i); return tc.authOK })
		if errText != tc.errText || (errText == "" && (h.Proto != tc.proto || string(h.Name) != tc.name || h.HaveName != (tc.name != ""))) {
			t.Errorf("%q: %+v %q, want proto %d name %q error %q", tc.line, h, errText, tc.proto, tc.name, tc.errText)
		}
		if len(at) != len(tc.authAt) || (len(at) > 0 && at[0] != tc.authAt[0]) {
			t.Errorf("%q: auth called at %v, want %v", tc.line, at, tc.authAt)
		}
	}
}
