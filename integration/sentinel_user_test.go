package integration

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
	"github.com/redis/go-redis/v9"
)

// Sentinels authenticate to vigil-server as a named ACL user with only the
// permissions Redis's documentation gives a sentinel user (auth-user /
// auth-pass), through the one ACL both binaries share: PING, INFO, ROLE,
// CLIENT SETNAME and the __sentinel__:hello channel work, so two sentinels
// see a healthy master and find each other through hellos published on
// vigil-server. A sentinel with a wrong password gets no valid PING reply
// and marks the master subjectively down.
var _ = Describe("Sentinels as an ACL user of vigil-server", Ordered, Label("interop"), func() {
	var sentinelBin string

	BeforeAll(func() {
		if IsRealRedis() {
			Skip("checks vigil-server's ACL with vigil-sentinel")
		}
		bin, err := Binary(SentinelBinEnv, SentinelPkg)
		Expect(err).NotTo(HaveOccurred(), "building ./cmd/vigil-sentinel")
		sentinelBin = bin
	})

	startSentinel := func(masterPort int, pass string) (*redis.SentinelClient, *gexec.Session) {
		GinkgoHelper()
		dir := TempDir()
		port := FreePort()
		conf := filepath.Join(dir, "sentinel.conf")
		Expect(os.WriteFile(conf, []byte(fmt.Sprintf(`port %d
bind 127.0.0.1
dir %s
sentinel monitor mymaster 127.0.0.1 %d 1
sentinel down-after-milliseconds mymaster 1000
sentinel auth-user mymaster sentinel-user
sentinel auth-pass mymaster %s
`, port, dir, masterPort, pass)), 0o644)).To(Succeed())
		logf, err := os.Create(filepath.Join(dir, "sentinel.log"))
		Expect(err).NotTo(HaveOccurred())
		cmd := exec.Command(sentinelBin, conf)
		cmd.Dir = dir
		sess, err := gexec.Start(cmd, logf, logf)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { sess.Kill().Wait(5 * time.Second); logf.Close() })
		sc := redis.NewSentinelClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port), MaxRetries: -1})
		DeferCleanup(sc.Close)
		return sc, sess
	}

	flags := func(sc *redis.SentinelClient) func() (string, error) {
		return func() (string, error) {
			m, err := sc.Master(context.Background(), "mymaster").Result()
			return m["flags"], err
		}
	}

	It("lets sentinels in with their own user and nothing more", func() {
		ctx := context.Background()
		srv := StartServer()
		admin := srv.Client(3)
		// Redis's documented sentinel user, less +slaveof: vigil-server has
		// no SLAVEOF until replication lands, and ACL SETUSER refuses
		// commands it does not have, as Redis does.
		Expect(admin.Do(ctx, "ACL", "SETUSER", "sentinel-user", "on", ">s3cret", "allchannels",
			"+multi", "+ping", "+exec", "+subscribe", "+config|rewrite", "+role", "+publish",
			"+info", "+client|setname", "+client|kill").Err()).To(Succeed())
		// The default user needs a password from now on: only the named
		// user's credentials get the sentinels in.
		Expect(admin.Do(ctx, "ACL", "SETUSER", "default", ">adminpw").Err()).To(Succeed())
		Expect(admin.Do(ctx, "ACL", "SETUSER", "default", "resetpass", ">adminpw").Err()).To(Succeed())

		s1, _ := startSentinel(srv.Port, "s3cret")
		s2, _ := startSentinel(srv.Port, "s3cret")
		bad, _ := startSentinel(srv.Port, "wrong")

		for _, sc := range []*redis.SentinelClient{s1, s2} {
			Eventually(func() (string, error) {
				m, err := sc.Master(ctx, "mymaster").Result()
				return m["num-other-sentinels"], err
			}).WithTimeout(20*time.Second).WithPolling(100*time.Millisecond).Should(Equal("1"),
				"the two sentinels find each other through hellos on vigil-server")
			Consistently(flags(sc)).WithTimeout(1500 * time.Millisecond).WithPolling(100 * time.Millisecond).
				Should(Equal("master"))
		}
		Eventually(flags(bad)).WithTimeout(15*time.Second).WithPolling(100*time.Millisecond).
			Should(ContainSubstring("s_down"), "a sentinel with a wrong password never gets a valid PING reply")

		By("the server's CLIENT LIST shows the sentinels' connections as sentinel-user")
		Eventually(func() (string, error) {
			return admin.ClientList(ctx).Result()
		}).WithTimeout(10 * time.Second).WithPolling(100 * time.Millisecond).Should(
			MatchRegexp(`name=sentinel-[0-9a-f]{8}-cmd .*user=sentinel-user`))
	})
})
