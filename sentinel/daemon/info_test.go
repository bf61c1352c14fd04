package daemon

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/resp"
)

// infoLayout reduces an INFO reply to its section headers and field names,
// in order (masterN lines of the Sentinel section left out).
func infoLayout(info string) []string {
	var out []string
	for _, l := range strings.Split(strings.ReplaceAll(info, "\r\n", "\n"), "\n") {
		switch {
		case l == "", strings.HasPrefix(l, "$"):
		case strings.HasPrefix(l, "#"):
			out = append(out, l)
		default:
			name, _, _ := strings.Cut(l, ":")
			if regexp.MustCompile(`^master\d+$`).MatchString(name) {
				continue
			}
			out = append(out, name)
		}
	}
	return out
}

// infoConn is a one-connection client of a sentinel's port.
type infoConn struct {
	t  *testing.T
	c  net.Conn
	br *bufio.Reader
}

func dialInfo(t *testing.T, port int) *infoConn {
	t.Helper()
	c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &infoConn{t: t, c: c, br: bufio.NewReader(c)}
}

// do sends one command and returns the raw reply.
func (ic *infoConn) do(args ...string) string {
	ic.t.Helper()
	ic.c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := ic.c.Write(resp.AppendCommandStrings(nil, args...)); err != nil {
		ic.t.Fatal(err)
	}
	b, err := readFrame(ic.br)
	if err != nil {
		ic.t.Fatal(err)
	}
	return string(b)
}

// field returns the value of name in an INFO reply.
func field(info, name string) string {
	m := regexp.MustCompile(`(?m)^` + name + `:(.*)\r$`).FindStringSubmatch(info)
	if m == nil {
		return "<missing>"
	}
	return m[1]
}

// TestInfoLayout checks that INFO, with every argument form, has the
// sections and fields of redis-sentinel 7.0.15 in its order
// (testdata/info_fields.txt), and the live binary's when it is installed.
func TestInfoLayout(t *testing.T) {
	data, err := os.ReadFile("testdata/info_fields.txt")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, l := range strings.Split(string(data), "\n") {
		if l != "" && !strings.HasPrefix(l, "# INFO") && !strings.HasPrefix(l, "# one master") {
			want = append(want, l)
		}
	}
	port, _ := startSentinel(t, fmt.Sprintf("sentinel monitor mym 127.0.0.1 %d 2\n", freePort(t)))
	ic := dialInfo(t, port)
	check := func(ic *infoConn, who string, want []string) {
		t.Helper()
		bySection := map[string][]string{}
		var sec string
		for _, f := range want {
			if strings.HasPrefix(f, "# ") {
				sec = strings.ToLower(f[2:])
			}
			bySection[sec] = append(bySection[sec], f)
		}
		for _, args := range [][]string{{"INFO"}, {"INFO", "default"}, {"INFO", "all"}, {"INFO", "everything"},
			{"INFO", "ALL", "memory"}, {"INFO", "sentinel", "cpu", "stats", "clients", "server"}} {
			if got := infoLayout(ic.do(args...)); strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("%s %v:\n got %v\nwant %v", who, args, got, want)
			}
		}
		for sec, fields := range bySection {
			if got := infoLayout(ic.do("INFO", strings.ToUpper(sec))); strings.Join(got, " ") != strings.Join(fields, " ") {
				t.Errorf("%s INFO %s:\n got %v\nwant %v", who, sec, got, fields)
			}
		}
		for _, sec := range []string{"memory", "replication", "commandstats", "keyspace", "nope"} {
			if got := ic.do("INFO", sec); got != "$0\r\n\r\n" {
				t.Errorf("%s INFO %s: %q, want an empty bulk", who, sec, got)
			}
		}
	}
	check(ic, "vigil", want)

	// The same against the real thing, when installed.
	if _, err := os.Stat("/usr/bin/redis-sentinel"); err != nil {
		return
	}
	rport := freePort(t)
	dir := t.TempDir()
	conf := filepath.Join(dir, "sentinel.conf")
	os.WriteFile(conf, []byte(fmt.Sprintf("port %d\nbind 127.0.0.1\nsentinel monitor mym 127.0.0.1 %d 2\n", rport, freePort(t))), 0o644)
	cmd := exec.Command("/usr/bin/redis-sentinel", conf)
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	var rc net.Conn
	waitFor(t, 10*time.Second, "redis-sentinel listening", func() bool {
		rc, err = net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(rport))
		return err == nil
	})
	rc.Close()
	check(dialInfo(t, rport), "redis-sentinel", want)
}

// TestInfoCounters replays a sequence on a fresh sentinel and checks the
// Stats figures redis-sentinel 7.0.15 gave for it (recorded): commands are
// counted after they run, rejected ones (unknown command, unknown
// subcommand) never, every error reply is, and so are the bytes and reads.
func TestInfoCounters(t *testing.T) {
	port, d := startSentinel(t, "")
	ic := dialInfo(t, port)
	first := ic.do("INFO", "stats")
	for name, want := range map[string]string{
		"total_connections_received": "1", "total_commands_processed": "0",
		"total_net_input_bytes": "25", "total_net_output_bytes": "0", "total_reads_processed": "1",
		"total_writes_processed": "0", "total_error_replies": "0", "rejected_connections": "0",
	} {
		if got := field(first, name); got != want {
			t.Errorf("first INFO stats: %s:%s, want %s", name, got, want)
		}
	}
	ic.do("NOPE")
	ic.do("PING")
	ic.do("SENTINEL", "foo")
	ic.do("AUTH", "x")
	info := ic.do("INFO", "stats")
	for name, want := range map[string]string{
		"total_connections_received": "1", "total_commands_processed": "3", "total_net_input_bytes": "126",
		"total_error_replies": "3", "total_reads_processed": "6", "total_writes_processed": "5",
		"unexpected_error_replies": "0",
	} {
		if got := field(info, name); got != want {
			t.Errorf("%s:%s, want %s", name, got, want)
		}
	}
	if n, _ := strconv.Atoi(field(info, "total_net_output_bytes")); n < len(first) {
		t.Errorf("total_net_output_bytes:%d, want at least the first reply's %d", n, len(first))
	}
	// hz is sentinelTimer's random 10..19, configured_hz the directive.
	srv := ic.do("INFO", "server")
	if hz, _ := strconv.Atoi(field(srv, "hz")); hz < 10 || hz > 19 {
		t.Errorf("hz:%s, want 10..19", field(srv, "hz"))
	}
	if got := field(srv, "configured_hz"); got != "10" {
		t.Errorf("configured_hz:%s, want 10", got)
	}
	// instantaneous_ops_per_sec follows from the tick's samples.
	waitFor(t, 10*time.Second, "instantaneous_ops_per_sec > 0", func() bool {
		ic.do("PING")
		return d.stats.instantaneous(metricCommand) > 0 && field(ic.do("INFO", "stats"), "instantaneous_ops_per_sec") != "0"
	})
}

// TestInstantaneousMetric is trackInstantaneousMetric and
// getInstantaneousMetric: per-second rates of the last 16 samples, averaged.
func TestInstantaneousMetric(t *testing.T) {
	var s serverStats
	now := int64(1_000_000)
	s.start(now)
	now += 100
	s.sample(now, 0)
	var cmds int64
	for i := 0; i < 8; i++ { // 10 commands every 100 ms: 100/s for half the window
		now += 100
		cmds += 10
		s.netIn.Add(2048)
		s.sample(now, cmds)
	}
	if got := s.instantaneous(metricCommand); got != 50 {
		t.Errorf("ops/sec after 8 of 16 samples at 100/s: %d, want 50", got)
	}
	for i := 0; i < 16; i++ {
		now += 100
		cmds += 10
		s.netIn.Add(2048)
		s.sample(now, cmds)
	}
	if got := s.instantaneous(metricCommand); got != 100 {
		t.Errorf("ops/sec: %d, want 100", got)
	}
	if got := s.instantaneous(metricNetInput); got != 20480 {
		t.Errorf("input bytes/sec: %d, want 20480", got)
	}
	if got := s.instantaneous(metricNetOutput); got != 0 {
		t.Errorf("output bytes/sec: %d, want 0", got)
	}
	s.sample(now, cmds) // same ms: a zero sample, as Redis (t == 0)
	if got := s.instantaneous(metricCommand); got != 93 {
		t.Errorf("ops/sec after a zero-interval sample: %d, want 93", got)
	}
}
