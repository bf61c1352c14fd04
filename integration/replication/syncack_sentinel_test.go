package replication

import (
	"fmt"
	"strings"
	"sync"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/redis/go-redis/v9"

	"github.com/vigil-kv/vigil/integration"
)

// ackListKey is the list the sync-ack failover spec pushes to.
const ackListKey = "syncack-list"

// startAckWriter pushes through a FailoverClient over the sentinels: in
// sync-ack mode an acknowledged push is one the master's replicas hold.
func startAckWriter(sentinels []string) *integration.PushWriter {
	GinkgoHelper()
	client := redis.NewFailoverClient(&redis.FailoverOptions{
		MasterName:    "mym",
		SentinelAddrs: sentinels,
		DialTimeout:   time.Second,
		ReadTimeout:   3 * time.Second,
		WriteTimeout:  time.Second,
		MaxRetries:    -1,
		PoolSize:      100,
	})
	DeferCleanup(client.Close)
	return integration.StartPushWriter(client, ackListKey, 3*time.Second)
}

// sentinelAddr is the address of the sentinel sc talks to (INFO tcp_port).
func sentinelAddr(sc *redis.SentinelClient) string {
	GinkgoHelper()
	cmd := redis.NewStringCmd(ctx, "INFO", "server")
	Expect(sc.Process(ctx, cmd)).To(Succeed())
	for _, l := range strings.Split(cmd.Val(), "\r\n") {
		if p, ok := strings.CutPrefix(l, "tcp_port:"); ok {
			return "127.0.0.1:" + p
		}
	}
	Fail("no tcp_port in the sentinel's INFO")
	return ""
}

// sentinelEvents records what a sentinel publishes on the given channels.
type sentinelEvents struct {
	mu   sync.Mutex
	list []string // "<channel> <payload>"
}

func watchSentinel(sc *redis.SentinelClient, channels ...string) *sentinelEvents {
	GinkgoHelper()
	e := &sentinelEvents{}
	ps := sc.Subscribe(ctx, channels...)
	for range channels {
		_, err := ps.Receive(ctx) // the confirmations
		Expect(err).NotTo(HaveOccurred())
	}
	ch := ps.Channel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m := range ch {
			e.mu.Lock()
			e.list = append(e.list, m.Channel+" "+m.Payload)
			e.mu.Unlock()
		}
	}()
	DeferCleanup(func() {
		_ = ps.Close()
		<-done
	})
	return e
}

func (e *sentinelEvents) of(channel string) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, l := range e.list {
		if p, ok := strings.CutPrefix(l, channel+" "); ok {
			out = append(out, p)
		}
	}
	return out
}

var _ = Describe("vigil-sentinel in sync-ack mode", Label("replication", "syncack", "failover", "slow"), func() {
	It("does not fail over while too few replicas can prove their offset, then promotes the greater offset; no acknowledged write is lost", func() {
		ackArgs := []string{"--min-replicas-ack", "1", "--min-replicas-ack-timeout", "2000"}
		m, r1, r2 := startTrio("", ackArgs, ackArgs)
		var scs []*redis.SentinelClient
		var addrs []string
		for i := 0; i < 3; i++ {
			sc := startSentinel(m)
			scs = append(scs, sc)
			addrs = append(addrs, sentinelAddr(sc))
		}
		By("the sentinels learn min-replicas-ack 1 and both replicas")
		waitDiscovered(scs, func(g Gomega, sc *redis.SentinelClient) {
			mi, err := sc.Master(ctx, "mym").Result()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(mi).To(HaveKeyWithValue("min-replicas-ack", "1"))
			g.Expect(mi).To(HaveKeyWithValue("ack-replicas", "2"))
			g.Expect(mi).To(HaveKeyWithValue("ack-replicas-needed", "2"))
			g.Expect(mi).To(HaveKeyWithValue("failover-blocked", "no"))
		})
		var evs []*sentinelEvents
		for _, sc := range scs {
			evs = append(evs, watchSentinel(sc, "+no-ack-quorum", "-no-ack-quorum", "+try-failover", "+selected-slave", "+switch-master"))
		}

		w := startAckWriter(addrs)
		Eventually(w.Count).WithTimeout(30 * time.Second).WithPolling(50 * time.Millisecond).Should(BeNumerically(">=", 50))

		By("SIGSTOP of r1: the writes go on, acknowledged by r2 alone")
		stopProcess(r1)
		n := w.Count()
		Eventually(w.Count).WithTimeout(30 * time.Second).WithPolling(50 * time.Millisecond).Should(BeNumerically(">=", n+20))
		// A stopped process's socket still takes in what the master sends,
		// up to its buffers: 24 MB more, acknowledged by r2, leave r1
		// behind for sure (r2 then has the greater offset).
		big := strings.Repeat("x", 8<<20)
		for i := 0; i < 3; i++ {
			Expect(m.c.Set(ctx, "big:"+itoa(i), big, 0).Err()).To(Succeed())
		}
		n = w.Count()
		Eventually(w.Count).WithTimeout(30 * time.Second).WithPolling(50 * time.Millisecond).Should(BeNumerically(">=", n+5))

		By("SIGKILL of the master: r2 alone cannot prove it holds every acknowledged write")
		m.Kill()
		for i, sc := range scs {
			Eventually(func(g Gomega) {
				mi, err := sc.Master(ctx, "mym").Result()
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(mi["flags"]).To(ContainSubstring("o_down"))
				g.Expect(mi["flags"]).To(ContainSubstring("no_ack_quorum"))
				g.Expect(mi["failover-blocked"]).To(HavePrefix("1 of 2 replicas prove their offset, 2 needed"))
				g.Expect(evs[i].of("+no-ack-quorum")).To(HaveLen(1))
			}).WithTimeout(30*time.Second).WithPolling(100*time.Millisecond).Should(Succeed(),
				func() string { return fmt.Sprint(evs[i].list) })
		}
		// Every sentinel holds the failover back: nothing of one happened.
		for i, sc := range scs {
			addr, err := sc.GetMasterAddrByName(ctx, "mym").Result()
			Expect(err).NotTo(HaveOccurred())
			Expect(addr[1]).To(Equal(itoa(m.Port)))
			Expect(evs[i].of("+try-failover")).To(BeEmpty())
			Expect(evs[i].of("+selected-slave")).To(BeEmpty())
		}
		Expect(r2.info("replication")["role"]).To(Equal("slave"))

		By("SIGCONT of r1: it proves its (smaller) offset, r2 is promoted")
		Expect(r1.Session.Command.Process.Signal(syscall.SIGCONT)).To(Succeed())
		Eventually(func(g Gomega) {
			for _, sc := range scs {
				addr, err := sc.GetMasterAddrByName(ctx, "mym").Result()
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(addr[1]).To(Equal(itoa(r2.Port)))
			}
		}).WithTimeout(60*time.Second).WithPolling(100*time.Millisecond).Should(Succeed(),
			func() string { return fmt.Sprint(evs[0].list, evs[1].list, evs[2].list) })
		selected := 0
		for _, e := range evs {
			for _, s := range e.of("+selected-slave") {
				selected++
				Expect(s).To(HavePrefix(fmt.Sprintf("slave 127.0.0.1:%d ", r2.Port)))
			}
			Expect(e.of("-no-ack-quorum")).NotTo(BeEmpty())
		}
		Expect(selected).To(Equal(1))

		By("writes go on through r2; every acknowledged push is on it")
		Eventually(func(g Gomega) {
			g.Expect(r2.info("replication")["role"]).To(Equal("master"))
			ri := r1.info("replication")
			g.Expect(ri["master_port"]).To(Equal(itoa(r2.Port)))
			g.Expect(ri["master_link_status"]).To(Equal("up"))
		}).WithTimeout(60 * time.Second).WithPolling(100 * time.Millisecond).Should(Succeed())
		n = w.Count()
		Eventually(w.Count).WithTimeout(60 * time.Second).WithPolling(50 * time.Millisecond).Should(BeNumerically(">=", n+20))
		w.Stop()
		for _, r := range []*node{r2, r1} {
			if r == r1 {
				waitSynced(r2, r1)
			}
			got, err := r.c.LRange(ctx, ackListKey, 0, -1).Result()
			Expect(err).NotTo(HaveOccurred())
			Expect(w.Missing(got)).To(BeEmpty(), "acknowledged pushes missing on %s (of %d)", r.Addr(), w.Count())
			for i := 0; i < 3; i++ {
				Expect(r.c.StrLen(ctx, "big:"+itoa(i)).Val()).To(Equal(int64(len(big))), "big:%d on %s", i, r.Addr())
			}
		}
		AddReportEntry("acknowledged pushes / failed", w.Report())
	})
})
