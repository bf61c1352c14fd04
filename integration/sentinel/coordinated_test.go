package sentinel

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/redis/go-redis/v9"

	"github.com/vigil-kv/vigil/integration"
)

// pushWriter RPUSHes 1, 2, 3, ... through a FailoverClient and records
// which pushes were acknowledged.
type pushWriter struct {
	client *redis.Client
	mu     sync.Mutex
	acked  []int64
	errs   int
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

const pushKey = "coordinated-list"

func startPushWriter(addrs []string) *pushWriter {
	GinkgoHelper()
	w := &pushWriter{client: NewFailoverClient(addrs), done: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	go func() {
		defer GinkgoRecover()
		defer close(w.done)
		for i := int64(1); ctx.Err() == nil; i++ {
			wctx, c := context.WithTimeout(ctx, 2*time.Second)
			err := w.client.RPush(wctx, pushKey, i).Err()
			c()
			w.mu.Lock()
			if err == nil {
				w.acked = append(w.acked, i)
			} else {
				w.errs++
			}
			w.mu.Unlock()
			select {
			case <-ctx.Done():
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	DeferCleanup(w.stop)
	return w
}

func (w *pushWriter) stop() {
	w.once.Do(func() {
		w.cancel()
		<-w.done
	})
}

func (w *pushWriter) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.acked)
}

// startDataWithConfig is StartData with each replica started from a config
// file (Dir/server.conf) that says `replicaof <master>`, as in a real
// deployment, so CONFIG REWRITE has a file to rewrite.
func startDataWithConfig(n int) *Cluster {
	GinkgoHelper()
	c := &Cluster{data: map[int]*redis.Client{}}
	c.Master = integration.StartServer(dataArgs...)
	c.addClient(c.Master)
	for i := 0; i < n; i++ {
		r := integration.StartServerWith(integration.ServerOptions{
			Config: fmt.Sprintf("replicaof 127.0.0.1 %d\n", c.Master.Port),
			Args:   dataArgs,
		})
		c.addClient(r)
		c.Replicas = append(c.Replicas, r)
	}
	Eventually(func(g Gomega) {
		info, err := c.Info(c.Master.Port)
		g.Expect(err).NotTo(HaveOccurred())
		for _, r := range c.Replicas {
			g.Expect(info).To(MatchRegexp(`slave\d+:ip=127\.0\.0\.1,port=%d,state=online`, r.Port))
		}
	}).WithTimeout(30*time.Second).WithPolling(50*time.Millisecond).Should(Succeed(),
		"the replicas should be online at the master")
	return c
}

// replicaofLines returns the `replicaof` / `slaveof` directives of the
// config file of the data server s.
func replicaofLines(s *integration.Server) []string {
	GinkgoHelper()
	b, err := os.ReadFile(filepath.Join(s.Dir, "server.conf"))
	Expect(err).NotTo(HaveOccurred())
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(strings.ToLower(l))
		if len(f) > 0 && (f[0] == "replicaof" || f[0] == "slaveof") {
			out = append(out, l)
		}
	}
	return out
}

var _ = Describe("Coordinated failover", Label("failover", "coordinated", "slow"), func() {
	BeforeEach(func() {
		RequireSentinel()
		if IsRealSentinel() {
			Skip("SENTINEL FAILOVER ... COORDINATED is vigil-sentinel's")
		}
	})

	It("SENTINEL FAILOVER m COORDINATED hands over without losing an acknowledged write", func() {
		c := startDataWithConfig(2)
		for _, r := range c.Replicas {
			Expect(replicaofLines(r)).To(HaveLen(1))
		}
		c.AddSentinels(2, Times(3, SentinelBin)...)
		c.WaitDiscovery()
		ev := Watch(c.Sentinels...)
		w := startPushWriter(c.SentinelAddrs())
		Eventually(w.count).WithTimeout(FailoverWait).WithPolling(Poll).Should(BeNumerically(">=", 50))

		By("SENTINEL FAILOVER m COORDINATED")
		old := c.Master.Port
		ctx := context.Background()
		Expect(c.Sentinels[0].C.Do(ctx, "SENTINEL", "FAILOVER", MasterName, "COORDINATED").Err()).To(Succeed())
		newPort := c.WaitNewMaster()
		switchMsg := fmt.Sprintf("%s 127.0.0.1 %d 127.0.0.1 %d", MasterName, old, newPort)
		for _, s := range c.Sentinels {
			Eventually(func() []string { return ev.Payloads(s.Port, "+switch-master") }).
				WithTimeout(FailoverWait).WithPolling(Poll).Should(ContainElement(switchMsg),
				func() string { return s.Name() + " events:\n" + ev.String() })
		}
		Expect(ev.Payloads(c.Sentinels[0].Port, "+coordinated-failover-start")).To(HaveLen(1), ev.String)
		Expect(ev.Payloads(c.Sentinels[0].Port, "+coordinated-failover-end")).To(HaveLen(1), ev.String)

		By("the old master follows the new one by itself, the other replica is reconfigured")
		c.ExpectMaster(newPort)
		c.ExpectReplicaOf(old, newPort, FailoverWait)
		c.ExpectReplicaOf(c.OtherReplica(newPort).Port, newPort, FailoverWait)

		By("the new master's config file no longer names the old master (SLAVEOF NO ONE + CONFIG REWRITE)")
		var promoted *integration.Server
		for _, r := range c.Replicas {
			if r.Port == newPort {
				promoted = r
			}
		}
		Expect(promoted).NotTo(BeNil())
		Eventually(func() []string { return replicaofLines(promoted) }).
			WithTimeout(FailoverWait).WithPolling(Poll).Should(BeEmpty())
		other := c.OtherReplica(newPort)
		Eventually(func() []string { return replicaofLines(other) }).
			WithTimeout(FailoverWait).WithPolling(Poll).
			Should(ConsistOf(MatchRegexp(`^replicaof 127\.0\.0\.1 %d$`, newPort)))

		By("writes go on, and every acknowledged one is on the new master")
		n := w.count()
		Eventually(w.count).WithTimeout(FailoverWait).WithPolling(Poll).Should(BeNumerically(">", n+20))
		w.stop()
		got, err := c.Data(newPort).LRange(ctx, pushKey, 0, -1).Result()
		Expect(err).NotTo(HaveOccurred())
		have := map[string]bool{}
		for _, v := range got {
			have[v] = true
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		var lost []int64
		for _, v := range w.acked {
			if !have[fmt.Sprint(v)] {
				lost = append(lost, v)
			}
		}
		Expect(lost).To(BeEmpty(), "acknowledged pushes missing on the new master (of %d)", len(w.acked))
		AddReportEntry("acknowledged pushes / failed", fmt.Sprintf("%d / %d", len(w.acked), w.errs))
	})
})
