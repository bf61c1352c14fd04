package replication

import (
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
	"github.com/redis/go-redis/v9"

	"github.com/vigil-kv/vigil/integration"
)

// restartEmpty SIGKILLs m, deletes its RDB and AOF and starts vigil-server
// again at once on the same port and directory: it comes back empty under
// a new replication ID (redis/redis#2087).
func restartEmpty(m *node) *node {
	GinkgoHelper()
	m.Session.Kill()
	Eventually(m.Session).WithTimeout(integration.ExitTimeout).Should(gexec.Exit())
	for _, f := range []string{"dump.rdb", "appendonlydir"} {
		Expect(os.RemoveAll(filepath.Join(m.Dir, f))).To(Succeed())
	}
	s := integration.StartServerWith(integration.ServerOptions{Dir: m.Dir,
		Args: []string{"--repl-diskless-sync-delay", "0", "--port", itoa(m.Port), "--appendonly", "yes"}})
	return &node{Server: s, c: s.Client(2)}
}

var _ = Describe("the empty-restart guard", Label("replication", "failover", "slow"), func() {
	It("keeps the replicas' data when the master restarts empty, and the sentinels promote one of them", func() {
		m, r1, r2 := startTrio("e:", []string{"--appendonly", "yes"}, nil)
		want := m.dump()
		Expect(want).NotTo(BeEmpty())
		var scs []*redis.SentinelClient
		for i := 0; i < 3; i++ {
			scs = append(scs, startSentinel(m))
		}
		waitDiscovered(scs, nil)
		// A down-after far longer than the restart and than the wait
		// below: only the empty-restart rule can make this failover.
		for _, sc := range scs {
			Expect(sc.Set(ctx, "mym", "down-after-milliseconds", "120000").Err()).To(Succeed())
		}

		By("SIGKILL of the master, its files deleted, restarted at once")
		m2 := restartEmpty(m)
		// A client writes to it at once, as clients of a restarted master do.
		Expect(m2.c.Set(ctx, "written-after-restart", "1", 0).Err()).To(Succeed())

		By("the sentinels promote a replica that kept the data")
		promoted, other := waitPromoted(scs[0], r1, r2, func() string { return "replica logs:\n" + r1.Log() + "\n" + r2.Log() })
		Expect(r1.Log() + r2.Log()).To(ContainSubstring("refusing the full sync"))
		Expect(promoted.dump()).To(Equal(want), "the promoted replica kept every key")
		Expect(other.dump()).To(Equal(want), "the other replica kept every key")

		By("the restarted master is converted into a replica and gets the data back")
		Eventually(func(g Gomega) {
			mi := m2.info("replication")
			g.Expect(mi["role"]).To(Equal("slave"))
			g.Expect(mi["master_port"]).To(Equal(itoa(promoted.Port)))
			g.Expect(mi["master_link_status"]).To(Equal("up"))
		}).WithTimeout(60 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())
		waitSynced(promoted, m2)
		Expect(m2.dump()).To(Equal(want))
	})

	It("obeys an operator's REPLICAOF of the master it refuses", func() {
		m := startVigil("--appendonly", "yes")
		r := startVigil("--replicaof", "127.0.0.1", itoa(m.Port))
		populate(m.c, "o:")
		waitSynced(m, r)
		want := r.dump()

		m2 := restartEmpty(m)
		Eventually(func() string { return r.info("replication")["master_sync_refused_empty"] }).
			WithTimeout(syncTimeout).WithPolling(50 * time.Millisecond).Should(Equal("1"))
		Expect(r.info("replication")["master_sync_refused_reason"]).To(ContainSubstring("REPLICAOF 127.0.0.1 " + itoa(m.Port)))
		Expect(r.dump()).To(Equal(want))

		Expect(r.c.Do(ctx, "REPLICAOF", "127.0.0.1", m.Port).Text()).To(Equal("OK Already connected to specified master"))
		waitSynced(m2, r)
		Expect(r.c.DBSize(ctx).Val()).To(BeZero())
		Expect(r.info("replication")).NotTo(HaveKey("master_sync_refused_empty"))
	})
})
