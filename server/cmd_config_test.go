package server

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/vigil-kv/vigil/configs"
	"github.com/vigil-kv/vigil/internal/clock"
)

// TestConfigSetAtomic: CONFIG SET of several pairs changes all or nothing,
// and the server follows what changed (the atomics the connection loops
// read, the parsers' bulk limit).
func TestConfigSetAtomic(t *testing.T) {
	ts := newTestServer(t)
	c := ts.client()
	if got := ts.do(c, "CONFIG", "SET", "maxclients", "50", "timeout", "abc"); !strings.HasPrefix(got, "-ERR CONFIG SET failed (possibly related to argument 'timeout')") {
		t.Fatalf("bad pair: %q", got)
	}
	if got, want := ts.s.maxClients.Load(), int64(10000); got != want {
		t.Fatalf("maxclients after a failed SET = %d, want %d", got, want)
	}
	if got := ts.do(c, "CONFIG", "GET", "maxclients"); got != "*2\r\n$10\r\nmaxclients\r\n$5\r\n10000\r\n" {
		t.Fatalf("CONFIG GET after a failed SET: %q", got)
	}
	if got := ts.do(c, "CONFIG", "SET", "maxclients", "50", "timeout", "7", "proto-max-bulk-len", "2mb"); got != "+OK\r\n" {
		t.Fatalf("CONFIG SET: %q", got)
	}
	if ts.s.maxClients.Load() != 50 || ts.s.timeoutSec.Load() != 7 || ts.s.protoMaxBulk.Load() != 2<<20 {
		t.Fatalf("atomics not refreshed: maxclients %d timeout %d proto-max-bulk-len %d",
			ts.s.maxClients.Load(), ts.s.timeoutSec.Load(), ts.s.protoMaxBulk.Load())
	}
}

// TestConfigSetProtoMaxBulkLen: the new limit applies to connected clients.
func TestConfigSetProtoMaxBulkLen(t *testing.T) {
	l := startLive(t)
	a, b := l.dial(t), l.dial(t)
	big := strings.Repeat("x", 1<<20+1)
	if got := b.do("SET", "k", big); got != "+OK" {
		t.Fatalf("SET: %s", got)
	}
	if got := a.do("CONFIG", "SET", "proto-max-bulk-len", "1mb"); got != "+OK" {
		t.Fatalf("CONFIG SET: %s", got)
	}
	// The header alone is refused now: the bulk is over the limit.
	if _, err := b.c.Write([]byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1048577\r\n")); err != nil {
		t.Fatal(err)
	}
	if got := b.read(); got != "-ERR Protocol error: invalid bulk length" {
		t.Fatalf("SET over the new limit: %s", got)
	}
	if !b.closed() {
		t.Fatal("connection not closed after the protocol error")
	}
}

// TestConfigSetLoglevel: CONFIG SET loglevel changes what the server logs.
func TestConfigSetLoglevel(t *testing.T) {
	var buf bytes.Buffer
	ts := newTestServerLog(t, zerolog.New(&buf).Level(zerolog.InfoLevel))
	s := ts.s
	c := ts.client()
	s.log.Debug().Msg("hidden")
	if buf.Len() != 0 {
		t.Fatalf("debug logged at notice: %s", buf.String())
	}
	if got := ts.do(c, "CONFIG", "SET", "loglevel", "debug"); got != "+OK\r\n" {
		t.Fatalf("CONFIG SET: %q", got)
	}
	s.log.Debug().Msg("shown")
	if !strings.Contains(buf.String(), "shown") {
		t.Fatalf("debug not logged at debug: %q", buf.String())
	}
	buf.Reset()
	ts.do(c, "CONFIG", "SET", "loglevel", "warning")
	s.log.Info().Msg("hidden")
	s.log.Warn().Msg("warned")
	if got := buf.String(); strings.Contains(got, "hidden") || !strings.Contains(got, "warned") {
		t.Fatalf("at warning: %q", got)
	}
}

// TestConfigRewriteWithFile: with a config file, CONFIG REWRITE writes it.
func TestConfigRewriteWithFile(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/vigil.conf"
	if err := writeFile(path, "port 0\nmaxclients 100\n"); err != nil {
		t.Fatal(err)
	}
	cfg, err := configs.Load(configs.LoadOptions{ConfigFile: path})
	if err != nil {
		t.Fatal(err)
	}
	clk := clock.NewFake(time.Unix(1700000000, 0))
	s, err := New(cfg, zerolog.Nop(), WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{s: s, clk: clk}
	c := ts.client()
	if got := ts.do(c, "CONFIG", "SET", "maxclients", "77"); got != "+OK\r\n" {
		t.Fatalf("CONFIG SET: %q", got)
	}
	if got := ts.do(c, "CONFIG", "REWRITE"); got != "+OK\r\n" {
		t.Fatalf("CONFIG REWRITE: %q", got)
	}
	data, err := readFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(data, "maxclients 77") {
		t.Fatalf("rewritten file:\n%s", data)
	}
}

func writeFile(path, data string) error { return os.WriteFile(path, []byte(data), 0o644) }

func readFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	return string(b), err
}

// TestConfigSetTimeout: idle clients are closed once CONFIG SET timeout
// applies, even those already waiting for input; pub/sub clients are not.
func TestConfigSetTimeout(t *testing.T) {
	l := startLive(t)
	idle, ps, admin := l.dial(t), l.dial(t), l.dial(t)
	idle.do("PING")
	ps.do("SUBSCRIBE", "ch")
	if got := admin.do("CONFIG", "SET", "timeout", "1"); got != "+OK" {
		t.Fatalf("CONFIG SET: %s", got)
	}
	if !idle.closedByCron(l) {
		t.Fatal("idle client not closed")
	}
	ps.send("PING")
	if got := ps.read(); got != `["pong", ""]` {
		t.Fatalf("pub/sub client: %s", got)
	}
}

// TestConfigRewriteReplicaof: CONFIG GET replicaof and CONFIG REWRITE show
// the current master, as Redis's (server.masterhost), not the one of the
// startup file: REPLICAOF NO ONE drops the line, REPLICAOF host port writes
// it. A coordinated failover relies on it (the promoted replica is sent
// SLAVEOF NO ONE + CONFIG REWRITE).
func TestConfigRewriteReplicaof(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/vigil.conf"
	if err := writeFile(path, "port 0\nreplicaof 127.0.0.1 1\n"); err != nil {
		t.Fatal(err)
	}
	cfg, err := configs.Load(configs.LoadOptions{ConfigFile: path})
	if err != nil {
		t.Fatal(err)
	}
	clk := clock.NewFake(time.Unix(1700000000, 0))
	s, err := New(cfg, zerolog.Nop(), WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{s: s, clk: clk}
	c := ts.client()
	rewrite := func() string {
		t.Helper()
		if got := ts.do(c, "CONFIG", "REWRITE"); got != "+OK\r\n" {
			t.Fatalf("CONFIG REWRITE: %q", got)
		}
		data, err := readFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for _, l := range strings.Split(data, "\n") {
			if strings.HasPrefix(l, "replicaof") || strings.HasPrefix(l, "slaveof") {
				lines = append(lines, l)
			}
		}
		return strings.Join(lines, "|")
	}
	port := closedPort(t)
	if got := ts.do(c, "REPLICAOF", "127.0.0.1", port); got != "+OK\r\n" {
		t.Fatalf("REPLICAOF: %q", got)
	}
	if got, want := rewrite(), "replicaof 127.0.0.1 "+port; got != want {
		t.Errorf("after REPLICAOF the file says %q, want %q", got, want)
	}
	if got := ts.do(c, "REPLICAOF", "NO", "ONE"); got != "+OK\r\n" {
		t.Fatalf("REPLICAOF NO ONE: %q", got)
	}
	if got := ts.do(c, "CONFIG", "GET", "replicaof"); got != "*2\r\n$9\r\nreplicaof\r\n$0\r\n\r\n" {
		t.Errorf("CONFIG GET replicaof after REPLICAOF NO ONE: %q", got)
	}
	if got := rewrite(); got != "" {
		t.Errorf("after REPLICAOF NO ONE the file says %q", got)
	}
}
