package server

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/server/keyspace"
)

// zsetEventCases are sorted set commands with what redis-server 7.0.15 did
// for each: the server.dirty increment and the keyevent notifications
// (notify-keyspace-events EAnm), in order.
var zsetEventCases = []eventCase{
	{[]string{"ZADD", "z", "1", "a", "2", "b"}, 2, []string{"new z", "zadd z"}},
	{[]string{"ZADD", "z", "1", "a"}, 0, nil},
	{[]string{"ZADD", "z", "XX", "1", "x"}, 0, nil},
	{[]string{"ZADD", "nz", "XX", "1", "x"}, 0, nil},
	{[]string{"ZADD", "z", "CH", "5", "a"}, 1, []string{"zadd z"}},
	{[]string{"ZINCRBY", "z", "1", "a"}, 1, []string{"zincr z"}},
	{[]string{"ZINCRBY", "z", "0", "a"}, 0, nil},
	{[]string{"ZADD", "z", "INCR", "1", "a"}, 1, []string{"zincr z"}},
	{[]string{"ZADD", "z", "INCR", "-inf", "a", "1", "c"}, 0, nil},
	{[]string{"ZREM", "z", "a", "nope"}, 1, []string{"zrem z"}},
	{[]string{"ZSCORE", "nokey", "a"}, 0, []string{"keymiss nokey"}},
	{[]string{"ZADD", "z", "3", "c", "4", "d"}, 2, []string{"zadd z"}},
	{[]string{"ZREMRANGEBYSCORE", "z", "3", "3"}, 1, []string{"zremrangebyscore z"}},
	{[]string{"ZREMRANGEBYSCORE", "z", "30", "30"}, 0, nil},
	{[]string{"ZREMRANGEBYRANK", "z", "0", "0"}, 1, []string{"zremrangebyrank z"}},
	{[]string{"ZADD", "l", "0", "a", "0", "b"}, 2, []string{"new l", "zadd l"}},
	{[]string{"ZREMRANGEBYLEX", "l", "-", "+"}, 2, []string{"zremrangebylex l", "del l"}},
	{[]string{"ZPOPMIN", "z"}, 1, []string{"zpopmin z", "del z"}},
	{[]string{"ZPOPMAX", "z", "5"}, 0, nil},
	{[]string{"ZADD", "z", "1", "a", "2", "b", "3", "c"}, 3, []string{"new z", "zadd z"}},
	{[]string{"ZUNIONSTORE", "u", "1", "z"}, 1, []string{"new u", "zunionstore u"}},
	{[]string{"ZINTERSTORE", "u", "2", "z", "nokey"}, 1, []string{"keymiss nokey", "del u"}},
	{[]string{"ZDIFFSTORE", "u", "1", "z"}, 1, []string{"new u", "zdiffstore u"}},
	{[]string{"ZRANGESTORE", "r", "z", "0", "1"}, 1, []string{"new r", "zrangestore r"}},
	{[]string{"ZRANGESTORE", "r", "nokey", "0", "1"}, 1, []string{"keymiss nokey", "del r"}},
	{[]string{"ZRANGE", "nokey", "0", "1"}, 0, []string{"keymiss nokey"}},
	{[]string{"ZMPOP", "1", "z", "MIN", "COUNT", "10"}, 3, []string{"zpopmin z", "del z"}},
	{[]string{"ZADD", "z", "1", "a"}, 1, []string{"new z", "zadd z"}},
	{[]string{"BZPOPMAX", "z", "0"}, 1, []string{"zpopmax z", "del z"}},
}

// TestZSetWritesAndEvents checks Vigil against zsetEventCases.
func TestZSetWritesAndEvents(t *testing.T) {
	l := startLive(t, "--notify-keyspace-events", "EAnm")
	eventRun(t, zsetEventCases, l.dial(t), l.dial(t), l.dial(t))
}

// TestZSetWritesAndEventsRedis (interop) checks zsetEventCases against a
// live redis-server.
func TestZSetWritesAndEventsRedis(t *testing.T) {
	eventRunRedis(t, zsetEventCases)
}

// TestBZPop: BZPOPMIN/BZPOPMAX/BZMPOP block until a write makes one of
// their keys a non-empty sorted set (a key of another type does not serve
// them), are served in blocking order while the key has elements, time out
// with a null array, and propagate as ZPOPMIN/ZPOPMAX (BZMPOP with the
// popped count), after the write that served them.
func TestBZPop(t *testing.T) {
	ts := newTestServer(t)
	rec := &Recorder{}
	ts.s.AddPropagator(rec)
	a, b, cc, w := ts.client(), ts.client(), ts.client(), ts.client()
	if got := ts.do(a, "BZPOPMIN", "k1", "k2", "0"); got != "" {
		t.Fatalf("BZPOPMIN replied %q, want to block", got)
	}
	if got := ts.do(b, "BZMPOP", "0", "1", "k2", "MAX", "COUNT", "5"); got != "" {
		t.Fatalf("BZMPOP replied %q, want to block", got)
	}
	if got := ts.do(cc, "BZPOPMAX", "k3", "1.5"); got != "" {
		t.Fatalf("BZPOPMAX replied %q, want to block", got)
	}
	ts.do(w, "SET", "k1", "str")
	if got := ts.take(a); got != "" || !ts.isBlocked(a) {
		t.Fatalf("a got %q after SET, want still blocked", got)
	}
	ts.do(w, "DEL", "k1")
	ts.do(w, "ZADD", "k2", "1", "x", "2", "y", "3", "z")
	if got := ts.take(a); got != "*3\r\n$2\r\nk2\r\n$1\r\nx\r\n$1\r\n1\r\n" {
		t.Errorf("a got %q", got)
	}
	if got := ts.take(b); got != "*2\r\n$2\r\nk2\r\n*2\r\n*2\r\n$1\r\nz\r\n$1\r\n3\r\n*2\r\n$1\r\ny\r\n$1\r\n2\r\n" {
		t.Errorf("b got %q", got)
	}
	if got := ts.do(w, "EXISTS", "k2"); got != ":0\r\n" {
		t.Errorf("EXISTS k2 = %q", got)
	}
	ts.clk.Advance(1499 * time.Millisecond)
	if got := ts.take(cc); got != "" {
		t.Fatalf("cc got %q before its timeout", got)
	}
	ts.clk.Advance(time.Millisecond)
	deadline := time.Now().Add(5 * time.Second)
	for ts.isBlocked(cc) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if got := ts.take(cc); got != nullArray {
		t.Errorf("cc got %q on timeout, want a null array", got)
	}
	got := fmtCmds(parseAOF(t, rec.Bytes()))
	want := `["SELECT" "0"] ["SET" "k1" "str"] ["DEL" "k1"] ["ZADD" "k2" "1" "x" "2" "y" "3" "z"] ["ZPOPMIN" "k2"] ["ZPOPMAX" "k2" "2"]`
	if got != want {
		t.Errorf("stream\n got %s\nwant %s", got, want)
	}
}

// fakeSet stands for a set value until the set type is merged.
type fakeSet []string

func (fakeSet) Type() keyspace.Type         { return keyspace.TypeSet }
func (fakeSet) Encoding() keyspace.Encoding { return keyspace.EncodingHashtable }
func (fakeSet) Size(int) uint64             { return 100 }
func (s fakeSet) Dup() keyspace.Value       { return s }

// TestZSetOpsWithSetSources: a set is a source of ZUNION/ZINTER/ZDIFF with
// score 1 (weights apply) once setMembersForZ knows how to read it, and
// WRONGTYPE before.
func TestZSetOpsWithSetSources(t *testing.T) {
	ts := newTestServer(t)
	c := ts.client()
	ts.do(c, "ZADD", "z", "2", "a", "5", "b")
	ts.s.mu.Lock()
	ts.s.ks.DBs[0].Set([]byte("s"), fakeSet{"a", "c"}, 0)
	ts.s.mu.Unlock()
	old := setMembersForZ
	defer func() { setMembersForZ = old }()
	setMembersForZ = nil
	if got := ts.doR(t, c, "ZUNION", "2", "z", "s"); !strings.HasPrefix(got, "-WRONGTYPE") {
		t.Fatalf("without the hook: %s", got)
	}
	setMembersForZ = func(v keyspace.Value) []string { return v.(fakeSet) }
	for _, tc := range []struct{ cmd, want string }{
		{"ZUNION 2 z s WEIGHTS 1 10 WITHSCORES", `["b", "5", "c", "10", "a", "12"]`},
		{"ZINTER 2 z s WITHSCORES", `["a", "3"]`},
		{"ZDIFF 2 z s WITHSCORES", `["b", "5"]`},
		{"ZDIFF 2 s z", `["c"]`},
		{"ZINTERCARD 2 s z", `(integer) 1`},
	} {
		if got := ts.doR(t, c, strings.Fields(tc.cmd)...); got != tc.want {
			t.Errorf("%s = %s, want %s", tc.cmd, got, tc.want)
		}
	}
}

// TestZSetStoredResultsSurviveInPlaceWrites: ZADD and ZREM write a
// listpack sorted set in place, so a stored result (ZUNIONSTORE,
// ZINTERSTORE, ZDIFFSTORE, ZRANGESTORE, GEOSEARCHSTORE) made from listpack
// sources must not keep views of their buffers: the results here are
// skiplists (more than 128 members), and their members must read the same
// after the sources are rewritten in place.
func TestZSetStoredResultsSurviveInPlaceWrites(t *testing.T) {
	ts := newTestServer(t)
	c := ts.client()
	for i := 0; i < 100; i++ {
		n := strconv.Itoa(i)
		ts.do(c, "ZADD", "a", n, "member:a:"+n)
		ts.do(c, "ZADD", "b", n, "member:b:"+n)
		ts.do(c, "GEOADD", "g", strconv.FormatFloat(float64(i)/100, 'f', 2, 64), "1", "place:"+n)
	}
	for _, k := range []string{"a", "b", "g"} {
		if got := ts.doR(t, c, "OBJECT", "ENCODING", k); got != `"listpack"` {
			t.Fatalf("%s: %s", k, got)
		}
	}
	ts.do(c, "ZUNIONSTORE", "u", "2", "a", "b")
	ts.do(c, "ZUNIONSTORE", "g2", "2", "g", "a")
	ts.do(c, "GEOSEARCHSTORE", "gs", "g2", "FROMLONLAT", "0.5", "1", "BYRADIUS", "20000", "km", "ASC")
	ts.do(c, "ZINTERSTORE", "i", "2", "u", "a")
	ts.do(c, "ZDIFFSTORE", "d", "2", "u", "b")
	ts.do(c, "ZRANGESTORE", "r", "u", "0", "-1")
	want := map[string]string{}
	for _, k := range []string{"u", "g2", "gs", "i", "d", "r"} {
		want[k] = ts.doR(t, c, "ZRANGE", k, "0", "-1", "WITHSCORES")
	}
	for _, k := range []string{"u", "g2", "gs", "r"} {
		if got := ts.doR(t, c, "OBJECT", "ENCODING", k); got != `"skiplist"` {
			t.Fatalf("%s: %s", k, got)
		}
	}
	// Rewrite every source in place: remove the lowest, add one at the
	// front, move members.
	for i := 0; i < 100; i++ {
		n := strconv.Itoa(i)
		for _, k := range []string{"a", "b", "g"} {
			ts.do(c, "ZREM", k, "member:"+k+":"+n, "place:"+n)
			ts.do(c, "ZADD", k, "-"+n, "zzzzzzzz:"+k+":"+n)
			ts.do(c, "ZADD", k, "1000", "zzzzzzzz:"+k+":"+strconv.Itoa(i/2))
		}
	}
	for k, w := range want {
		if got := ts.doR(t, c, "ZRANGE", k, "0", "-1", "WITHSCORES"); got != w {
			t.Errorf("%s changed after its sources were rewritten:\n%s\nwas\n%s", k, got, w)
		}
	}
}
