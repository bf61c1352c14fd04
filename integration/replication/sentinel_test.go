package replication

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
	"github.com/redis/go-redis/v9"

	"github.com/vigil-kv/vigil/integration"
)

// sentinelProc is a sentinel process of either kind.
type sentinelProc struct {
	sc   *redis.SentinelClient
	sess *gexec.Session
}

// startSentinelBin starts bin (vigil-sentinel or redis-sentinel) monitoring
// master as "mym" with quorum 2; killed (after a SIGCONT) when the spec ends.
func startSentinelBin(bin string, master *node) sentinelProc {
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
	cmd := exec.Command(bin, conf)
	if strings.HasPrefix(filepath.Base(bin), "redis-server") {
		cmd = exec.Command(bin, conf, "--sentinel")
	}
	cmd.Dir = dir
	sess, err := gexec.Start(cmd, logf, logf)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() {
		sess.Signal(syscall.SIGCONT)
		sess.Kill()
		Eventually(sess).WithTimeout(integration.ExitTimeout).Should(gexec.Exit())
		logf.Close()
	})
	sc := redis.NewSentinelClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", port), MaxRetries: -1})
	DeferCleanup(sc.Close)
	Eventually(func() error { return sc.Ping(ctx).Err() }).WithTimeout(integration.StartTimeout).Should(Succeed())
	return sentinelProc{sc: sc, sess: sess}
}

// startSentinel starts vigil-sentinel monitoring master as "mym" with a
// quorum of 2; it is killed when the spec ends.
func startSentinel(master *node) *redis.SentinelClient {
	GinkgoHelper()
	return startSentinelBin(sentinelBin, master).sc
}

// startTrio starts a vigil-server master (masterArgs), fills it with
// populate(prefix) unless prefix is "", starts two replicas of it
// (replicaArgs) and waits until both are in sync.
func startTrio(prefix string, masterArgs, replicaArgs []string) (m, r1, r2 *node) {
	GinkgoHelper()
	m = startVigil(masterArgs...)
	r1 = startVigil(append([]string{"--replicaof", "127.0.0.1", itoa(m.Port)}, replicaArgs...)...)
	r2 = startVigil(append([]string{"--replicaof", "127.0.0.1", itoa(m.Port)}, replicaArgs...)...)
	if prefix != "" {
		populate(m.c, prefix)
	}
	waitSynced(m, r1)
	waitSynced(m, r2)
	return m, r1, r2
}

// waitDiscovered waits until every sentinel knows both replicas and the two
// other sentinels, and check (when not nil) passes for each.
func waitDiscovered(scs []*redis.SentinelClient, check func(g Gomega, sc *redis.SentinelClient)) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		for _, sc := range scs {
			reps, err := sc.Replicas(ctx, "mym").Result()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(reps).To(HaveLen(2))
			others, err := sc.Sentinels(ctx, "mym").Result()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(others).To(HaveLen(2))
			if check != nil {
				check(g, sc)
			}
		}
	}).WithTimeout(45 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())
}

// waitPromoted waits until sc names r1 or r2 as the master, that one
// reports role:master and the other replicates from it; it returns them.
func waitPromoted(sc *redis.SentinelClient, r1, r2 *node, why func() string) (promoted, other *node) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		addr, err := sc.GetMasterAddrByName(ctx, "mym").Result()
		g.Expect(err).NotTo(HaveOccurred())
		switch addr[1] {
		case itoa(r1.Port):
			promoted, other = r1, r2
		case itoa(r2.Port):
			promoted, other = r2, r1
		default:
			g.Expect(addr[1]).To(BeElementOf(itoa(r1.Port), itoa(r2.Port)))
		}
	}).WithTimeout(60*time.Second).WithPolling(200*time.Millisecond).Should(Succeed(), why)
	Eventually(func(g Gomega) {
		g.Expect(promoted.infoG(g, "replication")["role"]).To(Equal("master"))
		oi := other.infoG(g, "replication")
		g.Expect(oi["master_port"]).To(Equal(itoa(promoted.Port)))
		g.Expect(oi["master_link_status"]).To(Equal("up"))
	}).WithTimeout(60 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())
	return promoted, other
}

var _ = Describe("vigil-sentinel over vigil-server", Label("replication", "failover", "slow"), func() {
	It("fails over to a vigil replica after SIGKILL of the vigil master; the other replica follows it", func() {
		m, r1, r2 := startTrio("s:", nil, nil)
		var scs []*redis.SentinelClient
		for i := 0; i < 3; i++ {
			scs = append(scs, startSentinel(m))
		}
		// The sentinels discovered both replicas and each other.
		waitDiscovered(scs, nil)
		want := m.dump()

		m.Session.Kill()
		promoted, other := waitPromoted(scs[0], r1, r2, func() string { return "" })
		Expect(promoted.dump()).To(Equal(want))
		Expect(promoted.c.Set(ctx, "after", "failover", 0).Err()).To(Succeed())
		waitSynced(promoted, other)
		Expect(other.dump()).To(Equal(promoted.dump()))
	})
})
