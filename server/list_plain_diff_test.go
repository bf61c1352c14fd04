package server

import (
	"bufio"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/vigil-kv/vigil/internal/testutil"
	"github.com/vigil-kv/vigil/server/keyspace"
)

// TestListPlainDifferential (interop): with DEBUG QUICKLIST-PACKED-THRESHOLD
// set low, elements of at least the threshold go to PLAIN quicklist nodes
// (quicklist.c's isLargeElement), on Vigil as on redis-server 7.0.15. A
// random stream of list commands (pushes, pops, LTRIM, LMOVE, LINSERT and
// LSET of large elements into packed nodes, which split them, and of small
// ones next to or over PLAIN nodes, LREM) runs on both under
// list-compress-depth 0, 1 and 2 and two fills; after every command the
// DUMP payload (each node's container, its listpack or element, raw or as
// the LZF blob Redis holds), DEBUG OBJECT's quicklist fields and MEMORY
// USAGE must be Redis's byte for byte. Now and then Redis's DUMP is
// RESTOREd on both (the loader's PLAIN nodes) and compared the same way.
func TestListPlainDifferential(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server")
	}
	dial, _ := startRedisAOF(t)
	rc, rbr := dial(2)
	ts := newTestServer(t, "--enable-debug-command", "yes")
	c := ts.client()
	t.Cleanup(func() { keyspace.SetPackedThreshold(0) }) // process-wide, as Redis's
	rng := rand.New(rand.NewPCG(7, diffSeed(1022)))
	fields := regexp.MustCompile(`(serializedlength|ql_\w+):\S+`)
	var history []string
	dumps := map[string]string{} // each key's nodes after the last check
	do := func(args ...string) string {
		t.Helper()
		want := rawDo(t, rc, rbr, args...)
		got := ts.do(c, args...)
		history = append(history, shortCommand(args))
		if args[0] == "DEBUG" && strings.EqualFold(args[1], "OBJECT") {
			got = strings.Join(fields.FindAllString(got, -1), " ")
			want = strings.Join(fields.FindAllString(want, -1), " ")
		}
		if got != want && args[0] == "DUMP" {
			got, want = dumpNodes(got), dumpNodes(want)
			if got == want {
				got, want = "same nodes, other bytes", ""
			}
		}
		if got != want {
			t.Fatalf("%.80q:\n vigil %.400q\n redis %.400q\nnodes before: %q\nlast commands:\n%s", args, got, want, dumps, strings.Join(history[max(0, len(history)-15):], "\n"))
		}
		return got
	}
	threshold := 0
	letters := "abcdefghijklmnopqrstuvwxyz0123456789"
	elem := func() string {
		n := 0
		switch rng.IntN(10) {
		case 0, 1:
			n = threshold + rng.IntN(3) - 1 // around the threshold
		case 2:
			n = threshold + rng.IntN(3*threshold)
		case 3:
			return strconv.Itoa(rng.IntN(100000) - 50000)
		default:
			n = rng.IntN(threshold / 2)
		}
		if rng.IntN(2) == 0 { // compresses
			return strings.Repeat("v", n)
		}
		b := make([]byte, n)
		for i := range b {
			b[i] = letters[rng.IntN(len(letters))]
		}
		return string(b)
	}
	check := func(k string) {
		t.Helper()
		if do("EXISTS", k) == ":0\r\n" {
			delete(dumps, k)
			return
		}
		dumps[k] = dumpNodes(do("DUMP", k))
		do("DEBUG", "OBJECT", k)
		do("MEMORY", "USAGE", k, "SAMPLES", "0")
		do("MEMORY", "USAGE", k)
		do("LRANGE", k, "0", "-1")
	}
	// restore RESTOREs Redis's DUMP of k as "copy" on both.
	restore := func(k string) {
		t.Helper()
		if do("EXISTS", k) == ":0\r\n" {
			return
		}
		do("RESTORE", "copy", "0", bulkOf(t, rawDo(t, rc, rbr, "DUMP", k)), "REPLACE")
		check("copy")
	}
	mix := listMix{push: 4, pop: 2, trim: 1, move: 1, edit: 6, maxPush: 8, maxPop: 6, maxTrim: 6, maxIndex: 30,
		extra: []func(k string) []string{
			func(k string) []string { return []string{"LINDEX", k, strconv.Itoa(rng.IntN(40) - 20)} },
			func(k string) []string { return []string{"LINSERT", k, "BEFORE", "no-such-pivot", elem()} },
			func(k string) []string { return []string{"LPOS", k, elem(), "RANK", "-1"} },
		}}
	do("CONFIG", "SET", "rdbcompression", "no") // DUMP shows each node's state
	for _, th := range []int{64, 1000} {
		threshold = th
		do("DEBUG", "QUICKLIST-PACKED-THRESHOLD", strconv.Itoa(th))
		for _, depth := range []string{"0", "1", "2"} {
			for _, fill := range []string{"-1", "3"} {
				do("CONFIG", "SET", "list-compress-depth", depth)
				do("CONFIG", "SET", "list-max-listpack-size", fill)
				do("FLUSHALL")
				for i := 0; i < 300; i++ {
					k := []string{"p", "q", "r"}[rng.IntN(3)]
					do(mix.command(ts, rng, k, elem)...)
					for _, k := range []string{"p", "q", "r"} {
						check(k)
					}
					if i%25 == 0 {
						restore(k)
					}
				}
			}
		}
	}
	do("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "0")
	do("CONFIG", "SET", "list-compress-depth", "0")
	do("CONFIG", "SET", "list-max-listpack-size", "-2")
	do("CONFIG", "SET", "rdbcompression", "yes")
}

// diffSeed is VIGIL_DIFF_SEED when set (to explore other streams), else def.
func diffSeed(def uint64) uint64 {
	if v, err := strconv.ParseUint(os.Getenv("VIGIL_DIFF_SEED"), 10, 64); err == nil {
		return v
	}
	return def
}

// TestListPlainRDBInterop (interop): lists with PLAIN nodes (made under
// DEBUG QUICKLIST-PACKED-THRESHOLD 100 by pushes, LSET and LINSERT, some
// compressed at list-compress-depth 1) saved by Vigil load in
// redis-server 7.0.15 with the same nodes: DUMP, DEBUG OBJECT's quicklist
// fields and MEMORY USAGE are Vigil's; and redis-server's dump.rdb of
// them, changed there, loads in Vigil with redis-server's.
func TestListPlainRDBInterop(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server")
	}
	if _, err := os.Stat(redisServerBin); err != nil {
		t.Skip("redis-server not installed")
	}
	t.Cleanup(func() { keyspace.SetPackedThreshold(0) })
	dir := t.TempDir()
	ts := newTestServer(t, "--dir", dir, "--enable-debug-command", "yes", "--list-compress-depth", "1")
	c := ts.client()
	do := func(args ...string) string {
		t.Helper()
		r := ts.do(c, args...)
		if strings.HasPrefix(r, "-") {
			t.Fatalf("%q: %q", args, r)
		}
		return r
	}
	big := func(ch string, n int) string { return strings.Repeat(ch, n) }
	rnd := rand.New(rand.NewPCG(3, 4))
	noise := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('a' + rnd.IntN(26))
		}
		return string(b)
	}
	do("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "100")
	do("RPUSH", "l1", "a", big("P", 300), "b", noise(500), "c")
	do("RPUSH", "l2", "x", "y", "z", "w")
	do("LSET", "l2", "1", big("Q", 200)) // splits the packed node
	do("LINSERT", "l2", "AFTER", "z", noise(150))
	do("RPUSH", "l3", "123456789", big("1", 100)) // a PLAIN node of digits: saved as a string
	for i := 0; i < 40; i++ {                     // many nodes: the inner ones compressed
		do("RPUSH", "l4", big("c", 120+i), "e"+strconv.Itoa(i), noise(130))
	}
	keys := []string{"l1", "l2", "l3", "l4"}
	fields := regexp.MustCompile(`(serializedlength|ql_\w+):\S+`)
	state := func(get func(args ...string) string, k string) string {
		return dumpNodes(get("DUMP", k)) + " | " + strings.Join(fields.FindAllString(get("DEBUG", "OBJECT", k), -1), " ") +
			" | " + get("MEMORY", "USAGE", k) + " | " + get("DUMP", k)
	}
	mine := map[string]string{}
	for _, k := range keys {
		mine[k] = state(func(args ...string) string { return ts.do(c, args...) }, k)
		if !strings.Contains(mine[k], "plain:") {
			t.Fatalf("%s has no PLAIN node: %.200q", k, mine[k])
		}
	}
	do("SAVE")
	if out, err := exec.Command("redis-check-rdb", filepath.Join(dir, "dump.rdb")).CombinedOutput(); err != nil || !strings.Contains(string(out), "RDB looks OK") {
		t.Fatalf("redis-check-rdb: %v\n%s", err, out)
	}
	r := testutil.StartRedis(t, testutil.RedisOptions{Dir: dir, WaitLoaded: true,
		Args: []string{"--enable-debug-command", "yes", "--list-compress-depth", "1"}})
	rconn := r.Dial(t)
	rc, rbr := rconn, bufio.NewReader(rconn)
	rget := func(args ...string) string { return rawDo(t, rc, rbr, args...) }
	for _, k := range keys {
		if got := state(rget, k); got != mine[k] {
			t.Errorf("%s loaded by redis-server:\n %.300q\nsaved by Vigil:\n %.300q", k, got, mine[k])
		}
	}
	// Changed there (a PLAIN node replaced by a small element, a new
	// one), saved, loaded here.
	rget("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "100")
	rget("LSET", "l1", "1", "small")
	rget("LINSERT", "l1", "BEFORE", "c", big("R", 400))
	rget("LPUSH", "l4", noise(1000))
	if got := rget("SAVE"); got != "+OK\r\n" {
		t.Fatalf("redis-server SAVE: %q", got)
	}
	ts2 := newTestServer(t, "--dir", dir, "--enable-debug-command", "yes", "--list-compress-depth", "1")
	if err := ts2.s.LoadDataFromDisk(); err != nil {
		t.Fatalf("loading redis-server's dump.rdb: %v", err)
	}
	c2 := ts2.client()
	for _, k := range keys {
		want := state(rget, k)
		if got := state(func(args ...string) string { return ts2.do(c2, args...) }, k); got != want {
			t.Errorf("%s loaded by Vigil:\n %.300q\nsaved by redis-server:\n %.300q", k, got, want)
		}
	}
}
