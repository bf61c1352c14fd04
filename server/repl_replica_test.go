package server

import (
	"bufio"
	"strings"
	"testing"
	"testing/iotest"
)

// readStreamCommand splits the master's stream into commands with their
// exact byte counts (the offsets a replica ACKs), whatever the read sizes.
func TestReadStreamCommand(t *testing.T) {
	stream := "*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n*1\r\n$4\r\nPING\r\n"
	br := bufio.NewReaderSize(iotest.OneByteReader(strings.NewReader(stream)), 16)
	var raw []byte
	type got struct {
		argv string
		n    int
	}
	want := []got{{"SELECT 0", 23}, {"", 1}, {"SET k ", 26}, {"PING", 14}}
	total := 0
	for i, w := range want {
		argv, n, err := readStreamCommand(br, &raw)
		if err != nil {
			t.Fatalf("command %d: %v", i, err)
		}
		var parts []string
		for _, a := range argv {
			parts = append(parts, string(a))
		}
		if g := strings.Join(parts, " "); g != w.argv || n != w.n || len(raw) != n {
			t.Fatalf("command %d: %q (%d bytes, raw %d), want %q (%d)", i, g, n, len(raw), w.argv, w.n)
		}
		total += n
	}
	if total != len(stream) {
		t.Fatalf("counted %d bytes of %d", total, len(stream))
	}
}

// A hostile or broken master gets an error, never a panic or a huge
// allocation.
func TestReadStreamCommandHostile(t *testing.T) {
	for _, in := range []string{
		"SET k v\r\n",               // inline text from a master
		"*999999999999\r\n",         // absurd count
		"*1048576\r\n$1\r\n",        // a big count, truncated: no big allocation
		"*1\r\n$-1\r\n",             // negative length
		"*1\r\n$99999999999\r\n",    // absurd length
		"*1\r\n+OK\r\n",             // not a bulk
		"*1\r\n$5\r\nab",            // truncated
		"*x\r\n",                    // not a number
		"*2\r\n$3\r\nGET\r\n$1\r\n", // truncated argument
	} {
		var raw []byte
		br := bufio.NewReaderSize(strings.NewReader(in), 16)
		if _, _, err := readStreamCommand(br, &raw); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}

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
