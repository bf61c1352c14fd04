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
