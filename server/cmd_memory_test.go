package server

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/vigil-kv/vigil/internal/testutil"
)

// TestMemoryUsageAgainstRedis compares MEMORY USAGE of values too long for
// a golden script (the big-argument sizes) with a live redis-server.
func TestMemoryUsageAgainstRedis(t *testing.T) {
	testutil.NeedRedis(t)
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
