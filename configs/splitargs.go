package configs

import (
	"bufio"
	"errors"
	"io"
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
		for p < n && isCSpace(line[p]) {
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
					if next := at(p + 1); next != 0 && !isCSpace(next) {
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
					if next := at(p + 1); next != 0 && !isCSpace(next) {
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

// isCSpace is C's isspace in the "C" locale.
func isCSpace(c byte) bool {
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

// Quote returns s as a double-quoted string that SplitArgs reads back as s,
// exactly as Redis's sdscatrepr writes it (CONFIG REWRITE uses it for string
// values, redis-server main() for the values of --directive arguments):
// \\ \" \n \r \t \a \b are escaped, other bytes outside 0x20-0x7e become \xHH.
func Quote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\\', '"':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\a':
			b.WriteString(`\a`)
		case '\b':
			b.WriteString(`\b`)
		default:
			if c >= 0x20 && c <= 0x7e {
				b.WriteByte(c)
			} else {
				const hex = "0123456789abcdef"
				b.WriteString(`\x`)
				b.WriteByte(hex[c>>4])
				b.WriteByte(hex[c&0xf])
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// trimLine trims a configuration line as loadServerConfigFromString does
// (sdstrim with " \t\r\n").
func trimLine(s string) string { return strings.Trim(s, " \t\r\n") }

// ParseLines tokenizes a redis.conf-style stream the way Redis's config
// loaders do: the text is split on "\n", each line is trimmed of spaces, tabs,
// CR and LF, blank lines and lines starting with '#' are skipped, and the rest
// are split with SplitArgs. fn gets the 1-based line number and the arguments
// (never empty; nothing is lowercased). Parsing stops at the first error: a
// line with unbalanced quotes gives a *ConfigError with Reason "Unbalanced
// quotes in configuration line", and an error returned by fn is wrapped in a
// *ConfigError carrying the line (unless it already is one, which is returned
// as is). Errors reading r are returned unwrapped.
//
// The sentinel configuration parser uses it; Load uses the same rules.
func ParseLines(r io.Reader, fn func(lineNo int, args []string) error) error {
	br := bufio.NewReader(r)
	lineNo := 0
	for {
		raw, rerr := br.ReadString('\n')
		if rerr != nil && rerr != io.EOF {
			return rerr
		}
		if rerr == io.EOF && raw == "" {
			return nil
		}
		lineNo++
		line := trimLine(raw)
		if line != "" && line[0] != '#' {
			args, err := SplitArgs(line)
			if err != nil {
				return &ConfigError{Line: lineNo, Text: line, Reason: reasonUnbalanced}
			}
			if len(args) > 0 {
				if err := fn(lineNo, args); err != nil {
					var ce *ConfigError
					if errors.As(err, &ce) {
						return err
					}
					return &ConfigError{Line: lineNo, Text: line, Reason: err.Error(), Err: err}
				}
			}
		}
		if rerr == io.EOF {
			return nil
		}
	}
}

// stringMatch is Redis's util.c stringmatchlen: glob-style matching with *, ?,
// [...] (with ^ negation, a-z ranges and \ escapes) and \ escapes. CONFIG GET
// uses it with nocase set.
func stringMatch(pattern, str string, nocase bool) bool {
	skip := false
	return stringMatchImpl(pattern, str, nocase, &skip)
}

func stringMatchImpl(pattern, str string, nocase bool, skipLonger *bool) bool {
	lower := func(c byte) byte {
		if nocase && c >= 'A' && c <= 'Z' {
			return c + 'a' - 'A'
		}
		return c
	}
	pat := func(i int) byte { // pattern byte, NUL past the end as in C
		if i < len(pattern) {
			return pattern[i]
		}
		return 0
	}
	for len(pattern) > 0 && len(str) > 0 {
		switch pattern[0] {
		case '*':
			for len(pattern) > 1 && pattern[1] == '*' {
				pattern = pattern[1:]
			}
			if len(pattern) == 1 {
				return true
			}
			for len(str) > 0 {
				if stringMatchImpl(pattern[1:], str, nocase, skipLonger) {
					return true
				}
				if *skipLonger {
					return false
				}
				str = str[1:]
			}
			*skipLonger = true
			return false
		case '?':
			str = str[1:]
		case '[':
			pattern = pattern[1:]
			not := pat(0) == '^'
			if not {
				pattern = pattern[1:]
			}
			match := false
			for {
				if len(pattern) == 0 {
					// Unterminated class: C steps back so that the shared
					// "pattern++" below lands on the end.
					pattern = "]"
					break
				}
				if pattern[0] == '\\' && len(pattern) >= 2 {
					pattern = pattern[1:]
					if pattern[0] == str[0] {
						match = true
					}
				} else if pattern[0] == ']' {
					break
				} else if len(pattern) >= 3 && pattern[1] == '-' {
					start, end, c := pattern[0], pattern[2], str[0]
					if start > end {
						start, end = end, start
					}
					if nocase {
						start, end, c = lower(start), lower(end), lower(c)
					}
					pattern = pattern[2:]
					if c >= start && c <= end {
						match = true
					}
				} else if lower(pattern[0]) == lower(str[0]) {
					match = true
				}
				pattern = pattern[1:]
			}
			if not {
				match = !match
			}
			if !match {
				return false
			}
			str = str[1:]
		case '\\':
			if len(pattern) >= 2 {
				pattern = pattern[1:]
			}
			fallthrough
		default:
			if lower(pattern[0]) != lower(str[0]) {
				return false
			}
			str = str[1:]
		}
		pattern = pattern[1:]
		if len(str) == 0 {
			for len(pattern) > 0 && pattern[0] == '*' {
				pattern = pattern[1:]
			}
			break
		}
	}
	return len(pattern) == 0 && len(str) == 0
}
