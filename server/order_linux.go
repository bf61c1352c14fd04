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
