package server

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/testutil"
)

// Arrival order for pub/sub counts (order.go): the pattern of Redis's own
// pub/sub tests, a subscriber's UNSUBSCRIBE (or PUNSUBSCRIBE, SUNSUBSCRIBE)
// sent without reading its reply and then a PUBLISH (PUBSUB NUMSUB,
// NUMPAT, SPUBLISH) on another connection, must always give redis-server's
// answer. Raw sockets: nothing reads a reply before the check.

// arrivalIters is how many times each pattern runs.
const arrivalIters = 500

func rawConn(t *testing.T, c net.Conn) *rconn {
	t.Cleanup(func() { c.Close() })
	return &rconn{t: t, c: c, br: bufio.NewReader(c)}
}

// arrivalLoop runs the patterns arrivalIters times on two fresh
// connections from dial.
func arrivalLoop(t *testing.T, dial func() *rconn) {
	defer pinToOneCPU(t)() // a's data is sent first: it must arrive first
	a, b := dial(), dial()
	expect := func(i int, what, got, want string) {
		t.Helper()
		if got != want {
			t.Fatalf("iteration %d, %s: got %s, want %s", i, what, got, want)
		}
	}
	for i := 0; i < arrivalIters; i++ {
		// UNSUBSCRIBE without arguments (pubsub.tcl "PUBLISH/SUBSCRIBE
		// after UNSUBSCRIBE without arguments").
		a.send("SUBSCRIBE", "chan1", "chan2", "chan3")
		for range 3 {
			a.read()
		}
		a.send("UNSUBSCRIBE")
		expect(i, "PUBLISH after UNSUBSCRIBE", b.do("PUBLISH", "chan1", "hello"), "(integer) 0")
		expect(i, "NUMSUB after UNSUBSCRIBE", b.do("PUBSUB", "NUMSUB", "chan2"), `["chan2", (integer) 0]`)
		for range 3 {
			a.read()
		}
		// PUNSUBSCRIBE without arguments.
		a.send("PSUBSCRIBE", "chan1.*", "chan2.*")
		for range 2 {
			a.read()
		}
		a.send("PUNSUBSCRIBE")
		expect(i, "PUBLISH after PUNSUBSCRIBE", b.do("PUBLISH", "chan1.hi", "hello"), "(integer) 0")
		expect(i, "NUMPAT after PUNSUBSCRIBE", b.do("PUBSUB", "NUMPAT"), "(integer) 0")
		for range 2 {
			a.read()
		}
		// UNSUBSCRIBE of one channel, then a PUBLISH to each.
		a.send("SUBSCRIBE", "x", "y")
		for range 2 {
			a.read()
		}
		a.send("UNSUBSCRIBE", "x")
		expect(i, "PUBLISH to the channel left", b.do("PUBLISH", "x", "m"), "(integer) 0")
		expect(i, "PUBLISH to the channel kept", b.do("PUBLISH", "y", "m"), "(integer) 1")
		expect(i, "UNSUBSCRIBE x reply", a.read(), `["unsubscribe", "x", (integer) 1]`)
		expect(i, "message on y", a.read(), `["message", "y", "m"]`)
		a.send("UNSUBSCRIBE")
		a.read()
		// SUNSUBSCRIBE, SPUBLISH and PUBSUB SHARDNUMSUB.
		a.send("SSUBSCRIBE", "s1")
		a.read()
		a.send("SUNSUBSCRIBE")
		expect(i, "SPUBLISH after SUNSUBSCRIBE", b.do("SPUBLISH", "s1", "m"), "(integer) 0")
		expect(i, "SHARDNUMSUB after SUNSUBSCRIBE", b.do("PUBSUB", "SHARDNUMSUB", "s1"), `["s1", (integer) 0]`)
		a.read()
	}
}

func TestPubSubArrivalOrderUnix(t *testing.T) {
	l := startLive(t)
	arrivalLoop(t, func() *rconn { return l.dial(t) })
}

func TestPubSubArrivalOrderTCP(t *testing.T) {
	_, addr := startLiveTCP(t)
	arrivalLoop(t, func() *rconn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		return rawConn(t, c)
	})
}

// TestPubSubArrivalOrderRedis is the control: redis-server gives these
// answers every time.
func TestPubSubArrivalOrderRedis(t *testing.T) {
	r := testutil.StartRedis(t, testutil.RedisOptions{})
	arrivalLoop(t, func() *rconn { return rawConn(t, r.Dial(t)) })
}

// The waits must end by the subscribers' own progress: a subscriber that
// cannot go on is counted as it stands (order.go), never waited for.

// TestPubSubArrivalBlockedSubscriber: a RESP3 subscriber parked in BLPOP
// has its UNSUBSCRIBE unread, as in Redis: PUBLISH counts it, at once.
func TestPubSubArrivalBlockedSubscriber(t *testing.T) {
	l := startLive(t)
	a, b := l.dial(t), l.dial(t)
	a.do("HELLO", "3")
	a.send("SUBSCRIBE", "ch")
	a.read()
	a.send("BLPOP", "nolist", "0")
	a.send("UNSUBSCRIBE")
	waitFor(t, func() bool { return strings.Contains(b.do("CLIENT", "LIST"), "cmd=blpop") })
	if got := b.do("PUBLISH", "ch", "m"); got != "(integer) 1" {
		t.Fatalf("PUBLISH with the subscriber blocked: %s", got)
	}
	b.do("LPUSH", "nolist", "v")
	// Served: its UNSUBSCRIBE runs before a PUBLISH sent now.
	if got := b.do("PUBLISH", "ch", "m2"); got != "(integer) 0" {
		t.Fatalf("PUBLISH once the subscriber was served: %s", got)
	}
}

// TestPubSubArrivalPausedSubscriber: CLIENT PAUSE WRITE parks a
// subscriber's SET; the UNSUBSCRIBE behind it waits, and PUBSUB NUMSUB
// (not paused) answers at once, as redis-server.
func TestPubSubArrivalPausedSubscriber(t *testing.T) {
	l := startLive(t)
	a, b, c := l.dial(t), l.dial(t), l.dial(t)
	a.do("HELLO", "3")
	a.send("SUBSCRIBE", "ch")
	a.read()
	c.do("CLIENT", "PAUSE", "100000", "WRITE")
	a.send("SET", "k", "v")
	a.send("UNSUBSCRIBE")
	waitFor(t, func() bool { return strings.Contains(b.do("CLIENT", "LIST"), "cmd=set") })
	if got := b.do("PUBSUB", "NUMSUB", "ch"); got != `["ch", (integer) 1]` {
		t.Fatalf("NUMSUB with the subscriber paused: %s", got)
	}
	c.do("CLIENT", "UNPAUSE")
	if got := b.do("PUBSUB", "NUMSUB", "ch"); got != `["ch", (integer) 0]` {
		t.Fatalf("NUMSUB after CLIENT UNPAUSE: %s", got)
	}
}

// TestPubSubArrivalStalledOutput: a RESP3 subscriber that never reads
// has 64 MB of GET replies held for it, with an UNSUBSCRIBE behind them:
// as with redis-server, which buffers without a cap (pubsub 0 0 0), its
// commands run though it does not read, and PUBLISH waits for its
// UNSUBSCRIBE.
func TestPubSubArrivalStalledOutput(t *testing.T) {
	l := startLive(t)
	a, b := l.dial(t), l.dial(t)
	a.do("HELLO", "3")
	a.send("SUBSCRIBE", "ch")
	a.read()
	// No pubsub output limit: the subscriber is not closed.
	b.do("CONFIG", "SET", "client-output-buffer-limit", "pubsub 0 0 0")
	b.do("SET", "big", strings.Repeat("x", 1<<20))
	for range 64 {
		a.send("GET", "big")
	}
	a.send("UNSUBSCRIBE")
	if got := b.do("PUBLISH", "ch", "m"); got != "(integer) 0" {
		t.Fatalf("PUBLISH with the subscriber's output stalled: %s", got)
	}
	if got := b.do("PUBSUB", "NUMSUB", "ch"); got != `["ch", (integer) 0]` {
		t.Fatalf("NUMSUB with the subscriber's output stalled: %s", got)
	}
}

// TestPubSubArrivalUnreadMessages: a subscriber that does not read its
// messages (its socket full, its queue's writer blocked) still runs its
// own UNSUBSCRIBE, before a PUBLISH sent after it; nothing waits forever.
func TestPubSubArrivalUnreadMessages(t *testing.T) {
	l := startLive(t)
	a, b := l.dial(t), l.dial(t)
	b.do("CONFIG", "SET", "client-output-buffer-limit", "pubsub 0 0 0")
	a.send("SUBSCRIBE", "ch")
	a.read()
	big := strings.Repeat("m", 1<<20)
	for range 40 {
		if got := b.do("PUBLISH", "ch", big); got != "(integer) 1" {
			t.Fatalf("PUBLISH to the subscriber: %s", got)
		}
	}
	a.send("UNSUBSCRIBE")
	if got := b.do("PUBLISH", "ch", "m"); got != "(integer) 0" {
		t.Fatalf("PUBLISH after the UNSUBSCRIBE of a subscriber not reading: %s", got)
	}
}

// TestPubSubArrivalPartialCommand: an UNSUBSCRIBE not all arrived is not
// run (nor by Redis): PUBLISH does not wait for the rest.
func TestPubSubArrivalPartialCommand(t *testing.T) {
	l := startLive(t)
	a, b := l.dial(t), l.dial(t)
	a.send("SUBSCRIBE", "ch")
	a.read()
	full := "*1\r\n$11\r\nUNSUBSCRIBE\r\n"
	if _, err := a.c.Write([]byte(full[:10])); err != nil {
		t.Fatal(err)
	}
	if got := b.do("PUBLISH", "ch", "m"); got != "(integer) 1" {
		t.Fatalf("PUBLISH with half an UNSUBSCRIBE arrived: %s", got)
	}
	if _, err := a.c.Write([]byte(full[10:])); err != nil {
		t.Fatal(err)
	}
	if got := b.do("PUBLISH", "ch", "m"); got != "(integer) 0" {
		t.Fatalf("PUBLISH once the UNSUBSCRIBE arrived: %s", got)
	}
}

// TestPubSubArrivalBusyScript: a subscriber runs a script past the busy
// threshold with its UNSUBSCRIBE behind: PUBLISH is answered -BUSY, as by
// redis-server, not held until the script ends.
func TestPubSubArrivalBusyScript(t *testing.T) {
	l := startLive(t)
	stopBusyOnCleanup(t, l)
	a, b := l.dial(t), l.dial(t)
	a.do("HELLO", "3")
	a.send("SUBSCRIBE", "ch")
	a.read()
	a.send("EVAL", busyLoop, "0")
	a.send("UNSUBSCRIBE")
	waitBusy(t, l.s)
	l.clk.Advance(5 * time.Second) // busy-reply-threshold 5000 ms
	if got := b.do("PUBLISH", "ch", "m"); got != "-"+errBusy {
		t.Fatalf("PUBLISH during the subscriber's busy script: %s", got)
	}
	if got := b.do("SCRIPT", "KILL"); got != "+OK" {
		t.Fatalf("SCRIPT KILL: %s", got)
	}
	a.read() // the script's error: it ended
	if got := b.do("PUBLISH", "ch", "m"); got != "(integer) 0" {
		t.Fatalf("PUBLISH after the script: %s", got)
	}
}

// TestPubSubArrivalCrossPublishers: two RESP3 subscribers publish to each
// other at once, over and over, with UNSUBSCRIBE and SUBSCRIBE in between:
// each may wait for the other, never both (no deadlock).
func TestPubSubArrivalCrossPublishers(t *testing.T) {
	l := startLive(t)
	a, b := l.dial(t), l.dial(t)
	for _, c := range []*rconn{a, b} {
		c.do("HELLO", "3")
	}
	a.send("SUBSCRIBE", "a")
	a.read()
	b.send("SUBSCRIBE", "b")
	b.read()
	for i := 0; i < arrivalIters; i++ {
		a.send("PUBLISH", "b", "from-a")
		a.send("UNSUBSCRIBE", "a")
		a.send("SUBSCRIBE", "a")
		b.send("PUBLISH", "a", "from-b")
		b.send("UNSUBSCRIBE", "b")
		b.send("SUBSCRIBE", "b")
		// Each gets its 3 replies and at most one message.
		for _, c := range []*rconn{a, b} {
			for n := 0; n < 3; {
				if !strings.Contains(c.read(), `"message"`) {
					n++
				}
			}
		}
	}
}

// TestPubSubArrivalOwnConnection: a RESP3 subscriber that publishes after
// its own UNSUBSCRIBE sees it (its own order), and does not wait for
// itself.
func TestPubSubArrivalOwnConnection(t *testing.T) {
	l := startLive(t)
	a := l.dial(t)
	a.do("HELLO", "3")
	a.send("SUBSCRIBE", "x")
	a.read()
	a.send("UNSUBSCRIBE", "x")
	a.send("PUBLISH", "x", "m")
	if got := a.read(); got != `>["unsubscribe", "x", (integer) 0]` {
		t.Fatal(got)
	}
	if got := a.read(); got != "(integer) 0" {
		t.Fatal(got)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	if !testutil.PollUntil(10*time.Second, cond) {
		t.Fatal("condition not reached")
	}
}
