package server

import (
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"unsafe"
)

// linkConn is a replica's connection to its master with reads and writes
// made as raw system calls inside the socket's RawConn (which holds a
// reference on the descriptor and waits in the netpoller, with the
// connection's deadlines, when the socket is not ready). A read or write
// through net.Conn goes through the runtime's entersyscall, which wakes
// the runtime's sysmon thread whenever the process was idle: a replica
// following a master is idle between the master's writes, so each
// command received and each REPLCONF ACK sent cost a futex wake-up and a
// thread polling every 20 µs beside the master and its clients on a
// shared machine (issue 24: SET + WAIT 1). Everything else (deadlines,
// Close, addresses) is the net.Conn's.
type linkConn struct {
	net.Conn
	rc syscall.RawConn

	// Read's state: only the link goroutine reads.
	rp   []byte
	rn   int
	rerr syscall.Errno
	rfn  func(fd uintptr) bool

	wmu  sync.Mutex // Write's state: the link and the cron (ACKs) write
	wb   []byte
	werr syscall.Errno
	wfn  func(fd uintptr) bool
}

// newLinkConn wraps conn, or returns it as is when its descriptor is not
// reachable.
func newLinkConn(conn net.Conn) net.Conn {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return conn
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return conn
	}
	l := &linkConn{Conn: conn, rc: rc}
	l.rfn, l.wfn = l.read, l.write
	return l
}

func (l *linkConn) read(fd uintptr) bool {
	for {
		r0, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&l.rp[0])), uintptr(len(l.rp)))
		switch e {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false // wait until readable (or the deadline), then again
		}
		l.rn, l.rerr = int(r0), e
		return true
	}
}

// Read is net.Conn's Read: io.EOF at the end of the stream, other errors
// as *net.OpError.
func (l *linkConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	l.rp, l.rn, l.rerr = p, 0, 0
	err := l.rc.Read(l.rfn)
	n, errno := l.rn, l.rerr
	l.rp = nil // do not keep the caller's buffer alive
	switch {
	case err != nil:
		return 0, l.opError("read", err)
	case errno != 0:
		return 0, l.opError("read", os.NewSyscallError("read", errno))
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

func (l *linkConn) write(fd uintptr) bool {
	for len(l.wb) > 0 {
		n, errno := rawWrite(int(fd), l.wb)
		switch {
		case errno == syscall.EINTR:
			continue
		case errno == syscall.EAGAIN:
			return false // wait until writable (or the deadline), then again
		case errno != 0:
			l.werr = errno
			return true
		}
		l.wb = l.wb[n:]
	}
	return true
}

// Write is net.Conn's Write: all of b, or an error.
func (l *linkConn) Write(b []byte) (int, error) {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	l.wb, l.werr = b, 0
	err := l.rc.Write(l.wfn)
	left, errno := len(l.wb), l.werr
	l.wb = nil
	switch {
	case err != nil:
		return len(b) - left, l.opError("write", err)
	case errno != 0:
		return len(b) - left, l.opError("write", os.NewSyscallError("write", errno))
	}
	return len(b), nil
}

// opError is the error net.Conn would return: RawConn's errors are
// *net.OpError already (op "raw-read", "raw-write").
func (l *linkConn) opError(op string, err error) error {
	if oe, ok := err.(*net.OpError); ok {
		e := *oe
		e.Op = op
		return &e
	}
	return &net.OpError{Op: op, Net: l.LocalAddr().Network(), Source: l.LocalAddr(), Addr: l.RemoteAddr(), Err: err}
}
