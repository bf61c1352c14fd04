package sentinel

import (
	"context"
	"fmt"
	"os"
	"strconv"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// forget-after-milliseconds (Vigil, sentinel/forget.go): a replica or a
// sentinel SDOWN and unreachable for longer than the master's forget-after
// is forgotten, as SENTINEL RESET would forget it: it leaves SENTINEL
// REPLICAS / SENTINELS and the rewritten config file, with a -slave /
// -sentinel event.
var _ = Describe("Forgetting gone nodes", Label("failover"), func() {
	BeforeEach(func() {
		RequireSentinel()
		if IsRealSentinel() {
			Skip("forget-after-milliseconds is a Vigil directive")
		}
	})

	It("forgets a SIGKILLed replica and a SIGKILLed sentinel after forget-after-milliseconds", func() {
		const forgetAfter = 3000 // ms
		ctx := context.Background()
		c := StartData(2)
		c.AddSentinels(2, Times(3, SentinelBin)...)
		c.WaitDiscovery()
		live, victim := c.Replicas[0], c.Replicas[1]
		gone := c.Sentinels[2]
		watchers := c.Sentinels[:2]

		knownReplica := func(port int) string {
			return fmt.Sprintf(`(?m)^sentinel known-replica %s 127\.0\.0\.1 %d$`, MasterName, port)
		}
		knownSentinel := func(port int) string {
			return fmt.Sprintf(`(?m)^sentinel known-sentinel %s 127\.0\.0\.1 %d `, MasterName, port)
		}
		conf := func(s *Sentinel) func() (string, error) {
			return func() (string, error) {
				b, err := os.ReadFile(s.ConfPath)
				return string(b), err
			}
		}

		By("SENTINEL SET forget-after-milliseconds on every sentinel: shown by SENTINEL MASTER, written to the file")
		for _, s := range c.Sentinels {
			Expect(s.SC.Set(ctx, MasterName, "forget-after-milliseconds", strconv.Itoa(forgetAfter)).Err()).To(Succeed(), s.Name())
			m, err := s.SC.Master(ctx, MasterName).Result()
			Expect(err).NotTo(HaveOccurred())
			Expect(m).To(HaveKeyWithValue("forget-after-milliseconds", strconv.Itoa(forgetAfter)), s.Name())
			Expect(conf(s)()).To(MatchRegexp(`(?m)^sentinel forget-after-milliseconds %s %d$`, MasterName, forgetAfter), s.Name())
			Expect(s.SC.Set(ctx, MasterName, "forget-after-milliseconds", "-1").Err()).To(
				MatchError("ERR Invalid argument '-1' for SENTINEL SET 'forget-after-milliseconds'"), s.Name())
		}
		for _, s := range watchers {
			Eventually(conf(s)).WithTimeout(DiscoveryWait).WithPolling(Poll).Should(And(
				MatchRegexp(knownReplica(victim.Port)), MatchRegexp(knownReplica(live.Port)),
				MatchRegexp(knownSentinel(gone.Port))), s.Name())
		}
		events := WatchChannels(watchers, "+sdown", "-slave", "-sentinel")

		By(fmt.Sprintf("SIGKILL of the replica on port %d: first SDOWN, then forgotten", victim.Port))
		victim.Kill()
		// The +sdown event, not a poll of SENTINEL REPLICAS: the replica is
		// listed SDOWN only between down-after and the forget time, a window
		// a poll can miss on a loaded machine; the event cannot be missed.
		for _, s := range watchers {
			Eventually(func() []string { return events.Payloads(s.Port, "+sdown") }).WithTimeout(DiscoveryWait).WithPolling(Poll).Should(
				ContainElement(fmt.Sprintf("slave 127.0.0.1:%d 127.0.0.1 %d @ %s 127.0.0.1 %d", victim.Port, victim.Port, MasterName, c.Master.Port)),
				"%s: the killed replica turned SDOWN before it is forgotten", s.Name())
		}
		for _, s := range watchers {
			Eventually(func() ([]string, error) {
				reps, err := s.Replicas()
				return PortsOf(reps), err
			}).WithTimeout(DiscoveryWait).WithPolling(Poll).Should(Equal(Strs(live.Port)), "%s: SENTINEL REPLICAS", s.Name())
			Eventually(conf(s)).WithTimeout(DiscoveryWait).WithPolling(Poll).Should(And(
				Not(MatchRegexp(knownReplica(victim.Port))), MatchRegexp(knownReplica(live.Port))), "%s: config file", s.Name())
			Eventually(func() []string { return events.Payloads(s.Port, "-slave") }).WithTimeout(DiscoveryWait).WithPolling(Poll).Should(
				ConsistOf(MatchRegexp(`^slave 127\.0\.0\.1:%d 127\.0\.0\.1 %d @ %s 127\.0\.0\.1 %d #unreachable for \d+ ms$`,
					victim.Port, victim.Port, MasterName, c.Master.Port)), "%s: -slave event", s.Name())
		}

		By(fmt.Sprintf("SIGKILL of the sentinel on port %d: forgotten by the two others", gone.Port))
		goneID := gone.MyID()
		gone.Kill()
		for _, s := range watchers {
			other := watchers[0]
			if other == s {
				other = watchers[1]
			}
			Eventually(func() ([]string, error) {
				o, err := s.Others()
				return PortsOf(o), err
			}).WithTimeout(DiscoveryWait).WithPolling(Poll).Should(Equal(Strs(other.Port)), "%s: SENTINEL SENTINELS", s.Name())
			Eventually(conf(s)).WithTimeout(DiscoveryWait).WithPolling(Poll).Should(And(
				Not(MatchRegexp(knownSentinel(gone.Port))), MatchRegexp(knownSentinel(other.Port))), "%s: config file", s.Name())
			Eventually(func() []string { return events.Payloads(s.Port, "-sentinel") }).WithTimeout(DiscoveryWait).WithPolling(Poll).Should(
				ConsistOf(MatchRegexp(`^sentinel %s 127\.0\.0\.1 %d @ %s 127\.0\.0\.1 %d #unreachable for \d+ ms$`,
					goneID, gone.Port, MasterName, c.Master.Port)), "%s: -sentinel event", s.Name())
		}

		By("the master, the live replica and the live sentinels are kept")
		for _, s := range watchers {
			Expect(s.MasterAddr()).To(Equal(Addr(c.Master.Port)), s.Name())
			reps, err := s.Replicas()
			Expect(err).NotTo(HaveOccurred())
			Expect(PortsOf(reps)).To(Equal(Strs(live.Port)), s.Name())
			Expect(reps[0]).To(HaveKeyWithValue("flags", "slave"), s.Name())
		}
	})
})
