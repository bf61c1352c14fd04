package up

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
	"github.com/redis/go-redis/v9"

	"github.com/vigil-kv/vigil/internal/deploy"
)

// line is one JSON line of `vigil up --json`.
type line struct {
	Type string `json:"type"`
	deploy.Status
	// ready
	Nodes []struct {
		Name string `json:"name"`
		Addr string `json:"addr"`
		Pid  int    `json:"pid"`
	} `json:"nodes"`
	SentinelAddrs []string `json:"sentinel_addrs"`
	// event
	Event   string `json:"event"`
	Payload string `json:"payload"`
}

// lines parses the session's output so far.
func lines(s *gexec.Session) []line {
	var out []line
	sc := bufio.NewScanner(bytes.NewReader(s.Out.Contents()))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var l line
		if json.Unmarshal(sc.Bytes(), &l) == nil {
			out = append(out, l)
		}
	}
	return out
}

// portRange returns the first of n consecutive free loopback ports.
func portRange(n int) int {
	for {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		Expect(err).NotTo(HaveOccurred())
		p := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		if p+n > 65535 {
			continue
		}
		ok := true
		for i := 0; i < n && ok; i++ {
			l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p+i)))
			if err != nil {
				ok = false
				continue
			}
			l.Close()
		}
		if ok {
			return p
		}
	}
}

// gone reports whether pid has exited (a zombie counts as exited).
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] == "Z"
}

// startUp runs `vigil up --json` with args on free ports.
func startUp(args ...string) (*gexec.Session, int) {
	base := portRange(3)
	sbase := portRange(3)
	for sbase <= base+2 && base <= sbase+2 {
		sbase = portRange(3)
	}
	all := append([]string{"up", "--dir", GinkgoT().TempDir(), "--base-port", strconv.Itoa(base),
		"--sentinel-base-port", strconv.Itoa(sbase), "--json", "--wait", "60s"}, args...)
	s, err := gexec.Start(exec.Command(vigilBin, all...), GinkgoWriter, GinkgoWriter)
	Expect(err).NotTo(HaveOccurred())
	return s, base
}

// readyNodes waits for the ready line and returns the nodes' pids, and
// kills them all at cleanup in case a spec fails midway.
func readyNodes(s *gexec.Session) (pids []int, sentinels []string) {
	Eventually(func() bool {
		for _, l := range lines(s) {
			if l.Type == "ready" {
				for _, n := range l.Nodes {
					pids = append(pids, n.Pid)
				}
				sentinels = l.SentinelAddrs
				return true
			}
		}
		return false
	}, 90*time.Second, 100*time.Millisecond).Should(BeTrue(), "no ready line; stderr:\n%s", s.Err.Contents())
	DeferCleanup(func() {
		for _, p := range pids {
			if p > 0 && !gone(p) {
				_ = syscall.Kill(p, syscall.SIGKILL)
			}
		}
	})
	for _, p := range pids {
		Expect(p).To(BeNumerically(">", 0))
	}
	return pids, sentinels
}

var _ = Describe("vigil up --server redis", Label("interop", "failover", "slow"), func() {
	BeforeEach(needRedis)

	It("reports a healthy deployment, shows a failover live, answers vigil status and stops every node on SIGINT", func() {
		s, base := startUp("--server", "redis", "--down-after", "1s", "--failover-timeout", "5s")
		DeferCleanup(func() { s.Kill().Wait(10 * time.Second) })
		pids, sentinels := readyNodes(s)
		Expect(pids).To(HaveLen(6))

		var master deploy.ServerStatus
		Eventually(func() bool {
			for _, l := range lines(s) {
				if l.Type == "status" && l.Healthy {
					for _, sv := range l.Servers {
						if sv.Role == "master" {
							master = sv
						}
					}
					return true
				}
			}
			return false
		}, 30*time.Second, 100*time.Millisecond).Should(BeTrue())
		Expect(master.Addr).To(Equal(fmt.Sprintf("127.0.0.1:%d", base)))
		Expect(master.Pid).To(BeElementOf(pids))

		Expect(syscall.Kill(master.Pid, syscall.SIGKILL)).To(Succeed())

		var switched line
		Eventually(func() bool {
			for _, l := range lines(s) {
				if l.Type == "event" && l.Event == "+switch-master" {
					switched = l
					return true
				}
			}
			return false
		}, 60*time.Second, 100*time.Millisecond).Should(BeTrue(), "no +switch-master event")
		f := strings.Fields(switched.Payload)
		Expect(f).To(HaveLen(5))
		Expect(f[0]).To(Equal("mymaster"))
		Expect(net.JoinHostPort(f[1], f[2])).To(Equal(master.Addr))
		newMaster := net.JoinHostPort(f[3], f[4])
		Expect(newMaster).NotTo(Equal(master.Addr))

		Eventually(func() bool {
			ls := lines(s)
			for i := len(ls) - 1; i >= 0; i-- {
				if ls[i].Type != "status" || ls[i].MasterAddr != newMaster {
					continue
				}
				for _, sv := range ls[i].Servers {
					if sv.Addr == newMaster && sv.Role == "master" {
						return true
					}
				}
			}
			return false
		}, 30*time.Second, 100*time.Millisecond).Should(BeTrue(), "no status line with %s as master", newMaster)

		// The new master takes writes.
		rdb := redis.NewClient(&redis.Options{Addr: newMaster})
		defer rdb.Close()
		Expect(rdb.Set(context.Background(), "k", "v", 0).Err()).To(Succeed())

		st, err := gexec.Start(exec.Command(vigilBin, "status", "--sentinel", sentinels[0]), GinkgoWriter, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		Eventually(st, 20*time.Second).Should(gexec.Exit(0))
		Expect(string(st.Out.Contents())).To(ContainSubstring(fmt.Sprintf("master %q at %s", "mymaster", newMaster)))

		stj, err := gexec.Start(exec.Command(vigilBin, "status", "--sentinel", sentinels[1], "--json"), GinkgoWriter, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		Eventually(stj, 20*time.Second).Should(gexec.Exit(0))
		var snap line
		Expect(json.Unmarshal(bytes.TrimSpace(stj.Out.Contents()), &snap)).To(Succeed())
		Expect(snap.MasterAddr).To(Equal(newMaster))
		Expect(snap.Sentinels).To(HaveLen(3), "the other sentinels are discovered from one")

		s.Signal(syscall.SIGINT)
		Eventually(s, 60*time.Second).Should(gexec.Exit(0))
		Expect(lines(s)[len(lines(s))-1].Type).To(Equal("stopped"))
		for _, p := range pids {
			Expect(gone(p)).To(BeTrue(), "pid %d still running after vigil up stopped", p)
		}
	})

	It("leaves no node running when vigil up itself is SIGKILLed", func() {
		s, _ := startUp("--server", "redis", "--replicas", "0", "--sentinels", "1")
		DeferCleanup(func() { s.Kill().Wait(10 * time.Second) })
		pids, _ := readyNodes(s)
		Expect(pids).To(HaveLen(2))
		s.Kill()
		Eventually(s, 10*time.Second).Should(gexec.Exit())
		for _, p := range pids {
			Eventually(func() bool { return gone(p) }, 10*time.Second, 50*time.Millisecond).Should(BeTrue(), "pid %d outlived vigil up", p)
		}
	})

	It("names the busy port and the flag that moves it", func() {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		Expect(err).NotTo(HaveOccurred())
		defer ln.Close()
		busy := ln.Addr().(*net.TCPAddr).Port
		s, err := gexec.Start(exec.Command(vigilBin, "up", "--server", "redis", "--dir", GinkgoT().TempDir(),
			"--base-port", strconv.Itoa(portRange(3)), "--sentinel-base-port", strconv.Itoa(busy)), GinkgoWriter, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		Eventually(s, 20*time.Second).Should(gexec.Exit(1))
		Expect(string(s.Err.Contents())).To(And(ContainSubstring("port "+strconv.Itoa(busy)), ContainSubstring("--sentinel-base-port")))
	})
})

// replicates probes whether vigil-server can replicate: a replica started
// with replicaof reports master_link_status:up within a deadline.
func replicates() bool {
	base := portRange(2)
	dir := GinkgoT().TempDir()
	cmds := []*exec.Cmd{
		exec.Command(vigilBin, "server", "--port", strconv.Itoa(base), "--bind", "127.0.0.1", "--dir", dir, "--save", ""),
		exec.Command(vigilBin, "server", "--port", strconv.Itoa(base+1), "--bind", "127.0.0.1", "--dir", dir, "--save", "",
			"--dbfilename", "replica.rdb", "--replicaof", "127.0.0.1 "+strconv.Itoa(base)),
	}
	for _, c := range cmds {
		if err := c.Start(); err != nil {
			return false
		}
		defer func() { _ = c.Process.Kill(); _ = c.Wait() }()
	}
	rdb := redis.NewClient(&redis.Options{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(base+1)), MaxRetries: -1})
	defer rdb.Close()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		info, err := rdb.Info(context.Background(), "replication").Result()
		if err == nil {
			if !strings.Contains(info, "master_link_status:") {
				return false // the server does not replicate at all
			}
			if strings.Contains(info, "master_link_status:up") {
				return true
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}

var _ = Describe("vigil up --server vigil", Label("failover", "slow"), func() {
	It("starts a healthy deployment of vigil-server and vigil-sentinel, shows a failover live and stops on SIGINT", func() {
		if !replicates() {
			Skip("needs replication (issue 12): a vigil-server replica started with replicaof does not report master_link_status:up")
		}
		s, _ := startUp("--server", "vigil", "--down-after", "1s", "--failover-timeout", "5s")
		DeferCleanup(func() { s.Kill().Wait(10 * time.Second) })
		pids, _ := readyNodes(s)
		Expect(pids).To(HaveLen(6))
		Eventually(func() bool {
			for _, l := range lines(s) {
				if l.Type == "status" && l.Healthy {
					return true
				}
			}
			return false
		}, 30*time.Second, 100*time.Millisecond).Should(BeTrue())

		// The README's first command: killing the master by hand shows the
		// failover live (the ready line lists the master first).
		Expect(syscall.Kill(pids[0], syscall.SIGKILL)).To(Succeed())
		Eventually(func() bool {
			for _, l := range lines(s) {
				if l.Type == "event" && l.Event == "+switch-master" {
					return true
				}
			}
			return false
		}, 60*time.Second, 100*time.Millisecond).Should(BeTrue(), "no +switch-master event after the master was killed")

		s.Signal(syscall.SIGINT)
		Eventually(s, 60*time.Second).Should(gexec.Exit(0))
		for _, p := range pids {
			Expect(gone(p)).To(BeTrue(), "pid %d still running", p)
		}
	})
})
