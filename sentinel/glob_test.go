package sentinel

import "testing"

func TestStringMatch(t *testing.T) {
	tests := []struct {
		p, s   string
		nocase bool
		want   bool
	}{
		{"*", "", false, false}, // as Redis: the loop needs a non-empty string
		{"*", "mymaster", false, true},
		{"my*", "mymaster", false, true},
		{"my*", "master", false, false},
		{"m?master", "mymaster", false, true},
		{"*master", "mymaster", false, true},
		{"[mx]ymaster", "mymaster", false, true},
		{"[^m]ymaster", "mymaster", false, false},
		{"[a-z]y*", "mymaster", false, true},
		{"[z-a]y*", "mymaster", false, true},
		{"MY*", "mymaster", false, false},
		{"MY*", "mymaster", true, true},
		{"my\\*", "my*", false, true},
		{"my\\*", "myx", false, false},
		{"[abc", "a", false, true},
		{"a*b*c", "axxbyyc", false, true},
		{"a*b*c", "axxbyy", false, false},
		{"", "", false, true},
		{"", "x", false, false},
	}
	for _, tc := range tests {
		if got := StringMatch(tc.p, tc.s, tc.nocase); got != tc.want {
			t.Errorf("StringMatch(%q, %q, %v) = %v, want %v", tc.p, tc.s, tc.nocase, got, tc.want)
		}
	}
}
