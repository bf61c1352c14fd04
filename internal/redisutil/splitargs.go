package redisutil

import (
	"errors"
	"strings"
)

// ErrUnbalancedQuotes is returned by SplitArgs for a line whose quotes do not
// balance, or whose closing quote is not followed by a space or the end of the
// line (sdssplitargs returns NULL in both cases).
var ErrUnbalancedQuotes = errors.New("unbalanced quotes")

// SplitArgs splits a configuration line into arguments exactly as Redis's
// sds.c sdssplitargs does:
//
//   - arguments are separated by spaces, tabs, CR and LF (leading \v and \f
//     are skipped too, as C's isspace does);
//   - "double quotes" understand \n \r \t \b \a, \xHH (two hex digits) and
//     \<any other char> (that char, so \\ and \");
//   - 'single quotes' understand only \';
//   - a closing quote must be followed by a space or the end of the line;
//   - a quote inside a bare word opens a quoted part of the same argument
//     (foo"bar" is foobar).
//
// A NUL byte ends the line, as it ends a C string. An empty or blank line
// gives no arguments and no error.
func SplitArgs(line string) ([]string, error) {
	if i := strings.IndexByte(line, 0); i >= 0 {
		line = line[:i]
	}
	var args []string
	p := 0
	n := len(line)
	at := func(i int) byte { // the C string's byte at i, NUL past the end
		if i < n {
			return line[i]
		}
		return 0
	}
	for {
		for p < n && IsSpace(line[p]) {
			p++
		}
		if p >= n {
			return args, nil
		}
		var cur []byte
		inq, insq, done := false, false, false
		for !done {
			c := at(p)
			switch {
			case inq:
				switch {
				case c == '\\' && at(p+1) == 'x' && isHex(at(p+2)) && isHex(at(p+3)):
					cur = append(cur, hexVal(at(p+2))<<4|hexVal(at(p+3)))
					p += 3
				case c == '\\' && at(p+1) != 0:
					p++
					switch e := at(p); e {
					case 'n':
						cur = append(cur, '\n')
					case 'r':
						cur = append(cur, '\r')
					case 't':
						cur = append(cur, '\t')
					case 'b':
						cur = append(cur, '\b')
					case 'a':
						cur = append(cur, '\a')
					default:
						cur = append(cur, e)
					}
				case c == '"':
					if next := at(p + 1); next != 0 && !IsSpace(next) {
						return nil, ErrUnbalancedQuotes
					}
					done = true
				case c == 0:
					return nil, ErrUnbalancedQuotes
				default:
					cur = append(cur, c)
				}
			case insq:
				switch {
				case c == '\\' && at(p+1) == '\'':
					p++
					cur = append(cur, '\'')
				case c == '\'':
					if next := at(p + 1); next != 0 && !IsSpace(next) {
						return nil, ErrUnbalancedQuotes
					}
					done = true
				case c == 0:
					return nil, ErrUnbalancedQuotes
				default:
					cur = append(cur, c)
				}
			default:
				switch c {
				case ' ', '\n', '\r', '\t', 0:
					done = true
				case '"':
					inq = true
				case '\'':
					insq = true
				default:
					cur = append(cur, c)
				}
			}
			if p < n {
				p++
			}
		}
		args = append(args, string(cur))
	}
}

// IsSpace is C's isspace in the "C" locale: space, \t, \n, \v, \f, \r.
func IsSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func hexVal(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}
