package replication

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/redis/go-redis/v9"
)

// The FAILOVER command (Redis 7.0's coordinated failover, issue 22) over
// real processes: vigil-server on both sides, and redis-server 7.0 as
// either side.

const failoverTimeout = 20 * time.Second

func (n *node) role() string {
	GinkgoHelper()
	v, err := n.c.Do(ctx, "ROLE").Slice()
	Expect(err).NotTo(HaveOccurred())
	return v[0].(string)
}

func (n *node) failoverState() string {
	GinkgoHelper()
	return n.info("replication")["master_failover_state"]
}

// waitSwapped polls until old follows nu, nu is a master and old's
// failover state is back to no-failover.
func waitSwapped(old, nu *node) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		oi := old.info("replication")
		g.Expect(oi["role"]).To(Equal("slave"))
		g.Expect(oi["master_port"]).To(Equal(itoa(nu.Port)))
		g.Expect(oi["master_failover_state"]).To(Equal("no-failover"))
		g.Expect(oi["master_link_status"]).To(Equal("up"))
		g.Expect(nu.info("replication")["role"]).To(Equal("master"))
	}).WithTimeout(failoverTimeout).WithPolling(20 * time.Millisecond).Should(Succeed())
}

// writer SETs w:<i> on c until stopped or refused, and remembers the
// acknowledged ones.
type writer struct {
	mu    sync.Mutex
	acked []int
	errs  []error
	stop  chan struct{}
	done  chan struct{}
}

func startWriter(c *redis.Client) *writer {
	w := &writer{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer GinkgoRecover()
		defer close(w.done)
		for i := 0; ; i++ {
			select {
			case <-w.stop:
				return
			default:
			}
			err := c.Set(ctx, "w:"+strconv.Itoa(i), i, 0).Err()
			w.mu.Lock()
			if err == nil {
				w.acked = append(w.acked, i)
			} else {
				w.errs = append(w.errs, err)
			}
			w.mu.Unlock()
			if err != nil {
				return // the old master answered -READONLY: it is a replica now
			}
		}
	}()
	return w
}

func (w *writer) finish() ([]int, []error) {
	close(w.stop)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.acked, w.errs
}

var _ = Describe("FAILOVER", Label("replication", "failover"), func() {
	It("swaps a master and its replica without losing an acknowledged write", func() {
		m := startVigil()
		r := startVigil("--replicaof", "127.0.0.1", itoa(m.Port))
		populate(m.c, "pre:")
		waitSynced(m, r)
		wc := redis.NewClient(&redis.Options{Addr: m.Addr(), MaxRetries: -1, ReadTimeout: 30 * time.Second})
		DeferCleanup(wc.Close)
		w := startWriter(wc)
		Eventually(func() int { w.mu.Lock(); defer w.mu.Unlock(); return len(w.acked) }).Should(BeNumerically(">", 50))
		Expect(m.c.Do(ctx, "FAILOVER").Err()).To(Succeed())
		waitSwapped(m, r)
		Eventually(w.done).WithTimeout(failoverTimeout).Should(BeClosed())
		acked, errs := w.finish()
		Expect(errs).To(HaveLen(1))
		Expect(errs[0]).To(MatchError("READONLY You can't write against a read only replica."))
		for _, i := range acked {
			Expect(r.c.Get(ctx, "w:"+strconv.Itoa(i)).Val()).To(Equal(strconv.Itoa(i)), "acknowledged write w:%d", i)
		}
		Expect(r.c.Exists(ctx, "w:"+strconv.Itoa(len(acked))).Val()).To(BeZero(), "the refused write")
		// The roles are swapped for good: the new master streams to the old.
		Expect(r.c.Set(ctx, "after", "1", 0).Err()).To(Succeed())
		waitSynced(r, m)
		Expect(m.dump()).To(Equal(r.dump()))
		Expect(m.c.Set(ctx, "x", "1", 0).Err()).To(MatchError("READONLY You can't write against a read only replica."))
		// The old master resumed with a partial resync (+CONTINUE <new id>).
		Expect(r.stat("sync_partial_ok")).To(Equal(int64(1)))
	})

	It("fails over TO the replica named; the other one follows the old master", func() {
		m := startVigil()
		r1 := startVigil("--replicaof", "127.0.0.1", itoa(m.Port))
		r2 := startVigil("--replicaof", "127.0.0.1", itoa(m.Port))
		Expect(m.c.Set(ctx, "k", "v", 0).Err()).To(Succeed())
		waitSynced(m, r1)
		waitSynced(m, r2)
		Expect(m.c.Do(ctx, "FAILOVER", "TO", "127.0.0.1", r2.Port).Err()).To(Succeed())
		waitSwapped(m, r2)
		Expect(r1.role()).To(Equal("slave"))
		Expect(r1.info("replication")["master_port"]).To(Equal(itoa(m.Port)))
		Expect(r2.c.Set(ctx, "k2", "v2", 0).Err()).To(Succeed())
		waitSynced(r2, m)
		waitSynced(m, r1)
		Expect(r1.c.Get(ctx, "k2").Val()).To(Equal("v2"))
	})

	It("aborts at the TIMEOUT when the replica cannot catch up (SIGSTOP), and on FAILOVER ABORT", func() {
		m := startVigil()
		r := startVigil("--replicaof", "127.0.0.1", itoa(m.Port))
		waitSynced(m, r)
		Expect(r.Session.Command.Process.Signal(syscall.SIGSTOP)).To(Succeed())
		DeferCleanup(func() { _ = r.Session.Command.Process.Signal(syscall.SIGCONT) })
		Expect(m.c.Set(ctx, "k", "v", 0).Err()).To(Succeed())

		Expect(m.c.Do(ctx, "FAILOVER", "TIMEOUT", "500").Err()).To(Succeed())
		Expect(m.failoverState()).To(Equal("waiting-for-sync"))
		Expect(m.c.Do(ctx, "FAILOVER").Err()).To(MatchError("ERR FAILOVER already in progress."))
		Eventually(m.failoverState).WithTimeout(failoverTimeout).Should(Equal("no-failover"))
		Expect(m.role()).To(Equal("master"))
		Expect(m.c.Set(ctx, "k", "v2", 0).Err()).To(Succeed())
		Expect(m.Log()).To(ContainSubstring("FAILOVER to any replica aborted: Replica never caught up before timeout"))

		Expect(m.c.Do(ctx, "FAILOVER").Err()).To(Succeed())
		// A write now waits for the failover to end.
		wc := redis.NewClient(&redis.Options{Addr: m.Addr(), MaxRetries: -1, ReadTimeout: 30 * time.Second})
		DeferCleanup(wc.Close)
		res := make(chan error, 1)
		go func() { res <- wc.Set(ctx, "paused", "1", 0).Err() }()
		Eventually(func() string { return m.info("clients")["blocked_clients"] }).Should(Equal("1"))
		Expect(m.failoverState()).To(Equal("waiting-for-sync"))
		Expect(m.c.Do(ctx, "FAILOVER", "ABORT").Err()).To(Succeed())
		Eventually(res).Should(Receive(BeNil()))
		Expect(m.failoverState()).To(Equal("no-failover"))
		Expect(m.c.Do(ctx, "FAILOVER", "ABORT").Err()).To(MatchError("ERR No failover in progress."))
	})

	It("with FORCE fails over to the target at the TIMEOUT even if it has not caught up", func() {
		m := startVigil()
		r := startVigil("--replicaof", "127.0.0.1", itoa(m.Port))
		Expect(m.c.Set(ctx, "k", "v", 0).Err()).To(Succeed())
		waitSynced(m, r)
		Expect(r.Session.Command.Process.Signal(syscall.SIGSTOP)).To(Succeed())
		DeferCleanup(func() { _ = r.Session.Command.Process.Signal(syscall.SIGCONT) })
		Expect(m.c.Set(ctx, "k", "lost-or-not", 0).Err()).To(Succeed())
		Expect(m.c.Do(ctx, "FAILOVER", "TO", "127.0.0.1", r.Port, "TIMEOUT", "300", "FORCE").Err()).To(Succeed())
		Eventually(m.failoverState).WithTimeout(failoverTimeout).Should(Equal("failover-in-progress"))
		Expect(m.role()).To(Equal("slave"))
		Expect(r.Session.Command.Process.Signal(syscall.SIGCONT)).To(Succeed())
		waitSwapped(m, r)
		Expect(m.Log()).To(ContainSubstring(fmt.Sprintf("FAILOVER to 127.0.0.1:%d time out exceeded, failing over.", r.Port)))
		waitSynced(r, m)
		Expect(m.dump()).To(Equal(r.dump()))
	})

	It("answers the errors redis-server 7.0 answers", func() {
		cases := func(m, r, r2 *node) []string {
			var out []string
			do := func(c *redis.Client, args ...any) {
				err := c.Do(ctx, args...).Err()
				out = append(out, fmt.Sprintf("%v -> %v", args, err))
			}
			// No replica yet.
			do(m.c, "FAILOVER")
			do(m.c, "FAILOVER", "ABORT")
			do(m.c, "FAILOVER", "TIMEOUT", "0")
			do(m.c, "FAILOVER", "TIMEOUT", "-5")
			do(m.c, "FAILOVER", "TIMEOUT", "x")
			do(m.c, "FAILOVER", "TO", "127.0.0.1", "port")
			do(m.c, "FAILOVER", "TO", "127.0.0.1")
			do(m.c, "FAILOVER", "ABORT", "NOW")
			do(m.c, "FAILOVER", "FORCE", "FORCE")
			do(m.c, "FAILOVER", "TO", "127.0.0.1", r.Port)
			r.replicaOf(m)
			waitSynced(m, r)
			do(m.c, "FAILOVER", "FORCE")
			do(m.c, "FAILOVER", "TIMEOUT", "100", "FORCE")
			do(m.c, "FAILOVER", "TO", "127.0.0.1", r.Port, "FORCE")
			do(m.c, "FAILOVER", "TO", "127.0.0.1", "1")
			do(m.c, "FAILOVER", "TO", "10.255.255.1", r.Port)
			// A replica still waiting for its full sync is not online.
			Expect(m.c.Do(ctx, "CONFIG", "SET", "repl-diskless-sync-delay", "60").Err()).To(Succeed())
			r2.replicaOf(m)
			Eventually(func() string { return m.info("replication")["slave1"] }).WithTimeout(failoverTimeout).
				Should(ContainSubstring(",state=wait_bgsave,"))
			do(m.c, "FAILOVER", "TO", "127.0.0.1", r2.Port)
			do(r.c, "FAILOVER")
			do(r.c, "FAILOVER", "ABORT")
			do(m.c, "PSYNC", "x", "1", "FAILOVER")
			do(r.c, "PSYNC", "x", "1", "FAILOVER")
			return out
		}
		want := []string{
			"[FAILOVER] -> ERR FAILOVER requires connected replicas.",
			"[FAILOVER ABORT] -> ERR No failover in progress.",
			"[FAILOVER TIMEOUT 0] -> ERR FAILOVER timeout must be greater than 0",
			"[FAILOVER TIMEOUT -5] -> ERR FAILOVER timeout must be greater than 0",
			"[FAILOVER TIMEOUT x] -> ERR value is not an integer or out of range",
			"[FAILOVER TO 127.0.0.1 port] -> ERR value is not an integer or out of range",
			"[FAILOVER TO 127.0.0.1] -> ERR syntax error",
			"[FAILOVER ABORT NOW] -> ERR syntax error",
			"[FAILOVER FORCE FORCE] -> ERR syntax error",
			"[FAILOVER TO 127.0.0.1 <port>] -> ERR FAILOVER requires connected replicas.",
			"[FAILOVER FORCE] -> ERR FAILOVER with force option requires both a timeout and target HOST and IP.",
			"[FAILOVER TIMEOUT 100 FORCE] -> ERR FAILOVER with force option requires both a timeout and target HOST and IP.",
			"[FAILOVER TO 127.0.0.1 <port> FORCE] -> ERR FAILOVER with force option requires both a timeout and target HOST and IP.",
			"[FAILOVER TO 127.0.0.1 1] -> ERR FAILOVER target HOST and PORT is not a replica.",
			"[FAILOVER TO 10.255.255.1 <port>] -> ERR FAILOVER target HOST and PORT is not a replica.",
			"[FAILOVER TO 127.0.0.1 <port2>] -> ERR FAILOVER target replica is not online.",
			"[FAILOVER] -> ERR FAILOVER is not valid when server is a replica.",
			"[FAILOVER ABORT] -> ERR No failover in progress.",
			"[PSYNC x 1 FAILOVER] -> ERR PSYNC FAILOVER can't be sent to a master.",
			"[PSYNC x 1 FAILOVER] -> ERR PSYNC FAILOVER replid must match my replid.",
		}
		expect := func(got []string, r, r2 *node) {
			GinkgoHelper()
			Expect(got).To(HaveLen(len(want)))
			for i, w := range want {
				w = strings.ReplaceAll(strings.ReplaceAll(w, "<port2>", itoa(r2.Port)), "<port>", itoa(r.Port))
				Expect(got[i]).To(Equal(w))
			}
		}
		vm, vr, vr2 := startVigil(), startVigil(), startVigil()
		expect(cases(vm, vr, vr2), vr, vr2)
		if redisServerBin != "" {
			rm, rr, rr2 := startRedis(), startRedis(), startRedis()
			expect(cases(rm, rr, rr2), rr, rr2)
		} else {
			fmt.Fprintln(GinkgoWriter, "redis-server not installed (apt-get install -y redis-server): compared with the recorded 7.0.15 replies only")
		}
	})
})

var _ = Describe("FAILOVER with redis-server 7.0", Label("replication", "failover", "interop"), func() {
	It("vigil-server master fails over to a redis-server replica", func() {
		m := startVigil()
		r := startRedis("--replicaof", "127.0.0.1", itoa(m.Port))
		populate(m.c, "pre:")
		waitSynced(m, r)
		Expect(m.c.Do(ctx, "FAILOVER", "TO", "127.0.0.1", r.Port).Err()).To(Succeed())
		waitSwapped(m, r)
		Expect(r.c.Set(ctx, "after", "1", 0).Err()).To(Succeed())
		waitSynced(r, m)
		Expect(m.dump()).To(Equal(r.dump()))
		Expect(r.stat("sync_partial_ok")).To(Equal(int64(1)))
	})

	It("redis-server master fails over to a vigil-server replica", func() {
		m := startRedis()
		r := startVigil("--replicaof", "127.0.0.1", itoa(m.Port))
		populate(m.c, "pre:")
		waitSynced(m, r)
		Expect(m.c.Do(ctx, "FAILOVER").Err()).To(Succeed())
		waitSwapped(m, r)
		Expect(r.c.Set(ctx, "after", "1", 0).Err()).To(Succeed())
		waitSynced(r, m)
		Expect(m.dump()).To(Equal(r.dump()))
		Expect(r.stat("sync_partial_ok")).To(Equal(int64(1)))
		Expect(r.Log()).To(ContainSubstring("MASTER MODE enabled (failover request from '"))
	})
})
