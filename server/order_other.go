//go:build !linux

package server

// Arrival order (order.go) needs FIONREAD on the socket: elsewhere no
// connection is waited for.

func sockInq(fd int) int64 { return 0 }

func ordFD(r *rawReader) int { return 0 }

func ordEpollCreate() int                  { return 0 }
func ordEpollClose(epfdp1 int)             {}
func ordEpollCtl(epfdp1, fd int, add bool) {}

type ordEvent struct{ Fd int32 }

func ordEpollReady(epfdp1 int, evs []ordEvent) (int, bool) { return 0, false }

func sockPeerClosed(fd int) bool { return false }

func ordPoll(fds []ordPollFd) bool { return false }

func sockQuickAck(fd int) {}
