package daemon

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
)

// startSentinelAt runs a daemon on the sentinel.conf at path (written with
// body on the first start) and returns its port and a stop function.
func startSentinelAt(t *testing.T, path, body string) (int, func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if body != "" {
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	st, err := LoadConfig(path, []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	d, err := New(Options{Settings: st, Log: zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel), Exit: func(int) {}})
	if err != nil {
		t.Fatal(err)
	}
	d.Serve(ln)
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go d.Run(ctx)
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			<-d.Done()
		}
	}
	t.Cleanup(stop)
	return port, stop
}

func timeline(t *testing.T, port int, master string) ([]any, error) {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port), Protocol: 2})
	defer c.Close()
	v, err := c.Do(context.Background(), "SENTINEL", "TIMELINE", master).Slice()
	return v, err
}

// field returns a flat RESP2 map's value.
func tlField(m any, name string) any {
	l, _ := m.([]any)
	for i := 0; i+1 < len(l); i += 2 {
		if l[i] == name {
			return l[i+1]
		}
	}
	return nil
}

// TestTimelineCommand: a forced failover appears in SENTINEL TIMELINE with
// its phases, survives a restart of the sentinel (the file next to
// sentinel.conf), and a corrupt file is ignored.
func TestTimelineCommand(t *testing.T) {
	mport := redisServer(t)
	rport := redisServer(t, "--replicaof", "127.0.0.1", strconv.Itoa(mport))
	dir := t.TempDir()
	path := filepath.Join(dir, "sentinel.conf")
	port, stop := startSentinelAt(t, path, fmt.Sprintf("sentinel monitor mym 127.0.0.1 %d 1\n"+
		"sentinel down-after-milliseconds mym 1000\nsentinel failover-timeout mym 5000\n", mport))
	if _, err := timeline(t, port, "nope"); err == nil || err.Error() != "ERR No such master with that name" {
		t.Errorf("unknown master: %v", err)
	}
	if v, err := timeline(t, port, "mym"); err != nil || len(v) != 0 {
		t.Fatalf("before any failover: %v, %v", v, err)
	}
	sc := redis.NewSentinelClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port)})
	defer sc.Close()
	ctx := context.Background()
	waitFor(t, 30*time.Second, "replica discovered", func() bool {
		r, err := sc.Replicas(ctx, "mym").Result()
		return err == nil && len(r) == 1
	})
	waitFor(t, 30*time.Second, "forced failover accepted", func() bool { return sc.Failover(ctx, "mym").Err() == nil })
	var rec any
	waitFor(t, 60*time.Second, "failover in the timeline", func() bool {
		v, err := timeline(t, port, "mym")
		if err != nil || len(v) != 1 || tlField(v[0], "result") != "failover-end" {
			return false
		}
		rec = v[0]
		return true
	})
	if got := tlField(rec, "selected-replica"); got != "127.0.0.1:"+strconv.Itoa(rport) {
		t.Errorf("selected-replica %v", got)
	}
	names := map[string]bool{}
	for _, p := range tlField(rec, "phases").([]any) {
		names[tlField(p, "name").(string)] = true
	}
	for _, n := range []string{"try-failover", "elected-leader", "replica-selected", "promoted", "replicas-reconfigured", "switch-master"} {
		if !names[n] {
			t.Errorf("phase %s missing: %v", n, names)
		}
	}
	stop()
	if _, err := os.Stat(path + ".timeline.json"); err != nil {
		t.Fatalf("timeline not persisted: %v", err)
	}
	port, stop = startSentinelAt(t, path, "")
	if v, err := timeline(t, port, "mym"); err != nil || len(v) != 1 || tlField(v[0], "start-ms") != tlField(rec, "start-ms") {
		t.Errorf("after restart: %v, %v", v, err)
	}
	stop()
	if err := os.WriteFile(path+".timeline.json", []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	port, _ = startSentinelAt(t, path, "")
	if v, err := timeline(t, port, "mym"); err != nil || len(v) != 0 {
		t.Errorf("with a corrupt file: %v, %v", v, err)
	}
}
