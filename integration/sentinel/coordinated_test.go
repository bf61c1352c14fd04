package sentinel

import (
	"context"
	"fmt"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/redis/go-redis/v9"
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

var _ = Describe("Coordinated failover", Label("failover", "coordinated", "slow"), func() {
	BeforeEach(func() {
		RequireSentinel()
		if IsRealSentinel() {
			Skip("SENTINEL FAILOVER ... COORDINATED is vigil-sentinel's")
		}
	})

	It("SENTINEL FAILOVER m COORDINATED hands over without losing an acknowledged write", func() {
		c := StartData(2)
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
