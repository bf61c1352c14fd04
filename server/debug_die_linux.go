//go:build linux

package server

import (
	"os"
	"runtime"
	"syscall"
	"time"
	"unsafe"
)

// dieBySignal kills the process with sig and its default action, as Redis
// dies of SIGSEGV or abort(): the Go runtime's own handler is replaced by
// SIG_DFL first (a SIGSEGV sent to itself would otherwise be ignored).
func dieBySignal(sig syscall.Signal) {
	runtime.LockOSThread()
	var sa struct { // the kernel's struct sigaction (64-bit)
		handler  uintptr
		flags    uint64
		restorer uintptr
		mask     uint64
	}
	syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&sa)), 0, 8, 0, 0)
	set := uint64(1) << (uint(sig) - 1)
	syscall.RawSyscall6(syscall.SYS_RT_SIGPROCMASK, 1 /* SIG_UNBLOCK */, uintptr(unsafe.Pointer(&set)), 0, 8, 0, 0)
	_ = syscall.Tgkill(os.Getpid(), syscall.Gettid(), sig)
	time.Sleep(time.Second)
	os.Exit(128 + int(sig))
}
