package sentinelmain

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/testutil"
)

func TestVersionAndUsage(t *testing.T) {
	var out, errb bytes.Buffer
	if code := runWithSignals([]string{"--version"}, &out, &errb, nil); code != 0 || !strings.HasPrefix(out.String(), "Redis server v=7.0.15") {
		t.Fatalf("--version: %d %q", code, out.String())
	}
	out.Reset()
	if code := runWithSignals([]string{"--help"}, &out, &errb, nil); code != 1 || !strings.Contains(errb.String(), "Usage: vigil-sentinel") {
		t.Fatalf("--help: %d %q", code, errb.String())
	}
}

func TestStartupErrors(t *testing.T) {
	var out, errb bytes.Buffer
	if code := runWithSignals(nil, &out, &errb, nil); code != 1 || !strings.Contains(out.String(), "Sentinel needs config file on disk to save state. Exiting...") {
		t.Fatalf("no file: %d %q", code, out.String())
	}
	out.Reset()
	if code := runWithSignals([]string{"/nonexistent/s.conf"}, &out, &errb, nil); code != 1 ||
		!strings.Contains(out.String(), "Fatal error, can't open config file '/nonexistent/s.conf': No such file or directory") {
		t.Fatalf("missing file: %d %q", code, out.String())
	}
	conf := filepath.Join(t.TempDir(), "s.conf")
	os.WriteFile(conf, []byte("port 0\nsentinel bogus\n"), 0o644)
	if code := runWithSignals([]string{conf}, &out, &errb, nil); code != 1 ||
		!strings.Contains(errb.String(), "*** FATAL CONFIG FILE ERROR (Redis 7.0.15) ***\nReading the configuration file, at line 2\n>>> 'sentinel bogus'\nUnrecognized sentinel configuration statement.") {
		t.Fatalf("bad config: %d %q", code, errb.String())
	}
}

func TestServeAndSignal(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	dir := t.TempDir()
	conf := filepath.Join(dir, "s.conf")
	pid := filepath.Join(dir, "s.pid")
	os.WriteFile(conf, []byte("bind 127.0.0.1\nsentinel monitor mym 127.0.0.1 1 2\n"), 0o644)
	sigs := make(chan os.Signal, 1)
	var out testutil.LockedBuffer
	var errb bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- runWithSignals([]string{conf, "--port", strconv.Itoa(port), "--pidfile", pid}, &out, &errb, sigs)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sentinel not listening; output:\n%s%s", out.String(), errb.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The start-up lines may follow the listener by a moment: poll for them.
	for _, want := range []string{"Running mode=sentinel, port=" + strconv.Itoa(port) + ".", "Sentinel ID is ",
		"+monitor master mym 127.0.0.1 1 quorum 2"} {
		for !strings.Contains(out.String(), want) {
			if time.Now().After(deadline) {
				t.Fatalf("log lacks %q:\n%s", want, out.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	// redis-sentinel runs redis-server's main: initServer's monotonic
	// clock line comes between "Configuration loaded" and "Running mode".
	order := []string{"Configuration loaded", "monotonic clock: POSIX clock_gettime", "Running mode=sentinel"}
	for i, at := 0, -1; i < len(order); i++ {
		j := strings.Index(out.String(), order[i])
		if j <= at {
			t.Fatalf("log lacks %q after %q:\n%s", order[i], order[max(i-1, 0)], out.String())
		}
		at = j
	}
	if b, err := os.ReadFile(pid); err != nil || strings.TrimSpace(string(b)) != strconv.Itoa(os.Getpid()) {
		t.Errorf("pidfile: %q %v", b, err)
	}
	sigs <- syscall.SIGTERM
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit code %d", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no exit after SIGTERM")
	}
	if _, err := os.Stat(pid); !os.IsNotExist(err) {
		t.Errorf("pidfile left behind: %v", err)
	}
	b, _ := os.ReadFile(conf)
	if !strings.Contains(string(b), "sentinel myid ") || !strings.Contains(string(b), "port "+strconv.Itoa(port)) {
		t.Errorf("config not rewritten:\n%s", b)
	}
	if !strings.Contains(out.String(), "Sentinel is now ready to exit, bye bye...") {
		t.Errorf("no goodbye:\n%s", out.String())
	}
}
