package client

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

	"github.com/vigil-kv/vigil/integration"
)

const masterName = "mym"

// deployment is a master, its replicas and (optionally) sentinels.
type deployment struct {
	master    *integration.Server
	replicas  []*integration.Server
	sentinels []*integration.Server
}

func requireData() {
	GinkgoHelper()
	if dataSkip != "" {
		Skip(dataSkip)
	}
}

// startData starts a master and n replicas and waits until every replica is
// online at the master.
func startData(n int) *deployment {
	GinkgoHelper()
	requireData()
	d := &deployment{master: integration.StartServer("--repl-diskless-sync-delay", "0")}
	for i := 0; i < n; i++ {
		d.replicas = append(d.replicas, integration.StartServer("--repl-diskless-sync-delay", "0",
			"--replicaof", "127.0.0.1", strconv.Itoa(d.master.Port)))
	}
	m := direct(d.master.Addr())
	Eventually(func(g Gomega) {
		info, err := m.Info(context.Background(), "replication").Result()
		g.Expect(err).NotTo(HaveOccurred())
		for _, r := range d.replicas {
			g.Expect(info).To(MatchRegexp(`slave\d+:ip=127\.0\.0\.1,port=%d,state=online`, r.Port))
		}
	}).WithTimeout(30 * time.Second).WithPolling(50 * time.Millisecond).Should(Succeed())
	return d
}

// direct is a plain go-redis client of one node, closed when the spec ends.
func direct(addr string) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: 2 * time.Second, PoolSize: 4})
	DeferCleanup(c.Close)
	return c
}

// addSentinels starts n sentinels (quorum 2, down-after 1 s) on the master
// and waits until each knows every replica and every other sentinel.
func (d *deployment) addSentinels(n int) {
	GinkgoHelper()
	if sentinelSkip != "" {
		Skip(sentinelSkip)
	}
	for i := 0; i < n; i++ {
		d.sentinels = append(d.sentinels, startSentinel(d.master.Port))
	}
	for _, s := range d.sentinels {
		sc := redis.NewSentinelClient(&redis.Options{Addr: s.Addr(), MaxRetries: -1})
		DeferCleanup(sc.Close)
		Eventually(func(g Gomega) {
			ctx := context.Background()
			reps, err := sc.Replicas(ctx, masterName).Result()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(reps).To(HaveLen(len(d.replicas)))
			others, err := sc.Sentinels(ctx, masterName).Result()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(others).To(HaveLen(n - 1))
		}).WithTimeout(60*time.Second).WithPolling(100*time.Millisecond).Should(Succeed(),
			"sentinel %s should discover the replicas and the other sentinels", s.Addr())
	}
}

func (d *deployment) sentinelAddrs() []string {
	var a []string
	for _, s := range d.sentinels {
		a = append(a, s.Addr())
	}
	return a
}

// startSentinel starts sentinelBin on a free port monitoring the master.
func startSentinel(masterPort int) *integration.Server {
	GinkgoHelper()
	return startGroupSentinel(map[string]int{masterName: masterPort})
}

// startGroupSentinel starts sentinelBin on a free port monitoring every
// group (master name -> master port).
func startGroupSentinel(groups map[string]int) *integration.Server {
	GinkgoHelper()
	dir := integration.TempDir()
	port := integration.FreePort()
	conf := filepath.Join(dir, "sentinel.conf")
	text := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\n", port, dir)
	for name, mport := range groups {
		text += fmt.Sprintf("sentinel monitor %s 127.0.0.1 %d 2\nsentinel down-after-milliseconds %s 1000\n"+
			"sentinel failover-timeout %s 5000\n", name, mport, name, name)
	}
	Expect(os.WriteFile(conf, []byte(text), 0o644)).To(Succeed())
	logf, err := os.Create(filepath.Join(dir, "sentinel.log"))
	Expect(err).NotTo(HaveOccurred())
	s := &integration.Server{Bin: sentinelBin, Port: port, Dir: dir, Args: []string{conf}, LogPath: logf.Name()}
	cmd := exec.Command(sentinelBin, conf)
	cmd.Dir = dir
	s.Session, err = gexec.Start(cmd, logf, logf)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() {
		s.Session.Kill()
		Eventually(s.Session).WithTimeout(integration.ExitTimeout).Should(gexec.Exit())
		_ = logf.Close()
		if CurrentSpecReport().Failed() {
			fmt.Fprintf(GinkgoWriter, "---- sentinel %d output:\n%s\n", port, s.Log())
		}
	})
	c := direct(s.Addr())
	Eventually(func() error { return c.Ping(context.Background()).Err() }).
		WithTimeout(integration.StartTimeout).WithPolling(20*time.Millisecond).Should(Succeed(),
		"sentinel on port %d should answer PING; output:\n%s", port, s.Log())
	return s
}
