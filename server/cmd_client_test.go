package server

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/resp"
)

// liveServer is a server listening on a unix socket, run by Run.
type liveServer struct {
	*testServer
	sock string
	done chan error
	// cancel ends Run's context (as SIGTERM does); stop does it and
	// waits for Run's end.
	cancel  context.CancelFunc
	stopped bool
	runErr  error
}

// runLive runs ts (listening already) until the test ends or stop is
// called.
func runLive(t *testing.T, ts *testServer, sock string) *liveServer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	l := &liveServer{testServer: ts, sock: sock, done: make(chan error, 1), cancel: cancel}
	go func() { l.done <- ts.s.Run(ctx) }()
	t.Cleanup(func() { l.stop(t) })
	return l
}

// stop ends the server and waits for Run's end; it returns Run's error.
// A second call returns the first's answer.
func (l *liveServer) stop(t *testing.T) error {
	t.Helper()
	if l.stopped {
		return l.runErr
	}
	l.stopped = true
	l.cancel()
	select {
	case l.runErr = <-l.done:
	case <-time.After(10 * time.Second):
		t.Error("server did not stop")
	}
	return l.runErr
}

func startLive(t *testing.T, directives ...string) *liveServer {
	t.Helper()
	return startLiveAfter(t, nil, directives...)
}

// startLiveAfter is startLive with before run on the server before Run
// starts (nil: nothing), for what Run reads as it starts.
func startLiveAfter(t *testing.T, before func(*Server), directives ...string) *liveServer {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "v.sock")
	ts := newTestServer(t, append([]string{"--port", "0", "--unixsocket", sock}, directives...)...)
	if err := ts.s.Listen(); err != nil {
		t.Fatal(err)
	}
	if before != nil {
		before(ts.s)
	}
	return runLive(t, ts, sock)
}

// rconn is a test client on a real connection.
type rconn struct {
	t  *testing.T
	c  net.Conn
	br *bufio.Reader
}

func (l *liveServer) dial(t *testing.T) *rconn {
	t.Helper()
	c, err := net.Dial("unix", l.sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rconn{t: t, c: c, br: bufio.NewReader(c)}
}

func (r *rconn) send(args ...string) {
	r.t.Helper()
	if _, err := r.c.Write(resp.AppendCommandStrings(nil, args...)); err != nil {
		r.t.Fatalf("%.40q: %v", args, err)
	}
}

func (r *rconn) read() string {
	r.t.Helper()
	r.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	v, err := resp.ReadValue(r.br, resp.DefaultReplyLimits)
	if err != nil {
		r.t.Fatalf("read: %v", err)
	}
	return renderValue(v)
}

func (r *rconn) do(args ...string) string {
	r.t.Helper()
	r.send(args...)
	return r.read()
}

// closed reports whether the server closed the connection (EOF within
// the deadline, with nothing more to read).
func (r *rconn) closed() bool {
	_, closed := r.readEnd(5 * time.Second)
	return closed
}

// readEnd reads one byte within d: closed on EOF or a reset, timedOut
// when d passed with nothing read.
func (r *rconn) readEnd(d time.Duration) (timedOut, closed bool) {
	r.c.SetReadDeadline(time.Now().Add(d))
	_, err := r.br.ReadByte()
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout(),
		errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || (err != nil && strings.Contains(err.Error(), "reset"))
}

// closedWhile reports whether the server closes the connection within 10
// seconds of real time, tick running between short reads (false at once
// on data or another error).
func (r *rconn) closedWhile(tick func()) bool {
	r.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		tick()
		timedOut, closed := r.readEnd(20 * time.Millisecond)
		if closed {
			return true
		}
		if !timedOut {
			return false // data, or another error
		}
	}
	return false
}

// closedByCron is closedWhile with the fake clock advanced a cron tick at
// a time: the timeout directive's closes are the cron's.
func (r *rconn) closedByCron(l *liveServer) bool {
	r.t.Helper()
	return r.closedWhile(func() { l.clk.Advance(100 * time.Millisecond) })
}

// stillOpen reports whether the connection still answers.
func (r *rconn) stillOpen() bool {
	r.t.Helper()
	return r.do("PING") == "+PONG"
}

func (r *rconn) id() string {
	r.t.Helper()
	return strings.TrimPrefix(r.do("CLIENT", "ID"), "(integer) ")
}

// TestClientKill checks every CLIENT KILL filter on real connections: the
// killed clients' connections close, the others keep working.
func TestClientKill(t *testing.T) {
	l := startLive(t)
	tests := []struct {
		name string
		// kill builds the command from the ids of killer, a, b and the
		// pub/sub client ps.
		kill       func(killer, a, b, ps string, sock string) []string
		want       string
		killed     []string // of "killer", "a", "b", "ps"
		killerGone bool
	}{
		{"id", func(k, a, b, ps, _ string) []string { return []string{"CLIENT", "KILL", "ID", a} }, "(integer) 1", []string{"a"}, false},
		{"type pubsub", func(k, a, b, ps, _ string) []string { return []string{"CLIENT", "KILL", "TYPE", "pubsub"} }, "(integer) 1", []string{"ps"}, false},
		{"type normal skips me", func(k, a, b, ps, _ string) []string { return []string{"CLIENT", "KILL", "TYPE", "normal"} }, "(integer) 2", []string{"a", "b"}, false},
		{"type normal skipme no", func(k, a, b, ps, _ string) []string {
			return []string{"CLIENT", "KILL", "TYPE", "normal", "SKIPME", "no"}
		}, "(integer) 3", []string{"a", "b"}, true},
		{"user default", func(k, a, b, ps, _ string) []string { return []string{"CLIENT", "KILL", "USER", "default"} }, "(integer) 3", []string{"a", "b", "ps"}, false},
		{"addr and id", func(k, a, b, ps, sock string) []string {
			return []string{"CLIENT", "KILL", "ADDR", sock + ":0", "ID", b}
		}, "(integer) 1", []string{"b"}, false},
		{"laddr", func(k, a, b, ps, sock string) []string { return []string{"CLIENT", "KILL", "LADDR", sock + ":0"} }, "(integer) 3", []string{"a", "b", "ps"}, false},
		{"laddr no match", func(k, a, b, ps, _ string) []string { return []string{"CLIENT", "KILL", "LADDR", "1.2.3.4:5"} }, "(integer) 0", nil, false},
		{"self by id", func(k, a, b, ps, _ string) []string { return []string{"CLIENT", "KILL", "ID", k, "SKIPME", "no"} }, "(integer) 1", nil, true},
		{"old form kills everyone on the address, caller too", func(k, a, b, ps, sock string) []string { return []string{"CLIENT", "KILL", sock + ":0"} }, "+OK", []string{"a", "b", "ps"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			conns := map[string]*rconn{"killer": l.dial(t), "a": l.dial(t), "b": l.dial(t), "ps": l.dial(t)}
			if got := conns["ps"].do("SUBSCRIBE", "ch"); got != `["subscribe", "ch", (integer) 1]` {
				t.Fatalf("SUBSCRIBE: %s", got)
			}
			ids := map[string]string{}
			for _, n := range []string{"killer", "a", "b"} {
				ids[n] = conns[n].id()
			}
			cmd := tc.kill(ids["killer"], ids["a"], ids["b"], "", l.sock)
			if got := conns["killer"].do(cmd...); got != tc.want {
				t.Fatalf("%v = %s, want %s", cmd, got, tc.want)
			}
			dead := map[string]bool{}
			for _, n := range tc.killed {
				dead[n] = true
			}
			for n, c := range conns {
				if n == "killer" {
					if tc.killerGone && !c.closed() {
						t.Error("killer: connection not closed")
					} else if !tc.killerGone && !c.stillOpen() {
						t.Error("killer: connection closed")
					}
					continue
				}
				if dead[n] {
					if !c.closed() {
						t.Errorf("%s: connection not closed", n)
					}
				} else if n != "ps" && !c.stillOpen() {
					t.Errorf("%s: connection closed", n)
				}
			}
			if !dead["ps"] {
				conns["ps"].send("PING")
				if got := conns["ps"].read(); got != `["pong", ""]` {
					t.Errorf("pub/sub client: %s", got)
				}
			}
			// Everyone is gone from CLIENT LIST once their loops exit.
			deadline := time.Now().Add(5 * time.Second)
			for {
				l.s.clientsMu.Lock()
				n := len(l.s.clients)
				l.s.clientsMu.Unlock()
				want := 4 - len(tc.killed)
				if tc.killerGone {
					want--
				}
				if n == want {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%d clients registered, want %d", n, want)
				}
				time.Sleep(time.Millisecond)
			}
			for _, c := range conns {
				c.c.Close()
			}
			waitClients(t, l.s, 0)
		})
	}
}

// waitClients polls until the registry holds n clients.
func waitClients(t *testing.T, s *Server, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		s.clientsMu.Lock()
		got := len(s.clients)
		s.clientsMu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d clients registered, want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// waitPaused polls until n commands are parked by CLIENT PAUSE.
func waitPaused(t *testing.T, s *Server, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		s.mu.Lock()
		got := s.pause.waiters
		s.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d commands paused, want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestClientPause: during CLIENT PAUSE WRITE a write from another client
// waits (outside the execution lock: reads keep being served) until
// CLIENT UNPAUSE; during PAUSE ALL every command waits until the deadline.
func TestClientPause(t *testing.T) {
	ts := newTestServer(t)
	admin, writer, reader := ts.client(), ts.client(), ts.client()
	if got := ts.do(admin, "CLIENT", "PAUSE", "100000", "WRITE"); got != "+OK\r\n" {
		t.Fatalf("PAUSE: %q", got)
	}
	done := make(chan string, 1)
	go func() { done <- ts.do(writer, "SET", "k", "v") }()
	waitPaused(t, ts.s, 1)
	select {
	case got := <-done:
		t.Fatalf("SET ran during the pause: %q", got)
	default:
	}
	if got := ts.do(reader, "GET", "k"); got != "$-1\r\n" {
		t.Fatalf("GET during WRITE pause: %q", got)
	}
	if got := ts.do(reader, "PING"); got != "+PONG\r\n" {
		t.Fatalf("PING during WRITE pause: %q", got)
	}
	if got := ts.do(admin, "CLIENT", "UNPAUSE"); got != "+OK\r\n" {
		t.Fatalf("UNPAUSE: %q", got)
	}
	select {
	case got := <-done:
		if got != "+OK\r\n" {
			t.Fatalf("SET after UNPAUSE: %q", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("SET still paused after UNPAUSE")
	}
	if got := ts.do(reader, "GET", "k"); got != "$1\r\nv\r\n" {
		t.Fatalf("GET: %q", got)
	}

	// ALL: reads wait too, until the deadline passes on the server clock.
	if got := ts.do(admin, "CLIENT", "PAUSE", "1000", "ALL"); got != "+OK\r\n" {
		t.Fatalf("PAUSE ALL: %q", got)
	}
	go func() { done <- ts.do(reader, "GET", "k") }()
	waitPaused(t, ts.s, 1)
	ts.clk.Advance(999 * time.Millisecond)
	select {
	case got := <-done:
		t.Fatalf("GET ran before the deadline: %q", got)
	default:
	}
	ts.clk.Advance(time.Millisecond)
	select {
	case got := <-done:
		if got != "$1\r\nv\r\n" {
			t.Fatalf("GET after the pause: %q", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("GET still paused after the deadline")
	}
	waitPaused(t, ts.s, 0)
}

// TestClientPauseLive pauses a real server and checks the other clients'
// connections are served while a write waits.
func TestClientPauseLive(t *testing.T) {
	l := startLive(t)
	admin, writer, reader := l.dial(t), l.dial(t), l.dial(t)
	if got := admin.do("CLIENT", "PAUSE", "100000", "WRITE"); got != "+OK" {
		t.Fatalf("PAUSE: %s", got)
	}
	writer.send("SET", "k", "v")
	waitPaused(t, l.s, 1)
	if got := reader.do("GET", "k"); got != "(nil)" {
		t.Fatalf("GET: %s", got)
	}
	if got := admin.do("CLIENT", "UNPAUSE"); got != "+OK" {
		t.Fatalf("UNPAUSE: %s", got)
	}
	if got := writer.read(); got != "+OK" {
		t.Fatalf("SET: %s", got)
	}
	if got := reader.do("GET", "k"); got != `"v"` {
		t.Fatalf("GET: %s", got)
	}
}

// TestClientListLive checks the CLIENT LIST line of real connections.
func TestClientListLive(t *testing.T) {
	l := startLive(t)
	a, b := l.dial(t), l.dial(t)
	b.do("CLIENT", "SETNAME", "bee")
	b.do("SELECT", "3")
	idA, idB := a.id(), b.id()
	got := a.do("CLIENT", "LIST")
	lines := strings.Split(strings.TrimSuffix(strings.Trim(got, `"`), `\n`), `\n`)
	if len(lines) != 2 {
		t.Fatalf("CLIENT LIST: %s", got)
	}
	addr := regexp.QuoteMeta(l.sock + ":0")
	wantA := `^id=` + idA + ` addr=` + addr + ` laddr=` + addr + ` fd=\d+ name= age=\d+ idle=0 flags=U db=0 sub=0 psub=0 ssub=0 multi=-1 qbuf=26 qbuf-free=20448 argv-mem=10 multi-mem=0 rbs=\d+ rbp=\d+ obl=0 oll=0 omem=0 tot-mem=\d+ events=r cmd=client\|list user=default redir=-1 resp=2$`
	wantB := `^id=` + idB + ` addr=` + addr + ` laddr=` + addr + ` fd=\d+ name=bee age=\d+ idle=\d+ flags=U db=3 sub=0 psub=0 ssub=0 multi=-1 qbuf=0 qbuf-free=20474 argv-mem=0 multi-mem=0 rbs=16384 rbp=\d+ obl=0 oll=0 omem=0 tot-mem=\d+ events=r cmd=client\|id user=default redir=-1 resp=2$`
	// Ids follow accept order, which the two dials do not fix.
	byID := map[string]string{}
	for _, line := range lines {
		byID[strings.TrimPrefix(strings.Fields(line)[0], "id=")] = line
	}
	if !regexp.MustCompile(wantA).MatchString(byID[idA]) {
		t.Errorf("own line:\n%s\nwant %s", byID[idA], wantA)
	}
	if !regexp.MustCompile(wantB).MatchString(byID[idB]) {
		t.Errorf("other line:\n%s\nwant %s", byID[idB], wantB)
	}
	if got := a.do("CLIENT", "LIST", "ID", idB, idA, idB); strings.Count(got, "id=") != 3 {
		t.Errorf("CLIENT LIST ID: %s", got)
	}
	if n, _ := strconv.Atoi(idA); n <= 0 {
		t.Errorf("id %q", idA)
	}
}

// TestClientListOwnQbufAfterArrivalWait: a CLIENT LIST that first waits
// for another connection's input (arrival order, order.go) still counts
// its own command in its qbuf, as Redis's query buffer holds a command
// while it runs (the flaky qbuf=0 of TestClientListLive under load).
func TestClientListOwnQbufAfterArrivalWait(t *testing.T) {
	l := startLive(t)
	a, b := l.dial(t), l.dial(t)
	id := a.id()
	req := fmt.Sprintf("*4\r\n$6\r\nCLIENT\r\n$4\r\nLIST\r\n$2\r\nID\r\n$%d\r\n%s\r\n", len(id), id)
	want := fmt.Sprintf(" qbuf=%d qbuf-free=", len(req))
	for i := range 300 {
		b.send("SET", "k", "v") // pending on b as a's CLIENT LIST arrives
		if got := a.do("CLIENT", "LIST", "ID", id); !strings.Contains(got, want) {
			t.Fatalf("round %d: %s", i, got)
		}
		b.read()
	}
}
