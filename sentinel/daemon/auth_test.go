package daemon

import (
	"context"
	"fmt"
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
	// Without them the link is re-made every second and dropped again at
	// once, so nearly every sample sees it disconnected (a sentinel that
	// kept its pub/sub connection would show none).
	for _, sc := range []*redis.SentinelClient{scs[1], late} {
		seen := 0
		var last string
		for i := 0; i < 10; i++ {
			last = flags(sc)
			if strings.Contains(last, "disconnected") {
				seen++
			}
			time.Sleep(50 * time.Millisecond)
		}
		if seen < 8 {
			t.Fatalf("without the new credentials: disconnected in %d of 10 samples (last flags %q)", seen, last)
		}
	}

	if err := conn.Do(ctx, "ACL", "SETUSER", "default", "on").Err(); err != nil {
		t.Fatal(err)
	}
	for _, sc := range []*redis.SentinelClient{scs[1], late} {
		waitFor(t, 20*time.Second, "sentinel back with the default user on", func() bool { return flags(sc) == "master" })
	}
}
