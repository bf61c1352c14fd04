package client

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
)

// ErrStaleMaster is returned (wrapped in the command's error) when a command
// was about to be written to an address that stopped being the master. No
// byte of it was sent; it is safe to retry.
var ErrStaleMaster = errors.New("client: connection points at a former master (not written)")

// trackedConn wraps every data connection the client dials. It exists for
// one guarantee go-redis cannot give: once the client has switched to a new
// master (on +switch-master or after rediscovery), no byte is written to the
// old one. Write checks the address against the current master under a read
// lock that the switch takes exclusively, so a write either starts before
// the switch completes or is refused.
type trackedConn struct {
	net.Conn
	c      *Client
	addr   string
	master bool // a connection of the master pool (guarded writes)
	closed atomic.Bool
}

func (t *trackedConn) Write(b []byte) (int, error) {
	if !t.master {
		return t.Conn.Write(b)
	}
	t.c.switchMu.RLock()
	defer t.c.switchMu.RUnlock()
	if t.c.masterAddr() != t.addr {
		return 0, &net.OpError{Op: "write", Net: "tcp", Err: ErrStaleMaster}
	}
	return t.Conn.Write(b)
}

func (t *trackedConn) Close() error {
	if t.closed.Swap(true) {
		return nil
	}
	t.c.untrack(t)
	return t.Conn.Close()
}

// SyscallConn lets go-redis's pool health check see a connection the client
// closed on a switch, so the pool drops it instead of handing it out.
func (t *trackedConn) SyscallConn() (syscall.RawConn, error) {
	if t.closed.Load() {
		return nil, net.ErrClosed
	}
	if sc, ok := t.Conn.(syscall.Conn); ok {
		return sc.SyscallConn()
	}
	return nil, errors.New("client: not a syscall.Conn")
}

// connSet is the registry of live data connections.
type connSet struct {
	mu    sync.Mutex
	conns map[*trackedConn]struct{}
}

func (c *Client) track(nc net.Conn, addr string, master bool) *trackedConn {
	t := &trackedConn{Conn: nc, c: c, addr: addr, master: master}
	c.conns.mu.Lock()
	if c.conns.conns == nil {
		c.conns.conns = map[*trackedConn]struct{}{}
	}
	c.conns.conns[t] = struct{}{}
	c.conns.mu.Unlock()
	return t
}

func (c *Client) untrack(t *trackedConn) {
	c.conns.mu.Lock()
	delete(c.conns.conns, t)
	c.conns.mu.Unlock()
}

// closeConns closes every tracked connection drop selects. Commands waiting
// on them fail with a connection error and are retried by the client.
func (c *Client) closeConns(drop func(*trackedConn) bool) {
	c.conns.mu.Lock()
	var victims []*trackedConn
	for t := range c.conns.conns {
		if drop(t) {
			victims = append(victims, t)
		}
	}
	c.conns.mu.Unlock()
	for _, t := range victims {
		_ = t.Close()
	}
}
