package redisutil

import "testing"

// TestTemplate follows sds.c's sdsTestTemplate (the REDIS_TEST cases) and
// what redis-server 7.0.15's CONFIG SET proc-title-template accepts.
func TestTemplate(t *testing.T) {
	lookup := func(name string) (string, bool) {
		switch name {
		case "variable1":
			return "value1", true
		case "variable2":
			return "value2", true
		}
		return "", false
	}
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"v1={variable1} v2={variable2}", "v1=value1 v2=value2", true},
		{"{variable1}{variable2}", "value1value2", true},
		{"", "", true},
		{"no variables", "no variables", true},
		{"v1={variable1} v3={doesnotexist}", "", false},
		{"v1={{variable1}", "v1={variable1}", true}, // "{{" is '{', the rest literal
		{"v1={variable1", "", false},
		{"{", "", false},
		{"x}}", "x}}", true},
		{"{{x}} {variable1}", "{x}} value1", true},
		{"{}", "", false},
	} {
		got, ok := Template(tc.in, lookup)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Template(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}
