package server

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/resp"
	"github.com/vigil-kv/vigil/internal/testutil"
)

// clientNum is field of the CLIENT LIST line of the client named name, as
// a number (-1: the client is not listed).
func clientNum(admin *rconn, name, field string) int64 {
	kv := clientFields(admin.do("CLIENT", "LIST"), name, field)
	if kv == "" {
		return -1
	}
	n, _ := strconv.ParseInt(strings.TrimPrefix(kv, field+"="), 10, 64)
	return n
}

// unreadClientScenario is client-eviction.tcl's "client total memory
// grows during ..." on real connections: with the normal class's default
// limits (0 0 0) and no maxmemory-clients, a client that pipelines large
// GETs and reads none of the replies has every one of them run, and its
// replies are held for it: its omem, tot-mem and INFO's
// mem_clients_normal grow well past what the kernel's socket buffers hold.
// When it reads, it gets every reply in order, and its output is gone.
// A second such client is evicted once maxmemory-clients is set. tick
// moves a fake clock on (the cron's turn), nil for a real server.
func unreadClientScenario(t *testing.T, dial func() *rconn, tick func()) []string {
	t.Helper()
	var out []string
	admin := dial()
	admin.do("CLIENT", "NO-EVICT", "on")
	admin.do("CONFIG", "SET", "client-output-buffer-limit", "normal 0 0 0")
	admin.do("CONFIG", "SET", "maxmemory-clients", "0")
	val := strings.Repeat("v", 100<<10)
	admin.do("SET", "k", val)
	const n = 400 // 40 MB of replies
	var req []byte
	for range n {
		req = resp.AppendCommandStrings(req, "GET", "k")
	}
	// flood has a fresh client named name send the GETs without reading
	// and waits until all of them ran (INFO commandstats).
	flood := func(name string) *rconn {
		admin.do("CONFIG", "RESETSTAT")
		a := dial()
		a.do("CLIENT", "SETNAME", name)
		go func() {
			a.c.SetWriteDeadline(time.Now().Add(60 * time.Second))
			_, _ = a.c.Write(req)
		}()
		want := "calls=" + strconv.Itoa(n) + ","
		ran := testutil.PollUntil(60*time.Second, func() bool {
			return strings.HasPrefix(liveInfoField(t, admin, "commandstats", "cmdstat_get"), want)
		})
		out = append(out, fmt.Sprintf("%s: all %d GETs ran: %v", name, n, ran))
		return a
	}
	a := flood("unread")
	// Half the replies at least are held by the server (the kernel's
	// buffers of a unix socket hold far less).
	omem := clientNum(admin, "unread", "omem")
	tot := clientNum(admin, "unread", "tot-mem")
	out = append(out, fmt.Sprintf("omem over half the replies: %v, tot-mem over omem: %v", omem > n*int64(len(val))/2, tot > omem))
	counted := testutil.PollUntil(30*time.Second, func() bool {
		if tick != nil {
			tick() // clientsCron counts it
		}
		v, _ := strconv.ParseInt(liveInfoField(t, admin, "memory", "mem_clients_normal"), 10, 64)
		return v >= omem
	})
	out = append(out, fmt.Sprintf("mem_clients_normal counts it: %v", counted))
	// It reads: every reply, in order.
	a.c.SetReadDeadline(time.Now().Add(60 * time.Second))
	inOrder := true
	for i := 0; i < n && inOrder; i++ {
		v, err := resp.ReadValue(a.br, resp.DefaultReplyLimits)
		if err != nil || v.Kind != resp.KindBulk || v.Str != val {
			t.Logf("reply %d: %v", i, err)
			inOrder = false
		}
	}
	out = append(out, fmt.Sprintf("replies read in order: %v", inOrder))
	drained := testutil.PollUntil(30*time.Second, func() bool { return clientNum(admin, "unread", "omem") == 0 })
	out = append(out, fmt.Sprintf("omem 0 once read: %v, PING: %s", drained, a.do("PING")))
	a.c.Close()
	testutil.PollUntil(30*time.Second, func() bool { return clientNum(admin, "unread", "omem") < 0 })
	// Client eviction is what bounds it.
	flood("unread2")
	admin.do("CONFIG", "SET", "maxmemory-clients", "1")
	gone := testutil.PollUntil(30*time.Second, func() bool { return clientNum(admin, "unread2", "omem") < 0 })
	out = append(out, fmt.Sprintf("evicted: %v, evicted_clients %s", gone, liveInfoField(t, admin, "stats", "evicted_clients")))
	admin.do("CONFIG", "SET", "maxmemory-clients", "0")
	return out
}

// TestUnreadClientOutputGrowsVsRedis: unreadClientScenario on redis-server
// 7.0.15 and on Vigil, which used to stop reading such a client's requests
// once about 1 MB of its replies waited.
func TestUnreadClientOutputGrowsVsRedis(t *testing.T) {
	l, dialRedis := startLiveBesideRedis(t)
	redis := unreadClientScenario(t, dialRedis, nil)
	vigil := unreadClientScenario(t, func() *rconn { return l.dial(t) }, func() { l.clk.Advance(100 * time.Millisecond) })
	sameAsRedis(t, "unread client", redis, vigil, []string{
		"unread: all 400 GETs ran: true",
		"omem over half the replies: true, tot-mem over omem: true",
		"mem_clients_normal counts it: true",
		"replies read in order: true",
		"omem 0 once read: true, PING: +PONG",
		"unread2: all 400 GETs ran: true",
		"evicted: true, evicted_clients 1",
	})
}

// hugeRandCountScenario is obuf-limits.tcl's "Obuf limit, HRANDFIELD with
// huge count stopped mid-run", for each command whose negative count asks
// for that many random elements: with a normal hard limit of 1000000 the
// command stops once its client is to be closed for its output buffer, the
// client is disconnected having got at most a bounded part of the reply,
// and the server answers its other clients.
func hugeRandCountScenario(t *testing.T, dial func() *rconn) []string {
	t.Helper()
	var out []string
	admin := dial()
	admin.do("CONFIG", "SET", "client-output-buffer-limit", "normal 1000000 0 0")
	admin.do("HSET", "myhash", "a", "b")
	admin.do("SADD", "myset", "a")
	admin.do("SADD", "myintset", "1")
	admin.do("ZADD", "myzset", "1", "a")
	for _, cmd := range [][]string{
		{"HRANDFIELD", "myhash", "-999999999"},
		{"HRANDFIELD", "myhash", "-999999999", "WITHVALUES"},
		{"SRANDMEMBER", "myset", "-999999999"},
		{"SRANDMEMBER", "myintset", "-999999999"},
		{"ZRANDMEMBER", "myzset", "-999999999"},
		{"ZRANDMEMBER", "myzset", "-999999999", "WITHSCORES"},
	} {
		c := dial()
		c.do("CLIENT", "SETNAME", "huge")
		c.send(cmd...)
		// The deadline only ends a run that would go on for hours.
		got, err := readAllUntilEOF(c.c, 120*time.Second)
		closed := err == nil || strings.Contains(err.Error(), "reset")
		gone := testutil.PollUntil(30*time.Second, func() bool { return clientNum(admin, "huge", "omem") < 0 })
		out = append(out, fmt.Sprintf("%s: closed %v, got under 16 MB %v, gone %v, PING %s",
			strings.Join(cmd, " "), closed, len(got) < 16<<20, gone, admin.do("PING")))
	}
	admin.do("CONFIG", "SET", "client-output-buffer-limit", "normal 0 0 0")
	return out
}

// TestHugeRandCountStoppedVsRedis: hugeRandCountScenario on redis-server
// 7.0.15 and on Vigil, which used to build the whole reply first (7 GB
// for HRANDFIELD's).
func TestHugeRandCountStoppedVsRedis(t *testing.T) {
	l, dialRedis := startLiveBesideRedis(t)
	redis := hugeRandCountScenario(t, dialRedis)
	vigil := hugeRandCountScenario(t, func() *rconn { return l.dial(t) })
	var want []string
	for _, c := range []string{
		"HRANDFIELD myhash -999999999", "HRANDFIELD myhash -999999999 WITHVALUES",
		"SRANDMEMBER myset -999999999", "SRANDMEMBER myintset -999999999",
		"ZRANDMEMBER myzset -999999999", "ZRANDMEMBER myzset -999999999 WITHSCORES",
	} {
		want = append(want, c+": closed true, got under 16 MB true, gone true, PING +PONG")
	}
	sameAsRedis(t, "huge random counts", redis, vigil, want)
}

// keysStoppedScenario is obuf-limits.tcl's "Obuf limit, KEYS stopped
// mid-run": with a normal hard limit of 100000, KEYS over 500 keys of 100
// bytes (about 55 KB of reply) is answered, and over 1000 (about 111 KB,
// all of it in Redis's reply list since KEYS's length is deferred, not in
// the 16 KB static buffer) closes the client; the server answers the
// others.
func keysStoppedScenario(t *testing.T, dial func() *rconn) []string {
	t.Helper()
	var out []string
	admin := dial()
	admin.do("FLUSHALL")
	admin.do("CONFIG", "SET", "client-output-buffer-limit", "normal 100000 0 0")
	prefix := strings.Repeat("k", 100)
	for _, n := range []int{500, 1000} {
		args := []string{"MSET"}
		for i := range n {
			args = append(args, prefix+strconv.Itoa(i), "v")
		}
		admin.do(args...)
		c := dial()
		c.send("KEYS", "*")
		c.c.SetReadDeadline(time.Now().Add(30 * time.Second))
		v, err := resp.ReadValue(c.br, resp.DefaultReplyLimits)
		switch {
		case err != nil:
			out = append(out, fmt.Sprintf("%d keys: closed %v", n, c.closed() || strings.Contains(err.Error(), "EOF") || strings.Contains(err.Error(), "reset")))
		default:
			out = append(out, fmt.Sprintf("%d keys: %d keys, open %v", n, len(v.Elems), c.stillOpen()))
		}
		out = append(out, "PING "+admin.do("PING"))
	}
	admin.do("CONFIG", "SET", "client-output-buffer-limit", "normal 0 0 0")
	admin.do("FLUSHALL")
	return out
}

// TestKeysStoppedVsRedis: keysStoppedScenario on redis-server 7.0.15 and
// on Vigil, which counted the first 16 KB of KEYS's reply as the static
// buffer and so stayed under the limit.
func TestKeysStoppedVsRedis(t *testing.T) {
	l, dialRedis := startLiveBesideRedis(t)
	redis := keysStoppedScenario(t, dialRedis)
	vigil := keysStoppedScenario(t, func() *rconn { return l.dial(t) })
	sameAsRedis(t, "KEYS over the limit", redis, vigil, []string{
		"500 keys: 500 keys, open true", "PING +PONG",
		"1000 keys: closed true", "PING +PONG",
	})
}
