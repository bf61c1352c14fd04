package redisutil

import (
	"strings"
	"testing"
	"time"
)

// globCases are stringmatchlen results, including the edge cases where
// Redis reads past the pattern's end (its NUL terminator) and where its
// behaviour is surprising. The expected values were checked against Redis
// 7.0's util.c.
var globCases = []struct {
	pattern, s string
	nocase     bool
	want       bool
}{
	{"", "", false, true},
	{"", "a", false, false},
	{"*", "", false, false}, // stringmatchlen("*", "") is 0: KEYS/SCAN special-case "*"
	{"*", "anything", false, true},
	{"**", "x", false, true},
	{"a*", "a", false, true},
	{"a**", "a", false, true},
	{"*a", "a", false, true},
	{"h?llo", "hello", false, true},
	{"h?llo", "hllo", false, false},
	{"?", "", false, false},
	{"h*llo", "hllo", false, true},
	{"h*llo", "heeeello", false, true},
	{"h*llo", "heeeellox", false, false},
	{"*.txt", "a.b.txt", false, true},
	{"a*b*c", "abbbbc", false, true},
	{"a*b*c", "acb", false, false},
	{"h[ae]llo", "hello", false, true},
	{"h[ae]llo", "hallo", false, true},
	{"h[ae]llo", "hillo", false, false},
	{"h[^e]llo", "hallo", false, true},
	{"h[^e]llo", "hello", false, false},
	{"h[a-b]llo", "hbllo", false, true},
	{"h[a-b]llo", "hcllo", false, false},
	{"h[b-a]llo", "hallo", false, true}, // reversed range
	{"[a-]", "a", false, true},          // "]" ends the range a..] ...
	{"[a-]", "]", false, true},          // ... which is ]..a
	{"[a-]", "_", false, true},
	{"[a-]", "-", false, false},
	{"[a-]x", "ax", false, false}, // the class swallowed "x]" too
	{"[]", "a", false, false},
	{"[]", "]", false, false},
	{"[]a]", "]", false, false}, // "[]" is an empty class, then literal "a]"
	{"[^]", "x", false, true},
	{"[^]", "", false, false},
	{"[", "[", false, false}, // unterminated: empty class
	{"[a", "a", false, true}, // unterminated: runs to the end
	{"[^", "x", false, true},
	{"[ab", "c", false, false},
	{"[\\]]", "]", false, true},
	{"[\\-]", "-", false, true},
	{"[\\", "\\", false, true},
	{"[a\\", "\\", false, true},
	{"x[a-c-e]", "xd", false, false},
	{"x[a-c-e]", "x-", false, true},
	{"\\*", "*", false, true},
	{"\\*", "x", false, false},
	{"\\?", "?", false, true},
	{"\\[a]", "[a]", false, true},
	{"\\", "\\", false, true}, // trailing backslash is literal
	{"a\\", "a\\", false, true},
	{"\\a", "a", false, true},
	{"HELLO", "hello", true, true},
	{"HELLO", "hello", false, false},
	{"h[A-Z]llo", "hello", true, true},
	{"h[a-z]llo", "hEllo", true, true},
	{"h[a-z]llo", "hEllo", false, false},
	{"[E]", "e", true, true},
	{"\\H", "h", true, true},
	{"[\\E]", "e", true, false},       // escaped bracket chars compare exactly
	{"[a-\xff]", "\xff", false, true}, // signed char: range is -1..'a'
	{"[a-\xff]", "b", false, false},
	{"[a-\xff]", "A", false, true},
	{"\x00", "\x00", false, true},
	{"a\x00*", "a\x00bc", false, true},
}

func TestStringMatch(t *testing.T) {
	for _, tc := range globCases {
		if got := StringMatch([]byte(tc.pattern), []byte(tc.s), tc.nocase); got != tc.want {
			t.Errorf("StringMatch(%q, %q, %v) = %v, want %v", tc.pattern, tc.s, tc.nocase, got, tc.want)
		}
		if got := StringMatch(tc.pattern, tc.s, tc.nocase); got != tc.want {
			t.Errorf("StringMatch(string %q, string %q, %v) = %v, want %v", tc.pattern, tc.s, tc.nocase, got, tc.want)
		}
	}
}

// TestStringMatchHostile: patterns that backtrack exponentially in a naive
// matcher finish quickly, and nesting beyond 1000 '*' fails.
func TestStringMatchHostile(t *testing.T) {
	long := strings.Repeat("a", 10000)
	cases := []struct {
		pattern, s string
		want       bool
	}{
		{strings.Repeat("*a", 30) + "*b", long, false},
		{strings.Repeat("a*", 200) + "b", long, false},
		{strings.Repeat("*?", 500) + "b", long, false},
		{strings.Repeat("*a", 100), long, true},
		{strings.Repeat("*[a-z]", 100) + "*b", long, false},
		// Redis's nesting guard: more than 1000 levels never match.
		{strings.Repeat("a*", 1500) + "a", strings.Repeat("a", 1600), false},
		{strings.Repeat("a*", 900) + "a", strings.Repeat("a", 1600), true},
	}
	for _, tc := range cases {
		start := time.Now()
		got := StringMatch(tc.pattern, tc.s, false)
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("pattern of %d bytes took %v", len(tc.pattern), d)
		}
		if got != tc.want {
			t.Errorf("pattern %.20q... = %v, want %v", tc.pattern, got, tc.want)
		}
	}
}

func FuzzStringMatch(f *testing.F) {
	for _, tc := range globCases {
		f.Add(tc.pattern, tc.s, tc.nocase)
	}
	f.Fuzz(func(t *testing.T, pattern, s string, nocase bool) {
		a := StringMatch([]byte(pattern), []byte(s), nocase)
		if b := StringMatch(pattern, s, nocase); a != b {
			t.Fatalf("[]byte and string disagree on %q %q", pattern, s)
		}
		if !nocase && !strings.ContainsAny(pattern, "*?[\\") && a != (pattern == s) {
			t.Fatalf("literal pattern %q vs %q = %v", pattern, s, a)
		}
	})
}
