package deploy

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
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

	mu    sync.Mutex
	cut   bool
	conns map[*proxyConn]struct{}
	done  bool
}

type proxyConn struct {
	a, b    net.Conn // a: accepted, b: to the target (nil when dialed during a cut)
	tainted bool     // lived through a cut
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
	pc := &proxyConn{a: a}
	p.mu.Lock()
	if p.done {
		p.mu.Unlock()
		a.Close()
		return
	}
	cut := p.cut
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
	go func() { defer wg.Done(); p.pipe(b, a); b.Close(); a.Close() }()
	go func() { defer wg.Done(); p.pipe(a, b); a.Close(); b.Close() }()
	wg.Wait()
}

// pipe copies src to dst, dropping what it reads while the proxy is cut.
func (p *proxy) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			cut := p.cut
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

func (p *proxy) setCut(cut bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut == cut {
		return
	}
	p.cut = cut
	for pc := range p.conns {
		if cut {
			pc.tainted = true
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
var ErrPartitionUnsupported = errors.New("deploy: network partitions need Spec.Proxy (a TCP proxy in front of each server); sentinels cannot be partitioned")

// Partition cuts each isolated server off the network: its proxy drops every
// byte both ways (packet loss: peers time out), for replicas, sentinels and
// clients alike, while the process keeps running. heal restores forwarding
// and closes the connections that lived through the cut. It needs
// Spec.Proxy (ErrPartitionUnsupported otherwise).
//
// Network namespaces with a veth pair per node (a one-sided cut where a
// client still reaches the isolated master) are not implemented.
func (d *Deployment) Partition(isolated []*Node) (heal func() error, err error) {
	var ps []*proxy
	for _, n := range isolated {
		if n.proxy == nil {
			return nil, fmt.Errorf("%s: %w", n.Name, ErrPartitionUnsupported)
		}
		ps = append(ps, n.proxy)
	}
	for _, p := range ps {
		p.setCut(true)
	}
	return func() error {
		for _, p := range ps {
			p.setCut(false)
		}
		return nil
	}, nil
}
