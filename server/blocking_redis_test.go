package server

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/testutil"
)

// startLiveBesideRedis starts a live Vigil server (startLive, with
// directives) and a redis-server 7.0.15 given the same directives, for a
// scenario run on each; dialRedis opens a connection to the latter,
// closed at the test's end. It skips without redis-server.
func startLiveBesideRedis(t *testing.T, directives ...string) (*liveServer, func() *rconn) {
	t.Helper()
	testutil.NeedRedis(t)
	r := testutil.StartRedis(t, testutil.RedisOptions{Args: directives})
	l := startLive(t, directives...)
	return l, func() *rconn {
		return rawConn(t, r.Dial(t))
	}
}

// sameAsRedis checks a scenario's steps on both servers: redis-server's
// must be want (the scenario still shows what it shows), and Vigil's the
// same, step by step.
func sameAsRedis(t *testing.T, what string, redis, vigil, want []string) {
	t.Helper()
	if len(redis) != len(want) || len(vigil) != len(want) {
		t.Fatalf("%s:\nredis %q\nvigil %q", what, redis, vigil)
	}
	for i := range want {
		if redis[i] != want[i] {
			t.Errorf("%s: redis step %d: %s, want %s", what, i, redis[i], want[i])
		}
		if vigil[i] != redis[i] {
			t.Errorf("%s: step %d: vigil %s, redis %s", what, i, vigil[i], redis[i])
		}
	}
}

// TestBlockedKeyExpiredByServeTime is list.tcl's "MULTI + LPUSH + EXPIRE +
// DEBUG SLEEP on blocked client, key already expired", on Vigil and on
// redis-server 7.0.15: EXEC pushes to the key a client waits on and gives
// it a TTL that has passed when EXEC ends; the key is expired when the
// waiter would be served (blocked.c reads the time again for each ready
// key), so the client stays blocked and CLIENT UNBLOCK ends it with a
// null reply. Vigil served it the pushed element (the time of the EXEC's
// start).
func TestBlockedKeyExpiredByServeTime(t *testing.T) {
	l, dialRedis := startLiveBesideRedis(t, "--enable-debug-command", "yes")
	redis := blockedExpiredScenario(t, dialRedis)
	vigil := blockedExpiredScenario(t, func() *rconn { return l.dial(t) })
	want := []string{"+OK", "+OK", "+OK", "+QUEUED", "+QUEUED", "+QUEUED", "[(integer) 1, (integer) 1, +OK]", "blocked", "(integer) 1", "(nil)"}
	sameAsRedis(t, "replies", redis, vigil, want)
}

// blockedExpiredScenario runs the case on a server and returns its replies
// ("blocked" when CLIENT LIST shows the waiter's b flag; U on a unix socket follows it).
func blockedExpiredScenario(t *testing.T, dial func() *rconn) []string {
	t.Helper()
	r, rd := dial(), dial()
	var out []string
	out = append(out, r.do("FLUSHALL"), r.do("DEBUG", "SET-ACTIVE-EXPIRE", "0"))
	t.Cleanup(func() { r.do("DEBUG", "SET-ACTIVE-EXPIRE", "1") })
	id := rd.id()
	rd.send("BRPOP", "k", "0")
	flagB := regexp.MustCompile(` flags=b`)
	if !testutil.PollUntil(5*time.Second, func() bool { return flagB.MatchString(r.do("CLIENT", "LIST", "ID", id)) }) {
		t.Fatalf("BRPOP did not block: %s", r.do("CLIENT", "LIST"))
	}
	out = append(out, r.do("MULTI"), r.do("RPUSH", "k", "hello"), r.do("PEXPIRE", "k", "100"), r.do("DEBUG", "SLEEP", "0.2"))
	out = append(out, r.do("EXEC"))
	list := r.do("CLIENT", "LIST", "ID", id)
	if flagB.MatchString(list) {
		list = "blocked"
	}
	out = append(out, list, r.do("CLIENT", "UNBLOCK", id), rd.read())
	return out
}

// TestFlushUnblocksXReadGroup is stream-cgroups.tcl's "Blocking
// XREADGROUP: flushed DB", on Vigil and redis-server 7.0.15: FLUSHALL
// and FLUSHDB signal the waited stream keys they delete
// (signalFlushedDb's scanDatabaseForDeletedStreams), and a blocked
// XREADGROUP gets "-UNBLOCKED the stream key no longer exists". Vigil's
// waiter stayed blocked. A BLPOP waiter on a flushed list stays blocked on
// both.
func TestFlushUnblocksXReadGroup(t *testing.T) {
	l, dialRedis := startLiveBesideRedis(t)
	for _, flush := range [][]string{{"FLUSHALL"}, {"FLUSHDB"}, {"FLUSHALL", "ASYNC"}} {
		redis := flushXReadGroupScenario(t, dialRedis, flush)
		vigil := flushXReadGroupScenario(t, func() *rconn { return l.dial(t) }, flush)
		want := []string{"+OK", "+OK", "-UNBLOCKED the stream key no longer exists", "blocked", "(integer) 1", "(nil)"}
		sameAsRedis(t, fmt.Sprint(flush, " replies"), redis, vigil, want)
	}
}

var twoBlocked = regexp.MustCompile(`blocked_clients:2[^0-9]`)

func flushXReadGroupScenario(t *testing.T, dial func() *rconn, flush []string) []string {
	t.Helper()
	r, rd, bl := dial(), dial(), dial()
	r.do("DEL", "mystream", "mylist")
	r.do("XADD", "mystream", "666", "f", "v")
	r.do("RPUSH", "mylist", "x")
	var out []string
	out = append(out, r.do("XGROUP", "CREATE", "mystream", "mygroup", "$"))
	idBL := bl.id()
	rd.send("XREADGROUP", "GROUP", "mygroup", "Alice", "BLOCK", "0", "STREAMS", "mystream", ">")
	bl.send("BLMOVE", "nolist", "mylist", "LEFT", "LEFT", "0")
	if !testutil.PollUntil(5*time.Second, func() bool { return twoBlocked.MatchString(r.do("INFO", "clients")) }) {
		t.Fatalf("the clients did not block: %s", r.do("CLIENT", "LIST"))
	}
	out = append(out, r.do(flush...), rd.read())
	list := r.do("CLIENT", "LIST", "ID", idBL)
	if regexp.MustCompile(` flags=b`).MatchString(list) {
		list = "blocked"
	}
	out = append(out, list, r.do("CLIENT", "UNBLOCK", idBL), bl.read())
	return out
}

// TestSlowlogBlockedVsRedis is slowlog.tcl's "blocked BLPOP" case on Vigil
// and redis-server 7.0.15: a command that blocks is left out of the
// slowlog when it blocks (call() skips CLIENT_BLOCKED) and logged when
// served, with its own arguments and client (updateStatsOnUnblock); one
// unblocked by CLIENT UNBLOCK is logged with no arguments (7.0.15 logs it
// after unblockClient reset the client); one that times out is not
// logged. Vigil logged each when it blocked. Entries are compared by
// their arguments and client name.
func TestSlowlogBlockedVsRedis(t *testing.T) {
	l, dialRedis := startLiveBesideRedis(t)
	redis := slowlogBlockedScenario(t, dialRedis, func() {})
	// Vigil's test server runs on a fake clock: BLPOP's timeout passes
	// when the clock is moved.
	vigil := slowlogBlockedScenario(t, func() *rconn { return l.dial(t) }, func() {
		testutil.PollUntil(5*time.Second, func() bool {
			return regexp.MustCompile(`blocked_clients:3[^0-9]`).MatchString(l.dial(t).do("INFO", "clients"))
		})
		l.clk.Advance(20 * time.Millisecond)
	})
	want := []string{
		`["CLIENT", "UNBLOCK", "<id>", "error"] ""`,
		`[] ""`,
		`["blpop", "l", "0"] "blk"`,
		`["lpush", "l", "foo"] ""`,
		`["multi"] ""`,
		`["slowlog", "reset"] ""`,
	}
	sameAsRedis(t, "slowlog entries", redis, vigil, want)
}

var slowEntryRE = regexp.MustCompile(`\[\(integer\) \d+, \(integer\) \d+, \(integer\) \d+, (\[[^\]]*\]), "[^"]*", ("[^"]*")\]`)

func slowlogBlockedScenario(t *testing.T, dial func() *rconn, timeout func()) []string {
	t.Helper()
	r, b, b2, b3 := dial(), dial(), dial(), dial()
	r.do("CONFIG", "SET", "slowlog-log-slower-than", "0")
	t.Cleanup(func() { r.do("CONFIG", "SET", "slowlog-log-slower-than", "10000") })
	r.do("DEL", "l", "l2", "l3")
	b.do("CLIENT", "SETNAME", "blk")
	id2 := b2.id()
	b.send("blpop", "l", "0")
	b2.send("blpop", "l2", "0")
	if !testutil.PollUntil(5*time.Second, func() bool { return twoBlocked.MatchString(r.do("INFO", "clients")) }) {
		t.Fatalf("the clients did not block: %s", r.do("CLIENT", "LIST"))
	}
	b3.send("blpop", "l3", "0.01")
	timeout()
	if got := b3.read(); got != "(nil)" {
		t.Fatalf("BLPOP with a timeout: %s", got)
	}
	r.do("slowlog", "reset")
	r.do("multi")
	r.do("lpush", "l", "foo")
	r.do("exec")
	if got := b.read(); got != `["l", "foo"]` {
		t.Fatalf("BLPOP served: %s", got)
	}
	r.do("CLIENT", "UNBLOCK", id2, "error")
	if got := b2.read(); got != "-UNBLOCKED client unblocked via CLIENT UNBLOCK" {
		t.Fatalf("BLPOP unblocked: %s", got)
	}
	var out []string
	for _, m := range slowEntryRE.FindAllStringSubmatch(r.do("SLOWLOG", "GET"), -1) {
		out = append(out, strings.Replace(m[1], `"`+id2+`"`, `"<id>"`, 1)+" "+m[2])
	}
	return out
}

// TestPauseWriteScriptsVsRedis is pause.tcl's "Test scripts are blocked by
// pause RO" on Vigil and redis-server 7.0.15: EVAL, EVALSHA and FCALL
// may replicate (CMD_MAY_REPLICATE, hidden from COMMAND INFO), so CLIENT
// PAUSE WRITE postpones a script without a shebang or one with a shebang
// that does not declare no-writes; EVAL_RO and a no-writes script run.
// Vigil ran them all.
func TestPauseWriteScriptsVsRedis(t *testing.T) {
	l, dialRedis := startLiveBesideRedis(t)
	for name, dial := range map[string]func() *rconn{"redis": dialRedis, "vigil": func() *rconn { return l.dial(t) }} {
		c, rd, rd2 := dial(), dial(), dial()
		if got := c.do("CLIENT", "PAUSE", "60000", "WRITE"); got != "+OK" {
			t.Fatalf("%s: CLIENT PAUSE: %s", name, got)
		}
		rd.send("EVAL", "return 1", "0")
		rd2.send("EVAL", "#!lua\nreturn 1", "0")
		if !testutil.PollUntil(5*time.Second, func() bool { return twoBlocked.MatchString(c.do("INFO", "clients")) }) {
			t.Fatalf("%s: the scripts were not postponed: %s", name, c.do("INFO", "clients"))
		}
		for _, cmd := range [][]string{{"EVAL", "#!lua flags=no-writes\nreturn 2", "0"}, {"EVAL_RO", "return 2", "0"}} {
			if got := c.do(cmd...); got != "(integer) 2" {
				t.Errorf("%s: %q while paused: %s", name, cmd, got)
			}
		}
		c.do("CLIENT", "UNPAUSE")
		if a, b := rd.read(), rd2.read(); a != "(integer) 1" || b != "(integer) 1" {
			t.Errorf("%s: postponed scripts answered %s, %s", name, a, b)
		}
	}
}

// TestServedBlockedTrackingOrderVsRedis is tracking.tcl's "Unblocked
// BLMOVE gets notification after response" on Vigil and redis-server
// 7.0.15: a RESP3 client tracking the destination of the BLMOVE it
// blocked in gets the invalidation its own served move causes after the
// reply (blocked.c serves with the receiver as the current client). Vigil
// pushed the invalidation first.
func TestServedBlockedTrackingOrderVsRedis(t *testing.T) {
	l, dialRedis := startLiveBesideRedis(t)
	for name, dial := range map[string]func() *rconn{"redis": dialRedis, "vigil": func() *rconn { return l.dial(t) }} {
		c, rd := dial(), dial()
		c.do("DEL", "list1", "list2")
		c.do("RPUSH", "list2", "a")
		rd.do("HELLO", "3")
		rd.do("CLIENT", "TRACKING", "on")
		rd.do("LRANGE", "list2", "0", "-1")
		rd.send("BLMOVE", "list1", "list2", "LEFT", "LEFT", "0")
		if !testutil.PollUntil(5*time.Second, func() bool { return oneBlocked.MatchString(c.do("INFO", "clients")) }) {
			t.Fatalf("%s: BLMOVE did not block", name)
		}
		c.do("RPUSH", "list1", "foo")
		if a, b := rd.read(), rd.read(); a != `"foo"` || b != `>["invalidate", ["list2"]]` {
			t.Errorf("%s: after the push: %s then %s", name, a, b)
		}
	}
}

var oneBlocked = regexp.MustCompile(`blocked_clients:1[^0-9]`)
