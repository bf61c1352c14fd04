//go:build linux

package deploy

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// needNetns skips unless network namespaces work here.
func needNetns(t *testing.T) {
	t.Helper()
	if err := NetnsAvailable(); err != nil {
		t.Skipf("network namespaces unavailable (%v): these tests need root, iproute2 and nftables (apt-get install -y iproute2 nftables)", err)
	}
}

func TestOwnerPid(t *testing.T) {
	for name, want := range map[string]int{
		"vigil-123-4-hub":         123,
		"vigil-123-4-server-6379": 123,
		"vg4567r2":                4567,
		"vigil-abc-1-hub":         0,
		"vigil-123":               0,
		"vg12":                    0,
		"vgx1r1":                  0,
		"veth0":                   0,
		"eth0":                    0,
		"vigil-data":              0,
	} {
		if got := ownerPid(name); got != want {
			t.Errorf("ownerPid(%q) = %d, want %d", name, got, want)
		}
	}
}

// startEcho runs the echo helper in node's namespace on node.Addr().
func startEcho(t *testing.T, node *Node) {
	t.Helper()
	cmd := exec.Command("ip", "netns", "exec", node.netns, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "VIGIL_NETNS_ECHO="+node.Addr())
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "ready\n" {
		t.Fatalf("echo helper in %s: %q, %v", node.netns, line, err)
	}
}

// dialFrom reports whether a line round-trips to addr from inside ns.
func dialFrom(ns, addr string) error {
	cmd := exec.Command("ip", "netns", "exec", ns, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "VIGIL_NETNS_DIAL="+addr)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

func netnsList(t *testing.T) string {
	t.Helper()
	out, err := run("ip", "netns", "list")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestNetnsCutAndHeal builds the namespaces for three nodes, runs an echo
// server in each, and checks who reaches whom through each kind of cut.
func TestNetnsCutAndHeal(t *testing.T) {
	needNetns(t)
	nodes := []*Node{{Name: "server-7001", Port: 7001}, {Name: "server-7002", Port: 7002}, {Name: "sentinel-7003", Port: 7003}}
	n, err := newNetns(nodes)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.close() })
	hosts := map[string]bool{}
	for _, node := range nodes {
		if !strings.HasPrefix(node.Host, n.prefix) || hosts[node.Host] || node.netns == "" {
			t.Fatalf("%s: host %q netns %q (prefix %s)", node.Name, node.Host, node.netns, n.prefix)
		}
		hosts[node.Host] = true
		if !strings.Contains(netnsList(t), node.netns) {
			t.Fatalf("namespace %s not listed", node.netns)
		}
		startEcho(t, node)
	}
	a, b, c := nodes[0], nodes[1], nodes[2]
	reach := func(what string, err error, want bool) {
		t.Helper()
		if (err == nil) != want {
			t.Errorf("%s: reachable=%v (%v), want %v", what, err == nil, err, want)
		}
	}
	// A connection from this process opened before the cut.
	conn, err := net.DialTimeout("tcp", a.Addr(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	br := bufio.NewReader(conn)
	check := func(when string, rootToA, bToA, bToC, live bool) {
		t.Helper()
		reach(when+": root -> a", echoOnce(a.Addr(), time.Second), rootToA)
		reach(when+": b -> a", dialFrom(b.netns, a.Addr()), bToA)
		reach(when+": a -> b", dialFrom(a.netns, b.Addr()), bToA)
		reach(when+": b -> c", dialFrom(b.netns, c.Addr()), bToC)
		_, err := roundTrip(conn, br, "live", time.Second)
		reach(when+": connection opened before", err, live)
	}
	check("before any cut", true, true, true, true)

	heal, err := n.cut([]*Node{a}, true)
	if err != nil {
		t.Fatal(err)
	}
	rules, _ := n.rules()
	if !strings.Contains(rules, "drop") {
		t.Errorf("no drop rule listed during the cut:\n%s", rules)
	}
	check("cut from peers", true, false, true, true)
	if err := heal(); err != nil {
		t.Fatal(err)
	}
	if rules, _ := n.rules(); strings.Contains(rules, "drop") {
		t.Errorf("drop rules left after heal:\n%s", rules)
	}
	check("after heal", true, true, true, true)

	heal, err = n.cut([]*Node{a}, false)
	if err != nil {
		t.Fatal(err)
	}
	reach("full cut: root -> a", echoOnce(a.Addr(), time.Second), false)
	reach("full cut: b -> a", dialFrom(b.netns, a.Addr()), false)
	reach("full cut: b -> c", dialFrom(b.netns, c.Addr()), true)
	if err := heal(); err != nil {
		t.Fatal(err)
	}
	// The connection lived through a full cut: TCP retransmits what was
	// dropped, so it carries data again once healed. Its read deadline
	// expired mid-line, so use a fresh one.
	reach("after full heal: root -> a", echoOnce(a.Addr(), 2*time.Second), true)

	if err := n.close(); err != nil {
		t.Fatal(err)
	}
	list := netnsList(t)
	for _, node := range nodes {
		if strings.Contains(list, node.netns) {
			t.Errorf("namespace %s left after close", node.netns)
		}
	}
	if strings.Contains(list, n.hub) {
		t.Errorf("hub namespace %s left after close", n.hub)
	}
	if _, err := net.InterfaceByName(n.rootIf); err == nil {
		t.Errorf("root veth %s left after close", n.rootIf)
	}
}

func TestSplitRules(t *testing.T) {
	got := splitRules([]string{"p0", "p3"}, []string{"p1", "p2", "p4"})
	want := []string{
		`iifname { "p0", "p3" } oifname { "p1", "p2", "p4" } drop`,
		`iifname { "p1", "p2", "p4" } oifname { "p0", "p3" } drop`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("splitRules = %q, want %q", got, want)
	}
	if got := splitRules(nil, []string{"p1"}); len(got) != 0 {
		t.Fatalf("an empty side gave rules %q", got)
	}
}

// TestNetnsSplitAndHeal splits four nodes two against two: each side keeps
// its own links, the sides lose theirs to each other, this process reaches
// both, and heal restores every link.
func TestNetnsSplitAndHeal(t *testing.T) {
	needNetns(t)
	nodes := []*Node{{Name: "server-7001", Port: 7001}, {Name: "server-7002", Port: 7002},
		{Name: "server-7003", Port: 7003}, {Name: "sentinel-7004", Port: 7004}}
	n, err := newNetns(nodes)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.close() })
	for _, node := range nodes {
		startEcho(t, node)
	}
	a1, a2, b1, b2 := nodes[0], nodes[1], nodes[2], nodes[3]
	reach := func(what string, err error, want bool) {
		t.Helper()
		if (err == nil) != want {
			t.Errorf("%s: reachable=%v (%v), want %v", what, err == nil, err, want)
		}
	}
	check := func(when string, across bool) {
		t.Helper()
		reach(when+": a1 -> a2", dialFrom(a1.netns, a2.Addr()), true)
		reach(when+": b2 -> b1", dialFrom(b2.netns, b1.Addr()), true)
		reach(when+": a1 -> b1", dialFrom(a1.netns, b1.Addr()), across)
		reach(when+": b2 -> a2", dialFrom(b2.netns, a2.Addr()), across)
		reach(when+": a2 -> b2", dialFrom(a2.netns, b2.Addr()), across)
		for _, node := range nodes {
			reach(when+": root -> "+node.Name, echoOnce(node.Addr(), time.Second), true)
		}
	}
	check("before the split", true)
	heal, err := n.split([]*Node{a1, a2}, []*Node{b1, b2})
	if err != nil {
		t.Fatal(err)
	}
	check("split", false)
	if err := heal(); err != nil {
		t.Fatal(err)
	}
	if rules, _ := n.rules(); strings.Contains(rules, "drop") {
		t.Errorf("drop rules left after heal:\n%s", rules)
	}
	check("after heal", true)
	d := &Deployment{net: n}
	if _, err := d.Split([]*Node{a1}, []*Node{a1, b1}); err == nil || !strings.Contains(err.Error(), "both sides") {
		t.Errorf("a node on both sides: %v", err)
	}
	if _, err := (&Deployment{}).Split([]*Node{a1}, []*Node{b1}); err != ErrSplitUnsupported {
		t.Errorf("without namespaces: %v, want ErrSplitUnsupported", err)
	}
}

// TestCleanStaleNetns leaves namespaces and a root veth named for a dead
// process and for this one: the cleanup removes the dead one's only.
func TestCleanStaleNetns(t *testing.T) {
	needNetns(t)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	pid := dead.Process.Pid
	if pidAlive(pid) {
		t.Skipf("pid %d was reused already", pid)
	}
	staleNS := fmt.Sprintf("vigil-%d-1-hub", pid)
	staleIf := fmt.Sprintf("vg%dr1", pid)
	liveNS := fmt.Sprintf("vigil-%d-999-hub", os.Getpid())
	for _, args := range [][]string{
		{"netns", "add", staleNS}, {"netns", "add", liveNS},
		{"link", "add", "name", staleIf, "type", "veth", "peer", "name", "vgstalepeer"},
	} {
		if _, err := run("ip", args...); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		run("ip", "netns", "del", staleNS)
		run("ip", "netns", "del", liveNS)
		run("ip", "link", "del", staleIf)
	})
	removed, err := CleanStaleNetns()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(removed, ",")
	if !strings.Contains(got, "netns "+staleNS) || !strings.Contains(got, "link "+staleIf) {
		t.Errorf("removed %q; want %s and %s", got, staleNS, staleIf)
	}
	list := netnsList(t)
	if strings.Contains(list, staleNS) {
		t.Errorf("stale namespace %s still listed", staleNS)
	}
	if !strings.Contains(list, liveNS) {
		t.Errorf("the live process's namespace %s was removed", liveNS)
	}
	if _, err := net.InterfaceByName(staleIf); err == nil {
		t.Errorf("stale link %s still exists", staleIf)
	}
}

// TestNetnsDeployment runs Debian's redis-server and redis-sentinel in
// namespaces: each node binds its own IP, the sentinel announces the
// master's, and PartitionPeers cuts the replica's link while this process
// still reaches the master; Stop removes the namespaces.
func TestNetnsDeployment(t *testing.T) {
	needNetns(t)
	for _, b := range []string{"redis-server", "redis-sentinel"} {
		if _, err := exec.LookPath(b); err != nil {
			t.Skipf("%s not installed: apt-get install -y redis-server redis-sentinel redis-tools", b)
		}
	}
	d, err := New(Spec{Kind: KindRedis, Dir: t.TempDir(), Replicas: 1, Sentinels: 1, Netns: true,
		BasePort: 7100, SentinelBasePort: 27100, DownAfter: time.Minute, StopTimeout: 10 * time.Second,
		ServerDirectives: []string{"repl-ping-replica-period 1", "repl-timeout 2"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Stop() })
	if d.Network() != "netns" {
		t.Fatalf("Network() = %q, want netns", d.Network())
	}
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := d.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}
	m, r := d.Servers[0], d.Servers[1]
	if m.Host == r.Host || m.Host == "127.0.0.1" {
		t.Fatalf("hosts %s and %s: want one IP per node", m.Host, r.Host)
	}
	if cm, err := d.CurrentMaster(ctx); err != nil || cm != m {
		t.Fatalf("CurrentMaster = %v, %v; want %s (the sentinel announces %s)", cm, err, m.Name, m.Addr())
	}
	linkStatus := func() string {
		cl := redis.NewClient(&redis.Options{Addr: r.Addr(), MaxRetries: -1, DialTimeout: time.Second, ReadTimeout: time.Second})
		defer cl.Close()
		info, err := cl.Info(ctx, "replication").Result()
		if err != nil {
			return "error: " + err.Error()
		}
		for _, l := range strings.Split(info, "\n") {
			if strings.HasPrefix(l, "master_link_status:") {
				return strings.TrimSpace(strings.TrimPrefix(l, "master_link_status:"))
			}
		}
		return "none"
	}
	awaitLink := func(want string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for got := linkStatus(); got != want; got = linkStatus() {
			if time.Now().After(deadline) {
				t.Fatalf("replica master_link_status %q, want %q", got, want)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	heal, err := d.PartitionPeers([]*Node{m})
	if err != nil {
		t.Fatal(err)
	}
	awaitLink("down")
	mc := redis.NewClient(&redis.Options{Addr: m.Addr(), MaxRetries: -1, DialTimeout: time.Second, ReadTimeout: time.Second})
	defer mc.Close()
	if err := mc.Set(ctx, "during-cut", "1", 0).Err(); err != nil {
		t.Errorf("this process cannot reach the master cut from its peers: %v", err)
	}
	if err := heal(); err != nil {
		t.Fatal(err)
	}
	awaitLink("up")

	hub := d.net.hub
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}
	list := netnsList(t)
	for _, n := range append(d.Nodes(), &Node{netns: hub}) {
		if strings.Contains(list, n.netns) {
			t.Errorf("namespace %s left after Stop", n.netns)
		}
	}
}
