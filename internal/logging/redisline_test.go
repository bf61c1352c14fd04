package logging

import (
	"bytes"
	"errors"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// redisLine is the shape of redis-server 7.0's log lines (serverLogRaw):
// pid:role dd Mon yyyy hh:mm:ss.mmm <level-char> message.
var redisLine = regexp.MustCompile(`^(\d+):([XCSM]) (\d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d\.\d{3}) ([.*#-]) (.*)$`)

func TestRedisLines(t *testing.T) {
	var buf bytes.Buffer
	out, err := Open("", &buf)
	if err != nil {
		t.Fatal(err)
	}
	log := New(out, "debug", "server")
	out.SetRole(func() byte { return 'S' })
	log.Warn().Msg("Server initialized")
	log.Info().Msg("Ready to accept connections")
	log.Debug().Str("addr", "127.0.0.1:5000").Int64("id", 7).Msg("Client closed connection")
	log.Error().Err(errors.New("disk full")).Str("file", "/tmp/a b").Msg("Can't save")
	log.Info().Str("event", "+sdown").Msg("+sdown master mymaster 127.0.0.1 6379")
	log.Trace().Msg("a debug line") // Redis's debug is zerolog's trace
	log.Info().Bool("logo", true).Msg("\n  the logo\n\n")

	pid := strconv.Itoa(os.Getpid())
	want := []struct{ level, msg string }{
		{"#", "Server initialized"},
		{"*", "Ready to accept connections"},
		{"-", "Client closed connection addr=127.0.0.1:5000 id=7"},
		{"#", `Can't save error="disk full" file="/tmp/a b"`},
		{"*", "+sdown master mymaster 127.0.0.1 6379"},
		{".", "a debug line"},
	}
	text := buf.String()
	if !strings.HasSuffix(text, "\n  the logo\n\n") {
		t.Errorf("the logo is not raw text at the end:\n%q", text)
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n  the logo\n\n"), "\n")
	if len(lines) != len(want)+1 || lines[len(want)] != "" {
		t.Fatalf("got %d lines, want %d:\n%s", len(lines)-1, len(want), text)
	}
	for i, w := range want {
		m := redisLine.FindStringSubmatch(lines[i])
		if m == nil {
			t.Errorf("line %q is not redis-server's shape", lines[i])
			continue
		}
		if m[1] != pid || m[2] != "S" || m[4] != w.level || m[5] != w.msg {
			t.Errorf("line %q: pid %s role %s level %s message %q; want %s S %s %q", lines[i], m[1], m[2], m[4], m[5], pid, w.level, w.msg)
		}
	}

	// log-format json, at once for the same logger.
	buf.Reset()
	out.SetFormat(FormatJSON)
	log.Info().Msg("now JSON")
	if s := buf.String(); !strings.HasPrefix(s, "{") || !strings.Contains(s, `"message":"now JSON"`) || !strings.Contains(s, `"component":"server"`) {
		t.Errorf("log-format json wrote %q", s)
	}
	buf.Reset()
	out.SetFormat(FormatRedis)
	log.Info().Msg("back")
	if !redisLine.MatchString(strings.TrimSuffix(buf.String(), "\n")) {
		t.Errorf("log-format redis wrote %q", buf.String())
	}
}

// TestRedisLineDefaults: sentinel's role is X; time and level are the
// event's; a trace event is Redis's debug (.); what is not an object passes.
func TestRedisLineDefaults(t *testing.T) {
	var buf bytes.Buffer
	out, _ := Open("", &buf)
	slog := New(out, "notice", "sentinel")
	slog.Warn().Msg("Sentinel ID is abc")
	if m := redisLine.FindStringSubmatch(strings.TrimSuffix(buf.String(), "\n")); m == nil || m[2] != "X" || m[4] != "#" {
		t.Errorf("sentinel line %q, want role X level #", buf.String())
	}
	ev := `{"level":"trace","time":"2026-11-29T22:47:02.134Z","component":"server","message":"m","n":1.5,"o":{"a":[1]},"e":""}`
	got := string(AppendRedisLine(nil, []byte(ev+"\n"), 42, 'M'))
	m := redisLine.FindStringSubmatch(strings.TrimSuffix(got, "\n"))
	if m == nil || m[1] != "42" || m[4] != "." || m[5] != `m n=1.5 o={"a":[1]} e=""` {
		t.Errorf("AppendRedisLine = %q", got)
	}
	// The event's time, in local time, as Redis's localtime.
	if m != nil && !strings.HasSuffix(m[3], ":02.134") {
		t.Errorf("time %q, want the event's seconds and milliseconds", m[3])
	}
	if got := string(AppendRedisLine(nil, []byte("not json\n"), 1, 'M')); got != "not json\n" {
		t.Errorf("non-JSON %q", got)
	}
}

// TestRedisLineChildPid: a line a save child logs carries the child's pid
// and role C (serverLogRaw in a fork child: `pid:C`), whatever the
// server's role; in JSON the pid is the child_pid field.
func TestRedisLineChildPid(t *testing.T) {
	var buf bytes.Buffer
	out, _ := Open("", &buf)
	log := New(out, "notice", "server")
	out.SetRole(func() byte { return 'S' })
	log.Info().Int(ChildPidField, 4242).Msg("DB saved on disk")
	m := redisLine.FindStringSubmatch(strings.TrimSuffix(buf.String(), "\n"))
	if m == nil || m[1] != "4242" || m[2] != "C" || m[4] != "*" || m[5] != "DB saved on disk" {
		t.Errorf("child line %q, want 4242:C ... * DB saved on disk", buf.String())
	}
	buf.Reset()
	out.SetFormat(FormatJSON)
	log.Info().Int(ChildPidField, 4242).Msg("DB saved on disk")
	if s := buf.String(); !strings.Contains(s, `"child_pid":4242`) {
		t.Errorf("JSON child line %q", s)
	}
}

// TestSignalHandlerLine: the shutdown signal lines are serverLogFromHandler's
// "pid:signal-handler (unixtime) message", for the server and the sentinel
// alike, with no level character nor fields.
func TestSignalHandlerLine(t *testing.T) {
	for _, comp := range []string{"server", "sentinel"} {
		var buf bytes.Buffer
		out, _ := Open("", &buf)
		log := New(out, "notice", comp)
		FromHandler(log.Warn()).Msg("Received SIGTERM scheduling shutdown...")
		want := regexp.MustCompile(`^` + strconv.Itoa(os.Getpid()) + `:signal-handler \(\d+\) Received SIGTERM scheduling shutdown\.\.\.\n$`)
		if !want.MatchString(buf.String()) {
			t.Errorf("%s: %q, want serverLogFromHandler's line", comp, buf.String())
		}
	}
	ev := `{"level":"warn","time":"2026-11-29T22:47:02.134Z","component":"sentinel","signal_handler":true,"message":"Received SIGINT scheduling shutdown..."}`
	if got, want := string(AppendRedisLine(nil, []byte(ev+"\n"), 42, 'X')), "42:signal-handler (1795992422) Received SIGINT scheduling shutdown...\n"; got != want {
		t.Errorf("AppendRedisLine = %q, want %q", got, want)
	}
}
