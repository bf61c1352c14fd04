package benchscale

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vigil-kv/vigil/integration/benchutil"
)

// kind is one value type: how to fill a key with element i and how to
// write pair i of a round without changing the key's size (a stream's
// pair is a write and a read: XADD with MAXLEN, XRANGE).
type kind struct {
	name string
	// fill is the command that adds element i of n (a string gets n
	// bytes in appends of 1 k).
	fill func(i, n int) []string
	// fills is how many fill commands make n elements.
	fills func(n int) int
	// pair is the two commands of step i for a key of n elements, whose
	// elements are lo..lo+n-1 before the step.
	pair func(rng *rand.Rand, lo, n int) [2][]string
	// size is the command that reads the key's size.
	size string
}

const key = "big"

func elem(i int) string { return "element:" + strconv.Itoa(i) }

var kinds = []kind{
	{
		name:  "string",
		fill:  func(i, n int) []string { return []string{"APPEND", key, strings.Repeat("x", min(1024, n-i*1024))} },
		fills: func(n int) int { return (n + 1023) / 1024 },
		pair: func(rng *rand.Rand, _, n int) [2][]string {
			return [2][]string{{"SETRANGE", key, strconv.Itoa(rng.IntN(max(1, n-8))), "abcdefgh"}, {"STRLEN", key}}
		},
		size: "STRLEN",
	},
	{
		name:  "list",
		fill:  func(i, _ int) []string { return []string{"RPUSH", key, elem(i)} },
		fills: func(n int) int { return n },
		pair: func(_ *rand.Rand, lo, n int) [2][]string {
			return [2][]string{{"RPUSH", key, elem(lo + n)}, {"LPOP", key}}
		},
		size: "LLEN",
	},
	{
		name:  "hash",
		fill:  func(i, _ int) []string { return []string{"HSET", key, elem(i), "value:" + strconv.Itoa(i)} },
		fills: func(n int) int { return n },
		pair: func(_ *rand.Rand, lo, n int) [2][]string {
			return [2][]string{{"HSET", key, elem(lo + n), "value"}, {"HDEL", key, elem(lo)}}
		},
		size: "HLEN",
	},
	{
		name:  "set",
		fill:  func(i, _ int) []string { return []string{"SADD", key, elem(i)} },
		fills: func(n int) int { return n },
		pair: func(_ *rand.Rand, lo, n int) [2][]string {
			return [2][]string{{"SADD", key, elem(lo + n)}, {"SREM", key, elem(lo)}}
		},
		size: "SCARD",
	},
	{
		name:  "zset",
		fill:  func(i, _ int) []string { return []string{"ZADD", key, strconv.Itoa(i * 7919 % 1000003), elem(i)} },
		fills: func(n int) int { return n },
		pair: func(rng *rand.Rand, lo, n int) [2][]string {
			return [2][]string{{"ZADD", key, strconv.Itoa(rng.IntN(1000003)), elem(lo + n)}, {"ZREM", key, elem(lo)}}
		},
		size: "ZCARD",
	},
	{
		// One stream of n entries with IDs 1-1 .. n-1: each step appends
		// entry lo+n+1 with an exact MAXLEN n (which removes the oldest
		// one, entry lo+1) and reads 10 entries from a random ID on
		// (XRANGE is O(log N + M)).
		name: "stream",
		fill: func(i, _ int) []string {
			return []string{"XADD", key, strconv.Itoa(i+1) + "-1", "field", "value:" + strconv.Itoa(i)}
		},
		fills: func(n int) int { return n },
		pair: func(rng *rand.Rand, lo, n int) [2][]string {
			from := strconv.Itoa(lo+2+rng.IntN(n)) + "-0"
			return [2][]string{
				{"XADD", key, "MAXLEN", strconv.Itoa(n), strconv.Itoa(lo+n+1) + "-1", "field", "value"},
				{"XRANGE", key, from, "+", "COUNT", "10"},
			}
		},
		size: "XLEN",
	},
}

func writeCmd(w *bufio.Writer, args []string) {
	fmt.Fprintf(w, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(w, "$%d\r\n%s\r\n", len(a), a)
	}
}

// stream writes the commands gen(0..count-1) to a new file in dir.
func stream(t *testing.T, dir, name string, count int, gen func(i int, w *bufio.Writer)) string {
	t.Helper()
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	for i := 0; i < count; i++ {
		gen(i, w)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// pipe feeds the file at path to the server through redis-cli --pipe and
// returns the wall time; any error reply fails t.
func pipe(t *testing.T, s *benchutil.Server, path string) time.Duration {
	t.Helper()
	in, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	cmd := exec.Command("redis-cli", "-p", strconv.Itoa(s.Port), "--pipe")
	cmd.Stdin = in
	start := time.Now()
	out, err := cmd.CombinedOutput()
	d := time.Since(start)
	if err != nil || !strings.Contains(string(out), "errors: 0,") {
		t.Fatalf("%s: redis-cli --pipe: %v\n%s", s.Name, err, out)
	}
	return d
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func TestBenchScale(t *testing.T) {
	benchutil.SkipUnlessEnabled(t, "just bench-scale", "the scaling benchmark")
	if _, err := exec.LookPath("redis-cli"); err != nil {
		t.Skip("redis-cli not installed: apt-get install -y redis-tools")
	}
	var sizes []int
	for _, f := range strings.Split(os.Getenv("VIGIL_BENCH_SIZES"), ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && n > 0 {
			sizes = append(sizes, n)
		}
	}
	if len(sizes) == 0 {
		sizes = []int{100, 1_000, 100_000, 1_000_000}
	}
	types := os.Getenv("VIGIL_BENCH_TYPES")
	pairs := benchutil.EnvInt("VIGIL_BENCH_PAIRS", 100_000)
	rounds := benchutil.EnvInt("VIGIL_BENCH_ROUNDS", 3)

	var bins []benchutil.Binary
	if p := os.Getenv("VIGIL_SERVER_BIN"); p != "" {
		bins = []benchutil.Binary{{Name: "vigil", Path: p}}
		if r, err := exec.LookPath("redis-server"); err == nil {
			bins = append(bins, benchutil.Binary{Name: "redis", Path: r})
		}
	} else {
		bins = benchutil.Binaries(t)
	}
	if len(bins) < 2 {
		t.Skip("redis-server not installed (apt-get install -y redis-server): nothing to compare with")
	}
	bins = bins[:2]
	if p := os.Getenv("VIGIL_BENCH_BASE_BIN"); p != "" {
		// A second vigil-server (e.g. main's) in the same run: a change's
		// before and after, side by side with redis-server.
		bins = append(bins, benchutil.Binary{Name: "base", Path: p})
	}
	ctx := context.Background()
	dir := t.TempDir()
	var report strings.Builder
	fmt.Fprintf(&report, "\n%d write pairs per round, %d rounds; times are redis-cli --pipe wall times, medians\n", pairs, rounds)
	fmt.Fprintf(&report, "%-7s %9s | %10s %10s %6s | %12s %12s %6s %s\n", "type", "size",
		"fill redis", "fill vigil", "ratio", "write redis", "write vigil", "ratio", "rounds")
	if len(bins) > 2 {
		fmt.Fprintf(&report, "(each line is followed by the base binary's: its write time and ratio redis / base)\n")
	}
	worst := 0.0
	for _, k := range kinds {
		if types != "" && !slices.Contains(strings.Split(types, ","), k.name) {
			continue
		}
		for _, n := range sizes {
			servers := make([]*benchutil.Server, len(bins))
			for i, b := range bins {
				servers[i] = benchutil.Start(t, b.Name, b.Path, redis.Options{})
			}
			fill := stream(t, dir, "fill", k.fills(n), func(i int, w *bufio.Writer) { writeCmd(w, k.fill(i, n)) })
			fillTimes := make([]time.Duration, len(servers))
			for i, s := range servers {
				fillTimes[i] = pipe(t, s, fill)
				if got, err := s.Client.Do(ctx, k.size, key).Int(); err != nil || got != n {
					t.Fatalf("%s: %s after the fill: %d, %v (want %d)", s.Name, k.size, got, err, n)
				}
			}
			times := make([][]float64, len(servers))
			var ratios, baseRatios []float64
			for r := 0; r < rounds; r++ {
				rng := rand.New(rand.NewPCG(uint64(r), uint64(n)))
				lo := r * pairs
				f := stream(t, dir, "round", pairs, func(i int, w *bufio.Writer) {
					p := k.pair(rng, lo+i, n)
					writeCmd(w, p[0])
					writeCmd(w, p[1])
				})
				d := make([]time.Duration, len(servers))
				for j := range servers {
					i := (j + r) % len(servers) // take turns going first
					d[i] = pipe(t, servers[i], f)
				}
				for i := range d {
					times[i] = append(times[i], d[i].Seconds())
				}
				// servers[0] is vigil, servers[1] redis: redis time / vigil time.
				ratios = append(ratios, d[1].Seconds()/d[0].Seconds())
				if len(d) > 2 {
					baseRatios = append(baseRatios, d[1].Seconds()/d[2].Seconds())
				}
			}
			for _, s := range servers {
				if got, err := s.Client.Do(ctx, k.size, key).Int(); err != nil || got != n {
					t.Fatalf("%s: %s after the rounds: %d, %v (want %d)", s.Name, k.size, got, err, n)
				}
				s.Stop()
			}
			ratio := median(ratios)
			if worst == 0 || ratio < worst {
				worst = ratio
			}
			var rs []string
			for _, x := range ratios {
				rs = append(rs, fmt.Sprintf("%.2f", x))
			}
			fmt.Fprintf(&report, "%-7s %9d | %9.2fs %9.2fs %6.2f | %11.3fs %11.3fs %6.2f %s\n", k.name, n,
				fillTimes[1].Seconds(), fillTimes[0].Seconds(), fillTimes[1].Seconds()/fillTimes[0].Seconds(),
				median(times[1]), median(times[0]), ratio, strings.Join(rs, " "))
			if len(servers) > 2 {
				var bs []string
				for _, x := range baseRatios {
					bs = append(bs, fmt.Sprintf("%.2f", x))
				}
				fmt.Fprintf(&report, "%-7s %9s | %10s %9.2fs %6.2f | %12s %11.3fs %6.2f %s\n", "  base", "",
					"", fillTimes[2].Seconds(), fillTimes[1].Seconds()/fillTimes[2].Seconds(),
					"", median(times[2]), median(baseRatios), strings.Join(bs, " "))
			}
		}
	}
	fmt.Fprintf(&report, "ratios are redis time / vigil time (above 1: vigil-server faster); lowest write ratio %.2f\n", worst)
	t.Log(report.String())
}
