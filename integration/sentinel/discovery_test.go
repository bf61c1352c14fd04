package sentinel

import (
	"context"
	"fmt"
	"strconv"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/redis/go-redis/v9"
)

// Spec 1: three sentinels over a master with two replicas find the replicas
// (from the master's INFO) and each other (from hellos), and answer
// GET-MASTER-ADDR-BY-NAME.
var _ = Describe("Sentinel discovery", Label("interop"), func() {
	BeforeEach(RequireSentinel)

	It("discovers the replicas and the other sentinels and names the master", func() {
		c := StartData(2)
		c.AddSentinels(2, Times(3, SentinelBin)...)

		By("SENTINEL REPLICAS and SENTINEL SENTINELS")
		c.WaitDiscovery()

		By("GET-MASTER-ADDR-BY-NAME on every sentinel")
		for _, s := range c.Sentinels {
			Expect(s.MasterAddr()).To(Equal(Addr(c.Master.Port)), s.Name())
		}

		By("INFO sentinel")
		for _, s := range c.Sentinels {
			Eventually(func() (string, error) {
				return s.C.Info(context.Background(), "sentinel").Result()
			}).WithTimeout(DiscoveryWait).WithPolling(Poll).Should(ContainSubstring(
				fmt.Sprintf("master0:name=%s,status=ok,address=127.0.0.1:%d,slaves=2,sentinels=3",
					MasterName, c.Master.Port)), s.Name())
		}

		By("SENTINEL MASTER, REPLICAS and SENTINELS read the same in RESP2 and RESP3")
		for _, s := range c.Sentinels {
			sc2 := redis.NewSentinelClient(&redis.Options{Addr: s.Addr(), Protocol: 2, MaxRetries: -1})
			DeferCleanup(sc2.Close)
			ctx := context.Background()
			for _, sc := range []*redis.SentinelClient{sc2, s.SC} {
				m, err := sc.Master(ctx, MasterName).Result()
				Expect(err).NotTo(HaveOccurred())
				Expect(m).To(HaveKeyWithValue("name", MasterName))
				Expect(m).To(HaveKeyWithValue("port", strconv.Itoa(c.Master.Port)))
				Expect(m).To(HaveKeyWithValue("flags", "master"))
				Expect(m).To(HaveKeyWithValue("num-slaves", "2"))
				Expect(m).To(HaveKeyWithValue("num-other-sentinels", "2"))
				Expect(m).To(HaveKeyWithValue("quorum", "2"))
				Expect(m).To(HaveKeyWithValue("down-after-milliseconds", strconv.Itoa(DownAfter)))
				Expect(m).To(HaveKeyWithValue("failover-timeout", strconv.Itoa(FailoverTimeout)))
				reps, err := sc.Replicas(ctx, MasterName).Result()
				Expect(err).NotTo(HaveOccurred())
				Expect(PortsOf(reps)).To(Equal(Strs(c.ReplicaPorts()...)))
				others, err := sc.Sentinels(ctx, MasterName).Result()
				Expect(err).NotTo(HaveOccurred())
				Expect(others).To(HaveLen(2))
			}
			_, err := sc2.Master(ctx, "nosuch").Result()
			Expect(err).To(MatchError("ERR No such master with that name"))
		}

		By("an unknown master name gives a nil reply in RESP2 and RESP3")
		for _, proto := range []int{2, 3} {
			for _, s := range c.Sentinels {
				sc := redis.NewSentinelClient(&redis.Options{Addr: s.Addr(), Protocol: proto, MaxRetries: -1})
				DeferCleanup(sc.Close)
				_, err := sc.GetMasterAddrByName(context.Background(), "nosuch").Result()
				Expect(err).To(Equal(redis.Nil), "%s, RESP%d", s.Name(), proto)
				addr, err := sc.GetMasterAddrByName(context.Background(), MasterName).Result()
				Expect(err).NotTo(HaveOccurred())
				Expect(addr).To(Equal([]string{"127.0.0.1", strconv.Itoa(c.Master.Port)}), "%s, RESP%d", s.Name(), proto)
			}
		}
	})
})
