package daemon

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestSimulateFailureReplies: SENTINEL SIMULATE-FAILURE clears the flags
// before reading its arguments, so HELP or an unknown argument leaves set
// only the flags named before it (sentinelCommand). The replies and
// sentinel_simulate_failure_flags after each call are redis-sentinel
// 7.0.15's, checked live when it is installed.
func TestSimulateFailureReplies(t *testing.T) {
	steps := [][]string{
		{"crash-after-election", "crash-after-promotion"},
		{"help"},
		{"crash-after-promotion"},
		{"bogus"},
		{"crash-after-election", "HELP", "crash-after-promotion"},
		{"crash-after-promotion", "nope", "crash-after-election"},
		{"crash-after-election", "crash-after-election"},
	}
	want := []string{
		"+OK\r\n 3",
		"*2\r\n$20\r\ncrash-after-election\r\n$21\r\ncrash-after-promotion\r\n 0",
		"+OK\r\n 2",
		"-ERR Unknown failure simulation specified\r\n 0",
		"*2\r\n$20\r\ncrash-after-election\r\n$21\r\ncrash-after-promotion\r\n 1",
		"-ERR Unknown failure simulation specified\r\n 2",
		"+OK\r\n 1",
	}
	run := func(who string, port int) {
		t.Helper()
		ic := dialInfo(t, port)
		for i, s := range steps {
			r := ic.do(append([]string{"SENTINEL", "SIMULATE-FAILURE"}, s...)...)
			got := r + " " + field(ic.do("INFO", "sentinel"), "sentinel_simulate_failure_flags")
			if got != want[i] {
				t.Errorf("%s SIMULATE-FAILURE %v: %q, want %q", who, s, got, want[i])
			}
		}
	}
	port, _ := startSentinel(t, "")
	run("vigil", port)

	if _, err := os.Stat("/usr/bin/redis-sentinel"); err != nil {
		return
	}
	rport := freePort(t)
	dir := t.TempDir()
	conf := filepath.Join(dir, "sentinel.conf")
	os.WriteFile(conf, []byte(fmt.Sprintf("port %d\nbind 127.0.0.1\n", rport)), 0o644)
	cmd := exec.Command("/usr/bin/redis-sentinel", conf)
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	waitFor(t, 10*time.Second, "redis-sentinel listening", func() bool {
		rc, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(rport))
		if err == nil {
			rc.Close()
		}
		return err == nil
	})
	run("redis-sentinel", rport)
}
