package daemon

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"github.com/vigil-kv/vigil/internal/testutil"
)

// redisServer starts Debian's redis-server on a free port, skipping the test
// when it is not installed.
func redisServer(t *testing.T, args ...string) int {
	t.Helper()
	return testutil.StartRedis(t, testutil.RedisOptions{TCP: true, Args: args}).Port
}

func freePort(t *testing.T) int {
	t.Helper()
	return testutil.FreePort(t)
}

// waitFor polls cond until it holds; the deadline only bounds the wait.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	testutil.Poll(t, limit, what, cond)
}

// startSentinel runs an in-process daemon with the given sentinel.conf body
// on a loopback port and returns that port.
func startSentinel(t *testing.T, body string) (int, *Daemon) {
	return startSentinelExit(t, body, func(int) {})
}

func startSentinelExit(t *testing.T, body string, exit func(int)) (int, *Daemon) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	path := filepath.Join(t.TempDir(), "sentinel.conf")
	if err := os.WriteFile(path, []byte(fmt.Sprintf("port %d\nbind 127.0.0.1\n%s", port, body)), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := LoadConfig(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	log := zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.InfoLevel)
	d, err := New(Options{Settings: st, Log: log, Exit: exit})
	if err != nil {
		t.Fatal(err)
	}
	d.Serve(ln)
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go d.Run(ctx)
	t.Cleanup(func() { cancel(); <-d.Done() })
	return port, d
}

func TestLoopbackFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("loopback failover test: skipped with -short")
	}
	mport := redisServer(t)
	rport := redisServer(t, "--replicaof", "127.0.0.1", strconv.Itoa(mport))
	conf := fmt.Sprintf("sentinel monitor mym 127.0.0.1 %d 2\nsentinel down-after-milliseconds mym 1000\n"+
		"sentinel failover-timeout mym 5000\n", mport)
	var ports []int
	for i := 0; i < 3; i++ {
		p, _ := startSentinel(t, conf)
		ports = append(ports, p)
	}
	ctx := context.Background()
	var scs []*redis.SentinelClient
	for _, p := range ports {
		sc := redis.NewSentinelClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(p)})
		t.Cleanup(func() { sc.Close() })
		scs = append(scs, sc)
	}

	// Discovery: every sentinel sees the replica and the two others.
	waitFor(t, 45*time.Second, "discovery", func() bool {
		for _, sc := range scs {
			reps, err := sc.Replicas(ctx, "mym").Result()
			if err != nil || len(reps) != 1 {
				return false
			}
			sens, err := sc.Sentinels(ctx, "mym").Result()
			if err != nil || len(sens) != 2 {
				return false
			}
		}
		return true
	})
	addr, err := scs[0].GetMasterAddrByName(ctx, "mym").Result()
	if err != nil || addr[1] != strconv.Itoa(mport) {
		t.Fatalf("get-master-addr-by-name = %v, %v; want port %d", addr, err, mport)
	}

	// A failover client writes through the sentinels.
	fc := redis.NewFailoverClient(&redis.FailoverOptions{
		MasterName:    "mym",
		SentinelAddrs: []string{"127.0.0.1:" + strconv.Itoa(ports[0]), "127.0.0.1:" + strconv.Itoa(ports[1])},
	})
	t.Cleanup(func() { fc.Close() })
	if err := fc.Set(ctx, "k", "v1", 0).Err(); err != nil {
		t.Fatalf("SET through the failover client: %v", err)
	}

	sub := scs[1].Subscribe(ctx, "+switch-master")
	t.Cleanup(func() { sub.Close() })
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}

	if err := scs[0].Failover(ctx, "mym").Err(); err != nil {
		t.Fatalf("SENTINEL FAILOVER: %v", err)
	}
	msgCtx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	msg, err := sub.ReceiveMessage(msgCtx)
	if err != nil {
		t.Fatalf("no +switch-master: %v", err)
	}
	want := fmt.Sprintf("mym 127.0.0.1 %d 127.0.0.1 %d", mport, rport)
	if msg.Payload != want {
		t.Fatalf("+switch-master payload %q, want %q", msg.Payload, want)
	}
	waitFor(t, 30*time.Second, "all sentinels switched", func() bool {
		for _, sc := range scs {
			a, err := sc.GetMasterAddrByName(ctx, "mym").Result()
			if err != nil || a[1] != strconv.Itoa(rport) {
				return false
			}
		}
		return true
	})
	waitFor(t, 30*time.Second, "write after failover", func() bool {
		return fc.Set(ctx, "k", "v2", 0).Err() == nil
	})
}

// TestNotificationScript runs a notification script on a warning event
// (+set) and checks its argv; no Redis needed.
func TestNotificationScript(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "args")
	script := filepath.Join(dir, "notify.sh")
	body := "#!/bin/sh\necho \"$@\" >> " + out + "\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	dead := freePort(t)
	conf := fmt.Sprintf("sentinel monitor mym 127.0.0.1 %d 2\nsentinel notification-script mym %s\n", dead, script)
	port, _ := startSentinel(t, conf)
	ctx := context.Background()
	sc := redis.NewSentinelClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port)})
	t.Cleanup(func() { sc.Close() })
	if err := sc.Set(ctx, "mym", "quorum", "3").Err(); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("+set master mym 127.0.0.1 %d quorum 3\n", dead)
	waitFor(t, 10*time.Second, "script output", func() bool {
		b, _ := os.ReadFile(out)
		return strings.Contains(string(b), want)
	})
	waitFor(t, 10*time.Second, "empty script queue", func() bool {
		cmd := redis.NewSliceCmd(ctx, "SENTINEL", "PENDING-SCRIPTS")
		_ = sc.Process(ctx, cmd)
		v, err := cmd.Result()
		return err == nil && len(v) == 0
	})
}

// TestScriptRetries: a script exiting 1 is retried (SCRIPT_MAX_RETRY = 10
// runs in all) and then dropped with a -script-error event.
func TestScriptRetries(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "runs")
	script := filepath.Join(dir, "fail.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho run >> "+out+"\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	dead := freePort(t)
	conf := fmt.Sprintf("sentinel monitor mym 127.0.0.1 %d 2\nsentinel notification-script mym %s\n", dead, script)
	port, _ := startSentinel(t, conf)
	ctx := context.Background()
	sc := redis.NewSentinelClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port)})
	t.Cleanup(func() { sc.Close() })
	if err := sc.Process(ctx, redis.NewStatusCmd(ctx, "SENTINEL", "DEBUG", "SCRIPT-RETRY-DELAY", "1")); err != nil {
		t.Fatal(err)
	}
	sub := sc.Subscribe(ctx, "-script-error")
	t.Cleanup(func() { sub.Close() })
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	// +monitor ran the script at startup; the SET adds a second job.
	if err := sc.Set(ctx, "mym", "quorum", "3").Err(); err != nil {
		t.Fatal(err)
	}
	msgCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	msg, err := sub.ReceiveMessage(msgCtx)
	if err != nil {
		t.Fatalf("no -script-error: %v", err)
	}
	if msg.Payload != script+" 0 1" {
		t.Fatalf("-script-error payload %q", msg.Payload)
	}
	waitFor(t, 30*time.Second, "both jobs done", func() bool {
		cmd := redis.NewSliceCmd(ctx, "SENTINEL", "PENDING-SCRIPTS")
		_ = sc.Process(ctx, cmd)
		v, err := cmd.Result()
		return err == nil && len(v) == 0
	})
	b, _ := os.ReadFile(out)
	if n := strings.Count(string(b), "run"); n != 2*scriptMaxRetry {
		t.Fatalf("%d runs, want %d", n, 2*scriptMaxRetry)
	}
}

// TestSimulateFailure: SENTINEL SIMULATE-FAILURE CRASH-AFTER-ELECTION makes
// the sentinel exit with status 99 once elected (here by SENTINEL FAILOVER).
func TestSimulateFailure(t *testing.T) {
	mport := redisServer(t)
	redisServer(t, "--replicaof", "127.0.0.1", strconv.Itoa(mport))
	exited := make(chan int, 1)
	conf := fmt.Sprintf("sentinel monitor mym 127.0.0.1 %d 1\n", mport)
	port, _ := startSentinelExit(t, conf, func(code int) { exited <- code })
	ctx := context.Background()
	sc := redis.NewSentinelClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port)})
	t.Cleanup(func() { sc.Close() })
	waitFor(t, 30*time.Second, "replica discovered", func() bool {
		reps, err := sc.Replicas(ctx, "mym").Result()
		return err == nil && len(reps) == 1 && strings.Contains(reps[0]["flags"], "slave") &&
			!strings.Contains(reps[0]["flags"], "disconnected") && reps[0]["master-link-status"] == "ok"
	})
	if err := sc.Process(ctx, redis.NewStatusCmd(ctx, "SENTINEL", "SIMULATE-FAILURE", "CRASH-AFTER-ELECTION")); err != nil {
		t.Fatal(err)
	}
	cmd := redis.NewStringCmd(ctx, "INFO", "sentinel")
	_ = sc.Process(ctx, cmd)
	if !strings.Contains(cmd.Val(), "sentinel_simulate_failure_flags:1") {
		t.Fatalf("INFO sentinel: %q", cmd.Val())
	}
	waitFor(t, 30*time.Second, "failover accepted", func() bool { return sc.Failover(ctx, "mym").Err() == nil })
	select {
	case code := <-exited:
		if code != 99 {
			t.Fatalf("exit code %d, want 99", code)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no crash after election")
	}
}

// TestGoRedisSentinelAPI drives every SentinelClient method of go-redis
// against the daemon (no Redis needed): the reply shapes must parse.
func TestGoRedisSentinelAPI(t *testing.T) {
	dead := freePort(t)
	port, _ := startSentinel(t, fmt.Sprintf("sentinel monitor mym 127.0.0.1 %d 1\n", dead))
	ctx := context.Background()
	for _, proto := range []int{2, 3} {
		sc := redis.NewSentinelClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port), Protocol: proto})
		if err := sc.Ping(ctx).Err(); err != nil {
			t.Fatalf("RESP%d PING: %v", proto, err)
		}
		if ms, err := sc.Masters(ctx).Result(); err != nil || len(ms) != 1 {
			t.Fatalf("RESP%d MASTERS: %v %v", proto, ms, err)
		}
		m, err := sc.Master(ctx, "mym").Result()
		if err != nil || m["name"] != "mym" || m["port"] != strconv.Itoa(dead) || m["quorum"] != "1" {
			t.Fatalf("RESP%d MASTER: %v %v", proto, m, err)
		}
		if _, err := sc.Master(ctx, "nope").Result(); err == nil || err.Error() != "ERR No such master with that name" {
			t.Fatalf("RESP%d MASTER nope: %v", proto, err)
		}
		if r, err := sc.Replicas(ctx, "mym").Result(); err != nil || len(r) != 0 {
			t.Fatalf("RESP%d REPLICAS: %v %v", proto, r, err)
		}
		if s, err := sc.Sentinels(ctx, "mym").Result(); err != nil || len(s) != 0 {
			t.Fatalf("RESP%d SENTINELS: %v %v", proto, s, err)
		}
		if q, err := sc.CkQuorum(ctx, "mym").Result(); err != nil || !strings.HasPrefix(q, "OK 1 usable Sentinels") {
			t.Fatalf("RESP%d CKQUORUM: %q %v", proto, q, err)
		}
		if err := sc.FlushConfig(ctx).Err(); err != nil {
			t.Fatalf("RESP%d FLUSHCONFIG: %v", proto, err)
		}
		if err := sc.Monitor(ctx, "extra", "127.0.0.1", "1", "2").Err(); err != nil {
			t.Fatalf("RESP%d MONITOR: %v", proto, err)
		}
		if err := sc.Set(ctx, "extra", "down-after-milliseconds", "1234").Err(); err != nil {
			t.Fatalf("RESP%d SET: %v", proto, err)
		}
		if n, err := sc.Reset(ctx, "ext*").Result(); err != nil || n != 1 {
			t.Fatalf("RESP%d RESET: %d %v", proto, n, err)
		}
		if err := sc.Remove(ctx, "extra").Err(); err != nil {
			t.Fatalf("RESP%d REMOVE: %v", proto, err)
		}
		if _, err := sc.GetMasterAddrByName(ctx, "nope").Result(); err != redis.Nil {
			t.Fatalf("RESP%d GET-MASTER-ADDR-BY-NAME nope: %v", proto, err)
		}
		if err := sc.Failover(ctx, "mym").Err(); err == nil || !strings.HasPrefix(err.Error(), "NOGOODSLAVE") {
			t.Fatalf("RESP%d FAILOVER without replicas: %v", proto, err)
		}
		sc.Close()
	}
}
