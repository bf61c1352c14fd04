package daemon

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestLoopbackMasterCredentialsChange: when the monitored server switches
// the default user off and kills its clients, a sentinel without the new
// credentials shows its master link "disconnected" (hiredis drops the
// pub/sub connection on the -NOAUTH answering SUBSCRIBE), as redis-sentinel
// 7.0.15 does; SENTINEL SET auth-user/auth-pass reconnects it without a
// restart, and switching the default user back on heals the others.
func TestLoopbackMasterCredentialsChange(t *testing.T) {
	if testing.Short() {
		t.Skip("loopback test: skipped with -short")
	}
	mport := redisServer(t)
	conf := fmt.Sprintf("sentinel monitor mym 127.0.0.1 %d 1\nsentinel down-after-milliseconds mym 2000\n", mport)
	var scs []*redis.SentinelClient
	for i := 0; i < 2; i++ {
		p, _ := startSentinel(t, conf)
		sc := redis.NewSentinelClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(p), MaxRetries: -1})
		t.Cleanup(func() { sc.Close() })
		scs = append(scs, sc)
	}
	ctx := context.Background()
	flags := func(sc *redis.SentinelClient) string {
		m, err := sc.Master(ctx, "mym").Result()
		if err != nil {
			return err.Error()
		}
		return m["flags"]
	}
	connected := func(sc *redis.SentinelClient) func() bool {
		return func() bool { return !strings.Contains(flags(sc), "disconnected") }
	}
	for i, sc := range scs {
		waitFor(t, 10*time.Second, fmt.Sprintf("sentinel %d connected", i), func() bool { return flags(sc) == "master" })
	}

	admin := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(mport), MaxRetries: -1})
	t.Cleanup(func() { admin.Close() })
	conn := admin.Conn() // one connection, AUTHed as app below
	defer conn.Close()
	for _, cmd := range [][]any{
		{"ACL", "SETUSER", "app", "on", ">secret", "+@all", "allchannels", "~*"},
		{"AUTH", "app", "secret"},
		{"ACL", "SETUSER", "default", "off"},
		{"CLIENT", "KILL", "USER", "default", "SKIPME", "no"},
	} {
		if err := conn.Do(ctx, cmd...).Err(); err != nil {
			t.Fatalf("%v: %v", cmd, err)
		}
	}
	for i, sc := range scs {
		waitFor(t, 10*time.Second, fmt.Sprintf("sentinel %d disconnected", i), func() bool {
			return strings.Contains(flags(sc), "disconnected")
		})
	}
	// A sentinel started now, with no credentials, is disconnected too.
	p, _ := startSentinel(t, conf)
	late := redis.NewSentinelClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(p), MaxRetries: -1})
	t.Cleanup(func() { late.Close() })
	waitFor(t, 10*time.Second, "late sentinel disconnected", func() bool {
		return strings.Contains(flags(late), "disconnected")
	})

	if err := scs[0].Set(ctx, "mym", "auth-user", "app").Err(); err != nil {
		t.Fatal(err)
	}
	if err := scs[0].Set(ctx, "mym", "auth-pass", "secret").Err(); err != nil {
		t.Fatal(err)
	}
	// Stays connected: poll until it is, then check it holds over several
	// pub/sub refresh periods' worth of polls.
	waitFor(t, 10*time.Second, "sentinel 0 reconnected with the new credentials", connected(scs[0]))
	waitFor(t, 15*time.Second, "sentinel 0 master up", func() bool { return flags(scs[0]) == "master" })
	for i := 0; i < 20; i++ {
		if f := flags(scs[0]); f != "master" {
			t.Fatalf("sentinel 0 flags %q after the new credentials", f)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Without them the others stay disconnected: each pub/sub link they
	// re-make is refused at SUBSCRIBE (-NOAUTH) and dropped by the
	// sentinel, which re-makes it later. A sentinel that kept its pub/sub
	// connection would hold it open for good and make no new one. So,
	// with no clock in the condition: the master receives new connections
	// (links re-made, four at least: each of the two twice), and every
	// unauthenticated connection it has seen whose last command was
	// SUBSCRIBE goes away (redis-server never closes one itself).
	for _, sc := range []*redis.SentinelClient{scs[1], late} {
		waitFor(t, 10*time.Second, "sentinel without the new credentials disconnected", func() bool {
			return strings.Contains(flags(sc), "disconnected")
		})
	}
	received := func() int {
		info, err := conn.Do(ctx, "INFO", "stats").Text()
		if err != nil {
			t.Fatalf("INFO stats: %v", err)
		}
		for _, line := range strings.Split(info, "\r\n") {
			if v, ok := strings.CutPrefix(line, "total_connections_received:"); ok {
				n, _ := strconv.Atoi(v)
				return n
			}
		}
		t.Fatalf("no total_connections_received in %q", info)
		return 0
	}
	refused := func() map[string]bool {
		list, err := conn.Do(ctx, "CLIENT", "LIST").Text()
		if err != nil {
			t.Fatalf("CLIENT LIST: %v", err)
		}
		ids := map[string]bool{}
		for _, line := range strings.Split(list, "\n") {
			f := strings.Fields(line)
			if slices.Contains(f, "user=default") && slices.Contains(f, "cmd=subscribe") {
				ids[f[0]] = true // id=N
			}
		}
		return ids
	}
	base := received()
	seen := map[string]bool{}
	waitFor(t, 20*time.Second, "the sentinels without the new credentials to re-make their links and drop every refused pub/sub connection", func() bool {
		open := refused()
		for id := range open {
			seen[id] = true
		}
		if received() < base+4 {
			return false
		}
		for id := range seen {
			if open[id] {
				return false
			}
		}
		return true
	})
	t.Logf("refused pub/sub connections seen open, all dropped since: %d", len(seen))

	if err := conn.Do(ctx, "ACL", "SETUSER", "default", "on").Err(); err != nil {
		t.Fatal(err)
	}
	for _, sc := range []*redis.SentinelClient{scs[1], late} {
		waitFor(t, 20*time.Second, "sentinel back with the default user on", func() bool { return flags(sc) == "master" })
	}
}
