package benchrepl

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/vigil-kv/vigil/integration/benchutil"
)

// waitLatencies times n rounds of SET then WAIT 1 1000 (the pair, one
// client) on a master of bin with one replica of rbin (bin when empty) on
// loopback.
func waitLatencies(t *testing.T, name, bin string, n int) []time.Duration {
	rbin := os.Getenv("VIGIL_BENCH_WAIT_REPLICA")
	if rbin == "" {
		rbin = bin
	}
	m := start(t, name, bin)
	defer m.Stop()
	r := start(t, name, rbin)
	defer r.Stop()
	if err := r.Client.Do(ctx, "REPLICAOF", "127.0.0.1", m.Port).Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, name+" replica link", func() bool { return synced(m, r) })
	c := redis.NewClient(&redis.Options{Addr: m.Addr(), Protocol: 2, PoolSize: 1})
	defer c.Close()
	lat := make([]time.Duration, 0, n)
	for i := range n + n/10 {
		t0 := time.Now()
		if err := c.Set(ctx, "wait:key", i, 0).Err(); err != nil {
			t.Fatal(err)
		}
		acked, err := c.Do(ctx, "WAIT", 1, 1000).Int()
		if err != nil || acked != 1 {
			t.Fatalf("%s: WAIT = %d, %v", name, acked, err)
		}
		if i >= n/10 { // the first tenth warms up
			lat = append(lat, time.Since(t0))
		}
	}
	slices.Sort(lat)
	return lat
}

// TestBenchWait is the WAIT latency benchmark (issue 24): one client, SET
// then WAIT 1 1000, VIGIL_BENCH_WAIT_N times (default 2000), master and
// replica of the same server, for vigil-server (this tree), the binary in
// VIGIL_BENCH_BASE when set (a build of the base commit, for before/after)
// and redis-server, VIGIL_BENCH_ROUNDS rounds (default 3) in turn; it
// prints each round's median and p99 of the pair and the median of the
// rounds' vigil/redis ratios.
func TestBenchWait(t *testing.T) {
	benchutil.SkipUnlessEnabled(t, "VIGIL_BENCH=1 go test ./integration/benchrepl -run TestBenchWait", "the WAIT benchmark")
	n := benchutil.EnvInt("VIGIL_BENCH_WAIT_N", 2000)
	rounds := benchutil.EnvInt("VIGIL_BENCH_ROUNDS", 3)
	servers := benchutil.Binaries(t)
	if base := os.Getenv("VIGIL_BENCH_BASE"); base != "" {
		servers = append(servers, benchutil.Binary{Name: "base", Path: base})
	}
	type stat struct{ p50, p99 time.Duration }
	res := map[string][]stat{}
	for round := range rounds {
		for k := range servers {
			sv := servers[(k+round)%len(servers)]
			lat := waitLatencies(t, sv.Name, sv.Path, n)
			s := stat{lat[len(lat)/2], lat[len(lat)*99/100]}
			res[sv.Name] = append(res[sv.Name], s)
			fmt.Printf("round %d %-6s SET+WAIT 1: median %s p99 %s\n", round, sv.Name, ms(s.p50), ms(s.p99))
		}
	}
	ratio := func(a, b string, p func(stat) time.Duration) string {
		if res[a] == nil || res[b] == nil {
			return "-"
		}
		var rs []float64
		for i := range res[a] {
			rs = append(rs, float64(p(res[a][i]))/float64(p(res[b][i])))
		}
		slices.Sort(rs)
		return fmt.Sprintf("%.2f (%.2f-%.2f)", rs[len(rs)/2], rs[0], rs[len(rs)-1])
	}
	p50 := func(s stat) time.Duration { return s.p50 }
	p99 := func(s stat) time.Duration { return s.p99 }
	fmt.Printf("vigil/redis median %s, p99 %s\n", ratio("vigil", "redis", p50), ratio("vigil", "redis", p99))
	fmt.Printf("vigil/base  median %s, p99 %s\n", ratio("vigil", "base", p50), ratio("vigil", "base", p99))
}

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 3, 64) + " ms"
}
