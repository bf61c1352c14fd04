package benchrepl

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

var ctx = context.Background()

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

type server struct {
	port int
	cmd  *exec.Cmd
	c    *redis.Client
}

func start(t *testing.T, name, bin string, args ...string) *server {
	t.Helper()
	dir := t.TempDir()
	port := freePort(t)
	all := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", dir, "--logfile", filepath.Join(dir, "server.log"), "--repl-diskless-sync-delay", "0"}, args...)
	cmd := exec.Command(bin, all...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port), Protocol: 2, ReadTimeout: time.Minute})
	t.Cleanup(func() { c.Close() })
	deadline := time.Now().Add(30 * time.Second)
	for c.Ping(ctx).Err() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not start", name)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return &server{port: port, cmd: cmd, c: c}
}

func (s *server) stop() { s.cmd.Process.Kill(); s.cmd.Wait() }

func (s *server) load(t *testing.T, keys int) {
	val := strings.Repeat("x", 32)
	for i := 0; i < keys; {
		args := []any{"MSET"}
		for j := 0; j < 1000 && i < keys; j, i = j+1, i+1 {
			args = append(args, "key:"+strconv.Itoa(i), val)
		}
		if err := s.c.Do(ctx, args...).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

func (s *server) info(section string) map[string]string {
	m := map[string]string{}
	info, _ := s.c.Info(ctx, section).Result()
	for _, l := range strings.Split(info, "\r\n") {
		if k, v, ok := strings.Cut(l, ":"); ok {
			m[k] = v
		}
	}
	return m
}

// synced reports whether r's link to m is up and r applied all m streamed.
func synced(m, r *server) bool {
	ri := r.info("replication")
	return ri["master_link_status"] == "up" && ri["slave_repl_offset"] == m.info("replication")["master_repl_offset"]
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// fullSync times a fresh replica's full sync of a master holding keys keys.
func fullSync(t *testing.T, name, bin string, keys int) time.Duration {
	m := start(t, name, bin)
	defer m.stop()
	m.load(t, keys)
	r := start(t, name, bin)
	defer r.stop()
	t0 := time.Now()
	if err := r.c.Do(ctx, "REPLICAOF", "127.0.0.1", m.port).Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, name+" full sync", func() bool {
		return synced(m, r) && r.c.DBSize(ctx).Val() == int64(keys)
	})
	return time.Since(t0)
}

// setThroughput runs redis-benchmark SET -P 16 against s and returns the
// requests per second.
func setThroughput(t *testing.T, bench string, s *server, requests, clients, keys int) float64 {
	out, err := exec.Command(bench, "-p", strconv.Itoa(s.port), "-t", "set", "-P", "16", "-n", strconv.Itoa(requests),
		"-c", strconv.Itoa(clients), "-r", strconv.Itoa(keys), "-d", "32", "--csv").CombinedOutput()
	if err != nil {
		t.Fatalf("redis-benchmark: %v\n%s", err, out)
	}
	// "test","rps",...: the SET line.
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Split(l, ",")
		if len(f) >= 2 && strings.Trim(f[0], `"`) == "SET" {
			rps, err := strconv.ParseFloat(strings.Trim(f[1], `"`), 64)
			if err == nil {
				return rps
			}
		}
	}
	t.Fatalf("no SET line in redis-benchmark's output:\n%s", out)
	return 0
}

type lag struct {
	maxBytes, meanBytes int64
	catchUp             time.Duration
}

type report struct {
	fullSync          time.Duration
	setAlone, setRepl float64
	lag               lag
}

// replicaOffsets are the slaveN offset= fields of the master's INFO.
func replicaOffsets(info map[string]string) []int64 {
	var offs []int64
	for k, v := range info {
		if !strings.HasPrefix(k, "slave") || !strings.Contains(v, "offset=") {
			continue
		}
		for _, f := range strings.Split(v, ",") {
			if o, ok := strings.CutPrefix(f, "offset="); ok {
				n, _ := strconv.ParseInt(o, 10, 64)
				offs = append(offs, n)
			}
		}
	}
	return offs
}

// throughputAndLag measures SET throughput alone, then with two replicas
// attached while sampling their lag.
func throughputAndLag(t *testing.T, name, bin, bench string, requests, clients, keys int) (float64, float64, lag) {
	m := start(t, name, bin)
	defer m.stop()
	alone := setThroughput(t, bench, m, requests, clients, keys)
	var rs []*server
	for i := 0; i < 2; i++ {
		r := start(t, name, bin, "--replicaof", "127.0.0.1", strconv.Itoa(m.port))
		defer r.stop()
		rs = append(rs, r)
	}
	for _, r := range rs {
		waitFor(t, name+" replica sync", func() bool { return synced(m, r) })
	}
	var lg lag
	var samples, sum int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		sc := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(m.port), Protocol: 2})
		defer sc.Close()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			info, err := sc.Info(ctx, "replication").Result()
			if err != nil {
				continue
			}
			f := map[string]string{}
			for _, l := range strings.Split(info, "\r\n") {
				if k, v, ok := strings.Cut(l, ":"); ok {
					f[k] = v
				}
			}
			off, _ := strconv.ParseInt(f["master_repl_offset"], 10, 64)
			for _, ro := range replicaOffsets(f) {
				d := max(off-ro, 0)
				lg.maxBytes = max(lg.maxBytes, d)
				sum += d
				samples++
			}
		}
	}()
	withRepl := setThroughput(t, bench, m, requests, clients, keys)
	t0 := time.Now()
	for _, r := range rs {
		waitFor(t, name+" replicas catch up", func() bool { return synced(m, r) })
	}
	lg.catchUp = time.Since(t0)
	close(stop)
	wg.Wait()
	if samples > 0 {
		lg.meanBytes = sum / samples
	}
	return alone, withRepl, lg
}

func TestBenchRepl(t *testing.T) {
	if os.Getenv("VIGIL_BENCH") != "1" {
		t.Skip("set VIGIL_BENCH=1 (just bench-repl) to run the replication benchmark")
	}
	keys := envInt("VIGIL_BENCH_KEYS", 1000000)
	requests := envInt("VIGIL_BENCH_REQUESTS", 2000000)
	clients := envInt("VIGIL_BENCH_CLIENTS", 50)
	root, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatal(err)
	}
	vbin := filepath.Join(t.TempDir(), "vigil-server")
	build := exec.Command("go", "build", "-o", vbin, "./cmd/vigil-server")
	build.Dir = filepath.Dir(strings.TrimSpace(string(root)))
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	servers := []struct{ name, bin string }{{"vigil", vbin}}
	if rbin, err := exec.LookPath("redis-server"); err == nil {
		servers = append(servers, struct{ name, bin string }{"redis", rbin})
	} else {
		t.Log("redis-server not installed (apt-get install -y redis-server redis-sentinel redis-tools): vigil only")
	}
	bench, err := exec.LookPath("redis-benchmark")
	if err != nil {
		t.Log("redis-benchmark not installed (apt-get install -y redis-server redis-sentinel redis-tools): full sync only")
	}
	reps := map[string]*report{}
	for _, sv := range servers {
		rep := &report{}
		reps[sv.name] = rep
		rep.fullSync = fullSync(t, sv.name, sv.bin, keys)
		t.Logf("%s: full sync of %d keys in %v", sv.name, keys, rep.fullSync.Round(time.Millisecond))
		if bench != "" {
			rep.setAlone, rep.setRepl, rep.lag = throughputAndLag(t, sv.name, sv.bin, bench, requests, clients, keys)
		}
	}
	fmt.Printf("\nReplication benchmark: full sync of %d keys; SET -P 16, %d requests, %d clients, %d random keys\n",
		keys, requests, clients, keys)
	for _, sv := range servers {
		r := reps[sv.name]
		fmt.Printf("%-6s full sync %v\n", sv.name, r.fullSync.Round(time.Millisecond))
		if bench != "" {
			fmt.Printf("%-6s SET -P 16: %.0f req/s alone, %.0f req/s with 2 replicas (ratio %.2f, target >= 0.9)\n",
				sv.name, r.setAlone, r.setRepl, r.setRepl/r.setAlone)
			fmt.Printf("%-6s replica lag under load: max %d bytes, mean %d bytes; caught up %v after the load\n",
				sv.name, r.lag.maxBytes, r.lag.meanBytes, r.lag.catchUp.Round(time.Millisecond))
		}
	}
	if v, r := reps["vigil"], reps["redis"]; v != nil && r != nil {
		fmt.Printf("vigil/redis full sync time %.2f (target <= 1)\n", v.fullSync.Seconds()/r.fullSync.Seconds())
		if bench != "" {
			fmt.Printf("vigil/redis SET throughput: alone %.2f, with 2 replicas %.2f\n", v.setAlone/r.setAlone, v.setRepl/r.setRepl)
		}
	}
}
