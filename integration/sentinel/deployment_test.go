package sentinel

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
	"github.com/redis/go-redis/v9"

	"github.com/vigil-kv/vigil/integration"
)

// Helpers of the long-lived deployment the ordered scenarios share
// (scenarios_test.go). Everything here is started in a BeforeAll, so the
// DeferCleanups of the process helpers run when the ordered container ends;
// processes a scenario kills are relaunched in place (same *Server, same
// port, same files), so those cleanups still stop them.

// deployment is one master, its replicas and five sentinels.
type deployment struct {
	*Cluster
	servers []*integration.Server // every data server, whatever its role
	logs    []*os.File            // log files reopened by restarts
	clients []*redis.Client       // clients made in scenarios, closed at the end
}

// Timers of the scenarios, applied with SENTINEL DEBUG after every (re)start
// (not persisted): INFO every second, hellos every 500 ms (so a returning old
// master is demoted 4 × 500 ms after it reports role:master), links re-made
// after 2 s, and a TILT of 3 s instead of 30 s when a loaded machine starves a
// sentinel's timer.
var scenarioDebug = []any{
	"info-period", "1000",
	"publish-period", "500",
	"min-link-reconnect-period", "2000",
	"tilt-period", "3000",
}

// scenarioDownAfter is the scenarios' down-after-milliseconds: 2 s (as
// DownAfter, the other specs'; the failover benchmark keeps 1 s), because a promoted replica that fsyncs its
// CONFIG REWRITE and forks for its replicas on a loaded machine can leave a
// PING unanswered for a second, and every sentinel then sees the new master
// SDOWN and fails over again.
const scenarioDownAfter = 2000

// dataConfig is the configuration file of a data server: it is rewritten by
// the sentinels' CONFIG REWRITE, so a restarted server keeps its role, as in
// Redis's own tests.
func dataConfig(masterPort int) string {
	conf := "repl-diskless-sync-delay 0\n"
	if masterPort != 0 {
		conf += fmt.Sprintf("replicaof 127.0.0.1 %d\n", masterPort)
	}
	return conf
}

// startDeployment starts a master, n replicas and one sentinel per binary
// (quorum), tunes the sentinels and waits for discovery. Call it in a
// BeforeAll.
func startDeployment(n, quorum int, bins ...string) *deployment {
	GinkgoHelper()
	d := &deployment{Cluster: &Cluster{data: map[int]*redis.Client{}}}
	d.Master = integration.StartServerWith(integration.ServerOptions{Config: dataConfig(0)})
	d.addClient(d.Master)
	d.servers = append(d.servers, d.Master)
	for i := 0; i < n; i++ {
		r := integration.StartServerWith(integration.ServerOptions{Config: dataConfig(d.Master.Port)})
		d.addClient(r)
		d.Replicas = append(d.Replicas, r)
		d.servers = append(d.servers, r)
	}
	DeferCleanup(func() {
		for _, f := range d.logs {
			_ = f.Close()
		}
		for _, c := range d.clients {
			_ = c.Close()
		}
	})
	d.AddSentinels(quorum, bins...)
	setAll(d.Sentinels, "down-after-milliseconds", strconv.Itoa(scenarioDownAfter))
	d.settle()
	return d
}

// setPassword replaces the clients of the data servers by clients that
// authenticate with pw ("" = none).
func (d *deployment) setPassword(pw string) {
	GinkgoHelper()
	d.setAuth("", pw)
}

// setAuth replaces the clients of the data servers on ports (every data
// server when none is given) by clients that authenticate as user with pw
// ("" = the default user, no password).
func (d *deployment) setAuth(user, pw string, ports ...int) {
	GinkgoHelper()
	if len(ports) == 0 {
		for _, srv := range d.servers {
			ports = append(ports, srv.Port)
		}
	}
	for _, port := range ports {
		opts := d.server(port).ClientOptions(2)
		opts.PoolSize = 2
		opts.ReadTimeout = 2 * time.Second
		opts.Username, opts.Password = user, pw
		c := redis.NewClient(opts)
		d.clients = append(d.clients, c)
		d.Cluster.data[port] = c
	}
}

// server returns the data server on port.
func (d *deployment) server(port int) *integration.Server {
	GinkgoHelper()
	for _, s := range d.servers {
		if s.Port == port {
			return s
		}
	}
	Fail(fmt.Sprintf("no data server on port %d", port))
	return nil
}

// relaunch starts srv's binary again with its arguments (plus extra) in its
// directory on its port, appending to its log, and replaces srv.Session.
func (d *deployment) relaunch(srv *integration.Server, extra ...string) {
	GinkgoHelper()
	Expect(srv.Session.ExitCode()).NotTo(Equal(-1), "%s:%d must be stopped before a restart", srv.Bin, srv.Port)
	logf, err := os.OpenFile(srv.LogPath, os.O_WRONLY|os.O_APPEND, 0)
	Expect(err).NotTo(HaveOccurred())
	d.logs = append(d.logs, logf)
	fmt.Fprintf(logf, "\n---- restarted by the test\n")
	cmd := exec.Command(srv.Bin, append(append([]string{}, srv.Args...), extra...)...)
	cmd.Dir = srv.Dir
	srv.Session, err = gexec.Start(cmd, logf, logf)
	Expect(err).NotTo(HaveOccurred(), "restarting %s", srv.Bin)
}

// restartData relaunches a killed data server and waits until it answers
// (LOADING counts).
func (d *deployment) restartData(srv *integration.Server, extra ...string) {
	GinkgoHelper()
	d.relaunch(srv, extra...)
	srv.WaitReady()
	d.drain(d.Data(srv.Port))
}

// restartSentinel relaunches a killed sentinel from the configuration file it
// rewrote, waits for it and tunes it again.
func (d *deployment) restartSentinel(s *Sentinel) {
	GinkgoHelper()
	d.relaunch(s.Server)
	Expect(s.waitReady()).To(BeTrue(), "restarted sentinel did not answer PING; its output:\n%s", tail(s.Log(), 50))
	d.drain(s.SC)
	s.Tune()
}

// drain pings through a client until it succeeds, so that pooled
// connections to a process that was restarted are discarded.
func (d *deployment) drain(c interface {
	Process(context.Context, redis.Cmder) error
}) {
	GinkgoHelper()
	Eventually(func() error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		err := c.Process(ctx, redis.NewStatusCmd(ctx, "PING"))
		if err != nil && strings.HasPrefix(err.Error(), "LOADING") {
			return nil
		}
		return err
	}).WithTimeout(integration.StartTimeout).WithPolling(20 * time.Millisecond).Should(Succeed())
}

// settle waits until every data server but the master replicates from the
// master with its link up, every sentinel names the master and knows every
// replica and every other sentinel.
func (d *deployment) settle() {
	GinkgoHelper()
	d.follow()
	d.ExpectMaster(d.Master.Port)
	for _, r := range d.Replicas {
		d.ExpectReplicaOf(r.Port, d.Master.Port, ConvertWait)
	}
	d.WaitMasterAddr(d.Master.Port, FailoverWait)
	d.WaitDiscovery()
	for _, s := range d.Sentinels {
		Eventually(func(g Gomega) {
			m, err := s.master()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(m).To(HaveKeyWithValue("flags", "master"))
			g.Expect(m).NotTo(HaveKey("failover-state"), "no failover in progress")
		}).WithTimeout(FailoverWait).WithPolling(Poll).Should(Succeed(), s.Name())
	}
}

// follow waits until the sentinels agree on the master and makes it
// d.Master (the scenarios track failovers themselves; this keeps the view
// right if the sentinels failed over once more on their own).
func (d *deployment) follow() {
	GinkgoHelper()
	var want []any
	for _, srv := range d.servers {
		want = append(want, Addr(srv.Port))
	}
	addr := ""
	Eventually(func(g Gomega) {
		addr = ""
		for _, s := range d.Sentinels {
			a, err := s.MasterAddr()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(a).To(BeElementOf(want...))
			if addr != "" {
				g.Expect(a).To(Equal(addr), "the sentinels agree on the master")
			}
			addr = a
		}
	}).WithTimeout(FailoverWait).WithPolling(Poll).Should(Succeed())
	if addr == Addr(d.Master.Port) {
		return
	}
	fmt.Fprintf(GinkgoWriter, "the sentinels name %s as the master, not %s\n", addr, Addr(d.Master.Port))
	d.Replicas = nil
	for _, srv := range d.servers {
		if Addr(srv.Port) == addr {
			d.Master = srv
		} else {
			d.Replicas = append(d.Replicas, srv)
		}
	}
}

// setAll runs SENTINEL SET mym args... on the sentinels.
func setAll(sentinels []*Sentinel, args ...any) {
	GinkgoHelper()
	for _, s := range sentinels {
		Expect(s.do(append([]any{"SENTINEL", "SET", MasterName}, args...)...)).To(Equal("OK"), s.Name())
	}
}

// master returns SENTINEL MASTER mym.
func (s *Sentinel) master() (map[string]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	return s.SC.Master(ctx, MasterName).Result()
}

// waitSwitch waits until each of the sentinels names a master other than
// oldPort, checks they agree and that it is one of the replicas, and returns
// its port.
func (d *deployment) waitSwitch(oldPort int, sentinels []*Sentinel) int {
	GinkgoHelper()
	var want []any
	for _, p := range d.ReplicaPorts() {
		want = append(want, Addr(p))
	}
	addr := ""
	for _, s := range sentinels {
		Eventually(func(g Gomega) {
			a, err := s.MasterAddr()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(a).To(BeElementOf(want...))
			if addr != "" {
				g.Expect(a).To(Equal(addr), "the sentinels agree")
			}
			addr = a
		}).WithTimeout(FailoverWait).WithPolling(Poll).Should(Succeed(), "%s should name a replica as the master", s.Name())
	}
	_, p, _ := strings.Cut(addr, ":")
	port, _ := strconv.Atoi(p)
	return port
}

// flagsOf returns the flags of the SENTINEL REPLICAS / SENTINELS entry with
// port, or "absent".
func flagsOf(entries []map[string]string, port int) string {
	for _, e := range entries {
		if e["port"] == strconv.Itoa(port) {
			return e["flags"]
		}
	}
	return "absent"
}

// text turns a reply (RESP2 array or RESP3 map of strings) into "k=v" pairs
// for CONFIG GET style replies.
func pairs(v any) map[string]string {
	out := map[string]string{}
	switch t := v.(type) {
	case map[any]any:
		for k, x := range t {
			out[fmt.Sprint(k)] = fmt.Sprint(x)
		}
	case []any:
		for i := 0; i+1 < len(t); i += 2 {
			out[fmt.Sprint(t[i])] = fmt.Sprint(t[i+1])
		}
	}
	return out
}

// reconfInFlight returns the largest number of replicas the sentinel on port
// had sent SLAVEOF to and not yet seen reconfigured, and how many it sent.
func reconfInFlight(ev *Events, port int) (maxInFlight, sent int) {
	inflight := map[string]bool{}
	for _, e := range ev.All() {
		if e.From != port {
			continue
		}
		f := strings.Fields(e.Payload)
		if len(f) < 2 {
			continue
		}
		switch e.Channel {
		case "+slave-reconf-sent":
			inflight[f[1]] = true
			sent++
		case "+slave-reconf-done", "-slave-reconf-sent-timeout":
			delete(inflight, f[1])
		}
		if len(inflight) > maxInFlight {
			maxInFlight = len(inflight)
		}
	}
	return maxInFlight, sent
}

// sortedKeys is for failure messages.
func sortedKeys(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// sameShape compares, when the sentinels are of both kinds, the field names
// of SENTINEL MASTER, REPLICAS and SENTINELS and the INFO sentinel section
// of the first sentinel under test with the last redis-sentinel's.
func sameShape(sentinels []*Sentinel) {
	GinkgoHelper()
	var vigil, redis *Sentinel
	for _, s := range sentinels {
		if s.Kind == "redis-sentinel" {
			redis = s
		} else if vigil == nil {
			vigil = s
		}
	}
	if vigil == nil || redis == nil {
		return
	}
	shape := func(s *Sentinel) map[string][]string {
		out := map[string][]string{}
		m, err := s.master()
		Expect(err).NotTo(HaveOccurred())
		out["MASTER"] = sortedKeys(m)
		reps, err := s.Replicas()
		Expect(err).NotTo(HaveOccurred())
		Expect(reps).NotTo(BeEmpty())
		out["REPLICAS"] = sortedKeys(reps[0])
		others, err := s.Others()
		Expect(err).NotTo(HaveOccurred())
		Expect(others).NotTo(BeEmpty())
		out["SENTINELS"] = sortedKeys(others[0])
		info, err := s.C.Info(context.Background(), "sentinel").Result()
		Expect(err).NotTo(HaveOccurred())
		for _, line := range strings.Split(info, "\n") {
			if k, _, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
				out["INFO"] = append(out["INFO"], k)
			}
		}
		return out
	}
	Expect(shape(vigil)).To(Equal(shape(redis)), "%s and %s answer with the same fields", vigil.Name(), redis.Name())
}
