package servermain

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/testutil"
)

// TestLogLinesAsRedisServer: with the default log-format (redis) every
// line has the shape of redis-server 7.0.15's (serverLogRaw), and the lines
// both write for the same start (no port, nothing to listen on) carry the
// same role and level characters: C before initServer (the startup lines),
// M, or S from a replicaof directive on, # for the warnings.
func TestLogLinesAsRedisServer(t *testing.T) {
	for _, extra := range [][]string{nil, {"--replicaof", "127.0.0.1", "1"}} {
		args := append([]string{"--port", "0", "--save", "", "--dir", t.TempDir()}, extra...)
		code, out, _ := runQuick(t, nil, args...)
		if code != 1 {
			t.Fatalf("%q: exit %d, want 1", args, code)
		}
		vigil := map[string]map[string]any{}
		for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			e := logLine(line)
			if e == nil {
				t.Fatalf("%q: a line not in redis-server's shape: %q\n%s", args, line, out)
			}
			if e["pid"] != strconv.Itoa(os.Getpid()) {
				t.Errorf("%q: pid %v, want %d", args, e["pid"], os.Getpid())
			}
			vigil[e["message"].(string)] = e
		}
		role := "M"
		if extra != nil {
			role = "S"
		}
		want := map[string][2]string{ // role, level
			"oO0OoO0OoO0Oo Redis is starting oO0OoO0OoO0Oo": {"C", "#"},
			"Configuration loaded":                          {"C", "#"},
			"monotonic clock: POSIX clock_gettime":          {role, "*"},
			"Configured to not listen anywhere, exiting.":   {role, "#"},
		}
		if _, err := os.Stat(testutil.RedisBin); err == nil {
			b, _ := exec.Command(testutil.RedisBin, args...).Output()
			for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
				e := logLine(line)
				if e == nil {
					t.Fatalf("redis-server %q: a line not in the shape: %q", args, line)
				}
				if w, ok := want[e["message"].(string)]; ok && (w[0] != e["role"] || w[1] != e["level"]) {
					t.Errorf("redis-server %q: %q is %v %v, the test expects %v", args, e["message"], e["role"], e["level"], w)
				}
			}
		}
		for msg, w := range want {
			e := vigil[msg]
			if e == nil || e["role"] != w[0] || e["level"] != w[1] {
				t.Errorf("%q: %q logged as %v, want role %s level %s\n%s", args, msg, e, w[0], w[1], out)
			}
		}
	}
}

// TestLogFormatJSONAndConfigSet: log-format json logs JSON lines (a
// readable line on a terminal); CONFIG GET shows it, CONFIG SET switches
// at once, and the role character follows REPLICAOF.
func TestLogFormatJSONAndConfigSet(t *testing.T) {
	port := freePort(t)
	conf := writeConf(t, "log-format json\n")
	s := start(t, nil, conf, "--port", strconv.Itoa(port), "--bind", "127.0.0.1")
	s.waitFor(t, "Ready to accept connections")
	for _, line := range strings.Split(strings.TrimSuffix(s.out.String(), "\n"), "\n") {
		var e map[string]any
		if err := json.Unmarshal([]byte(line), &e); err != nil || e["component"] != "server" {
			t.Errorf("not a JSON event of the server: %q (%v)", line, err)
		}
	}
	if got := send(t, port, "CONFIG", "GET", "log-format"); got != "log-format json" {
		t.Errorf("CONFIG GET log-format = %q", got)
	}
	if got := send(t, port, "CONFIG", "SET", "log-format", "xml"); !strings.HasPrefix(got, "ERR ") {
		t.Errorf("CONFIG SET log-format xml = %q, want an error", got)
	}
	if got := send(t, port, "CONFIG", "SET", "log-format", "redis"); got != "OK" {
		t.Fatalf("CONFIG SET log-format redis = %q", got)
	}
	before := len(s.out.String())
	if got := send(t, port, "REPLICAOF", "127.0.0.1", "1"); got != "OK" {
		t.Fatalf("REPLICAOF = %q", got)
	}
	s.waitFor(t, "Connecting to MASTER 127.0.0.1:1")
	if got := send(t, port, "REPLICAOF", "NO", "ONE"); got != "OK" {
		t.Fatalf("REPLICAOF NO ONE = %q", got)
	}
	s.waitFor(t, "MASTER MODE enabled")
	roles := map[string]string{}
	for _, line := range strings.Split(strings.TrimSuffix(s.out.String()[before:], "\n"), "\n") {
		e := logLine(line)
		if e == nil {
			t.Errorf("after CONFIG SET log-format redis, a line not in redis-server's shape: %q", line)
			continue
		}
		msg := e["message"].(string)
		for _, m := range []string{"Connecting to MASTER", "MASTER MODE enabled"} {
			if strings.HasPrefix(msg, m) {
				roles[m] = e["role"].(string)
			}
		}
	}
	// replication.c: replicationSetMaster sets masterhost before it logs;
	// replicaofCommand logs MASTER MODE after replicationUnsetMaster.
	if roles["Connecting to MASTER"] != "S" || roles["MASTER MODE enabled"] != "M" {
		t.Errorf("roles %v, want S then M", roles)
	}
	if got := send(t, port, "CONFIG", "REWRITE"); got != "OK" {
		t.Fatalf("CONFIG REWRITE = %q", got)
	}
	b, _ := os.ReadFile(conf)
	if !strings.Contains(string(b), "\nlog-format redis\n") && !strings.HasPrefix(string(b), "log-format redis\n") {
		t.Errorf("the rewritten config lacks log-format redis:\n%s", b)
	}
}

// TestLogFormatRewriteOmitsDefault: CONFIG REWRITE leaves log-format out
// of a file that does not have it while it is at its default, as every
// directive, and writes it once set.
func TestLogFormatRewriteOmitsDefault(t *testing.T) {
	port := freePort(t)
	conf := writeConf(t, "loglevel notice\n")
	s := start(t, nil, conf, "--port", strconv.Itoa(port), "--bind", "127.0.0.1")
	s.waitFor(t, "Ready to accept connections")
	if got := send(t, port, "CONFIG", "REWRITE"); got != "OK" {
		t.Fatalf("CONFIG REWRITE = %q", got)
	}
	if b, _ := os.ReadFile(conf); strings.Contains(string(b), "log-format") {
		t.Errorf("the rewritten config has log-format at its default:\n%s", b)
	}
	if got := send(t, port, "CONFIG", "SET", "log-format", "json"); got != "OK" {
		t.Fatalf("CONFIG SET = %q", got)
	}
	if got := send(t, port, "CONFIG", "REWRITE"); got != "OK" {
		t.Fatalf("CONFIG REWRITE = %q", got)
	}
	if b, _ := os.ReadFile(conf); !strings.Contains(string(b), "\nlog-format json\n") {
		t.Errorf("the rewritten config lacks log-format json:\n%s", b)
	}
}

// command dials the server on port, sends one command and returns a
// reader of the reply (reads on it time out after 5 s) and the close of
// the connection.
func command(t *testing.T, port int, args ...string) (*bufio.Reader, func()) {
	t.Helper()
	c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), 5*time.Second)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := c.Write([]byte(b.String())); err != nil {
		c.Close()
		t.Fatalf("write: %v", err)
	}
	return bufio.NewReader(c), func() { c.Close() }
}

// send runs one command and returns its reply flattened: a status, an
// error or a bulk as its text, an array as its elements joined by spaces.
func send(t *testing.T, port int, args ...string) string {
	t.Helper()
	r, done := command(t, port, args...)
	defer done()
	var read func() string
	read = func() string {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		line = strings.TrimSuffix(line, "\r\n")
		switch line[0] {
		case '$':
			n, _ := strconv.Atoi(line[1:])
			if n < 0 {
				return ""
			}
			buf := make([]byte, n+2)
			if _, err := io.ReadFull(r, buf); err != nil {
				t.Fatalf("read: %v", err)
			}
			return string(buf[:n])
		case '*':
			n, _ := strconv.Atoi(line[1:])
			var parts []string
			for range n {
				parts = append(parts, read())
			}
			return strings.Join(parts, " ")
		}
		return line[1:]
	}
	return read()
}
