package sentinel

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/redis/go-redis/v9"

	"github.com/vigil-kv/vigil/integration"
)

// pushKey is the list the coordinated failover spec's writer pushes to.
const pushKey = "coordinated-list"

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
	c.waitOnline()
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
		w := integration.StartPushWriter(NewFailoverClient(c.SentinelAddrs()), pushKey, 2*time.Second)
		Eventually(w.Count).WithTimeout(FailoverWait).WithPolling(Poll).Should(BeNumerically(">=", 50))

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
		n := w.Count()
		Eventually(w.Count).WithTimeout(FailoverWait).WithPolling(Poll).Should(BeNumerically(">", n+20))
		w.Stop()
		got, err := c.Data(newPort).LRange(ctx, pushKey, 0, -1).Result()
		Expect(err).NotTo(HaveOccurred())
		Expect(w.Missing(got)).To(BeEmpty(), "acknowledged pushes missing on the new master (of %d)", w.Count())
		AddReportEntry("acknowledged pushes / failed", w.Report())
	})
})
