package server

import (
	"bufio"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/resp"
)

// TestListBlocking: the blocking list commands on the registry: waiters on
// one key served longest-waiting first while the pushed elements last, a
// push inside MULTI serving after EXEC, fractional timeouts on the server's
// clock, the timed-out and CLIENT UNBLOCK replies (a null array for every
// one of them, "_" in RESP3, as redis-server 7.0.15), BLMOVE and BLMPOP
// served replies.
func TestListBlocking(t *testing.T) {
	ts := newTestServer(t)
	a, b, cc, w, admin := ts.client(), ts.client(), ts.client(), ts.client(), ts.client()
	blocked := func(c *Client, args ...string) {
		t.Helper()
		if got := ts.do(c, args...); got != "" || !ts.isBlocked(c) {
			t.Fatalf("%v replied %q, want to block", args, got)
		}
	}
	blocked(a, "BLPOP", "l", "0")
	blocked(b, "BRPOP", "nokey", "l", "0")
	blocked(cc, "BLPOP", "l", "0")
	if got := ts.do(w, "RPUSH", "l", "x", "y"); got != ":2\r\n" {
		t.Fatalf("RPUSH: %q", got)
	}
	if got := ts.take(a); got != bulkPair("l", "x") {
		t.Errorf("a got %q", got)
	}
	if got := ts.take(b); got != bulkPair("l", "y") {
		t.Errorf("b got %q", got)
	}
	if got := ts.take(cc); got != "" || !ts.isBlocked(cc) {
		t.Errorf("cc got %q, want still blocked (two elements, three waiters)", got)
	}
	if got := ts.do(w, "EXISTS", "l"); got != ":0\r\n" {
		t.Errorf("EXISTS l after serving: %q", got)
	}
	// Inside MULTI nobody is served before EXEC: LLEN sees both elements.
	for _, cmd := range [][]string{{"MULTI"}, {"RPUSH", "l", "1", "2"}, {"LLEN", "l"}} {
		ts.do(w, cmd...)
	}
	if got := ts.do(w, "EXEC"); got != "*2\r\n:2\r\n:2\r\n" {
		t.Fatalf("EXEC: %q", got)
	}
	if got := ts.take(cc); got != bulkPair("l", "1") {
		t.Errorf("cc got %q after EXEC", got)
	}
	if got := ts.do(w, "LRANGE", "l", "0", "-1"); got != "*1\r\n$1\r\n2\r\n" {
		t.Errorf("LRANGE after serving: %q", got)
	}
	ts.do(w, "DEL", "l")

	// Fractional timeouts on the fake clock.
	blocked(a, "BLPOP", "q", "0.5")
	ts.clk.Advance(499 * time.Millisecond)
	if got := ts.take(a); got != "" {
		t.Fatalf("before the timeout: %q", got)
	}
	ts.clk.Advance(time.Millisecond)
	if got := ts.take(a); got != nullArray {
		t.Fatalf("BLPOP timed out: %q", got)
	}
	blocked(a, "BLMOVE", "q", "d", "LEFT", "RIGHT", "0.001")
	ts.clk.Advance(time.Millisecond)
	if got := ts.take(a); got != nullArray {
		t.Fatalf("BLMOVE timed out: %q (Redis replies a null array, not a null bulk)", got)
	}
	ts.do(b, "HELLO", "3")
	blocked(b, "BLMPOP", "0.01", "1", "q", "LEFT")
	ts.clk.Advance(10 * time.Millisecond)
	if got := ts.take(b); got != "_\r\n" {
		t.Fatalf("BLMPOP timed out in RESP3: %q", got)
	}

	// BLMOVE and BRPOPLPUSH served.
	blocked(a, "BLMOVE", "src", "dst", "RIGHT", "LEFT", "0")
	blocked(cc, "BRPOPLPUSH", "src", "dst", "0")
	ts.do(w, "RPUSH", "src", "1", "2", "3")
	if got := ts.take(a); got != "$1\r\n3\r\n" {
		t.Errorf("BLMOVE served %q", got)
	}
	if got := ts.take(cc); got != "$1\r\n2\r\n" {
		t.Errorf("BRPOPLPUSH served %q", got)
	}
	if got := ts.do(w, "LRANGE", "dst", "0", "-1"); got != "*2\r\n$1\r\n2\r\n$1\r\n3\r\n" {
		t.Errorf("dst: %q", got)
	}
	// BLMPOP served: [key, [elements]].
	blocked(a, "BLMPOP", "0", "2", "k1", "k2", "RIGHT", "COUNT", "3")
	ts.do(w, "RPUSH", "k2", "a", "b")
	if got := ts.take(a); got != "*2\r\n$2\r\nk2\r\n*2\r\n$1\r\nb\r\n$1\r\na\r\n" {
		t.Errorf("BLMPOP served %q", got)
	}
	// A BLMOVE whose destination became another type is unblocked with
	// WRONGTYPE; the source keeps its element.
	blocked(a, "BLMOVE", "s2", "str", "LEFT", "LEFT", "0")
	ts.do(w, "SET", "str", "v")
	ts.do(w, "RPUSH", "s2", "e")
	if got := ts.take(a); got != "-"+ErrWrongType+"\r\n" || ts.isBlocked(a) {
		t.Errorf("BLMOVE onto a string: %q", got)
	}
	if got := ts.do(w, "LLEN", "s2"); got != ":1\r\n" {
		t.Errorf("LLEN s2: %q", got)
	}

	// CLIENT UNBLOCK: TIMEOUT replies the null array, ERROR the error.
	id := strconv.FormatInt(a.id, 10)
	blocked(a, "BRPOPLPUSH", "none", "d", "0")
	if got := ts.do(admin, "CLIENT", "UNBLOCK", id); got != ":1\r\n" {
		t.Fatal(got)
	}
	if got := ts.take(a); got != nullArray {
		t.Errorf("unblocked: %q", got)
	}
	blocked(a, "BLPOP", "none", "0")
	ts.do(admin, "CLIENT", "UNBLOCK", id, "ERROR")
	if got := ts.take(a); got != "-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n" {
		t.Errorf("unblocked with ERROR: %q", got)
	}
	if n, _ := ts.blockedCount(); n != 0 {
		t.Errorf("%d clients still blocked", n)
	}
}

// listEventsRun runs the list commands on c and returns the keyevent
// notifications sub received (notify-keyspace-events Elgn), in order.
func listEventsRun(t *testing.T, c, sub *rconn) string {
	if got := c.do("CONFIG", "SET", "notify-keyspace-events", "Elgn"); got != "+OK" {
		t.Fatal(got)
	}
	sub.do("PSUBSCRIBE", "__keyevent@0__:*")
	for _, cmd := range [][]string{
		{"RPUSH", "l", "a", "b", "c"}, {"LPUSH", "l", "z"}, {"LINSERT", "l", "BEFORE", "a", "x"},
		{"LSET", "l", "0", "y"}, {"LREM", "l", "1", "x"}, {"LTRIM", "l", "0", "1"}, {"LPOP", "l"},
		{"LMOVE", "l", "m", "LEFT", "RIGHT"}, {"RPOP", "m"}, {"LPUSHX", "none", "a"}, {"LREM", "none", "0", "a"},
		{"RPUSH", "e", "1", "2", "3"}, {"LTRIM", "e", "5", "6"}, {"RPUSH", "end", "x"},
	} {
		c.do(cmd...)
	}
	var got []string
	for {
		m := sub.read()
		got = append(got, m)
		if strings.Contains(m, ":rpush\", \"end\"") {
			break
		}
	}
	return strings.Join(got, "\n")
}

// TestListKeyspaceEvents: the events of the list commands in Redis's order
// (new, then the command's event; the pop events before del when the list
// empties; LMOVE's push events on the destination before the pop on the
// source).
func TestListKeyspaceEvents(t *testing.T) {
	l := startLive(t)
	got := listEventsRun(t, l.dial(t), l.dial(t))
	var events []string
	for _, line := range strings.Split(got, "\n") {
		i := strings.Index(line, "__keyevent@0__:")
		j := strings.LastIndex(line, "__keyevent@0__:")
		if i >= 0 && j > i {
			events = append(events, strings.Split(line[j+len("__keyevent@0__:"):], "\"")[0])
		}
	}
	want := "new rpush lpush linsert lset lrem ltrim lpop new rpush lpop del rpop del new rpush ltrim del new rpush"
	if strings.Join(events, " ") != want {
		t.Errorf("events\n got %s\nwant %s", strings.Join(events, " "), want)
	}
}

// TestListKeyspaceEventsRedis (interop): the same on redis-server, message
// for message.
func TestListKeyspaceEventsRedis(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server")
	}
	dial := startRedis(t)
	conn := func() *rconn {
		nc, br := dial(2)
		return &rconn{t: t, c: nc, br: br}
	}
	want := listEventsRun(t, conn(), conn())
	l := startLive(t)
	if got := listEventsRun(t, l.dial(t), l.dial(t)); got != want {
		t.Errorf("events\n vigil %s\n redis %s", got, want)
	}
}

// rawRead reads one reply's exact bytes.
func rawRead(t *testing.T, c net.Conn, br *bufio.Reader) string {
	t.Helper()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	var raw strings.Builder
	tee := bufio.NewReader(readerFunc(func(p []byte) (int, error) {
		n, err := br.Read(p)
		raw.Write(p[:n])
		return n, err
	}))
	if _, err := resp.ReadValue(tee, resp.DefaultReplyLimits); err != nil {
		t.Fatal(err)
	}
	return raw.String()
}

// TestListBlockedAOFRedis (interop): the same blocked/served sequence on
// redis-server 7.0.15 (real blocked connections) and on Vigil's test
// server; every served reply and the propagated streams must be equal
// (BLPOP -> LPOP key, BRPOP -> RPOP key, BLMOVE -> LMOVE src dst left
// right, BRPOPLPUSH -> RPOPLPUSH, BLMPOP -> RPOP key count, each after the
// push that served it; a MULTI's pushes serve after its EXEC).
func TestListBlockedAOFRedis(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server")
	}
	dial, aof := startRedisAOF(t)
	rw, rwbr := dial(2)
	ts := newTestServer(t)
	vw := ts.client()
	mark := aof.begin(t, ts, rw, rwbr, vw)
	waiters := [][]string{
		{"BLPOP", "l", "0"},
		{"BRPOP", "l", "0"},
		{"BLMOVE", "src", "dst", "left", "RIGHT", "0"},
		{"BRPOPLPUSH", "src2", "dst", "0"},
		{"BLMPOP", "0", "2", "m1", "m2", "RIGHT", "COUNT", "2"},
		{"BLPOP", "l", "0"},
		{"BLMPOP", "0", "1", "m1", "LEFT"},
		{"BLPOP", "chain", "0"},
		{"BLMOVE", "src3", "chain", "RIGHT", "LEFT", "0"},
		{"BRPOPLPUSH", "chain", "chain2", "0"},
	}
	type rconnT struct {
		c  net.Conn
		br *bufio.Reader
	}
	var rs []rconnT
	var vs []*Client
	for i, args := range waiters {
		c, br := dial(2)
		if _, err := c.Write(resp.AppendCommandStrings(nil, args...)); err != nil {
			t.Fatal(err)
		}
		// Wait until Redis has blocked it, so that the order is known.
		deadline := time.Now().Add(5 * time.Second)
		for !strings.Contains(rawDo(t, rw, rwbr, "INFO", "clients"), "blocked_clients:"+strconv.Itoa(i+1)+"\r\n") {
			if time.Now().After(deadline) {
				t.Fatalf("redis did not block %v", args)
			}
			time.Sleep(time.Millisecond)
		}
		rs = append(rs, rconnT{c, br})
		vc := ts.client()
		if got := ts.do(vc, args...); got != "" {
			t.Fatalf("vigil %v replied %q, want to block", args, got)
		}
		vs = append(vs, vc)
	}
	writes := [][]string{
		{"RPUSH", "l", "a", "b"},
		{"RPUSH", "src", "x", "y"},
		{"LPUSH", "src2", "z"},
		{"MULTI"}, {"RPUSH", "m2", "1", "2", "3"}, {"RPUSH", "l", "c"}, {"RPUSH", "m1", "p", "q"}, {"EXEC"},
		// A served BLMOVE's push serves the waiters of its destination
		// in the same round: BLPOP chain first (it waited longer).
		{"RPUSH", "src3", "k1", "k2"},
		{"RPUSH", "src3", "k3"},
		{"LPUSH", "chain", "last"},
	}
	for _, args := range writes {
		want := rawDo(t, rw, rwbr, args...)
		if got := ts.do(vw, args...); got != want {
			t.Fatalf("%v: vigil %q, redis %q", args, got, want)
		}
	}
	for i := range waiters {
		want := rawRead(t, rs[i].c, rs[i].br)
		if got := ts.take(vs[i]); got != want {
			t.Errorf("waiter %d %v: vigil %q, redis %q", i, waiters[i], got, want)
		}
	}
	for _, k := range []string{"l", "src", "dst", "m1", "m2", "src3", "chain", "chain2"} {
		want := rawDo(t, rw, rwbr, "LRANGE", k, "0", "-1")
		if got := ts.do(vw, "LRANGE", k, "0", "-1"); got != want {
			t.Errorf("LRANGE %s: vigil %q, redis %q", k, got, want)
		}
	}
	aof.check(t, ts, mark, nil)
}

// TestListDirtyRedis (interop): each list command adds to server.dirty
// (INFO rdb_changes_since_last_save) what redis-server 7.0.15's adds.
func TestListDirtyRedis(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server")
	}
	dial := startRedis(t)
	rc, rbr := dial(2)
	ts := newTestServer(t)
	c := ts.client()
	dirty := func(info string) string {
		i := strings.Index(info, "rdb_changes_since_last_save:")
		return strings.SplitN(info[i:], "\r\n", 2)[0]
	}
	for _, cmd := range [][]string{
		{"RPUSH", "l", "a", "b", "c", "d", "e", "a", "a"}, {"LPUSH", "l", "z", "y"}, {"LPUSHX", "l", "1", "2", "3"}, {"LPOP", "l"}, {"RPOP", "l", "2"},
		{"LPOP", "l", "0"}, {"LSET", "l", "0", "x"}, {"LINSERT", "l", "AFTER", "x", "w"}, {"LINSERT", "l", "AFTER", "none", "w"},
		{"LREM", "l", "0", "a"}, {"LREM", "l", "0", "none"}, {"LTRIM", "l", "1", "-2"}, {"LTRIM", "l", "0", "-1"},
		{"LMOVE", "l", "m", "LEFT", "LEFT"}, {"RPOPLPUSH", "l", "l"}, {"LMPOP", "2", "x", "l", "LEFT", "COUNT", "2"},
		{"BLPOP", "l", "0"}, {"BLMPOP", "0", "1", "m", "RIGHT", "COUNT", "9"}, {"RPUSH", "n", "1", "2"}, {"LTRIM", "n", "5", "9"},
	} {
		rawDo(t, rc, rbr, cmd...)
		ts.do(c, cmd...)
		want := dirty(rawDo(t, rc, rbr, "INFO", "persistence"))
		if got := dirty(ts.do(c, "INFO", "persistence")); got != want {
			t.Fatalf("after %v: vigil %s, redis %s", cmd, got, want)
		}
	}
}
