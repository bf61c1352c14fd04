package benchsave

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

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
	name string
	cmd  *exec.Cmd
	c    *redis.Client
	opts *redis.Options
}

func start(t *testing.T, name, bin string) *server {
	t.Helper()
	dir := t.TempDir()
	port := freePort(t)
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", dir, "--logfile", filepath.Join(dir, "server.log"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	opts := &redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port), Protocol: 2, PoolSize: 64}
	c := redis.NewClient(opts)
	t.Cleanup(func() { c.Close() })
	deadline := time.Now().Add(30 * time.Second)
	for c.Ping(context.Background()).Err() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not start", name)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return &server{name: name, cmd: cmd, c: c, opts: opts}
}

func value(i int) string { return fmt.Sprintf("value-%010d-%s", i, strings.Repeat("x", 32)) }

func (s *server) load(t *testing.T, keys int) {
	ctx := context.Background()
	for i := 0; i < keys; i += 1000 {
		p := s.c.Pipeline()
		for j := i; j < min(i+1000, keys); j++ {
			p.Set(ctx, "key:"+strconv.Itoa(j), value(j), 0)
		}
		if _, err := p.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

func (s *server) info(field string) string {
	info, _ := s.c.Info(context.Background(), "persistence").Result()
	for _, l := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			return v
		}
	}
	return ""
}

// rssKB is VmRSS of the server process (the parent: Redis's fork child
// is not counted).
func (s *server) rssKB() int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

type result struct {
	ops      int64
	dur      time.Duration
	p50, p99 time.Duration
	max      time.Duration
}

func (r result) String() string {
	return fmt.Sprintf("%9.0f ops/s  p50 %7.3f ms  p99 %7.3f ms  max %8.3f ms",
		float64(r.ops)/r.dur.Seconds(), ms(r.p50), ms(r.p99), ms(r.max))
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// run drives clients x pipeline GET/SET (half each) on random keys until
// stop returns true, recording each round trip's latency.
func (s *server) run(keys, clients, pipeline int, stop func() bool) result {
	ctx := context.Background()
	var wg sync.WaitGroup
	var ops atomic.Int64
	lats := make([][]time.Duration, clients)
	var done atomic.Bool
	begin := time.Now()
	for w := 0; w < clients; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for !done.Load() {
				t0 := time.Now()
				p := s.c.Pipeline()
				for i := 0; i < pipeline; i++ {
					k := r.IntN(keys)
					if r.IntN(2) == 0 {
						p.Get(ctx, "key:"+strconv.Itoa(k))
					} else {
						p.Set(ctx, "key:"+strconv.Itoa(k), value(k), 0)
					}
				}
				if _, err := p.Exec(ctx); err != nil && err != redis.Nil {
					return
				}
				lats[w] = append(lats[w], time.Since(t0))
				ops.Add(int64(pipeline))
			}
		}()
	}
	for !stop() {
		time.Sleep(5 * time.Millisecond)
	}
	done.Store(true)
	wg.Wait()
	var all []time.Duration
	for _, l := range lats {
		all = append(all, l...)
	}
	slices.Sort(all)
	res := result{ops: ops.Load(), dur: time.Since(begin)}
	if len(all) > 0 {
		res.p50, res.p99, res.max = all[len(all)/2], all[len(all)*99/100], all[len(all)-1]
	}
	return res
}

type report struct {
	normal, saving result
	bgsave         time.Duration
	rssBefore      int64
	rssPeak        int64
}

func measure(t *testing.T, s *server, keys, seconds, clients, pipeline int) report {
	var rep report
	end := time.Now().Add(time.Duration(seconds) * time.Second)
	rep.normal = s.run(keys, clients, pipeline, func() bool { return time.Now().After(end) })
	rep.rssBefore = s.rssKB()
	rep.rssPeak = rep.rssBefore
	var began time.Time
	var finished atomic.Bool
	var mu sync.Mutex
	go func() {
		began = time.Now()
		if err := s.c.BgSave(context.Background()).Err(); err != nil {
			t.Errorf("%s BGSAVE: %v", s.name, err)
			finished.Store(true)
			return
		}
		for s.info("rdb_bgsave_in_progress") != "0" {
			if rss := s.rssKB(); rss > 0 {
				mu.Lock()
				rep.rssPeak = max(rep.rssPeak, rss)
				mu.Unlock()
			}
			time.Sleep(10 * time.Millisecond)
		}
		mu.Lock()
		rep.bgsave = time.Since(began)
		mu.Unlock()
		finished.Store(true)
	}()
	rep.saving = s.run(keys, clients, pipeline, finished.Load)
	if st := s.info("rdb_last_bgsave_status"); st != "ok" {
		t.Errorf("%s: rdb_last_bgsave_status %q", s.name, st)
	}
	mu.Lock()
	defer mu.Unlock()
	return rep
}

func TestBenchSave(t *testing.T) {
	if os.Getenv("VIGIL_BENCH") != "1" {
		t.Skip("set VIGIL_BENCH=1 (just bench-save) to run the BGSAVE benchmark")
	}
	keys := envInt("VIGIL_BENCH_KEYS", 1000000)
	seconds := envInt("VIGIL_BENCH_SECONDS", 5)
	clients := envInt("VIGIL_BENCH_CLIENTS", 8)
	pipeline := envInt("VIGIL_BENCH_PIPELINE", 1)
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
		t.Log("redis-server not installed (apt-get install -y redis-server redis-tools): vigil only")
	}
	reps := map[string]report{}
	for _, sv := range servers {
		s := start(t, sv.name, sv.bin)
		t0 := time.Now()
		s.load(t, keys)
		t.Logf("%s: %d keys loaded in %v", sv.name, keys, time.Since(t0).Round(time.Millisecond))
		reps[sv.name] = measure(t, s, keys, seconds, clients, pipeline)
		s.cmd.Process.Kill()
	}
	fmt.Printf("\nBGSAVE benchmark: %d keys, %d clients, pipeline %d, no-save phase %d s\n", keys, clients, pipeline, seconds)
	for _, sv := range servers {
		r := reps[sv.name]
		fmt.Printf("%-6s normal : %s\n", sv.name, r.normal)
		fmt.Printf("%-6s BGSAVE : %s\n", sv.name, r.saving)
		fmt.Printf("%-6s BGSAVE took %v; throughput during/normal %.2f; parent RSS %d -> %d kB (+%d kB)\n", sv.name,
			r.bgsave.Round(time.Millisecond), thr(r.saving)/thr(r.normal), r.rssBefore, r.rssPeak, r.rssPeak-r.rssBefore)
	}
	if r, ok := reps["redis"]; ok {
		v := reps["vigil"]
		fmt.Printf("vigil/redis: BGSAVE duration %.2f, p99 during BGSAVE %.2f, throughput during BGSAVE %.2f\n",
			v.bgsave.Seconds()/r.bgsave.Seconds(), ms(v.saving.p99)/ms(r.saving.p99), thr(v.saving)/thr(r.saving))
	}
}

func thr(r result) float64 { return float64(r.ops) / r.dur.Seconds() }
