package sentinel

import "testing"

// The fields of the empty-restart rule: the replica's guard flag (only
// after role:slave, as the other replica fields) and whether a keyspace
// line lists keys.
func TestParseInfoEmptyRestart(t *testing.T) {
	cases := []struct {
		text          string
		refused, keys bool
	}{
		{"role:slave\r\nmaster_host:h\r\nmaster_sync_refused_empty:1\r\nmaster_sync_refused_reason:x\r\n", true, false},
		{"role:slave\r\nmaster_sync_refused_empty:0\r\n", false, false},
		{"master_sync_refused_empty:1\r\nrole:master\r\n", false, false},
		{"role:master\r\n# Keyspace\r\ndb0:keys=3,expires=0,avg_ttl=0\r\n", false, true},
		{"role:master\r\n# Keyspace\r\ndb0:keys=0,expires=0,avg_ttl=0\r\ndb12:keys=1,expires=0\r\n", false, true},
		{"role:master\r\ndbfoo:keys=3\r\ndb0:expires=1\r\n", false, false},
	}
	for _, c := range cases {
		in := ParseInfo(c.text)
		if in.RefusedEmpty != c.refused || in.HasKeys != c.keys {
			t.Errorf("%q: refused %v keys %v, want %v %v", c.text, in.RefusedEmpty, in.HasKeys, c.refused, c.keys)
		}
	}
}
