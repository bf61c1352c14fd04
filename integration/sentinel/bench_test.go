package sentinel

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/vigil-kv/vigil/integration"
)

// Spec 7: failover time of the sentinel under test against redis-sentinel,
// in the same run, alternating which goes first. One run: a master, two
// replicas, three sentinels of one kind (down-after-milliseconds 1000), a
// go-redis FailoverClient writing every 10 ms; SIGKILL of the master; the
// unavailability is the time from the SIGKILL to the completion of the first
// successful write that started after the master had exited. The data
// servers are the suite's, or for the redis-sentinel runs the ones
// VIGIL_BENCH_REF_DATA_SERVER_BIN names (`just bench-failover-stacks`). Only
// with VIGIL_BENCH=1 (`just bench-failover`); nothing is asserted on the
// numbers.
var _ = Describe("Failover time benchmark", Ordered, ContinueOnFailure, Label("bench", "interop", "failover", "slow"), func() {
	// data is the data server the kind's runs fail over: the suite's,
	// or for redis-sentinel the one BenchRefDataEnv names.
	type kind struct {
		name string
		bin  func() string
		data func() string
	}
	kinds := []kind{
		{"sentinel under test", func() string { return SentinelBin }, func() string { return DataBin }},
		{"redis-sentinel", func() string { return RedisSentinelBin }, func() string {
			if b := os.Getenv(BenchRefDataEnv); b != "" {
				return b
			}
			return DataBin
		}},
	}
	type sample struct{ down, switched time.Duration }
	results := map[string][]sample{}

	BeforeEach(func() {
		if os.Getenv(BenchEnv) != "1" {
			Skip("failover benchmark: set " + BenchEnv + "=1 (just bench-failover)")
		}
		RequireSentinel()
		RequireRedisSentinel()
		if b := os.Getenv(BenchRefDataEnv); b != "" {
			_, err := os.Stat(b)
			Expect(err).NotTo(HaveOccurred(), BenchRefDataEnv)
		}
	})

	runs := 5
	if n, err := strconv.Atoi(os.Getenv(BenchRunsEnv)); err == nil && n > 0 {
		runs = n
	}
	for i := 1; i <= runs; i++ {
		order := kinds
		if i%2 == 0 {
			order = []kind{kinds[1], kinds[0]}
		}
		for _, k := range order {
			It(fmt.Sprintf("run %d: %s", i, k.name), func() {
				// The specs of this container run one after the other:
				// the data server binary is switched for this run only.
				integration.ServerBin = k.data()
				DeferCleanup(func() { integration.ServerBin = DataBin })
				down, switched := measureFailover(k.bin())
				results[k.name] = append(results[k.name], sample{down, switched})
				AddReportEntry(fmt.Sprintf("%s (%s over %s) run %d", k.name, KindOf(k.bin()), filepath.Base(k.data()), i),
					fmt.Sprintf("unavailable %v (first +switch-master after %v)", down.Round(time.Millisecond), switched.Round(time.Millisecond)))
			})
		}
	}

	It("reports the medians", func() {
		med := map[string]sample{}
		var b strings.Builder
		fmt.Fprintf(&b, "down-after-milliseconds %d, failover-timeout %d, %d runs each\n", benchDownAfter, FailoverTimeout, runs)
		for _, k := range kinds {
			s := results[k.name]
			if len(s) == 0 {
				Fail(fmt.Sprintf("no successful run for %s", k.name))
			}
			var downs, switches []time.Duration
			for _, x := range s {
				downs = append(downs, x.down)
				switches = append(switches, x.switched)
			}
			med[k.name] = sample{median(downs), median(switches)}
			fmt.Fprintf(&b, "%-20s %-15s over %-13s median unavailability %v (runs: %v), median time to +switch-master %v\n",
				k.name, KindOf(k.bin()), filepath.Base(k.data()), med[k.name].down.Round(time.Millisecond), rounded(downs), med[k.name].switched.Round(time.Millisecond))
		}
		a, r := med[kinds[0].name].down, med[kinds[1].name].down
		fmt.Fprintf(&b, "ratio under-test/redis: %.2f", float64(a)/float64(r))
		AddReportEntry("failover benchmark", b.String(), ReportEntryVisibilityAlways)
	})
})

// benchDownAfter is the benchmark's down-after-milliseconds: 1 s, as the
// README's failover figures were measured (the specs use DownAfter, 2 s, so
// that a new master slow to answer its first PING on a loaded machine is not
// failed over again).
const benchDownAfter = 1000

// measureFailover runs one failover and returns the client-seen
// unavailability and the time until the first sentinel published
// +switch-master, both from the SIGKILL.
func measureFailover(bin string) (down, switched time.Duration) {
	GinkgoHelper()
	c := StartData(2)
	c.AddUntunedSentinels(2, Times(3, bin)...)
	for _, s := range c.Sentinels {
		Expect(s.do("SENTINEL", "SET", MasterName, "down-after-milliseconds", strconv.Itoa(benchDownAfter))).To(Equal("OK"))
	}
	c.WaitDiscovery()
	ev := Watch(c.Sentinels...)
	w := StartWriter(c.SentinelAddrs())
	w.WaitWriting(20, FailoverWait)

	t0 := time.Now()
	c.Master.Kill() // returns once the process has exited
	mark := w.Mark()
	var ok time.Time
	Eventually(func() bool {
		var found bool
		ok, found = w.FirstOKAfter(mark)
		return found
	}).WithTimeout(FailoverWait).WithPolling(10*time.Millisecond).Should(BeTrue(),
		func() string { return fmt.Sprintf("no write succeeded (last error: %v)\n%s", w.LastErr(), ev) })
	c.WaitNewMaster()
	fmt.Fprintf(GinkgoWriter, "SIGKILL at %s; events:\n%s", t0.Format("15:04:05.000"), ev)
	for _, e := range ev.All() {
		if e.Channel == "+switch-master" {
			switched = e.At.Sub(t0)
			break
		}
	}
	return ok.Sub(t0), switched
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func rounded(ds []time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d.Round(time.Millisecond)
	}
	return out
}
