package server

import (
	"errors"
	"time"
)

// # Idle connections without a goroutine
//
// Each connection's loop runs on its own goroutine, and a goroutine that
// waits keeps its stack: 4 KB for a connection loop (the frames it waits
// in are too deep for the collector to halve it), on top of the client's
// own structures. 5000 idle connections (a pool's) took 7.9 KB each of
// vigil-server's RSS, against redis-server's 2.5 KB (just bench-clients).
// So a loop idle for more than idleBufferSecs (the cron's pass in
// idlebuf.go asks it to, after dropping its buffers) ends its goroutine,
// and the next event on its socket starts a new one.
//
// The hand-over is the waiter's state (readywait.go). The cron sets
// retireReq and wakes a loop parked on the server's epoll set; the loop
// reads (nothing: EAGAIN), leaves RawConn.Read with errRetired and, as its
// goroutine's last act, moves its waiter from running to wsRetired, unless
// input came meanwhile (then it reads it). An event on a retired waiter
// (data, a close, an interrupt from a kill or a deadline) moves it back to
// running and starts runLoop on a new goroutine, in the dispatcher's
// order, as a parked loop is woken. A loop waiting in Go's poller (the
// last loop to wait was its own) is woken by a read deadline in the past
// instead, and retires the same way (the timeout directive arms no
// deadline: the cron closes idle clients). A replica's link, a MONITOR, a loop with a
// command part-read, or one killed or shutting down waits as before.

// errRetired ends RawConn.Read for a loop that retires.
var errRetired = errors.New("connection loop retired")

// retiredStackBytes is the stack a retired loop's goroutine gives back,
// counted for the idle collection (idlegc.go).
const retiredStackBytes = 4 << 10

// requestRetire asks an idle loop to retire (the cron's pass, the loop's
// buffers taken: bufTrimming, so its read deadline and buffer are still).
// A loop parked on the server's set is then woken by notify (asked true);
// one waiting in Go's poller (the last loop to wait
// was its own: parkForInput) is woken by a read deadline in the past,
// which ReadFailed clears before it reads again (and retires, or serves
// what came).
func (s *Server) requestRetire(c *Client) (asked bool) {
	r := c.raw
	if r == nil || r.rw == nil || c.retireReq.Load() || !s.mayRetire(c) || c.rd.Buffered() > 0 {
		return false
	}
	parked := r.rw.waiting()
	if !parked && !r.rw.inGoPoller() {
		return false
	}
	c.retireReq.Store(true)
	s.idleGC.dropped += retiredStackBytes
	if !parked {
		c.conn.SetReadDeadline(time.Now()) // wakes Go's poller's wait
	}
	return parked
}

// mayRetire: a client whose loop may end its goroutine while it waits.
func (s *Server) mayRetire(c *Client) bool {
	k := c.kind()
	return (k == kindNormal || k == kindPubSub) && !c.monitor && c.replRole.Load() == 0 &&
		!c.killed.Load() && !c.ldbDetached.Load() && !s.closing.Load()
}

// retireNow is the loop's decision after a read found nothing with
// retireReq set: it retires when it still may (nothing
// part-read); retireReq is cleared either way.
func (s *Server) retireNow(c *Client) bool {
	c.retireReq.Store(false)
	if c.raw.rw == nil || c.rd.Buffered() > 0 || !s.mayRetire(c) {
		return false
	}
	c.retiring = true
	return true
}
