package server

import (
	"fmt"
	"runtime/debug"
	"strings"
	"syscall"
)

// die ends the process after a bug report (dieBySignal); a variable so
// the crash tests can see it called instead of dying.
var die = dieBySignal

// crashOnPanic is deferred by serveConn after unlinkClient, so it runs
// first when a command (or the connection's read loop) panics. Without it
// the panic's unwinding ran unlinkClient, which waits for the server lock
// the panicking batch still held: the process hung forever, serving no one
// and never dying. Like Redis's serverPanic/sigsegvHandler it logs the bug
// report (the panic, the stacks, INFO, CLIENT LIST) and dies of SIGABRT,
// so a supervisor restarts it and its log says why. A second panic inside
// the report still dies.
func (s *Server) crashOnPanic(c *Client) {
	r := recover()
	if r == nil {
		return
	}
	header := guruMeditationGo(r, debug.Stack())
	func() {
		defer func() {
			if r2 := recover(); r2 != nil {
				s.log.Error().Msgf("panic while writing the bug report: %v", r2)
				die(syscall.SIGABRT)
			}
		}()
		s.bugReport(c, nil, syscall.SIGABRT, header)
	}()
	die(syscall.SIGABRT) // bugReport dies; this is in case die returned
}

// guruMeditationGo is serverPanic's banner for a Go panic: its value and
// the panicking goroutine's stack.
func guruMeditationGo(r any, stack []byte) []string {
	lines := guruMeditationAt(fmt.Sprint(r), "panic")
	return append(lines, strings.Split(strings.TrimRight(string(stack), "\n"), "\n")...)
}
