package server

import "testing"

// TestSameKeys: prefetchBatch skips the prefetch of a batch whose commands
// all name one key, and only then.
func TestSameKeys(t *testing.T) {
	b := func(ss ...string) [][]byte {
		out := make([][]byte, len(ss))
		for i, s := range ss {
			out[i] = []byte(s)
		}
		return out
	}
	for _, tc := range []struct {
		keys [][]byte
		want bool
	}{
		{b("k", "k"), true},
		{b("mylist", "mylist", "mylist"), true},
		{b("k", "k", "j"), false},
		{b("a", "b"), false},
		{b("key:1", "key:10"), false},
		{b("", ""), true},
		{b("k", ""), false},
	} {
		if got := sameKeys(tc.keys); got != tc.want {
			t.Errorf("sameKeys(%q) = %v, want %v", tc.keys, got, tc.want)
		}
	}
}
