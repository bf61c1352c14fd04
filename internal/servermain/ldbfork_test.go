package servermain

import (
	"bufio"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/resp"
	"github.com/vigil-kv/vigil/internal/testutil"
)

// TestLdbForkedSessionProcess: SCRIPT DEBUG YES's session runs in a child
// process (Redis's fork, Vigil's re-executed binary) titled as its
// parent; the child logs "Redis forked for debugging eval"; the script's
// write is not seen by the parent; SHUTDOWN NOSAVE kills the child
// ("Killing debugging session <pid>"), which closes the debugging
// client's connection, and no child is left. On vigil-server and, when
// installed, redis-server.
func TestLdbForkedSessionProcess(t *testing.T) {
	for name, p := range saveServers(t, "save \"\"\n") {
		t.Run(name, func(t *testing.T) {
			p.mustDo(t, "+OK\r\n", "SET", "k", "v")
			c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p.port)), 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			br := bufio.NewReader(c)
			send := func(args ...string) resp.Value {
				t.Helper()
				_ = c.SetDeadline(time.Now().Add(10 * time.Second))
				if _, err := c.Write(resp.AppendCommandStrings(nil, args...)); err != nil {
					t.Fatal(err)
				}
				v, err := resp.ReadValue(br, resp.DefaultReplyLimits)
				if err != nil {
					t.Fatalf("%v: %v", args, err)
				}
				return v
			}
			send("SCRIPT", "DEBUG", "YES")
			send("EVAL", "redis.call('set', 'k', 'changed')\nreturn 1\n", "0")
			send("s") // the SET ran in the child
			child := saveChild(t, p)
			parent, _ := os.ReadFile("/proc/" + strconv.Itoa(p.cmd.Process.Pid) + "/cmdline")
			cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(child) + "/cmdline")
			// (Vigil's title area is padded with NULs: proctitle.Set.)
			if strings.TrimRight(string(cmdline), "\x00") != strings.TrimRight(string(parent), "\x00") {
				t.Errorf("child's cmdline %q, parent's %q", cmdline, parent)
			}
			p.mustDo(t, "v", "GET", "k")
			if !testutil.PollUntil(10*time.Second, func() bool {
				return strings.Contains(p.log(), "Redis forked for debugging eval")
			}) {
				t.Errorf("log lacks the fork line:\n%s", p.log())
			}
			_, _ = p.do("SHUTDOWN", "NOSAVE")
			done := make(chan struct{})
			go func() { _ = p.cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(15 * time.Second):
				t.Fatal("the server did not exit")
			}
			_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
			if _, err := br.ReadByte(); err == nil {
				t.Error("the debugging connection is open")
			}
			if !testutil.PollUntil(10*time.Second, func() bool { return !alive(child) }) {
				t.Errorf("the child %d outlived the server", child)
			}
			if want := "Killing debugging session " + strconv.Itoa(child); !strings.Contains(p.log(), want) {
				t.Errorf("log lacks %q:\n%s", want, p.log())
			}
		})
	}
}
