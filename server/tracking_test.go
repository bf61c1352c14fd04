package server

import (
	"context"
	"net"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vigil-kv/vigil/internal/resp"
	"github.com/vigil-kv/vigil/internal/testutil"
)

// trackingScenario runs client-side caching between connections (dial
// makes one) and returns what each connection received after each step,
// byte for byte, with client ids replaced by the connections' names. Each
// step's output is read up to a fence (conn_test.go), so a missing or
// extra invalidation shows as a difference. The single-connection cases
// are in testdata/scripts/tracking.txt. advance moves a fake clock (the
// real one moves by itself).
func trackingScenario(t *testing.T, dial func() net.Conn, advance func(time.Duration)) []string {
	type conn struct {
		name    string
		c       net.Conn
		pending []byte
		id      string
	}
	var out []string
	ids := map[string]string{}
	open := func(name string) *conn {
		cn := &conn{name: name, c: dial()}
		t.Cleanup(func() { cn.c.Close() })
		cn.c.Write(resp.AppendCommandStrings(nil, "CLIENT", "ID"))
		got := fenced(t, cn.c, &cn.pending)
		cn.id = strings.TrimSuffix(strings.TrimPrefix(got, ":"), "\r\n")
		ids[cn.id] = name
		return cn
	}
	// norm names the client ids in what a connection received: in a
	// tracking-redir-broken push, TRACKINGINFO's redirect and GETREDIR's
	// reply (whole). tracking-table-max-keys invalidates m1 or m2 at random.
	idFrame := regexp.MustCompile(`(tracking-redir-broken\r\n|redirect\r\n|^):(\d+)\r\n`)
	getredir := false
	norm := func(s string) string {
		s = idFrame.ReplaceAllStringFunc(s, func(m string) string {
			start := strings.LastIndexByte(m, ':')
			if n, ok := ids[m[start+1:len(m)-2]]; ok && (start > 0 || getredir && len(m) == len(s)) {
				return m[:start] + ":<" + n + ">\r\n"
			}
			return m
		})
		return regexp.MustCompile(`\$2\r\nm[12]\r\n`).ReplaceAllString(s, "$$2\r\nmX\r\n")
	}
	// do runs a command on c and records what every connection in watch
	// received (c's reply included).
	do := func(c *conn, watch []*conn, args ...string) {
		t.Helper()
		line := c.name + ": " + strings.Join(args, " ")
		getredir = len(args) == 2 && args[1] == "GETREDIR"
		args = append([]string(nil), args...)
		for i, a := range args {
			if strings.HasPrefix(a, "@") { // @name: that connection's id
				for id, n := range ids {
					if n == a[1:] {
						args[i] = id
					}
				}
			}
		}
		// "|" separates commands sent together (a transaction: the
		// fence cannot go inside it).
		var buf []byte
		for start, i := 0, 0; i <= len(args); i++ {
			if i == len(args) || args[i] == "|" {
				buf = resp.AppendCommandStrings(buf, args[start:i]...)
				start = i + 1
			}
		}
		c.c.Write(buf)
		for _, w := range append([]*conn{c}, watch...) {
			got := fenced(t, w.c, &w.pending)
			line += "\n  " + w.name + " <- " + strconv.Quote(norm(got))
		}
		out = append(out, line)
	}
	sub := open("sub") // RESP2, subscribed to __redis__:invalidate
	r2 := open("r2")   // RESP2, redirects to sub
	r3 := open("r3")   // RESP3, gets pushes
	w := open("w")     // the writer
	t3 := open("t3")   // RESP3, a redirection target
	r2t := open("r2t") // RESP2, redirects to t3
	r2w := open("r2w") // RESP2, redirects to w (not subscribed)
	bc := open("bc")   // RESP2 BCAST, redirects to sub, NOLOOP
	tmp := open("tmp") // a redirection target that goes away
	r3b := open("r3b") // RESP3, redirects to tmp
	all := []*conn{sub, r3, t3}

	do(sub, nil, "SUBSCRIBE", "__redis__:invalidate")
	for _, c := range []*conn{r3, t3, r3b} { // HELLO's reply is not compared
		c.c.Write(resp.AppendCommandStrings(nil, "HELLO", "3"))
		fenced(t, c.c, &c.pending)
	}
	do(r2, nil, "CLIENT", "TRACKING", "ON", "REDIRECT", "@sub")
	do(r2, nil, "CLIENT", "TRACKING", "ON", "REDIRECT", "@sub", "REDIRECT", "@sub")
	do(r2, nil, "CLIENT", "GETREDIR")
	do(r2, nil, "CLIENT", "TRACKINGINFO")
	do(r3, nil, "CLIENT", "TRACKING", "ON")
	do(r2t, nil, "CLIENT", "TRACKING", "ON", "REDIRECT", "@t3")
	do(r2w, nil, "CLIENT", "TRACKING", "ON", "REDIRECT", "@w")
	do(bc, nil, "CLIENT", "TRACKING", "ON", "REDIRECT", "@sub", "BCAST", "PREFIX", "p:", "PREFIX", "q:", "NOLOOP")
	do(tmp, nil, "PING")
	do(r3b, nil, "CLIENT", "TRACKING", "ON", "REDIRECT", "@tmp")
	do(r2, nil, "GET", "a")
	do(r2, nil, "MGET", "b", "c", "d")
	do(r3, nil, "MGET", "a", "b")
	do(r2t, nil, "GET", "a")
	do(r2w, nil, "GET", "a")
	do(w, all, "SET", "a", "1")
	do(w, all, "SET", "a", "2")
	do(w, all, "MSET", "b", "1", "c", "1", "x", "1")
	do(w, all, "DEL", "d")
	do(r2, all, "SET", "d", "1") // its own write: after its reply
	do(r2, all, "GET", "d")
	do(w, all, "MULTI", "|", "DEL", "d", "|", "SET", "p:1", "x", "|", "EXEC")
	do(w, all, "MSET", "p:2", "x", "q:1", "y", "p:1", "z", "r:1", "w")
	do(bc, all, "SET", "p:3", "x") // NOLOOP: not sent to bc itself
	do(bc, all, "MSET", "p:3", "y", "p:4", "y")
	do(w, all, "MSET", "p:3", "z", "p:5", "z")
	do(r3, all, "GET", "a")
	do(r2, all, "GET", "a")
	do(w, all, "FLUSHALL")
	do(w, all, "FLUSHDB")
	// A redirection target that went away.
	do(r3b, all, "GET", "y")
	tmp.c.Close()
	testutil.Poll(t, 10*time.Second, "tmp to disconnect", func() bool {
		w.c.Write(resp.AppendCommandStrings(nil, "CLIENT", "LIST", "ID", tmp.id))
		return fenced(t, w.c, &w.pending) == "$0\r\n\r\n"
	})
	do(w, []*conn{r3b}, "SET", "y", "1")
	do(r3b, nil, "CLIENT", "TRACKINGINFO")
	do(r3b, nil, "CLIENT", "GETREDIR")
	do(w, []*conn{r3b}, "SET", "y", "2")
	do(r3b, nil, "GET", "y")
	do(w, []*conn{r3b}, "DEL", "y")
	// Expiry: the key's deletion (lazy or active) invalidates it.
	do(w, nil, "SET", "e", "v", "PX", "50")
	do(r3, nil, "GET", "e")
	advance(100 * time.Millisecond)
	testutil.Poll(t, 10*time.Second, "e to expire", func() bool {
		w.c.Write(resp.AppendCommandStrings(nil, "EXISTS", "e"))
		return fenced(t, w.c, &w.pending) == ":0\r\n"
	})
	do(r3, nil, "PING")
	// INFO's tracking fields (the table keeps the ids of clients that no
	// longer track until their keys are invalidated).
	w.c.Write(resp.AppendCommandStrings(nil, "INFO"))
	info := fenced(t, w.c, &w.pending)
	var fields []string
	for _, l := range strings.Split(info, "\r\n") {
		if strings.HasPrefix(l, "tracking_") {
			fields = append(fields, l)
		}
	}
	out = append(out, "INFO: "+strings.Join(fields, " "))
	// tracking-table-max-keys: over the limit, a random key is invalidated
	// before the next command.
	do(w, nil, "FLUSHALL")
	do(r3, nil, "PING")
	do(w, nil, "CONFIG", "SET", "tracking-table-max-keys", "1")
	do(r3, nil, "GET", "m1")
	do(r3, nil, "GET", "m2")
	w.c.Write(resp.AppendCommandStrings(nil, "PING"))
	fenced(t, w.c, &w.pending)
	r3.c.Write(resp.AppendCommandStrings(nil, "PING"))
	got := fenced(t, r3.c, &r3.pending)
	out = append(out, "max-keys: r3 <- "+strconv.Quote(norm(got)))
	do(w, nil, "CONFIG", "SET", "tracking-table-max-keys", "1000000")
	// Disconnection and RESET end tracking.
	do(r2, nil, "RESET")
	r2w.c.Close()
	testutil.Poll(t, 10*time.Second, "r2w to disconnect", func() bool {
		w.c.Write(resp.AppendCommandStrings(nil, "CLIENT", "LIST", "ID", r2w.id))
		return fenced(t, w.c, &w.pending) == "$0\r\n\r\n"
	})
	w.c.Write(resp.AppendCommandStrings(nil, "INFO", "clients"))
	info = fenced(t, w.c, &w.pending)
	out = append(out, "INFO clients: "+regexp.MustCompile(`tracking_clients:\d+`).FindString(info))
	return out
}

// TestTrackingAgainstRedis runs trackingScenario on redis-server 7.0.15
// and on Vigil: every connection must receive the same bytes.
func TestTrackingAgainstRedis(t *testing.T) {
	testutil.NeedRedis(t)
	r := testutil.StartRedis(t, testutil.RedisOptions{})
	want := trackingScenario(t, func() net.Conn { return r.Dial(t) }, func(time.Duration) {})
	l := startLive(t)
	got := trackingScenario(t, func() net.Conn {
		c, err := net.Dial("unix", l.sock)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}, func(d time.Duration) { l.clk.Advance(d) })
	if len(got) != len(want) {
		t.Fatalf("%d steps, redis-server %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("step %d:\nvigil: %s\nredis: %s", i, got[i], want[i])
		}
	}
}

// TestTrackingGoRedisCache: go-redis's client-side cache (RESP3 tracking)
// serves hits from Vigil as from redis-server, and sees a write from
// another client invalidate its entry.
func TestTrackingGoRedisCache(t *testing.T) {
	testutil.NeedRedis(t)
	r := testutil.StartRedis(t, testutil.RedisOptions{})
	l := startLive(t)
	for _, srv := range []struct{ name, sock string }{{"redis-server", r.Sock}, {"vigil", l.sock}} {
		t.Run(srv.name, func(t *testing.T) {
			ctx := context.Background()
			opt := func() *redis.Options {
				return &redis.Options{Network: "unix", Addr: srv.sock, MaxRetries: -1, DisableIdentity: true}
			}
			mut := redis.NewClient(opt())
			defer mut.Close()
			o := opt()
			o.Protocol = 3
			o.ClientSideCacheConfig = &redis.ClientSideCacheConfig{MaxEntries: 1024}
			csc := redis.NewClient(o)
			defer csc.Close()
			if err := mut.Set(ctx, "k", "v1", 0).Err(); err != nil {
				t.Fatal(err)
			}
			testutil.Poll(t, 10*time.Second, "a cache hit", func() bool {
				v, err := csc.Get(ctx, "k").Result()
				if err != nil || v != "v1" {
					t.Fatalf("GET: %q %v", v, err)
				}
				return csc.CSCStats().Hits > 0
			})
			if err := mut.Set(ctx, "k", "v2", 0).Err(); err != nil {
				t.Fatal(err)
			}
			testutil.Poll(t, 10*time.Second, "the invalidation", func() bool {
				csc.Ping(ctx)
				v, err := csc.Get(ctx, "k").Result()
				return err == nil && v == "v2"
			})
			n, err := mut.Do(ctx, "INFO", "clients").Text()
			if err != nil || !strings.Contains(n, "tracking_clients:") || strings.Contains(n, "tracking_clients:0\r\n") {
				t.Errorf("INFO clients: %q %v", n, err)
			}
		})
	}
}

// TestTrackingExpiryEvictionLimit covers on a fake clock what the oracle
// test does not: a key that expires or is evicted during the tracking
// client's own command, and tracking-table-max-keys, invalidate after the
// command's reply; the table and INFO's fields follow.
func TestTrackingExpiryEvictionLimit(t *testing.T) {
	ts := newTestServer(t)
	s := ts.s
	c := ts.client()
	other := ts.client()
	ts.do(c, "HELLO", "3")
	ts.do(c, "CLIENT", "TRACKING", "ON")
	ts.do(other, "SET", "e", "1", "PX", "10")
	ts.do(c, "GET", "e")
	ts.do(c, "MGET", "a", "b", "e")
	s.mu.Lock()
	keys, items, prefixes := s.trackingInfo()
	s.mu.Unlock()
	if keys != 3 || items != 3 || prefixes != 0 {
		t.Fatalf("table: %d keys %d items %d prefixes", keys, items, prefixes)
	}
	// The key expires; c's own lookup deletes it (lazily) and reads it
	// again: the invalidation follows the reply.
	ts.clk.Advance(20 * time.Millisecond)
	if got := ts.do(c, "GET", "e"); got != "_\r\n>2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\ne\r\n" {
		t.Fatalf("GET of an expired key: %q", got)
	}
	if got := ts.do(c, "SET", "a", "1"); got != "+OK\r\n>2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\na\r\n" {
		t.Fatalf("SET of a read key: %q", got)
	}
	// tracking-table-max-keys 1 (the table holds b and e): before c's next
	// command one key goes, after it x is added, and before the one after
	// one more key goes.
	ts.do(other, "CONFIG", "SET", "tracking-table-max-keys", "1")
	// (before the command runs: at once, ahead of its reply)
	if got := ts.do(c, "GET", "x"); strings.Count(got, "invalidate") != 1 || !strings.HasSuffix(got, "_\r\n") {
		t.Fatalf("GET over tracking-table-max-keys: %q", got)
	}
	got := ts.do(c, "PING")
	if n := strings.Count(got, "invalidate"); n != 1 || !strings.HasSuffix(got, "+PONG\r\n") {
		t.Fatalf("PING over tracking-table-max-keys: %q", got)
	}
	s.mu.Lock()
	keys, _, _ = s.trackingInfo()
	s.mu.Unlock()
	if keys != 1 {
		t.Fatalf("%d keys left", keys)
	}
	ts.do(other, "CONFIG", "SET", "tracking-table-max-keys", "0")
	// Eviction: every key goes, and c hears of those it read.
	ts.do(c, "GET", "z")
	ts.do(other, "SET", "z", "1")
	ts.do(c, "GET", "z")
	ts.do(other, "CONFIG", "SET", "maxmemory-policy", "allkeys-random")
	got = ts.do(c, "CONFIG", "SET", "maxmemory", "1") // evicts at once
	ts.do(other, "CONFIG", "SET", "maxmemory", "0")
	if !strings.Contains(got, "$1\r\nz\r\n") {
		t.Fatalf("after eviction c got %q", got)
	}
	// A disconnected client stops counting; its ids go with their keys.
	s.unlinkClient(c)
	s.mu.Lock()
	n := len(s.tracking.byClient)
	s.mu.Unlock()
	if n != 0 {
		t.Fatalf("tracking_clients %d after disconnection", n)
	}
}
