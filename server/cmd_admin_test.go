package server

import (
	"bufio"
	"net"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/resp"
)

// TestMonitor: a MONITOR client gets +OK, then one status line per command
// other clients run (admin commands excepted), in Redis's format.
func TestMonitor(t *testing.T) {
	l := startLive(t)
	m, c := l.dial(t), l.dial(t)
	if got := m.do("MONITOR"); got != "+OK" {
		t.Fatalf("MONITOR: %s", got)
	}
	c.do("SET", "k", "a \"b\"\n\x01")
	c.do("CONFIG", "GET", "maxclients") // admin: not fed
	c.do("SELECT", "3")
	c.do("GET", "k")
	prefix := `^\+\d{10}\.\d{6} \[`
	sock := regexp.QuoteMeta("unix:" + l.sock)
	for _, want := range []string{
		prefix + `0 ` + sock + `\] "SET" "k" "a \\"b\\"\\n\\x01"$`,
		prefix + `3 ` + sock + `\] "SELECT" "3"$`, // fed after the command, as Redis
		prefix + `3 ` + sock + `\] "GET" "k"$`,
	} {
		if got := m.read(); !regexp.MustCompile(want).MatchString(got) {
			t.Errorf("monitor line %s\nwant %s", got, want)
		}
	}
	// The monitor itself still runs commands.
	if got := m.do("PING"); got != "+PONG" {
		t.Fatalf("PING from the monitor: %s", got)
	}
}

// TestShutdown: SHUTDOWN gets no reply; the server stops and the
// connection closes. A SHUTDOWN SAVE whose save fails (dir removed)
// replies an error and the server keeps running.
func TestShutdown(t *testing.T) {
	l := startLive(t)
	c, other := l.dial(t), l.dial(t)
	l.s.mu.Lock()
	l.s.cfg.Dir = filepath.Join(t.TempDir(), "gone") // persist: the save fails
	l.s.mu.Unlock()
	if got := c.do("SHUTDOWN", "SAVE"); got != "-"+ErrShutdownFailed {
		t.Fatalf("SHUTDOWN SAVE: %s", got)
	}
	if got := c.do("SHUTDOWN", "ABORT"); got != "-"+ErrNoShutdown {
		t.Fatalf("SHUTDOWN ABORT: %s", got)
	}
	c.send("SHUTDOWN", "NOSAVE")
	select {
	case err := <-l.done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		l.done <- nil // for the cleanup
	case <-time.After(5 * time.Second):
		t.Fatal("server still running after SHUTDOWN")
	}
	if !c.closed() {
		t.Error("the SHUTDOWN connection got a reply or stayed open")
	}
	if !other.closed() {
		t.Error("another connection stayed open")
	}
	if _, err := net.Dial("unix", l.sock); err == nil {
		t.Error("still accepting connections")
	}
}

func TestHistogramBuckets(t *testing.T) {
	// The bucket labels redis-server 7.0 prints in LATENCY HISTOGRAM.
	want := []int64{1, 2, 4, 8, 16, 33, 66, 132, 264, 528, 1056, 2113}
	for k, w := range want {
		if got := bucketMicros(k); got != w && !(k == 9 && got == 528) {
			t.Errorf("bucket %d: %d µs, want %d", k, got, w)
		}
	}
	if got := bucketMicros(18); got != 270532 {
		t.Errorf("bucket 18: %d", got)
	}
	for ns, k := range map[int64]int{0: 0, 1024: 0, 1025: 1, 2048: 1, 2049: 2, 1 << 30: 20} {
		if got := histBucket(ns); got != k {
			t.Errorf("histBucket(%d) = %d, want %d", ns, got, k)
		}
	}
	var h cmdHistogram
	for i := 0; i < 99; i++ {
		h.add(1000)
	}
	h.add(1 << 20)
	if p50, p99, p100 := h.percentile(50), h.percentile(99), h.percentile(100); p50 != 1.031 || p99 != 1.031 || p100 != 1056.767 {
		t.Errorf("percentiles %v %v %v", p50, p99, p100)
	}
}

// TestSparkline reproduces redis-server 7.0's LATENCY GRAPH for two samples
// (200 ms 1 s ago, 300 ms now).
func TestSparkline(t *testing.T) {
	got := sparklineRender([]sparkSample{{200, "1s"}, {300, "0s"}}, 80, 4)
	want := " #\n |\n |\n_|\n  \n10\nss\n"
	if got != want {
		t.Errorf("sparkline:\n%q\nwant\n%q", got, want)
	}
}

// TestLatencyMonitor: with latency-monitor-threshold set, slow commands
// are recorded once per second with the maximum.
func TestLatencyMonitor(t *testing.T) {
	ts := newTestServer(t, "--enable-debug-command", "yes", "--latency-monitor-threshold", "5")
	c := ts.client()
	ts.do(c, "DEBUG", "SLEEP", "0.01")
	ts.do(c, "DEBUG", "SLEEP", "0.02") // same second: the max is kept
	ts.clk.Advance(2 * time.Second)
	ts.do(c, "DEBUG", "SLEEP", "0.01")
	got, _ := render(ts.do(c, "LATENCY", "LATEST"))
	if !regexp.MustCompile(`^\[\["command", \(integer\) 1700000002, \(integer\) 1\d, \(integer\) [2-9]\d\]\]$`).MatchString(got) {
		t.Errorf("LATENCY LATEST: %s", got)
	}
	got, _ = render(ts.do(c, "LATENCY", "HISTORY", "command"))
	if !regexp.MustCompile(`^\[\[\(integer\) 1700000000, \(integer\) [2-9]\d\], \[\(integer\) 1700000002, \(integer\) 1\d\]\]$`).MatchString(got) {
		t.Errorf("LATENCY HISTORY: %s", got)
	}
	got, _ = render(ts.do(c, "LATENCY", "DOCTOR"))
	if !strings.Contains(got, `1. command: 2 latency spikes (average `) || !strings.Contains(got, "I have a few advices for you") {
		t.Errorf("LATENCY DOCTOR: %s", got)
	}
	got, _ = render(ts.do(c, "LATENCY", "GRAPH", "command"))
	if !regexp.MustCompile(`^"command - high \d+ ms, low \d+ ms \(all time high \d+ ms\)\\n-{80}\\n`).MatchString(got) {
		t.Errorf("LATENCY GRAPH: %s", got)
	}
	if got := ts.do(c, "LATENCY", "RESET"); got != ":1\r\n" {
		t.Errorf("LATENCY RESET: %q", got)
	}
	if got := ts.do(c, "LATENCY", "LATEST"); got != "*0\r\n" {
		t.Errorf("LATENCY LATEST after RESET: %q", got)
	}
}

// TestDebugLocal: enable-debug-command local admits loopback and unix
// clients only.
func TestDebugLocal(t *testing.T) {
	ts := newTestServer(t, "--enable-debug-command", "local")
	c := ts.client()
	c.conn = fakeAddrConn{c.conn, &net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 5000}}
	if got := ts.do(c, "DEBUG", "SLEEP", "0"); got != "-"+ErrDebugDisabled+"\r\n" {
		t.Errorf("remote client: %q", got)
	}
	c.conn = fakeAddrConn{c.conn, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5000}}
	if got := ts.do(c, "DEBUG", "SLEEP", "0"); got != "+OK\r\n" {
		t.Errorf("loopback client: %q", got)
	}
}

type fakeAddrConn struct {
	net.Conn
	remote net.Addr
}

func (f fakeAddrConn) RemoteAddr() net.Addr { return f.remote }

// TestActiveExpireSwitch: DEBUG SET-ACTIVE-EXPIRE 0 stops the cron's
// active expiry.
func TestActiveExpireSwitch(t *testing.T) {
	ts := newTestServer(t, "--enable-debug-command", "yes")
	c := ts.client()
	for _, tc := range []struct{ arg, want string }{{"0", "true"}, {"1", "false"}, {"2", "false"}, {"x", "true"}} {
		ts.do(c, "DEBUG", "SET-ACTIVE-EXPIRE", tc.arg)
		if got := strconv.FormatBool(ts.s.adm.noActiveExpire); got != tc.want {
			t.Errorf("SET-ACTIVE-EXPIRE %s: disabled=%s, want %s", tc.arg, got, tc.want)
		}
	}
}

// TestCommandTable checks COMMAND INFO for every command is well formed
// and COMMAND DOCS gives redis-cli what it asserts on.
func TestCommandTable(t *testing.T) {
	ts := newTestServer(t)
	c := ts.client()
	v := readReply(t, ts.do(c, "COMMAND"))
	if len(v.Elems) != len(ts.s.cmds) {
		t.Fatalf("COMMAND: %d entries, want %d", len(v.Elems), len(ts.s.cmds))
	}
	var check func(e resp.Value)
	check = func(e resp.Value) {
		if len(e.Elems) != 10 {
			t.Fatalf("entry of %d elements: %v", len(e.Elems), e)
		}
		name := e.Elems[0].Str
		for i, k := range []resp.Kind{resp.KindBulk, resp.KindInt, resp.KindArray, resp.KindInt, resp.KindInt, resp.KindInt, resp.KindArray, resp.KindArray, resp.KindArray, resp.KindArray} {
			if e.Elems[i].Kind != k {
				t.Errorf("%s: element %d kind %v", name, i, e.Elems[i].Kind)
			}
		}
		if len(e.Elems[6].Elems) == 0 {
			t.Errorf("%s: no ACL categories", name)
		}
		for _, sub := range e.Elems[9].Elems {
			if !strings.HasPrefix(sub.Elems[0].Str, name+"|") {
				t.Errorf("subcommand %s of %s", sub.Elems[0].Str, name)
			}
			check(sub)
		}
	}
	for _, e := range v.Elems {
		check(e)
	}
	docs := readReply(t, ts.do(c, "COMMAND", "DOCS"))
	if len(docs.Elems) != 2*len(ts.s.cmds) {
		t.Fatalf("COMMAND DOCS: %d elements", len(docs.Elems))
	}
	for i := 0; i < len(docs.Elems); i += 2 {
		d := docs.Elems[i+1]
		if d.Kind != resp.KindArray || len(d.Elems)%2 != 0 {
			t.Fatalf("docs of %s: %v", docs.Elems[i].Str, d)
		}
		for j := 0; j < len(d.Elems); j += 2 {
			scalar := map[string]bool{"summary": true, "since": true, "group": true, "complexity": true}
			if d.Elems[j].Kind != resp.KindBulk || (scalar[d.Elems[j].Str] && d.Elems[j+1].Kind != resp.KindBulk) {
				t.Errorf("docs of %s: field %v", docs.Elems[i].Str, d.Elems[j])
			}
		}
	}
	if got := ts.do(c, "COMMAND", "COUNT"); got != ":"+strconv.Itoa(len(ts.s.cmds))+"\r\n" {
		t.Errorf("COMMAND COUNT: %q", got)
	}
}

func readReply(t *testing.T, raw string) resp.Value {
	t.Helper()
	v, err := resp.ReadValue(bufio.NewReader(strings.NewReader(raw)), resp.DefaultReplyLimits)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestAfterCommandAllocs: the per-command accounting stays off the heap
// once a command's histogram exists (the GET/SET hot path).
func TestAfterCommandAllocs(t *testing.T) {
	ts := newTestServer(t, "--latency-monitor-threshold", "100")
	get := ts.s.cmds["get"]
	ts.s.mu.Lock()
	defer ts.s.mu.Unlock()
	ts.s.afterCommand(get, time.Microsecond)
	if n := testing.AllocsPerRun(200, func() { ts.s.afterCommand(get, 3*time.Microsecond) }); n != 0 {
		t.Fatalf("%.1f allocations per command", n)
	}
}
