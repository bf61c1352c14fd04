package server

import (
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/vigil-kv/vigil/configs"
	"github.com/vigil-kv/vigil/internal/resp"
)

// The connection hot path without the socket: parse a pipelined batch from
// the query buffer and run it under one lock, as runBatch does.

// hotClient is a client of a real-clock server (the clock path of
// production) whose query buffer is fed directly.
func hotClient(tb testing.TB) *Client {
	tb.Helper()
	cfg, err := configs.Load(configs.LoadOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	s, err := New(cfg, zerolog.Nop())
	if err != nil {
		tb.Fatal(err)
	}
	c := &Client{srv: s, id: s.nextID.Add(1), addr: "127.0.0.1:50000", user: "default", authed: true}
	c.w.Proto = 2
	c.rd = resp.NewReader(strings.NewReader(""), resp.DefaultLimits)
	return c
}

// pipeline encodes n copies of a command as redis-benchmark sends them.
func pipeline(n int, args ...string) []byte {
	var b []byte
	for range n {
		b = append(b, '*')
		b = strconv.AppendInt(b, int64(len(args)), 10)
		b = append(b, "\r\n"...)
		for _, a := range args {
			b = append(b, '$')
			b = strconv.AppendInt(b, int64(len(a)), 10)
			b = append(b, "\r\n"...)
			b = append(b, a...)
			b = append(b, "\r\n"...)
		}
	}
	return b
}

// runFed runs every command of in as one batch (runBatch minus the write)
// and returns the number of commands.
func runFed(c *Client, in []byte) int {
	s := c.srv
	c.rd.Feed(in)
	c.w.B = c.w.B[:0]
	n := 0
	s.mu.Lock()
	c.batchStart = s.clock.Now()
	c.cmdEnd = c.batchStart
	for {
		args, err := c.rd.Next()
		if err != nil || args == nil {
			break
		}
		s.process(c, args)
		n++
	}
	c.cmdEnd, c.batchStart = time.Time{}, time.Time{}
	s.mu.Unlock()
	return n
}

var hotCases = []struct {
	name string
	args []string
	want string // reply of one command
}{
	{"SET", []string{"SET", "key:__rand_int__", "xxx"}, "+OK\r\n"},
	{"GET", []string{"GET", "key:__rand_int__"}, "$3\r\nxxx\r\n"},
	{"INCR", []string{"INCR", "counter:__rand_int__"}, ""},
	{"MSET", append([]string{"MSET"}, strings.Split(strings.Repeat("key:__rand_int__ xxx ", 10), " ")[:20]...), "+OK\r\n"},
	{"get lowercase", []string{"get", "key:__rand_int__"}, "$3\r\nxxx\r\n"},
}

// TestHotPathNoAllocs: a pipelined batch of SET, GET, INCR or MSET on an
// existing key costs no allocation (parse, lookup, execution, stats,
// reply), and every command replies.
func TestHotPathNoAllocs(t *testing.T) {
	c := hotClient(t)
	runFed(c, pipeline(1, "SET", "key:__rand_int__", "xxx"))
	runFed(c, pipeline(1, "SET", "counter:__rand_int__", "100"))
	for _, tc := range hotCases {
		in := pipeline(16, tc.args...)
		if n := runFed(c, in); n != 16 {
			t.Fatalf("%s: ran %d commands, want 16", tc.name, n)
		}
		if tc.want != "" && string(c.w.B) != strings.Repeat(tc.want, 16) {
			t.Fatalf("%s: replies %q", tc.name, c.w.B)
		}
		if allocs := testing.AllocsPerRun(200, func() { runFed(c, in) }); allocs != 0 {
			t.Errorf("%s: %v allocations per batch of 16", tc.name, allocs)
		}
	}
	if got := runFed(c, pipeline(1, "GET", "counter:__rand_int__")); got != 1 || !strings.HasPrefix(string(c.w.B), "$") {
		t.Fatalf("counter: %q", c.w.B)
	}
}

func BenchmarkHotPath(b *testing.B) {
	for _, tc := range hotCases {
		for _, p := range []int{1, 16} {
			b.Run(tc.name+"/P"+strconv.Itoa(p), func(b *testing.B) {
				c := hotClient(b)
				runFed(c, pipeline(1, "SET", "key:__rand_int__", "xxx"))
				in := pipeline(p, tc.args...)
				b.ReportAllocs()
				for b.Loop() {
					runFed(c, in)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*p), "ns/cmd")
			})
		}
	}
}

func TestConfigureRuntime(t *testing.T) {
	if os.Getenv("GOMAXPROCS") != "" {
		t.Skip("GOMAXPROCS is set in the environment")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, tc := range []struct {
		args []string
		want int
	}{
		{nil, 1},
		{[]string{"--io-threads", "2"}, min(2, runtime.NumCPU())},
		{[]string{"--io-threads", "128"}, runtime.NumCPU()},
	} {
		cfg, err := configs.Load(configs.LoadOptions{Args: tc.args})
		if err != nil {
			t.Fatal(err)
		}
		if got := ConfigureRuntime(cfg); got != tc.want || runtime.GOMAXPROCS(0) != tc.want {
			t.Errorf("%v: ConfigureRuntime = %d, GOMAXPROCS %d, want %d", tc.args, got, runtime.GOMAXPROCS(0), tc.want)
		}
	}
	t.Setenv("GOMAXPROCS", "2")
	runtime.GOMAXPROCS(2)
	cfg, _ := configs.Load(configs.LoadOptions{})
	if got := ConfigureRuntime(cfg); got != 2 {
		t.Errorf("with GOMAXPROCS=2 in the environment: %d", got)
	}
}

// TestKillClientMidBatch: killing a client whose loop has read a batch and
// waits for the execution lock, while the killer holds that lock (CLIENT
// KILL, PUBLISH over the output limit), does not wait for the batch: the
// loop runs inside RawConn.Read, which holds a reference on the socket that
// a synchronous net.Conn.Close would wait for.
func TestKillClientMidBatch(t *testing.T) {
	l := startLive(t)
	a := l.dial(t)
	id, _ := strconv.ParseInt(a.id(), 10, 64)
	l.s.clientsMu.Lock()
	target := l.s.clients[id]
	l.s.clientsMu.Unlock()
	if target == nil || target.raw == nil {
		t.Fatalf("client %d: not found or not reading its socket directly", id)
	}

	l.s.mu.Lock()
	in := l.s.stats.netInput.Load()
	a.send("PING")
	deadline := time.Now().Add(10 * time.Second)
	for l.s.stats.netInput.Load() == in { // the loop has read the batch
		if time.Now().After(deadline) {
			l.s.mu.Unlock()
			t.Fatal("the command was never read")
		}
		runtime.Gosched()
	}
	killed := make(chan struct{})
	go func() { target.kill(); close(killed) }()
	select {
	case <-killed:
	case <-time.After(10 * time.Second):
		l.s.mu.Unlock()
		t.Fatal("kill waited for the batch that waits for the lock")
	}
	l.s.mu.Unlock()
	if !a.closed() {
		t.Fatal("the killed client's connection is still open")
	}
}

// TestKillPausedClient: CLIENT KILL of a client whose write is parked by
// CLIENT PAUSE WRITE ends its connection now, not when the pause ends, and
// the parked command never runs.
func TestKillPausedClient(t *testing.T) {
	l := startLive(t)
	admin, a := l.dial(t), l.dial(t)
	id := a.id()
	if got := admin.do("CLIENT", "PAUSE", "100000", "WRITE"); got != "+OK" {
		t.Fatalf("PAUSE: %s", got)
	}
	a.send("SET", "k", "v")
	waitPaused(t, l.s, 1)
	if got := admin.do("CLIENT", "KILL", "ID", id); got != "(integer) 1" {
		t.Fatalf("CLIENT KILL: %s", got)
	}
	if !a.closed() {
		t.Fatal("the killed client's connection is still open during the pause")
	}
	if got := admin.do("CLIENT", "UNPAUSE"); got != "+OK" {
		t.Fatalf("UNPAUSE: %s", got)
	}
	waitPaused(t, l.s, 0)
	if got := admin.do("EXISTS", "k"); got != "(integer) 0" {
		t.Fatalf("the killed client's SET ran: EXISTS k = %s", got)
	}
}

// discardConn is a connection whose writes the kernel takes at once.
type discardConn struct{ net.Conn }

func (discardConn) Write(b []byte) (int, error) { return len(b), nil }

// BenchmarkRunBatch is BenchmarkHotPath through runBatch: the lock, the
// batch's clock reading and output-buffer accounting, and the reply's
// write (to a connection that takes it at once), per batch of p commands.
func BenchmarkRunBatch(b *testing.B) {
	for _, tc := range hotCases[:3] {
		for _, p := range []int{1, 16} {
			b.Run(tc.name+"/P"+strconv.Itoa(p), func(b *testing.B) {
				c := hotClient(b)
				c.conn = discardConn{}
				runFed(c, pipeline(1, "SET", "key:__rand_int__", "xxx"))
				in := pipeline(p, tc.args...)
				b.ReportAllocs()
				for b.Loop() {
					c.rd.Feed(in)
					if !c.srv.runBatch(c) {
						b.Fatal("connection closed")
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*p), "ns/cmd")
			})
		}
	}
}

// TestBatchNoAllocs: the whole batch of one command at -P 1, as
// runBatch runs it (lock, parse, execution, the memory settle, the reply
// write), allocates nothing for GET, SET and INCR on an existing key: an
// allocation per batch is one per request at -P 1 (a *ProtocolError
// moved to the heap for errors.As was one).
func TestBatchNoAllocs(t *testing.T) {
	c := hotClient(t)
	c.conn = discardConn{}
	s := c.srv
	feed := func(in []byte) {
		c.rd.Feed(in)
		if !s.runBatch(c) {
			t.Fatal("runBatch closed the connection")
		}
	}
	feed(pipeline(1, "SET", "key:__rand_int__", "xxx"))
	feed(pipeline(1, "SET", "counter:__rand_int__", "100"))
	for _, tc := range hotCases {
		in := pipeline(1, tc.args...)
		feed(in)
		if allocs := testing.AllocsPerRun(200, func() { feed(in) }); allocs != 0 {
			t.Errorf("%s: %v allocations per batch of 1", tc.name, allocs)
		}
	}
}
