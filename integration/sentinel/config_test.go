package sentinel

import (
	"context"
	"fmt"
	"os"
	"regexp"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// Spec 6: every sentinel rewrites its configuration file after a failover,
// and a sentinel restarted from that file knows the new master, its replicas
// and the other sentinels at once.
var _ = Describe("Sentinel configuration rewrite", Label("interop", "failover", "slow"), func() {
	BeforeEach(RequireSentinel)

	It("names the new master in the config file, and a restarted sentinel agrees", func() {
		c := StartData(2)
		c.AddSentinels(2, Times(3, SentinelBin)...)
		c.WaitDiscovery()
		ids := map[int]string{}
		for _, s := range c.Sentinels {
			ids[s.Port] = s.MyID()
		}

		By("SIGKILL of the master")
		old := c.Master.Port
		c.Master.Kill()
		newPort := c.WaitNewMaster()
		other := c.OtherReplica(newPort).Port

		By("every config file names the new master, its replicas and the other sentinels")
		line := func(format string, args ...any) string {
			return "(?m)^" + regexp.QuoteMeta(fmt.Sprintf(format, args...)) + "$"
		}
		for _, s := range c.Sentinels {
			Eventually(func(g Gomega) {
				b, err := os.ReadFile(s.ConfPath)
				g.Expect(err).NotTo(HaveOccurred())
				conf := string(b)
				g.Expect(conf).To(MatchRegexp(line("port %d", s.Port)))
				g.Expect(conf).To(MatchRegexp(line("sentinel myid %s", ids[s.Port])))
				g.Expect(conf).To(MatchRegexp(line("sentinel monitor %s 127.0.0.1 %d 2", MasterName, newPort)))
				g.Expect(conf).NotTo(MatchRegexp(line("sentinel monitor %s 127.0.0.1 %d 2", MasterName, old)))
				g.Expect(conf).To(MatchRegexp(`(?m)^sentinel config-epoch ` + MasterName + ` [1-9][0-9]*$`))
				g.Expect(conf).To(MatchRegexp(line("sentinel known-replica %s 127.0.0.1 %d", MasterName, old)))
				g.Expect(conf).To(MatchRegexp(line("sentinel known-replica %s 127.0.0.1 %d", MasterName, other)))
				g.Expect(conf).NotTo(MatchRegexp(line("sentinel known-replica %s 127.0.0.1 %d", MasterName, newPort)))
				for _, o := range c.Sentinels {
					if o != s {
						g.Expect(conf).To(MatchRegexp(line("sentinel known-sentinel %s 127.0.0.1 %d %s", MasterName, o.Port, ids[o.Port])))
					}
				}
			}).WithTimeout(FailoverWait).WithPolling(Poll).Should(Succeed(), "config file of %s", s.Name())
		}

		By("a sentinel restarted (after SIGKILL) from its file agrees")
		s := c.Sentinels[0]
		s.Kill()
		r := s.Restart()
		Expect(r.MyID()).To(Equal(ids[s.Port]))
		Expect(r.MasterAddr()).To(Equal(Addr(newPort)))
		reps, err := r.Replicas()
		Expect(err).NotTo(HaveOccurred())
		Expect(PortsOf(reps)).To(Equal(Strs(old, other)))
		others, err := r.Others()
		Expect(err).NotTo(HaveOccurred())
		Expect(PortsOf(others)).To(Equal(Strs(c.Sentinels[1].Port, c.Sentinels[2].Port)))
		for _, o := range others {
			Expect(o["runid"]).To(BeElementOf(ids[c.Sentinels[1].Port], ids[c.Sentinels[2].Port]))
		}
		epoch := func(s *Sentinel) string {
			m, err := s.SC.Master(context.Background(), MasterName).Result()
			Expect(err).NotTo(HaveOccurred())
			return m["config-epoch"]
		}
		Expect(epoch(r)).To(Equal(epoch(c.Sentinels[1])), "config-epoch after the restart")
		Eventually(func(g Gomega) {
			reps, err := r.Replicas()
			g.Expect(err).NotTo(HaveOccurred())
			for _, rep := range reps {
				if rep["port"] == fmt.Sprint(other) {
					g.Expect(rep).To(HaveKeyWithValue("flags", "slave"))
					g.Expect(rep).To(HaveKeyWithValue("master-port", fmt.Sprint(newPort)))
				}
			}
		}).WithTimeout(DiscoveryWait).WithPolling(Poll).Should(Succeed(), "the restarted sentinel reconnects to the replica")
	})
})
