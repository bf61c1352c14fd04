package server

import (
	"bufio"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/vigil-kv/vigil/configs"
	"github.com/vigil-kv/vigil/internal/clock"
	"github.com/vigil-kv/vigil/replication"
)

// SAVE resets the dirty counter: the negative delta must not propagate it
// (call() clamps dirty to 0). It did, shifting replicas by 14 bytes
// against the repl-offset the RDB recorded.
func TestSaveNotPropagated(t *testing.T) {
	ts := newTestServer(t)
	ts.s.mu.Lock()
	ts.s.cfg.Dir = t.TempDir()
	ts.s.mu.Unlock()
	c := ts.client()
	rec := &Recorder{Target: TargetAll}
	ts.s.AddPropagator(rec)
	ts.do(c, "SET", "a", "1")
	if got := ts.do(c, "SAVE"); got != "+OK\r\n" {
		t.Fatalf("SAVE: %q", got)
	}
	ts.do(c, "SET", "b", "1")
	if got := fmtCmds(parseAOF(t, rec.Bytes())); got != `["SELECT" "0"] ["SET" "a" "1"] ["SET" "b" "1"]` {
		t.Fatalf("stream %s", got)
	}
}

// While a replication payload loads (replStartLoading) the server answers
// -LOADING, except with swapdb's async loading, which serves the old data
// and refuses only the commands flagged no-async-loading; INFO says which.
func TestReplLoadingStates(t *testing.T) {
	ts := newTestServer(t)
	c := ts.client()
	if got := ts.do(c, "SET", "k", "old"); got != "+OK\r\n" {
		t.Fatalf("SET: %q", got)
	}
	l := &replLink{}
	ts.s.mu.Lock()
	ts.s.repl.link = l
	ts.s.replStartLoading(l, 100, true)
	ts.s.mu.Unlock()
	const loadingErr = "-LOADING Redis is loading the dataset in memory\r\n"
	if got := ts.do(c, "GET", "k"); got != "$3\r\nold\r\n" {
		t.Errorf("GET during async loading: %q, want the old value", got)
	}
	if got := ts.do(c, "BGSAVE"); got != loadingErr {
		t.Errorf("BGSAVE (no-async-loading) during async loading: %q", got)
	}
	// replication.tcl's "Blocked commands and configs during
	// async-loading" (external:skip): server.loading is 1 during an async
	// load too, so the DENY_LOADING_CONFIG directives are refused, and
	// REPLICAOF is no-async-loading. Vigil applied CONFIG SET appendonly.
	if got := ts.do(c, "CONFIG", "SET", "appendonly", "no"); got != loadingErr {
		t.Errorf("CONFIG SET appendonly during async loading: %q", got)
	}
	if got := ts.do(c, "REPLICAOF", "NO", "ONE"); got != loadingErr {
		t.Errorf("REPLICAOF NO ONE during async loading: %q", got)
	}
	info := ts.do(c, "INFO", "persistence")
	if !strings.Contains(info, "\r\nloading:0\r\n") || !strings.Contains(info, "\r\nasync_loading:1\r\n") ||
		!strings.Contains(info, "\r\nloading_total_bytes:100\r\n") {
		t.Errorf("INFO during async loading:\n%s", info)
	}
	ts.s.mu.Lock()
	ts.s.replStopLoading(l)
	ts.s.replStartLoading(l, 100, false)
	ts.s.mu.Unlock()
	if got := ts.do(c, "GET", "k"); got != loadingErr {
		t.Errorf("GET during loading: %q", got)
	}
	info = ts.do(c, "INFO", "persistence")
	if !strings.Contains(info, "\r\nloading:1\r\n") || !strings.Contains(info, "\r\nasync_loading:0\r\n") {
		t.Errorf("INFO during loading:\n%s", info)
	}
	ts.s.mu.Lock()
	ts.s.replStopLoading(l)
	ts.s.repl.link = nil
	ts.s.mu.Unlock()
	if got := ts.do(c, "GET", "k"); got != "$3\r\nold\r\n" {
		t.Errorf("GET after loading: %q", got)
	}
}

// applyStream runs the master's stream in batches: every byte is proxied
// to the backlog unchanged, the offsets count every byte (the GETACK
// answer excludes the GETACK itself), a command split across reads runs
// once whole, and each batch's commands see the time of their batch, not
// a time left over from an earlier batch (the master client's commands
// ran with the link's first command time, and each of them went to the
// slowlog as taking as long as the link was up).
func TestApplyStreamBatches(t *testing.T) {
	cfg, err := configs.Load(configs.LoadOptions{Args: []string{"--dir", t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(cfg, zerolog.Nop()) // the real clock
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{s: s, clk: clock.NewFake(time.Now())}
	l := &replLink{hs: replication.NewHandshake(replication.HandshakeConfig{}, nil), stop: make(chan struct{})}
	s.mu.Lock()
	s.repl.link = l
	s.ks.Replica = true
	s.createBacklog()
	s.mu.Unlock()
	a, b := net.Pipe()
	defer b.Close()
	done := make(chan error, 1)
	go func() { done <- s.applyStream(l, a, bufio.NewReaderSize(a, 64<<10), time.Minute) }()
	applied := func(off int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			s.mu.Lock()
			got := l.offsets.Applied
			s.mu.Unlock()
			if got == int64(off) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("applied offset %d, want %d", got, off)
			}
			time.Sleep(time.Millisecond)
		}
	}
	getack := "*3\r\n$8\r\nREPLCONF\r\n$6\r\nGETACK\r\n$1\r\n*\r\n"
	part1 := "*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n\n*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\n1\r\n*1\r\n$5\r\nMULTI\r\n*3\r\n$4\r\nSADD"
	part2 := "\r\n$1\r\ns\r\n$1\r\nx\r\n*1\r\n$4\r\nEXEC\r\n" + getack
	stream := part1 + part2
	if _, err := b.Write([]byte(part1)); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Write([]byte(part2)); err != nil {
		t.Fatal(err)
	}
	ack := replication.AckCommand(int64(len(stream) - len(getack)))
	buf := make([]byte, len(ack))
	if _, err := io.ReadFull(b, buf); err != nil || string(buf) != string(ack) {
		t.Fatalf("GETACK answered %q (%v), want %q", buf, err, ack)
	}
	applied(len(stream))
	c := ts.client()
	if got := ts.do(c, "SMEMBERS", "s"); got != "*1\r\n$1\r\nx\r\n" {
		t.Fatalf("SMEMBERS s: %q", got)
	}
	// The next batch runs strictly later than the first one did.
	t1 := time.Now().UnixMilli()
	for time.Now().UnixMilli() <= t1 {
		time.Sleep(time.Millisecond)
	}
	before := time.Now().UnixMilli()
	set := "*5\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n$2\r\nPX\r\n$6\r\n100000\r\n"
	stream += set
	if _, err := b.Write([]byte(set)); err != nil {
		t.Fatal(err)
	}
	applied(len(stream))
	got := ts.do(c, "PEXPIRETIME", "k")
	at, err := strconv.ParseInt(strings.Trim(got, ":\r\n"), 10, 64)
	if err != nil || at < before+100000 {
		t.Fatalf("PEXPIRETIME k: %q, want at least %d: the command ran with an earlier batch's time", got, before+100000)
	}
	s.mu.Lock()
	proxied, ok := s.repl.backlog.ReadFrom(1)
	s.mu.Unlock()
	if !ok || string(proxied) != stream {
		t.Fatalf("backlog %q, want the stream %q", proxied, stream)
	}
	b.Close()
	if err := <-done; err == nil {
		t.Fatal("applyStream returned no error at the end of the stream")
	}
}
