package client

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/vigil-kv/vigil/client/lock"
)

var _ = Describe("client/lock on redis-server", func() {
	var d *deployment
	ctx := context.Background()

	BeforeEach(func() {
		d = startData(2)
	})

	It("excludes concurrent holders and hands out increasing fencing tokens", func() {
		rdb := direct(d.master.Addr())
		l := lock.New(rdb, lock.WithTTL(5*time.Second), lock.WithRetryInterval(time.Millisecond))
		var inside atomic.Int32
		var mu sync.Mutex
		var fences []int64
		var wg sync.WaitGroup
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func() {
				defer GinkgoRecover()
				defer wg.Done()
				for i := 0; i < 10; i++ {
					k, err := l.Acquire(ctx, "res")
					Expect(err).NotTo(HaveOccurred())
					Expect(inside.Add(1)).To(Equal(int32(1)), "two holders inside the lock")
					mu.Lock()
					fences = append(fences, k.Fence)
					mu.Unlock()
					inside.Add(-1)
					Expect(k.Release(ctx)).To(Succeed())
					Expect(k.Err()).To(MatchError(lock.ErrReleased))
				}
			}()
		}
		wg.Wait()
		Expect(fences).To(HaveLen(80))
		for i := 1; i < len(fences); i++ {
			Expect(fences[i]).To(BeNumerically(">", fences[i-1]), "fencing tokens in acquisition order")
		}
		Expect(rdb.Exists(ctx, "res").Val()).To(BeZero())
	})

	It("keeps a held lock alive with the watchdog and reports its loss", func() {
		rdb := direct(d.master.Addr())
		l := lock.New(rdb, lock.WithTTL(300*time.Millisecond))
		k, err := l.Acquire(ctx, "wd")
		Expect(err).NotTo(HaveOccurred())
		// Several TTLs pass: the watchdog keeps extending it.
		Consistently(func() int64 { return rdb.Exists(ctx, "wd").Val() }).
			WithTimeout(1200 * time.Millisecond).WithPolling(50 * time.Millisecond).Should(Equal(int64(1)))
		Expect(k.Err()).NotTo(HaveOccurred())
		// Someone deletes it: the watchdog notices and says so.
		Expect(rdb.Del(ctx, "wd").Err()).To(Succeed())
		Eventually(k.Done()).WithTimeout(5 * time.Second).Should(BeClosed())
		Expect(k.Err()).To(MatchError(lock.ErrLost))

		// Without the watchdog the lock expires.
		nl := lock.New(rdb, lock.WithTTL(200*time.Millisecond), lock.WithoutWatchdog())
		_, err = nl.Acquire(ctx, "nowd")
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() int64 { return rdb.Exists(ctx, "nowd").Val() }).WithTimeout(5 * time.Second).Should(BeZero())
	})

	It("refuses to release a lock that someone else now holds", func() {
		rdb := direct(d.master.Addr())
		short := lock.New(rdb, lock.WithTTL(100*time.Millisecond), lock.WithoutWatchdog())
		a, err := short.Acquire(ctx, "r")
		Expect(err).NotTo(HaveOccurred())
		other := lock.New(rdb, lock.WithTTL(10*time.Second), lock.WithRetryInterval(10*time.Millisecond))
		b, err := other.Acquire(ctx, "r") // succeeds once a's lock expired
		Expect(err).NotTo(HaveOccurred())
		Expect(b.Fence).To(BeNumerically(">", a.Fence))
		Expect(a.Release(ctx)).To(MatchError(lock.ErrNotHeld))
		Expect(rdb.Get(ctx, "r").Val()).To(Equal(b.Token), "b's lock survives a's release")
		_, err = short.TryAcquire(ctx, "r")
		Expect(err).To(MatchError(lock.ErrNotAcquired))
		Expect(b.Release(ctx)).To(Succeed())
	})

	It("is reentrant for one holder", func() {
		rdb := direct(d.master.Addr())
		h1 := lock.New(rdb, lock.WithReentrancy("holder-1"))
		h2 := lock.New(rdb, lock.WithReentrancy("holder-2"))
		outer, err := h1.TryAcquire(ctx, "re")
		Expect(err).NotTo(HaveOccurred())
		inner, err := h1.TryAcquire(ctx, "re")
		Expect(err).NotTo(HaveOccurred())
		Expect(inner.Fence).To(Equal(outer.Fence), "a re-entry is the same holding")
		Expect(rdb.HGet(ctx, "re", "holder-1").Val()).To(Equal("2"))
		_, err = h2.TryAcquire(ctx, "re")
		Expect(err).To(MatchError(lock.ErrNotAcquired))

		Expect(inner.Release(ctx)).To(Succeed())
		_, err = h2.TryAcquire(ctx, "re")
		Expect(err).To(MatchError(lock.ErrNotAcquired), "still held once")
		Expect(outer.Release(ctx)).To(Succeed())
		Expect(rdb.Exists(ctx, "re").Val()).To(BeZero())
		next, err := h2.TryAcquire(ctx, "re")
		Expect(err).NotTo(HaveOccurred())
		Expect(next.Fence).To(BeNumerically(">", outer.Fence))
		Expect(outer.Release(ctx)).To(MatchError(lock.ErrNotHeld))
		Expect(next.Release(ctx)).To(Succeed())
	})

	It("WithReplicas(1) succeeds with replicas up and fails without them", func() {
		rdb := direct(d.master.Addr())
		l := lock.New(rdb, lock.WithReplicas(1, time.Second))
		k, err := l.TryAcquire(ctx, "w")
		Expect(err).NotTo(HaveOccurred())
		Expect(k.Release(ctx)).To(Succeed())

		for _, r := range d.replicas {
			r.Kill()
		}
		Eventually(func() string { return rdb.Info(ctx, "replication").Val() }).
			WithTimeout(10 * time.Second).Should(ContainSubstring("connected_slaves:0"))
		_, err = l.TryAcquire(ctx, "w")
		var ne *lock.NotEnoughReplicasError
		Expect(errors.As(err, &ne)).To(BeTrue(), "got %v", err)
		Expect(ne.Acked).To(BeZero())
		Expect(rdb.Exists(ctx, "w").Val()).To(BeZero(), "an unreplicated lock is not left behind")
	})
})
