package up

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
	"github.com/redis/go-redis/v9"

	"github.com/vigil-kv/vigil/client"
)

// readyGroups is the groups list of `vigil up --groups N --json`'s ready line.
type readyGroups struct {
	Type   string `json:"type"`
	Groups []struct {
		MasterName string   `json:"master_name"`
		MasterAddr string   `json:"master_addr"`
		Servers    []string `json:"servers"`
	} `json:"groups"`
	Nodes []struct {
		Addr string `json:"addr"`
		Pid  int    `json:"pid"`
	} `json:"nodes"`
}

// startUpPorts runs `vigil up --json` with args, the servers on servers
// consecutive free ports and the three sentinels on three others.
func startUpPorts(servers int, args ...string) *gexec.Session {
	base := portRange(servers)
	sbase := portRange(3)
	for sbase <= base+servers-1 && base <= sbase+2 {
		sbase = portRange(3)
	}
	all := append([]string{"up", "--dir", GinkgoT().TempDir(), "--base-port", strconv.Itoa(base),
		"--sentinel-base-port", strconv.Itoa(sbase), "--json", "--wait", "90s"}, args...)
	s, err := gexec.Start(exec.Command(vigilBin, all...), GinkgoWriter, GinkgoWriter)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { s.Kill().Wait(10 * time.Second) })
	return s
}

// latestHealthy reports whether the last status line of each master name
// says healthy.
func latestHealthy(s *gexec.Session, names ...string) bool {
	last := map[string]bool{}
	for _, l := range lines(s) {
		if l.Type == "status" {
			last[l.MasterName] = l.Healthy
		}
	}
	for _, n := range names {
		if !last[n] {
			return false
		}
	}
	return true
}

// switches are the +switch-master events of the session so far, by master name.
func switches(s *gexec.Session) map[string][]string {
	out := map[string][]string{}
	for _, l := range lines(s) {
		if l.Type == "event" && l.Event == "+switch-master" {
			if f := strings.Fields(l.Payload); len(f) == 5 {
				out[f[0]] = append(out[f[0]], f[3]+":"+f[4])
			}
		}
	}
	return out
}

var _ = Describe("vigil up --groups 2", Label("failover", "slow"), func() {
	It("starts two masters under one sentinel trio, serves a client.NewRing over both, and a kill in one group fails over that group only", func() {
		if !replicates() {
			Skip("needs replication: a vigil-server replica started with replicaof does not report master_link_status:up")
		}
		ctx := context.Background()
		s := startUpPorts(6, "--server", "vigil", "--groups", "2", "--down-after", "1s", "--failover-timeout", "5s")
		pids, sentinels := readyNodes(s)
		Expect(pids).To(HaveLen(9), "2 x 3 servers and 3 sentinels")
		var ready readyGroups
		for _, raw := range strings.Split(string(s.Out.Contents()), "\n") {
			var r readyGroups
			if json.Unmarshal([]byte(raw), &r) == nil && r.Type == "ready" {
				ready = r
			}
		}
		Expect(ready.Groups).To(HaveLen(2))
		Expect(ready.Groups[0].MasterName).To(Equal("mymaster"))
		Expect(ready.Groups[1].MasterName).To(Equal("mymaster-2"))
		Expect(ready.Groups[0].Servers).To(HaveLen(3))
		Expect(ready.Groups[1].Servers).To(HaveLen(3))
		Expect(ready.Groups[1].Servers).NotTo(ContainElements(ready.Groups[0].Servers))
		pidOf := map[string]int{}
		for _, n := range ready.Nodes {
			pidOf[n.Addr] = n.Pid
		}
		m1, m2 := ready.Groups[0].MasterAddr, ready.Groups[1].MasterAddr

		Eventually(func() bool { return latestHealthy(s, "mymaster", "mymaster-2") }, 60*time.Second, 100*time.Millisecond).
			Should(BeTrue(), "both groups healthy in the live view")

		// Every sentinel monitors both masters, each with its two replicas
		// and the two other sentinels.
		for _, a := range sentinels {
			sc := redis.NewSentinelClient(&redis.Options{Addr: a, MaxRetries: -1})
			DeferCleanup(sc.Close)
			for name, addr := range map[string]string{"mymaster": m1, "mymaster-2": m2} {
				Eventually(func(g Gomega) {
					m, err := sc.Master(ctx, name).Result()
					g.Expect(err).NotTo(HaveOccurred())
					g.Expect(m["ip"] + ":" + m["port"]).To(Equal(addr))
					g.Expect(m["num-slaves"]).To(Equal("2"))
					g.Expect(m["num-other-sentinels"]).To(Equal("2"))
				}).WithTimeout(30*time.Second).WithPolling(100*time.Millisecond).Should(Succeed(), "sentinel %s, master %s", a, name)
			}
		}

		// client.NewRing shards keys over both groups.
		r, err := client.NewRing(client.RingOptions{MasterNames: []string{"mymaster", "mymaster-2"},
			Options: client.Options{SentinelAddrs: sentinels, RetryWrites: true, MasterWait: 30 * time.Second}})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(r.Close)
		const n = 200
		for i := 0; i < n; i++ {
			Expect(r.Set(ctx, "k"+strconv.Itoa(i), "v1", 0).Err()).To(Succeed())
		}
		size := func(addr string) int64 {
			c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
			defer c.Close()
			sz, err := c.DBSize(ctx).Result()
			Expect(err).NotTo(HaveOccurred())
			return sz
		}
		s1, s2 := size(m1), size(m2)
		Expect(s1).To(BeNumerically(">", 0), "group mymaster holds keys")
		Expect(s2).To(BeNumerically(">", 0), "group mymaster-2 holds keys")
		Expect(s1+s2).To(BeEquivalentTo(n), "every key is in exactly one group")

		// vigil status --all-masters shows both groups.
		st, err := gexec.Start(exec.Command(vigilBin, "status", "--all-masters", "--sentinel", sentinels[0], "--json"), GinkgoWriter, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		Eventually(st, 20*time.Second).Should(gexec.Exit(0))
		var names []string
		for _, raw := range strings.Split(strings.TrimSpace(string(st.Out.Contents())), "\n") {
			var l line
			Expect(json.Unmarshal([]byte(raw), &l)).To(Succeed())
			names = append(names, l.MasterName+"@"+l.MasterAddr)
		}
		Expect(names).To(Equal([]string{"mymaster@" + m1, "mymaster-2@" + m2}))

		// SIGKILL group 1's master: group 1 fails over, group 2 keeps its master.
		Expect(syscall.Kill(pidOf[m1], syscall.SIGKILL)).To(Succeed())
		var newM1 string
		Eventually(func() []string {
			sw := switches(s)["mymaster"]
			if len(sw) > 0 {
				newM1 = sw[0]
			}
			return sw
		}, 60*time.Second, 100*time.Millisecond).ShouldNot(BeEmpty(), "no +switch-master for mymaster")
		Expect(ready.Groups[0].Servers).To(ContainElement(newM1), "mymaster's new master is one of its own replicas")
		Expect(newM1).NotTo(Equal(m1))
		Eventually(func(g Gomega) {
			a, err := r.Shard("mymaster").MasterAddr(ctx)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(a).To(Equal(newM1))
		}).WithTimeout(30*time.Second).WithPolling(100*time.Millisecond).Should(Succeed(), "the ring follows mymaster's failover")
		for i := 0; i < n; i++ {
			Expect(r.Set(ctx, "k"+strconv.Itoa(i), "v2", 0).Err()).To(Succeed(), "write after mymaster's failover")
		}
		for i := 0; i < n; i++ {
			k := "k" + strconv.Itoa(i)
			Expect(r.Get(ctx, k).Val()).To(Equal("v2"), k)
		}
		Expect(size(m2)).To(Equal(s2), "mymaster-2 keeps its keys")
		for _, a := range sentinels {
			sc := redis.NewSentinelClient(&redis.Options{Addr: a, MaxRetries: -1})
			got, err := sc.GetMasterAddrByName(ctx, "mymaster-2").Result()
			sc.Close()
			Expect(err).NotTo(HaveOccurred())
			Expect(got[0]+":"+got[1]).To(Equal(m2), "sentinel %s still names mymaster-2's master", a)
		}
		Expect(switches(s)["mymaster-2"]).To(BeEmpty(), "mymaster-2 did not fail over")
		a, err := r.Shard("mymaster-2").MasterAddr(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(a).To(Equal(m2))

		s.Signal(syscall.SIGINT)
		Eventually(s, 60*time.Second).Should(gexec.Exit(0))
		for _, p := range pids {
			Expect(gone(p)).To(BeTrue(), "pid %d still running after vigil up stopped", p)
		}
	})
})

var _ = Describe("vigil up --restart-dead", Label("failover", "slow"), func() {
	It("restarts a SIGKILLed master, which rejoins as a replica of the new master and receives what was written meanwhile", func() {
		if !replicates() {
			Skip("needs replication: a vigil-server replica started with replicaof does not report master_link_status:up")
		}
		ctx := context.Background()
		s := startUpPorts(3, "--server", "vigil", "--restart-dead", "--down-after", "1s", "--failover-timeout", "5s")
		pids, _ := readyNodes(s)
		Expect(pids).To(HaveLen(6))
		Eventually(func() bool { return latestHealthy(s, "mymaster") }, 60*time.Second, 100*time.Millisecond).Should(BeTrue())
		var ready readyGroups
		for _, raw := range strings.Split(string(s.Out.Contents()), "\n") {
			var r readyGroups
			if json.Unmarshal([]byte(raw), &r) == nil && r.Type == "ready" {
				ready = r
			}
		}
		old, oldPid := ready.Nodes[0].Addr, ready.Nodes[0].Pid // the master as started
		_, oldPort, _ := strings.Cut(old, ":")

		Expect(syscall.Kill(oldPid, syscall.SIGKILL)).To(Succeed())
		var newMaster string
		Eventually(func() []string {
			sw := switches(s)["mymaster"]
			if len(sw) > 0 {
				newMaster = sw[0]
			}
			return sw
		}, 60*time.Second, 100*time.Millisecond).ShouldNot(BeEmpty(), "no +switch-master after the master was killed")

		nm := redis.NewClient(&redis.Options{Addr: newMaster, MaxRetries: -1})
		DeferCleanup(nm.Close)
		Expect(nm.Set(ctx, "meanwhile", "written after the failover", 0).Err()).To(Succeed())

		Eventually(func() string {
			for _, raw := range strings.Split(string(s.Out.Contents()), "\n") {
				var l struct{ Type, Node string }
				if json.Unmarshal([]byte(raw), &l) == nil && l.Type == "restarted" && strings.Contains(l.Node, "server-"+oldPort) {
					return l.Node
				}
			}
			return ""
		}, 60*time.Second, 100*time.Millisecond).Should(Equal(fmt.Sprintf("server-%s restarted as a replica of %s", oldPort, newMaster)))

		// The new master lists it as an online replica ...
		Eventually(func() (string, error) {
			return nm.Info(ctx, "replication").Result()
		}, 60*time.Second, 100*time.Millisecond).Should(MatchRegexp(`slave\d+:ip=127\.0\.0\.1,port=%s,state=online`, oldPort))
		// ... and it replicates from the new master, with what was written meanwhile.
		back := redis.NewClient(&redis.Options{Addr: old, MaxRetries: -1})
		DeferCleanup(back.Close)
		Eventually(func(g Gomega) {
			info, err := back.Info(ctx).Result()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(info).To(ContainSubstring("role:slave"))
			g.Expect(info).To(ContainSubstring("master_port:" + newMaster[strings.LastIndexByte(newMaster, ':')+1:]))
			g.Expect(info).To(ContainSubstring("master_link_status:up"))
			g.Expect(info).NotTo(ContainSubstring(fmt.Sprintf("process_id:%d\r", oldPid)), "a new process")
			g.Expect(back.Get(ctx, "meanwhile").Val()).To(Equal("written after the failover"))
		}, 60*time.Second, 100*time.Millisecond).Should(Succeed())
		Expect(nm.Set(ctx, "after", "rejoined", 0).Err()).To(Succeed())
		Eventually(func() string { return back.Get(ctx, "after").Val() }, 30*time.Second, 50*time.Millisecond).Should(Equal("rejoined"))
		Eventually(func() bool { return latestHealthy(s, "mymaster") }, 60*time.Second, 100*time.Millisecond).
			Should(BeTrue(), "the live view says healthy again")

		s.Signal(syscall.SIGINT)
		Eventually(s, 60*time.Second).Should(gexec.Exit(0))
	})
})
