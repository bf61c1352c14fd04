package server

import (
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/vigil-kv/vigil/internal/testutil"
)

// shutdownPair is a Vigil master on a free loopback port (its log in the
// returned sink) with shutdown-timeout 10, and a redis-server 7.0.15
// replica of it, in sync (stopReplica pauses the replica: SIGSTOP, SIGCONT at
// the test's end). It skips without redis-server.
func shutdownPair(t *testing.T) (l *liveServer, logs *testutil.LockedBuffer, r *testutil.Redis) {
	t.Helper()
	testutil.NeedRedis(t)
	port := testutil.FreePort(t)
	logs = &testutil.LockedBuffer{}
	l, _ = startLiveAtAfter(t, port, func(s *Server) { s.log = zerolog.New(logs) },
		"--shutdown-timeout", "10", "--repl-diskless-sync-delay", "0")
	r = testutil.StartRedis(t, testutil.RedisOptions{Args: []string{"--replicaof", "127.0.0.1", strconv.Itoa(port)}})
	c := l.dial(t)
	if got := c.do("SET", "k", "1"); got != "+OK" {
		t.Fatal(got)
	}
	eventually(t, "the replica in sync", func() bool {
		l.s.mu.Lock()
		defer l.s.mu.Unlock()
		return len(l.s.repl.replicas) == 1 && l.s.repl.replicas[0].ack.State.String() == "online" && l.s.readyToShutdown()
	})
	return l, logs, r
}

// stopReplica pauses the redis-server replica: it acknowledges nothing
// until the test's end.
func stopReplica(t *testing.T, r *testutil.Redis) {
	t.Helper()
	if err := r.Cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Cmd.Process.Signal(syscall.SIGCONT) })
}

func (l *liveServer) exited(t *testing.T) {
	t.Helper()
	select {
	case <-l.done:
		l.done <- nil // for the cleanup
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not exit")
	}
}

// A SHUTDOWN with its replica in sync exits at once and logs it.
func TestShutdownReplicaInSync(t *testing.T) {
	l, logs, _ := shutdownPair(t)
	c := l.dial(t)
	c.send("SHUTDOWN")
	if !c.closed() {
		t.Fatal("SHUTDOWN answered")
	}
	l.exited(t)
	if s := logs.String(); !strings.Contains(s, "1 of 1 replicas are in sync when shutting down.") ||
		strings.Contains(s, "Waiting for replicas") {
		t.Fatalf("log:\n%s", s)
	}
}

// laggingShutdown starts a SHUTDOWN while the replica misses a write: the
// client blocks, and a write from another client is paused.
func laggingShutdown(t *testing.T) (l *liveServer, logs *testutil.LockedBuffer, sd, w *rconn) {
	l, logs, r := shutdownPair(t)
	stopReplica(t, r)
	c := l.dial(t)
	if got := c.do("INCR", "k"); got != "(integer) 2" {
		t.Fatal(got)
	}
	sd = l.dial(t)
	sd.send("SHUTDOWN")
	info := l.dial(t)
	eventually(t, "SHUTDOWN blocked", func() bool { return liveInfoField(t, info, "clients", "blocked_clients") == "1" })
	if liveInfoField(t, info, "server", "shutdown_in_milliseconds") == "" {
		t.Fatal("no shutdown_in_milliseconds in INFO")
	}
	w = l.dial(t)
	w.send("SET", "x", "1")
	eventually(t, "the write paused", func() bool { return liveInfoField(t, info, "clients", "blocked_clients") == "2" })
	if s := logs.String(); !strings.Contains(s, "Waiting for replicas before shutting down.") {
		t.Fatalf("log:\n%s", s)
	}
	return l, logs, sd, w
}

// A lagging replica is waited for until shutdown-timeout; then the server
// exits, logging the lagging replica, and the paused write never runs.
func TestShutdownWaitsForLaggingReplica(t *testing.T) {
	l, logs, sd, w := laggingShutdown(t)
	l.clk.Advance(11 * time.Second) // past shutdown-timeout: the next cron tick finishes
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logs.String(), "replicas are in sync") && time.Now().Before(deadline) {
		l.clk.Advance(100 * time.Millisecond)
		time.Sleep(time.Millisecond)
	}
	l.exited(t)
	if !sd.closed() {
		t.Fatal("SHUTDOWN answered")
	}
	if !w.closed() {
		t.Fatal("the paused write answered")
	}
	s := logs.String()
	if !strings.Contains(s, "Lagging replica 127.0.0.1:") || !strings.Contains(s, "reported offset") ||
		!strings.Contains(s, "0 of 1 replicas are in sync when shutting down.") {
		t.Fatalf("log:\n%s", s)
	}
}

// SHUTDOWN ABORT ends the wait: the blocked SHUTDOWN gets Redis's error
// and the paused write runs.
func TestShutdownWaitAbort(t *testing.T) {
	l, logs, sd, w := laggingShutdown(t)
	c := l.dial(t)
	// CLIENT UNBLOCK ... ERROR unblocks a waiting SHUTDOWN, as in 7.0.15
	// (a second one, which joined the wait); CLIENT UNBLOCK (TIMEOUT),
	// where 7.0.15 panics, leaves it blocked and answers 0.
	sd2 := l.dial(t)
	id2 := strings.TrimPrefix(sd2.do("CLIENT", "ID"), "(integer) ")
	sd2.send("SHUTDOWN")
	eventually(t, "the second SHUTDOWN blocked", func() bool { return liveInfoField(t, c, "clients", "blocked_clients") == "3" })
	if got := c.do("CLIENT", "UNBLOCK", id2, "ERROR"); got != "(integer) 1" {
		t.Fatalf("CLIENT UNBLOCK ERROR: %s", got)
	}
	if got := sd2.read(); got != "-UNBLOCKED client unblocked via CLIENT UNBLOCK" {
		t.Fatalf("the unblocked SHUTDOWN got %s", got)
	}
	id := ""
	for _, m := range regexp.MustCompile(`id=(\d+) [^\\]*cmd=shutdown`).FindAllStringSubmatch(c.do("CLIENT", "LIST"), -1) {
		if m[1] != id2 {
			id = m[1]
		}
	}
	if id == "" {
		t.Fatal("no blocked SHUTDOWN in CLIENT LIST")
	}
	if got := c.do("CLIENT", "UNBLOCK", id); got != "(integer) 0" {
		t.Fatalf("CLIENT UNBLOCK: %s", got)
	}
	if got := liveInfoField(t, c, "clients", "blocked_clients"); got != "2" {
		t.Fatalf("blocked_clients %s after CLIENT UNBLOCK", got)
	}
	if got := c.do("SHUTDOWN", "ABORT"); got != "+OK" {
		t.Fatal(got)
	}
	if got := sd.read(); got != "-"+ErrShutdownFailed {
		t.Fatal(got)
	}
	if got := w.read(); got != "+OK" {
		t.Fatal(got)
	}
	if got := liveInfoField(t, c, "server", "shutdown_in_milliseconds"); got != "" {
		t.Fatal(got)
	}
	if got := c.do("SHUTDOWN", "ABORT"); got != "-"+ErrNoShutdown {
		t.Fatal(got)
	}
	if s := logs.String(); !strings.Contains(s, "Shutdown manually aborted.") {
		t.Fatalf("log:\n%s", s)
	}
}

// SHUTDOWN NOW does not wait for a lagging replica.
func TestShutdownNowDoesNotWait(t *testing.T) {
	l, logs, r := shutdownPair(t)
	stopReplica(t, r)
	c := l.dial(t)
	if got := c.do("INCR", "k"); got != "(integer) 2" {
		t.Fatal(got)
	}
	c.send("SHUTDOWN", "NOW")
	if !c.closed() {
		t.Fatal("SHUTDOWN NOW answered")
	}
	l.exited(t)
	s := logs.String()
	if strings.Contains(s, "Waiting for replicas") || !strings.Contains(s, "0 of 1 replicas are in sync when shutting down.") {
		t.Fatalf("log:\n%s", s)
	}
}
