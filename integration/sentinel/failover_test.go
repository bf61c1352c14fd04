package sentinel

import (
	"context"
	"fmt"
	"strconv"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("Sentinel failover", Label("interop", "failover", "slow"), func() {
	BeforeEach(RequireSentinel)

	// Spec 2.
	It("fails over when the master is killed, and a FailoverClient keeps writing", func() {
		c := StartData(2)
		c.AddSentinels(2, Times(3, SentinelBin)...)
		c.WaitDiscovery()
		ev := Watch(c.Sentinels...)
		sub := WatchChannels(c.Sentinels, "+switch-master")

		w := StartWriter(c.SentinelAddrs())
		w.WaitWriting(10, FailoverWait)

		By("SIGKILL of the master")
		old := c.Master.Port
		c.Master.Kill()

		newPort := c.WaitNewMaster()
		other := c.OtherReplica(newPort)

		By("+switch-master on every sentinel's pub/sub")
		switchMsg := fmt.Sprintf("%s 127.0.0.1 %d 127.0.0.1 %d", MasterName, old, newPort)
		for _, s := range c.Sentinels {
			Eventually(func() []string { return ev.Payloads(s.Port, "+switch-master") }).
				WithTimeout(FailoverWait).WithPolling(Poll).Should(ContainElement(switchMsg),
				func() string { return s.Name() + " events:\n" + ev.String() })
			Eventually(func() []string { return sub.Payloads(s.Port, "+switch-master") }).
				WithTimeout(FailoverWait).WithPolling(Poll).Should(Equal([]string{switchMsg}),
				"%s: SUBSCRIBE +switch-master", s.Name())
		}

		By("the new master is a master and the other replica follows it")
		c.ExpectMaster(newPort)
		c.ExpectReplicaOf(other.Port, newPort, FailoverWait)

		By("the FailoverClient writes to the new master")
		mark := w.Mark()
		Eventually(func() bool { _, ok := w.FirstOKAfter(mark); return ok }).
			WithTimeout(FailoverWait).WithPolling(Poll).Should(BeTrue(),
			func() string { return fmt.Sprintf("no write succeeded after the switch (last error: %v)", w.LastErr()) })
		w.Stop()
		last, _ := w.Last()
		Expect(c.Data(newPort).Get(context.Background(), WriterKey).Int64()).To(Equal(last),
			"the last acknowledged write is on the new master")
		AddReportEntry("longest pause between successful writes across the failover", w.MaxGap().String())
	})

	// Spec 3.
	It("fails over when the master is stopped, and demotes it when it comes back", func() {
		c := StartData(2)
		c.AddSentinels(2, Times(3, SentinelBin)...)
		c.WaitDiscovery()
		ev := Watch(c.Sentinels...)

		By("SIGSTOP of the master for longer than down-after-milliseconds")
		old := c.Master.Port
		Stop(c.Master)
		newPort := c.WaitNewMaster()
		for _, s := range c.Sentinels {
			Eventually(func() []string { return ev.Payloads(s.Port, "+switch-master") }).
				WithTimeout(FailoverWait).WithPolling(Poll).Should(ContainElement(
				fmt.Sprintf("%s 127.0.0.1 %d 127.0.0.1 %d", MasterName, old, newPort)),
				func() string { return s.Name() + " events:\n" + ev.String() })
		}
		c.ExpectMaster(newPort)

		By("SIGCONT: the old master is converted to a replica of the new one")
		Continue(c.Master)
		convert := fmt.Sprintf("slave 127.0.0.1:%d 127.0.0.1 %d @ %s 127.0.0.1 %d", old, old, MasterName, newPort)
		Eventually(func() []string { return ev.Payloads(0, "+convert-to-slave") }).
			WithTimeout(ConvertWait).WithPolling(Poll).Should(ContainElement(convert),
			func() string { return "events:\n" + ev.String() })
		c.ExpectReplicaOf(old, newPort, ConvertWait)
		c.ExpectReplicaOf(c.OtherReplica(newPort).Port, newPort, FailoverWait)

		By("every sentinel lists the old master among the replicas")
		for _, s := range c.Sentinels {
			Eventually(func(g Gomega) {
				reps, err := s.Replicas()
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(PortsOf(reps)).To(Equal(Strs(old, c.OtherReplica(newPort).Port)))
				for _, r := range reps {
					g.Expect(r).To(HaveKeyWithValue("flags", "slave"))
					g.Expect(r).To(HaveKeyWithValue("master-port", strconv.Itoa(newPort)))
				}
			}).WithTimeout(ConvertWait).WithPolling(Poll).Should(Succeed(), s.Name())
		}
	})

	// Spec 4.
	It("switches masters on SENTINEL FAILOVER without any agreement", func() {
		c := StartData(2)
		// A single sentinel with quorum 2 can never reach ODOWN or win an
		// election: only the forced failover can move the master.
		c.AddSentinels(2, SentinelBin)
		c.WaitDiscovery()
		s := c.Sentinels[0]
		ctx := context.Background()
		Expect(s.SC.CkQuorum(ctx, MasterName).Err()).To(MatchError(HavePrefix("NOQUORUM ")))
		ev := Watch(s)

		err := s.SC.Failover(ctx, "nosuch").Err()
		Expect(err).To(MatchError("ERR No such master with that name"))

		By("SENTINEL FAILOVER")
		old := c.Master.Port
		Expect(s.SC.Failover(ctx, MasterName).Result()).To(Equal("OK"))
		newPort := c.WaitNewMaster()
		Eventually(func() []string { return ev.Payloads(0, "+switch-master") }).
			WithTimeout(FailoverWait).WithPolling(Poll).Should(ContainElement(
			fmt.Sprintf("%s 127.0.0.1 %d 127.0.0.1 %d", MasterName, old, newPort)),
			func() string { return "events:\n" + ev.String() })
		Expect(ev.Payloads(0, "+odown")).To(BeEmpty(), "no ODOWN was needed")

		By("the new master is a master, the other replica and the old master follow it")
		c.ExpectMaster(newPort)
		c.ExpectReplicaOf(c.OtherReplica(newPort).Port, newPort, FailoverWait)
		c.ExpectReplicaOf(old, newPort, ConvertWait)
	})
})
