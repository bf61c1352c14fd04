package server

import (
	"bytes"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/vigil-kv/vigil/configs"
	"github.com/vigil-kv/vigil/internal/clock"
	"github.com/vigil-kv/vigil/internal/resp"
)

// TestObufLimitReached is checkClientOutputBufferLimits' timing: the hard
// limit at once; the soft limit only once it has been reached continuously
// for more than soft-seconds, in whole seconds; going under resets it.
func TestObufLimitReached(t *testing.T) {
	l := configs.BufferLimit{HardBytes: 1000, SoftBytes: 100, SoftSeconds: 5}
	var since int64
	if obufLimitReached(l, 99, 10, &since) || since != 0 {
		t.Fatalf("under both limits: reached (since %d)", since)
	}
	if !obufLimitReached(l, 1000, 10, &since) {
		t.Fatal("at the hard limit: not reached")
	}
	since = 0
	steps := []struct {
		used  uint64
		now   int64
		want  bool
		since int64
	}{
		{100, 20, false, 20}, // first seen over the soft limit
		{500, 21, false, 20},
		{500, 25, false, 20}, // 5 seconds: not more than soft-seconds yet
		{50, 25, false, 0},   // under: reset
		{100, 26, false, 26},
		{100, 31, false, 26},
		{100, 32, true, 26}, // 6 seconds over
	}
	for i, st := range steps {
		if got := obufLimitReached(l, st.used, st.now, &since); got != st.want || since != st.since {
			t.Fatalf("step %d (%d bytes at %d): reached %v since %d, want %v since %d", i, st.used, st.now, got, since, st.want, st.since)
		}
	}
	// soft-seconds 0: closed at the first check in a later second.
	l0 := configs.BufferLimit{SoftBytes: 10}
	since = 0
	if obufLimitReached(l0, 10, 100, &since) || obufLimitReached(l0, 10, 100, &since) {
		t.Fatal("soft 0 seconds: reached within the first second")
	}
	if !obufLimitReached(l0, 10, 101, &since) {
		t.Fatal("soft 0 seconds: not reached the next second")
	}
	// A zero limit is no limit.
	since = 0
	if obufLimitReached(configs.BufferLimit{}, 1<<40, 1, &since) {
		t.Fatal("0 0 0: reached")
	}
}

// obufServer is a server without a listener whose log is kept.
func obufServer(t *testing.T, directives ...string) (*testServer, *bytes.Buffer) {
	t.Helper()
	cfg, err := configs.Load(configs.LoadOptions{Args: append([]string{"--dir", t.TempDir()}, directives...)})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	clk := clock.NewFake(time.Unix(1700000000, 0))
	s, err := New(cfg, zerolog.New(&buf).Level(zerolog.InfoLevel), WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	return &testServer{s: s, clk: clk}, &buf
}

// TestObufSoftLimitFakeClock: a client over its class's soft limit is
// closed by the cron check once the fake clock has moved more than
// soft-seconds past the first check that saw it over, not before, and the
// close logs Redis's warning with the client's CLIENT LIST line.
func TestObufSoftLimitFakeClock(t *testing.T) {
	ts, logBuf := obufServer(t, "--client-output-buffer-limit", "pubsub", "0", "64kb", "10")
	c := ts.client()
	if got := ts.do(c, "SUBSCRIBE", "ch"); !strings.HasPrefix(got, "*3\r\n") {
		t.Fatalf("SUBSCRIBE: %q", got)
	}
	// Output the peer has not read (the queue, as if its socket were full).
	c.amu.Lock()
	c.abuf = make([]byte, 100<<10)
	c.asyncLive.Store(true) // as startAsync does before the first byte
	c.amu.Unlock()
	ts.obufCheck()
	for i := 0; i < 10; i++ {
		ts.clk.Advance(time.Second)
		ts.obufCheck()
		if c.killed.Load() {
			t.Fatalf("closed %d s after reaching the soft limit (soft-seconds 10)", i+1)
		}
	}
	ts.clk.Advance(time.Second)
	ts.obufCheck()
	if !c.killed.Load() {
		t.Fatal("not closed 11 s after reaching the soft limit")
	}
	re := regexp.MustCompile(`Client id=` + strconv.FormatInt(c.id, 10) + ` addr=\S+ .* flags=P .* obl=16384 oll=6 omem=86016 .* scheduled to be closed ASAP for overcoming of output buffer limits\.`)
	if !re.MatchString(logBuf.String()) {
		t.Fatalf("log: %s", logBuf.String())
	}
	// Closed: its output is dropped and it gets no more.
	c.push([]byte("more"))
	c.amu.Lock()
	n := len(c.abuf)
	c.amu.Unlock()
	if n != 0 {
		t.Fatalf("a closed client keeps %d bytes", n)
	}

	// Going under the soft limit resets the timer.
	c2 := ts.client()
	ts.do(c2, "SUBSCRIBE", "ch")
	setQ := func(n int) {
		c2.amu.Lock()
		c2.abuf = make([]byte, n)
		c2.asyncLive.Store(true) // as startAsync does before the first byte
		c2.amu.Unlock()
	}
	setQ(100 << 10)
	ts.obufCheck()
	ts.clk.Advance(8 * time.Second)
	setQ(0)
	ts.obufCheck()
	setQ(100 << 10)
	ts.clk.Advance(8 * time.Second)
	ts.obufCheck()
	ts.clk.Advance(8 * time.Second)
	ts.obufCheck()
	if c2.killed.Load() {
		t.Fatal("closed although it went under the soft limit in between")
	}
	ts.clk.Advance(3 * time.Second)
	ts.obufCheck()
	if !c2.killed.Load() {
		t.Fatal("not closed 11 s after reaching the soft limit again")
	}
}

// TestObufHardLimitClasses: each class is held to its own limits: a
// MONITOR client is normal, a subscriber pubsub.
func TestObufHardLimitClasses(t *testing.T) {
	ts, _ := obufServer(t)
	s := ts.s
	if got := ts.do(ts.client(), "CONFIG", "SET", "client-output-buffer-limit", "normal 10kb 0 0 pubsub 20kb 0 0"); got != "+OK\r\n" {
		t.Fatalf("CONFIG SET: %q", got)
	}
	n, p := ts.client(), ts.client()
	ts.do(p, "SUBSCRIBE", "x")
	fill := func(c *Client, size int) bool {
		c.amu.Lock()
		c.abuf = make([]byte, size)
		c.asyncLive.Store(true) // as startAsync does before the first byte
		c.amu.Unlock()
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.checkObuf(c, 0)
	}
	// The first 16kb are Redis's static buffer, outside the limits.
	if fill(n, 26<<10-1) || fill(p, 30<<10) {
		t.Fatal("closed under its hard limit")
	}
	if !fill(n, 26<<10) || !n.killed.Load() {
		t.Fatal("normal client at 10kb not closed")
	}
	if !fill(p, 36<<10) || !p.killed.Load() {
		t.Fatal("subscriber at 20kb not closed")
	}
	// A limit under 16kb does not close a client over a small reply.
	ts.do(ts.client(), "CONFIG", "SET", "client-output-buffer-limit", "normal 10 10 0")
	small := ts.client()
	if fill(small, 16<<10) {
		t.Fatal("closed with its output in the static buffer")
	}
}

// clientField returns field of the CLIENT LIST line of client id ("" when
// the client is not listed).
func clientField(t *testing.T, r *rconn, id, field string) string {
	t.Helper()
	list := r.do("CLIENT", "LIST")
	for _, line := range strings.Split(strings.Trim(list, `"`), `\n`) {
		if !strings.HasPrefix(line, "id="+id+" ") {
			continue
		}
		for _, f := range strings.Fields(line) {
			if v, ok := strings.CutPrefix(f, field+"="); ok {
				return v
			}
		}
	}
	return ""
}

func (ts *testServer) obufTotalLocked() int64 {
	ts.s.mu.Lock()
	defer ts.s.mu.Unlock()
	return ts.s.obufTotal()
}

func (ts *testServer) clientByID(id string) *Client {
	n, _ := strconv.ParseInt(id, 10, 64)
	ts.s.clientsMu.Lock()
	defer ts.s.clientsMu.Unlock()
	return ts.s.clients[n]
}

// obufCheck runs the cron's output-buffer check once, under the lock.
func (ts *testServer) obufCheck() {
	ts.s.mu.Lock()
	ts.s.obufCron(ts.s.snapshotClients(nil))
	ts.s.mu.Unlock()
}

// clientOmem is the omem field of client id's CLIENT LIST line (0 when it
// is not listed).
func clientOmem(t *testing.T, r *rconn, id string) int64 {
	t.Helper()
	n, _ := strconv.ParseInt(clientField(t, r, id, "omem"), 10, 64)
	return n
}

// waitGone polls until client id is no longer listed or deadline passes,
// and reports whether it is gone.
func waitGone(t *testing.T, r *rconn, id string, deadline time.Time) bool {
	t.Helper()
	for time.Now().Before(deadline) && clientField(t, r, id, "id") != "" {
		time.Sleep(time.Millisecond)
	}
	return clientField(t, r, id, "id") == ""
}

// TestObufSubscriberNeverReads: a subscriber that never reads while a
// publisher floods is closed at the pubsub hard limit; what the server
// holds for it never goes past the limit and one message, and nothing is
// held once it is gone.
func TestObufSubscriberNeverReads(t *testing.T) {
	l := startLive(t, "--client-output-buffer-limit", "pubsub", "1mb", "0", "0")
	sub, pub := l.dial(t), l.dial(t)
	subID := sub.id()
	sub.send("SUBSCRIBE", "ch")
	if got := sub.read(); !strings.Contains(got, "subscribe") {
		t.Fatalf("SUBSCRIBE: %s", got)
	}
	msg := strings.Repeat("m", 10<<10)
	var peak int64
	gone := false
	deadline := time.Now().Add(30 * time.Second)
	for i := 0; time.Now().Before(deadline); i++ {
		got := pub.do("PUBLISH", "ch", msg)
		if got == "(integer) 0" {
			gone = true
			break
		}
		if n := l.obufTotalLocked(); n > peak {
			peak = n
		}
	}
	if !gone {
		t.Fatal("the subscriber that never reads was not disconnected")
	}
	if limit := int64(1<<20 + replyStaticBytes + len(msg) + 64); peak > limit {
		t.Fatalf("server held %d bytes of output, over the 1mb limit and a message", peak)
	}
	if peak == 0 {
		t.Fatal("never saw the subscriber's output accounted")
	}
	if clientField(t, pub, subID, "id") != "" {
		t.Fatal("the subscriber is still listed")
	}
	for time.Now().Before(deadline) && l.obufTotalLocked() != 0 {
		time.Sleep(time.Millisecond)
	}
	if n := l.obufTotalLocked(); n != 0 {
		t.Fatalf("%d bytes still held after the subscriber left", n)
	}
	// What the kernel held is still readable, then the end.
	sub.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.Copy(io.Discard, sub.br); err != nil && !strings.Contains(err.Error(), "reset") {
		t.Fatalf("the subscriber's connection was not closed: %v", err)
	}
}

// flood is a live server where client a has pipelined n GETs of a 100 KB
// value and reads none of the replies; admin is a second client.
type flood struct {
	*liveServer
	admin, a *rconn
	aID      string
	val      string    // the value of k, each GET's reply
	deadline time.Time // 30 s after the GETs were sent: the tests' polls end here
}

// startFlood starts a live server with directives, sets k to 100 KB, sets
// client-output-buffer-limit to limit unless it is "", and has a fresh
// client send n GET k without reading any reply.
func startFlood(t *testing.T, limit string, n int, directives ...string) *flood {
	t.Helper()
	f := &flood{liveServer: startLive(t, directives...), val: strings.Repeat("v", 100<<10)}
	f.admin, f.a = f.dial(t), f.dial(t)
	f.admin.do("SET", "k", f.val)
	if limit != "" {
		if got := f.admin.do("CONFIG", "SET", "client-output-buffer-limit", limit); got != "+OK" {
			t.Fatalf("CONFIG SET: %s", got)
		}
	}
	f.aID = f.a.id()
	var b []byte
	for i := 0; i < n; i++ {
		b = resp.AppendCommandStrings(b, "GET", "k")
	}
	go func() { _, _ = f.a.c.Write(b) }() // blocks while the server stops reading
	f.deadline = time.Now().Add(30 * time.Second)
	return f
}

// omem is a's omem in CLIENT LIST.
func (f *flood) omem(t *testing.T) int64 { return clientOmem(t, f.admin, f.aID) }

// connected reports whether a is still listed by CLIENT LIST.
func (f *flood) connected(t *testing.T) bool { return clientField(t, f.admin, f.aID, "id") != "" }

// waitOmem polls until a's omem is at least min or the deadline passes,
// and reports whether it got there.
func (f *flood) waitOmem(t *testing.T, min int64) bool {
	t.Helper()
	for time.Now().Before(f.deadline) && f.omem(t) < min {
		time.Sleep(time.Millisecond)
	}
	return f.omem(t) >= min
}

// TestObufNormalClientHardLimit: with a normal hard limit set, a client
// that pipelines large GETs and never reads is disconnected.
func TestObufNormalClientHardLimit(t *testing.T) {
	f := startFlood(t, "normal 1mb 0 0", 300)
	if !waitGone(t, f.admin, f.aID, f.deadline) {
		t.Fatal("the client over the normal hard limit is still connected")
	}
	got, _ := readAllUntilEOF(f.a.c, 10*time.Second)
	if len(got) >= 300*len(f.val) {
		t.Fatalf("got all %d bytes of replies", len(got))
	}
	if f.admin.do("PING") != "+PONG" {
		t.Fatal("the other client stopped working")
	}
}

// TestObufNormalClientSoftLimit: a normal client over its soft limit is
// disconnected once it has stayed over it for more than soft-seconds of
// the server's clock, and not before.
func TestObufNormalClientSoftLimit(t *testing.T) {
	f := startFlood(t, "normal 0 512kb 5", 300)
	if !f.waitOmem(t, 512<<10) {
		t.Fatalf("omem %d never reached the soft limit", f.omem(t))
	}
	f.obufCheck()
	f.clk.Advance(5 * time.Second)
	f.obufCheck()
	if !f.connected(t) {
		t.Fatal("disconnected after soft-seconds, not more")
	}
	if n := f.omem(t); n < 512<<10 {
		t.Fatalf("omem %d fell under the soft limit while the client does not read", n)
	}
	f.clk.Advance(time.Second)
	f.obufCheck()
	if !waitGone(t, f.admin, f.aID, f.deadline) {
		t.Fatal("still connected 6 s over the soft limit (soft-seconds 5)")
	}
}

// fakeReplica is a replica speaking the protocol on a test connection:
// it reads the full sync, then whatever the test says.
type fakeReplica struct {
	r      *rconn
	replID string
	offset int64 // the master offset its payload stands for
}

// psync sends PSYNC and reads the reply and, for a full sync, the payload.
func psync(t *testing.T, l *liveServer, replID string, offset int64) (*fakeReplica, string) {
	t.Helper()
	return psyncOn(t, l.dial(t), replID, offset)
}

// psyncOn is psync on a connection to any server (redis-server too).
func psyncOn(t *testing.T, r *rconn, replID string, offset int64) (*fakeReplica, string) {
	t.Helper()
	line := psyncStart(t, r, "7777", replID, offset)
	f := strings.Fields(line)
	if len(f) != 3 || f[0] != "+FULLRESYNC" {
		return &fakeReplica{r: r}, line
	}
	off, _ := strconv.ParseInt(f[2], 10, 64)
	var err error
	for { // keepalive newlines, then $<len>
		line, err = r.br.ReadString('\n')
		if err != nil {
			t.Fatalf("payload: %v", err)
		}
		if line != "\n" {
			break
		}
	}
	n, err := strconv.Atoi(strings.TrimRight(strings.TrimPrefix(line, "$"), "\r\n"))
	if err != nil {
		t.Fatalf("payload header %q", line)
	}
	if _, err := io.CopyN(io.Discard, r.br, int64(n)); err != nil {
		t.Fatalf("payload: %v", err)
	}
	return &fakeReplica{r: r, replID: f[1], offset: off}, "+FULLRESYNC"
}

// psyncStart makes r a replica listening on port (REPLCONF) asking for
// PSYNC replID offset, and returns the first line of the reply, without
// its CRLF (a +FULLRESYNC's payload is left unread).
func psyncStart(t *testing.T, r *rconn, port, replID string, offset int64) string {
	t.Helper()
	if got := r.do("REPLCONF", "listening-port", port); got != "+OK" {
		t.Fatalf("REPLCONF: %s", got)
	}
	r.send("PSYNC", replID, strconv.FormatInt(offset, 10))
	r.c.SetReadDeadline(time.Now().Add(30 * time.Second))
	line, err := r.br.ReadString('\n')
	if err != nil {
		t.Fatalf("PSYNC reply: %v", err)
	}
	return strings.TrimRight(line, "\r\n")
}

func liveInfoField(t *testing.T, r *rconn, section, field string) string {
	t.Helper()
	r.send("INFO", section)
	r.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	v, err := resp.ReadValue(r.br, resp.DefaultReplyLimits)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(v.Str, "\r\n") {
		if val, ok := strings.CutPrefix(line, field+":"); ok {
			return val
		}
	}
	return ""
}

// TestObufReplicaSoftLimit: a replica that stops reading while the master
// takes writes is dropped once it has been over the replica soft limit for
// more than soft-seconds of the master's clock, not before, and when it
// comes back its offset is long gone from the backlog: a full sync.
func TestObufReplicaSoftLimit(t *testing.T) {
	l := startLive(t, "--client-output-buffer-limit", "replica", "0", "256kb", "5",
		"--repl-diskless-sync", "no", "--repl-backlog-size", "16kb")
	admin := l.dial(t)
	rep, got := psync(t, l, "?", -1)
	if got != "+FULLRESYNC" {
		t.Fatalf("PSYNC: %s", got)
	}
	// The replica's client id, from CLIENT LIST TYPE replica.
	deadline := time.Now().Add(30 * time.Second)
	var id string
	for time.Now().Before(deadline) && id == "" {
		list := admin.do("CLIENT", "LIST", "TYPE", "replica")
		if m := regexp.MustCompile(`id=(\d+) `).FindStringSubmatch(list); m != nil {
			id = m[1]
		}
	}
	if id == "" {
		t.Fatal("no replica client listed")
	}
	omem := func() int64 { return clientOmem(t, admin, id) }
	// Writes the replica does not read, until it is well over the soft
	// limit: more than the socket buffers can still take from the writer.
	val := strings.Repeat("r", 10<<10)
	for i := 0; time.Now().Before(deadline) && omem() < 1<<20; i++ {
		if got := admin.do("SET", "k"+strconv.Itoa(i), val); got != "+OK" {
			t.Fatalf("SET: %s", got)
		}
	}
	if n := omem(); n < 256<<10 {
		t.Fatalf("replica omem %d never reached the soft limit", n)
	}
	l.obufCheck()
	l.clk.Advance(5 * time.Second)
	l.obufCheck()
	if clientField(t, admin, id, "id") == "" {
		t.Fatal("replica dropped after soft-seconds, not more")
	}
	l.clk.Advance(time.Second)
	l.obufCheck()
	for time.Now().Before(deadline) && liveInfoField(t, admin, "replication", "connected_slaves") != "0" {
		time.Sleep(time.Millisecond)
	}
	if got := liveInfoField(t, admin, "replication", "connected_slaves"); got != "0" {
		t.Fatalf("connected_slaves %s after 6 s over the soft limit (soft-seconds 5)", got)
	}
	rep.r.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.Copy(io.Discard, rep.r.br); err != nil && !strings.Contains(err.Error(), "reset") {
		t.Fatalf("the replica's connection was not closed: %v", err)
	}
	// It comes back asking for what follows its payload: gone from the
	// 16kb backlog, so a full sync.
	if got := liveInfoField(t, admin, "stats", "sync_full"); got != "1" {
		t.Fatalf("sync_full %s before the reconnection", got)
	}
	rep2, got := psync(t, l, rep.replID, rep.offset+1)
	if got != "+FULLRESYNC" {
		t.Fatalf("PSYNC after the drop: %s", got)
	}
	if rep2.replID != rep.replID {
		t.Fatalf("replication ID changed: %s, was %s", rep2.replID, rep.replID)
	}
	if got := liveInfoField(t, admin, "stats", "sync_full"); got != "2" {
		t.Fatalf("sync_full %s", got)
	}
	if got := liveInfoField(t, admin, "stats", "sync_partial_err"); got != "1" {
		t.Fatalf("sync_partial_err %s", got)
	}
}

// TestObufLimitSetWhileStuck: a limit set while a client that does not
// read has its replies held applies to it, as Redis applies new limits to
// the buffers it has (the cron's check): it is disconnected.
func TestObufLimitSetWhileStuck(t *testing.T) {
	f := startFlood(t, "", 300)
	if !f.waitOmem(t, 1) {
		t.Fatal("never saw the client's pending output")
	}
	if got := f.admin.do("CONFIG", "SET", "client-output-buffer-limit", "normal 3mb 0 0"); got != "+OK" {
		t.Fatalf("CONFIG SET: %s", got)
	}
	f.obufCheck() // the cron's next turn
	if !waitGone(t, f.admin, f.aID, f.deadline) {
		t.Fatal("still connected after the normal hard limit was set")
	}
}

// obufTotal is the output buffer bytes of every client but the running
// one (lock held): what the server holds for its peers.
func (s *Server) obufTotal() int64 {
	s.clientsMu.Lock()
	cls := make([]*Client, 0, len(s.clients))
	for _, c := range s.clients {
		cls = append(cls, c)
	}
	s.clientsMu.Unlock()
	var n int64
	for _, c := range cls {
		n += s.asyncBytes(c)
	}
	return n
}
