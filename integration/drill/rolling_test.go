package drill

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"github.com/onsi/gomega/gexec"
	"github.com/redis/go-redis/v9"

	"github.com/vigil-kv/vigil/internal/deploy"
)

// supervise starts every node again when it exits, as systemd would,
// until the spec ends.
func supervise(dep *deploy.Deployment) {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, n := range dep.Nodes() {
		wg.Add(1)
		go func(n *deploy.Node) {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				case <-n.Done():
				}
				select {
				case <-stop:
					return
				default:
				}
				_ = n.Start()
			}
		}(n)
	}
	DeferCleanup(func() {
		close(stop)
		wg.Wait()
		_ = dep.Stop()
	})
}

var _ = Describe("vigil rolling-restart", Label("drill"), func() {
	It("restarts a supervised vigil deployment node by node, the master handing over first, losing no acknowledged write", func() {
		dir := GinkgoT().TempDir()
		base, sbase := freeRange(3), freeRange(3)
		dep, err := deploy.New(deploy.Spec{Kind: deploy.KindVigil, VigilExe: vigilBin, Dir: filepath.Join(dir, "data"),
			BasePort: base, SentinelBasePort: sbase, DownAfter: time.Second, FailoverTimeout: 4 * time.Second,
			StopTimeout: 5 * time.Second})
		Expect(err).NotTo(HaveOccurred())
		Expect(dep.Start()).To(Succeed())
		supervise(dep)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		Expect(dep.WaitHealthy(ctx)).To(Succeed())
		old, err := dep.CurrentMaster(ctx)
		Expect(err).NotTo(HaveOccurred())

		fc := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: dep.Spec.MasterName, SentinelAddrs: dep.SentinelAddrs(),
			DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second, MaxRetries: -1})
		DeferCleanup(fc.Close)
		var mu sync.Mutex
		var acked []int
		wctx, wstop := context.WithCancel(context.Background())
		wdone := make(chan struct{})
		go func() {
			defer close(wdone)
			for i := 0; wctx.Err() == nil; i++ {
				if fc.RPush(wctx, "rolling", i).Err() == nil {
					mu.Lock()
					acked = append(acked, i)
					mu.Unlock()
				}
				time.Sleep(5 * time.Millisecond)
			}
		}()
		DeferCleanup(func() { wstop(); <-wdone })

		cmd := exec.Command(vigilBin, "rolling-restart", "--sentinel", dep.SentinelAddrs()[0], "--master", dep.Spec.MasterName,
			"--timeout", "60s")
		s, err := gexec.Start(cmd, GinkgoWriter, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		Eventually(s, 150*time.Second).Should(gexec.Exit(0))
		Expect(s.Out).To(gbytes.Say("hand over from " + old.PeerAddr()))
		Expect(s.Out).To(gbytes.Say("new master "))
		Expect(s.Out).To(gbytes.Say("done"))

		nu, err := dep.CurrentMaster(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(nu).NotTo(Equal(old), "the master handed over")
		wstop()
		<-wdone
		cl := redis.NewClient(&redis.Options{Addr: nu.PeerAddr()})
		defer cl.Close()
		got, err := cl.LRange(ctx, "rolling", 0, -1).Result()
		Expect(err).NotTo(HaveOccurred())
		have := map[string]bool{}
		for _, v := range got {
			have[v] = true
		}
		mu.Lock()
		defer mu.Unlock()
		Expect(len(acked)).To(BeNumerically(">", 0))
		var lost []int
		for _, i := range acked {
			if !have[fmt.Sprint(i)] {
				lost = append(lost, i)
			}
		}
		Expect(lost).To(BeEmpty(), "acknowledged pushes lost (of %d)", len(acked))
		AddReportEntry("rolling-restart", fmt.Sprintf("%d acknowledged pushes, none lost", len(acked)))
	})
})
