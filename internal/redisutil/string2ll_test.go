package redisutil

import (
	"strconv"
	"testing"
)

func TestString2ll(t *testing.T) {
	tests := []struct {
		in string
		n  int64
		ok bool
	}{
		{"0", 0, true},
		{"1", 1, true},
		{"-1", -1, true},
		{"10", 10, true},
		{"9223372036854775807", 9223372036854775807, true},
		{"-9223372036854775808", -9223372036854775808, true},
		{"9223372036854775808", 0, false},
		{"-9223372036854775809", 0, false},
		{"18446744073709551615", 0, false}, // fits uint64, not int64
		{"18446744073709551616", 0, false}, // overflows uint64
		{"99999999999999999999", 0, false},
		{"-0", 0, false}, // as getLongLongFromObject: SELECT -0 is an error
		{"00", 0, false},
		{"01", 0, false},
		{"-01", 0, false},
		{"+1", 0, false},
		{" 1", 0, false},
		{"1 ", 0, false},
		{"", 0, false},
		{"-", 0, false},
		{"1a", 0, false},
		{"0x10", 0, false},
		{"1.0", 0, false},
		{"-000000000000000000001", 0, false}, // over 20 bytes
	}
	for _, tt := range tests {
		n, ok := String2ll(tt.in)
		if n != tt.n || ok != tt.ok {
			t.Errorf("String2ll(%q) = %d, %v; want %d, %v", tt.in, n, ok, tt.n, tt.ok)
		}
		if bn, bok := String2ll([]byte(tt.in)); bn != n || bok != ok {
			t.Errorf("String2ll([]byte(%q)) = %d, %v; the string form gave %d, %v", tt.in, bn, bok, n, ok)
		}
	}
}

// FuzzString2ll: whatever String2ll accepts prints back as itself (the
// property the integer encodings rely on), and every int64 is accepted.
func FuzzString2ll(f *testing.F) {
	for _, s := range []string{"0", "-0", "12", "-9223372036854775808", "9223372036854775808", "01", "+1", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, ok := String2ll(s)
		if ok && strconv.FormatInt(n, 10) != s {
			t.Fatalf("String2ll(%q) = %d, which prints as %q", s, n, strconv.FormatInt(n, 10))
		}
		if v, err := strconv.ParseInt(s, 10, 64); err == nil && strconv.FormatInt(v, 10) == s && !ok {
			t.Fatalf("String2ll(%q) refused a canonical int64", s)
		}
	})
}
