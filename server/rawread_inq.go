//go:build linux && (amd64 || arm64)

package server

import (
	"syscall"
	"unsafe"
)

// tcpINQ is Linux's TCP_INQ socket option and TCP_CM_INQ its control
// message type (include/uapi/linux/tcp.h, Linux 4.18).
const tcpINQ = 36

// inqSpace is the control buffer for one TCP_CM_INQ message (an int).
const inqSpace = 24 // syscall.CmsgSpace(4) on 64-bit; checked by enableInq

// inqState is what rawReader needs for recvmsg with TCP_INQ; built once
// per connection so that a read allocates nothing.
type inqState struct {
	msg  syscall.Msghdr
	iov  syscall.Iovec
	cmsg [inqSpace]byte
}

// enableInq turns TCP_INQ on for a TCP socket: from then on every recvmsg
// returns, as a control message, how many bytes are still queued after
// the ones it returned, and a non-zero count when the peer's FIN has been
// received ("tell the user-space to continue reading", tcp_inq_hint). It
// reports false when the option is unavailable (not TCP, an old kernel).
func enableInq(r *rawReader) bool {
	if syscall.CmsgSpace(4) != inqSpace {
		return false
	}
	ok := false
	_ = r.rc.Control(func(fd uintptr) {
		ok = syscall.SetsockoptInt(int(fd), syscall.SOL_TCP, tcpINQ, 1) == nil
	})
	if ok {
		r.inq = &inqState{}
	}
	return ok
}

// readInq is one recvmsg(2) into p, as a raw system call. more reports
// that the socket still holds data or an end of stream after this read
// (or that the kernel did not say: read again to be safe).
func (r *rawReader) readInq(p []byte) (n int, more bool, queued int, errno syscall.Errno) {
	q := r.inq
	q.iov.Base = &p[0]
	q.iov.SetLen(len(p))
	q.msg.Iov = &q.iov
	q.msg.Iovlen = 1
	q.msg.Control = &q.cmsg[0]
	q.msg.SetControllen(len(q.cmsg))
	r0, _, e := syscall.RawSyscall(syscall.SYS_RECVMSG, uintptr(r.fd), uintptr(unsafe.Pointer(&q.msg)), 0)
	q.iov.Base = nil // do not keep the caller's buffer alive
	if e != 0 {
		return 0, false, 0, e
	}
	more = true
	hdr := (*syscall.Cmsghdr)(unsafe.Pointer(&q.cmsg[0]))
	if int(q.msg.Controllen) >= syscall.CmsgLen(4) && hdr.Level == syscall.SOL_TCP && hdr.Type == tcpINQ {
		queued = int(*(*int32)(unsafe.Pointer(&q.cmsg[syscall.CmsgLen(0)])))
		more = queued != 0
	}
	return int(r0), more, queued, 0
}
