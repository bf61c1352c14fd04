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

// waitLatencies times n rounds of SET then WAIT 1 1000 (one client) on a
// master of bin with one replica of rbin on loopback: the pair's and the
// WAIT's own latencies, sorted.
func waitLatencies(t *testing.T, name, bin, rbin string, n int) (pair, wait []time.Duration) {
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
	// A Redis master streams to a diskless replica only after an ACK that
	// comes once it saw its RDB child exit (up to a second after the
	// link is up, with a Redis replica): wait for the stream first.
	waitFor(t, name+" stream", func() bool {
		return c.Set(ctx, "wait:key", -1, 0).Err() == nil && c.Do(ctx, "WAIT", 1, 100).Val() == int64(1)
	})
	pair = make([]time.Duration, 0, n)
	wait = make([]time.Duration, 0, n)
	for i := range n + n/10 {
		t0 := time.Now()
		if err := c.Set(ctx, "wait:key", i, 0).Err(); err != nil {
			t.Fatal(err)
		}
		t1 := time.Now()
		acked, err := c.Do(ctx, "WAIT", 1, 1000).Int()
		if err != nil || acked != 1 {
			t.Fatalf("%s: round %d: WAIT = %d, %v; master %v; replica %v", name, i, acked, err, m.Info("replication"), r.Info("replication"))
		}
		if i >= n/10 { // the first tenth warms up
			pair = append(pair, time.Since(t0))
			wait = append(wait, time.Since(t1))
		}
	}
	slices.Sort(pair)
	slices.Sort(wait)
	return pair, wait
}

// TestBenchWait is the WAIT latency benchmark (issue 24): one client, SET
// then WAIT 1 1000, VIGIL_BENCH_WAIT_N times (default 2000), on each
// pairing of master and replica: vigil/vigil, vigil/redis, redis/vigil and
// redis/redis (master/replica; vigil-server of this tree, Debian's
// redis-server), so that the slow side shows, plus base/base with the
// binary in VIGIL_BENCH_BASE when set (a build of another commit, for
// before/after). VIGIL_BENCH_ROUNDS rounds (default 3), the order of the
// pairings rotating; it prints each round's median of the WAIT alone, of
// the pair and the pair's p99, then the median (and range) of the rounds'
// ratios of each pairing's pair median to redis/redis's.
func TestBenchWait(t *testing.T) {
	benchutil.SkipUnlessEnabled(t, "VIGIL_BENCH=1 go test ./integration/benchrepl -run TestBenchWait", "the WAIT benchmark")
	n := benchutil.EnvInt("VIGIL_BENCH_WAIT_N", 2000)
	rounds := benchutil.EnvInt("VIGIL_BENCH_ROUNDS", 3)
	bins := map[string]string{}
	for _, b := range benchutil.Binaries(t) {
		bins[b.Name] = b.Path
	}
	type setup struct{ name, master, replica string }
	var setups []setup
	for _, m := range []string{"vigil", "redis"} {
		for _, r := range []string{"vigil", "redis"} {
			if bins[m] != "" && bins[r] != "" {
				setups = append(setups, setup{m + "/" + r, bins[m], bins[r]})
			}
		}
	}
	if base := os.Getenv("VIGIL_BENCH_BASE"); base != "" {
		setups = append(setups, setup{"base/base", base, base})
	}
	type stat struct{ wait, p50, p99 time.Duration }
	res := map[string][]stat{}
	for round := range rounds {
		for k := range setups {
			sv := setups[(k+round)%len(setups)]
			pair, wait := waitLatencies(t, sv.name, sv.master, sv.replica, n)
			s := stat{wait[len(wait)/2], pair[len(pair)/2], pair[len(pair)*99/100]}
			res[sv.name] = append(res[sv.name], s)
			fmt.Printf("round %d %-11s WAIT median %s; SET+WAIT median %s p99 %s\n", round, sv.name, ms(s.wait), ms(s.p50), ms(s.p99))
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
	for _, sv := range setups {
		fmt.Printf("%-11s / redis/redis: SET+WAIT median %s, p99 %s (target for vigil/vigil: median <= 1)\n",
			sv.name, ratio(sv.name, "redis/redis", p50), ratio(sv.name, "redis/redis", p99))
	}
}

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 3, 64) + " ms"
}
