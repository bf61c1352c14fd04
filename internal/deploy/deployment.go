package deploy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Deployment is a local master, its replicas and the sentinels watching it;
// with Spec.Groups > 1, several such groups under the same sentinels.
type Deployment struct {
	Spec Spec // with defaults filled in
	// Servers are every group's servers, group by group; Servers[0] is the
	// first group's master as started.
	Servers   []*Node
	Sentinels []*Node

	// groups are the views of Groups (nil with one group: d is its own).
	groups []*Deployment
	net    *netnsNet // Spec.Netns
}

// New checks the spec, the binaries and that every port is free, then
// writes each node's directory and config file under spec.Dir (configs are
// regenerated on every New; data files are kept). Nothing is started.
func New(spec Spec) (*Deployment, error) {
	s := spec.withDefaults()
	if err := s.validate(); err != nil {
		return nil, err
	}
	serverArgv, sentinelArgv, err := s.binaries()
	if err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(s.Dir)
	if err != nil {
		return nil, err
	}
	s.Dir = dir
	d := &Deployment{Spec: s}
	for g := 1; g <= s.Groups; g++ {
		var servers []*Node
		for i := 0; i <= s.Replicas; i++ {
			role := RoleReplica
			if i == 0 {
				role = RoleMaster
			}
			servers = append(servers, s.newNode(role, s.GroupBasePort(g)+i, serverArgv))
		}
		d.Servers = append(d.Servers, servers...)
		if s.Groups > 1 {
			gs := s
			gs.Groups, gs.MasterName, gs.BasePort = 1, s.GroupName(g), s.GroupBasePort(g)
			d.groups = append(d.groups, &Deployment{Spec: gs, Servers: servers})
		}
	}
	for i := 0; i < s.Sentinels; i++ {
		d.Sentinels = append(d.Sentinels, s.newNode(RoleSentinel, s.SentinelBasePort+i, sentinelArgv))
	}
	if s.Proxy {
		for _, n := range d.Servers {
			p, err := newProxy(s.Host, n.Addr())
			if err != nil {
				d.closeProxies()
				return nil, err
			}
			n.proxy, n.PeerPort = p, p.port()
		}
	}
	if s.Netns {
		n, err := newNetns(d.Nodes())
		if err != nil {
			return nil, err
		}
		d.net = n
	}
	for _, g := range d.groups {
		g.Sentinels, g.net = d.Sentinels, d.net
	}
	var masters []groupMaster
	for _, g := range d.Groups() {
		masters = append(masters, groupMaster{g.Spec.MasterName, g.Servers[0]})
	}
	for _, n := range d.Nodes() {
		if d.net != nil {
			break // each node has a namespace of its own: every port is free
		}
		flag := "--base-port"
		if n.Role == RoleSentinel {
			flag = "--sentinel-base-port"
		}
		if err := checkPort(s.Host, n.Port); err != nil {
			d.closeProxies()
			return nil, &PortBusyError{Port: n.Port, Node: n.Name, Flag: flag, Err: err}
		}
	}
	for _, n := range d.Nodes() {
		if err := os.MkdirAll(n.Dir, 0o755); err != nil {
			d.closeNet()
			return nil, err
		}
		text, err := s.nodeConfig(n, d.groupOf(n).Servers[0], masters)
		if err != nil {
			d.closeNet()
			return nil, err
		}
		if err := os.WriteFile(n.ConfPath, []byte(text), 0o644); err != nil {
			d.closeNet()
			return nil, err
		}
	}
	return d, nil
}

func (s Spec) newNode(role Role, port int, argv []string) *Node {
	dir := nodeDir(s.Dir, role, port)
	base := "server"
	conf := "redis.conf"
	if role == RoleSentinel {
		base, conf = "sentinel", "sentinel.conf"
	}
	return &Node{
		Name:        filepath.Base(dir),
		Role:        role,
		Host:        s.Host,
		Port:        port,
		Dir:         dir,
		ConfPath:    filepath.Join(dir, conf),
		LogPath:     filepath.Join(dir, base+".log"),
		PidPath:     filepath.Join(dir, base+".pid"),
		OutPath:     filepath.Join(dir, "output.log"),
		argv:        argv,
		stopTimeout: s.StopTimeout,
	}
}

// Groups are the deployment's groups, the first group first: one view per
// master name, holding that group's servers, the shared sentinels and a
// Spec whose MasterName and BasePort are the group's. With one group it is
// d itself. A view shares d's nodes: use it to ask about or act on one
// group (CurrentMaster, Health, RestartDead, faults), and Start and Stop
// the whole deployment through d.
func (d *Deployment) Groups() []*Deployment {
	if len(d.groups) == 0 {
		return []*Deployment{d}
	}
	return append([]*Deployment{}, d.groups...)
}

// Group is the group named name (a master name), or nil.
func (d *Deployment) Group(name string) *Deployment {
	for _, g := range d.Groups() {
		if g.Spec.MasterName == name {
			return g
		}
	}
	return nil
}

// groupOf is the group n belongs to (the first group for a sentinel).
func (d *Deployment) groupOf(n *Node) *Deployment {
	for _, g := range d.Groups() {
		for _, s := range g.Servers {
			if s == n {
				return g
			}
		}
	}
	return d.Groups()[0]
}

// Nodes is the servers then the sentinels.
func (d *Deployment) Nodes() []*Node {
	return append(append([]*Node{}, d.Servers...), d.Sentinels...)
}

// Node finds a node by address (host:port, its own or its proxy's), or nil.
func (d *Deployment) Node(addr string) *Node {
	for _, n := range d.Nodes() {
		if n.Addr() == addr || n.PeerAddr() == addr {
			return n
		}
	}
	return nil
}

// SentinelAddrs are the sentinels' host:port.
func (d *Deployment) SentinelAddrs() []string {
	var out []string
	for _, n := range d.Sentinels {
		out = append(out, n.Addr())
	}
	return out
}

// ServerAddrs are the servers' host:port (their PeerAddr: the proxy's with
// Spec.Proxy), the master as started first.
func (d *Deployment) ServerAddrs() []string {
	var out []string
	for _, n := range d.Servers {
		out = append(out, n.PeerAddr())
	}
	return out
}

// Start starts the servers, then the sentinels. On error the nodes already
// started are stopped.
func (d *Deployment) Start() error {
	for _, n := range d.Nodes() {
		if err := n.Start(); err != nil {
			d.Stop()
			return err
		}
	}
	return nil
}

// Stop stops the sentinels first (so they do not fail over a master being
// shut down), then the servers, each with SIGTERM and SIGKILL after the
// spec's stop timeout. It returns the errors of nodes that had to be killed.
func (d *Deployment) Stop() error {
	e1 := stopAll(d.Sentinels)
	e2 := stopAll(d.Servers)
	d.closeProxies()
	return errors.Join(e1, e2, d.closeNet())
}

// Close removes what New set up besides the processes (the proxies, the
// network namespaces) without stopping nodes: for a Deployment that was
// never started. Stop does it too.
func (d *Deployment) Close() error {
	d.closeProxies()
	return d.closeNet()
}

// closeNet removes the network namespaces (Spec.Netns).
func (d *Deployment) closeNet() error {
	if d.net == nil {
		return nil
	}
	return d.net.close()
}

// Network says how Partition cuts nodes off: "netns" (network namespaces,
// Spec.Netns), "proxy" (Spec.Proxy) or "" (it cannot).
func (d *Deployment) Network() string {
	switch {
	case d.net != nil:
		return "netns"
	case d.Spec.Proxy:
		return "proxy"
	}
	return ""
}

// NetworkInfo describes the network for logs: the namespaces' subnet and
// hub, or the proxies.
func (d *Deployment) NetworkInfo() string {
	switch d.Network() {
	case "netns":
		return fmt.Sprintf("network namespaces: one per node on %s0/24, bridge in namespace %s, cuts are nftables drops", d.net.prefix, d.net.hub)
	case "proxy":
		return "TCP proxies in front of the servers, in this process"
	}
	return "loopback, no partitions"
}

// closeProxies closes the servers' proxies (Spec.Proxy).
func (d *Deployment) closeProxies() {
	for _, n := range d.Servers {
		if n.proxy != nil {
			n.proxy.close()
		}
	}
}

func stopAll(nodes []*Node) error {
	var wg sync.WaitGroup
	errs := make([]error, len(nodes))
	for i, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = n.Stop()
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// WaitHealthy polls Collect until Health reports nothing, the context ends
// or a node exits. The error names the conditions still unmet.
func (d *Deployment) WaitHealthy(ctx context.Context) error {
	return d.WaitHealthyFunc(ctx, nil)
}

// WaitHealthyFunc is WaitHealthy calling progress (when not nil) with the
// unmet conditions after each check that found some.
func (d *Deployment) WaitHealthyFunc(ctx context.Context, progress func(problems []string)) error {
	var problems []string
	for {
		for _, n := range d.Nodes() {
			if isDone(n.Done()) {
				return fmt.Errorf("%s exited (%v) before the deployment was healthy; see %s and %s%s",
					n.Name, n.ExitErr(), n.LogPath, n.OutPath, tail(n.LogPath, n.OutPath))
			}
		}
		// The collection has its own timeout, not ctx's: one cut short by
		// the deadline would report timeouts instead of the unmet
		// conditions. Its result is used only when ctx is still live.
		cctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		var now []string
		for _, g := range d.Groups() {
			st := Collect(cctx, g.CollectOptions())
			for _, p := range g.Health(st) {
				if len(d.groups) > 0 {
					p = "group " + g.Spec.MasterName + ": " + p
				}
				now = append(now, p)
			}
		}
		cancel()
		if ctx.Err() == nil || problems == nil {
			problems = now
		}
		if len(problems) == 0 {
			return nil
		}
		if progress != nil && ctx.Err() == nil {
			progress(problems)
		}
		t := time.NewTimer(200 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("the deployment is not healthy: %s", strings.Join(problems, "; "))
		case <-t.C:
		}
	}
}

// CollectOptions asks for the deployment's status through its sentinels and
// also queries every server, so one that is down shows as down. With
// several groups it is the first group's: ask each of Groups for theirs.
func (d *Deployment) CollectOptions() CollectOptions {
	if len(d.groups) > 0 {
		return d.groups[0].CollectOptions()
	}
	o := CollectOptions{Sentinels: d.SentinelAddrs(), MasterName: d.Spec.MasterName, Servers: d.ServerAddrs(),
		WantReplicas: len(d.Servers) - 1, WantSentinels: len(d.Sentinels)}
	if len(d.Sentinels) == 0 {
		o.MasterAddr = d.Servers[0].PeerAddr()
	}
	return o
}

// Health lists the conditions of a healthy deployment that st does not meet
// (none when healthy): the master sees every replica connected with its link
// up, and every sentinel knows the master, every replica and every other
// sentinel.
func (d *Deployment) Health(st *Status) []string {
	return st.Health(d.Spec.Replicas, len(d.Sentinels))
}

// tail is the last lines of the first non-empty file, for error messages.
func tail(paths ...string) string {
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil || len(strings.TrimSpace(string(b))) == 0 {
			continue
		}
		lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
		if len(lines) > 10 {
			lines = lines[len(lines)-10:]
		}
		return "\n" + filepath.Base(p) + ":\n  " + strings.Join(lines, "\n  ")
	}
	return ""
}

// CurrentMaster is the server the sentinels name as master now (SENTINEL
// get-master-addr-by-name, the first sentinel that answers); without
// sentinels it is the master as started. With several groups it is the
// first group's: ask each of Groups for theirs.
func (d *Deployment) CurrentMaster(ctx context.Context) (*Node, error) {
	if len(d.groups) > 0 {
		return d.groups[0].CurrentMaster(ctx)
	}
	if len(d.Sentinels) == 0 {
		return d.Servers[0], nil
	}
	var errs []error
	for _, s := range d.Sentinels {
		cl := redis.NewClient(clientOptions(s.Addr(), time.Second))
		addr, err := cl.Do(ctx, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", d.Spec.MasterName).StringSlice()
		cl.Close()
		if err == nil && len(addr) == 2 {
			if n := d.Node(net.JoinHostPort(addr[0], addr[1])); n != nil {
				return n, nil
			}
			err = fmt.Errorf("names %s:%s, not a server of this deployment", addr[0], addr[1])
		}
		errs = append(errs, fmt.Errorf("sentinel %s: %w", s.Addr(), err))
	}
	return nil, fmt.Errorf("no sentinel names the master: %w", errors.Join(errs...))
}
