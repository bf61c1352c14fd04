package server

import (
	"bufio"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/vigil-kv/vigil/internal/testutil"
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
	d := newListDiff(t)
	ts := d.ts
	rng := rand.New(rand.NewPCG(7, diffSeed(1022)))
	dumps := map[string]string{} // each key's nodes after the last check
	do := func(args ...string) string {
		t.Helper()
		got, want := d.run(args...)
		if got != want && args[0] == "DUMP" {
			got, want = dumpNodes(got), dumpNodes(want)
			if got == want {
				got, want = "same nodes, other bytes", ""
			}
		}
		if got != want {
			t.Fatalf("%.80q:\n vigil %.400q\n redis %.400q\nnodes before: %q\nlast commands:\n%s", args, got, want, dumps, d.last(15))
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
		do("RESTORE", "copy", "0", bulkOf(t, rawDo(t, d.rc, d.rbr, "DUMP", k)), "REPLACE")
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
	testutil.NeedRedis(t)
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
	state := func(get func(args ...string) string, k string) string {
		return dumpNodes(get("DUMP", k)) + " | " + strings.Join(quicklistFields.FindAllString(get("DEBUG", "OBJECT", k), -1), " ") +
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

// TestListPlainRedisCases (interop): the PLAIN node cases of Redis 7.0's
// tests/unit/type/list.tcl (compression of PLAIN nodes at depth 2 with one
// element a node, LPUSH/LPOP with DEBUG RELOAD, LINDEX/LINSERT, LTRIM,
// LREM, LPOS, LMOVE, LSET over every packed/PLAIN combination, a split in
// the middle, the two crash regressions of LSET with a negative index) run
// on Vigil and on redis-server 7.0.15: every reply, and after every
// command each key's DUMP, DEBUG OBJECT quicklist fields and MEMORY USAGE,
// must be the same.
func TestListPlainRedisCases(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server")
	}
	d := newListDiff(t)
	same := func(args ...string) string {
		t.Helper()
		got, want := d.run(args...)
		if got != want {
			if args[0] == "DUMP" {
				got, want = dumpNodes(got)+" "+got, dumpNodes(want)+" "+want
			}
			t.Fatalf("%.80q:\n vigil %.300q\n redis %.300q\nlast commands:\n%s", args, got, want, d.last(12))
		}
		return got
	}
	r := strings.Repeat
	x10, x11 := r("x", 10), r("x", 11)
	cases := []struct {
		name  string
		setup [][]string
		cmds  [][]string
	}{
		{"compression at depth 2, fill 1", [][]string{{"CONFIG", "SET", "list-compress-depth", "2"}, {"CONFIG", "SET", "list-max-listpack-size", "1"}}, [][]string{
			{"DEBUG", "QUICKLIST-PACKED-THRESHOLD", "1b"},
			{"LPUSH", "list4", r("a", 500)}, {"LPUSH", "list4", r("b", 500)}, {"LPUSH", "list4", r("c", 500)}, {"LPUSH", "list4", r("d", 500)},
			{"LINSERT", "list4", "AFTER", r("d", 500), r("e", 500)}, {"LINSERT", "list4", "AFTER", r("d", 500), r("f", 500)},
			{"LINSERT", "list4", "AFTER", r("d", 500), r("g", 500)}, {"LINSERT", "list4", "AFTER", r("d", 500), r("j", 500)},
			{"LPOP", "list4"}, {"LPOP", "list4"}, {"LPOP", "list4"}, {"LPOP", "list4"},
			{"LPUSH", "list5", r("a", 500)}, {"LINSERT", "list5", "AFTER", r("a", 500), r("b", 500)}, {"RPUSH", "list5", r("c", 500)},
			{"LINDEX", "list5", "1"}, {"LTRIM", "list5", "1", "-1"}, {"LLEN", "list5"},
			{"LPUSH", "list6", r("a", 500)}, {"LSET", "list6", "0", r("b", 500)}, {"LINDEX", "list6", "0"},
			{"LPUSH", "list6", r("c", 500)}, {"LSET", "list6", "0", r("d", 500)}, {"LINDEX", "list6", "0"},
			{"DEBUG", "QUICKLIST-PACKED-THRESHOLD", "0"},
		}},
		{"LPUSH and LPOP, DEBUG RELOAD", nil, [][]string{
			{"DEBUG", "QUICKLIST-PACKED-THRESHOLD", "1b"},
			{"LPUSH", "lst", "9"}, {"LPUSH", "lst", x10}, {"LPUSH", "lst", x10}, {"LLEN", "lst"},
			{"RPOP", "lst"}, {"RPOP", "lst"}, {"LLEN", "lst"}, {"LPOP", "lst"},
			{"LPUSH", "lst", x10}, {"LPUSH", "lst", "bb"}, {"LPUSH", "lst", "12345"}, {"DEBUG", "RELOAD"}, {"RPOP", "lst"},
			{"DEBUG", "QUICKLIST-PACKED-THRESHOLD", "0"},
		}},
		{"LINDEX and LINSERT", nil, [][]string{
			{"DEBUG", "QUICKLIST-PACKED-THRESHOLD", "1b"},
			{"LPUSH", "lst", x11}, {"LPUSH", "lst", "9"}, {"LPUSH", "lst", x11},
			{"LINSERT", "lst", "BEFORE", "9", "8"}, {"LINDEX", "lst", "1"},
			{"LINSERT", "lst", "BEFORE", "9", "7"}, {"LINSERT", "lst", "BEFORE", "9", x11}, {"LINDEX", "lst", "3"},
			{"DEBUG", "QUICKLIST-PACKED-THRESHOLD", "0"},
		}},
		{"LTRIM, LREM, LPOS, LMOVE", nil, [][]string{
			{"DEBUG", "QUICKLIST-PACKED-THRESHOLD", "1b"},
			{"LPUSH", "lst1", "9"}, {"LPUSH", "lst1", x11}, {"LPUSH", "lst1", "9"}, {"LTRIM", "lst1", "1", "-1"}, {"LLEN", "lst1"},
			{"LPUSH", "lst", "one"}, {"LPUSH", "lst", x11}, {"LPUSH", "lst", "9"}, {"LREM", "lst", "-2", "one"}, {"LLEN", "lst"},
			{"DEL", "lst"}, {"RPUSH", "lst", "aa"}, {"RPUSH", "lst", "bb"}, {"RPUSH", "lst", "cc"}, {"LSET", "lst", "0", x11}, {"LPOS", "lst", x11},
			{"RPUSH", "lst2{t}", "aa"}, {"RPUSH", "lst2{t}", "bb"}, {"LSET", "lst2{t}", "0", x11}, {"RPUSH", "lst2{t}", "cc"}, {"RPUSH", "lst2{t}", "dd"},
			{"LMOVE", "lst2{t}", "lst{t}", "RIGHT", "LEFT"}, {"LMOVE", "lst2{t}", "lst{t}", "LEFT", "RIGHT"},
			{"LLEN", "lst{t}"}, {"LLEN", "lst2{t}"}, {"LPOP", "lst2{t}"}, {"LPOP", "lst2{t}"}, {"LPOP", "lst{t}"}, {"LPOP", "lst{t}"},
			{"DEBUG", "QUICKLIST-PACKED-THRESHOLD", "0"},
		}},
		{"LSET packed/PLAIN combinations, split in the middle", nil, [][]string{
			{"DEBUG", "QUICKLIST-PACKED-THRESHOLD", "5b"},
			{"RPUSH", "lst", "aa"}, {"RPUSH", "lst", "bb"}, {"LSET", "lst", "0", r("d", 50001)}, {"LPOP", "lst"},
			{"RPUSH", "lst", r("f", 50001)}, {"LSET", "lst", "0", r("e", 50001)}, {"LPOP", "lst"},
			{"RPUSH", "lst", r("m", 50001)}, {"LSET", "lst", "0", "bb"}, {"LPOP", "lst"},
			{"RPUSH", "lst", "bb"}, {"LSET", "lst", "0", "cc"}, {"LPOP", "lst"},
			{"FLUSHDB"}, {"RPUSH", "lst", "aa", "bb", "cc", "dd", "ee"}, {"LSET", "lst", "2", r("e", 10)},
			{"LPOP", "lst"}, {"LPOP", "lst"}, {"LPOP", "lst"}, {"LPOP", "lst"}, {"LPOP", "lst"},
			{"DEBUG", "QUICKLIST-PACKED-THRESHOLD", "0"},
		}},
		{"LSET with one element a node", [][]string{{"CONFIG", "SET", "list-max-listpack-size", "1"}}, [][]string{
			{"DEBUG", "QUICKLIST-PACKED-THRESHOLD", "1b"},
			{"RPUSH", "lst", "aa"}, {"RPUSH", "lst", "bb"}, {"LSET", "lst", "0", r("d", 50001)}, {"LPOP", "lst"},
			{"RPUSH", "lst", r("f", 50001)}, {"LSET", "lst", "0", r("e", 50001)}, {"LPOP", "lst"},
			{"RPUSH", "lst", r("m", 50001)}, {"LSET", "lst", "0", "bb"}, {"LPOP", "lst"},
			{"RPUSH", "lst", "bb"}, {"LSET", "lst", "0", "cc"}, {"LPOP", "lst"},
			{"DEBUG", "QUICKLIST-PACKED-THRESHOLD", "0"},
		}},
		{"LSET -1 in a compressed list", [][]string{{"CONFIG", "SET", "list-compress-depth", "1"}}, [][]string{
			{"DEBUG", "QUICKLIST-PACKED-THRESHOLD", "100b"},
			{"RPUSH", "lst", r("x", 100)}, {"RPUSH", "lst", r("x", 32)}, {"RPUSH", "lst", r("x", 32)},
			{"LSET", "lst", "-1", r("x", 100)}, {"LRANGE", "lst", "0", "-1"},
			{"DEBUG", "QUICKLIST-PACKED-THRESHOLD", "0"},
		}},
		{"LSET -2 splits", nil, [][]string{
			{"DEBUG", "QUICKLIST-PACKED-THRESHOLD", "10b"},
			{"LPUSH", "lst", "aa"}, {"LPUSH", "lst", "bb"}, {"LSET", "lst", "-2", x10}, {"RPOP", "lst"}, {"LRANGE", "lst", "0", "-1"},
			{"DEBUG", "QUICKLIST-PACKED-THRESHOLD", "0"},
		}},
		{"the threshold's argument", nil, [][]string{
			{"DEBUG", "QUICKLIST-PACKED-THRESHOLD", "4gb"}, {"DEBUG", "QUICKLIST-PACKED-THRESHOLD", "4294967296"},
			{"DEBUG", "QUICKLIST-PACKED-THRESHOLD", "4293918720"}, {"DEBUG", "QUICKLIST-PACKED-THRESHOLD", "4293918721"},
			{"DEBUG", "QUICKLIST-PACKED-THRESHOLD", "-1"}, {"DEBUG", "QUICKLIST-PACKED-THRESHOLD", "1x"},
			{"DEBUG", "QUICKLIST-PACKED-THRESHOLD", "1K"}, {"RPUSH", "big", r("k", 999), r("k", 1000)},
			{"DEBUG", "QUICKLIST-PACKED-THRESHOLD", "1kb"}, {"RPUSH", "big", r("k", 1023), r("k", 1024)},
			{"DEBUG", "QUICKLIST-PACKED-THRESHOLD", "0"}, {"RPUSH", "big", r("k", 5000)},
		}},
	}
	for _, tc := range cases {
		same("FLUSHALL")
		same("CONFIG", "SET", "list-compress-depth", "0")
		same("CONFIG", "SET", "list-max-listpack-size", "-2")
		for _, cmd := range tc.setup {
			same(cmd...)
		}
		for _, cmd := range tc.cmds {
			same(cmd...)
			for _, k := range []string{"list4", "list5", "list6", "lst", "lst1", "lst{t}", "lst2{t}", "big"} {
				if same("EXISTS", k) == ":1\r\n" {
					same("DUMP", k)
					same("DEBUG", "OBJECT", k)
					same("MEMORY", "USAGE", k)
				}
			}
		}
	}
	same("CONFIG", "SET", "list-compress-depth", "0")
	same("CONFIG", "SET", "list-max-listpack-size", "-2")
}
