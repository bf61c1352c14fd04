package replication

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/redis/go-redis/v9"
)

// stopProcess SIGSTOPs n and waits until the kernel reports it stopped
// (state T in /proc/PID/stat), so that from then on it acknowledges
// nothing; SIGCONT is sent when the spec ends, before the process is
// killed.
func stopProcess(n *node) {
	GinkgoHelper()
	p := n.Session.Command.Process
	Expect(p.Signal(syscall.SIGSTOP)).To(Succeed())
	DeferCleanup(func() { _ = p.Signal(syscall.SIGCONT) })
	Eventually(func() (string, error) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.Pid))
		if err != nil {
			return "", err
		}
		// pid (comm) S ...: the state follows the last ')'.
		s := string(b)
		return strings.Fields(s[strings.LastIndexByte(s, ')')+1:])[0], nil
	}).WithTimeout(5 * time.Second).WithPolling(10 * time.Millisecond).Should(Equal("T"))
}

// unacked matches the sync-ack timeout error (docs/safety.md).
func unacked() OmegaMatcher {
	return MatchError(HavePrefix("UNACKED Write may or may not be applied: "))
}

// setAcked writes key=val on m and checks that, as soon as the reply is
// in, every replica already has it: read at once, no polling.
func setAcked(m *node, key, val string, reps ...*node) {
	GinkgoHelper()
	Expect(m.c.Set(ctx, key, val, 0).Err()).To(Succeed())
	for _, r := range reps {
		Expect(r.c.Get(ctx, key).Result()).To(Equal(val), "replica %s right after the reply", r.Addr())
	}
}

var _ = Describe("sync-ack mode", Label("replication", "syncack"), func() {
	It("holds a write's reply until the replica has it; a stopped replica gets UNACKED, and so do reads", func() {
		m := startVigil("--min-replicas-ack", "1", "--min-replicas-ack-timeout", "500")
		r := startVigil("--replicaof", "127.0.0.1", itoa(m.Port))
		waitSynced(m, r)

		By("writes through go-redis: each acknowledged key is on the replica at reply time")
		for i := 0; i < 50; i++ {
			setAcked(m, "ack:"+itoa(i), "v"+itoa(i), r)
		}
		Expect(m.c.Incr(ctx, "ack:counter").Val()).To(Equal(int64(1)))
		Expect(r.c.Get(ctx, "ack:counter").Result()).To(Equal("1"))

		By("SIGSTOP of the replica: a write gets UNACKED")
		stopProcess(r)
		Expect(m.c.Set(ctx, "ack:stopped", "x", 0).Err()).To(unacked())
		Expect(m.c.Set(ctx, "ack:stopped", "x", 0).Err()).To(MatchError(ContainSubstring("acknowledged by 0 of 1 required replicas within 500 ms")))

		By("while a write is held, INFO is served and a read, which would see it, gets UNACKED instead of the value")
		reader := redis.NewClient(m.ClientOptions(2))
		DeferCleanup(reader.Close)
		// One held write per attempt: the hold lasts 500 ms, so a very
		// slow round of INFO could miss it; the attempt is then repeated.
		Eventually(func(g Gomega) {
			done := make(chan error, 1)
			go func() { done <- m.c.Set(ctx, "ack:held", "y", 0).Err() }()
			served := false
		wait:
			for {
				select {
				case err := <-done:
					g.Expect(err).To(unacked())
					break wait
				default:
				}
				info, err := reader.Info(ctx, "replication").Result()
				g.Expect(err).NotTo(HaveOccurred())
				if strings.Contains(info, "\r\nsync_ack_waiting_clients:1\r\n") {
					g.Expect(reader.Get(ctx, "ack:0").Err()).To(MatchError(ContainSubstring("UNACKED Read not served")))
					served = true
				}
			}
			g.Expect(served).To(BeTrue(), "no read was tried while the write was held")
		}).WithTimeout(20 * time.Second).Should(Succeed())

		By("SIGCONT: writes succeed again, on the replica at reply time")
		Expect(r.Session.Command.Process.Signal(syscall.SIGCONT)).To(Succeed())
		Eventually(func() error { return m.c.Set(ctx, "ack:back", "z", 0).Err() }).
			WithTimeout(syncTimeout).WithPolling(50 * time.Millisecond).Should(Succeed())
		for i := 0; i < 20; i++ {
			setAcked(m, "ack:after:"+itoa(i), "w"+itoa(i), r)
		}
		st := m.info("replication")
		Expect(st["min_replicas_ack"]).To(Equal("1"))
		Expect(st["sync_ack_waiting_clients"]).To(Equal("0"))
		Expect(st["sync_ack_timeouts"]).NotTo(Equal("0"))
	})

	It("with min-replicas-ack 2 and one of two replicas stopped, a write gets UNACKED", func() {
		m := startVigil("--min-replicas-ack", "2", "--min-replicas-ack-timeout", "500")
		r1 := startVigil("--replicaof", "127.0.0.1", itoa(m.Port))
		r2 := startVigil("--replicaof", "127.0.0.1", itoa(m.Port))
		waitSynced(m, r1)
		waitSynced(m, r2)
		for i := 0; i < 20; i++ {
			setAcked(m, "two:"+itoa(i), "v"+itoa(i), r1, r2)
		}

		stopProcess(r2)
		err := m.c.Set(ctx, "two:stopped", "x", 0).Err()
		Expect(err).To(unacked())
		Expect(err).To(MatchError(ContainSubstring(" of 2 required replicas within 500 ms")))
		// r1 still takes the stream (its acknowledgement alone is not enough).
		waitSynced(m, r1)
		Expect(r1.c.Get(ctx, "two:stopped").Result()).To(Equal("x"))

		Expect(r2.Session.Command.Process.Signal(syscall.SIGCONT)).To(Succeed())
		Eventually(func() error { return m.c.Set(ctx, "two:back", "z", 0).Err() }).
			WithTimeout(syncTimeout).WithPolling(50 * time.Millisecond).Should(Succeed())
		setAcked(m, "two:after", "w", r1, r2)
	})
})
