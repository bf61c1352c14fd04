package server

import (
	"net"
	"strings"
	"testing"

	"github.com/vigil-kv/vigil/internal/testutil"
)

// Arrival order for blocking commands (order_keys.go): a blocking command
// sent on one connection without reading its reply, then at once a write
// on another, must find the blocking command parked, as redis-server's
// single event loop does (list.tcl's "BRPOPLPUSH maintains order of
// elements after failure" and "BRPOPLPUSH with multiple blocked clients",
// stream-cgroups.tcl's "Blocking XREADGROUP: key deleted", "key type
// changed with SET" and "Blocking XREAD: key deleted"). Raw sockets:
// nothing reads a reply before the write's.

// blockingIters is how many times each pattern runs.
const blockingIters = 200

// blockingArrivalLoop runs the patterns blockingIters times on fresh
// connections from dial. misses (nil: every answer must be arrival
// order's) counts the other answers per pattern.
func blockingArrivalLoop(t *testing.T, dial func() *rconn, misses map[string]int) {
	// a1 is set up before a2 (ordBlkFirst goes by connection order, and
	// ids are given as connections start being served), as the Tcl
	// suite's deferring clients are.
	a1 := dial()
	id1 := strings.TrimPrefix(a1.do("CLIENT", "ID"), "(integer) ")
	a2, b := dial(), dial()
	expect := func(i int, what, got, want string) {
		t.Helper()
		if got != want {
			t.Fatalf("iteration %d, %s: got %s, want %s", i, what, got, want)
		}
	}
	miss := func(i int, what, got, want string) bool {
		t.Helper()
		if strings.Contains(got, want) {
			return false
		}
		if misses == nil {
			t.Fatalf("iteration %d, %s: got %s, want it to contain %q", i, what, got, want)
		}
		misses[what]++
		return true
	}
	for _, c := range []*rconn{a1, a2, b} {
		expect(-1, "SELECT", c.do("SELECT", "9"), "+OK")
	}
	// unblocked reports whether a1 was still blocked (CLIENT UNBLOCK
	// answers 1: its null reply is read) and so missed the write.
	unblocked := func(i int) bool {
		if b.do("CLIENT", "UNBLOCK", id1) == "(integer) 1" {
			a1.read()
			return true
		}
		return false
	}
	for i := 0; i < blockingIters; i++ {
		b.do("FLUSHALL")
		// BRPOPLPUSH maintains order of elements after failure.
		b.do("SET", "target", "nolist")
		a1.send("BRPOPLPUSH", "blist", "target", "0")
		expect(i, "RPUSH", b.do("RPUSH", "blist", "a", "b", "c"), "(integer) 3")
		miss(i, "BRPOPLPUSH failing", a1.read(), "WRONGTYPE")
		expect(i, "LRANGE after failure", b.do("LRANGE", "blist", "0", "-1"), `["a", "b", "c"]`)

		// BRPOPLPUSH with multiple blocked clients: the first one
		// fails, the element goes to the second.
		b.do("DEL", "blist")
		b.do("SET", "target1", "nolist")
		a1.send("BRPOPLPUSH", "blist", "target1", "0")
		a2.send("BRPOPLPUSH", "blist", "target2", "0")
		expect(i, "LPUSH", b.do("LPUSH", "blist", "foo"), "(integer) 1")
		expect(i, "second BRPOPLPUSH", a2.read(), `"foo"`)
		if what := "two BRPOPLPUSH in arrival order"; unblocked(i) {
			miss(i, what, "still blocked", "WRONGTYPE")
		} else {
			miss(i, what, a1.read(), "WRONGTYPE")
		}
		expect(i, "target2", b.do("LRANGE", "target2", "0", "-1"), `["foo"]`)

		// Blocking XREADGROUP: key deleted, key type changed with SET.
		for _, w := range [][]string{{"DEL", "mystream"}, {"SET", "mystream", "val1"}} {
			b.do("DEL", "mystream")
			b.do("XADD", "mystream", "666", "f", "v")
			expect(i, "XGROUP CREATE", b.do("XGROUP", "CREATE", "mystream", "mygroup", "$"), "+OK")
			a1.send("XREADGROUP", "GROUP", "mygroup", "Alice", "BLOCK", "0", "STREAMS", "mystream", ">")
			b.do(w...)
			miss(i, "XREADGROUP then "+w[0], a1.read(), "no longer exists")
		}

		// Blocking XREAD: key deleted: the entry added after the DEL
		// is read.
		b.do("DEL", "mystream")
		b.do("XADD", "mystream", "666", "f", "v")
		a1.send("XREAD", "BLOCK", "0", "STREAMS", "mystream", "$")
		b.do("DEL", "mystream")
		b.do("XADD", "mystream", "667", "f", "v")
		if what := "XREAD then DEL, XADD"; unblocked(i) {
			miss(i, what, "still blocked", "667-0")
		} else {
			miss(i, what, a1.read(), `"667-0"`)
		}
	}
}

func TestArrivalOrderBlockingUnix(t *testing.T) {
	l := startLive(t)
	blockingArrivalLoop(t, func() *rconn { return l.dial(t) }, nil)
}

func TestArrivalOrderBlockingTCP(t *testing.T) {
	_, addr := startLiveTCP(t)
	blockingArrivalLoop(t, func() *rconn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		return rawConn(t, c)
	}, nil)
}

// TestArrivalOrderBlockingRedis is the control: the answers expected are
// redis-server's. As with the observers (TestArrivalOrderObserversRedis),
// its epoll order is not always arrival order: each pattern must get the
// expected answer at least once.
func TestArrivalOrderBlockingRedis(t *testing.T) {
	r := testutil.StartRedis(t, testutil.RedisOptions{})
	misses := map[string]int{}
	blockingArrivalLoop(t, func() *rconn { return rawConn(t, r.Dial(t)) }, misses)
	t.Logf("redis-server's answers not those of arrival order, of %d: %v", blockingIters, misses)
	for what, n := range misses {
		if n >= blockingIters {
			t.Errorf("%s: redis-server never gave the expected answer", what)
		}
	}
}

// TestOrdKeyKinds: which commands look at their keys for arrival order,
// and for what (order_keys.go).
func TestOrdKeyKinds(t *testing.T) {
	initTable()
	for name, want := range map[string]uint8{
		"get": 0, "lpop": 0, "rpop": 0, "hset": 0, "sadd": 0, "expire": 0, "wait": 0,
		"set": ordKeyStream, "incr": ordKeyStream, "del": ordKeyStream, "unlink": ordKeyStream,
		"lpush": ordKeyAbsent, "rpush": ordKeyAbsent, "zadd": ordKeyAbsent, "xadd": ordKeyAbsent, "lmove": ordKeyAbsent,
		"rename": ordKeyAbsent | ordKeyStream,
		"blpop":  ordKeyAbsent | ordKeyStream | ordKeyBlock, "xread": ordKeyAbsent | ordKeyStream | ordKeyBlock,
		"brpoplpush": ordKeyAbsent | ordKeyStream | ordKeyBlock,
	} {
		cmd := indexedTable.Get(name)
		if cmd == nil {
			t.Fatalf("no command %s", name)
		}
		if got := ordKeyKinds()[cmd.Index()]; got != want {
			t.Errorf("%s: kind %03b, want %03b", name, got, want)
		}
	}
}
