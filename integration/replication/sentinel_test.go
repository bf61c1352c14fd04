package replication

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
	"github.com/redis/go-redis/v9"

	"github.com/vigil-kv/vigil/integration"
)

// startSentinel starts vigil-sentinel monitoring master as "mym" with a
// quorum of 2; it is killed when the spec ends.
func startSentinel(master *node) *redis.SentinelClient {
	GinkgoHelper()
	dir := integration.TempDir()
	port := integration.FreePort()
	conf := filepath.Join(dir, "sentinel.conf")
	Expect(os.WriteFile(conf, []byte(fmt.Sprintf(`port %d
bind 127.0.0.1
dir %s
sentinel monitor mym 127.0.0.1 %d 2
sentinel down-after-milliseconds mym 1000
sentinel failover-timeout mym 5000
`, port, dir, master.Port)), 0o644)).To(Succeed())
	logf, err := os.Create(filepath.Join(dir, "sentinel.log"))
	Expect(err).NotTo(HaveOccurred())
	cmd := exec.Command(sentinelBin, conf)
	cmd.Dir = dir
	sess, err := gexec.Start(cmd, logf, logf)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() {
		sess.Kill()
		Eventually(sess).WithTimeout(integration.ExitTimeout).Should(gexec.Exit())
		logf.Close()
	})
	sc := redis.NewSentinelClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", port), MaxRetries: -1})
	DeferCleanup(sc.Close)
	Eventually(func() error { return sc.Ping(ctx).Err() }).WithTimeout(integration.StartTimeout).Should(Succeed())
	return sc
}

var _ = Describe("vigil-sentinel over vigil-server", Label("replication", "failover", "slow"), func() {
	It("fails over to a vigil replica after SIGKILL of the vigil master; the other replica follows it", func() {
		m := startVigil()
		r1 := startVigil("--replicaof", "127.0.0.1", itoa(m.Port))
		r2 := startVigil("--replicaof", "127.0.0.1", itoa(m.Port))
		populate(m.c, "s:")
		waitSynced(m, r1)
		waitSynced(m, r2)
		var scs []*redis.SentinelClient
		for i := 0; i < 3; i++ {
			scs = append(scs, startSentinel(m))
		}
		// The sentinels discovered both replicas and each other.
		Eventually(func(g Gomega) {
			for _, sc := range scs {
				reps, err := sc.Replicas(ctx, "mym").Result()
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(reps).To(HaveLen(2))
				others, err := sc.Sentinels(ctx, "mym").Result()
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(others).To(HaveLen(2))
			}
		}).WithTimeout(30 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())
		want := m.dump()

		m.Session.Kill()
		var promoted, other *node
		Eventually(func(g Gomega) {
			addr, err := scs[0].GetMasterAddrByName(ctx, "mym").Result()
			g.Expect(err).NotTo(HaveOccurred())
			switch addr[1] {
			case itoa(r1.Port):
				promoted, other = r1, r2
			case itoa(r2.Port):
				promoted, other = r2, r1
			default:
				g.Expect(addr[1]).To(BeElementOf(itoa(r1.Port), itoa(r2.Port)))
			}
		}).WithTimeout(60 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(promoted.info("replication")["role"]).To(Equal("master"))
			oi := other.info("replication")
			g.Expect(oi["master_port"]).To(Equal(itoa(promoted.Port)))
			g.Expect(oi["master_link_status"]).To(Equal("up"))
		}).WithTimeout(60 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())
		Expect(promoted.dump()).To(Equal(want))
		Expect(promoted.c.Set(ctx, "after", "failover", 0).Err()).To(Succeed())
		waitSynced(promoted, other)
		Expect(other.dump()).To(Equal(promoted.dump()))
	})
})
