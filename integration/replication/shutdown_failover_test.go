package replication

import (
	"strconv"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
	"github.com/redis/go-redis/v9"
)

// SHUTDOWN ... FAILOVER and shutdown-on-sigterm failover (Vigil): a master
// hands over to its best replica before it exits, and refuses to exit when
// the hand-over fails.

// waitMaster polls until one of rs reports role:master and returns it.
func waitMaster(rs ...*node) *node {
	GinkgoHelper()
	var m *node
	Eventually(func() bool {
		for _, r := range rs {
			if r.info("replication")["role"] == "master" {
				m = r
				return true
			}
		}
		return false
	}).WithTimeout(failoverTimeout).WithPolling(20 * time.Millisecond).Should(BeTrue())
	return m
}

var _ = Describe("SHUTDOWN FAILOVER", Label("replication", "failover"), func() {
	It("hands over to the best replica, then exits; every acknowledged write is on the new master", func() {
		m := startVigil()
		r1 := startVigil("--replicaof", "127.0.0.1", itoa(m.Port))
		r2 := startVigil("--replicaof", "127.0.0.1", itoa(m.Port))
		populate(m.c, "pre:")
		waitSynced(m, r1)
		waitSynced(m, r2)
		wc := redis.NewClient(&redis.Options{Addr: m.Addr(), MaxRetries: -1, ReadTimeout: 30 * time.Second})
		DeferCleanup(wc.Close)
		w := startWriter(wc)
		Eventually(func() int { w.mu.Lock(); defer w.mu.Unlock(); return len(w.acked) }).Should(BeNumerically(">", 50))

		sc := redis.NewClient(&redis.Options{Addr: m.Addr(), MaxRetries: -1, ReadTimeout: 30 * time.Second})
		DeferCleanup(sc.Close)
		err := sc.Do(ctx, "SHUTDOWN", "NOSAVE", "FAILOVER").Err()
		Expect(err).To(HaveOccurred(), "no reply: the connection closes")
		Expect(err.Error()).NotTo(HavePrefix("ERR"))
		Eventually(m.Session).WithTimeout(failoverTimeout).Should(gexec.Exit(0))
		Eventually(w.done).WithTimeout(failoverTimeout).Should(BeClosed())
		acked, _ := w.finish()
		nu := waitMaster(r1, r2)
		for _, i := range acked {
			Expect(nu.c.Get(ctx, "w:"+strconv.Itoa(i)).Val()).To(Equal(strconv.Itoa(i)), "acknowledged write w:%d", i)
		}
		Expect(m.Log()).To(ContainSubstring("FAILOVER requested to 127.0.0.1:" + itoa(nu.Port)))
	})

	It("refuses the shutdown, and stays the master, when the replica cannot catch up", func() {
		m := startVigil("--shutdown-timeout", "1")
		r := startVigil("--replicaof", "127.0.0.1", itoa(m.Port))
		waitSynced(m, r)
		Expect(r.Session.Command.Process.Signal(syscall.SIGSTOP)).To(Succeed())
		DeferCleanup(func() { _ = r.Session.Command.Process.Signal(syscall.SIGCONT) })
		Expect(m.c.Set(ctx, "k", "v", 0).Err()).To(Succeed())
		err := m.c.Do(ctx, "SHUTDOWN", "FAILOVER").Err()
		Expect(err).To(MatchError(HavePrefix("ERR SHUTDOWN FAILOVER refused: the failover was aborted (Replica never caught up before timeout)")))
		Expect(m.role()).To(Equal("master"))
		Expect(m.failoverState()).To(Equal("no-failover"))
		Expect(m.c.Set(ctx, "k", "v2", 0).Err()).To(Succeed())
		Expect(m.Session.ExitCode()).To(Equal(-1), "still running")
	})

	It("answers errors when there is nothing to hand over to", func() {
		m := startVigil()
		Expect(m.c.Do(ctx, "SHUTDOWN", "FAILOVER").Err()).To(MatchError("ERR SHUTDOWN FAILOVER requires an online replica."))
		Expect(m.c.Do(ctx, "SHUTDOWN", "ABORT", "FAILOVER").Err()).To(MatchError("ERR syntax error"))
		Expect(m.c.Do(ctx, "SHUTDOWN", "ABORT").Err()).To(MatchError("ERR No shutdown in progress."))
		r := startVigil("--replicaof", "127.0.0.1", itoa(m.Port))
		waitSynced(m, r)
		Expect(r.c.Do(ctx, "SHUTDOWN", "FAILOVER").Err()).To(MatchError("ERR SHUTDOWN FAILOVER is not valid when server is a replica."))
		Expect(m.Session.ExitCode()).To(Equal(-1))
		Expect(r.Session.ExitCode()).To(Equal(-1))
	})

	It("with shutdown-on-sigterm failover, SIGTERM hands over first", func() {
		m := startVigil("--shutdown-on-sigterm", "failover")
		r := startVigil("--replicaof", "127.0.0.1", itoa(m.Port))
		Expect(m.c.Set(ctx, "k", "v", 0).Err()).To(Succeed())
		waitSynced(m, r)
		Expect(m.c.ConfigGet(ctx, "shutdown-on-sigterm").Val()).To(HaveKeyWithValue("shutdown-on-sigterm", "failover"))
		Expect(m.Session.Command.Process.Signal(syscall.SIGTERM)).To(Succeed())
		Eventually(m.Session).WithTimeout(failoverTimeout).Should(gexec.Exit(0))
		Expect(r.role()).To(Equal("master"))
		Expect(r.c.Get(ctx, "k").Val()).To(Equal("v"))
		Expect(m.Log()).To(ContainSubstring("SIGTERM received: handing over to a replica before shutting down"))
	})
})
