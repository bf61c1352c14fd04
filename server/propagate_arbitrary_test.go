package server

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// arbitraryKeysCmds: SCAN and RANDOMKEY run directly lazily expire two
// keys each; Redis 7.0.15 propagates those DELs one by one, unwrapped
// (CMD_TOUCHES_ARBITRARY_KEYS in propagatePendingCommands), while the
// same SCAN inside MULTI/EXEC is one transaction. Which expired key goes
// first follows each server's hash order, so the comparison sorts runs of
// DELs (normalizeDelRuns).
var arbitraryKeysCmds = [][]string{
	{"SET", "k1", "v", "PXAT", "1"}, {"SET", "k2", "v", "PXAT", "1"}, {"SCAN", "0"},
	{"SET", "k3", "v", "PXAT", "1"}, {"SET", "k4", "v", "PXAT", "1"}, {"RANDOMKEY"},
	{"SET", "k5", "v", "PXAT", "1"}, {"SET", "k6", "v", "PXAT", "1"}, {"MULTI"}, {"SCAN", "0"}, {"EXEC"},
}

var arbitraryKeysWant = [][]string{
	{"SET", "k1", "v", "PXAT", "1"}, {"SET", "k2", "v", "PXAT", "1"}, {"DEL", "k1"}, {"DEL", "k2"},
	{"SET", "k3", "v", "PXAT", "1"}, {"SET", "k4", "v", "PXAT", "1"}, {"DEL", "k3"}, {"DEL", "k4"},
	{"SET", "k5", "v", "PXAT", "1"}, {"SET", "k6", "v", "PXAT", "1"}, {"MULTI"}, {"DEL", "k5"}, {"DEL", "k6"}, {"EXEC"},
}

// wantArbitrary is arbitraryKeysWant rendered as normalizeDelRuns does.
func wantArbitrary() string {
	var cmds [][][]byte
	for _, c := range arbitraryKeysWant {
		var argv [][]byte
		for _, a := range c {
			argv = append(argv, []byte(a))
		}
		cmds = append(cmds, argv)
	}
	return normalizeDelRuns(cmds)
}

// normalizeDelRuns renders a stream with each run of consecutive DELs
// sorted.
func normalizeDelRuns(cmds [][][]byte) string {
	var out, run []string
	flush := func() {
		slices.Sort(run)
		out = append(out, run...)
		run = run[:0]
	}
	for _, c := range cmds {
		s := "[" + fmtCmd(c) + "]"
		if strings.HasPrefix(s, `["DEL" `) {
			run = append(run, s)
			continue
		}
		flush()
		out = append(out, s)
	}
	flush()
	return strings.Join(out, " ")
}

func TestPropagateArbitraryKeysUnwrapped(t *testing.T) {
	ts := newTestServer(t)
	c := ts.client()
	rec := &Recorder{}
	ts.s.AddPropagator(rec)
	ts.do(c, "FLUSHALL")
	rec.Reset()
	rec.stream.Assume(0)
	for _, cmd := range arbitraryKeysCmds {
		ts.do(c, cmd...)
		ts.clk.Advance(time.Millisecond)
	}
	if got := normalizeDelRuns(parseAOF(t, rec.Bytes())); got != wantArbitrary() {
		t.Fatalf("stream:\n got: %s\nwant: %s", got, wantArbitrary())
	}
}

// TestPropagateArbitraryKeysUnwrappedRedis (interop): the stream above is
// redis-server 7.0.15's AOF.
func TestPropagateArbitraryKeysUnwrappedRedis(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server")
	}
	dial, aof := startRedisAOF(t)
	rc, rbr := dial(2)
	rawDo(t, rc, rbr, "FLUSHALL")
	mark := len(aof.incr(t))
	for _, cmd := range arbitraryKeysCmds {
		rawDo(t, rc, rbr, cmd...)
	}
	if got := normalizeDelRuns(parseAOF(t, aof.incr(t)[mark:])); got != wantArbitrary() {
		t.Fatalf("redis-server's AOF:\n got: %s\nwant: %s", got, wantArbitrary())
	}
}
