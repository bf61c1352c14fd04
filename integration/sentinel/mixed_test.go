package sentinel

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// Spec 5: sentinels of both implementations in one deployment. The quorum is
// 3 of 3, so the leader reaches ODOWN only with the "down" answers of both
// others and is elected only with the votes of both: every implementation has
// to agree with the other. (Against redis-sentinel as the sentinel under test
// this is an all-redis deployment.)
var _ = Describe("Mixed sentinel deployments", Label("interop", "failover", "slow"), func() {
	BeforeEach(func() {
		RequireSentinel()
		RequireRedisSentinel()
	})

	for _, mix := range []struct{ vigil, redis int }{{2, 1}, {1, 2}} {
		It(fmt.Sprintf("agree on ODOWN, vote and fail over with %d sentinel(s) under test and %d redis-sentinel(s)", mix.vigil, mix.redis), func() {
			c := StartData(2)
			bins := append(Times(mix.vigil, SentinelBin), Times(mix.redis, RedisSentinelBin)...)
			c.AddSentinels(3, bins...)

			By("each sees the others in SENTINEL SENTINELS")
			c.WaitDiscovery()
			ids := map[int]string{}
			byID := map[string]*Sentinel{}
			for _, s := range c.Sentinels {
				ids[s.Port] = s.MyID()
				byID[ids[s.Port]] = s
			}
			ev := Watch(c.Sentinels...)

			By("SIGKILL of the master")
			old := c.Master.Port
			c.Master.Kill()
			newPort := c.WaitNewMaster()
			all := []int{}
			for _, s := range c.Sentinels {
				all = append(all, s.Port)
			}
			sort.Ints(all)
			masterRe := fmt.Sprintf(`^master %s 127\.0\.0\.1 %d\b`, MasterName, old)
			for _, s := range c.Sentinels {
				Eventually(func() []string { return ev.Payloads(s.Port, "+switch-master") }).
					WithTimeout(FailoverWait).WithPolling(Poll).Should(ContainElement(
					fmt.Sprintf("%s 127.0.0.1 %d 127.0.0.1 %d", MasterName, old, newPort)),
					func() string { return s.Name() + " events:\n" + ev.String() })
			}

			By("every sentinel saw the master down, the leader with all three agreeing")
			Expect(ev.Publishers("+sdown", masterRe)).To(Equal(all), "+sdown publishers\n%s", ev)
			leaders := ev.Publishers("+failover-end", masterRe)
			Expect(leaders).To(HaveLen(1), "exactly one sentinel completed the failover\n%s", ev)
			leader := leaders[0]
			Expect(ev.Payloads(leader, "+odown")).To(ContainElement(MatchRegexp(masterRe+` #quorum 3/3$`)),
				"the leader reached ODOWN with all three\n%s", ev)

			By("all three voted for the leader in the epoch it won")
			leaderID := ids[leader]
			won := ""
			for _, p := range ev.Payloads(leader, "+vote-for-leader") {
				id, epoch, ok := electionOf(p)
				if !ok || id != leaderID {
					continue
				}
				if len(ev.Publishers("+vote-for-leader", "^"+leaderID+" "+epoch+"$")) == len(all) {
					won = epoch
				}
			}
			Expect(won).NotTo(BeEmpty(), "no epoch in which all three voted for the leader %s\n%s", leaderID, ev)
			AddReportEntry("failover leader", fmt.Sprintf("%s in epoch %s", byID[leaderID].Name(), won))

			By("the new master is a master and the other replica follows it")
			c.ExpectMaster(newPort)
			c.ExpectReplicaOf(c.OtherReplica(newPort).Port, newPort, FailoverWait)
		})
	}
})

// electionOf returns the run id and epoch of a "+vote-for-leader" payload.
func electionOf(payload string) (id string, epoch string, ok bool) {
	m := regexp.MustCompile(`^([0-9a-f]{40}) (\d+)$`).FindStringSubmatch(strings.TrimSpace(payload))
	if m == nil {
		return "", "", false
	}
	return m[1], m[2], true
}
