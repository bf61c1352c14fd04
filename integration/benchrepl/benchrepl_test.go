package benchrepl

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vigil-kv/vigil/integration/benchutil"
)

var ctx = context.Background()

// synced reports whether r's link to m is up and r applied all m streamed.
func synced(m, r *benchutil.Server) bool {
	ri := r.Info("replication")
	return ri["master_link_status"] == "up" && ri["slave_repl_offset"] == m.Info("replication")["master_repl_offset"]
}

// start runs a server for this benchmark: diskless sync without delay, a
// client that waits up to a minute for a reply (a loaded server's full sync).
func start(t *testing.T, name, bin string, args ...string) *benchutil.Server {
	t.Helper()
	return benchutil.Start(t, name, bin, redis.Options{ReadTimeout: time.Minute},
		append([]string{"--repl-diskless-sync-delay", "0"}, args...)...)
}

// waitFor polls cond for up to 30 minutes (a full sync of many keys).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	benchutil.WaitFor(t, what, 30*time.Minute, cond)
}

// fullSync times a fresh replica's full sync of a master holding keys keys.
func fullSync(t *testing.T, name, bin string, keys int) time.Duration {
	m := start(t, name, bin)
	defer m.Stop()
	m.Load(t, keys, benchutil.ConstValue(32))
	r := start(t, name, bin)
	defer r.Stop()
	t0 := time.Now()
	if err := r.Client.Do(ctx, "REPLICAOF", "127.0.0.1", m.Port).Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, name+" full sync", func() bool {
		return synced(m, r) && r.Client.DBSize(ctx).Val() == int64(keys)
	})
	return time.Since(t0)
}

// setThroughput runs redis-benchmark SET -P 16 against s and returns the
// requests per second.
func setThroughput(t *testing.T, bench string, s *benchutil.Server, requests, clients, keys int) float64 {
	out, err := exec.Command(bench, "-p", strconv.Itoa(s.Port), "-t", "set", "-P", "16", "-n", strconv.Itoa(requests),
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

// cpu is the CPU time (user+system, /proc/<pid>/stat) per request of the
// master alone and with two replicas, and of each replica per command it
// applied: unlike the throughput ratio it does not depend on whether the
// replicas share the master's cores.
type cpu struct {
	masterAlone, masterRepl time.Duration
	replica                 time.Duration // the mean of the two replicas
}

type report struct {
	fullSync          time.Duration
	setAlone, setRepl float64
	lag               lag
	cpu               cpu
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
// attached while sampling their lag, and the CPU time the master and the
// replicas spent per request.
func throughputAndLag(t *testing.T, name, bin, bench string, requests, clients, keys int) (float64, float64, lag, cpu) {
	m := start(t, name, bin)
	defer m.Stop()
	var pc cpu
	c0 := m.CPUTime()
	alone := setThroughput(t, bench, m, requests, clients, keys)
	pc.masterAlone = (m.CPUTime() - c0) / time.Duration(requests)
	var rs []*benchutil.Server
	for i := 0; i < 2; i++ {
		r := start(t, name, bin, "--replicaof", "127.0.0.1", strconv.Itoa(m.Port))
		defer r.Stop()
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
		sc := redis.NewClient(&redis.Options{Addr: m.Addr(), Protocol: 2})
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
			f := benchutil.ParseInfo(info)
			off, _ := strconv.ParseInt(f["master_repl_offset"], 10, 64)
			for _, ro := range replicaOffsets(f) {
				d := max(off-ro, 0)
				lg.maxBytes = max(lg.maxBytes, d)
				sum += d
				samples++
			}
		}
	}()
	// The CPU from the start of the load until the replicas caught up:
	// all the master spent streaming it and all they spent applying it.
	m0, r0 := m.CPUTime(), rs[0].CPUTime()+rs[1].CPUTime()
	withRepl := setThroughput(t, bench, m, requests, clients, keys)
	t0 := time.Now()
	for _, r := range rs {
		waitFor(t, name+" replicas catch up", func() bool { return synced(m, r) })
	}
	lg.catchUp = time.Since(t0)
	pc.masterRepl = (m.CPUTime() - m0) / time.Duration(requests)
	pc.replica = (rs[0].CPUTime() + rs[1].CPUTime() - r0) / time.Duration(2*requests)
	close(stop)
	wg.Wait()
	if samples > 0 {
		lg.meanBytes = sum / samples
	}
	return alone, withRepl, lg, pc
}

func TestBenchRepl(t *testing.T) {
	benchutil.SkipUnlessEnabled(t, "just bench-repl", "the replication benchmark")
	keys := benchutil.EnvInt("VIGIL_BENCH_KEYS", 1000000)
	requests := benchutil.EnvInt("VIGIL_BENCH_REQUESTS", 2000000)
	clients := benchutil.EnvInt("VIGIL_BENCH_CLIENTS", 50)
	servers := benchutil.Binaries(t)
	bench, err := exec.LookPath("redis-benchmark")
	if err != nil {
		t.Log("redis-benchmark not installed (apt-get install -y redis-server redis-sentinel redis-tools): full sync only")
	}
	reps := map[string]*report{}
	for _, sv := range servers {
		rep := &report{}
		reps[sv.Name] = rep
		rep.fullSync = fullSync(t, sv.Name, sv.Path, keys)
		t.Logf("%s: full sync of %d keys in %v", sv.Name, keys, rep.fullSync.Round(time.Millisecond))
		if bench != "" {
			rep.setAlone, rep.setRepl, rep.lag, rep.cpu = throughputAndLag(t, sv.Name, sv.Path, bench, requests, clients, keys)
		}
	}
	fmt.Printf("\nReplication benchmark: full sync of %d keys; SET -P 16, %d requests, %d clients, %d random keys\n",
		keys, requests, clients, keys)
	for _, sv := range servers {
		r := reps[sv.Name]
		fmt.Printf("%-6s full sync %v\n", sv.Name, r.fullSync.Round(time.Millisecond))
		if bench != "" {
			fmt.Printf("%-6s SET -P 16: %.0f req/s alone, %.0f req/s with 2 replicas (ratio %.2f, target >= 0.9)\n",
				sv.Name, r.setAlone, r.setRepl, r.setRepl/r.setAlone)
			fmt.Printf("%-6s master CPU per request: %s alone, %s with 2 replicas (ratio %.2f: the throughput ratio on a machine where the replicas have their own cores)\n",
				sv.Name, us(r.cpu.masterAlone), us(r.cpu.masterRepl), float64(r.cpu.masterAlone)/float64(r.cpu.masterRepl))
			fmt.Printf("%-6s replica CPU per applied command: %s (mean of 2)\n", sv.Name, us(r.cpu.replica))
			fmt.Printf("%-6s replica lag under load: max %d bytes, mean %d bytes; caught up %v after the load\n",
				sv.Name, r.lag.maxBytes, r.lag.meanBytes, r.lag.catchUp.Round(time.Millisecond))
		}
	}
	if v, r := reps["vigil"], reps["redis"]; v != nil && r != nil {
		fmt.Printf("vigil/redis full sync time %.2f (target <= 1)\n", v.fullSync.Seconds()/r.fullSync.Seconds())
		if bench != "" {
			fmt.Printf("vigil/redis SET throughput: alone %.2f, with 2 replicas %.2f\n", v.setAlone/r.setAlone, v.setRepl/r.setRepl)
			fmt.Printf("vigil/redis CPU per request: master alone %.2f, master with 2 replicas %.2f, replica per applied command %.2f\n",
				float64(v.cpu.masterAlone)/float64(r.cpu.masterAlone), float64(v.cpu.masterRepl)/float64(r.cpu.masterRepl),
				float64(v.cpu.replica)/float64(r.cpu.replica))
		}
	}
}

// us formats a per-request CPU time in microseconds.
func us(d time.Duration) string { return fmt.Sprintf("%.2f us", float64(d)/float64(time.Microsecond)) }
