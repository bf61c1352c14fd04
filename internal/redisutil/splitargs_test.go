package redisutil

import (
	"errors"
	"reflect"
	"testing"
)

func TestSplitArgs(t *testing.T) {
	tests := []struct {
		line string
		want []string
		err  bool
	}{
		{"", nil, false},
		{"   \t ", nil, false},
		{"port 6379", []string{"port", "6379"}, false},
		{"  port\t6379  ", []string{"port", "6379"}, false},
		{"a\r\nb", []string{"a", "b"}, false},
		{"\v\fa", []string{"a"}, false},          // leading \v \f are isspace
		{"a\vb", []string{"a\vb"}, false},        // but do not end a bare word
		{`save ""`, []string{"save", ""}, false}, // empty argument
		{`"" ''`, []string{"", ""}, false},       // two empty arguments
		{`"a b" c`, []string{"a b", "c"}, false}, // spaces inside quotes
		{`"\n\r\t\b\a"`, []string{"\n\r\t\b\a"}, false},
		{`"\\ \" \q"`, []string{`\ " q`}, false},        // other escapes keep the char
		{`"\x41\x4a\x6b"`, []string{"AJk"}, false},      // hex escapes
		{`"\x4g"`, []string{"x4g"}, false},              // not hex: \x is x
		{`"\x00z"`, []string{"\x00z"}, false},           // NUL through an escape
		{`'it\'s'`, []string{"it's"}, false},            // \' in single quotes
		{`'a\nb'`, []string{`a\nb`}, false},             // no other escape in single quotes
		{`'a"b'`, []string{`a"b`}, false},               // double quote inside single
		{`"a'b"`, []string{`a'b`}, false},               // single quote inside double
		{`foo"bar baz"`, []string{"foobar baz"}, false}, // quote opens inside a word
		{`foo'bar'`, []string{"foobar"}, false},
		{`a"b"c`, nil, true}, // closing quote then a letter
		{`"a"b`, nil, true},
		{`'a'b`, nil, true},
		{`"abc`, nil, true}, // unterminated
		{`'abc`, nil, true},
		{`"abc\"`, nil, true},                // escaped quote does not close
		{`"abc\`, nil, true},                 // backslash at the end
		{`"a"	b`, []string{"a", "b"}, false}, // tab after the closing quote
		{"a\x00 b c", []string{"a"}, false},  // NUL ends the C string
		{"\x00", nil, false},
		{`"é"`, []string{"é"}, false},
		{`rename-command CONFIG ""`, []string{"rename-command", "CONFIG", ""}, false},
		{`proc-title-template "{title} {listen-addr} {server-mode}"`, []string{"proc-title-template", "{title} {listen-addr} {server-mode}"}, false},
		// Checked against redis-server 7.0 (inline RPUSH, then LRANGE).
		{`"a\"b"`, []string{`a"b`}, false},
		{`'x\'y'`, []string{"x'y"}, false},
		{`"\x41"`, []string{"A"}, false},
		{`"\x4"`, []string{"x4"}, false},
		{`"\X41"`, []string{"X41"}, false},
		{`"\xff\x00"`, []string{"\xff\x00"}, false},
		{`"a\\"`, []string{`a\`}, false},
		{`'\\'`, nil, true}, // in single quotes only \' escapes: the quote does not close
		{`"\n\r\t\b\a\z"`, []string{"\n\r\t\b\az"}, false},
		{`a'b'`, []string{"ab"}, false},
		{`a"b c"d`, nil, true},
		{`"a""b"`, nil, true},
		{`"`, nil, true},
		{`'`, nil, true},
		{`'a\`, nil, true},
		{"a\fb", []string{"a\fb"}, false},
		{"\va b", []string{"a", "b"}, false},
		{"\"a\"\v", []string{"a"}, false}, // \v after a closing quote is isspace
		{"a\tb", []string{"a", "b"}, false},
		{"a b  c", []string{"a", "b", "c"}, false},
		{`"a\tb" 'c\'d'`, []string{"a\tb", "c'd"}, false},
		// NUL ends the line as it ends sdssplitargs' C string.
		{"\"a\x00b\"", nil, true},
		{"'a\x00b'", nil, true},
		{"\"a\"\x00zz", []string{"a"}, false},
		{"a \x00 b", []string{"a"}, false},
	}
	for _, tt := range tests {
		got, err := SplitArgs(tt.line)
		if tt.err {
			if !errors.Is(err, ErrUnbalancedQuotes) || got != nil {
				t.Errorf("SplitArgs(%q) = %q, %v; want ErrUnbalancedQuotes", tt.line, got, err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("SplitArgs(%q) = %q, %v; want %q", tt.line, got, err, tt.want)
		}
	}
}
