package servermain

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/resp"
	"github.com/vigil-kv/vigil/internal/testutil"
)

// process is vigil-server run as its own process (this test binary as
// main, see TestMain), for the DEBUG subcommands that restart or crash it.
type process struct {
	cmd  *exec.Cmd
	port int
	dir  string
	out  *syncBuffer
	exe  string // another server binary (redis-server); "": this test binary as vigil-server
}

func startProcess(t *testing.T, conf string) *process {
	t.Helper()
	p := newProcess(t)
	p.launch(t, conf)
	p.waitUp(t)
	return p
}

// newProcess is a process not yet started, with its port and directory
// (files a test puts there before launch are read at start).
func newProcess(t *testing.T) *process {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a process")
	}
	return &process{port: freePort(t), dir: t.TempDir(), out: &syncBuffer{}}
}

// launch starts the program with conf after the port, bind, dir and
// enable-debug-command directives, without waiting for it; it is killed
// when the test ends.
func (p *process) launch(t *testing.T, conf string) {
	t.Helper()
	file := filepath.Join(p.dir, "vigil.conf")
	text := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\nenable-debug-command yes\n%s", p.port, p.dir, conf)
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if p.exe != "" {
		p.cmd = exec.Command(p.exe, file, "--logfile", filepath.Join(p.dir, "log"))
	} else {
		p.cmd = exec.Command(os.Args[0], file, "--logfile", filepath.Join(p.dir, "log"))
		p.cmd.Env = append(os.Environ(), "VIGIL_SERVER_AS_MAIN=1")
	}
	p.cmd.Dir = p.dir // a crash's core file, if the limits allow one
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Kill()
			_ = p.cmd.Wait()
		}
	})
}

// do sends one command on a new connection; "" (and err) when the
// connection closes without a reply.
func (p *process) do(args ...string) (string, error) {
	c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p.port)), 5*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write(resp.AppendCommandStrings(nil, args...)); err != nil {
		return "", err
	}
	br := bufio.NewReader(c)
	line, err := br.ReadString('\n')
	if err != nil || line[0] != '$' || line == "$-1\r\n" {
		return line, err
	}
	n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
	b := make([]byte, n+2)
	_, err = io.ReadFull(br, b)
	return string(b[:n]), err
}

func (p *process) mustDo(t *testing.T, want string, args ...string) {
	t.Helper()
	if got, err := p.do(args...); got != want {
		t.Fatalf("%v: %q (%v), want %q\nlog:\n%s", args, got, err, want, p.log())
	}
}

// waitUp polls until the server answers PING (not -LOADING).
func (p *process) waitUp(t *testing.T) {
	t.Helper()
	var got string
	var err error
	if !testutil.PollUntil(15*time.Second, func() bool {
		got, err = p.do("PING")
		return got == "+PONG\r\n"
	}) {
		t.Fatalf("no PONG: %q %v\noutput:\n%s\nlog:\n%s", got, err, p.out.String(), p.log())
	}
}

func (p *process) log() string {
	b, _ := os.ReadFile(filepath.Join(p.dir, "log"))
	return string(b)
}

func (p *process) pid(t *testing.T) string {
	t.Helper()
	info, _ := p.do("INFO", "server")
	for _, l := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(l, "process_id:"); ok {
			return v
		}
	}
	t.Fatalf("no process_id in %q", info)
	return ""
}

// TestDebugRestart: DEBUG RESTART saves (save points configured), rewrites
// the config file and execve's the same command line, so the process keeps
// its pid and comes back with its data and with CONFIG SET changes, as
// restartServer does; the client gets no reply. CRASH-AND-RECOVER execve's
// without saving: what was written since the last save is gone.
func TestDebugRestart(t *testing.T) {
	p := startProcess(t, "save 3600 1\n")
	pid := strconv.Itoa(p.cmd.Process.Pid)
	if got := p.pid(t); got != pid {
		t.Fatalf("process_id %s, want %s", got, pid)
	}
	p.mustDo(t, "+OK\r\n", "SET", "foo", "bar")
	p.mustDo(t, "+OK\r\n", "CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
	if got, err := p.do("DEBUG", "RESTART"); got != "" {
		t.Fatalf("DEBUG RESTART replied %q (%v)", got, err)
	}
	p.waitUp(t)
	if got := p.pid(t); got != pid {
		t.Fatalf("after RESTART process_id %s, want the same %s", got, pid)
	}
	p.mustDo(t, "bar", "GET", "foo")
	if conf, _ := os.ReadFile(filepath.Join(p.dir, "vigil.conf")); !strings.Contains(string(conf), "maxmemory-policy allkeys-lru") {
		t.Fatalf("config file not rewritten:\n%s", conf)
	}

	p.mustDo(t, "+OK\r\n", "SET", "unsaved", "1")
	if got, err := p.do("DEBUG", "CRASH-AND-RECOVER", "50"); got != "" {
		t.Fatalf("DEBUG CRASH-AND-RECOVER replied %q (%v)", got, err)
	}
	p.waitUp(t)
	if got := p.pid(t); got != pid {
		t.Fatalf("after CRASH-AND-RECOVER process_id %s, want the same %s", got, pid)
	}
	p.mustDo(t, "bar", "GET", "foo")
	p.mustDo(t, "$-1\r\n", "GET", "unsaved")
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v\nlog:\n%s", err, p.log())
	}
}

// TestDebugCrash: SEGFAULT dies of SIGSEGV, PANIC, ASSERT and OOM of
// SIGABRT, as redis-server does, after logging Redis's bug report.
func TestDebugCrash(t *testing.T) {
	for sub, want := range map[string]struct {
		sig  syscall.Signal
		line string
	}{
		"SEGFAULT": {syscall.SIGSEGV, "crashed by signal: 11"},
		"PANIC":    {syscall.SIGABRT, "Guru Meditation: DEBUG PANIC called at Unix time"},
		"ASSERT":   {syscall.SIGABRT, "==> debug.c:530 '1 == 2' is not true"},
		"OOM":      {syscall.SIGABRT, "Out Of Memory allocating 9223372036854775807 bytes!"},
	} {
		t.Run(sub, func(t *testing.T) {
			p := startProcess(t, "")
			if got, err := p.do("DEBUG", sub); got != "" {
				t.Fatalf("DEBUG %s replied %q (%v)", sub, got, err)
			}
			err := p.cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("exit: %v", err)
			}
			ws := ee.Sys().(syscall.WaitStatus)
			if !ws.Signaled() || ws.Signal() != want.sig {
				t.Fatalf("exit status %v, want death by %v", ws, want.sig)
			}
			log := p.log()
			for _, l := range []string{"=== REDIS BUG REPORT START: Cut & paste starting from here ===", want.line,
				"------ STACK TRACE ------", "------ INFO OUTPUT ------", "------ CLIENT LIST OUTPUT ------",
				"=== REDIS BUG REPORT END. Make sure to include from START to END. ==="} {
				if !strings.Contains(log, l) {
					t.Errorf("log lacks %q", l)
				}
			}
			if t.Failed() {
				t.Logf("log:\n%s", log)
			}
		})
	}
}
