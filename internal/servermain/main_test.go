package servermain

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/vigil-kv/vigil/internal/logging"
	"github.com/vigil-kv/vigil/internal/proctitle"
	"github.com/vigil-kv/vigil/internal/savechild"
	"github.com/vigil-kv/vigil/internal/testutil"
	"github.com/vigil-kv/vigil/server"
)

// TestMain doubles as the vigil-server binary: with VIGIL_SERVER_AS_MAIN=1
// the test binary runs main's run, so tests can exec it and send it real
// signals without building anything.
func TestMain(m *testing.M) {
	if os.Getenv("VIGIL_SERVER_AS_MAIN") == "1" {
		savechild.MaybeRunChild() // as cmd/vigil-server's main
		server.MaybeRunLdbChild()
		proctitle.Init()
		savechild.Enable()
		server.EnableLdbFork()
		os.Exit(Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

func TestSplitArgs(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want invocation
	}{
		{"nothing", nil, invocation{noArgs: true}},
		{"file only", []string{"/etc/redis.conf"}, invocation{configFile: "/etc/redis.conf"}},
		{"file and flags", []string{"/etc/redis.conf", "--port", "7000", "--loglevel", "verbose"},
			invocation{configFile: "/etc/redis.conf", overrides: []string{"--port", "7000", "--loglevel", "verbose"}}},
		{"flags only", []string{"--port", "7000"}, invocation{overrides: []string{"--port", "7000"}}},
		{"stdin alone", []string{"-"}, invocation{stdin: true}},
		{"file, flags and stdin last", []string{"/etc/redis.conf", "--loglevel", "verbose", "-"},
			invocation{configFile: "/etc/redis.conf", stdin: true, overrides: []string{"--loglevel", "verbose"}}},
		{"file then stdin", []string{"/etc/redis.conf", "-"},
			invocation{configFile: "/etc/redis.conf", stdin: true}},
		{"stdin first then flags", []string{"-", "--port", "7000"},
			invocation{stdin: true, overrides: []string{"--port", "7000"}}},
		{"a dash in the middle is a value", []string{"--port", "-", "--bind", "127.0.0.1"},
			invocation{overrides: []string{"--port", "-", "--bind", "127.0.0.1"}}},
		{"directive and value in one argument", []string{"--port 6380"}, invocation{overrides: []string{"--port 6380"}}},
		{"bare --save", []string{"--save", "--port", "7000"}, invocation{overrides: []string{"--save", "--port", "7000"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := splitArgs(tt.args); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("splitArgs(%q)\n got %+v\nwant %+v", tt.args, got, tt.want)
			}
		})
	}
}

// TestFlagsOverrideFileAndStdin checks the layering end to end through
// configs.Load: file, then stdin, then flags.
func TestFlagsOverrideFileAndStdin(t *testing.T) {
	conf := writeConf(t, "port 7001\nloglevel debug\nmaxclients 11\n")
	inv := splitArgs([]string{conf, "--port", "7002", "--save", "-"})
	cfg, err := loadConfig(inv, strings.NewReader("loglevel warning\nport 7003\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Port != 7002 || cfg.LogLevel != "warning" || cfg.MaxClients != 11 {
		t.Errorf("port %d loglevel %q maxclients %d; want 7002 (flag), warning (stdin), 11 (file)", cfg.Port, cfg.LogLevel, cfg.MaxClients)
	}
	if cfg.File != conf {
		t.Errorf("File = %q, want %q", cfg.File, conf)
	}
}

func TestRedisLevel(t *testing.T) {
	for in, want := range map[string]zerolog.Level{
		"debug": zerolog.TraceLevel, "verbose": zerolog.DebugLevel, "notice": zerolog.InfoLevel,
		"warning": zerolog.WarnLevel, "nothing": zerolog.Disabled, "NOTICE": zerolog.InfoLevel,
	} {
		if got := logging.Level(in); got != want {
			t.Errorf("logging.Level(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestVersion(t *testing.T) {
	for _, arg := range []string{"--version", "-v"} {
		code, stdout, stderr := runQuick(t, nil, arg)
		if code != 0 {
			t.Errorf("%s: exit %d, want 0 (stderr %q)", arg, code, stderr)
		}
		if !strings.HasPrefix(stdout, "Redis server v="+redisVersion()+" sha=00000000:0 malloc=go bits=64 build=") {
			t.Errorf("%s: first line %q is not redis-server's", arg, stdout)
		}
		if !strings.Contains(stdout, "\nvigil-server "+version()+"\n") {
			t.Errorf("%s: no vigil-server version line in %q", arg, stdout)
		}
	}
}

func TestHelp(t *testing.T) {
	for _, arg := range []string{"--help", "-h"} {
		code, _, stderr := runQuick(t, nil, arg)
		if code != 1 {
			t.Errorf("%s: exit %d, want 1 as redis-server", arg, code)
		}
		for _, want := range []string{"Usage: vigil-server [/path/to/redis.conf] [options] [-]", "vigil-server --port 7777"} {
			if !strings.Contains(stderr, want) {
				t.Errorf("%s: usage lacks %q:\n%s", arg, want, stderr)
			}
		}
	}
}

func TestBadConfigExitsWithFatalBlock(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.conf")
	if err := os.WriteFile(bad, []byte("# comment\nport abc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	header := "*** FATAL CONFIG FILE ERROR (Redis " + redisVersion() + ") ***"
	tests := []struct {
		name  string
		stdin string
		args  []string
		want  []string
	}{
		{"bad value in file", "", []string{bad}, []string{header, "line 2", ">>> 'port abc'"}},
		{"bad directive in file", "", []string{writeConf(t, "nosuchdirective yes\n")}, []string{header, "line 1", "nosuchdirective"}},
		{"bad flag value", "", []string{"--port", "abc"}, []string{header, "port"}},
		{"bad flag name", "", []string{"--nosuchdirective", "1"}, []string{header, "nosuchdirective"}},
		{"bad stdin", "port 99999999\n", []string{"-"}, []string{header, "port"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runQuick(t, strings.NewReader(tt.stdin), tt.args...)
			if code != 1 {
				t.Errorf("exit %d, want 1", code)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			if strings.Contains(stdout, "Redis is starting") {
				t.Errorf("started logging despite the bad config:\n%s", stdout)
			}
		})
	}
}

func TestMissingConfigFile(t *testing.T) {
	code, _, stderr := runQuick(t, nil, filepath.Join(t.TempDir(), "missing.conf"))
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if !strings.Contains(stderr, "missing.conf") {
		t.Errorf("stderr does not name the missing file:\n%s", stderr)
	}
}

// TestStartupAndShutdown runs the server in-process with a config file and
// flags, checks Redis's startup lines, talks to it, sends SIGTERM and checks
// the exit code and the pid file.
func TestStartupAndShutdown(t *testing.T) {
	dir := t.TempDir()
	port := freePort(t)
	pidfile := filepath.Join(dir, "vigil.pid")
	conf := writeConf(t, "port 1\nbind 127.0.0.1\nloglevel notice\n")
	s := start(t, nil, conf, "--port", strconv.Itoa(port), "--pidfile", pidfile)
	s.waitFor(t, "Ready to accept connections")

	lines := s.events(t)
	wantOrder := []string{
		"oO0OoO0OoO0Oo Redis is starting oO0OoO0OoO0Oo",
		fmt.Sprintf("Redis version=%s, bits=64, commit=00000000, modified=0, pid=%d, just started", redisVersion(), os.Getpid()),
		"Configuration loaded",
		"monotonic clock: POSIX clock_gettime", // initServer's, as redis-server 7.0.15 on Linux
		fmt.Sprintf("Running mode=standalone, port=%d.", port),
		"Server initialized",
		"Ready to accept connections",
	}
	checkOrder(t, lines, wantOrder)
	// The role is C until the server exists (redis-server's initServer
	// sets server.pid), M from then on.
	role := "C"
	for _, e := range lines {
		if role == "C" && e["role"] == "M" {
			role = "M"
		}
		if e["role"] != role || e["pid"] != strconv.Itoa(os.Getpid()) {
			t.Errorf("line without the pid and role %s: %v", role, e)
		}
	}
	if role != "M" {
		t.Errorf("no line with role M")
	}
	b, err := os.ReadFile(pidfile)
	if err != nil || string(b) != fmt.Sprintf("%d\n", os.Getpid()) {
		t.Errorf("pidfile = %q, %v; want the pid and a newline", b, err)
	}
	if reply := ping(t, port); reply != "+PONG\r\n" {
		t.Errorf("PING answered %q", reply)
	}

	s.sigs <- syscall.SIGTERM
	if code := s.wait(t); code != 0 {
		t.Errorf("exit %d after SIGTERM, want 0\n%s", code, s.out.String())
	}
	evs := s.events(t)
	checkOrder(t, evs, []string{"Received SIGTERM scheduling shutdown...", "Redis is now ready to exit, bye bye..."})
	for _, e := range evs {
		if e["message"] == "Received SIGTERM scheduling shutdown..." && e["role"] != "signal-handler" {
			t.Errorf("SIGTERM line %v, want serverLogFromHandler's pid:signal-handler (unixtime) shape", e)
		}
	}
	if _, err := os.Stat(pidfile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("pidfile still there after exit: %v", err)
	}
	if n := strings.Count(s.out.String(), "Redis is now ready to exit, bye bye..."); n != 1 {
		t.Errorf("bye bye logged %d times, want once", n)
	}
}

func TestConfigFromStdinWithLogoAndDaemonize(t *testing.T) {
	port := freePort(t)
	stdin := fmt.Sprintf("port %d\nbind 127.0.0.1\nalways-show-logo yes\ndaemonize yes\n", port)
	s := start(t, strings.NewReader(stdin), "-")
	s.waitFor(t, "Ready to accept connections")
	out := s.out.String()
	for _, want := range []string{
		"Reading config from stdin",
		"Vigil does not daemonize",
		fmt.Sprintf("Port: %d", port),
		fmt.Sprintf("PID: %d", os.Getpid()),
		"Redis " + redisVersion() + " (00000000/0) 64 bit",
		fmt.Sprintf("Running mode=standalone, port=%d.", port),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	s.sigs <- syscall.SIGINT
	if code := s.wait(t); code != 0 {
		t.Errorf("exit %d after SIGINT, want 0", code)
	}
	if !strings.Contains(s.out.String(), "Received SIGINT scheduling shutdown...") {
		t.Errorf("no SIGINT line:\n%s", s.out.String())
	}
}

func TestNoConfigFileWarning(t *testing.T) {
	// With no argument at all the server would take port 6379; run the
	// check on the message choice only.
	inv := splitArgs(nil)
	if !inv.noArgs {
		t.Fatal("splitArgs(nil).noArgs = false")
	}
	if splitArgs([]string{"--port", "7000"}).noArgs {
		t.Error("flags alone count as no arguments; Redis says Configuration loaded then")
	}
}

func TestLogfileAndLevel(t *testing.T) {
	dir := t.TempDir()
	logfile := filepath.Join(dir, "vigil.log")
	if err := os.WriteFile(logfile, []byte("earlier line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	s := start(t, nil, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--logfile", logfile, "--loglevel", "warning")
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(logfile)
		if bytes.Contains(b, []byte("Server initialized")) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no Server initialized in %s:\n%s\nstdout:\n%s", logfile, b, s.out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if reply := ping(t, port); reply != "+PONG\r\n" {
		t.Errorf("PING answered %q", reply)
	}
	s.sigs <- syscall.SIGTERM
	if code := s.wait(t); code != 0 {
		t.Errorf("exit %d, want 0", code)
	}
	b, _ := os.ReadFile(logfile)
	log := string(b)
	if !strings.HasPrefix(log, "earlier line\n") {
		t.Errorf("logfile was not appended to:\n%s", log)
	}
	if strings.Contains(log, "Ready to accept connections") {
		t.Errorf("loglevel warning let a notice line through:\n%s", log)
	}
	if !regexp.MustCompile(`(?m)^\d+:C \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d\.\d{3} # oO0OoO0OoO0Oo Redis is starting oO0OoO0OoO0Oo$`).MatchString(log) {
		t.Errorf("logfile lacks the warning-level startup lines as redis-server writes them:\n%s", log)
	}
	if s.out.Len() != 0 {
		t.Errorf("logged to stdout despite logfile:\n%s", s.out.String())
	}
}

func TestListenFailure(t *testing.T) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	pidfile := filepath.Join(t.TempDir(), "vigil.pid")
	s := start(t, nil, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--pidfile", pidfile)
	if code := s.wait(t); code != 1 {
		t.Errorf("exit %d on a busy port, want 1", code)
	}
	if want := fmt.Sprintf("Failed listening on port %d (tcp), aborting.", port); !strings.Contains(s.out.String(), want) {
		t.Errorf("output lacks %q:\n%s", want, s.out.String())
	}
	if _, err := os.Stat(pidfile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("pidfile written although listening failed: %v", err)
	}
}

// TestProcessSIGTERM execs the program (this test binary in main mode) and
// sends it a real SIGTERM.
func TestProcessSIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	port := freePort(t)
	pidfile := filepath.Join(t.TempDir(), "vigil.pid")
	cmd := exec.Command(os.Args[0], "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--pidfile", pidfile)
	cmd.Env = append(os.Environ(), "VIGIL_SERVER_AS_MAIN=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var out syncBuffer
	copied := make(chan struct{})
	go func() { io.Copy(&out, stdout); close(copied) }()
	waitOutput(t, &out, "Ready to accept connections")
	if b, err := os.ReadFile(pidfile); err != nil || strings.TrimSpace(string(b)) != strconv.Itoa(cmd.Process.Pid) {
		t.Errorf("pidfile %q, %v; want pid %d", b, err, cmd.Process.Pid)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-copied
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit after SIGTERM: %v (want 0)\nstdout:\n%s\nstderr:\n%s", err, out.String(), stderr.String())
	}
	for _, want := range []string{"Received SIGTERM scheduling shutdown...", "Redis is now ready to exit, bye bye..."} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if _, err := os.Stat(pidfile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("pidfile left behind: %v", err)
	}
}

// --- helpers ---

// syncBuffer is the output of a server run in the test process.
type syncBuffer = testutil.LockedBuffer

// runQuick runs a command line that is expected to return at once.
func runQuick(t *testing.T, stdin io.Reader, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() { done <- runWithSignals(args, stdin, &out, &errb, make(chan os.Signal)) }()
	select {
	case code = <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("run(%q) did not return; output:\n%s%s", args, out.String(), errb.String())
	}
	return code, out.String(), errb.String()
}

// running is an in-process server started by start.
type running struct {
	sigs chan os.Signal
	out  *syncBuffer
	err  *syncBuffer
	done chan int
	code *int
}

func start(t *testing.T, stdin io.Reader, args ...string) *running {
	t.Helper()
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	// persist: the shutdown save (default save points) goes to a temp dir,
	// unless the test gives its own.
	if !slices.Contains(args, "--dir") {
		args = append(args[:len(args):len(args)], "--dir", t.TempDir())
	}
	r := &running{sigs: make(chan os.Signal, 2), out: &syncBuffer{}, err: &syncBuffer{}, done: make(chan int, 1)}
	go func() { r.done <- runWithSignals(args, stdin, r.out, r.err, r.sigs) }()
	t.Cleanup(func() {
		if r.code == nil {
			r.sigs <- syscall.SIGTERM
			r.wait(t)
		}
	})
	return r
}

func (r *running) wait(t *testing.T) int {
	t.Helper()
	if r.code != nil {
		return *r.code
	}
	select {
	case c := <-r.done:
		r.code = &c
		return c
	case <-time.After(15 * time.Second):
		t.Fatalf("server did not exit; output:\n%s\nstderr:\n%s", r.out.String(), r.err.String())
	}
	return -1
}

func (r *running) waitFor(t *testing.T, text string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(r.out.String(), text) {
		select {
		case c := <-r.done:
			r.code = &c
			t.Fatalf("exited with %d before %q; output:\n%s\nstderr:\n%s", c, text, r.out.String(), r.err.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q within 10s; output:\n%s\nstderr:\n%s", text, r.out.String(), r.err.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// events parses the log lines written so far (redis-server's shape, see
// logLine).
func (r *running) events(t *testing.T) []map[string]any {
	t.Helper()
	var evs []map[string]any
	for _, line := range strings.Split(strings.TrimSuffix(r.out.String(), "\n"), "\n") {
		e := logLine(line)
		if e == nil {
			t.Errorf("log line is not redis-server's shape: %q", line)
			continue
		}
		evs = append(evs, e)
	}
	return evs
}

// redisLogLine is the shape of redis-server's log lines (server.c's
// serverLogRaw): pid:role dd Mon yyyy hh:mm:ss.mmm <level> message.
var redisLogLine = regexp.MustCompile(`^(\d+):([XCSM]) (\d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d\.\d{3}) ([.*#-]) (.*)$`)

// handlerLogLine is serverLogFromHandler's shape (the shutdown signal
// lines): pid:signal-handler (unixtime) message.
var handlerLogLine = regexp.MustCompile(`^(\d+):signal-handler \((\d+)\) (.*)$`)

// logLine splits a log line into pid, role, time, level and message (role
// "signal-handler" and no level for serverLogFromHandler's lines); nil if
// it is not a log line.
func logLine(line string) map[string]any {
	m := redisLogLine.FindStringSubmatch(line)
	if m == nil {
		if h := handlerLogLine.FindStringSubmatch(line); h != nil {
			return map[string]any{"pid": h[1], "role": "signal-handler", "time": h[2], "level": "", "message": h[3]}
		}
		return nil
	}
	return map[string]any{"pid": m[1], "role": m[2], "time": m[3], "level": m[4], "message": m[5]}
}

// checkOrder checks that the messages appear in this order (others may come
// between).
func checkOrder(t *testing.T, evs []map[string]any, msgs []string) {
	t.Helper()
	i := 0
	for _, e := range evs {
		if i < len(msgs) && e["message"] == msgs[i] {
			i++
		}
	}
	if i < len(msgs) {
		var got []string
		for _, e := range evs {
			got = append(got, fmt.Sprint(e["message"]))
		}
		t.Errorf("missing or out of order: %q\nlogged:\n%s", msgs[i], strings.Join(got, "\n"))
	}
}

func waitOutput(t *testing.T, out *syncBuffer, text string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), text) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q within 10s; output:\n%s", text, out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// freePort finds a loopback port nobody listens on right now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func writeConf(t *testing.T, text string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "vigil.conf")
	if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

func ping(t *testing.T, port int) string {
	t.Helper()
	r, done := command(t, port, "PING")
	defer done()
	reply, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return reply
}

// TestAOFLoadFailureLastLine: a start-up AOF load that fails leaves its
// error as the log's last line, as redis-server's exit(1) does (aof.tcl's
// "Bad format: Server should have logged an error" reads it with tail -1),
// with a pid file too.
func TestAOFLoadFailureLastLine(t *testing.T) {
	dir := t.TempDir()
	aofDir := filepath.Join(dir, "appendonlydir")
	if err := os.Mkdir(aofDir, 0o755); err != nil {
		t.Fatal(err)
	}
	set := "*3\r\n$3\r\nset\r\n$3\r\nfoo\r\n$5\r\nhello\r\n"
	if err := os.WriteFile(filepath.Join(aofDir, "appendonly.aof.1.incr.aof"), []byte(set+"!!!"+set), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(aofDir, "appendonly.aof.manifest"), []byte("file appendonly.aof.1.incr.aof seq 1 type i\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := start(t, nil, "--port", strconv.Itoa(freePort(t)), "--bind", "127.0.0.1", "--dir", dir,
		"--appendonly", "yes", "--aof-load-truncated", "yes", "--pidfile", filepath.Join(dir, "vigil.pid"))
	if code := s.wait(t); code != 1 {
		t.Errorf("exit %d on a bad AOF, want 1", code)
	}
	lines := strings.Split(strings.TrimSpace(s.out.String()), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, "Bad file format reading the append only file") {
		t.Errorf("last log line %q, want the load's error; output:\n%s", last, s.out.String())
	}
}

// TestTLSStartupFailures: a TLS configuration that tlsConfigure refuses
// stops the start-up with its reason and Redis's line, as redis-server's
// initServer; a TLS port that cannot be bound, with "(TLS)"; and
// cluster-enabled yes, which Vigil cannot honour, is said in the log.
func TestTLSStartupFailures(t *testing.T) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	busy := l.Addr().(*net.TCPAddr).Port
	f := testutil.TLSCerts(t)
	s := start(t, nil, "--port", "0", "--tls-port", strconv.Itoa(busy), "--tls-key-file", f.Key)
	if code := s.wait(t); code != 1 {
		t.Errorf("exit %d without tls-cert-file, want 1", code)
	}
	for _, want := range []string{"No tls-cert-file configured!", "Failed to configure TLS. Check logs for more info."} {
		if !strings.Contains(s.out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, s.out.String())
		}
	}
	s = start(t, nil, append([]string{"--port", "0", "--bind", "127.0.0.1"}, f.ServerArgs(busy)...)...)
	if code := s.wait(t); code != 1 {
		t.Errorf("exit %d on a busy TLS port, want 1", code)
	}
	if want := fmt.Sprintf("Failed listening on port %d (TLS), aborting.", busy); !strings.Contains(s.out.String(), want) {
		t.Errorf("output lacks %q:\n%s", want, s.out.String())
	}
	// The start-up stops at the busy port, after the warning.
	s = start(t, nil, "--port", strconv.Itoa(busy), "--bind", "127.0.0.1", "--cluster-enabled", "yes")
	s.wait(t)
	if want := "cluster-enabled yes is ignored"; !strings.Contains(s.out.String(), want) {
		t.Errorf("output lacks %q:\n%s", want, s.out.String())
	}
}
