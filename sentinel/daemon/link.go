package daemon

import (
	"bufio"
	"crypto/tls"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/vigil-kv/vigil/internal/netshell"
	"github.com/vigil-kv/vigil/internal/resp"
)

// ErrLinkClosed is passed to callbacks of commands still pending when a
// link closes.
var ErrLinkClosed = errors.New("link closed")

// SpontaneousError is the cause of a link closed because an error reply
// arrived that no command waited for.
type SpontaneousError struct{ Text string }

func (e *SpontaneousError) Error() string { return e.Text }

// Reply is one reply, or the error that prevented it.
type Reply struct {
	V   resp.Value
	Err error
}

// link is an asynchronous RESP2 connection to an instance, like hiredis's
// async context in sentinel.c: commands are pipelined, each with a callback
// run in order on the link's reader goroutine. A link never blocks its
// caller: Send appends to an output buffer flushed by a writer goroutine.
type link struct {
	conn net.Conn
	br   *bufio.Reader

	mu      sync.Mutex
	out     []byte
	pending []func(Reply) // callbacks in send order; nil entries discard
	closed  bool
	wake    chan struct{}

	// onPush receives out-of-band messages on a pub/sub link (where the
	// replies of SUBSCRIBE and published messages share the stream).
	onPush func(resp.Value)
	// onClose runs once, after the link is closed.
	onClose func(error)
	once    sync.Once
}

// dialLink connects with a timeout and starts the link's goroutines.
// With tlsCfg non-nil (tls-replication) the link is a TLS client whose
// handshake completes within the timeout too.
func dialLink(addr string, timeout time.Duration, tlsCfg *tls.Config, onPush func(resp.Value), onClose func(error)) (*link, error) {
	conn, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
		_ = tc.SetKeepAlive(true)
	}
	if tlsCfg != nil {
		if conn, err = netshell.TLSClient(conn, tlsCfg, timeout); err != nil {
			return nil, err
		}
	}
	l := &link{conn: conn, br: bufio.NewReaderSize(conn, 16<<10), wake: make(chan struct{}, 1), onPush: onPush, onClose: onClose}
	go l.writeLoop()
	go l.readLoop()
	return l, nil
}

// Send queues a command; cb (may be nil) gets its reply.
func (l *link) Send(cb func(Reply), args ...string) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		if cb != nil {
			cb(Reply{Err: ErrLinkClosed})
		}
		return
	}
	l.out = resp.AppendCommandStrings(l.out, args...)
	l.pending = append(l.pending, cb)
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// SendNoReply queues a command whose replies arrive as pushes (SUBSCRIBE).
func (l *link) SendNoReply(args ...string) {
	l.mu.Lock()
	if !l.closed {
		l.out = resp.AppendCommandStrings(l.out, args...)
	}
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// isClosed reports whether the link was closed.
func (l *link) isClosed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closed
}

// Pending is the number of commands awaiting replies.
func (l *link) Pending() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.pending)
}

func (l *link) writeLoop() {
	var buf []byte
	for range l.wake {
		l.mu.Lock()
		if l.closed {
			l.mu.Unlock()
			return
		}
		buf, l.out = l.out, buf[:0]
		l.mu.Unlock()
		if len(buf) == 0 {
			continue
		}
		l.conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
		if _, err := l.conn.Write(buf); err != nil {
			l.Close(err)
			return
		}
	}
}

func (l *link) readLoop() {
	for {
		v, err := resp.ReadValue(l.br, resp.ReplyLimits{MaxBulk: 64 << 20, MaxElems: 1 << 20, MaxDepth: 16})
		if err != nil {
			l.Close(err)
			return
		}
		l.mu.Lock()
		if len(l.pending) == 0 {
			l.mu.Unlock()
			if v.Kind == resp.KindError {
				// hiredis's redisProcessCallbacks: an error reply no
				// callback waits for (here the -NOAUTH or -NOPERM answering
				// SUBSCRIBE on the pub/sub connection) disconnects the
				// context, and sentinel.c sees the link disconnected.
				l.Close(&SpontaneousError{Text: v.Str})
				return
			}
			if l.onPush != nil {
				l.onPush(v)
			}
			continue
		}
		cb := l.pending[0]
		l.pending[0] = nil
		l.pending = l.pending[1:]
		l.mu.Unlock()
		if cb != nil {
			cb(Reply{V: v})
		}
	}
}

// Close closes the link; pending callbacks get ErrLinkClosed.
func (l *link) Close(cause error) {
	l.once.Do(func() {
		l.mu.Lock()
		l.closed = true
		pend := l.pending
		l.pending = nil
		l.mu.Unlock()
		l.conn.Close()
		select { // let writeLoop see closed and exit
		case l.wake <- struct{}{}:
		default:
		}
		for _, cb := range pend {
			if cb != nil {
				cb(Reply{Err: ErrLinkClosed})
			}
		}
		if l.onClose != nil {
			l.onClose(cause)
		}
	})
}
