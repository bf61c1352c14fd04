package configs

import (
	"bufio"
	"errors"
	"io"
	"strings"

	"github.com/vigil-kv/vigil/internal/redisutil"
)

// Quote returns s as a double-quoted string that redisutil.SplitArgs reads
// back as s, exactly as Redis's sdscatrepr writes it (CONFIG REWRITE uses it
// for string values, redis-server main() for the values of --directive
// arguments):
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
// are split with redisutil.SplitArgs. fn gets the 1-based line number and the arguments
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
			args, err := redisutil.SplitArgs(line)
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
