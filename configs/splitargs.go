package configs

import (
	"bufio"
	"errors"
	"io"
	"strings"

	"github.com/vigil-kv/vigil/internal/redisutil"
)

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
