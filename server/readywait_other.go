//go:build !linux

package server

// ReadyOrderEnv names the environment variable of readywait.go (Linux
// only): elsewhere connection loops always wait in Go's network poller.
const ReadyOrderEnv = "VIGIL_READY_ORDER"

type readyPoller struct{}

type readyWaiter struct{}

func newReadyPoller() *readyPoller                   { return nil }
func (p *readyPoller) close()                        {}
func (p *readyPoller) add(fd int) *readyWaiter       { return nil }
func (p *readyPoller) remove(fd int, w *readyWaiter) {}
func (w *readyWaiter) park() bool                    { return false }
func (w *readyWaiter) interrupt()                    {}
func (w *readyWaiter) goPoller()                     {}
func (w *readyWaiter) resume()                       {}
