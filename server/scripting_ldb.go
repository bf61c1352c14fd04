package server

import (
	"io"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The Lua debugger's session (Redis 7.0's evalGenericCommandWithDebugging,
// ldbStartSession and ldbEndSession in eval.c; Redis is BSD licensed):
// after SCRIPT DEBUG SYNC, the client's next EVAL runs with the engine's
// line hook (server/lua/ldb.go), which talks to the client on its socket
// directly while the server is blocked (the command holds the lock, as
// Redis's main thread is held). When the script ends, the debugger's last
// logs and "<endsession>" are sent, then the EVAL reply, and the
// connection is closed (CLIENT_CLOSE_AFTER_REPLY). The dataset changes
// the script made are kept.

const (
	ldbOff  uint8 = iota
	ldbSync       // SCRIPT DEBUG SYNC
)

// evalDebug runs EVAL (or EVAL_RO) args in a debugging session.
func evalDebug(c *Client, args [][]byte, ro bool) {
	s := c.srv
	s.log.Warn().Msg("Redis synchronous debugging eval session started")
	// The replies before this one go first: the session writes to the
	// socket itself.
	if len(c.w.B) > 0 {
		c.conn.Write(c.w.B)
		c.w.Reset()
	}
	// connBlock: the session waits for the client as long as it takes.
	c.conn.SetReadDeadline(time.Time{})
	c.readDeadline = time.Time{}
	c.conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
	e := s.scriptEngine()
	c.ldbMode = ldbOff
	e.e.StartDebug(ldbConn{c}, args[1])
	evalGeneric(c, args, false, ro)
	if e := s.lua; e != nil {
		e.e.EndDebug()
	}
	c.conn.SetWriteDeadline(time.Time{})
	s.log.Warn().Msg("Redis synchronous debugging eval session ended")
	c.closeAfterReply = true
}

// ldbConn is the debugging client's socket; writes are bounded by the
// 5 s send timeout ldbStartSession sets.
type ldbConn struct{ c *Client }

// Read reads the socket. Inside rawReadLoop's callback (the command runs
// there) the connection's read lock is held, so the file descriptor is
// read directly, waiting for it with poll(2): the thread is blocked, as
// Redis's connBlock makes the socket blocking.
func (l ldbConn) Read(b []byte) (int, error) {
	r := l.c.raw
	if r == nil || r.fd < 0 {
		return l.c.conn.Read(b)
	}
	for {
		n, err := syscall.Read(r.fd, b)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			fds := []unix.PollFd{{Fd: int32(r.fd), Events: unix.POLLIN}}
			if _, err := unix.Poll(fds, -1); err != nil && err != unix.EINTR {
				return 0, err
			}
			continue
		case err != nil:
			return 0, err
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

func (l ldbConn) Write(b []byte) (int, error) {
	l.c.conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
	return l.c.conn.Write(b)
}
