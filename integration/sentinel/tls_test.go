package sentinel

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/redis/go-redis/v9"

	"github.com/vigil-kv/vigil/client"
	"github.com/vigil-kv/vigil/integration"
	"github.com/vigil-kv/vigil/internal/testutil"
)

// A deployment whose every link is TLS: the data servers' replication
// (tls-replication, the masters' TLS ports), the sentinels' links to the
// instances and to each other's hellos, and the application's client to
// the sentinels and to the master. The sentinel under test, and
// redis-sentinel 7.0.15 when installed, over the data server under test.
var _ = Describe("Sentinel over TLS", Label("interop", "failover", "tls"), func() {
	BeforeEach(RequireSentinel)

	run := func(bin string) {
		f := testutil.TLSCerts(GinkgoT())
		tlsArgs := func(port int) []string {
			return append(f.ServerArgs(port), "--tls-replication", "yes")
		}
		By("a master and two replicas replicating over TLS")
		mt := integration.FreePort()
		master := integration.StartServer(append(append([]string{}, dataArgs...), tlsArgs(mt)...)...)
		byTLS := map[int]*integration.Server{mt: master}
		var repTLS []int
		for range 2 {
			rt := integration.FreePort()
			args := append(append(append([]string{}, dataArgs...), tlsArgs(rt)...), "--replicaof", "127.0.0.1", strconv.Itoa(mt))
			byTLS[rt] = integration.StartServer(args...)
			repTLS = append(repTLS, rt)
		}
		plain := map[int]*redis.Client{}
		for tp, s := range byTLS {
			plain[tp] = integration.NewClient(s.ClientOptions(2))
		}
		ctx := context.Background()
		Eventually(func(g Gomega) {
			info, err := plain[mt].Info(ctx, "replication").Result()
			g.Expect(err).NotTo(HaveOccurred())
			for _, rt := range repTLS {
				g.Expect(info).To(MatchRegexp(`slave\d+:ip=127\.0\.0\.1,port=%d,state=online`, rt))
			}
		}).WithTimeout(30*time.Second).WithPolling(50*time.Millisecond).Should(Succeed(),
			"the replicas should be online at the master, announced by their TLS ports")

		By("three sentinels with TLS links and TLS ports")
		var sentinels []*Sentinel
		var sentinelTLS []string
		for range 3 {
			dir := integration.TempDir()
			port, tp := integration.FreePort(), integration.FreePort()
			conf := filepath.Join(dir, "sentinel.conf")
			text := SentinelConfig(port, mt, 2, dir) + fmt.Sprintf(
				"tls-port %d\ntls-replication yes\ntls-cert-file %s\ntls-key-file %s\ntls-ca-cert-file %s\n",
				tp, f.Cert, f.Key, f.CACert)
			Expect(os.WriteFile(conf, []byte(text), 0o644)).To(Succeed())
			s := launchSentinel(bin, conf, dir, port)
			Expect(s.waitReady()).To(BeTrue(), "sentinel did not answer PING; its output:\n%s", s.Log())
			s.Tune()
			sentinels = append(sentinels, s)
			sentinelTLS = append(sentinelTLS, net.JoinHostPort("127.0.0.1", strconv.Itoa(tp)))
		}
		for _, s := range sentinels {
			Eventually(func(g Gomega) {
				reps, err := s.Replicas()
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(PortsOf(reps)).To(Equal(Strs(repTLS...)), "SENTINEL REPLICAS: the replicas' TLS ports")
				for _, r := range reps {
					g.Expect(r).To(HaveKeyWithValue("master-link-status", "ok"))
				}
				others, err := s.Others()
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(others).To(HaveLen(2), "the other sentinels, found by hellos over TLS")
			}).WithTimeout(DiscoveryWait).WithPolling(Poll).Should(Succeed(), "discovery on %s", s.Name())
		}

		By("an application's FailoverClient over TLS to the sentinels and the master")
		app := redis.NewFailoverClient(&redis.FailoverOptions{
			MasterName: MasterName, SentinelAddrs: sentinelTLS, TLSConfig: f.ClientConfig(true),
			MaxRetries: -1, DialTimeout: 2 * time.Second, ReadTimeout: 2 * time.Second,
		})
		DeferCleanup(app.Close)
		Expect(app.Set(ctx, "tls:k", "before", 0).Err()).To(Succeed())
		vc, err := client.New(client.Options{MasterName: MasterName, SentinelAddrs: sentinelTLS,
			TLSConfig: f.ClientConfig(true), ReadFrom: client.Replica})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(vc.Close)
		Expect(vc.Set(ctx, "tls:v", "before", 0).Err()).To(Succeed(), "Vigil's client over TLS")
		Eventually(func() string { return vc.Get(ctx, "tls:v").Val() }).
			WithTimeout(FailoverWait).WithPolling(Poll).Should(Equal("before"), "Vigil's client reads a replica over TLS")

		By("SIGKILL of the master")
		master.Kill()
		var newTLS int
		Eventually(func(g Gomega) {
			addr, err := sentinels[0].MasterAddr()
			g.Expect(err).NotTo(HaveOccurred())
			_, p, _ := net.SplitHostPort(addr)
			newTLS, _ = strconv.Atoi(p)
			g.Expect(repTLS).To(ContainElement(newTLS))
		}).WithTimeout(FailoverWait).WithPolling(Poll).Should(Succeed(), "a replica's TLS port as the new master")
		other := repTLS[0]
		if other == newTLS {
			other = repTLS[1]
		}
		Eventually(func(g Gomega) {
			info, err := plain[other].Info(ctx, "replication").Result()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(InfoField(info, "master_port")).To(Equal(strconv.Itoa(newTLS)))
			g.Expect(InfoField(info, "master_link_status")).To(Equal("up"))
		}).WithTimeout(FailoverWait).WithPolling(Poll).Should(Succeed(), "the other replica follows the new master over TLS")
		Eventually(func() error { return app.Set(ctx, "tls:k", "after", 0).Err() }).
			WithTimeout(FailoverWait).WithPolling(Poll).Should(Succeed(), "the application writes to the new master")
		Expect(plain[newTLS].Get(ctx, "tls:k").Val()).To(Equal("after"))
		Eventually(func() error { return vc.Set(ctx, "tls:v", "after", 0).Err() }).
			WithTimeout(FailoverWait).WithPolling(Poll).Should(Succeed(), "Vigil's client follows the new master over TLS")
		Expect(plain[newTLS].Get(ctx, "tls:v").Val()).To(Equal("after"))
		Eventually(func() string { return plain[other].Get(ctx, "tls:k").Val() }).
			WithTimeout(FailoverWait).WithPolling(Poll).Should(Equal("after"), "the write reaches the other replica")
	}

	It("runs the sentinel under test", func() { run(SentinelBin) })
	It("runs redis-sentinel over the data server under test", func() { run(RequireRedisSentinel()) })
})
