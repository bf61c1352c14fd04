package benchsave

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vigil-kv/vigil/integration/benchutil"
)

func value(i int) string { return fmt.Sprintf("value-%010d-%s", i, strings.Repeat("x", 32)) }

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
func run(s *benchutil.Server, keys, clients, pipeline int, stop func() bool) result {
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
				p := s.Client.Pipeline()
				for i := 0; i < pipeline; i++ {
					k := r.IntN(keys)
					if r.IntN(2) == 0 {
						p.Get(ctx, benchutil.Key(k))
					} else {
						p.Set(ctx, benchutil.Key(k), value(k), 0)
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

func measure(t *testing.T, s *benchutil.Server, keys, seconds, clients, pipeline int) report {
	var rep report
	end := time.Now().Add(time.Duration(seconds) * time.Second)
	rep.normal = run(s, keys, clients, pipeline, func() bool { return time.Now().After(end) })
	rep.rssBefore = s.RSSKB()
	rep.rssPeak = rep.rssBefore
	var began time.Time
	var finished atomic.Bool
	var mu sync.Mutex
	go func() {
		began = time.Now()
		if err := s.Client.BgSave(context.Background()).Err(); err != nil {
			t.Errorf("%s BGSAVE: %v", s.Name, err)
			finished.Store(true)
			return
		}
		for s.Info("persistence")["rdb_bgsave_in_progress"] != "0" {
			if rss := s.RSSKB(); rss > 0 {
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
	rep.saving = run(s, keys, clients, pipeline, finished.Load)
	if st := s.Info("persistence")["rdb_last_bgsave_status"]; st != "ok" {
		t.Errorf("%s: rdb_last_bgsave_status %q", s.Name, st)
	}
	mu.Lock()
	defer mu.Unlock()
	return rep
}

func TestBenchSave(t *testing.T) {
	benchutil.SkipUnlessEnabled(t, "just bench-save", "the BGSAVE benchmark")
	keys := benchutil.EnvInt("VIGIL_BENCH_KEYS", 1000000)
	seconds := benchutil.EnvInt("VIGIL_BENCH_SECONDS", 5)
	clients := benchutil.EnvInt("VIGIL_BENCH_CLIENTS", 8)
	pipeline := benchutil.EnvInt("VIGIL_BENCH_PIPELINE", 1)
	servers := benchutil.Binaries(t)
	reps := map[string]report{}
	for _, sv := range servers {
		s := benchutil.Start(t, sv.Name, sv.Path, redis.Options{PoolSize: 64})
		t0 := time.Now()
		s.Load(t, keys, value)
		t.Logf("%s: %d keys loaded in %v", sv.Name, keys, time.Since(t0).Round(time.Millisecond))
		reps[sv.Name] = measure(t, s, keys, seconds, clients, pipeline)
		s.Stop()
	}
	fmt.Printf("\nBGSAVE benchmark: %d keys, %d clients, pipeline %d, no-save phase %d s\n", keys, clients, pipeline, seconds)
	for _, sv := range servers {
		r := reps[sv.Name]
		fmt.Printf("%-6s normal : %s\n", sv.Name, r.normal)
		fmt.Printf("%-6s BGSAVE : %s\n", sv.Name, r.saving)
		fmt.Printf("%-6s BGSAVE took %v; throughput during/normal %.2f; parent RSS %d -> %d kB (+%d kB)\n", sv.Name,
			r.bgsave.Round(time.Millisecond), thr(r.saving)/thr(r.normal), r.rssBefore, r.rssPeak, r.rssPeak-r.rssBefore)
	}
	if r, ok := reps["redis"]; ok {
		v := reps["vigil"]
		fmt.Printf("vigil/redis: BGSAVE duration %.2f, p99 during BGSAVE %.2f, throughput during BGSAVE %.2f\n",
			v.bgsave.Seconds()/r.bgsave.Seconds(), ms(v.saving.p99)/ms(r.saving.p99), thr(v.saving)/thr(r.saving))
	}
}

func thr(r result) float64 { return float64(r.ops) / r.dur.Seconds() }
