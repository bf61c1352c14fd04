package deploy

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
)

// proxy is the fault-injecting TCP proxy placed in front of a server when
// Spec.Proxy is set. Replicas, sentinels and clients reach the server only
// through it (the server announces the proxy's port), so cutting the proxy
// cuts the server from all of them while its process runs on.
//
// Cut is packet loss, not a reset: connections open at the cut stay open
// and every byte either way is dropped (peers see timeouts), new
// connections are accepted and swallowed the same way. Heal closes every
// connection that lived through the cut (its stream lost bytes, which TCP
// would have retransmitted; closing is the honest equivalent) and forwards
// new connections again.
type proxy struct {
	ln     net.Listener
	target string

	mu        sync.Mutex
	cut       bool
	keepLocal bool // during the cut, connections from this process pass
	conns     map[*proxyConn]struct{}
	done      bool
}

type proxyConn struct {
	a, b    net.Conn // a: accepted, b: to the target (nil when dialed during a cut)
	local   bool     // the peer socket belongs to this process (a drill client)
	tainted bool     // lived through a cut
}

// blocked reports whether pc's traffic is dropped now (p.mu held).
func (p *proxy) blocked(pc *proxyConn) bool {
	return p.cut && !(p.keepLocal && pc.local)
}

func newProxy(host, target string) (*proxy, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return nil, fmt.Errorf("proxy for %s: %w", target, err)
	}
	p := &proxy{ln: ln, target: target, conns: map[*proxyConn]struct{}{}}
	go p.accept()
	return p, nil
}

// port is the proxy's listening port.
func (p *proxy) port() int { return p.ln.Addr().(*net.TCPAddr).Port }

func (p *proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.serve(c)
	}
}

func (p *proxy) serve(a net.Conn) {
	pc := &proxyConn{a: a, local: ownSocket(a.RemoteAddr(), a.LocalAddr())}
	p.mu.Lock()
	if p.done {
		p.mu.Unlock()
		a.Close()
		return
	}
	cut := p.blocked(pc)
	pc.tainted = cut
	p.conns[pc] = struct{}{}
	p.mu.Unlock()
	defer p.drop(pc)
	if cut {
		io.Copy(io.Discard, a) // swallowed until heal closes it
		return
	}
	b, err := net.Dial("tcp", p.target)
	if err != nil {
		return // the server is down: the client sees the connection close
	}
	p.mu.Lock()
	pc.b = b
	p.mu.Unlock()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); p.pipe(pc, b, a); b.Close(); a.Close() }()
	go func() { defer wg.Done(); p.pipe(pc, a, b); a.Close(); b.Close() }()
	wg.Wait()
}

// pipe copies src to dst, dropping what it reads while the proxy is cut.
func (p *proxy) pipe(pc *proxyConn, dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			cut := p.blocked(pc)
			p.mu.Unlock()
			if !cut {
				if _, werr := dst.Write(buf[:n]); werr != nil {
					return
				}
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *proxy) drop(pc *proxyConn) {
	p.mu.Lock()
	delete(p.conns, pc)
	p.mu.Unlock()
	pc.a.Close()
	if pc.b != nil {
		pc.b.Close()
	}
}

func (p *proxy) setCut(cut, keepLocal bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut == cut {
		return
	}
	p.cut, p.keepLocal = cut, keepLocal
	for pc := range p.conns {
		if cut {
			pc.tainted = p.blocked(pc)
		} else if pc.tainted {
			pc.a.Close()
			if pc.b != nil {
				pc.b.Close()
			}
		}
	}
}

func (p *proxy) close() {
	p.mu.Lock()
	p.done = true
	for pc := range p.conns {
		pc.a.Close()
		if pc.b != nil {
			pc.b.Close()
		}
	}
	p.mu.Unlock()
	p.ln.Close()
}

// PeerAddr is the address replicas, sentinels and clients use for the node:
// its proxy's when Spec.Proxy is set, else Addr.
func (n *Node) PeerAddr() string {
	if n.PeerPort != 0 {
		return net.JoinHostPort(n.Host, strconv.Itoa(n.PeerPort))
	}
	return n.Addr()
}

// ErrPartitionUnsupported is Partition's error when the deployment was not
// started with Spec.Proxy or a node to isolate has no proxy (sentinels).
var ErrPartitionUnsupported = errors.New("deploy: network partitions need Spec.Netns (network namespaces) or Spec.Proxy (a TCP proxy in front of each server, which cannot partition sentinels)")

// Partition cuts each isolated server off the network: its proxy drops
// every byte both ways (packet loss: peers time out), for replicas,
// sentinels and clients alike, while the process keeps running. heal
// restores forwarding and closes the connections that lived through the
// cut. It needs Spec.Proxy (ErrPartitionUnsupported otherwise). With
// Spec.Netns the cut is nftables drops on the nodes' bridge ports (any
// node, sentinels too) and heal removes them.
func (d *Deployment) Partition(isolated []*Node) (heal func() error, err error) {
	return d.partition(isolated, false)
}

// PartitionPeers is Partition except that connections opened from this
// process (a drill's clients, Collect) still pass: the isolated servers are
// cut from the replicas and the sentinels (other processes) while the
// clients here can still reach them, the split-brain case. A connection is
// "from this process" when the socket at its other end is one of this
// process's file descriptors (Linux: /proc/net/tcp and /proc/self/fd;
// elsewhere no connection is, and PartitionPeers is Partition). With
// Spec.Netns, "from this process" is "from the root network namespace".
func (d *Deployment) PartitionPeers(isolated []*Node) (heal func() error, err error) {
	return d.partition(isolated, true)
}

// ErrSplitUnsupported is Split's error without Spec.Netns.
var ErrSplitUnsupported = errors.New("deploy: a split needs network namespaces (Spec.Netns, vigil drill --net netns): " +
	"the TCP proxy sits in front of the servers only, so it cannot cut the sentinels' links to each other, and on loopback every node shares one network")

// Split partitions the deployment in two: every packet between a node of
// side a and a node of side b is dropped both ways (real packet loss, peers
// time out), while nodes on the same side still reach each other and this
// process (a drill's clients, application hosts that see both sides)
// reaches every node. heal removes the cut; TCP retransmits what was
// dropped. It needs Spec.Netns (ErrSplitUnsupported otherwise); a node may
// not be on both sides, and neither side may be empty.
func (d *Deployment) Split(a, b []*Node) (heal func() error, err error) {
	if d.net == nil {
		return nil, ErrSplitUnsupported
	}
	if len(a) == 0 || len(b) == 0 {
		return nil, errors.New("deploy: a split needs a node on each side")
	}
	seen := map[*Node]bool{}
	for _, n := range a {
		seen[n] = true
	}
	for _, n := range b {
		if seen[n] {
			return nil, fmt.Errorf("deploy: %s is on both sides of the split", n.Name)
		}
	}
	return d.net.split(a, b)
}

func (d *Deployment) partition(isolated []*Node, keepLocal bool) (heal func() error, err error) {
	if d.net != nil {
		return d.net.cut(isolated, keepLocal)
	}
	var ps []*proxy
	for _, n := range isolated {
		if n.proxy == nil {
			return nil, fmt.Errorf("%s: %w", n.Name, ErrPartitionUnsupported)
		}
		ps = append(ps, n.proxy)
	}
	for _, p := range ps {
		p.setCut(true, keepLocal)
	}
	return func() error {
		for _, p := range ps {
			p.setCut(false, false)
		}
		return nil
	}, nil
}

// ownSocket reports whether the TCP socket bound to peer and connected to
// local (the other end of a connection this process accepted) is open in
// this process. Linux only: it finds the socket's inode in /proc/net/tcp
// and looks for it among /proc/self/fd.
func ownSocket(peer, local net.Addr) bool {
	pa, ok1 := peer.(*net.TCPAddr)
	la, ok2 := local.(*net.TCPAddr)
	if !ok1 || !ok2 || pa.IP.To4() == nil || la.IP.To4() == nil {
		return false
	}
	hex := func(a *net.TCPAddr) string {
		ip := a.IP.To4()
		return fmt.Sprintf("%02X%02X%02X%02X:%04X", ip[3], ip[2], ip[1], ip[0], a.Port)
	}
	b, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return false
	}
	want1, want2 := hex(pa), hex(la)
	inode := ""
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 9 && f[1] == want1 && f[2] == want2 {
			inode = f[9]
			break
		}
	}
	if inode == "" || inode == "0" {
		return false
	}
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return false
	}
	target := "socket:[" + inode + "]"
	for _, e := range ents {
		if l, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && l == target {
			return true
		}
	}
	return false
}
