package server

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/vigil-kv/vigil/server/keyspace"
)

func TestJemallocSize(t *testing.T) {
	for _, tc := range []struct{ n, want uint64 }{
		{0, 8}, {1, 8}, {8, 8}, {9, 16}, {16, 16}, {17, 32}, {32, 32}, {33, 48}, {49, 64},
		{113, 128}, {128, 128}, {129, 160}, {160, 160}, {161, 192}, {225, 256}, {256, 256},
		{257, 320}, {1024, 1024}, {1025, 1280}, {4097, 5120}, {5006, 5120}, {14337, 16384},
		{16385, 20480}, {32773, 40960}, {65536, 65536}, {65537, 81920},
		{1 << 20, 1 << 20}, {1<<20 + 1, 1310720}, {2000012, 2097152}, {4194305, 5242880},
	} {
		if got := jemallocSize(tc.n); got != tc.want {
			t.Errorf("jemallocSize(%d) = %d, want %d", tc.n, got, tc.want)
		}
	}
}

func TestSdsHdrSize(t *testing.T) {
	for _, tc := range []struct{ n, want uint64 }{
		{0, 1}, {31, 1}, {32, 3}, {255, 3}, {256, 5}, {65535, 5}, {65536, 9}, {1<<32 - 1, 9}, {1 << 32, 17},
	} {
		if got := sdsHdrSize(tc.n); got != tc.want {
			t.Errorf("sdsHdrSize(%d) = %d, want %d", tc.n, got, tc.want)
		}
	}
}

// The sds sizes below are MEMORY USAGE of key "k" on redis-server 7.0.15
// minus the robj (16), the key's sds (8) and the dictEntry (24).
func TestSdsArgSize(t *testing.T) {
	for _, tc := range []struct{ n, want uint64 }{
		{0, 8}, {45, 64}, {100, 112}, {1000, 1024}, {5000, 5120}, {20000, 20480},
		{32760, 32768}, {32767, 40960}, {32768, 40960}, {40954, 40960}, {40955, 49152},
		{49146, 49152}, {49147, 57344}, {65528, 65536},
		// The query buffer of a big argument keeps its block when the
		// sdshdr16 alloc cap hides the free space.
		{65529, 81920}, {65533, 81920}, {65534, 81920}, {65536, 81920},
		{81910, 81920}, {81911, 98304}, {100000, 114688}, {131067, 163840}, {200000, 229376},
		{1 << 20, 1310720}, {2000000, 2097152}, {4194293, 4194304}, {4194304, 5242880},
	} {
		if got := sdsArgSize(tc.n); got != tc.want {
			t.Errorf("sdsArgSize(%d) = %d, want %d", tc.n, got, tc.want)
		}
	}
}

func TestSdsGrownSize(t *testing.T) {
	for _, tc := range []struct{ n, want uint64 }{
		{0, 8},     // sdshdr8, room for nothing
		{2, 8},     // SET v, APPEND w: 3+4+1
		{3, 16},    // SET 12, APPEND 3: 3+6+1
		{7, 32},    // SET hello, SETRANGE 3 JJJJ: 3+14+1
		{45, 96},   // 3+90+1
		{128, 320}, // 256 needs an sdshdr16: 5+256+1
		{1<<20 - 1, 2621440},
		{1 << 20, 2621440}, // 1 MB more: 9+2 MB+1
	} {
		if got := sdsGrownSize(tc.n); got != tc.want {
			t.Errorf("sdsGrownSize(%d) = %d, want %d", tc.n, got, tc.want)
		}
	}
}

func TestStringObjectSize(t *testing.T) {
	s := func(n int) []byte { return []byte(strings.Repeat("a", n)) }
	for _, tc := range []struct {
		val  []byte
		enc  keyspace.Encoding
		want uint64
	}{
		{[]byte("12"), keyspace.EncAuto, 16},
		{[]byte("-9223372036854775808"), keyspace.EncAuto, 16},
		{[]byte("7"), keyspace.EncIntUnshared, 16},
		{[]byte("012"), keyspace.EncAuto, 32}, // not an int: embstr
		{[]byte("12"), keyspace.EncEmbstr, 32},
		{s(0), keyspace.EncAuto, 32},
		{s(12), keyspace.EncAuto, 32},
		{s(13), keyspace.EncAuto, 48},
		{s(44), keyspace.EncAuto, 64},
		{s(45), keyspace.EncAuto, 16 + 64},
		{s(45), keyspace.EncEmbstr, 16 + 64},
		{s(65530), keyspace.EncAuto, 16 + 81920},   // big argument
		{s(65530), keyspace.EncEmbstr, 16 + 65536}, // not from an argument
		{[]byte("12"), keyspace.EncRaw, 16 + 8},
		{s(100), keyspace.EncRaw, 16 + 224},
	} {
		if got := stringObjectSize(tc.val, tc.enc); got != tc.want {
			t.Errorf("stringObjectSize(%d bytes %.10q, enc %d) = %d, want %d", len(tc.val), tc.val, tc.enc, got, tc.want)
		}
	}
}

// TestMemoryUsageAgainstRedis compares MEMORY USAGE of values too long for
// a golden script (the big-argument sizes) with a live redis-server.
func TestMemoryUsageAgainstRedis(t *testing.T) {
	if _, err := os.Stat(redisServerBin); err != nil {
		t.Skip("redis-server not installed (apt-get install redis-server)")
	}
	if testing.Short() {
		t.Skip("starts redis-server")
	}
	cn := dialOracle(t, startRedisOracle(t, nil))
	ts := newTestServer(t)
	c := ts.client()
	do := func(args ...string) (vigil, redis string) {
		v, err := render(ts.do(c, args...))
		if err != nil {
			t.Fatal(err)
		}
		return v, cn.do(args, 1)
	}
	for _, n := range []int{32767, 32768, 40954, 40955, 65528, 65529, 65531, 65533, 65534, 65535, 65536, 100000, 1 << 20} {
		for _, key := range []string{"k", strings.Repeat("k", 300)} {
			if v, r := do("SET", key, strings.Repeat("v", n)); v != r {
				t.Fatalf("SET: vigil %s, redis %s", v, r)
			}
			if v, r := do("MEMORY", "USAGE", key); v != r {
				t.Errorf("MEMORY USAGE of %d-byte key, %d-byte value: vigil %s, redis %s", len(key), n, v, r)
			}
		}
	}
}

func TestMemoryDoctorReport(t *testing.T) {
	const (
		emptyText   = "Hi Sam, this instance is empty or is using very little memory, my issues detector can't be used in these conditions. Please, leave for your mission on Earth and fill it with some data. The new Sam and I will be back to our programming as soon as I finished rebooting.\n"
		healthyText = "Hi Sam, I can't find any memory issue in your instance. I can only account for what occurs on this base.\n"
		head        = "Sam, I detected a few issues in this Redis instance memory implants:\n\n"
		tail        = "I'm here to keep you safe, Sam. I want to help you.\n"
	)
	healthy := memOverhead{
		totalAllocated: 100 << 20, peakAllocated: 120 << 20,
		allocatorAllocated: 100 << 20, allocatorActive: 105 << 20, allocatorResident: 110 << 20,
		allocator: "go",
	}
	healthy.allocatorFragBytes = healthy.allocatorActive - healthy.allocatorAllocated
	healthy.allocatorRSSBytes = healthy.allocatorResident - healthy.allocatorActive
	healthy.derive(112 << 20)
	healthy.rssExtraBytes = 2 << 20
	healthy.totalFragBytes = 12 << 20

	if got := memoryDoctorReport(memOverhead{totalAllocated: 5<<20 - 1, peakAllocated: 50 << 20}, doctorInput{clients: 1}); got != emptyText {
		t.Errorf("below 5 MB: %q", got)
	}
	if got := memoryDoctorReport(healthy, doctorInput{clients: 1}); got != healthyText {
		t.Errorf("healthy: %q", got)
	}

	sick := memOverhead{
		totalAllocated: 100 << 20, peakAllocated: 151 << 20,
		allocatorAllocated: 100 << 20, allocatorActive: 150 << 20, allocatorResident: 180 << 20,
		allocatorFragBytes: 50 << 20, allocatorRSSBytes: 30 << 20, rssExtraBytes: 20 << 20, totalFragBytes: 100 << 20,
		clientsNormal: 2 * 201 << 10, clientsSlaves: 11 << 20,
		allocator: "go",
	}
	sick.derive(200 << 20)
	got := memoryDoctorReport(sick, doctorInput{clients: 3, replicas: 1, scripts: 1001})
	if !strings.HasPrefix(got, head) || !strings.HasSuffix(got, tail) {
		t.Fatalf("report frame: %q", got)
	}
	var titles []string
	for _, p := range strings.Split(strings.TrimSuffix(strings.TrimPrefix(got, head), tail), "\n\n") {
		if p == "" {
			continue
		}
		title, _, _ := strings.Cut(p, ":")
		titles = append(titles, title)
	}
	want := []string{" * Peak memory", " * High total RSS", " * High allocator fragmentation", " * High allocator RSS overhead", " * High process RSS overhead", " * Big replica buffers", " * Big client buffers", " * Many scripts"}
	if strings.Join(titles, "|") != strings.Join(want, "|") {
		t.Errorf("issues %q, want %q", titles, want)
	}
	if !strings.Contains(got, `Note: The currently used allocator is "go".`) {
		t.Errorf("allocator name missing: %q", got)
	}
}

// TestMemoryStatsMatchesInfo: MEMORY STATS reports INFO memory's figures,
// which are taken in one INFO call, so they agree with each other.
func TestMemoryStatsMatchesInfo(t *testing.T) {
	ts := newTestServer(t)
	c := ts.client()
	ts.do(c, "SET", "a", "1")
	ts.do(c, "SET", "b", "2")
	ts.do(c, "EXPIRE", "b", "100")
	v := parseReply(t, ts.do(c, "MEMORY", "STATS"))
	stats := map[string]string{}
	for i := 0; i+1 < len(v.Elems); i += 2 {
		stats[v.Elems[i].Str] = renderValue(v.Elems[i+1])
	}
	num := func(k string) int64 {
		n, err := strconv.ParseInt(strings.TrimPrefix(stats[k], "(integer) "), 10, 64)
		if err != nil {
			t.Fatalf("%s = %s", k, stats[k])
		}
		return n
	}
	// getMemoryOverheadData's definitions: the overhead is the startup
	// figure plus the databases' hash tables (db.0 here: 2 keys in 4 slots,
	// 1 TTL in 4 slots: 112 + 56 bytes), the dataset the rest, and INFO
	// raises the peak to used_memory.
	if num("overhead.total") != num("startup.allocated")+112+56 {
		t.Errorf("overhead.total %d, startup.allocated %d + 168", num("overhead.total"), num("startup.allocated"))
	}
	// (Go's heap may be below the startup figure after a GC: no dataset.)
	if want := max(num("total.allocated")-num("overhead.total"), 0); num("dataset.bytes") != want {
		t.Errorf("dataset.bytes %d, want total.allocated %d - overhead.total %d", num("dataset.bytes"), num("total.allocated"), num("overhead.total"))
	}
	if num("peak.allocated") < num("total.allocated") {
		t.Errorf("peak.allocated %d < total.allocated %d", num("peak.allocated"), num("total.allocated"))
	}
	// A field INFO renamed would read as 0.
	for _, k := range []string{"peak.allocated", "total.allocated", "startup.allocated", "allocator.allocated", "allocator.active", "allocator.resident"} {
		if num(k) <= 0 {
			t.Errorf("%s = %s, want a positive figure", k, stats[k])
		}
	}
	if want := `["overhead.hashtable.main", (integer) 112, "overhead.hashtable.expires", (integer) 56, "overhead.hashtable.slot-to-keys", (integer) 0]`; stats["db.0"] != want {
		t.Errorf("db.0 = %s, want %s", stats["db.0"], want)
	}
	if stats["keys.count"] != "(integer) 2" {
		t.Errorf("keys.count = %s", stats["keys.count"])
	}
}

// TestRedisCliMemkeys runs redis-cli --memkeys against a listening Vigil
// and, when redis-server is installed, checks its summary is the one the
// same keys give on Redis.
func TestRedisCliMemkeys(t *testing.T) {
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		t.Skip("redis-cli not installed")
	}
	if testing.Short() {
		t.Skip("runs redis-cli")
	}
	setup := [][]string{
		{"SET", "int", "12345"},
		{"SET", "big", strings.Repeat("x", 100)},
		{"MSET", "c", "hello", "d", "world"},
		{"APPEND", "d", "!!!"},
	}
	summary := func(sock string, extra ...string) string {
		out, err := exec.Command(cli, append([]string{"-s", sock}, extra...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("redis-cli %s: %v\n%s", strings.Join(extra, " "), err, out)
		}
		_, sum, ok := strings.Cut(string(out), "-------- summary -------")
		if !ok {
			t.Fatalf("redis-cli %s: no summary:\n%s", strings.Join(extra, " "), out)
		}
		return sum
	}
	l := startLive(t)
	r := l.dial(t)
	for _, cmd := range setup {
		r.send(cmd...)
		r.read()
	}
	var redisSock string
	if _, err := os.Stat(redisServerBin); err == nil {
		redisSock = startRedisOracle(t, nil)
		cn := dialOracle(t, redisSock)
		for _, cmd := range setup {
			cn.do(cmd, 1)
		}
	}
	for _, args := range [][]string{{"--memkeys"}, {"--memkeys-samples", "0"}} {
		got := summary(l.sock, args...)
		for _, want := range []string{
			"Sampled 4 keys in the keyspace!",
			`Biggest string found '"big"' has 160 bytes`,
			"4 strings with 352 bytes (100.00% of keys, avg size 88.00)",
		} {
			if !strings.Contains(got, want) {
				t.Errorf("redis-cli %s: no %q in\n%s", strings.Join(args, " "), want, got)
			}
		}
		if redisSock != "" {
			if want := summary(redisSock, args...); got != want {
				t.Errorf("redis-cli %s: vigil\n%s\nredis\n%s", strings.Join(args, " "), got, want)
			}
		}
	}
}
