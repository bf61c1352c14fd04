package client

import (
	"context"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/redis/go-redis/v9"

	"github.com/vigil-kv/vigil/client"
)

var _ = Describe("client.NewRing over two sentinel-monitored groups", Label("slow"), func() {
	It("spreads keys over both groups and keeps writing after one group fails over", func() {
		ctx := context.Background()
		groups := map[string]*deployment{"ga": startData(1), "gb": startData(1)}
		if sentinelSkip != "" {
			Skip(sentinelSkip)
		}
		ports := map[string]int{}
		for name, d := range groups {
			ports[name] = d.master.Port
		}
		var sentinels []string
		var scs []*redis.SentinelClient
		for i := 0; i < 3; i++ {
			s := startGroupSentinel(ports)
			sentinels = append(sentinels, s.Addr())
			sc := redis.NewSentinelClient(&redis.Options{Addr: s.Addr(), MaxRetries: -1})
			DeferCleanup(sc.Close)
			scs = append(scs, sc)
		}
		for _, sc := range scs {
			for name := range groups {
				Eventually(func(g Gomega) {
					reps, err := sc.Replicas(ctx, name).Result()
					g.Expect(err).NotTo(HaveOccurred())
					g.Expect(reps).To(HaveLen(1))
					others, err := sc.Sentinels(ctx, name).Result()
					g.Expect(err).NotTo(HaveOccurred())
					g.Expect(others).To(HaveLen(2))
				}).WithTimeout(60*time.Second).WithPolling(100*time.Millisecond).Should(Succeed(),
					"every sentinel should know %s's replica and the other sentinels", name)
			}
		}

		r, err := client.NewRing(client.RingOptions{MasterNames: []string{"ga", "gb"},
			Options: client.Options{SentinelAddrs: sentinels, RetryWrites: true, MasterWait: 30 * time.Second}})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(r.Close)

		const n = 200
		for i := 0; i < n; i++ {
			Expect(r.Set(ctx, "k"+strconv.Itoa(i), "v1", 0).Err()).To(Succeed())
		}
		sizes := map[string]int64{}
		for name, d := range groups {
			sz, err := direct(d.master.Addr()).DBSize(ctx).Result()
			Expect(err).NotTo(HaveOccurred())
			sizes[name] = sz
		}
		Expect(sizes["ga"]).To(BeNumerically(">", 0), "group ga holds keys")
		Expect(sizes["gb"]).To(BeNumerically(">", 0), "group gb holds keys")
		Expect(sizes["ga"]+sizes["gb"]).To(BeEquivalentTo(n), "every key is in exactly one group")

		// Fail ga over to its replica; writes keep working and ga's keys
		// are found (with the new value) on ga's new master.
		ga := groups["ga"]
		Expect(scs[0].Failover(ctx, "ga").Err()).To(Succeed())
		newAddr := ga.replicas[0].Addr()
		Eventually(func(g Gomega) {
			a, err := r.Shard("ga").MasterAddr(ctx)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(a).To(Equal(newAddr))
		}).WithTimeout(60*time.Second).WithPolling(100*time.Millisecond).Should(Succeed(),
			"the ring's ga shard should follow the failover")
		for i := 0; i < n; i++ {
			Expect(r.Set(ctx, "k"+strconv.Itoa(i), "v2", 0).Err()).To(Succeed(), "write after ga's failover")
		}
		nm := direct(newAddr)
		sz, err := nm.DBSize(ctx).Result()
		Expect(err).NotTo(HaveOccurred())
		Expect(sz).To(Equal(sizes["ga"]), "ga's new master holds ga's keys")
		for i := 0; i < n; i++ {
			k := "k" + strconv.Itoa(i)
			Expect(r.Get(ctx, k).Val()).To(Equal("v2"), k)
		}
		gbSize, err := direct(groups["gb"].master.Addr()).DBSize(ctx).Result()
		Expect(err).NotTo(HaveOccurred())
		Expect(gbSize).To(Equal(sizes["gb"]), "gb keeps its keys")
	})
})
