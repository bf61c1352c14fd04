//go:build linux

package deploy

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
)

// Network namespaces (Spec.Netns, Linux, root): every node runs in a
// namespace of its own with one veth interface (eth0) holding its own IP,
// 10.A.B.<2+i>/24. The other end of each veth is a port of a bridge that
// lives in a further "hub" namespace, with one more veth from the hub to
// the root namespace (10.A.B.1/24) so this process (the drill's clients,
// Collect, vigil up) reaches every node. A cut is an nftables rule in the
// hub's bridge table dropping frames: real packet loss, peers time out.
//
// The bridge and its rules live in the hub namespace, not the root one, so
// the host's own firewall (a FORWARD policy DROP with br_netfilter, as
// Docker sets up) neither breaks the fleet nor needs a rule, and removing
// the namespaces removes everything: deleting a namespace destroys the
// interfaces in it, a veth's peer with it, and the hub's nftables table.
//
// Names carry a unique prefix and the pid of the process that made them:
// namespaces "vigil-<pid>-<seq>-hub" and "vigil-<pid>-<seq>-<node>", the root
// namespace's veth "vg<pid>r<seq>". New removes the ones whose process is
// gone (a crashed earlier run) before making its own.

const netnsPrefix = "vigil-"

// netnsSeq numbers the networks of one process.
var netnsSeq atomic.Int32

// netnsNet is a deployment's namespaces and bridge.
type netnsNet struct {
	id      string // "<pid>-<seq>"
	hub     string // hub namespace
	rootIf  string // veth in the root namespace
	prefix  string // "10.A.B."
	ipPath  string
	nftPath string

	mu     sync.Mutex
	made   []string         // namespaces created, for removal
	ports  map[*Node]string // node -> its bridge port in the hub
	cuts   map[int]string   // active cut id -> description
	nextID int
	closed bool
}

// NetnsAvailable reports why network namespaces cannot be used here (nil
// when they can): it needs Linux, root, the ip and nft commands, and it
// creates and removes a probe namespace with a veth and an nftables bridge
// table to be sure the kernel allows all of it (a container may not).
func NetnsAvailable() error {
	if os.Geteuid() != 0 {
		return errors.New("not running as root")
	}
	ip, err := exec.LookPath("ip")
	if err != nil {
		return errors.New("the ip command is missing (apt-get install -y iproute2)")
	}
	nft, err := exec.LookPath("nft")
	if err != nil {
		return errors.New("the nft command is missing (apt-get install -y nftables)")
	}
	ns := fmt.Sprintf("%s%d-probe%d", netnsPrefix, os.Getpid(), netnsSeq.Add(1))
	if _, err := run(ip, "netns", "add", ns); err != nil {
		return fmt.Errorf("ip netns add: %w", err)
	}
	defer run(ip, "netns", "del", ns)
	if _, err := run(ip, "-n", ns, "link", "add", "name", "probea", "type", "veth", "peer", "name", "probeb"); err != nil {
		return fmt.Errorf("creating a veth pair: %w", err)
	}
	if _, err := run(ip, "netns", "exec", ns, nft, "add", "table", "bridge", "probe"); err != nil {
		return fmt.Errorf("nftables bridge table: %w", err)
	}
	return nil
}

// run runs a command and returns its output; the error carries its stderr.
func run(name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// pidAlive reports whether a process with this pid exists.
func pidAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// ownerPid parses the pid out of a name made by this file: "vigil-<pid>-..."
// or "vg<pid>r<seq>"; 0 when the name is not one of ours.
func ownerPid(name string) int {
	var rest string
	switch {
	case strings.HasPrefix(name, netnsPrefix):
		rest = strings.TrimPrefix(name, netnsPrefix)
	case strings.HasPrefix(name, "vg"):
		rest = strings.TrimPrefix(name, "vg")
	default:
		return 0
	}
	i := 0
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		i++
	}
	if i == 0 || i == len(rest) {
		return 0
	}
	if strings.HasPrefix(name, netnsPrefix) && rest[i] != '-' {
		return 0
	}
	if strings.HasPrefix(name, "vg") && rest[i] != 'r' {
		return 0
	}
	pid, err := strconv.Atoi(rest[:i])
	if err != nil {
		return 0
	}
	return pid
}

// CleanStaleNetns removes the namespaces and root veths left by runs whose
// process is gone (a crash or SIGKILL skipped Stop). It returns what it
// removed.
func CleanStaleNetns() ([]string, error) {
	ip, err := exec.LookPath("ip")
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	out, err := run(ip, "netns", "list")
	if err != nil {
		return nil, err
	}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if pid := ownerPid(f[0]); pid != 0 && !pidAlive(pid) {
			if _, err := run(ip, "netns", "del", f[0]); err != nil {
				errs = append(errs, err)
				continue
			}
			removed = append(removed, "netns "+f[0])
		}
	}
	ifs, _ := net.Interfaces()
	for _, i := range ifs {
		if pid := ownerPid(i.Name); pid != 0 && !pidAlive(pid) {
			if _, err := run(ip, "link", "del", i.Name); err != nil {
				if _, gone := net.InterfaceByName(i.Name); gone != nil {
					continue // removed with its peer meanwhile
				}
				errs = append(errs, err)
				continue
			}
			removed = append(removed, "link "+i.Name)
		}
	}
	return removed, errors.Join(errs...)
}

// pickSubnet returns "10.A.B." for a /24 no interface of the root
// namespace has an address in, starting from one derived from pid and seq
// so concurrent runs start apart.
func pickSubnet(pid, seq int) (string, error) {
	used := map[[2]byte]bool{}
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok {
			if ip4 := ipn.IP.To4(); ip4 != nil && ip4[0] == 10 {
				used[[2]byte{ip4[1], ip4[2]}] = true
			}
		}
	}
	// 10.128.0.0 - 10.255.255.0: 32768 subnets.
	start := (pid*7 + seq*7919) % 32768
	for k := 0; k < 32768; k++ {
		n := (start + k) % 32768
		a, b := byte(128+n/256), byte(n%256)
		if !used[[2]byte{a, b}] {
			return fmt.Sprintf("10.%d.%d.", a, b), nil
		}
	}
	return "", errors.New("no free 10.x.y.0/24 subnet")
}

// newNetns removes stale namespaces, then builds the hub, the root veth and
// one namespace and veth per node, setting each node's Host to its IP.
func newNetns(nodes []*Node) (_ *netnsNet, err error) {
	if err := NetnsAvailable(); err != nil {
		return nil, fmt.Errorf("network namespaces unavailable: %w", err)
	}
	if _, err := CleanStaleNetns(); err != nil {
		return nil, fmt.Errorf("removing stale namespaces: %w", err)
	}
	ip, _ := exec.LookPath("ip")
	nft, _ := exec.LookPath("nft")
	pid, seq := os.Getpid(), int(netnsSeq.Add(1))
	prefix, err := pickSubnet(pid, seq)
	if err != nil {
		return nil, err
	}
	id := fmt.Sprintf("%d-%d", pid, seq)
	n := &netnsNet{id: id, hub: netnsPrefix + id + "-hub", rootIf: fmt.Sprintf("vg%dr%d", pid, seq), prefix: prefix,
		ipPath: ip, nftPath: nft, ports: map[*Node]string{}, cuts: map[int]string{}}
	defer func() {
		if err != nil {
			n.close()
		}
	}()
	addNS := func(name string) error {
		if _, err := run(ip, "netns", "add", name); err != nil {
			return err
		}
		n.made = append(n.made, name)
		_, err := run(ip, "-n", name, "link", "set", "lo", "up")
		return err
	}
	if err := addNS(n.hub); err != nil {
		return nil, err
	}
	steps := [][]string{
		{"-n", n.hub, "link", "add", "name", "br0", "type", "bridge"},
		{"-n", n.hub, "link", "set", "br0", "up"},
		{"link", "add", "name", n.rootIf, "type", "veth", "peer", "name", "root", "netns", n.hub},
		{"-n", n.hub, "link", "set", "root", "master", "br0", "up"},
		{"addr", "add", prefix + "1/24", "dev", n.rootIf},
		{"link", "set", n.rootIf, "up"},
	}
	for _, s := range steps {
		if _, err := run(ip, s...); err != nil {
			return nil, err
		}
	}
	for i, node := range nodes {
		ns := netnsPrefix + id + "-" + node.Name
		port := fmt.Sprintf("p%d", i)
		if err := addNS(ns); err != nil {
			return nil, err
		}
		host := prefix + strconv.Itoa(2+i)
		for _, s := range [][]string{
			{"-n", n.hub, "link", "add", "name", port, "type", "veth", "peer", "name", "eth0", "netns", ns},
			{"-n", n.hub, "link", "set", port, "master", "br0", "up"},
			{"-n", ns, "addr", "add", host + "/24", "dev", "eth0"},
			{"-n", ns, "link", "set", "eth0", "up"},
		} {
			if _, err := run(ip, s...); err != nil {
				return nil, err
			}
		}
		node.Host, node.netns = host, ns
		n.ports[node] = port
	}
	// The table the cuts go into; its forward chain starts empty.
	if _, err := n.nft("add table bridge vigil\n" +
		"add chain bridge vigil cuts { type filter hook forward priority 0; policy accept; }\n"); err != nil {
		return nil, err
	}
	return n, nil
}

// nft runs an nft script in the hub namespace.
func (n *netnsNet) nft(script string) (string, error) {
	cmd := exec.Command(n.ipPath, "netns", "exec", n.hub, n.nftPath, "-f", "-")
	cmd.Stdin = strings.NewReader(script)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("nft in %s: %v: %s (script %q)", n.hub, err, strings.TrimSpace(errb.String()), script)
	}
	return out.String(), nil
}

// cut drops, in the hub's bridge, the frames to and from each isolated
// node's port; with keepRoot the frames between them and the root
// namespace (this process) still pass. It returns the function that
// removes exactly these rules.
func (n *netnsNet) cut(isolated []*Node, keepRoot bool) (heal func() error, err error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil, errors.New("deploy: the deployment's network is removed")
	}
	var rules []string
	for _, node := range isolated {
		p, ok := n.ports[node]
		if !ok {
			return nil, fmt.Errorf("%s: not a node of this deployment's network", node.Name)
		}
		if keepRoot {
			rules = append(rules,
				fmt.Sprintf(`iifname "%s" oifname != "root" drop`, p),
				fmt.Sprintf(`oifname "%s" iifname != "root" drop`, p))
		} else {
			rules = append(rules, fmt.Sprintf(`iifname "%s" drop`, p), fmt.Sprintf(`oifname "%s" drop`, p))
		}
	}
	return n.addCut(rules)
}

// split drops, in the hub's bridge, every frame between a node of side a
// and a node of side b, both ways. Nodes on the same side still reach each
// other, and the root namespace (this process) reaches both sides. It
// returns the function that removes exactly these rules.
func (n *netnsNet) split(a, b []*Node) (heal func() error, err error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil, errors.New("deploy: the deployment's network is removed")
	}
	ports := func(side []*Node) ([]string, error) {
		var out []string
		for _, node := range side {
			p, ok := n.ports[node]
			if !ok {
				return nil, fmt.Errorf("%s: not a node of this deployment's network", node.Name)
			}
			out = append(out, p)
		}
		return out, nil
	}
	pa, err := ports(a)
	if err != nil {
		return nil, err
	}
	pb, err := ports(b)
	if err != nil {
		return nil, err
	}
	return n.addCut(splitRules(pa, pb))
}

// splitRules are the nftables rules (bridge forward chain) dropping every
// frame between a port of a and a port of b, both ways.
func splitRules(a, b []string) []string {
	set := func(ports []string) string {
		q := make([]string, len(ports))
		for i, p := range ports {
			q[i] = `"` + p + `"`
		}
		return "{ " + strings.Join(q, ", ") + " }"
	}
	if len(a) == 0 || len(b) == 0 {
		return nil
	}
	return []string{
		fmt.Sprintf("iifname %s oifname %s drop", set(a), set(b)),
		fmt.Sprintf("iifname %s oifname %s drop", set(b), set(a)),
	}
}

// addCut adds rules, each tagged with a new cut's comment, and returns the
// function that removes them (n.mu held).
func (n *netnsNet) addCut(rules []string) (heal func() error, err error) {
	n.nextID++
	cid := n.nextID
	// Each rule carries a comment naming its cut, so heal removes its own.
	tag := fmt.Sprintf("cut%d", cid)
	var script strings.Builder
	for _, r := range rules {
		fmt.Fprintf(&script, "add rule bridge vigil cuts %s comment \"%s\"\n", r, tag)
	}
	if _, err := n.nft(script.String()); err != nil {
		return nil, err
	}
	n.cuts[cid] = tag
	var once sync.Once
	var herr error
	return func() error {
		once.Do(func() { herr = n.heal(cid) })
		return herr
	}, nil
}

// heal removes the rules of cut cid.
func (n *netnsNet) heal(cid int) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	tag, ok := n.cuts[cid]
	if !ok || n.closed {
		return nil
	}
	out, err := run(n.ipPath, "netns", "exec", n.hub, n.nftPath, "-a", "list", "chain", "bridge", "vigil", "cuts")
	if err != nil {
		return err
	}
	var script strings.Builder
	for _, line := range strings.Split(out, "\n") {
		if !strings.Contains(line, `comment "`+tag+`"`) {
			continue
		}
		if i := strings.LastIndex(line, "# handle "); i >= 0 {
			fmt.Fprintf(&script, "delete rule bridge vigil cuts handle %s\n", strings.TrimSpace(line[i+len("# handle "):]))
		}
	}
	if script.Len() > 0 {
		if _, err := n.nft(script.String()); err != nil {
			return err
		}
	}
	delete(n.cuts, cid)
	return nil
}

// rules lists the hub's forward chain (for tests and diagnostics).
func (n *netnsNet) rules() (string, error) {
	return n.nft("list chain bridge vigil cuts\n")
}

// close removes every namespace it made (their interfaces, the bridge and
// the nftables table go with them) and the root veth, should it remain.
func (n *netnsNet) close() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil
	}
	n.closed = true
	var errs []error
	for i := len(n.made) - 1; i >= 0; i-- {
		if _, err := run(n.ipPath, "netns", "del", n.made[i]); err != nil {
			errs = append(errs, err)
		}
	}
	if _, err := net.InterfaceByName(n.rootIf); err == nil {
		if _, err := run(n.ipPath, "link", "del", n.rootIf); err != nil {
			// Deleting the namespaces deletes the veth's peer, and the
			// kernel takes this end with it, which may happen between the
			// look-up and the delete: only an interface still there is
			// an error.
			if _, gone := net.InterfaceByName(n.rootIf); gone == nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}
