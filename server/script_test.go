package server

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/vigil-kv/vigil/configs"
	"github.com/vigil-kv/vigil/internal/clock"
	"github.com/vigil-kv/vigil/internal/redisutil"
	"github.com/vigil-kv/vigil/internal/resp"
)

var updateGolden = flag.Bool("update", false, "rewrite golden script expectations")

// testServer is a server with a fake clock and no listener; clients are
// driven directly through call().
type testServer struct {
	s   *Server
	clk *clock.Fake
}

func newTestServer(t testing.TB, directives ...string) *testServer {
	t.Helper()
	return newTestServerLog(t, zerolog.Nop(), directives...)
}

// newTestServerLog is newTestServer logging to log.
func newTestServerLog(t testing.TB, log zerolog.Logger, directives ...string) *testServer {
	t.Helper()
	// persist: dump.rdb (SAVE, the shutdown save) goes to a temp dir.
	directives = append([]string{"--dir", t.TempDir()}, directives...)
	cfg, err := configs.Load(configs.LoadOptions{Args: directives})
	if err != nil {
		t.Fatal(err)
	}
	clk := clock.NewFake(time.Unix(1700000000, 0))
	s, err := New(cfg, log, WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	return &testServer{s: s, clk: clk}
}

// client returns a client attached to the server (not listening).
func (ts *testServer) client() *Client {
	a, b := net.Pipe()
	go func() { // drain async output
		buf := make([]byte, 4096)
		for {
			if _, err := b.Read(buf); err != nil {
				return
			}
		}
	}()
	c := &Client{srv: ts.s, conn: a, id: ts.s.nextID.Add(1), addr: "127.0.0.1:50000", laddr: "127.0.0.1:6379", created: ts.clk.Now(), user: "default"}
	c.w.Proto = 2
	c.authed = ts.s.cfg.RequirePass == ""
	ts.s.clientsMu.Lock()
	ts.s.clients[c.id] = c
	ts.s.clientsMu.Unlock()
	return c
}

// do runs one command and returns its raw reply.
func (ts *testServer) do(c *Client, args ...string) string {
	argv := make([][]byte, len(args))
	for i, a := range args {
		argv[i] = []byte(a)
	}
	ts.s.mu.Lock()
	c.w.B = c.w.B[:0]
	// As runBatchPart: c is the running client, and the BCAST
	// invalidations go out after its batch (tracking.go).
	ts.s.current = c
	ts.s.process(c, argv)
	if ts.s.tracking.bcastDirty {
		ts.s.trackingBroadcast()
	}
	ts.s.current = nil
	out := string(c.w.B)
	ts.s.mu.Unlock()
	return out
}

// render turns a raw reply into the one-line form used in scripts.
func render(raw string) (string, error) {
	br := bufio.NewReader(strings.NewReader(raw))
	var parts []string
	for {
		v, err := resp.ReadValue(br, resp.DefaultReplyLimits)
		if err != nil {
			if br.Buffered() == 0 && len(parts) > 0 {
				break
			}
			if len(parts) == 0 && raw == "" {
				return "(no reply)", nil
			}
			return "", fmt.Errorf("bad reply %q: %v", raw, err)
		}
		parts = append(parts, renderValue(v))
		if br.Buffered() == 0 {
			break
		}
	}
	return strings.Join(parts, " ;; "), nil
}

func renderValue(v resp.Value) string {
	switch v.Kind {
	case resp.KindSimple:
		return "+" + v.Str
	case resp.KindError:
		return "-" + v.Str
	case resp.KindInt:
		return "(integer) " + strconv.FormatInt(v.Int, 10)
	case resp.KindBulk:
		return strconv.Quote(v.Str)
	case resp.KindNull:
		return "(nil)"
	case resp.KindDouble:
		return "(double) " + v.Str
	case resp.KindBool:
		return "(bool) " + strconv.FormatInt(v.Int, 10)
	case resp.KindVerbatim:
		return "(verbatim) " + strconv.Quote(v.Str)
	case resp.KindBigNum:
		return "(bignum) " + v.Str
	}
	prefix := map[resp.Kind]string{resp.KindArray: "[", resp.KindMap: "%{", resp.KindSet: "~{", resp.KindPush: ">["}[v.Kind]
	closing := map[resp.Kind]string{resp.KindArray: "]", resp.KindMap: "}", resp.KindSet: "}", resp.KindPush: "]"}[v.Kind]
	parts := make([]string, len(v.Elems))
	for i, e := range v.Elems {
		parts[i] = renderValue(e)
	}
	return prefix + strings.Join(parts, ", ") + closing
}

// TestScripts runs testdata/scripts/*.txt. Format, one item per line:
//
//	# comment
//	> COMMAND arg "quoted arg"     run on the current client; the next line is the expected reply
//	~ regexp                       (instead of an exact reply line) the reply must match
//	!advance 1500ms                move the fake clock
//	!client name                   switch to (creating) another client
//	!config directive value ...    start-up directives, only before the first command
//
// Run with -update to rewrite the expected lines.
func TestScripts(t *testing.T) {
	files, _ := filepath.Glob("testdata/scripts/*.txt")
	if len(files) == 0 {
		t.Fatal("no scripts")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) { runScript(t, f) })
	}
}

func runScript(t *testing.T, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	var directives []string
	var ts *testServer
	clients := map[string]*Client{}
	cur := "main"
	var out bytes.Buffer
	changed := false
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		out.WriteString(line)
		if i < len(lines)-1 {
			out.WriteByte('\n')
		}
		switch {
		case strings.HasPrefix(line, "!config "):
			args, err := redisutil.SplitArgs(strings.TrimPrefix(line, "!config "))
			if err != nil || len(args) == 0 {
				t.Fatalf("%s:%d: bad !config", path, i+1)
			}
			directives = append(directives, "--"+args[0])
			directives = append(directives, args[1:]...)
			continue
		}
		if ts == nil && (strings.HasPrefix(line, ">") || strings.HasPrefix(line, "!")) {
			// As the oracle (testutil.StartRedis): no save points unless
			// the script's !config sets them.
			ts = newTestServer(t, append([]string{"--save", ""}, directives...)...)
		}
		switch {
		case strings.HasPrefix(line, "!advance "):
			d, err := time.ParseDuration(strings.TrimSpace(strings.TrimPrefix(line, "!advance ")))
			if err != nil {
				t.Fatalf("%s:%d: %v", path, i+1, err)
			}
			ts.clk.Advance(d)
		case strings.HasPrefix(line, "!client "):
			cur = strings.TrimSpace(strings.TrimPrefix(line, "!client "))
		case strings.HasPrefix(line, "> "):
			args, err := redisutil.SplitArgs(line[2:])
			if err != nil {
				t.Fatalf("%s:%d: %v", path, i+1, err)
			}
			c := clients[cur]
			if c == nil {
				c = ts.client()
				clients[cur] = c
			}
			got, err := render(ts.do(c, args...))
			if err != nil {
				t.Fatalf("%s:%d: %v", path, i+1, err)
			}
			if i+1 >= len(lines) {
				t.Fatalf("%s:%d: command without expected reply", path, i+1)
			}
			want := lines[i+1]
			ok := got == want
			if strings.HasPrefix(want, "~ ") {
				ok = matchRegexp(strings.TrimPrefix(want, "~ "), got)
			}
			if !ok {
				if *updateGolden && !strings.HasPrefix(want, "~ ") {
					changed = true
					want = got
				} else {
					t.Errorf("%s:%d: %s\n got: %s\nwant: %s", path, i+1, line, got, want)
				}
			}
			i++
			out.WriteString(want)
			if i < len(lines)-1 {
				out.WriteByte('\n')
			}
		}
	}
	if changed {
		os.WriteFile(path, out.Bytes(), 0o644)
	}
}
