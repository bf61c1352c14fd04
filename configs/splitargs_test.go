package configs

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/vigil-kv/vigil/internal/redisutil"
)

func TestStringMatch(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"*", "port", true},
		{"*", "", false}, // as Redis: the loop never runs on an empty string
		{"", "", true},
		{"p*t", "port", true},
		{"P*T", "port", true}, // nocase
		{"p?rt", "port", true},
		{"p?rt", "prt", false},
		{"*max*", "maxmemory-policy", true},
		{"maxmemory*", "maxmemory", true},
		{"*-policy", "maxmemory-policy", true},
		{"[mp]ort", "port", true},
		{"[^m]ort", "port", true},
		{"[^p]ort", "port", false},
		{"[a-z]ort", "port", true},
		{"[z-a]ort", "port", true}, // reversed range
		{"[A-Z]ort", "port", true}, // nocase range
		{`\*`, "*", true},
		{`\*`, "a", false},
		{`[\]]`, "]", true},
		{"[abc", "a", true}, // unterminated class
		{"a**b", "ab", true},
		{"a*", "a", true},
		{"*a", "a", true},
		{"*b", "a", false},
		{"a*b*c", "axxbyyc", true},
		{"a*b*c", "axxbyy", false},
		{"slave-*", "slave-priority", true},
		{"*?", "", false},
	}
	for _, tt := range tests {
		if got := redisutil.StringMatch(tt.pattern, tt.s, true); got != tt.want {
			t.Errorf("redisutil.StringMatch(%q, %q) = %v, want %v", tt.pattern, tt.s, got, tt.want)
		}
	}
	if redisutil.StringMatch("P*", "port", false) {
		t.Error("case-sensitive match ignored case")
	}
}

func TestParseLines(t *testing.T) {
	in := "# comment\n\n  port 6379  \r\nsave \"\"\n\t# indented comment\nsentinel monitor m 127.0.0.1 6379 2\nlast line"
	type line struct {
		n    int
		args []string
	}
	var got []line
	err := ParseLines(strings.NewReader(in), func(n int, args []string) error {
		got = append(got, line{n, args})
		return nil
	})
	want := []line{
		{3, []string{"port", "6379"}},
		{4, []string{"save", ""}},
		{6, []string{"sentinel", "monitor", "m", "127.0.0.1", "6379", "2"}},
		{7, []string{"last", "line"}},
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("ParseLines = %v, %v; want %v", got, err, want)
	}

	// Errors carry the line, and stop the parse.
	err = ParseLines(strings.NewReader("a 1\nb \"2\n c 3"), func(int, []string) error { return nil })
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Line != 2 || ce.Text != `b "2` || ce.Reason != "Unbalanced quotes in configuration line" {
		t.Fatalf("unbalanced: %#v", err)
	}
	boom := errors.New("Unrecognized sentinel configuration statement.")
	calls := 0
	err = ParseLines(strings.NewReader("a\nsentinel bogus\nc"), func(n int, args []string) error {
		calls++
		if args[0] == "sentinel" {
			return boom
		}
		return nil
	})
	if !errors.As(err, &ce) || ce.Line != 2 || ce.Text != "sentinel bogus" || ce.Reason != boom.Error() || !errors.Is(err, boom) || calls != 2 {
		t.Fatalf("callback error: %#v (calls %d)", err, calls)
	}
	want2 := "\n*** FATAL CONFIG FILE ERROR (Redis 7.0.15) ***\nReading the configuration file, at line 2\n>>> 'sentinel bogus'\nUnrecognized sentinel configuration statement."
	if err.Error() != want2 {
		t.Fatalf("Error() = %q, want %q", err.Error(), want2)
	}
}

// FuzzSplitArgs checks that redisutil.SplitArgs never panics and that Quote writes
// what SplitArgs reads back.
func FuzzSplitArgs(f *testing.F) {
	for _, s := range []string{
		"", "port 6379", `save ""`, `"a\x41\n" 'b\'c'`, `a"b"c`, `"unterminated`, `'x`,
		`"\x4`, `"\`, "a\x00b", "\v\f\r\n\t", `rename-command "" ''`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		args, err := redisutil.SplitArgs(line)
		if err != nil {
			if args != nil {
				t.Fatalf("redisutil.SplitArgs(%q) returned %q with an error", line, args)
			}
			return
		}
		quoted := make([]string, len(args))
		for i, a := range args {
			quoted[i] = redisutil.Quote(a)
		}
		back, err := redisutil.SplitArgs(strings.Join(quoted, " "))
		if err != nil || len(back) != len(args) {
			t.Fatalf("round trip of %q: %q, %v", args, back, err)
		}
		for i := range args {
			if back[i] != args[i] {
				t.Fatalf("round trip of %q: %q", args, back)
			}
		}
	})
}
