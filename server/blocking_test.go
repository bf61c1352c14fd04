package server

import (
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/resp"
)

// BLOCKGET key [key ...] timeout is a blocking command that exists only in
// the test binary, over the string type, until the list commands land: like
// BLPOP it serves at once when one of the keys (in order) holds a string,
// else blocks until a write makes one ready; it replies [key, value] and
// deletes the key (GETDEL), or a null array on timeout. A key of another
// type does not serve it (it stays blocked), as BLPOP on a non-list.
//
// It is added to a server's command map only (not to the command table, so
// COMMAND and the table tests do not see it) and borrows GETDEL's
// commandstats slot: its calls and failures show as cmdstat_getdel.
func addBlockGet(s *Server) {
	cmd := &Command{Name: "blockget", Arity: -3, Flags: FlagWrite | FlagBlocking, FirstKey: 1, LastKey: -2, Step: 1, Handler: cmdBlockGet}
	cmd.Detached(s.cmds["getdel"])
	s.cmds["blockget"] = cmd
}

func cmdBlockGet(c *Client, args [][]byte) {
	s := c.srv
	deadline, ok := s.blockDeadline(c, args[len(args)-1], true)
	if !ok {
		return
	}
	keys := args[1 : len(args)-1]
	for _, k := range keys {
		if serveBlockGet(c, k) {
			return
		}
	}
	c.blockOnKeys(s.lookup(args[0]), keys, deadline, serveBlockGet, nil)
}

// serveBlockGet is BLOCKGET's ServeFunc.
func serveBlockGet(c *Client, key []byte) bool {
	e := c.selectedDB().Peek(key)
	if e == nil || e.HasExpire() && c.srv.nowMs > c.selectedDB().ExpireAt(e) {
		return false
	}
	v, ok := e.StringValue()
	if !ok {
		return false
	}
	c.w.ArrayLen(2)
	c.w.Bulk(key)
	c.w.Bulk(v.Bytes())
	c.selectedDB().Delete(key)
	c.srv.ks.Dirty++
	c.touch(key)
	// Propagated as the non-blocking form (BLPOP -> LPOP): DEL key, whether
	// served at once (the BLOCKGET itself is kept out) or after blocking.
	c.srv.alsoPropagate(c.db, TargetAll, []byte("DEL"), key)
	c.preventPropagation()
	return true
}

func newBlockServer(t *testing.T) *testServer {
	ts := newTestServer(t)
	addBlockGet(ts.s)
	return ts
}

// take returns and clears what c was sent while blocked (a reply written
// by another client's command, a timeout or CLIENT UNBLOCK).
func (ts *testServer) take(c *Client) string {
	ts.s.mu.Lock()
	defer ts.s.mu.Unlock()
	out := string(c.w.B)
	c.w.B = c.w.B[:0]
	return out
}

func (ts *testServer) isBlocked(c *Client) bool {
	ts.s.mu.Lock()
	defer ts.s.mu.Unlock()
	return c.blocked != nil
}

// blockedCount is INFO's blocked_clients and clients_in_timeout_table.
func (ts *testServer) blockedCount() (int64, int) {
	ts.s.mu.Lock()
	defer ts.s.mu.Unlock()
	return ts.s.blockedClients(), ts.s.blocking.timed
}

func bulkPair(k, v string) string {
	return fmt.Sprintf("*2\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", len(k), k, len(v), v)
}

const nullArray = "*-1\r\n"

// TestBlockServeOrder: ready keys are served in the order the writes
// signalled them, each key's waiters longest-waiting first; a client
// blocked on several keys is served once; the writes of a MULTI/EXEC are
// all done before anyone is served.
func TestBlockServeOrder(t *testing.T) {
	ts := newBlockServer(t)
	a, b, cc, d, w := ts.client(), ts.client(), ts.client(), ts.client(), ts.client()
	for _, x := range []struct {
		c    *Client
		keys []string
	}{{a, []string{"k1"}}, {b, []string{"k2"}}, {cc, []string{"k1", "k2", "k1"}}, {d, []string{"k1"}}} {
		if got := ts.do(x.c, append(append([]string{"BLOCKGET"}, x.keys...), "0")...); got != "" {
			t.Fatalf("BLOCKGET %v replied %q, want to block", x.keys, got)
		}
	}
	if n, timed := ts.blockedCount(); n != 4 || timed != 0 {
		t.Fatalf("blocked %d (timed %d), want 4 (0)", n, timed)
	}
	// Inside EXEC nothing is served: GET sees the value just set.
	for _, cmd := range [][]string{{"MULTI"}, {"SET", "k2", "x"}, {"SET", "k1", "y"}, {"GET", "k1"}, {"SET", "k1", "z"}} {
		ts.do(w, cmd...)
	}
	if got := ts.do(w, "EXEC"); got != "*4\r\n+OK\r\n+OK\r\n$1\r\ny\r\n+OK\r\n" {
		t.Fatalf("EXEC: %q", got)
	}
	// k2 was signalled first: b (its oldest waiter) gets x; then k1: a
	// gets z; cc (blocked on both) finds them both gone, d too.
	if got := ts.take(b); got != bulkPair("k2", "x") {
		t.Errorf("b got %q", got)
	}
	if got := ts.take(a); got != bulkPair("k1", "z") {
		t.Errorf("a got %q", got)
	}
	if got := ts.take(cc) + ts.take(d); got != "" || !ts.isBlocked(cc) || !ts.isBlocked(d) {
		t.Errorf("cc, d got %q, want still blocked", got)
	}
	// cc waited longer than d: the next value is its.
	ts.do(w, "SET", "k1", "v1")
	if got := ts.take(cc); got != bulkPair("k1", "v1") || ts.isBlocked(cc) {
		t.Errorf("cc got %q", got)
	}
	if ts.isBlocked(cc) || !ts.isBlocked(d) {
		t.Error("cc should be served, d still blocked")
	}
	// A client served through one key is gone from its other key: a
	// value on k2 now is d's business only... d waits on k1 alone, so k2
	// stays.
	ts.do(w, "SET", "k2", "kept")
	if got := ts.do(w, "GET", "k2"); got != "$4\r\nkept\r\n" {
		t.Errorf("GET k2 = %q: a served client took a second value", got)
	}
	ts.do(w, "SET", "k1", "v2")
	if got := ts.take(d); got != bulkPair("k1", "v2") {
		t.Errorf("d got %q", got)
	}
	if n, _ := ts.blockedCount(); n != 0 {
		t.Errorf("blocked_clients %d after all were served", n)
	}
}

// TestBlockSeveralKeysServedOnce: one write of two keys a client waits on
// serves it once, with the first key signalled; the other value stays.
func TestBlockSeveralKeysServedOnce(t *testing.T) {
	ts := newBlockServer(t)
	c, w := ts.client(), ts.client()
	ts.do(c, "BLOCKGET", "a", "b", "0")
	if got := ts.do(w, "MSET", "b", "1", "a", "2"); got != "+OK\r\n" {
		t.Fatal(got)
	}
	if got := ts.take(c); got != bulkPair("b", "1") {
		t.Errorf("served %q, want b's value once", got)
	}
	if got := ts.do(w, "GET", "a"); got != "$1\r\n2\r\n" {
		t.Errorf("GET a = %q", got)
	}
	// A write to another database does not serve it; one that makes the
	// key exist by SWAPDB does.
	ts.do(c, "BLOCKGET", "x", "0")
	ts.do(w, "SELECT", "1")
	ts.do(w, "SET", "x", "db1")
	if got := ts.take(c); got != "" {
		t.Errorf("served from another database: %q", got)
	}
	ts.do(w, "SWAPDB", "0", "1")
	if got := ts.take(c); got != bulkPair("x", "db1") {
		t.Errorf("after SWAPDB: %q", got)
	}
}

// TestBlockTimeoutArg: the timeout is parsed as getTimeoutFromObjectOrReply
// with UNIT_SECONDS (answers recorded from redis-server 7.0.15 with BLPOP).
func TestBlockTimeoutArg(t *testing.T) {
	ts := newBlockServer(t)
	for _, tc := range []struct {
		arg  string
		want string // "" blocks; "ms:N" blocks with a deadline N ms away
	}{
		{"1.5x", "-ERR timeout is not a float or out of range\r\n"},
		{" 1", "-ERR timeout is not a float or out of range\r\n"},
		{"1 ", "-ERR timeout is not a float or out of range\r\n"},
		{"nan", "-ERR timeout is not a float or out of range\r\n"},
		{"1e5000", "-ERR timeout is not a float or out of range\r\n"},
		{"-1", "-ERR timeout is negative\r\n"},
		{"-0.0011", "-ERR timeout is negative\r\n"},
		{"-0.0001", ""}, // ceill(-0.1) is -0: forever
		{"-0.001", ""},  // -0.99999... ms as a long double
		{"1e400", "-ERR timeout is negative\r\n"},
		{"inf", "-ERR timeout is negative\r\n"},
		{"-inf", "-ERR timeout is negative\r\n"},
		{"1e16", "-ERR timeout is negative\r\n"},
		{"0", ""},
		{"-0", ""},
		{"0.0001", "ms:1"},
		{"1e-400", "ms:1"},
		{".5", "ms:500"},
		{"+1", "ms:1000"},
		{"0x10", "ms:16000"},
		{"1.0005", "ms:1001"},
		{"9223372036854775", ""}, // past the millisecond range: never
	} {
		c := ts.client()
		got := ts.do(c, "BLOCKGET", "nokey", tc.arg)
		ts.s.mu.Lock()
		bs := c.blocked
		var deadline time.Time
		if bs != nil {
			deadline = bs.deadline
			ts.s.unblockGone(c)
		}
		nowMs := ts.s.nowMs
		ts.s.mu.Unlock()
		switch {
		case strings.HasPrefix(tc.want, "ms:"):
			ms, _ := strconv.ParseInt(tc.want[3:], 10, 64)
			if got != "" || bs == nil || deadline.UnixMilli()-nowMs != ms {
				t.Errorf("timeout %q: reply %q, blocked %v, deadline in %d ms, want %d", tc.arg, got, bs != nil, deadline.UnixMilli()-nowMs, ms)
			}
		case tc.want == "":
			if got != "" || bs == nil || !deadline.IsZero() {
				t.Errorf("timeout %q: reply %q, blocked %v, deadline %v, want forever", tc.arg, got, bs != nil, deadline)
			}
		default:
			if got != tc.want || bs != nil {
				t.Errorf("timeout %q: %q, want %q", tc.arg, got, tc.want)
			}
		}
	}
	if ceilMillis(mustLD(t, "1e400")) != math.MinInt64 {
		t.Error("1e400 s should convert as LLONG_MIN")
	}
}

func mustLD(t *testing.T, s string) *big.Float {
	f, ok := parseLongDouble([]byte(s))
	if !ok {
		t.Fatalf("parseLongDouble(%q)", s)
	}
	return f
}

// TestBlockTimeout: the deadline is on the server's clock; a timed-out
// client gets a null array and stops counting as blocked.
func TestBlockTimeout(t *testing.T) {
	ts := newBlockServer(t)
	c, c2, w := ts.client(), ts.client(), ts.client()
	ts.do(c, "BLOCKGET", "k", "1.5")
	ts.do(c2, "BLOCKGET", "k", "0")
	if n, timed := ts.blockedCount(); n != 2 || timed != 1 {
		t.Fatalf("blocked %d timed %d, want 2 1", n, timed)
	}
	ts.clk.Advance(1499 * time.Millisecond)
	if got := ts.take(c); got != "" || !ts.isBlocked(c) {
		t.Fatalf("before the deadline: %q", got)
	}
	ts.clk.Advance(time.Millisecond)
	if got := ts.take(c); got != nullArray || ts.isBlocked(c) {
		t.Fatalf("at the deadline: %q", got)
	}
	if n, timed := ts.blockedCount(); n != 1 || timed != 0 {
		t.Fatalf("blocked %d timed %d, want 1 0", n, timed)
	}
	// The timed-out client is not served; the one waiting forever is.
	ts.do(w, "SET", "k", "v")
	if got := ts.take(c) + "|" + ts.take(c2); got != "|"+bulkPair("k", "v") {
		t.Fatalf("after SET: %q", got)
	}
	// A served client's timer is stopped: advancing past its deadline
	// writes nothing more.
	ts.do(c, "BLOCKGET", "k", "1")
	ts.do(w, "SET", "k", "v2")
	ts.take(c)
	ts.clk.Advance(2 * time.Second)
	if got := ts.take(c); got != "" {
		t.Fatalf("a served client timed out too: %q", got)
	}
	if got := ts.do(w, "INFO", "commandstats"); !strings.Contains(got, "cmdstat_getdel:calls=3,") {
		t.Errorf("the blocked command is counted once per call: %q", got)
	}
}

// TestBlockDenied: inside MULTI a blocking command does not block; it
// replies as if timed out at once (CLIENT_DENY_BLOCKING), WAIT with the
// acknowledgements so far.
func TestBlockDenied(t *testing.T) {
	ts := newBlockServer(t)
	c := ts.client()
	for _, cmd := range [][]string{{"MULTI"}, {"BLOCKGET", "k", "0"}, {"WAIT", "1", "0"}, {"SET", "k", "v"}, {"BLOCKGET", "k", "0"}} {
		ts.do(c, cmd...)
	}
	if got := ts.do(c, "EXEC"); got != "*4\r\n*-1\r\n:0\r\n+OK\r\n"+bulkPair("k", "v") {
		t.Fatalf("EXEC: %q", got)
	}
	if n, _ := ts.blockedCount(); n != 0 || ts.isBlocked(c) {
		t.Fatal("a client blocked inside EXEC")
	}
}

// TestClientUnblock: TIMEOUT gives the timed-out reply, ERROR the
// UNBLOCKED error; both charge the blocked command a failed call, as
// 7.0.15; a client that is not blocked gives 0.
func TestClientUnblock(t *testing.T) {
	ts := newBlockServer(t)
	c, admin := ts.client(), ts.client()
	id := strconv.FormatInt(c.id, 10)
	if got := ts.do(admin, "CLIENT", "UNBLOCK", id); got != ":0\r\n" {
		t.Fatalf("not blocked: %q", got)
	}
	ts.do(c, "BLOCKGET", "k", "10")
	if got := ts.do(admin, "CLIENT", "LIST", "ID", id); !regexp.MustCompile(` flags=b .* cmd=blockget `).MatchString(got) {
		t.Errorf("CLIENT LIST of a blocked client: %q", got)
	}
	if got := ts.do(admin, "INFO", "clients"); !strings.Contains(got, "blocked_clients:1\r\n") || !strings.Contains(got, "clients_in_timeout_table:1\r\n") {
		t.Errorf("INFO clients: %q", got)
	}
	if got := ts.do(admin, "CLIENT", "UNBLOCK", id, "TIMEOUT"); got != ":1\r\n" {
		t.Fatalf("UNBLOCK: %q", got)
	}
	if got := ts.take(c); got != nullArray {
		t.Fatalf("unblocked with TIMEOUT: %q", got)
	}
	if got := ts.do(admin, "CLIENT", "UNBLOCK", id, "timeout"); got != ":0\r\n" {
		t.Fatalf("second UNBLOCK: %q", got)
	}
	ts.do(c, "BLOCKGET", "k", "0")
	if got := ts.do(admin, "CLIENT", "UNBLOCK", id, "ERROR"); got != ":1\r\n" {
		t.Fatalf("UNBLOCK ERROR: %q", got)
	}
	if got := ts.take(c); got != "-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n" {
		t.Fatalf("unblocked with ERROR: %q", got)
	}
	ts.clk.Advance(20 * time.Second) // the first block's timer was stopped
	if got := ts.take(c); got != "" {
		t.Fatalf("after the deadline: %q", got)
	}
	info := ts.do(admin, "INFO", "all")
	for _, want := range []string{`cmdstat_getdel:calls=2,[^\r]*,failed_calls=2\r\n`, `errorstat_UNBLOCKED:count=1\r\n`, `cmdstat_client\|unblock:calls=4,[^\r]*,failed_calls=1\r\n`, `blocked_clients:0\r\n`} {
		if !regexp.MustCompile(want).MatchString(info) {
			t.Errorf("INFO lacks %q", want)
		}
	}
	for _, tc := range [][]string{{"CLIENT", "UNBLOCK", id, "maybe"}, {"CLIENT", "UNBLOCK", "x"}, {"CLIENT", "UNBLOCK", id, "error", "x"}} {
		if got := ts.do(admin, tc...); !strings.HasPrefix(got, "-ERR") {
			t.Errorf("%v: %q", tc, got)
		}
	}
}

// fakeReplicas is a replication stand-in for WAIT: each replica's
// acknowledged offset.
type fakeReplicas struct {
	mu       sync.Mutex
	acked    []int64
	requests int
}

func (f *fakeReplicas) CountAcks(offset int64) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, a := range f.acked {
		if a >= offset {
			n++
		}
	}
	return n
}

func (f *fakeReplicas) RequestAcks() {
	f.mu.Lock()
	f.requests++
	f.mu.Unlock()
}

func (f *fakeReplicas) ack(i int, off int64) {
	f.mu.Lock()
	f.acked[i] = off
	f.mu.Unlock()
}

// TestWait: WAIT without replicas (as a 7.0.15 master with none), and with
// a fake acknowledgement source driving ReplicasAcked.
func TestWait(t *testing.T) {
	ts := newBlockServer(t)
	c, admin := ts.client(), ts.client()
	id := strconv.FormatInt(c.id, 10)
	for _, tc := range []struct{ args, want string }{
		{"WAIT 0 0", ":0\r\n"},
		{"WAIT 0 100", ":0\r\n"},
		{"WAIT -1 0", ":0\r\n"},
		{"WAIT 1 -1", "-ERR timeout is negative\r\n"},
		{"WAIT 1 1.5", "-ERR timeout is not an integer or out of range\r\n"},
		{"WAIT x 0", "-ERR value is not an integer or out of range\r\n"},
		{"WAIT 1 0 1", "-ERR wrong number of arguments for 'wait' command\r\n"},
	} {
		if got := ts.do(c, strings.Fields(tc.args)...); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.args, got, tc.want)
		}
	}
	// No replicas: WAIT 1 100 blocks 100 ms and replies 0.
	ts.do(c, "WAIT", "1", "100")
	ts.clk.Advance(99 * time.Millisecond)
	if got := ts.take(c); got != "" || !ts.isBlocked(c) {
		t.Fatalf("WAIT before its timeout: %q", got)
	}
	ts.clk.Advance(time.Millisecond)
	if got := ts.take(c); got != ":0\r\n" {
		t.Fatalf("WAIT at its timeout: %q", got)
	}
	// Timeout 0 blocks until CLIENT UNBLOCK.
	ts.do(c, "WAIT", "1", "0")
	if got := ts.do(admin, "CLIENT", "LIST", "ID", id); !strings.Contains(got, " flags=b ") || !strings.Contains(got, " cmd=wait ") {
		t.Errorf("CLIENT LIST: %q", got)
	}
	ts.do(admin, "CLIENT", "UNBLOCK", id)
	if got := ts.take(c); got != ":0\r\n" {
		t.Fatalf("WAIT unblocked: %q", got)
	}
	ts.do(c, "WAIT", "1", "0")
	ts.do(admin, "CLIENT", "UNBLOCK", id, "ERROR")
	if got := ts.take(c); got != "-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n" {
		t.Fatalf("WAIT unblocked with ERROR: %q", got)
	}

	// With replicas: the client's last write is at offset 10.
	f := &fakeReplicas{acked: []int64{0, 0, 0}}
	ts.s.SetReplicaAcks(f)
	ts.s.mu.Lock()
	c.woff = 10
	ts.s.mu.Unlock()
	ts.do(c, "WAIT", "2", "0")
	if f.requests != 1 {
		t.Errorf("%d GETACK requests, want 1", f.requests)
	}
	f.ack(0, 10)
	ts.s.ReplicasAcked(10)
	if got := ts.take(c); got != "" {
		t.Fatalf("one ack of two: %q", got)
	}
	f.ack(1, 5)
	ts.s.ReplicasAcked(5)
	if got := ts.take(c); got != "" {
		t.Fatalf("an ack below the offset: %q", got)
	}
	f.ack(1, 12)
	ts.s.ReplicasAcked(12)
	if got := ts.take(c); got != ":2\r\n" || ts.isBlocked(c) {
		t.Fatalf("two acks: %q", got)
	}
	// Enough already: at once. The timeout replies the count so far.
	if got := ts.do(c, "WAIT", "2", "0"); got != ":2\r\n" {
		t.Fatalf("WAIT already satisfied: %q", got)
	}
	ts.do(c, "WAIT", "3", "50")
	ts.clk.Advance(50 * time.Millisecond)
	if got := ts.take(c); got != ":2\r\n" {
		t.Fatalf("WAIT 3 timed out: %q", got)
	}
}

// --- on real connections ----------------------------------------------------

func startBlockLive(t *testing.T) *liveServer {
	l := startLive(t)
	l.s.mu.Lock()
	addBlockGet(l.s)
	l.s.mu.Unlock()
	return l
}

// waitBlocked polls until INFO's blocked_clients is n.
func waitBlocked(t *testing.T, s *Server, n int64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		s.mu.Lock()
		got := s.blockedClients()
		s.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d blocked clients, want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestBlockPipelined: the replies before the blocking command are sent
// while it is blocked; the commands pipelined after it run after its
// reply, once it is served.
func TestBlockPipelined(t *testing.T) {
	l := startBlockLive(t)
	a, w := l.dial(t), l.dial(t)
	var batch []byte
	for _, cmd := range [][]string{{"PING"}, {"BLOCKGET", "k", "0"}, {"PING"}, {"ECHO", "x"}} {
		batch = resp.AppendCommandStrings(batch, cmd...)
	}
	if _, err := a.c.Write(batch); err != nil {
		t.Fatal(err)
	}
	if got := a.read(); got != "+PONG" {
		t.Fatalf("first reply %q", got)
	}
	waitBlocked(t, l.s, 1)
	if got := w.do("SET", "k", "v"); got != "+OK" {
		t.Fatal(got)
	}
	for _, want := range []string{`["k", "v"]`, "+PONG", `"x"`} {
		if got := a.read(); got != want {
			t.Fatalf("got %s, want %s", got, want)
		}
	}
	if got := w.do("EXISTS", "k"); got != "(integer) 0" {
		t.Errorf("EXISTS k after serving: %s", got)
	}
	if !a.stillOpen() {
		t.Error("the served client does not go on")
	}
}

// TestBlockFIFOLive: clients blocked one after another on one key get the
// values written one after another in that order, each exactly one.
func TestBlockFIFOLive(t *testing.T) {
	l := startBlockLive(t)
	w := l.dial(t)
	const n = 8
	var cs []*rconn
	for i := 0; i < n; i++ {
		c := l.dial(t)
		c.send("BLOCKGET", "q", "0")
		waitBlocked(t, l.s, int64(i+1))
		cs = append(cs, c)
	}
	for i := 0; i < n; i++ {
		w.send("SET", "q", strconv.Itoa(i))
	}
	for i := 0; i < n; i++ {
		if got := w.read(); got != "+OK" {
			t.Fatal(got)
		}
	}
	for i, c := range cs {
		if got, want := c.read(), fmt.Sprintf(`["q", "%d"]`, i); got != want {
			t.Errorf("client %d got %s, want %s", i, got, want)
		}
	}
	waitBlocked(t, l.s, 0)
}

// TestBlockTimeoutLive: the deadline runs on the server's (fake) clock; the
// parked client gets its null reply and goes on.
func TestBlockTimeoutLive(t *testing.T) {
	l := startBlockLive(t)
	a := l.dial(t)
	a.send("BLOCKGET", "k", "2")
	a.send("ECHO", "after")
	waitBlocked(t, l.s, 1)
	l.clk.Advance(2 * time.Second)
	if got := a.read(); got != "(nil)" {
		t.Fatalf("timed out: %s", got)
	}
	if got := a.read(); got != `"after"` {
		t.Fatalf("next command: %s", got)
	}
	waitBlocked(t, l.s, 0)
}

// TestBlockKill: CLIENT KILL closes a blocked client at once; a client
// whose peer closed is never served (the value stays) and stops counting
// as blocked.
func TestBlockKill(t *testing.T) {
	l := startBlockLive(t)
	a, b, w := l.dial(t), l.dial(t), l.dial(t)
	aid := a.id()
	a.send("BLOCKGET", "k", "0")
	waitBlocked(t, l.s, 1)
	if got := w.do("CLIENT", "KILL", "ID", aid); got != "(integer) 1" {
		t.Fatalf("CLIENT KILL: %s", got)
	}
	if !a.closed() {
		t.Fatal("killed blocked client still open")
	}
	waitBlocked(t, l.s, 0)
	// The peer goes away while blocked; a write right after must not hand
	// it the value.
	b.send("BLOCKGET", "k", "0")
	waitBlocked(t, l.s, 1)
	b.c.Close()
	if got := w.do("SET", "k", "v"); got != "+OK" {
		t.Fatal(got)
	}
	if got := w.do("GET", "k"); got != `"v"` {
		t.Fatalf("a closed client took the value: GET k = %s", got)
	}
	waitBlocked(t, l.s, 0)
	// The cron notices a closed peer without a write.
	c := l.dial(t)
	c.send("BLOCKGET", "other", "0")
	waitBlocked(t, l.s, 1)
	c.c.Close()
	// The cron runs on the server's (fake) clock: tick it until it has.
	deadline := time.Now().Add(5 * time.Second)
	for {
		l.clk.Advance(100 * time.Millisecond)
		l.s.mu.Lock()
		n := l.s.blockedClients()
		l.s.mu.Unlock()
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d blocked clients after the peer closed, want 0", n)
		}
		time.Sleep(time.Millisecond)
	}
	if !w.stillOpen() {
		t.Fatal("writer closed")
	}
}

// TestBlockShutdown: SHUTDOWN wakes parked clients, whose connections
// close, instead of waiting for them.
func TestBlockShutdown(t *testing.T) {
	l := startBlockLive(t)
	a, w := l.dial(t), l.dial(t)
	a.send("WAIT", "1", "0")
	waitBlocked(t, l.s, 1)
	w.send("SHUTDOWN", "NOSAVE")
	if !a.closed() {
		t.Fatal("blocked client still open after SHUTDOWN")
	}
	<-l.done
	l.done <- nil // for the cleanup
	l.s.mu.Lock()
	n := l.s.blocking.n
	l.s.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d clients still blocked after shutdown", n)
	}
}

// TestBlockPausedClients: a command postponed by CLIENT PAUSE counts in
// blocked_clients and shows flags=b with its command, as 7.0.15; CLIENT
// UNBLOCK leaves it alone (0).
func TestBlockPausedClients(t *testing.T) {
	l := startBlockLive(t)
	admin, wr := l.dial(t), l.dial(t)
	wid := wr.id()
	if got := admin.do("CLIENT", "PAUSE", "100000", "WRITE"); got != "+OK" {
		t.Fatal(got)
	}
	wr.send("SET", "k", "v")
	waitBlocked(t, l.s, 1)
	if got := admin.do("CLIENT", "LIST", "ID", wid); !regexp.MustCompile(` flags=bU? .* cmd=set `).MatchString(got) {
		t.Errorf("CLIENT LIST of a paused client: %s", got)
	}
	if got := admin.do("CLIENT", "UNBLOCK", wid); got != "(integer) 0" {
		t.Errorf("CLIENT UNBLOCK of a paused client: %s", got)
	}
	if got := admin.do("CLIENT", "UNPAUSE"); got != "+OK" {
		t.Fatal(got)
	}
	if got := wr.read(); got != "+OK" {
		t.Fatal(got)
	}
	if got := admin.do("CLIENT", "LIST", "ID", wid); !regexp.MustCompile(` flags=U? `).MatchString(got) {
		t.Errorf("CLIENT LIST after the pause: %s", got)
	}
	waitBlocked(t, l.s, 0)
}

// TestBlockStress: many clients block and are served concurrently by many
// writers; every value written is received exactly once (run with -race).
func TestBlockStress(t *testing.T) {
	l := startBlockLive(t)
	const waiters, rounds = 6, 20
	var wg sync.WaitGroup
	got := make(chan string, waiters*rounds)
	for i := 0; i < waiters; i++ {
		c := l.dial(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.c.SetDeadline(time.Now().Add(time.Minute))
			for r := 0; r < rounds; r++ {
				if _, err := c.c.Write(resp.AppendCommandStrings(nil, "BLOCKGET", "s1", "s2", "0")); err != nil {
					got <- err.Error()
					return
				}
				v, err := resp.ReadValue(c.br, resp.DefaultReplyLimits)
				if err != nil || len(v.Elems) != 2 {
					got <- fmt.Sprintf("bad reply %v %v", v, err)
					return
				}
				got <- v.Elems[1].Str
			}
		}()
	}
	writers := 3
	per := waiters * rounds / writers
	for i := 0; i < writers; i++ {
		w := l.dial(t)
		key := "s" + strconv.Itoa(1+i%2)
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			w.c.SetDeadline(time.Now().Add(time.Minute))
			for j := 0; j < per; j++ {
				// SET NX: a value not yet taken is not overwritten;
				// retry until it lands.
				for {
					if _, err := w.c.Write(resp.AppendCommandStrings(nil, "SET", key, fmt.Sprintf("%d-%d", i, j), "NX")); err != nil {
						return
					}
					v, err := resp.ReadValue(w.br, resp.DefaultReplyLimits)
					if err != nil {
						return
					}
					if v.Kind == resp.KindSimple {
						break
					}
				}
			}
		}(i)
	}
	wg.Wait()
	close(got)
	seen := map[string]bool{}
	for v := range got {
		if seen[v] {
			t.Errorf("value %s received twice", v)
		}
		seen[v] = true
	}
	if len(seen) != waiters*rounds {
		t.Errorf("%d distinct values received, want %d", len(seen), waiters*rounds)
	}
}

// TestBlockServedPropagation: a blocking command propagates its
// non-blocking effect, never itself: served at once it is the command's
// unit; served after blocking it is a unit of its own after the writer's
// (blocked.c's serveClientsBlockedOnListKey: redis-server 7.0.15's AOF
// holds "lpush l a b c", "LPOP l", "RPOP l", and a MULTI's LPUSH is
// followed, after EXEC, by the served LPOP).
func TestBlockServedPropagation(t *testing.T) {
	ts := newBlockServer(t)
	rec := &Recorder{}
	ts.s.AddPropagator(rec)
	a, b, w := ts.client(), ts.client(), ts.client()
	ts.do(w, "SET", "k", "v")
	if got := ts.do(a, "BLOCKGET", "k", "0"); got != bulkPair("k", "v") {
		t.Fatalf("immediate BLOCKGET = %q", got)
	}
	ts.do(a, "BLOCKGET", "x", "0")
	ts.do(b, "BLOCKGET", "y", "0")
	if !ts.isBlocked(a) || !ts.isBlocked(b) {
		t.Fatal("not blocked")
	}
	ts.do(w, "MULTI")
	ts.do(w, "SET", "y", "1")
	ts.do(w, "SET", "x", "2")
	ts.do(w, "EXEC")
	got := fmtCmds(parseAOF(t, rec.Bytes()))
	want := `["SELECT" "0"] ["SET" "k" "v"] ["DEL" "k"] ["MULTI"] ["SET" "y" "1"] ["SET" "x" "2"] ["EXEC"] ["DEL" "y"] ["DEL" "x"]`
	if got != want {
		t.Fatalf("stream\n got %s\nwant %s", got, want)
	}
}

// TestBlockReplyFlags: CLIENT REPLY SKIP and OFF apply to a blocking
// command's reply when it comes, after the client is unblocked (Redis resets
// a blocked client only in unblockClient), and the flags move on then.
func TestBlockReplyFlags(t *testing.T) {
	l := startBlockLive(t)
	a, w := l.dial(t), l.dial(t)
	a.send("CLIENT", "REPLY", "SKIP")
	a.send("BLOCKGET", "k", "0")
	waitBlocked(t, l.s, 1)
	if got := w.do("SET", "k", "v"); got != "+OK" {
		t.Fatal(got)
	}
	waitBlocked(t, l.s, 0)
	if got := a.do("PING"); got != "+PONG" {
		t.Fatalf("after a skipped served reply, PING read %s", got)
	}
	a.send("CLIENT", "REPLY", "OFF")
	a.send("BLOCKGET", "k", "0")
	waitBlocked(t, l.s, 1)
	w.do("SET", "k", "v2")
	waitBlocked(t, l.s, 0)
	a.send("CLIENT", "REPLY", "ON")
	if got := a.read(); got != "+OK" {
		t.Fatalf("with REPLY OFF the served reply was sent: read %s", got)
	}
	if got := w.do("EXISTS", "k"); got != "(integer) 0" {
		t.Fatalf("EXISTS k = %s (the blocked client was not served)", got)
	}
}
