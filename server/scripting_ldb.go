package server

import (
	"encoding/binary"
	"errors"
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
// Redis's main thread is held: no other client is served, not even with
// -BUSY, since the session's hook replaces the busy-script one). When the
// script ends, the debugger's last logs and "<endsession>" are sent, then
// the EVAL reply, and the connection is closed (CLIENT_CLOSE_AFTER_REPLY).
// The dataset changes the script made are kept.
//
// The session waits for its client with poll(2) on the client's socket
// and the server's wake eventfd: a client that closes its connection, or
// a signal (SIGTERM, SIGINT: Run's context), ends the wait as Redis's
// blocking read returns 0 or fails with EINTR: the script runs on without
// stopping (until a redis.breakpoint(), where the session waits again),
// then the session ends and the shutdown proceeds.

const (
	ldbOff  uint8 = iota
	ldbSync       // SCRIPT DEBUG SYNC
	// ldbFork (SCRIPT DEBUG YES): scripting_ldbfork.go
)

// errLdbInterrupted is the session's read interrupted by a signal.
var errLdbInterrupted = errors.New("interrupted")

// evalDebug runs EVAL (or EVAL_RO) args in a debugging session.
func evalDebug(c *Client, args [][]byte, ro bool) {
	s := c.srv
	forked := c.ldbMode == ldbFork
	if forked && !s.ldbChild {
		s.ldbStartFork(c, args) // the parent's side: the child runs it
		return
	}
	if !forked {
		s.log.Warn().Msg("Redis synchronous debugging eval session started")
	}
	// The replies before this one (SCRIPT DEBUG's +OK pipelined with
	// the EVAL) stay in the output buffer: the session writes its logs to
	// the socket itself, they follow "<endsession>" with the EVAL's reply,
	// as in Redis.
	// connBlock: the session waits for the client as long as it takes.
	c.conn.SetReadDeadline(time.Time{})
	c.conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
	e := s.scriptEngine()
	c.ldbMode = ldbOff
	limit := time.Duration(s.cfg.BusyReplyThreshold) * time.Millisecond
	if limit <= 0 {
		limit = 5 * time.Second // luaLdbLineHook's default
	}
	wake := s.ldbWakeFd()
	if wake >= 0 { // a signal before the session does not interrupt it
		var buf [8]byte
		unix.Read(wake, buf[:])
	}
	e.e.StartDebug(ldbConn{c, wake}, args[1], limit, s.clock.Now)
	evalGeneric(c, args, false, ro)
	if e := s.lua; e != nil {
		e.e.EndDebug()
	}
	if forked {
		return // the child writes the reply and exits
	}
	c.conn.SetWriteDeadline(time.Time{})
	s.log.Warn().Msg("Redis synchronous debugging eval session ended")
	c.closeAfterReply = true
}

// ldbWakeFd is the wake eventfd (made at the first session; -1 when it
// cannot be made: then only the client wakes the session).
func (s *Server) ldbWakeFd() int {
	if fd := s.ldbWake.Load(); fd > 0 {
		return int(fd) - 1
	}
	fd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return -1
	}
	s.ldbWake.Store(int32(fd) + 1)
	return fd
}

// ldbInterrupt interrupts the wait of a session (a signal arrived).
func (s *Server) ldbInterrupt() {
	if fd := s.ldbWake.Load(); fd > 0 {
		var one [8]byte
		binary.NativeEndian.PutUint64(one[:], 1)
		unix.Write(int(fd)-1, one[:])
	}
}

// ldbClose closes the wake eventfd (Run's end: no session runs).
func (s *Server) ldbClose() {
	if fd := s.ldbWake.Swap(0); fd > 0 {
		unix.Close(int(fd) - 1)
	}
}

// ldbConn is the debugging client's socket; writes are bounded by the
// 5 s send timeout ldbStartSession sets.
type ldbConn struct {
	c    *Client
	wake int // the server's wake eventfd, -1: none
}

// Read reads the socket. Inside rawReadLoop's callback (the command runs
// there) the connection's read lock is held, so the file descriptor is
// read directly, waiting for it with poll(2): the thread is blocked, as
// Redis's connBlock makes the socket blocking. A write to the wake
// eventfd makes it fail (errLdbInterrupted), as a signal's EINTR.
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
			if l.wake >= 0 {
				fds = append(fds, unix.PollFd{Fd: int32(l.wake), Events: unix.POLLIN})
			}
			if _, err := unix.Poll(fds, -1); err != nil && err != unix.EINTR {
				return 0, err
			}
			if len(fds) > 1 && fds[1].Revents != 0 {
				var buf [8]byte
				unix.Read(l.wake, buf[:]) // drained: one signal, one interruption
				return 0, errLdbInterrupted
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
