package server

import (
	"strings"
	"testing"

	"github.com/vigil-kv/vigil/server/keyspace"
)

// doR runs a command and renders the reply in the golden-script form.
func (ts *testServer) doR(t *testing.T, c *Client, args ...string) string {
	t.Helper()
	got, err := render(ts.do(c, args...))
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// notAString stands for a value of another type (a list, here) until those
// families exist: every string command must reply WRONGTYPE to it, and the
// type-independent commands (TYPE, OBJECT, MEMORY USAGE, COPY) must serve
// it through keyspace.Value alone.
type notAString struct{}

func (notAString) Type() keyspace.Type         { return keyspace.TypeList }
func (notAString) Encoding() keyspace.Encoding { return keyspace.EncodingQuicklist }
func (notAString) Size(int) uint64             { return 1000 }
func (notAString) Dup() keyspace.Value         { return notAString{} }

func TestIncrByFloatFormat(t *testing.T) {
	// Replies of redis-server 7.0.15 (x87 long double, "%.17Lf" trimmed).
	cases := []struct {
		start string // "" = key missing
		incr  string
		want  string
	}{
		{"", "10.5", `"10.5"`},
		{"10.5", "0.1", `"10.6"`},
		{"", "3.0e3", `"3000"`},
		{"0.1", "0.2", `"0.3"`},
		{"10.8", "3000", `"3010.80000000000000004"`},
		{"10.5", "-5.0e3", `"-4989.5"`},
		{"5000", "2.0e-3", `"5000.00199999999999978"`},
		{"0", "1e-20", `"0"`},
		{"0", "-1e-20", `"0"`},
		{"-1", "1", `"0"`},
		{"1", "0x10", `"17"`},
		{"1", "0x1.8p1", `"4"`},
		{"1", "+.5", `"1.5"`},
		{"1", "5.", `"6"`},
		{"1", "1E2", `"101"`},
		{"1.5e2", "1", `"151"`},
		{"12", "0", `"12"`},
		{"3.14159265358979323846", "0", `"3.14159265358979324"`},
		{"", "1.7976931348623157e308", `"179769313486231569995921046774104434048386446944329178485314420765176628523124396354701868608387085564428793419425520689308708363451136055357897278026477617073498977686288394835618163294045594434929537447290627480669417384648879122776218333598953852832103282504751611691208117720159985926376802466863339536384"`},
		{"", "2e-4951", `"0"`}, // a subnormal long double: accepted
		{"", "1e-4951", "-ERR value is not a valid float"},
		{"", "1e5000", "-ERR value is not a valid float"},
		{"", "nan", "-ERR value is not a valid float"},
		{"", "inf", "-ERR increment would produce NaN or Infinity"},
		{"1e4932", "1e4932", "-ERR increment would produce NaN or Infinity"},
		{"", " 1", "-ERR value is not a valid float"},
		{"", "1 ", "-ERR value is not a valid float"},
		{"", "0x", "-ERR value is not a valid float"},
		{"", "1e", "-ERR value is not a valid float"},
		{"", "1e+", "-ERR value is not a valid float"},
		{"", ".", "-ERR value is not a valid float"},
		{"", "", "-ERR value is not a valid float"},
		{"abc", "1", "-ERR value is not a valid float"},
		{" 1", "1", "-ERR value is not a valid float"},
	}
	ts := newTestServer(t)
	c := ts.client()
	for _, tc := range cases {
		ts.do(c, "DEL", "f")
		if tc.start != "" {
			ts.do(c, "SET", "f", tc.start)
		}
		if got := ts.doR(t, c, "INCRBYFLOAT", "f", tc.incr); got != tc.want {
			t.Errorf("INCRBYFLOAT %q + %q = %s, want %s", tc.start, tc.incr, got, tc.want)
		}
	}
}

func TestFormatLongDouble(t *testing.T) {
	for in, want := range map[string]string{
		"0": "0", "-0": "0", "1": "1", "-1.5": "-1.5", "100": "100", "0.5": "0.5",
		"0x1p-18": "0.00000381469726562", // a tie at the 18th decimal rounds to even
		"1e-18":   "0", "-1e-18": "0", "123456789012345678901234567890": "123456789012345678899921813504",
	} {
		f, ok := parseLongDouble([]byte(in))
		if !ok {
			t.Fatalf("%q not parsed", in)
		}
		if got := formatLongDouble(f); got != want {
			t.Errorf("format(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestSetOptionParsing(t *testing.T) {
	cases := []struct {
		args   string
		flags  int
		expIdx int
		ok     bool
	}{
		{"SET k v", 0, 0, true},
		{"SET k v NX", setNX, 0, true},
		{"SET k v xx", setXX, 0, true},
		{"SET k v NX NX", setNX, 0, true},
		{"SET k v NX XX", 0, 0, false},
		{"SET k v XX NX", 0, 0, false},
		{"SET k v GET", setGet, 0, true},
		{"SET k v get NX", setGet | setNX, 0, true},
		{"SET k v EX 10", setEX, 4, true},
		{"SET k v PX 10", setPX, 4, true},
		{"SET k v EXAT 10", setEXAT, 4, true},
		{"SET k v PXAT 10", setPXAT, 4, true},
		{"SET k v EX 10 EX 20", setEX, 6, true},
		{"SET k v EX 10 PX 20", 0, 0, false},
		{"SET k v PX 10 PXAT 20", 0, 0, false},
		{"SET k v EX", 0, 0, false},
		{"SET k v KEEPTTL", setKeepTTL, 0, true},
		{"SET k v KEEPTTL EX 1", 0, 0, false},
		{"SET k v EX 1 KEEPTTL", 0, 0, false},
		{"SET k v PERSIST", 0, 0, false},
		{"SET k v NX GET EX 5 ", setNX | setGet | setEX, 6, true},
		{"SET k v EXATT 5", 0, 0, false},
		{"GETEX k", 0, 0, true},
		{"GETEX k PERSIST", setPersist, 0, true},
		{"GETEX k PERSIST EX 1", 0, 0, false},
		{"GETEX k EX 1 PERSIST", 0, 0, false},
		{"GETEX k PXAT 1", setPXAT, 3, true},
		{"GETEX k KEEPTTL", 0, 0, false},
		{"GETEX k NX", 0, 0, false},
		{"GETEX k GET", 0, 0, false},
	}
	for _, tc := range cases {
		f := strings.Fields(tc.args)
		args := make([][]byte, len(f))
		for i := range f {
			args[i] = []byte(f[i])
		}
		flags, expIdx, ok := parseStringOpts(args, f[0] == "SET")
		if ok != tc.ok || (ok && (flags != tc.flags || expIdx != tc.expIdx)) {
			t.Errorf("%s: flags %b idx %d ok %v, want %b %d %v", tc.args, flags, expIdx, ok, tc.flags, tc.expIdx, tc.ok)
		}
	}
}

func TestStringWrongType(t *testing.T) {
	ts := newTestServer(t)
	c := ts.client()
	ts.s.mu.Lock()
	ts.s.ks.DBs[0].Set([]byte("l"), notAString{}, ts.clk.Now().UnixMilli())
	ts.s.mu.Unlock()
	wrong := "-" + ErrWrongType
	for _, cmd := range [][]string{
		{"GET", "l"}, {"SET", "l", "v", "GET"}, {"GETSET", "l", "v"}, {"GETDEL", "l"},
		{"GETEX", "l", "EX", "10"}, {"APPEND", "l", "x"}, {"STRLEN", "l"},
		{"GETRANGE", "l", "0", "1"}, {"SUBSTR", "l", "0", "1"}, {"SETRANGE", "l", "0", "x"},
		{"INCR", "l"}, {"DECR", "l"}, {"INCRBY", "l", "2"}, {"DECRBY", "l", "2"},
		{"INCRBYFLOAT", "l", "1.5"},
	} {
		if got := ts.doR(t, c, cmd...); got != wrong {
			t.Errorf("%v: %s", cmd, got)
		}
	}
	// GETEX checks the type before validating the expire.
	if got := ts.doR(t, c, "GETEX", "l", "EX", "0"); got != wrong {
		t.Errorf("GETEX EX 0: %s", got)
	}
	// MGET replies null for a non-string; LCS has its own message.
	if got := ts.doR(t, c, "MGET", "l", "nokey"); got != "[(nil), (nil)]" {
		t.Errorf("MGET: %s", got)
	}
	if got := ts.doR(t, c, "LCS", "l", "nokey"); got != "-"+ErrLCSWrongType {
		t.Errorf("LCS: %s", got)
	}
	if got := ts.doR(t, c, "LCS", "nokey", "l", "foo"); got != "-"+ErrLCSWrongType {
		t.Errorf("LCS before options: %s", got)
	}
	// Overwriting commands replace a value of any type.
	for _, cmd := range [][]string{{"SET", "l", "v"}, {"MSET", "l", "v"}} {
		ts.s.mu.Lock()
		ts.s.ks.DBs[0].Set([]byte("l"), notAString{}, ts.clk.Now().UnixMilli())
		ts.s.mu.Unlock()
		if got := ts.doR(t, c, cmd...); got != "+OK" {
			t.Errorf("%v: %s", cmd, got)
		}
		if got := ts.doR(t, c, "GET", "l"); got != `"v"` {
			t.Errorf("%v then GET: %s", cmd, got)
		}
	}
	// SET NX/XX look at existence only.
	ts.s.mu.Lock()
	ts.s.ks.DBs[0].Set([]byte("l"), notAString{}, ts.clk.Now().UnixMilli())
	ts.s.mu.Unlock()
	if got := ts.doR(t, c, "SET", "l", "v", "NX"); got != "(nil)" {
		t.Errorf("SET NX: %s", got)
	}
	if got := ts.doR(t, c, "SETNX", "l", "v"); got != "(integer) 0" {
		t.Errorf("SETNX: %s", got)
	}
	if got := ts.doR(t, c, "MSETNX", "l", "v", "new", "v"); got != "(integer) 0" {
		t.Errorf("MSETNX: %s", got)
	}
}

func TestStringSizeLimit(t *testing.T) {
	ts := newTestServer(t, "--proto-max-bulk-len", "1mb")
	c := ts.client()
	big := strings.Repeat("x", 1<<20)
	if got := ts.doR(t, c, "SET", "k", big); got != "+OK" {
		t.Fatal(got)
	}
	if got := ts.doR(t, c, "APPEND", "k", "y"); got != "-"+ErrStringTooLong {
		t.Errorf("APPEND past the limit: %s", got)
	}
	if got := ts.doR(t, c, "SETRANGE", "k", "1048575", "y"); got != "(integer) 1048576" {
		t.Errorf("SETRANGE at the limit: %s", got)
	}
	if got := ts.doR(t, c, "SETRANGE", "k", "1048576", "y"); got != "-"+ErrStringTooLong {
		t.Errorf("SETRANGE past the limit: %s", got)
	}
	if got := ts.doR(t, c, "SETRANGE", "new", "1048576", "y"); got != "-"+ErrStringTooLong {
		t.Errorf("SETRANGE on a new key past the limit: %s", got)
	}
	// The LCS table (4 bytes a cell) is bounded by proto-max-bulk-len too.
	ts.do(c, "SET", "a", strings.Repeat("a", 600))
	ts.do(c, "SET", "b", strings.Repeat("b", 600))
	if got := ts.doR(t, c, "LCS", "a", "b"); got != "-"+ErrLCSMemory {
		t.Errorf("LCS table too big: %s", got)
	}
}

func TestKeyspaceHitsMisses(t *testing.T) {
	ts := newTestServer(t)
	c := ts.client()
	ts.do(c, "SET", "k", "v")
	hits := func() (int64, int64) {
		ts.s.mu.Lock()
		defer ts.s.mu.Unlock()
		return ts.s.stats.keyspaceHits, ts.s.stats.keyspaceMisses
	}
	for _, tc := range []struct {
		cmd       []string
		hit, miss int64
	}{
		{[]string{"GET", "k"}, 1, 0},
		{[]string{"GET", "nokey"}, 0, 1},
		{[]string{"MGET", "k", "nokey", "k"}, 2, 1},
		{[]string{"STRLEN", "k"}, 1, 0},
		{[]string{"GETRANGE", "k", "0", "1"}, 1, 0},
		{[]string{"GETEX", "k"}, 1, 0},
		{[]string{"SET", "k", "v", "GET"}, 1, 0},
		{[]string{"LCS", "k", "nokey"}, 1, 1},
		{[]string{"EXISTS", "k", "nokey"}, 1, 1},
		{[]string{"TTL", "k"}, 1, 0},
		{[]string{"TYPE", "nokey"}, 0, 1},
		{[]string{"TOUCH", "k"}, 1, 0},
		{[]string{"OBJECT", "ENCODING", "k"}, 1, 0},
		// Writes look keys up without counting.
		{[]string{"SET", "k", "v"}, 0, 0},
		{[]string{"INCR", "n"}, 0, 0},
		{[]string{"APPEND", "k", "x"}, 0, 0},
		{[]string{"DEL", "nokey"}, 0, 0},
		{[]string{"EXPIRE", "k", "100"}, 0, 0},
		{[]string{"RENAME", "n", "m"}, 0, 0},
	} {
		h0, m0 := hits()
		ts.do(c, tc.cmd...)
		h1, m1 := hits()
		if h1-h0 != tc.hit || m1-m0 != tc.miss {
			t.Errorf("%v: hits +%d misses +%d, want +%d +%d", tc.cmd, h1-h0, m1-m0, tc.hit, tc.miss)
		}
	}
}

// TestHotPathAllocs checks that GET of an existing key and SET/MSET/INCR
// overwriting a value of the same size allocate nothing in the handler.
func TestHotPathAllocs(t *testing.T) {
	ts := newTestServer(t)
	c := ts.client()
	ts.do(c, "SET", "key:000001", "value-0123456789")
	ts.do(c, "SET", "counter", "1000")
	ts.s.mu.Lock()
	defer ts.s.mu.Unlock()
	ts.s.setNow()
	argv := func(s ...string) [][]byte {
		out := make([][]byte, len(s))
		for i := range s {
			out[i] = []byte(s[i])
		}
		return out
	}
	c.w.B = make([]byte, 0, 4096)
	for _, tc := range []struct {
		name string
		h    Handler
		args [][]byte
	}{
		{"GET", cmdGet, argv("GET", "key:000001")},
		{"GET missing", cmdGet, argv("GET", "nokey")},
		{"SET same size", cmdSet, argv("SET", "key:000001", "value-9876543210")},
		{"MSET same size", cmdMSet, argv("MSET", "key:000001", "value-1111111111", "counter", "2000")},
		{"MGET", cmdMGet, argv("MGET", "key:000001", "nokey", "counter")},
		{"INCR same length", cmdIncr, argv("INCR", "counter")},
		{"EXISTS", cmdExists, argv("EXISTS", "key:000001")},
		{"TTL", cmdTTL, argv("TTL", "key:000001")},
	} {
		allocs := testing.AllocsPerRun(200, func() {
			c.w.B = c.w.B[:0]
			tc.h(c, tc.args)
		})
		if allocs != 0 {
			t.Errorf("%s: %.1f allocations per call", tc.name, allocs)
		}
	}
	if got, _ := render(string(c.w.B)); got != "(integer) -1" {
		t.Fatalf("last reply (TTL) %s", got)
	}
}

func BenchmarkGet(b *testing.B) {
	ts := newTestServer(b)
	c := ts.client()
	ts.do(c, "SET", "key", "value")
	args := [][]byte{[]byte("GET"), []byte("key")}
	ts.s.mu.Lock()
	defer ts.s.mu.Unlock()
	ts.s.setNow()
	b.ReportAllocs()
	for b.Loop() {
		c.w.B = c.w.B[:0]
		cmdGet(c, args)
	}
}

func BenchmarkSet(b *testing.B) {
	ts := newTestServer(b)
	c := ts.client()
	args := [][]byte{[]byte("SET"), []byte("key"), []byte("value")}
	ts.s.mu.Lock()
	defer ts.s.mu.Unlock()
	ts.s.setNow()
	b.ReportAllocs()
	for b.Loop() {
		c.w.B = c.w.B[:0]
		cmdSet(c, args)
	}
}
