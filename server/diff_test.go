package server

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/redisutil"
	"github.com/vigil-kv/vigil/internal/resp"
	"github.com/vigil-kv/vigil/internal/testutil"
)

// TestDifferential replays every golden script (testdata/scripts/*.txt) on a
// real redis-server 7.0.15 and checks each reply against the script's
// expected line: an exact line must be Redis's reply byte for byte, a "~"
// line's regexp must match Redis's reply too. So the golden files, which
// TestScripts checks against Vigil, are Redis's answers.
//
//   - "!config" directives become redis-server start-up flags, "!client
//     name" another connection, as in TestScripts.
//   - "!advance" moves Vigil's fake clock and cannot be replayed on a real
//     server: the comparison of that script stops there (keep timing-free
//     cases before the first "!advance").
//   - A line after a "# differs:" comment is a documented deviation from
//     Redis: it is not compared (the test logs it, and logs when it has
//     started to match).
//
// Set VIGIL_DIFF_ONLY=name.txt to replay one script. To write a new case,
// put the command and a placeholder reply in a script and run with
// VIGIL_DIFF_RECORD=1: exact expected lines that differ from Redis (outside
// "# differs:") are rewritten with Redis's replies; then run TestScripts
// to see whether Vigil agrees.
func TestDifferential(t *testing.T) {
	testutil.NeedRedis(t)
	if testing.Short() {
		t.Skip("starts redis-server processes")
	}
	files, _ := filepath.Glob("testdata/scripts/*.txt")
	if only := os.Getenv("VIGIL_DIFF_ONLY"); only != "" {
		files = []string{filepath.Join("testdata/scripts", only)}
	}
	if len(files) == 0 {
		t.Fatal("no scripts")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			diffScript(t, f)
		})
	}
}

// diffConn is one connection to the oracle.
type diffConn struct {
	c      net.Conn
	br     *bufio.Reader
	closed bool
}

func diffScript(t *testing.T, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	var directives []string
	for i, l := range lines {
		if strings.HasPrefix(l, "!config ") {
			args, err := redisutil.SplitArgs(strings.TrimPrefix(l, "!config "))
			if err != nil || len(args) == 0 {
				t.Fatalf("%s:%d: bad !config", path, i+1)
			}
			directives = append(directives, "--"+args[0])
			directives = append(directives, args[1:]...)
		}
	}
	sock := startRedisOracle(t, directives)

	conns := map[string]*diffConn{}
	t.Cleanup(func() {
		for _, cn := range conns {
			cn.c.Close()
		}
	})
	cur := "main"
	differs := false
	compared := 0
	record := os.Getenv("VIGIL_DIFF_RECORD") != ""
	changed := false
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		switch {
		case strings.HasPrefix(line, "# differs:"):
			differs = true
		case strings.HasPrefix(line, "!advance "):
			rest := 0
			for _, l := range lines[i:] {
				if strings.HasPrefix(l, "> ") {
					rest++
				}
			}
			t.Logf("%s:%d: !advance moves the fake clock: %d later commands not compared with Redis", path, i+1, rest)
			i = len(lines)
		case strings.HasPrefix(line, "!client "):
			cur = strings.TrimSpace(strings.TrimPrefix(line, "!client "))
		case strings.HasPrefix(line, "> "):
			args, err := redisutil.SplitArgs(line[2:])
			if err != nil {
				t.Fatalf("%s:%d: %v", path, i+1, err)
			}
			if i+1 >= len(lines) {
				t.Fatalf("%s:%d: command without expected reply", path, i+1)
			}
			want := lines[i+1]
			i++
			cn := conns[cur]
			if cn == nil {
				cn = dialOracle(t, sock)
				conns[cur] = cn
			}
			got := cn.do(args, expectedReplies(want))
			ok := got == want
			if strings.HasPrefix(want, "~ ") {
				ok = matchRegexp(strings.TrimPrefix(want, "~ "), got)
			}
			if !ok && ttlElapsed(args, want, got) {
				ok = true // the real clock moved between the commands
			}
			switch {
			case record && !ok && !differs && !strings.HasPrefix(want, "~ "):
				t.Logf("%s:%d: recorded Redis's reply for %s\n   old: %s\n   new: %s", path, i, line, want, got)
				lines[i] = got
				changed = true
			case differs && ok:
				t.Logf("%s:%d: marked \"# differs:\" but matches Redis: %s", path, i, line)
			case differs:
				t.Logf("%s:%d: known difference: %s\n redis: %s\n vigil: %s", path, i, line, got, want)
			case !ok:
				t.Errorf("%s:%d: %s\n redis: %s\nscript: %s", path, i, line, got, want)
			default:
				compared++
			}
			differs = false
		}
	}
	t.Logf("%s: %d replies identical to Redis", path, compared)
	if changed {
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// ttlElapsed reports whether got is a TTL/PTTL reply that differs from
// the expected one only by the time a real clock spends between commands
// (Vigil's scripts run on a fake clock that stands still): at most one
// second less for TTL, 1000 ms less for PTTL.
func ttlElapsed(args []string, want, got string) bool {
	if len(args) == 0 || !strings.HasPrefix(want, "(integer) ") || !strings.HasPrefix(got, "(integer) ") {
		return false
	}
	w, err1 := strconv.ParseInt(strings.TrimPrefix(want, "(integer) "), 10, 64)
	g, err2 := strconv.ParseInt(strings.TrimPrefix(got, "(integer) "), 10, 64)
	if err1 != nil || err2 != nil || w <= 0 || g < 0 {
		return false
	}
	switch strings.ToLower(args[0]) {
	case "ttl":
		return w-g >= 0 && w-g <= 1
	case "pttl":
		return w-g >= 0 && w-g <= 1000
	}
	return false
}

// expectedReplies is how many replies the expected line stands for:
// "(no reply)" none, otherwise one per " ;; "-separated part.
func expectedReplies(want string) int {
	if want == "(no reply)" {
		return 0
	}
	return strings.Count(want, " ;; ") + 1
}

// do sends one command, reads n replies (more if they are already
// buffered) and renders them like TestScripts. A command expected to get no
// reply is not waited for: a stray reply shows up as a mismatch of the next
// command on the connection.
func (cn *diffConn) do(args []string, n int) string {
	if cn.closed {
		return "(closed)"
	}
	if _, err := cn.c.Write(resp.AppendCommandStrings(nil, args...)); err != nil {
		cn.closed = true
		return "(closed)"
	}
	var parts []string
	for len(parts) < n || cn.br.Buffered() > 0 {
		cn.c.SetReadDeadline(time.Now().Add(10 * time.Second))
		v, err := resp.ReadValue(cn.br, resp.DefaultReplyLimits)
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || isConnReset(err) {
				cn.closed = true
				if len(parts) == 0 {
					return "(closed)"
				}
				break
			}
			parts = append(parts, fmt.Sprintf("(read error: %v)", err))
			break
		}
		parts = append(parts, renderValue(v))
	}
	if len(parts) == 0 {
		return "(no reply)"
	}
	return strings.Join(parts, " ;; ")
}

func isConnReset(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe) && !oe.Timeout()
}
