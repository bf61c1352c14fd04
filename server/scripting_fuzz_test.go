package server

import (
	"strings"
	"testing"
)

// TestScriptEveryCommand runs every command of the table from a script
// (redis.pcall, a few argument shapes): none may panic on the scripting
// client or leave the execution unit open.
func TestScriptEveryCommand(t *testing.T) {
	ts := newTestServer(t)
	c := ts.client()
	initTable()
	for _, cmd := range allCommands {
		if cmd.Has(FlagNoScript) || cmd.FullName() == "shutdown" || cmd.FullName() == "debug" || strings.HasPrefix(cmd.FullName(), "debug|") {
			continue
		}
		name := cmd.FullName()
		var args []string
		if i := strings.IndexByte(name, '|'); i > 0 {
			args = []string{"'" + name[:i] + "'", "'" + name[i+1:] + "'"}
		} else {
			args = []string{"'" + name + "'"}
		}
		for _, extra := range []string{"", ", 'a'", ", 'a', 'b'", ", 'a', '1', 'b'"} {
			body := "return redis.pcall(" + strings.Join(args, ", ") + extra + ")"
			got := ts.do(c, "EVAL", body, "0")
			if strings.Contains(got, "runtime error") || strings.Contains(got, "panic") || got == "" {
				t.Errorf("%s: %q", body, got)
			}
			if ts.s.execDepth != 0 {
				t.Fatalf("%s: execDepth %d", body, ts.s.execDepth)
			}
		}
	}
}
