package sentinel

import "testing"

// The replica's guard flag is read only after role:slave, as the other
// replica fields.
func TestParseInfoEmptyRestart(t *testing.T) {
	cases := []struct {
		text    string
		refused bool
	}{
		{"role:slave\r\nmaster_host:h\r\nmaster_sync_refused_empty:1\r\nmaster_sync_refused_reason:x\r\n", true},
		{"role:slave\r\nmaster_sync_refused_empty:0\r\n", false},
		{"master_sync_refused_empty:1\r\nrole:master\r\n", false},
		{"role:slave\r\n", false},
	}
	for _, c := range cases {
		if in := ParseInfo(c.text); in.RefusedEmpty != c.refused {
			t.Errorf("%q: refused %v, want %v", c.text, in.RefusedEmpty, c.refused)
		}
	}
}
