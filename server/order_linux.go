//go:build linux

package server

import (
	"syscall"
	"unsafe"
)

// sockInq is how many bytes the socket fd has received and not yet been
// read (ioctl FIONREAD, SIOCINQ: TCP and unix stream sockets alike); 0
// when the kernel does not say.
func sockInq(fd int) int64 {
	var n int32
	_, _, errno := syscall.RawSyscall(syscall.SYS_IOCTL, uintptr(fd), uintptr(syscall.TIOCINQ), uintptr(unsafe.Pointer(&n)))
	if errno != 0 || n < 0 {
		return 0
	}
	return int64(n)
}

// ordFD is the descriptor + 1 of a raw-read connection's socket, for
// ordState (0: none).
func ordFD(r *rawReader) int {
	fdp1 := 0
	_ = r.rc.Control(func(fd uintptr) { fdp1 = int(fd) + 1 })
	return fdp1
}

// The subscribers' sockets are also in an epoll set of the server's own
// (level-triggered, input only): one epoll_wait tells which of them have
// input queued, instead of one FIONREAD per subscriber at each PUBLISH.
// A closed socket leaves the set by itself.

func ordEpollCreate() int {
	fd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return 0
	}
	return fd + 1
}

func ordEpollClose(epfdp1 int) { syscall.Close(epfdp1 - 1) }

// ordEpollCtl adds fd to the set or removes it.
func ordEpollCtl(epfdp1, fd int, add bool) {
	if add {
		ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(fd)}
		if err := syscall.EpollCtl(epfdp1-1, syscall.EPOLL_CTL_ADD, fd, &ev); err == syscall.EEXIST {
			_ = syscall.EpollCtl(epfdp1-1, syscall.EPOLL_CTL_MOD, fd, &ev)
		}
		return
	}
	_ = syscall.EpollCtl(epfdp1-1, syscall.EPOLL_CTL_DEL, fd, nil)
}

// ordEpollReady fills evs with the sockets of the set that have input
// queued now (non-blocking, a raw system call); ok is false when the
// kernel did not answer or evs may not hold them all.
// ordEvent is an epoll event.
type ordEvent = syscall.EpollEvent

func ordEpollReady(epfdp1 int, evs []ordEvent) (n int, ok bool) {
	for {
		r0, _, errno := syscall.RawSyscall6(syscall.SYS_EPOLL_PWAIT, uintptr(epfdp1-1),
			uintptr(unsafe.Pointer(&evs[0])), uintptr(len(evs)), 0, 0, 0)
		if errno == syscall.EINTR {
			continue
		}
		if errno != 0 || int(r0) >= len(evs) {
			return 0, false
		}
		return int(r0), true
	}
}

// sockPeerClosed reports whether the peer of the socket fd closed (or
// shut down its side of) the connection and every byte it sent has been
// read: a non-consuming recv sees end-of-file at once.
func sockPeerClosed(fd int) bool {
	var b [1]byte
	n, _, err := syscall.Recvfrom(fd, b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	return n == 0 && err == nil
}

// ordPoll polls the sockets fds at once without waiting (ppoll, zero
// timeout), as a raw system call; false when it fails.
func ordPoll(fds []ordPollFd) bool {
	if len(fds) == 0 {
		return true
	}
	var ts syscall.Timespec
	_, _, errno := syscall.RawSyscall6(syscall.SYS_PPOLL, uintptr(unsafe.Pointer(&fds[0])), uintptr(len(fds)),
		uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
	return errno == 0
}

// sockQuickAck sends the socket's delayed acknowledgement, if any, at once
// (TCP_QUICKACK).
func sockQuickAck(fd int) {
	_ = syscall.SetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_QUICKACK, 1)
}
