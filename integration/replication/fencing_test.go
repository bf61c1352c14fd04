package replication

import (
	"fmt"
	"os/exec"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/redis/go-redis/v9"

	"github.com/vigil-kv/vigil/client"
)

// Fencing of a deposed or isolated master (docs/safety.md "Fencing a
// deposed master").

// fenceDeployment: a vigil-server master, two vigil-server replicas and
// three sentinels of bin that have discovered everything, and the master
// has learned the three sentinels from their hellos.
func fenceDeployment(bin string, masterArgs ...string) (m, r1, r2 *node, ss []sentinelProc) {
	GinkgoHelper()
	m, r1, r2 = startTrio("", masterArgs, nil)
	var scs []*redis.SentinelClient
	for i := 0; i < 3; i++ {
		ss = append(ss, startSentinelBin(bin, m))
		scs = append(scs, ss[i].sc)
	}
	waitDiscovered(scs, func(g Gomega, _ *redis.SentinelClient) {
		g.Expect(m.infoG(g, "replication")["master_sentinels_known"]).To(Equal("3"))
	})
	return m, r1, r2, ss
}

// fenceEpochSpec: SIGSTOP of the master, failover, SIGCONT: before the
// sentinels reconfigure it, the old master refuses writes with READONLY
// naming the new master, learned from the hellos.
func fenceEpochSpec(bin string) {
	m, r1, r2, ss := fenceDeployment(bin)
	Expect(m.c.Set(ctx, "before", "1", 0).Err()).To(Succeed())

	By("SIGSTOP of the master until the sentinels promote a replica")
	m.Session.Signal(syscall.SIGSTOP)
	DeferCleanup(func() { m.Session.Signal(syscall.SIGCONT) })
	var promoted *node
	Eventually(func(g Gomega) {
		addr, err := ss[0].sc.GetMasterAddrByName(ctx, "mym").Result()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(addr[1]).To(BeElementOf(itoa(r1.Port), itoa(r2.Port)))
		promoted = r1
		if addr[1] == itoa(r2.Port) {
			promoted = r2
		}
	}).WithTimeout(60 * time.Second).WithPolling(100 * time.Millisecond).Should(Succeed())
	Eventually(func(g Gomega) {
		g.Expect(promoted.infoG(g, "replication")["role"]).To(Equal("master"))
	}).WithTimeout(60 * time.Second).WithPolling(100 * time.Millisecond).Should(Succeed())
	newMaster := "127.0.0.1:" + itoa(promoted.Port)

	By("SIGCONT: the old master is fenced by the hellos before it is reconfigured")
	m.Session.Signal(syscall.SIGCONT)
	Eventually(func(g Gomega) {
		mi := m.infoG(g, "replication")
		if mi["role"] != "master" {
			StopTrying("the old master was reconfigured before its fence was seen: " + fmt.Sprint(mi))
		}
		g.Expect(mi["master_fenced"]).To(Equal("1"), fmt.Sprint(mi))
		g.Expect(mi["master_fenced_reason"]).To(Equal("epoch"))
		g.Expect(mi["master_fenced_by"]).To(Equal(newMaster))
		err := m.c.Set(ctx, "after", "1", 0).Err()
		if m.infoG(g, "replication")["role"] != "master" {
			StopTrying("the old master was reconfigured during the check")
		}
		g.Expect(err).To(HaveOccurred())
		g.Expect(redis.IsReadOnlyError(err)).To(BeTrue(), "go-redis sees READONLY: %v", err)
		g.Expect(client.NeedsRediscovery(err)).To(BeTrue(), "the sentinel-following client rediscovers on it")
		g.Expect(err.Error()).To(ContainSubstring("This master is fenced"))
		g.Expect(err.Error()).To(ContainSubstring("made " + newMaster + " the master"))
	}).WithTimeout(30 * time.Second).WithPolling(50 * time.Millisecond).Should(Succeed())
	pi := promoted.info("replication")
	Expect(pi["master_fenced"]).To(Equal("0"))
	epoch := pi["master_config_epoch"]
	Expect(epoch).NotTo(BeElementOf("", "0"), "the promoted replica knows its epoch: %v", pi)
	Expect(m.info("replication")["master_fenced_epoch"]).To(Equal(epoch))

	By("the sentinels reconfigure it: a replica of the new master, fence lifted")
	Eventually(func(g Gomega) {
		mi := m.infoG(g, "replication")
		g.Expect(mi["role"]).To(Equal("slave"))
		g.Expect(mi["master_port"]).To(Equal(itoa(promoted.Port)))
		g.Expect(mi["master_fenced"]).To(Equal("0"))
		g.Expect(mi["master_config_epoch"]).To(Equal(epoch))
	}).WithTimeout(60 * time.Second).WithPolling(100 * time.Millisecond).Should(Succeed())
	Expect(m.c.ConfigGet(ctx, "master-fence").Val()).To(HaveKeyWithValue("master-fence", ""))
}

var _ = Describe("fencing a deposed master", Label("replication", "failover", "slow"), func() {
	It("vigil-sentinel: the old master refuses writes naming the new master once resumed", func() {
		fenceEpochSpec(sentinelBin)
	})

	It("redis-sentinel: its hellos fence a vigil-server master", func() {
		// redis-server --sentinel is the same program as redis-sentinel
		// (Debian ships redis-sentinel as a separate package).
		bin, err := exec.LookPath("redis-sentinel")
		if err != nil {
			bin = redisServerBin
		}
		if bin == "" {
			Skip("neither redis-sentinel nor redis-server installed (apt-get install redis-sentinel)")
		}
		fenceEpochSpec(bin)
	})

	It("a master cut from its sentinels and replicas stops writes after master-isolation-timeout, and resumes", func() {
		m, r1, r2, ss := fenceDeployment(sentinelBin, "--master-isolation-timeout", "1500")
		for _, s := range ss {
			Expect(s.sc.Set(ctx, "mym", "down-after-milliseconds", "600000").Err()).To(Succeed())
		}
		By("SIGSTOP of the sentinels: the replicas' ACKs keep the master writable")
		for _, s := range ss {
			s.sess.Signal(syscall.SIGSTOP)
		}
		Eventually(func(g Gomega) {
			g.Expect(m.infoG(g, "replication")["master_sentinels_heard"]).To(Equal("0"))
		}).WithTimeout(30 * time.Second).WithPolling(100 * time.Millisecond).Should(Succeed())
		Expect(m.c.Set(ctx, "k", "1", 0).Err()).To(Succeed())
		Expect(m.info("replication")["master_fenced"]).To(Equal("0"))

		By("SIGSTOP of the replicas too: isolated, writes refused")
		for _, r := range []*node{r1, r2} {
			r.Session.Signal(syscall.SIGSTOP)
			DeferCleanup(func() { r.Session.Signal(syscall.SIGCONT) })
		}
		stopped := time.Now()
		var refused time.Time
		Eventually(func(g Gomega) {
			err := m.c.Set(ctx, "k", "2", 0).Err()
			g.Expect(err).To(HaveOccurred())
			g.Expect(redis.IsReadOnlyError(err)).To(BeTrue(), "%v", err)
			g.Expect(err.Error()).To(ContainSubstring("This master is isolated"))
			refused = time.Now()
		}).WithTimeout(30 * time.Second).WithPolling(50 * time.Millisecond).Should(Succeed())
		AddReportEntry("isolation: replicas stopped to first refused write", refused.Sub(stopped).String())
		mi := m.info("replication")
		Expect(mi["master_fenced"]).To(Equal("1"))
		Expect(mi["master_fenced_reason"]).To(Equal("isolated"))

		By("SIGCONT of two sentinels (a majority): writes resume")
		ss[0].sess.Signal(syscall.SIGCONT)
		ss[1].sess.Signal(syscall.SIGCONT)
		Eventually(func() error { return m.c.Set(ctx, "k", "3", 0).Err() }).
			WithTimeout(30 * time.Second).WithPolling(50 * time.Millisecond).Should(Succeed())
		Expect(m.info("replication")["master_fenced"]).To(Equal("0"))
	})
})
