package redisutil

import "testing"

func TestEqFold(t *testing.T) {
	for _, tc := range []struct {
		b, lower string
		want     bool
	}{
		{"AUTH", "auth", true},
		{"aUtH", "auth", true},
		{"auth", "auth", true},
		{"auth ", "auth", false},
		{"aut", "auth", false},
		{"\u017fetname", "setname", false}, // no Unicode folding
		{"", "", true},
	} {
		if got := EqFold([]byte(tc.b), tc.lower); got != tc.want {
			t.Errorf("EqFold(%q, %q) = %v, want %v", tc.b, tc.lower, got, tc.want)
		}
	}
}
