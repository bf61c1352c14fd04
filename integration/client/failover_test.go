package client

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/redis/go-redis/v9"

	"github.com/vigil-kv/vigil/client"
	"github.com/vigil-kv/vigil/client/lock"
)

// sent is one write on the wire: when it started, where it went.
type sent struct {
	at   time.Time
	addr string
}

// wireLog is a go-redis hook recording, per connection write that succeeded,
// the address it was written to and when the write began. It wraps the
// client's own connections, so it sees exactly what reaches the network.
type wireLog struct {
	mu     sync.Mutex
	writes []sent
	// firstOK is the first SET that succeeded after switchedAt was set.
	switchedAt atomic.Pointer[time.Time]
	firstOK    atomic.Pointer[time.Time]
}

type loggedConn struct {
	net.Conn
	log *wireLog
}

func (c loggedConn) Write(b []byte) (int, error) {
	at := time.Now()
	n, err := c.Conn.Write(b)
	if n > 0 && strings.Contains(strings.ToLower(string(b)), "$3\r\nset\r\n") {
		c.log.mu.Lock()
		c.log.writes = append(c.log.writes, sent{at, c.Conn.RemoteAddr().String()})
		c.log.mu.Unlock()
	}
	return n, err
}

func (w *wireLog) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := next(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return loggedConn{nc, w}, nil
	}
}

func (w *wireLog) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if err == nil && cmd.Name() == "set" && w.switchedAt.Load() != nil && w.firstOK.Load() == nil {
			now := time.Now()
			w.firstOK.CompareAndSwap(nil, &now)
		}
		return err
	}
}

func (w *wireLog) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (w *wireLog) writesTo(addr string, after time.Time) []sent {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []sent
	for _, s := range w.writes {
		if s.addr == addr && s.at.After(after) {
			out = append(out, s)
		}
	}
	return out
}

var _ = Describe("client.Client during a failover", Label("slow"), func() {
	It("follows +switch-master to the new master and sends nothing more to the old one", func() {
		d := startData(2)
		d.addSentinels(3)
		oldAddr := d.master.Addr()

		wl := &wireLog{}
		type change struct{ old, new, source string }
		changes := make(chan change, 8)
		c, err := client.New(client.Options{
			MasterName:    masterName,
			SentinelAddrs: d.sentinelAddrs()[:1], // the others come from SENTINEL SENTINELS
			DialTimeout:   500 * time.Millisecond,
			ReadTimeout:   time.Second,
			OnMasterChange: func(o, n, src string) {
				now := time.Now()
				wl.switchedAt.CompareAndSwap(nil, &now)
				changes <- change{o, n, src}
			},
		})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(c.Close)
		c.AddHook(wl)
		ctx := context.Background()
		Expect(c.Set(ctx, "warmup", "1", 0).Err()).To(Succeed())
		Expect(c.MasterAddr(ctx)).To(Equal(oldAddr))
		Eventually(c.Sentinels).WithTimeout(10*time.Second).Should(ConsistOf(d.sentinelAddrs()),
			"the client should learn every sentinel from SENTINEL SENTINELS")

		// The test's own view of +switch-master, to time the client by.
		sc := redis.NewSentinelClient(&redis.Options{Addr: d.sentinels[1].Addr()})
		DeferCleanup(sc.Close)
		sub := sc.Subscribe(ctx, "+switch-master")
		DeferCleanup(sub.Close)
		_, err = sub.Receive(ctx) // the subscription confirmation
		Expect(err).NotTo(HaveOccurred())
		switchMsg := sub.Channel()

		stop := make(chan struct{})
		var wg sync.WaitGroup
		var ok, failed atomic.Int64
		for g := 0; g < 20; g++ {
			wg.Add(1)
			go func() {
				defer GinkgoRecover()
				defer wg.Done()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
					err := c.Set(wctx, fmt.Sprintf("g%d:%d", g, i), i, 0).Err()
					cancel()
					if err == nil {
						ok.Add(1)
					} else {
						failed.Add(1)
						time.Sleep(20 * time.Millisecond) // pace a failing writer; not a wait for state
					}
				}
			}()
		}
		Eventually(ok.Load).Should(BeNumerically(">", 100), "writes should flow before the failover")

		killedAt := time.Now()
		d.master.Kill()

		var msg *redis.Message
		Eventually(switchMsg).WithTimeout(60 * time.Second).Should(Receive(&msg))
		sentinelSwitch := time.Now()
		f := strings.Fields(msg.Payload)
		Expect(f).To(HaveLen(5))
		newAddr := net.JoinHostPort(f[3], f[4])
		Expect(newAddr).NotTo(Equal(oldAddr))

		var ch change
		Eventually(changes).WithTimeout(30 * time.Second).Should(Receive(&ch))
		Expect(ch.old).To(Equal(oldAddr))
		Expect(ch.new).To(Equal(newAddr))
		clientSwitch := *wl.switchedAt.Load()

		Eventually(func() *time.Time { return wl.firstOK.Load() }).WithTimeout(30*time.Second).
			ShouldNot(BeNil(), "a write should succeed on the new master")
		first := *wl.firstOK.Load()
		close(stop)
		wg.Wait()

		// The new master holds writes made after the switch.
		Expect(c.Set(ctx, "after", "switch", 0).Err()).To(Succeed())
		Expect(direct(newAddr).Get(ctx, "after").Val()).To(Equal("switch"))
		Expect(c.MasterAddr(ctx)).To(Equal(newAddr))

		// Nothing was written to the old master once the client switched.
		Expect(wl.writesTo(oldAddr, clientSwitch)).To(BeEmpty(),
			"writes went to the demoted master after the client switched")
		Expect(len(wl.writesTo(newAddr, clientSwitch))).To(BeNumerically(">", 0))

		report := fmt.Sprintf("kill -> sentinel +switch-master %v; client switched via %s %v after the test saw it; "+
			"+switch-master -> first successful write %v (client switch -> first write %v); writes ok %d, failed %d",
			sentinelSwitch.Sub(killedAt).Round(time.Millisecond), ch.source,
			clientSwitch.Sub(sentinelSwitch).Round(time.Millisecond),
			first.Sub(sentinelSwitch).Round(time.Millisecond), first.Sub(clientSwitch).Round(time.Millisecond),
			ok.Load(), failed.Load())
		AddReportEntry("failover timings", report, ReportEntryVisibilityAlways)
		fmt.Fprintln(GinkgoWriter, report)
	})

	It("routes reads to a replica with ReadFrom Replica and checks it with ROLE", func() {
		d := startData(2)
		d.addSentinels(3)
		c, err := client.New(client.Options{MasterName: masterName, SentinelAddrs: d.sentinelAddrs(), ReadFrom: client.Replica})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(c.Close)
		ctx := context.Background()
		nodes, err := c.ReadNodes(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(nodes).To(HaveLen(2))
		Expect(nodes).To(HaveKey(d.replicas[0].Addr()))
		Expect(nodes).To(HaveKey(d.replicas[1].Addr()))
		Expect(c.Set(ctx, "k", "v", 0).Err()).To(Succeed())
		Eventually(func() (string, error) { return c.Get(ctx, "k").Result() }).Should(Equal("v"))
		// A GET served by a replica shows in its keyspace hit counter.
		hits := 0
		for _, r := range d.replicas {
			info := direct(r.Addr()).Info(ctx, "stats").Val()
			if strings.Contains(info, "keyspace_hits:") && !strings.Contains(info, "keyspace_hits:0\r") {
				hits++
			}
		}
		Expect(hits).To(BeNumerically(">=", 1), "a replica should have served the GET")
		Expect(direct(d.master.Addr()).Info(ctx, "stats").Val()).To(ContainSubstring("keyspace_hits:0\r"))

		n, err := client.New(client.Options{MasterName: masterName, SentinelAddrs: d.sentinelAddrs(), ReadFrom: client.Nearest})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(n.Close)
		nodes, err = n.ReadNodes(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(nodes).To(HaveLen(3), "Nearest measures the master and both replicas")
		for addr, rtt := range nodes {
			fmt.Fprintf(GinkgoWriter, "%s PING %v\n", addr, rtt)
		}
		Expect(errors.Is(n.Get(ctx, "missing").Err(), redis.Nil)).To(BeTrue())

		// The lock works through the client: its scripts and the pipelined
		// WAIT go to the master even though reads go to replicas.
		l, err := lock.New(c, lock.WithReplicas(2, 5*time.Second)).TryAcquire(ctx, "job")
		Expect(err).NotTo(HaveOccurred())
		Expect(direct(d.master.Addr()).Get(ctx, "job").Val()).To(Equal(l.Token))
		Expect(l.Release(ctx)).To(Succeed())
	})
})
