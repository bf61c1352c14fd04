package sentinelmain

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vigil-kv/vigil/internal/testutil"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// sentinelBinary builds vigil-sentinel once for the tests that run it as a
// process (as an operator does: from a directory, with a relative file).
func sentinelBinary(t *testing.T) string {
	t.Helper()
	// VIGIL_SENTINEL_BIN=/usr/bin/redis-sentinel runs the same tests
	// against the reference.
	if bin := os.Getenv("VIGIL_SENTINEL_BIN"); bin != "" {
		return bin
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "vigil-sentinel-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "vigil-sentinel")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/vigil-kv/vigil/cmd/vigil-sentinel").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// proc is one vigil-sentinel process started from a directory.
type proc struct {
	cmd  *exec.Cmd
	out  *testutil.LockedBuffer
	c    *redis.Client
	done chan struct{}
}

func startProc(t *testing.T, cwd, conf string, port int) *proc {
	t.Helper()
	p := &proc{out: &testutil.LockedBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(sentinelBinary(t), conf)
	p.cmd.Dir = cwd
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() { p.kill() })
	p.c = redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port), Protocol: 2, MaxRetries: -1})
	t.Cleanup(func() { p.c.Close() })
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case <-p.done:
			t.Fatalf("vigil-sentinel %s exited; output:\n%s", conf, p.out.String())
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := p.c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("vigil-sentinel %s does not answer PING: %v; output:\n%s", conf, err, p.out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// kill is SIGKILL: nothing is saved on the way out.
func (p *proc) kill() {
	if p.cmd.Process != nil {
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

func (p *proc) do(t *testing.T, args ...any) any {
	t.Helper()
	v, err := p.c.Do(context.Background(), args...).Result()
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return v
}

// state is what must survive a restart, as the sentinel reports it.
func (p *proc) state(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	m := p.do(t, "SENTINEL", "MASTER", "mym").([]any)
	volatile := map[string]bool{"last-ping-sent": true, "last-ok-ping-reply": true, "last-ping-reply": true,
		"info-refresh": true, "role-reported-time": true, "down-after-milliseconds": false,
		"link-pending-commands": true, "flags": true, "s-down-time": true, "o-down-time": true}
	for i := 0; i+1 < len(m); i += 2 {
		if !volatile[m[i].(string)] {
			fmt.Fprintf(&b, "master %v=%v\n", m[i], m[i+1])
		}
	}
	for _, r := range p.do(t, "SENTINEL", "REPLICAS", "mym").([]any) {
		f := r.([]any)
		fmt.Fprintf(&b, "replica %v %v %v\n", f[1], f[3], f[5])
	}
	for _, r := range p.do(t, "SENTINEL", "SENTINELS", "mym").([]any) {
		f := r.([]any)
		fmt.Fprintf(&b, "sentinel %v %v %v %v\n", f[1], f[3], f[5], f[7])
	}
	fmt.Fprintf(&b, "config %v\n", p.do(t, "SENTINEL", "CONFIG", "GET", "*"))
	// A "user default ..." line loaded from the file starts from a reset
	// user, so redis-sentinel 7.0.15 too lists the default user with
	// sanitize-payload after a restart, not before.
	acl := strings.Replace(fmt.Sprint(p.do(t, "ACL", "LIST")), "user default on nopass sanitize-payload ", "user default on nopass ", 1)
	fmt.Fprintf(&b, "acl %v\n", acl)
	fmt.Fprintf(&b, "myid %v\n", p.do(t, "SENTINEL", "MYID"))
	return b.String()
}

// sentinelLines are the lines of the file the sentinel rewrites.
func sentinelLines(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRestartFromRewrittenConfig: a sentinel started from a directory with
// "dir ./s0" and relative paths keeps its log, pid file and scripts under
// s0 (redis-sentinel chdir()s at the dir line); every kind of state it
// rewrites (scripts, auth-user/auth-pass, rename-command,
// resolve/announce-hostnames, known-replica/known-sentinel, users) comes
// back, identical, after a SIGKILL and a restart from the rewritten file.
func TestRestartFromRewrittenConfig(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"s0", "helpers"} {
		if err := os.Mkdir(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "helpers", "notify.sh"), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	port, master := freePort(t), freePort(t)
	otherID := strings.Repeat("ab", 20)
	conf := fmt.Sprintf(`port %d
bind 127.0.0.1
dir ./s0
logfile log.txt
pidfile s.pid
sentinel monitor mym 127.0.0.1 %d 2
sentinel deny-scripts-reconfig no
sentinel down-after-milliseconds mym 60000
sentinel known-replica mym 127.0.0.1 %d
sentinel known-sentinel mym 127.0.0.1 %d %s
`, port, master, freePort(t), freePort(t), otherID)
	if err := os.WriteFile(filepath.Join(root, "s0.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startProc(t, root, "s0.conf", port)

	for _, f := range []string{"log.txt", "s.pid"} {
		if _, err := os.Stat(filepath.Join(root, "s0", f)); err != nil {
			t.Errorf("%s not under dir s0: %v; output:\n%s", f, err, p.out.String())
		}
		if _, err := os.Stat(filepath.Join(root, f)); err == nil {
			t.Errorf("%s written in the start directory, not under dir", f)
		}
	}

	// The script path is relative to dir (s0), where the sentinel runs.
	p.do(t, "SENTINEL", "SET", "mym", "notification-script", "../helpers/notify.sh",
		"client-reconfig-script", "../helpers/notify.sh")
	p.do(t, "SENTINEL", "SET", "mym", "auth-user", "app", "auth-pass", "s3cret-pw")
	p.do(t, "SENTINEL", "SET", "mym", "rename-command", "CONFIG", "XCONFIG", "rename-command", "SLAVEOF", "XSLAVEOF")
	p.do(t, "SENTINEL", "SET", "mym", "quorum", "3", "parallel-syncs", "2", "failover-timeout", "12345")
	p.do(t, "SENTINEL", "CONFIG", "SET", "resolve-hostnames", "yes")
	p.do(t, "SENTINEL", "CONFIG", "SET", "announce-hostnames", "yes")
	p.do(t, "ACL", "SETUSER", "alice", "on", ">pw", "~k*", "&chan", "+ping", "+@pubsub")
	p.do(t, "SENTINEL", "FLUSHCONFIG")
	before := p.state(t)
	file := sentinelLines(t, filepath.Join(root, "s0.conf"))
	for _, want := range []string{
		`sentinel notification-script mym ../helpers/notify.sh`,
		`sentinel auth-user mym app`,
		`sentinel known-sentinel mym 127.0.0.1`,
		`sentinel known-replica mym 127.0.0.1`,
		`user alice on`,
		`sentinel resolve-hostnames yes`,
		`sentinel announce-hostnames yes`,
	} {
		if !strings.Contains(file, want) {
			t.Errorf("rewritten file lacks %q:\n%s", want, file)
		}
	}
	if !regexp.MustCompile(`(?m)^dir "?` + regexp.QuoteMeta(filepath.Join(root, "s0"))).MatchString(file) {
		// t.TempDir may sit behind a symbolic link: compare resolved.
		real, _ := filepath.EvalSymlinks(filepath.Join(root, "s0"))
		if !strings.Contains(file, "dir \""+real+"\"") && !strings.Contains(file, "dir "+real+"\n") {
			t.Errorf("rewritten file has no absolute dir:\n%s", file)
		}
	}

	for round := 1; round <= 2; round++ {
		p.kill()
		p = startProc(t, root, "s0.conf", port)
		p.do(t, "SENTINEL", "FLUSHCONFIG")
		if after := p.state(t); after != before {
			t.Fatalf("restart %d: state differs\nbefore:\n%s\nafter:\n%s\noutput:\n%s", round, before, after, p.out.String())
		}
		again := sentinelLines(t, filepath.Join(root, "s0.conf"))
		// The rewrite lists the users as ACL LIST does (see state).
		again = strings.Replace(again, "user default on nopass sanitize-payload ", "user default on nopass ", 1)
		// Like redis-sentinel 7.0.15, the first rewrite after a restart
		// ends the file with one more empty line.
		if strings.TrimRight(again, "\n") != strings.TrimRight(file, "\n") {
			t.Fatalf("restart %d: the rewritten file differs\nbefore:\n%q\nafter:\n%q", round, file, again)
		}
	}
	log, _ := os.ReadFile(filepath.Join(root, "s0", "log.txt"))
	if n := strings.Count(string(log), "Sentinel ID is "); n != 3 {
		t.Errorf("s0/log.txt has %d starts, want 3:\n%s", n, log)
	}
}
