package netshell

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/vigil-kv/vigil/configs"
	"github.com/vigil-kv/vigil/internal/redistext"
)

// ErrMaxClients is networking.c's refusal of a connection over maxclients.
const ErrMaxClients = "ERR max number of clients reached"

// Listeners are what Listen opened: the TCP listeners in bind order, then
// the unix socket's.
type Listeners struct {
	List []net.Listener
	Port int // the TCP port bound, 0 without TCP
	// TLS are the tls-port's listeners (also in List), TLSPort its port;
	// TLSWarnings what the TLS configuration could not apply (tls.go).
	TLS         []net.Listener
	TLSPort     int
	TLSWarnings []string
}

// TLSConfigError is a TLS configuration that tlsConfigure refuses: the
// server logs Reason, then "Failed to configure TLS. Check logs for more
// info.", and exits.
type TLSConfigError struct{ Reason string }

func (e *TLSConfigError) Error() string { return "Failed to configure TLS. Check logs for more info." }

// TLSListenError is a tls-port that cannot be bound: the server logs Err
// as a warning, then "Failed listening on port N (TLS), aborting.".
type TLSListenError struct {
	Err  error
	Port int
}

func (e *TLSListenError) Error() string { return e.Err.Error() }

// LogListenError logs an error of Listen as redis-server's initServer
// does, with warn for warnings and fail for the final line; port is the
// configured TCP port.
func LogListenError(err error, port int, warn, fail func(string)) {
	var te *TLSConfigError
	var le *TLSListenError
	msg := err.Error()
	switch {
	case errors.As(err, &te):
		warn(te.Reason)
		fail(msg)
	case errors.As(err, &le):
		warn("Warning: " + msg)
		fail(fmt.Sprintf("Failed listening on port %d (TLS), aborting.", le.Port))
	case strings.HasPrefix(msg, "Failed"):
		fail(msg)
	case strings.HasPrefix(msg, "Configured to not listen anywhere"):
		warn(msg) // bind "" or port 0, and no unix socket
	default:
		warn("Warning: " + msg)
		if port != 0 {
			fail(fmt.Sprintf("Failed listening on port %d (tcp), aborting.", port))
		}
	}
}

// Close closes every listener.
func (ls Listeners) Close() {
	for _, l := range ls.List {
		l.Close()
	}
}

// BindNetwork maps a bind address (without its "-" prefix) to the network
// and host to listen on, as Redis's listenToPort: "*" is every IPv4
// address, "::*" every IPv6 one, an address with a colon IPv6, any other
// IPv4.
func BindNetwork(bind string) (network, host string) {
	switch bind {
	case "*":
		return "tcp4", "0.0.0.0"
	case "::*":
		return "tcp6", "::"
	}
	if strings.Contains(bind, ":") {
		return "tcp6", bind
	}
	return "tcp4", bind
}

// ListenTCP opens port on each of the bind addresses, as Redis's
// listenToPort: no bind means "*" and "-::*"; a leading "-" makes an
// address optional (skipped when it cannot be bound). An address that
// cannot be bound fails the whole call ("Could not create <what> TCP
// listening socket addr:port: err") with nothing left open. It may
// return no listener (only optional addresses, none bound).
func ListenTCP(binds []string, port int, what string) ([]net.Listener, error) {
	if binds == nil {
		binds = []string{"*", "-::*"}
	}
	var opened []net.Listener
	for _, b := range binds {
		optional := strings.HasPrefix(b, "-")
		b = strings.TrimPrefix(b, "-")
		network, host := BindNetwork(b)
		// KeepAlive -1: Go would set its own keepalive (15 s) on each
		// accepted socket, which Accepted then replaces with Redis's.
		lc := net.ListenConfig{KeepAlive: -1}
		l, err := lc.Listen(context.Background(), network, net.JoinHostPort(host, strconv.Itoa(port)))
		if err != nil {
			if optional {
				continue
			}
			for _, o := range opened {
				o.Close()
			}
			return nil, fmt.Errorf("Could not create %s TCP listening socket %s:%d: %w", what, b, port, err)
		}
		opened = append(opened, l)
	}
	return opened, nil
}

// Listen opens the TCP listeners of cfg's bind addresses and port and its
// unix socket, as Redis's listenToPort and initServer: bind "" (an empty,
// not nil, list) opens no TCP listener; no bind at all (nil) means "*"
// and "-::*"; a leading "-" makes an address optional (skipped when it
// cannot be bound); port 0 opens no TCP listener (the configuration
// allows 0..65535). The errors carry Redis's log texts; on error nothing
// stays open.
//
// With st non-nil, the tls-* directives are applied as initServer does:
// a configuration asking for TLS (tls-port, tls-replication) is built
// into st (a *TLSConfigError when it is refused), and tls-port opens TLS
// listeners on the bind addresses ("Failed listening on port N (TLS),
// aborting." when one cannot be bound).
func Listen(cfg *configs.Config, st *TLSState) (Listeners, error) {
	var ls Listeners
	fail := func(err error) (Listeners, error) {
		ls.Close()
		return Listeners{}, err
	}
	var tset TLSSettings
	if st != nil {
		tset = TLSSettingsOf(cfg)
		if tset.Enabled() {
			ctx, err := BuildTLS(tset)
			if err != nil {
				return fail(&TLSConfigError{Reason: err.Error()})
			}
			st.Set(ctx)
			ls.TLSWarnings = ctx.Warnings
		}
		st.SetAuth(tset.AuthClients)
	}
	port := cfg.Port
	if port != 0 {
		tcp, err := ListenTCP(cfg.Bind, port, "server")
		if err != nil {
			return fail(err)
		}
		ls.List = tcp
		if len(ls.List) == 0 && len(cfg.Bind) > 0 {
			return fail(fmt.Errorf("Failed listening on port %d (tcp), aborting.", port))
		}
		ls.Port = port
	}
	if tset.Port != 0 {
		tcp, err := ListenTCP(cfg.Bind, tset.Port, "server")
		if err != nil {
			return fail(&TLSListenError{Err: err, Port: tset.Port})
		}
		if len(tcp) == 0 && len(cfg.Bind) > 0 {
			return fail(fmt.Errorf("Failed listening on port %d (TLS), aborting.", tset.Port))
		}
		for _, l := range tcp {
			tl := st.Listener(l)
			ls.TLS = append(ls.TLS, tl)
			ls.List = append(ls.List, tl)
		}
		ls.TLSPort = tset.Port
	}
	if unix := cfg.UnixSocket; unix != "" {
		_ = os.Remove(unix)
		l, err := net.Listen("unix", unix)
		if err != nil {
			return fail(fmt.Errorf("Failed opening Unix socket: %w", err))
		}
		if perm := cfg.UnixSocketPerm; perm != 0 {
			_ = os.Chmod(unix, os.FileMode(perm))
		}
		ls.List = append(ls.List, l)
	}
	if len(ls.List) == 0 {
		// bind "" or port 0 (no TCP listener, listenToPort) and no unix
		// socket: initServer's check.
		return fail(errors.New("Configured to not listen anywhere, exiting."))
	}
	return ls, nil
}

// Conn is what the shell knows of an accepted connection before a client
// is made of it.
type Conn struct {
	Unix        bool
	Addr, LAddr string // CLIENT LIST addr and laddr: "/path:0" on a unix socket, as Redis
}

// keepAliveConfig is anetKeepAlive's settings for a tcp-keepalive of secs
// seconds (positive): idle secs, probes every secs/3 (at least 1), 3 of
// them.
func keepAliveConfig(secs int) net.KeepAliveConfig {
	d := time.Duration(secs) * time.Second
	return net.KeepAliveConfig{Enable: true, Idle: d, Interval: max(d/3, time.Second), Count: 3}
}

// Accepted tunes a new connection as Redis's acceptTcpHandler and
// connSocketAccept do (TCP_NODELAY, which Go's accept has set already, and
// anetKeepAlive's probes when keepAlive is positive: the first after
// keepAlive seconds idle, then every third of it, three unanswered ones
// closing the connection) and names its ends.
func Accepted(conn net.Conn, keepAlive int) Conn {
	c := Conn{Addr: conn.RemoteAddr().String(), LAddr: conn.LocalAddr().String()}
	if tc, ok := conn.(*tls.Conn); ok {
		conn = tc.NetConn() // a connection of a TLS port (tls.go)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		if keepAlive > 0 {
			_ = tc.SetKeepAliveConfig(keepAliveConfig(keepAlive))
		}
		return c
	}
	c.Unix = true
	c.Addr = "/unixsocket:0"
	if ua, ok := conn.LocalAddr().(*net.UnixAddr); ok {
		c.LAddr = ua.Name + ":0"
		c.Addr = ua.Name + ":0"
	}
	return c
}

// Admit decides, as networking.c's acceptCommonHandler and
// clientAcceptHandler, whether a new connection is served: refused with
// ErrMaxClients when clients (those connected) reach maxClients, then with
// the protected-mode text when protected is on and the peer is neither
// loopback nor on the unix socket. It returns "" to serve, else the error
// text, which Refuse sends.
func Admit(c Conn, remote net.Addr, clients, maxClients int, protected bool) string {
	if clients >= maxClients {
		return ErrMaxClients
	}
	if protected && !c.Unix && !IsLoopback(remote) {
		return redistext.ErrProtectedMode
	}
	return ""
}

// Refuse sends the refusal text as an error reply and closes conn.
func Refuse(conn net.Conn, text string) {
	_, _ = conn.Write([]byte("-" + text + "\r\n"))
	conn.Close()
}

// IsLoopback reports whether a peer address is a loopback TCP address; a
// non-TCP (unix) peer counts as local.
func IsLoopback(a net.Addr) bool {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.IP.IsLoopback()
	}
	return true
}

// Serve accepts connections on l until it is closed or closing reports
// true after an accept error, handing each to serve (which starts the
// connection's goroutine). Other accept errors (EMFILE and friends) are
// reported to onError and back off as net/http does, from 5 ms doubling
// to 1 s.
func Serve(l net.Listener, closing func() bool, serve func(net.Conn), onError func(error)) {
	var delay time.Duration
	for {
		conn, err := l.Accept()
		if err != nil {
			if closing() || errors.Is(err, net.ErrClosed) {
				return
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			if delay == 0 {
				delay = 5 * time.Millisecond
			} else if delay *= 2; delay > time.Second {
				delay = time.Second
			}
			if onError != nil {
				onError(err)
			}
			time.Sleep(delay)
			continue
		}
		delay = 0
		serve(conn)
	}
}
