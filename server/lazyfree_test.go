package server

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/testutil"
)

// TestLazyfreedObjectsVsRedis: INFO lazyfreed_objects counts what
// redis-server's lazyfree thread frees: a value deleted asynchronously
// (UNLINK, DEL with lazyfree-lazy-user-del, eviction with
// lazyfree-lazy-eviction) whose free effort is above 64 (a list's
// quicklist nodes, a hashtable set or hash, a skiplist, a stream's nodes
// and groups), every key of FLUSHDB/FLUSHALL ASYNC (or without SYNC under
// lazyfree-lazy-user-flush), the scripts of a SCRIPT FLUSH ASYNC of more
// than 64; CONFIG RESETSTAT zeroes it.
func TestLazyfreedObjectsVsRedis(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server")
	}
	d := newListDiff(t)
	field := regexp.MustCompile(`(?m)^lazyfreed_objects:(\d+)\r$`)
	pending := regexp.MustCompile(`(?m)^lazyfree_pending_objects:0\r$`)
	check := func(what string) {
		t.Helper()
		var got, want string
		// Redis's thread frees in the background: wait until it is done.
		testutil.PollUntil(5*time.Second, func() bool {
			got, want = d.run("INFO", "memory")
			return pending.MatchString(want)
		})
		g, w := field.FindStringSubmatch(got), field.FindStringSubmatch(want)
		if g == nil || w == nil || g[1] != w[1] {
			t.Fatalf("%s: lazyfreed_objects vigil %v, redis %v", what, g, w)
		}
		t.Logf("%s: %s", what, w[1])
	}
	fill := func(cmd, key string, n int, member func(i int) []string) {
		for i := 0; i < n; i += 50 {
			args := []string{cmd, key}
			for j := i; j < min(n, i+50); j++ {
				args = append(args, member(j)...)
			}
			d.same(args...)
		}
	}
	s := func(i int) []string { return []string{"m" + strconv.Itoa(i)} }
	check("fresh")
	fill("SADD", "bigset", 100, s)
	fill("SADD", "smallset", 60, s)
	fill("SADD", "intset", 200, func(i int) []string { return []string{strconv.Itoa(i)} })
	// A hashtable hash, a skiplist, a list of many nodes and one of few,
	// deleted by DEL.
	delAggregates := func() {
		fill("HSET", "bighash", 600, func(i int) []string { return []string{"f" + strconv.Itoa(i), "v"} })
		fill("ZADD", "bigzset", 200, func(i int) []string { return []string{strconv.Itoa(i), "m" + strconv.Itoa(i)} })
		fill("RPUSH", "biglist", 150000, s)
		fill("RPUSH", "smalllist", 2000, s)
		d.same("DEL", "bighash", "bigzset", "biglist", "smalllist")
	}
	d.same("RPUSH", "shortlist", "a", "b")
	d.same("UNLINK", "bigset", "smallset", "intset", "nokey", "shortlist")
	check("UNLINK of a 100-member set, a 60-member one, an intset and a short list")
	delAggregates()
	check("DEL (not lazy)")
	d.same("CONFIG", "SET", "lazyfree-lazy-user-del", "yes")
	delAggregates()
	check("DEL under lazyfree-lazy-user-del: hash, zset, a list of many nodes, a list of few")
	d.same("CONFIG", "SET", "stream-node-max-entries", "5")
	for i := 0; i < 1000; i++ {
		d.same("XADD", "stream", strconv.Itoa(i+1)+"-1", "foo", strconv.Itoa(i))
	}
	d.same("XGROUP", "CREATE", "stream", "g", "0")
	d.same("XADD", "small", "1-1", "a", "1")
	d.same("XGROUP", "CREATE", "small", "g", "0")
	d.same("XGROUP", "DESTROY", "small", "g")
	d.same("UNLINK", "stream", "small")
	check("UNLINK of a stream of 200 nodes and one of one")
	for i := 0; i < 10; i++ {
		d.same("SET", "k"+strconv.Itoa(i), "v")
	}
	d.same("FLUSHDB", "ASYNC")
	check("FLUSHDB ASYNC of 10 keys")
	d.same("SET", "a", "1")
	d.same("FLUSHALL")
	check("FLUSHALL (sync)")
	d.same("CONFIG", "SET", "lazyfree-lazy-user-flush", "yes")
	d.same("SET", "a", "1")
	d.same("SELECT", "1")
	d.same("SET", "b", "1")
	d.same("FLUSHALL")
	check("FLUSHALL under lazyfree-lazy-user-flush")
	d.same("SET", "b", "1")
	d.same("FLUSHALL", "SYNC")
	check("FLUSHALL SYNC under lazyfree-lazy-user-flush")
	for i := 0; i < 70; i++ {
		d.same("SCRIPT", "LOAD", "return "+strconv.Itoa(i))
	}
	d.same("SCRIPT", "FLUSH", "ASYNC")
	check("SCRIPT FLUSH ASYNC of 70 scripts")
	d.same("SCRIPT", "LOAD", "return 1")
	d.same("SCRIPT", "FLUSH")
	check("SCRIPT FLUSH of 1 script under lazyfree-lazy-user-flush")
	// Lazy expiry (a read of an expired key) under lazyfree-lazy-expire.
	for _, lazy := range []string{"no", "yes"} {
		d.same("CONFIG", "SET", "lazyfree-lazy-expire", lazy)
		fill("SADD", "expiring", 100, s)
		d.same("RPUSH", "expiring2", "a")
		d.same("PEXPIRE", "expiring", "1")
		d.same("PEXPIRE", "expiring2", "1")
		d.ts.clk.Advance(10 * time.Millisecond)
		testutil.PollUntil(5*time.Second, func() bool {
			got, want := d.run("EXISTS", "expiring", "expiring2")
			return got == ":0\r\n" && want == ":0\r\n"
		})
		check("a 100-member set and a short list expired, lazyfree-lazy-expire " + lazy)
	}
	lib := "#!lua name=many\n"
	for i := 0; i < 70; i++ {
		lib += "redis.register_function('f" + strconv.Itoa(i) + "', function() return 1 end)\n"
	}
	d.same("FUNCTION", "LOAD", lib)
	d.same("FUNCTION", "FLUSH", "ASYNC")
	check("FUNCTION FLUSH ASYNC of 70 functions")
	d.same("FUNCTION", "LOAD", "#!lua name=one\nredis.register_function('f', function() return 1 end)")
	d.same("FUNCTION", "FLUSH")
	check("FUNCTION FLUSH of 1 function under lazyfree-lazy-user-flush")
	d.same("FUNCTION", "LOAD", lib)
	d.same("FUNCTION", "FLUSH")
	check("FUNCTION FLUSH of 70 functions under lazyfree-lazy-user-flush")
	serverDel(t, d, fill, check)
	d.same("CONFIG", "RESETSTAT")
	check("CONFIG RESETSTAT")
}

// serverDel is TestLazyfreedObjectsVsRedis's part for
// lazyfree-lazy-server-del: the values the server drops on its own
// (dbDelete, dbOverwrite, SUNION's temporary set) are freed lazily when
// big, and only under that option; DEL stays lazyfree-lazy-user-del's and
// EXPIRE in the past lazyfree-lazy-expire's.
func serverDel(t *testing.T, d *listDiff, fill func(cmd, key string, n int, member func(i int) []string), check func(string)) {
	s := func(i int) []string { return []string{"m" + strconv.Itoa(i)} }
	big := func(key string) { fill("SADD", key, 100, s) }
	// unordered runs a command whose reply is a set in hash order: only
	// the counts are compared.
	unordered := func(args ...string) {
		t.Helper()
		got, want := d.run(args...)
		if g, w := got[:strings.Index(got, "\r\n")], want[:strings.Index(want, "\r\n")]; g != w {
			t.Fatalf("%q: vigil %q, redis %q", args, g, w)
		}
	}
	d.same("CONFIG", "SET", "lazyfree-lazy-user-del", "no")
	d.same("CONFIG", "SET", "lazyfree-lazy-expire", "no")
	for _, lazy := range []string{"no", "yes"} {
		d.same("CONFIG", "SET", "lazyfree-lazy-server-del", lazy)
		d.same("FLUSHALL", "SYNC")
		big("over")
		d.same("SET", "over", "x")
		check("SET over a 100-member set, lazyfree-lazy-server-del " + lazy)
		big("a")
		fill("HSET", "b", 600, func(i int) []string { return []string{"f" + strconv.Itoa(i), "v"} })
		d.same("RENAME", "a", "b")
		check("RENAME onto a 600-field hash")
		d.same("SET", "src", "v")
		d.same("COPY", "src", "b", "REPLACE")
		check("COPY REPLACE onto a 100-member set")
		big("u")
		d.same("SUNIONSTORE", "u", "u", "nokey")
		check("SUNIONSTORE over its own 100-member set")
		unordered("SUNION", "u")
		check("SUNION of a 100-member set (its temporary set)")
		d.same("SUNION", "nokey")
		d.same("SADD", "small", "1", "2", "3")
		unordered("SUNION", "small")
		check("SUNION of an intset")
		d.same("SINTERSTORE", "u", "u", "nokey")
		check("SINTERSTORE with an empty result, deleting a 100-member set")
		big("p")
		unordered("SPOP", "p", "1000")
		check("SPOP of a whole 100-member set")
		big("p")
		unordered("SPOP", "p", "95")
		d.same("SCARD", "p")
		check("SPOP of 95 of 100 members (CASE 3: the old set replaced)")
		fill("ZADD", "z", 200, func(i int) []string { return []string{strconv.Itoa(i), "m" + strconv.Itoa(i)} })
		d.same("SET", "one", "1")
		_, dump := d.run("DUMP", "one")
		if !strings.HasPrefix(dump, "$") {
			t.Fatalf("DUMP: %q", dump)
		}
		payload := dump[strings.Index(dump, "\r\n")+2 : len(dump)-2]
		d.same("RESTORE", "z", "0", payload, "REPLACE")
		check("RESTORE REPLACE over a 200-member sorted set")
		d.same("DEL", "z")
		fill("ZADD", "z", 200, func(i int) []string { return []string{strconv.Itoa(i), "m" + strconv.Itoa(i)} })
		d.same("ZUNIONSTORE", "z", "1", "one-missing")
		check("ZUNIONSTORE with an empty result, deleting a 200-member sorted set")
		big("sorted")
		d.same("RPUSH", "l", "3", "1", "2")
		d.same("SORT", "l", "STORE", "sorted")
		check("SORT STORE over a 100-member set")
		big("del")
		d.same("DEL", "del")
		check("DEL of a 100-member set (lazyfree-lazy-user-del no)")
		big("exp")
		d.same("PEXPIREAT", "exp", "1")
		check("PEXPIREAT in the past of a 100-member set (lazyfree-lazy-expire no)")
	}
	d.same("CONFIG", "SET", "lazyfree-lazy-expire", "yes")
	big("exp")
	d.same("EXPIRE", "exp", "-1")
	check("EXPIRE in the past of a 100-member set under lazyfree-lazy-expire")
	d.same("FLUSHALL", "SYNC")
}

// TestTrackingTableLazyfreeVsRedis: a lazy flush frees the tracking table
// lazily when its radix tree has more than 64 nodes
// (freeTrackingRadixTreeAsync), counting its keys in lazyfreed_objects, as
// redis-server 7.0.15: 62 keys key:0..key:61 are 64 nodes (not counted),
// 63 are 65 (counted); 40 keys k:N:f are 85 nodes, a chain of 30 prefixes
// 31; a synchronous flush counts nothing.
func TestTrackingTableLazyfreeVsRedis(t *testing.T) {
	l, dialRedis := startLiveBesideRedis(t)
	keysOf := func(n int, f func(i int) string) []string {
		var out []string
		for i := range n {
			out = append(out, f(i))
		}
		return out
	}
	cases := []struct {
		keys []string
		mode string
	}{
		{keysOf(62, func(i int) string { return "key:" + strconv.Itoa(i) }), "ASYNC"},
		{keysOf(63, func(i int) string { return "key:" + strconv.Itoa(i) }), "ASYNC"},
		{keysOf(40, func(i int) string { return "k:" + strconv.Itoa(i) + ":f" }), "ASYNC"},
		{keysOf(30, func(i int) string { return strings.Repeat("a", i+1) }), "ASYNC"},
		{[]string{"user:1000", "user:1001", "user:2000", "session:a", "session:b", "s", "x"}, "ASYNC"},
		{keysOf(100, func(i int) string { return "key:" + strconv.Itoa(i) }), "SYNC"},
		{keysOf(100, func(i int) string { return "key:" + strconv.Itoa(i) }), "ASYNC"},
	}
	field := regexp.MustCompile(`lazyfreed_objects:(\d+)`)
	run := func(dial func() *rconn) []string {
		a, c := dial(), dial()
		a.do("HELLO", "3")
		a.do("CLIENT", "TRACKING", "ON")
		var out []string
		for _, tc := range cases {
			for _, k := range tc.keys {
				a.do("GET", k)
			}
			c.do("FLUSHALL", tc.mode)
			a.read() // the flush's invalidation of all keys
			var info string
			testutil.PollUntil(5*time.Second, func() bool {
				info = c.do("INFO", "memory")
				return strings.Contains(info, "lazyfree_pending_objects:0")
			})
			out = append(out, field.FindStringSubmatch(info)[1])
		}
		return out
	}
	redis := run(dialRedis)
	vigil := run(func() *rconn { return l.dial(t) })
	sameAsRedis(t, "lazyfreed_objects after each flush", redis, vigil, []string{"0", "63", "103", "103", "103", "103", "203"})
}
