package server

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/resp"
)

// TestDebugPopulateNotPropagated: DEBUG POPULATE adds its keys without
// moving the dirty counter (so nothing reaches the AOF or replicas, as
// Redis's dbAdd from debugCommand) but touches WATCHed keys.
func TestDebugPopulateNotPropagated(t *testing.T) {
	ts := newTestServer(t, "--enable-debug-command", "yes")
	c, w := ts.client(), ts.client()
	ts.do(w, "WATCH", "key:1")
	ts.do(w, "MULTI")
	dirty := ts.s.ks.Dirty
	if got := ts.do(c, "DEBUG", "POPULATE", "1000"); got != "+OK\r\n" {
		t.Fatalf("POPULATE: %q", got)
	}
	if ts.s.ks.Dirty != dirty {
		t.Fatalf("dirty moved from %d to %d", dirty, ts.s.ks.Dirty)
	}
	if got := ts.do(c, "DBSIZE"); got != ":1000\r\n" {
		t.Fatalf("DBSIZE %q", got)
	}
	if got := ts.do(w, "EXEC"); got != "*-1\r\n" {
		t.Fatalf("EXEC after a WATCHed key was populated: %q", got)
	}
	// Existing keys are left alone.
	ts.do(c, "SET", "key:5", "mine")
	ts.do(c, "DEBUG", "POPULATE", "10", "key", "100")
	if got := ts.do(c, "GET", "key:5"); got != "$4\r\nmine\r\n" {
		t.Fatalf("GET key:5 %q", got)
	}
}

// TestDebugHTStats checks DEBUG HTSTATS and HTSTATS-KEY against the
// tables they describe: element counts are the db's and the value's sizes,
// and the chain length distribution adds up to the table size.
func TestDebugHTStats(t *testing.T) {
	ts := newTestServer(t, "--enable-debug-command", "yes")
	c := ts.client()
	ts.do(c, "DEBUG", "POPULATE", "300")
	for i := 0; i < 50; i++ {
		ts.do(c, "EXPIRE", "key:"+strconv.Itoa(i), "100")
	}
	for i := 0; i < 600; i++ {
		ts.do(c, "SADD", "s", "m"+strconv.Itoa(i))
	}
	out := ts.do(c, "DEBUG", "HTSTATS", "0")
	// checkStats: the tables (two while rehashing) hold want elements.
	checkStats := func(text string, want int) {
		t.Helper()
		tables := strings.Split(text, "Hash table ")[1:]
		if len(tables) == 0 || len(tables) > 2 {
			t.Fatalf("%d tables in %q", len(tables), text)
		}
		used := 0
		for i, tb := range tables {
			size := atoiMatch(t, tb, ` table size: (\d+)`)
			used += atoiMatch(t, tb, ` number of elements: (\d+)`)
			sum := 0
			for _, m := range regexp.MustCompile(`(?m)^   (?:>= )?\d+: (\d+) \(`).FindAllStringSubmatch(tb, -1) {
				n, _ := strconv.Atoi(m[1])
				sum += n
			}
			if sum != size {
				t.Fatalf("table %d: chain distribution sums to %d, size %d\n%s", i, sum, size, tb)
			}
		}
		if used != want {
			t.Fatalf("%d elements, want %d\n%s", used, want, text)
		}
	}
	// 301 keys, 50 with a TTL (the set grows the db by one key).
	body := out[strings.Index(out, "\r\n")+2:]
	dict, expires, _ := strings.Cut(body, "[Expires HT]\n")
	checkStats(dict, 301)
	checkStats(expires, 50)
	out = ts.do(c, "DEBUG", "HTSTATS-KEY", "s")
	checkStats(out[strings.Index(out, "\r\n")+2:], 600)
}

func atoiMatch(t *testing.T, s, re string) int {
	t.Helper()
	m := regexp.MustCompile(re).FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("no %s in %q", re, s)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// TestDebugChangeReplID: DEBUG CHANGE-REPL-ID draws a new master_replid and
// clears master_replid2 (changeReplicationId + clearReplicationId2).
func TestDebugChangeReplID(t *testing.T) {
	ts := newTestServer(t, "--enable-debug-command", "yes")
	c := ts.client()
	field := func(name string) string {
		t.Helper()
		m := regexp.MustCompile(name + `:(\w+)\r\n`).FindStringSubmatch(ts.do(c, "INFO", "replication"))
		if m == nil {
			t.Fatalf("no %s in INFO replication", name)
		}
		return m[1]
	}
	before := field("master_replid")
	if got := ts.do(c, "DEBUG", "CHANGE-REPL-ID"); got != "+OK\r\n" {
		t.Fatal(got)
	}
	after := field("master_replid")
	if after == before || len(after) != 40 {
		t.Fatalf("master_replid %s -> %s", before, after)
	}
	if id2 := field("master_replid2"); id2 != strings.Repeat("0", 40) {
		t.Fatalf("master_replid2 %s", id2)
	}
}

// TestDebugReplicate: DEBUG REPLICATE answers OK without running its
// arguments and sends them to the replicas as a command, with no SELECT
// before them and none owed after (the next write of the same db follows
// with no SELECT), as redis-server 7.0.15's replicationFeedSlaves(slaves,
// -1, ...); nothing of it reaches the master's keyspace, and with no
// replica and no backlog it is only OK.
func TestDebugReplicate(t *testing.T) {
	l := startLive(t, "--enable-debug-command", "yes", "--repl-diskless-sync", "no")
	admin := l.dial(t)
	if got := admin.do("DEBUG", "REPLICATE", "set", "nobody", "x"); got != "+OK" {
		t.Fatalf("DEBUG REPLICATE without replicas: %s", got)
	}
	if got := admin.do("DEBUG", "REPLICATE"); got != "-ERR unknown subcommand or wrong number of arguments for 'REPLICATE'. Try DEBUG HELP." {
		t.Fatalf("DEBUG REPLICATE without arguments: %s", got)
	}
	rep, got := psync(t, l, "?", -1)
	if got != "+FULLRESYNC" {
		t.Fatalf("PSYNC: %s", got)
	}
	for _, cmd := range [][]string{
		{"SET", "k1", "v1"},
		{"DEBUG", "REPLICATE", "set", "a", "b"},
		{"DEBUG", "REPLICATE", "incr"},
		{"SET", "k2", "v2"},
		{"SELECT", "3"},
		{"DEBUG", "REPLICATE", "ping", "x"},
		{"SET", "k3", "v3"},
	} {
		if got := admin.do(cmd...); got != "+OK" {
			t.Fatalf("%q: %s", cmd, got)
		}
	}
	if got := admin.do("EXISTS", "a"); got != "(integer) 0" {
		t.Fatalf("EXISTS a on the master: %s", got)
	}
	want := []string{"SELECT 0", "SET k1 v1", "set a b", "incr", "SET k2 v2", "ping x", "SELECT 3", "SET k3 v3"}
	var stream []string
	rep.r.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	for len(stream) < len(want) {
		v, err := resp.ReadValue(rep.r.br, resp.DefaultReplyLimits)
		if err != nil {
			t.Fatalf("stream so far %q: %v", stream, err)
		}
		var words []string
		for _, e := range v.Elems {
			words = append(words, e.Str)
		}
		line := strings.Join(words, " ")
		if line == "PING" || strings.HasPrefix(line, "REPLCONF GETACK") {
			continue // the cron's
		}
		stream = append(stream, line)
	}
	if strings.Join(stream, "|") != strings.Join(want, "|") {
		t.Fatalf("stream %q, want %q", stream, want)
	}
}
