package server

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
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
