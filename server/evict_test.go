package server

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/testutil"
)

// infoInt reads one integer field of INFO section from a test server.
func infoInt(t *testing.T, ts *testServer, c *Client, section, field string) int64 {
	t.Helper()
	info := ts.do(c, "INFO", section)
	i := strings.Index(info, "\r\n"+field+":")
	if i < 0 {
		t.Fatalf("INFO %s has no %s", section, field)
	}
	v := info[i+len(field)+3:]
	v = v[:strings.Index(v, "\r\n")]
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		t.Fatalf("INFO %s: %s:%s", section, field, v)
	}
	return n
}

const oomReply = "-" + ErrOOM + "\r\n"

// oomScript is the Redis-deterministic sequence of TestOOMMatchesRedis:
// replies are rendered as rconn renders them.
var oomScript = []struct {
	cmd  []string
	want string
}{
	{[]string{"SET", "a", "1"}, "+OK"},
	{[]string{"CONFIG", "SET", "maxmemory", "1"}, "+OK"},
	{[]string{"SET", "b", "1"}, "-" + ErrOOM},
	{[]string{"INCR", "n"}, "-" + ErrOOM},
	{[]string{"GET", "a"}, `"1"`},
	{[]string{"EXISTS", "b"}, "(integer) 0"},
	// Inside MULTI everything but EXEC/DISCARD/QUIT/RESET is refused and
	// the transaction is flagged.
	{[]string{"MULTI"}, "+OK"},
	{[]string{"GET", "a"}, "-" + ErrOOM},
	{[]string{"PING"}, "-" + ErrOOM},
	{[]string{"EXEC"}, "-EXECABORT Transaction discarded because of previous errors."},
	{[]string{"MULTI"}, "+OK"},
	{[]string{"DISCARD"}, "+OK"},
	{[]string{"MULTI"}, "+OK"},
	{[]string{"EXEC"}, "[]"},
	// Scripts: a denyoom command is refused until the script wrote.
	{[]string{"EVAL", "return redis.call('set','x','1')", "0"},
		"-" + ErrOOM + " script: 8b2ae6dd76cda7fc3e27f97431ae27d7b08a221d, on @user_script:1."},
	{[]string{"EVAL", "return redis.pcall('set','x','1')", "0"}, "-" + ErrOOM},
	{[]string{"EVAL", "redis.call('del','nokey'); return redis.call('set','x','1')", "0"}, "+OK"},
	{[]string{"EVAL", "return redis.call('get','x')", "0"}, `"1"`},
	// Commands that are not denyoom run.
	{[]string{"DEL", "x"}, "(integer) 1"},
	{[]string{"EXPIRE", "a", "1000"}, "(integer) 1"},
	// volatile-lru evicts a (the only key with a TTL), is still over
	// the limit and has nothing more to evict: -OOM.
	{[]string{"CONFIG", "SET", "maxmemory-policy", "volatile-lru"}, "+OK"},
	{[]string{"SET", "c", "1"}, "-" + ErrOOM},
	{[]string{"EXISTS", "a"}, "(integer) 0"},
	{[]string{"CONFIG", "SET", "maxmemory", "100mb"}, "+OK"},
	{[]string{"SET", "c", "1"}, "+OK"},
	{[]string{"CONFIG", "SET", "maxmemory", "0"}, "+OK"},
	{[]string{"CONFIG", "SET", "maxmemory-policy", "noeviction"}, "+OK"},
}

func runOOMScript(t *testing.T, c *rconn, name string) {
	t.Helper()
	for _, st := range oomScript {
		if got := c.do(st.cmd...); got != st.want {
			t.Errorf("%s: %q = %s, want %s", name, st.cmd, got, st.want)
		}
	}
}

// TestOOMMatchesRedis runs the same sequence on Vigil and on Debian's
// redis-server: -OOM under noeviction, in MULTI and in scripts, and a
// volatile policy that runs out of keys with a TTL.
func TestOOMMatchesRedis(t *testing.T) {
	l := startLive(t)
	c := l.dial(t)
	runOOMScript(t, c, "vigil")
	st := infoOf(t, c, "stats")
	if st["evicted_keys"] != "1" {
		t.Errorf("vigil: evicted_keys:%s, want 1", st["evicted_keys"])
	}
	if !strings.Contains(c.do("INFO", "errorstats"), "errorstat_OOM:count=") {
		t.Error("vigil: -OOM not counted in errorstats")
	}
	t.Run("redis", func(t *testing.T) {
		dial := startRedis(t)
		nc, br := dial(2)
		rc := &rconn{t: t, c: nc, br: br}
		runOOMScript(t, rc, "redis-server")
		if st := infoOf(t, rc, "stats"); st["evicted_keys"] != "1" {
			t.Errorf("redis: evicted_keys:%s, want 1", st["evicted_keys"])
		}
	})
}

// infoOf parses an INFO section read through an rconn.
func infoOf(t *testing.T, c *rconn, section string) map[string]string {
	t.Helper()
	raw, err := strconv.Unquote(c.do("INFO", section))
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, line := range strings.Split(raw, "\r\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			m[k] = v
		}
	}
	return m
}

// TestInfoMaxmemoryFieldsMatchRedis compares the maxmemory fields of INFO
// memory after CONFIG SET with redis-server's.
func TestInfoMaxmemoryFieldsMatchRedis(t *testing.T) {
	fields := []string{"maxmemory", "maxmemory_human", "maxmemory_policy", "mem_not_counted_for_evict"}
	steps := [][]string{{"maxmemory", "100mb", "maxmemory-policy", "allkeys-lru"}, {"maxmemory", "1234567", "maxmemory-policy", "volatile-ttl"}, {"maxmemory", "0", "maxmemory-policy", "noeviction"}}
	collect := func(c *rconn) []string {
		var out []string
		for _, st := range steps {
			if got := c.do(append([]string{"CONFIG", "SET"}, st...)...); got != "+OK" {
				t.Fatal(got)
			}
			m := infoOf(t, c, "memory")
			for _, f := range fields {
				out = append(out, f+":"+m[f])
			}
		}
		return out
	}
	l := startLive(t)
	got := collect(l.dial(t))
	want := []string{"maxmemory:104857600", "maxmemory_human:100.00M", "maxmemory_policy:allkeys-lru", "mem_not_counted_for_evict:0",
		"maxmemory:1234567", "maxmemory_human:1.18M", "maxmemory_policy:volatile-ttl", "mem_not_counted_for_evict:0",
		"maxmemory:0", "maxmemory_human:0B", "maxmemory_policy:noeviction", "mem_not_counted_for_evict:0"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("vigil:\n got %v\nwant %v", got, want)
	}
	t.Run("redis", func(t *testing.T) {
		dial := startRedis(t)
		nc, br := dial(2)
		if r := collect(&rconn{t: t, c: nc, br: br}); strings.Join(r, " ") != strings.Join(want, " ") {
			t.Fatalf("redis-server:\n got %v\nwant %v", r, want)
		}
	})
}

// TestEvictionKeepsMemoryNearMaxmemory writes far past maxmemory under
// allkeys-lru and allkeys-lfu: used_memory (the figure INFO reports) stays
// at maxmemory, keys are evicted and counted, and the keys read all along
// survive.
func TestEvictionKeepsMemoryNearMaxmemory(t *testing.T) {
	for _, policy := range []string{"allkeys-lru", "allkeys-lfu"} {
		t.Run(policy, func(t *testing.T) { testEvictionNearMaxmemory(t, policy) })
	}
}

func testEvictionNearMaxmemory(t *testing.T, policy string) {
	ts := newTestServer(t)
	ts.s.rng = rand.New(rand.NewPCG(1, 2))
	ts.s.ks.LFU.Rand = ts.s.rng
	c := ts.client()
	used0 := infoInt(t, ts, c, "memory", "used_memory")
	limit := used0 + 256<<10
	for _, kv := range [][2]string{{"maxmemory-policy", policy}, {"maxmemory", strconv.FormatInt(limit, 10)}} {
		if got := ts.do(c, "CONFIG", "SET", kv[0], kv[1]); got != "+OK\r\n" {
			t.Fatal(got)
		}
	}
	hot := []string{"hot:0", "hot:1", "hot:2", "hot:3", "hot:4"}
	for _, k := range hot {
		ts.do(c, "SET", k, strings.Repeat("h", 100))
	}
	val := strings.Repeat("x", 100)
	const writes = 20000
	for i := range writes {
		ts.clk.Advance(time.Millisecond)
		if got := ts.do(c, "SET", "key:"+strconv.Itoa(i), val); got != "+OK\r\n" {
			t.Fatalf("write %d: %q", i, got)
		}
		if i%20 == 0 {
			for _, k := range hot {
				ts.do(c, "GET", k)
			}
		}
		if i%500 == 0 {
			// Eviction runs before each command, so memory exceeds the
			// limit by at most what the last command added.
			if used := infoInt(t, ts, c, "memory", "used_memory"); used > limit+1024 {
				t.Fatalf("write %d: used_memory %d, maxmemory %d", i, used, limit)
			}
		}
	}
	ts.do(c, "PING") // evicts what the last SET added
	used := infoInt(t, ts, c, "memory", "used_memory")
	if used > limit || used < limit-8<<10 {
		t.Fatalf("used_memory %d, want within 8 KB under maxmemory %d", used, limit)
	}
	ts.s.mu.Lock()
	figure := ts.s.usedMemory()
	ts.s.mu.Unlock()
	if figure != uint64(used) {
		t.Fatalf("eviction decides on %d, INFO reports %d", figure, used)
	}
	evicted := infoInt(t, ts, c, "stats", "evicted_keys")
	keys := int64(ts.s.ks.Len())
	if evicted == 0 || keys+evicted != writes+int64(len(hot)) {
		t.Fatalf("evicted_keys %d, keys %d: want them to add up to %d", evicted, keys, writes+len(hot))
	}
	for _, k := range hot {
		if got := ts.do(c, "EXISTS", k); got != ":1\r\n" {
			t.Errorf("hot key %s was evicted", k)
		}
	}
	if policy == "allkeys-lru" {
		// The most recent writes are there (under LFU they tie with
		// every other key read once).
		if got := ts.do(c, "EXISTS", "key:"+strconv.Itoa(writes-1)); got != ":1\r\n" {
			t.Error("the last key written was evicted")
		}
	}
}

// TestEvictionPropagation checks that evicted keys reach the write path as
// DEL, or UNLINK under lazyfree-lazy-eviction, one unit each (never
// wrapped in MULTI), whether CONFIG SET maxmemory evicts or the check
// before a command does.
//
// maxmemory is set from the start so that the client's own memory
// (clientevict.go) is counted in used_memory from its first command, as
// in Redis, and the limits below, taken from used_memory, hold it.
func TestEvictionPropagation(t *testing.T) {
	ts := newTestServer(t, "--maxmemory-policy", "allkeys-lru", "--maxmemory-samples", "64", "--maxmemory", "1gb")
	c := ts.client()
	rec := &Recorder{}
	ts.s.AddPropagator(rec)
	for _, k := range []string{"k1", "k2", "k3", "k4"} {
		ts.do(c, "SET", k, "v")
		ts.clk.Advance(time.Second)
	}
	rec.Reset()
	rec.stream.Assume(0)
	setMax := func(n int64) {
		t.Helper()
		if got := ts.do(c, "CONFIG", "SET", "maxmemory", strconv.FormatInt(n, 10)); got != "+OK\r\n" {
			t.Fatal(got)
		}
	}
	used := func() int64 { return infoInt(t, ts, c, "memory", "used_memory") }
	keySize := func(k string) int64 {
		n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimPrefix(ts.do(c, "MEMORY", "USAGE", k), ":")), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	// CONFIG SET below used_memory evicts the least recently used key.
	setMax(used() - 1)
	ts.do(c, "CONFIG", "SET", "lazyfree-lazy-eviction", "yes")
	setMax(used() - 1)
	// A limit the dataset fits exactly: the next SET goes over, and the
	// command after it evicts before running.
	setMax(used())
	ts.do(c, "SET", "k5", "v")
	ts.clk.Advance(time.Second)
	ts.do(c, "GET", "k5")
	ts.clk.Advance(time.Second)
	// Two keys at once: not wrapped in MULTI.
	setMax(used() - keySize("k4") - 1)
	want := [][]string{{"DEL", "k1"}, {"UNLINK", "k2"}, {"SET", "k5", "v"}, {"UNLINK", "k3"}, {"UNLINK", "k4"}, {"UNLINK", "k5"}}
	got := parseAOF(t, rec.Bytes())
	if !goldenEqual(want, got) {
		t.Fatalf("stream:\n got: %s\nwant: %s", fmtCmds(got), fmtCmdsS(want))
	}
	if n := infoInt(t, ts, c, "stats", "evicted_keys"); n != 5 {
		t.Fatalf("evicted_keys %d, want 5", n)
	}
	if got := ts.do(c, "DBSIZE"); got != ":0\r\n" {
		t.Fatalf("DBSIZE %q, want 0", got)
	}
}

// TestEvictionEventsAndWatch: an evicted key fires the "evicted" keyspace
// event and touches WATCH.
func TestEvictionEventsAndWatch(t *testing.T) {
	l := startLive(t, "--notify-keyspace-events", "Ee", "--maxmemory-policy", "allkeys-random")
	c, sub, w := l.dial(t), l.dial(t), l.dial(t)
	if got := sub.do("SUBSCRIBE", "__keyevent@0__:evicted"); !strings.HasPrefix(got, `["subscribe"`) {
		t.Fatal(got)
	}
	c.do("SET", "a", "1")
	if got := w.do("WATCH", "a"); got != "+OK" {
		t.Fatal(got)
	}
	if got := c.do("CONFIG", "SET", "maxmemory", "1"); got != "+OK" {
		t.Fatal(got)
	}
	if got := sub.read(); got != `["message", "__keyevent@0__:evicted", "a"]` {
		t.Fatalf("event %s", got)
	}
	if got := c.do("CONFIG", "SET", "maxmemory", "0"); got != "+OK" {
		t.Fatal(got)
	}
	w.do("MULTI")
	w.do("PING")
	if got := w.do("EXEC"); got != "(nil)" && got != "[]" && !strings.Contains(got, "nil") {
		t.Fatalf("EXEC after the watched key was evicted: %s", got)
	} else if got == "[]" {
		t.Fatal("EXEC ran although the watched key was evicted")
	}
}

// TestOOMMasterExempt: the master link's commands are never refused
// (mustObeyClient).
func TestOOMMasterExempt(t *testing.T) {
	ts := newTestServer(t, "--maxmemory", "1")
	c := ts.client()
	if got := ts.do(c, "SET", "a", "1"); got != oomReply {
		t.Fatalf("normal client: %q", got)
	}
	m := ts.client()
	m.replRole.Store(kindMaster)
	if got := ts.do(m, "SET", "a", "1"); got == oomReply {
		t.Fatal("the master client was refused with -OOM")
	}
	if got := ts.do(c, "EXISTS", "a"); got != ":1\r\n" {
		t.Fatalf("EXISTS a = %q", got)
	}
}

// TestMaxmemoryZeroAccountsButNeverEvicts: without maxmemory nothing is
// refused or evicted, and used_memory still follows the dataset.
func TestMaxmemoryZeroAccountsButNeverEvicts(t *testing.T) {
	ts := newTestServer(t, "--maxmemory-policy", "allkeys-lru")
	c := ts.client()
	before := infoInt(t, ts, c, "memory", "used_memory")
	ts.do(c, "SET", "big", strings.Repeat("x", 100000))
	after := infoInt(t, ts, c, "memory", "used_memory")
	if after-before < 100000 || after-before > 140000 {
		t.Fatalf("a 100000-byte value moved used_memory by %d", after-before)
	}
	ts.do(c, "APPEND", "big", strings.Repeat("y", 100000))
	grown := infoInt(t, ts, c, "memory", "used_memory")
	if grown-after < 100000 {
		t.Fatalf("APPEND of 100000 bytes moved used_memory by %d", grown-after)
	}
	ts.do(c, "DEL", "big")
	if got := infoInt(t, ts, c, "memory", "used_memory"); got != before {
		t.Fatalf("after DEL used_memory %d, want %d", got, before)
	}
	if n := infoInt(t, ts, c, "stats", "evicted_keys"); n != 0 {
		t.Fatalf("evicted_keys %d", n)
	}
}

// evictAOFCase is deterministic on both servers: volatile-ttl with more
// samples than keys evicts in TTL order, and maxmemory 1 evicts every key
// with a TTL (then refuses writes).
var evictAOFCase = struct {
	cmds [][]string
	want [][]string
}{
	cmds: [][]string{{"SET", "p", "1"}, {"SET", "a", "1", "PXAT", "4102444800003"}, {"SET", "b", "1", "PXAT", "4102444800001"},
		{"SET", "c", "1", "PXAT", "4102444800002"}, {"CONFIG", "SET", "maxmemory-policy", "volatile-ttl"}, {"CONFIG", "SET", "maxmemory-samples", "64"},
		{"CONFIG", "SET", "maxmemory", "1"}, {"SET", "d", "1"}, {"CONFIG", "SET", "maxmemory", "0"},
		{"SET", "e", "1", "PXAT", "4102444800005"}, {"SET", "f", "1", "PXAT", "4102444800004"}, {"CONFIG", "SET", "lazyfree-lazy-eviction", "yes"},
		{"CONFIG", "SET", "maxmemory", "1"}, {"GET", "p"},
		{"CONFIG", "SET", "maxmemory", "0"}, {"CONFIG", "SET", "lazyfree-lazy-eviction", "no"}, {"CONFIG", "SET", "maxmemory-policy", "noeviction"},
		{"CONFIG", "SET", "maxmemory-samples", "5"}},
	want: [][]string{{"SET", "p", "1"}, {"SET", "a", "1", "PXAT", "4102444800003"}, {"SET", "b", "1", "PXAT", "4102444800001"},
		{"SET", "c", "1", "PXAT", "4102444800002"}, {"DEL", "b"}, {"DEL", "c"}, {"DEL", "a"},
		{"SET", "e", "1", "PXAT", "4102444800005"}, {"SET", "f", "1", "PXAT", "4102444800004"}, {"UNLINK", "f"}, {"UNLINK", "e"}},
}

// TestEvictionAOFMatchesRedis compares the recorded stream of evictions
// with redis-server 7.0's appendonly file.
func TestEvictionAOFMatchesRedis(t *testing.T) {
	ts := newTestServer(t)
	c := ts.client()
	rec := &Recorder{}
	ts.s.AddPropagator(rec)
	rec.Reset()
	rec.stream.Assume(0)
	for _, cmd := range evictAOFCase.cmds {
		ts.do(c, cmd...)
	}
	if got := parseAOF(t, rec.Bytes()); !goldenEqual(evictAOFCase.want, got) {
		t.Fatalf("vigil:\n got: %s\nwant: %s", fmtCmds(got), fmtCmdsS(evictAOFCase.want))
	}
	t.Run("redis", func(t *testing.T) {
		if testing.Short() {
			t.Skip("starts redis-server")
		}
		dial, aof := startRedisAOF(t)
		rc, rbr := dial(2)
		rawDo(t, rc, rbr, "FLUSHALL")
		mark := len(aof.incr(t))
		for _, cmd := range evictAOFCase.cmds {
			rawDo(t, rc, rbr, cmd...)
		}
		if got := parseAOF(t, aof.incr(t)[mark:]); !goldenEqual(evictAOFCase.want, got) {
			t.Fatalf("redis-server's AOF:\n got: %s\nwant: %s", fmtCmds(got), fmtCmdsS(evictAOFCase.want))
		}
	})
}

func TestEvictionTimeLimit(t *testing.T) {
	// evictionTimeLimitUs: 50 µs per step up to 10, then +15% a step,
	// unlimited at 100.
	for _, tc := range []struct {
		tenacity int
		want     int64
	}{{0, 0}, {1, 50}, {10, 500}, {11, 575}, {20, 2022}, {99, 126205358}, {100, 1<<63 - 1}} {
		if got := evictionTimeLimit(tc.tenacity); got != tc.want {
			t.Errorf("tenacity %d: %d µs, want %d", tc.tenacity, got, tc.want)
		}
	}
}

// TestEvictionExceededTime: INFO stats counts the time spent over
// maxmemory (stat_last_eviction_exceeded_time), on the server's clock.
func TestEvictionExceededTime(t *testing.T) {
	ts := newTestServer(t, "--maxmemory", "1")
	c := ts.client()
	if got := ts.do(c, "SET", "a", "1"); got != oomReply {
		t.Fatal(got)
	}
	ts.clk.Advance(1500 * time.Millisecond)
	if cur, tot := infoInt(t, ts, c, "stats", "current_eviction_exceeded_time"), infoInt(t, ts, c, "stats", "total_eviction_exceeded_time"); cur != 1500 || tot != 1500 {
		t.Fatalf("over the limit for 1.5 s: current %d total %d", cur, tot)
	}
	ts.do(c, "CONFIG", "SET", "maxmemory", "100mb")
	ts.clk.Advance(time.Second)
	if cur, tot := infoInt(t, ts, c, "stats", "current_eviction_exceeded_time"), infoInt(t, ts, c, "stats", "total_eviction_exceeded_time"); cur != 0 || tot != 1500 {
		t.Fatalf("back under the limit: current %d total %d", cur, tot)
	}
}

// TestReplicaIgnoreMaxmemory: a replica does not evict while
// replica-ignore-maxmemory is yes (the default); with no, it evicts like a
// master, and still never refuses its master's commands.
func TestReplicaIgnoreMaxmemory(t *testing.T) {
	ts := newTestServer(t, "--maxmemory-policy", "allkeys-lru")
	c := ts.client()
	for _, k := range []string{"a", "b", "c"} {
		ts.do(c, "SET", k, "v")
	}
	ts.s.mu.Lock()
	ts.s.repl.link = &replLink{} // a replica (no link goroutine runs here)
	ts.s.mu.Unlock()
	m := ts.client()
	m.replRole.Store(kindMaster)
	ts.do(c, "CONFIG", "SET", "maxmemory", "1")
	if got := ts.do(m, "SET", "d", "v"); got != "+OK\r\n" {
		t.Fatalf("master's SET on a replica over maxmemory: %q", got)
	}
	if n := ts.s.ks.Len(); n != 4 {
		t.Fatalf("replica-ignore-maxmemory yes: %d keys left, want all 4", n)
	}
	ts.do(c, "CONFIG", "SET", "replica-ignore-maxmemory", "no")
	if got := ts.do(m, "SET", "e", "v"); got != "+OK\r\n" {
		t.Fatalf("master's SET with replica-ignore-maxmemory no: %q", got)
	}
	// Everything before e was evicted to make room; e itself went in
	// after the eviction.
	if n := infoInt(t, ts, c, "stats", "evicted_keys"); n < 4 {
		t.Fatalf("replica-ignore-maxmemory no: evicted_keys %d, want at least 4", n)
	}
	ts.s.mu.Lock()
	ts.s.repl.link = nil
	ts.s.mu.Unlock()
}

// TestOOMExecWithQueuedWrite: memory goes over maxmemory after a write was
// queued; EXEC is then refused (mstate.cmd_flags has denyoom) and the
// transaction discarded, while an EXEC of reads only runs.
func TestOOMExecWithQueuedWrite(t *testing.T) {
	run := func(t *testing.T, a, b *rconn) {
		// b changes maxmemory while a's transaction is open.
		for _, st := range []struct {
			c    *rconn
			cmd  []string
			want string
		}{
			{a, []string{"SET", "k", "v"}, "+OK"},
			{a, []string{"MULTI"}, "+OK"},
			{a, []string{"SET", "x", "1"}, "+QUEUED"},
			{b, []string{"CONFIG", "SET", "maxmemory", "1"}, "+OK"},
			{a, []string{"EXEC"}, "-EXECABORT Transaction discarded because of: " + ErrOOM},
			{a, []string{"EXISTS", "x"}, "(integer) 0"},
			{b, []string{"CONFIG", "SET", "maxmemory", "0"}, "+OK"},
			{a, []string{"MULTI"}, "+OK"},
			{a, []string{"GET", "k"}, "+QUEUED"},
			{b, []string{"CONFIG", "SET", "maxmemory", "1"}, "+OK"},
			{a, []string{"EXEC"}, `["v"]`},
			{b, []string{"CONFIG", "SET", "maxmemory", "0"}, "+OK"},
		} {
			if got := st.c.do(st.cmd...); got != st.want {
				t.Errorf("%q = %s, want %s", st.cmd, got, st.want)
			}
		}
	}
	l := startLive(t)
	run(t, l.dial(t), l.dial(t))
	t.Run("redis", func(t *testing.T) {
		dial := startRedis(t)
		conn := func() *rconn { nc, br := dial(2); return &rconn{t: t, c: nc, br: br} }
		run(t, conn(), conn())
	})
}

// TestAOFBufferMemAsRedis: INFO mem_aof_buffer and the AOF part of
// mem_not_counted_for_evict are sdsAllocSize(server.aof_buf): the
// allocation an AOF buffer kept between flushes (sdsempty's 8 bytes, one
// grown by a command's sdscatlen, freed again once it passes 4000
// bytes), on redis-server 7.0.15 and on Vigil with appendonly yes:
// 8, 112 after SET k v (with its SELECT), 8 after a 5000-byte SET, 64
// after SET k v.
func TestAOFBufferMemAsRedis(t *testing.T) {
	testutil.NeedRedis(t)
	scenario := func(c *rconn) []string {
		var out []string
		figure := func() {
			m := infoOf(t, c, "memory")
			out = append(out, m["mem_aof_buffer"]+"/"+m["mem_not_counted_for_evict"])
		}
		figure()
		for _, v := range []string{"v", strings.Repeat("x", 5000), "v"} {
			if got := c.do("SET", "k", v); got != "+OK" {
				t.Fatalf("SET: %s", got)
			}
			figure()
		}
		return out
	}
	// appendfsync no: no background fsync, so no flush is postponed
	// (flushAppendOnlyFile's everysec wait) and each command's buffer is
	// written before the next command.
	rs := testutil.StartRedis(t, testutil.RedisOptions{Args: []string{"--appendonly", "yes", "--appendfsync", "no"}})
	redis := scenario(rawConn(t, rs.Dial(t)))
	l := startLive(t, "--appendonly", "yes", "--appendfsync", "no", "--dir", t.TempDir())
	vigil := scenario(l.dial(t))
	sameAsRedis(t, "mem_aof_buffer/mem_not_counted_for_evict", redis, vigil,
		[]string{"8/8", "112/112", "8/8", "64/64"})
}
