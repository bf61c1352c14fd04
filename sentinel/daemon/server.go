package daemon

import (
	"crypto/tls"
	"net"
	"sync"
	"time"

	"github.com/vigil-kv/vigil/internal/acl"
	"github.com/vigil-kv/vigil/internal/netshell"
	"github.com/vigil-kv/vigil/internal/resp"
)

// client is one connection to the sentinel's own port.
type client struct {
	d       *Daemon
	conn    net.Conn
	id      int64
	addr    string
	laddr   string
	created time.Time

	// Owned by the client's goroutine.
	rd      *resp.Reader
	w       resp.Writer
	authed  bool
	user    string
	u       *acl.User // the authenticated user; nil = default
	lastCmd string
	close   bool
	rep     netshell.Replies // CLIENT REPLY
	idleAt  time.Time

	mu   sync.Mutex // guards name, w.Proto and track (read by other goroutines)
	name string
	// track is the client's CLIENT TRACKING state (nil: off). A sentinel
	// has no keys: nothing is ever invalidated, so a broken REDIRECT is
	// never noticed either (as in redis-sentinel 7.0.15).
	track *netshell.Tracking

	out *netshell.Queue // the output queue and its writer

	// subs and psubs are guarded by hub.mu.
	subs  map[string]struct{}
	psubs map[string]struct{}
}

// Listen opens the listeners of the configuration as the server does
// (netshell.Listen: bind addresses, port 0 for none, the unix socket).
func (d *Daemon) Listen() error {
	ls, err := netshell.Listen(d.st.Server, &d.tls)
	if err != nil {
		return err
	}
	for _, w := range ls.TLSWarnings {
		d.log.Warn().Msg(w)
	}
	d.tlsLinks = netshell.TLSSettingsOf(d.st.Server).Replication
	d.lnMu.Lock()
	d.listeners = append(d.listeners, ls.List...)
	d.lnMu.Unlock()
	return nil
}

// linkTLS is the configuration of a link to an instance or a sentinel:
// nil without tls-replication.
func (d *Daemon) linkTLS() *tls.Config {
	if !d.tlsLinks {
		return nil
	}
	return d.tls.Client()
}

// Addr returns the address of the first listener (tests).
func (d *Daemon) Addr() net.Addr {
	d.lnMu.Lock()
	defer d.lnMu.Unlock()
	if len(d.listeners) == 0 {
		return nil
	}
	return d.listeners[0].Addr()
}

// Serve adds a listener opened by the caller (tests).
func (d *Daemon) Serve(ln net.Listener) {
	d.lnMu.Lock()
	d.listeners = append(d.listeners, ln)
	d.lnMu.Unlock()
}

func (d *Daemon) acceptLoop(ln net.Listener) {
	closing := func() bool {
		select {
		case <-d.done:
			return true
		default:
			return false
		}
	}
	netshell.Serve(ln, closing, func(conn net.Conn) { go d.serveConn(conn) }, nil)
}

func (d *Daemon) serveConn(conn net.Conn) {
	srv := d.st.Server
	nc := netshell.Accepted(conn, srv.TCPKeepAlive)
	protected := srv.ProtectedMode && d.acl.defaultNoPassFlag()
	d.clientsMu.Lock()
	refusal := netshell.Admit(nc, conn.RemoteAddr(), len(d.clients), srv.MaxClients, protected)
	if refusal != "" {
		d.clientsMu.Unlock()
		netshell.Refuse(conn, refusal)
		d.rejected.Add(1)
		return
	}
	c := &client{
		d:       d,
		conn:    conn,
		id:      d.nextID.Add(1),
		addr:    nc.Addr,
		laddr:   nc.LAddr,
		created: time.Now(),
		w:       resp.Writer{Proto: 2},
		authed:  d.acl.defaultNoPass(),
		user:    "default",
		idleAt:  time.Now(),
	}
	c.out = netshell.NewQueue(conn, maxPendingOutput, &d.stats.writes, &d.stats.netOut)
	go c.out.Run()
	d.clients[c.id] = c
	d.clientsMu.Unlock()
	d.totalConns.Add(1) // stat_numconnections: accepted, not rejected
	defer func() {
		d.hub.unsubscribeAll(c)
		c.setTracking(nil) // freeClient's disableTracking
		d.clientsMu.Lock()
		delete(d.clients, c.id)
		d.clientsMu.Unlock()
		c.out.Close()
		conn.Close()
	}()
	c.rd = resp.NewReader(countingConn{conn, &d.stats}, resp.Limits{})
	netshell.Loop(c)
}

// The client's hooks of netshell.Loop: read, run the batch, flush.

// BeforeRead arms the timeout directive (clientsCronHandleTimeout): idle
// clients are closed, pub/sub subscribers never.
func (c *client) BeforeRead() {
	if t := c.d.st.Server.Timeout; t > 0 && !c.subscribed() {
		_ = c.conn.SetReadDeadline(time.Now().Add(time.Duration(t) * time.Second))
	} else {
		_ = c.conn.SetReadDeadline(time.Time{})
	}
}

func (c *client) Fill() error { return c.rd.Fill() }

// ReadFailed closes the connection on any read error (a deadline here is
// the idle timeout).
func (c *client) ReadFailed(error) bool { return false }

// RunBatch runs the buffered commands and queues their replies; a
// protocol error is replied and closes the connection.
func (c *client) RunBatch() bool {
	st, err := netshell.Batch(c.rd, func(argv [][]byte) netshell.Step {
		c.dispatch(argv)
		c.idleAt = time.Now()
		if c.close {
			return netshell.Close
		}
		return netshell.Continue
	})
	if err != nil {
		c.w.Error("ERR " + err.Error())
		c.d.stats.errors.Add(1)
	}
	return c.flush() && st != netshell.Close
}

// flush writes the pending replies.
func (c *client) flush() bool {
	c.rep.Pushes = c.rep.Pushes[:0] // offsets into the buffer written now
	if len(c.w.B) == 0 {
		return true
	}
	ok := c.out.Push(append([]byte(nil), c.w.B...))
	c.w.Reset()
	return ok
}

// maxPendingOutput bounds what a client that does not read may have queued
// (pub/sub events included) before it is disconnected, like Redis's
// client-output-buffer-limit.
const maxPendingOutput = 32 << 20

// writePush queues an out-of-band message (pub/sub).
func (c *client) writePush(b []byte) { c.out.Push(b) }

// The client state the shared AUTH and CLIENT handlers use
// (netshell.Session).

func (c *client) Writer() *resp.Writer            { return &c.w }
func (c *client) ClientID() int64                 { return c.id }
func (c *client) ClientName() string              { return c.getName() }
func (c *client) ReplyFlags() netshell.ReplyFlags { return c.rep.Flags }

func (c *client) SetClientName(name string) {
	c.mu.Lock()
	c.name = name
	c.mu.Unlock()
}

func (c *client) SetProto(proto int) {
	c.mu.Lock()
	c.w.Proto = proto
	c.mu.Unlock()
}

// SetReplyFlags settles the reply written under the old flags first.
func (c *client) SetReplyFlags(f netshell.ReplyFlags) { c.rep.Set(&c.w, f) }

func (c *client) getName() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.name
}

// subscribed reports whether the client is in RESP2 pub/sub context.
func (c *client) subscribed() bool {
	c.d.hub.mu.Lock()
	defer c.d.hub.mu.Unlock()
	return len(c.subs)+len(c.psubs) > 0
}
