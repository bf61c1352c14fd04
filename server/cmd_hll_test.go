package server

import (
	"strconv"
	"strings"
	"testing"
)

// hllEventCases are HyperLogLog commands with what redis-server 7.0.15
// did for each: the server.dirty increment (PFADD counts the creation and
// every changed register; PFCOUNT refreshing its cache is a write) and
// the keyevent notifications (notify-keyspace-events EAnm), in order.
var hllEventCases = []eventCase{
	{[]string{"PFADD", "k", "a", "b", "c"}, 4, []string{"new k", "pfadd k"}},
	{[]string{"PFADD", "k", "a"}, 0, nil},
	{[]string{"PFADD", "k"}, 0, nil},
	{[]string{"PFCOUNT", "k"}, 1, nil}, // the cached cardinality written back
	{[]string{"PFCOUNT", "k"}, 0, nil},
	{[]string{"PFADD", "k", "d", "e"}, 2, []string{"pfadd k"}},
	{[]string{"PFCOUNT", "nokey"}, 0, []string{"keymiss nokey"}},
	{[]string{"PFCOUNT", "k", "nokey"}, 0, []string{"keymiss nokey"}},
	{[]string{"PFMERGE", "d", "k", "nokey"}, 1, []string{"keymiss d", "keymiss nokey", "new d", "pfadd d"}},
	{[]string{"PFMERGE", "d"}, 1, []string{"pfadd d"}},
	{[]string{"PFDEBUG", "TODENSE", "d"}, 1, nil},
	{[]string{"PFDEBUG", "TODENSE", "d"}, 0, nil},
	{[]string{"PFDEBUG", "ENCODING", "nokey"}, 0, nil},
	{[]string{"PFDEBUG", "GETREG", "k"}, 1, nil}, // converted to dense
	{[]string{"PFDEBUG", "GETREG", "k"}, 0, nil},
	{[]string{"SET", "s", "plain"}, 1, []string{"new s", "set s"}},
	{[]string{"PFADD", "s", "x"}, 0, nil},
	{[]string{"PFMERGE", "d", "s"}, 0, nil},
}

// TestHLLWritesAndEvents checks Vigil against hllEventCases.
func TestHLLWritesAndEvents(t *testing.T) {
	l := startLive(t, "--notify-keyspace-events", "EAnm")
	eventRun(t, hllEventCases, l.dial(t), l.dial(t), l.dial(t))
}

// TestHLLWritesAndEventsRedis (interop) checks hllEventCases against a
// live redis-server.
func TestHLLWritesAndEventsRedis(t *testing.T) {
	eventRunRedis(t, hllEventCases)
}

// hllWatchRun: a PFCOUNT that refreshes the cached cardinality is a write
// for WATCH (signalModifiedKey); one that answers from the cache is not,
// nor is a PFADD that changes nothing.
func hllWatchRun(t *testing.T, c, other *rconn) {
	t.Helper()
	c.do("PFADD", "w", "a", "b")
	steps := []struct {
		cmd  []string
		exec string
	}{
		{[]string{"PFCOUNT", "w"}, "(nil)"},
		{[]string{"PFCOUNT", "w"}, "[+OK]"},
		{[]string{"PFADD", "w", "a"}, "[+OK]"},
		{[]string{"PFADD", "w", "zz"}, "(nil)"},
		{[]string{"PFCOUNT", "w", "nokey"}, "[+OK]"},
		{[]string{"PFMERGE", "w"}, "(nil)"},
	}
	for _, s := range steps {
		c.do("WATCH", "w")
		other.do(s.cmd...)
		c.do("MULTI")
		c.do("SET", "x", "1")
		if got := c.do("EXEC"); got != s.exec {
			t.Errorf("WATCH w, %v, EXEC: %s, want %s", s.cmd, got, s.exec)
		}
	}
}

func TestHLLWatch(t *testing.T) {
	l := startLive(t)
	hllWatchRun(t, l.dial(t), l.dial(t))
}

func TestHLLWatchRedis(t *testing.T) {
	dial := startRedis(t)
	conn := func() *rconn {
		nc, br := dial(2)
		return &rconn{t: t, c: nc, br: br}
	}
	hllWatchRun(t, conn(), conn())
}

// FuzzHLLCommands gives arbitrary bytes, as a value behind a valid or
// invalid HLL header, to PFCOUNT, PFADD, PFMERGE and PFDEBUG: every reply
// is a well-formed RESP reply (a count, OK, or Redis's WRONGTYPE /
// INVALIDOBJ error), never a panic, and a value a command left behind
// still answers.
func FuzzHLLCommands(f *testing.F) {
	f.Add(byte(1), []byte("\x7f\xff"), "a")
	f.Add(byte(1), []byte("\x7f"), "b")
	f.Add(byte(1), []byte("\x7f\xfe\x80"), "c")
	f.Add(byte(1), []byte(""), "")
	f.Add(byte(1), []byte("\x7f\xbe\x40\x00\x40\x40"), "x")
	f.Add(byte(1), []byte("\x80\x80\xfc\x7f\xf0"), "zz")
	f.Add(byte(0), make([]byte, 12288), "a")
	f.Add(byte(2), []byte("\x7f\xff"), "a")
	f.Add(byte(0xff), []byte("HYLL"), "a")
	ts := newTestServer(f)
	c := ts.client()
	f.Fuzz(func(t *testing.T, enc byte, body []byte, ele string) {
		var v []byte
		if enc == 0xff {
			v = body // no header at all
		} else {
			v = append([]byte("HYLL"), enc, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80)
			v = append(v, body...)
		}
		sparseMax := strconv.Itoa(int(len(body)%64) * 50)
		for _, cmd := range [][]string{
			{"CONFIG", "SET", "hll-sparse-max-bytes", sparseMax},
			{"SET", "f", string(v)},
			{"SET", "g", string(v)},
			{"PFCOUNT", "f"},
			{"PFCOUNT", "f", "g", "nokey"},
			{"PFDEBUG", "DECODE", "f"},
			{"PFDEBUG", "ENCODING", "f"},
			{"PFADD", "f", ele, "e2", "e3"},
			{"PFCOUNT", "f"},
			{"PFMERGE", "g", "f"},
			{"PFMERGE", "h", "f", "g"},
			{"PFDEBUG", "TODENSE", "g"},
			{"PFCOUNT", "g"},
			{"PFDEBUG", "GETREG", "f"},
			{"PFADD", "g", ele},
			{"PFCOUNT", "h", "g", "f"},
			{"DEL", "f", "g", "h"},
		} {
			out := ts.do(c, cmd...)
			if _, err := render(out); err != nil {
				t.Fatalf("%q: malformed reply %q: %v", cmd, out, err)
			}
			if strings.HasPrefix(out, "-") && !strings.HasPrefix(out, "-WRONGTYPE") && !strings.HasPrefix(out, "-INVALIDOBJ") && !strings.HasPrefix(out, "-ERR HLL encoding is not sparse") {
				t.Fatalf("%q: unexpected error %q", cmd, out)
			}
		}
	})
}
