package server

import (
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// pinToOneCPU keeps the calling goroutine on its thread and that thread
// on one CPU until the returned function runs (on the same goroutine).
//
// Why, for tests that send on one TCP connection and then on another and
// expect the server to see the first data first: on loopback a send's
// delivery runs in the sending CPU's softirq, which the kernel defers to
// ksoftirqd under load; a goroutine that moved to the other CPU between
// the two sends can then have its second segment delivered before the
// first. Sent from one CPU the two go through its backlog queue in order.
// (TestPubSubArrivalOrderTCP failed once in about 650 runs beside an
// integration suite, on builds with and without the session's changes.)
func pinToOneCPU(t *testing.T) func() {
	runtime.LockOSThread()
	var old unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		runtime.UnlockOSThread()
		t.Logf("sched_getaffinity: %v (not pinned)", err)
		return func() {}
	}
	var one unix.CPUSet
	for cpu := 0; cpu < 1024; cpu++ {
		if old.IsSet(cpu) {
			one.Set(cpu)
			break
		}
	}
	if err := unix.SchedSetaffinity(0, &one); err != nil {
		runtime.UnlockOSThread()
		t.Logf("sched_setaffinity: %v (not pinned)", err)
		return func() {}
	}
	return func() {
		_ = unix.SchedSetaffinity(0, &old)
		runtime.UnlockOSThread()
	}
}
