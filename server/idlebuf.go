package server

import (
	"runtime"
	"time"
)

// # Idle clients' buffers
//
// A client's loop keeps its query buffer (rd's) and reply buffer (w's)
// between batches, grown to its largest recent batch: a pipeline of big
// values reuses them instead of allocating per batch. Redis frees an idle
// client's query buffer (clientsCronResizeQueryBuffer: idle for more than
// 2 seconds) and shrinks its reply buffer towards 1 KB
// (clientsCronResizeOutputBuffer); without the same, 1000 clients that
// each once sent 16 SETs of 16 KB held 180 MB of read buffers for as long
// as they stayed connected (Redis: 4 MB after 10 s), and 5000 idle
// connections 16 KB each (issue 24, memory). So the cron drops the
// buffers of a client idle for more than 2 seconds when they hold nothing;
// the next batch allocates new ones. What it dropped counts as garbage
// for the idle collection (idlegc.go), which returns it to the OS; a lot
// of it (an eighth of the live heap) starts one even while other clients
// run commands.
//
// The buffers belong to the client's loop. It hands them over only while
// it waits for input (bufWaiting: set before it parks, taken back with
// ownBuffers before it reads), when nothing of them is in use; the cron
// takes them (bufTrimming) for the few instructions of the drop. A loop
// blocked in a command (BLPOP) keeps them: c.w then belongs to whoever
// holds the server lock.
const (
	bufOwned    uint32 = iota // the loop reads, runs batches or is blocked: hands off
	bufWaiting                // the loop waits for input: the cron may take the buffers
	bufTrimming               // the cron is dropping them
)

// idleBufferSecs is Redis's idle time before a query buffer is freed
// (clientsCronResizeQueryBuffer: idletime > 2).
const idleBufferSecs = 2

// waitForInput hands the loop's buffers to the cron before it waits.
func (c *Client) waitForInput() { c.bufIdle.Store(bufWaiting) }

// ownBuffers takes them back; a drop in progress is a few instructions.
func (c *Client) ownBuffers() {
	for !c.bufIdle.CompareAndSwap(bufWaiting, bufOwned) {
		if c.bufIdle.Load() == bufOwned {
			return
		}
		runtime.Gosched()
	}
}

// idleSeconds is the client's idle time in whole seconds, as Redis's
// server.unixtime - c->lastinteraction (lastInteraction is the real
// clock's: runBatch).
func (c *Client) idleSeconds() int64 { return time.Now().Unix() - c.lastInteraction.Load()/1000 }

// trimIdleBuffers is clientsCron's part for the real buffers of a client
// idle for more than idleBufferSecs: the query and reply buffers when the
// loop waits for input, the asynchronous queue's (pushes, replies a slow
// reader left) when nothing is queued or being written. Called with the
// server lock held.
func (s *Server) trimIdleBuffers(c *Client) {
	if c.idleSeconds() <= idleBufferSecs {
		return
	}
	if c.bufIdle.CompareAndSwap(bufWaiting, bufTrimming) {
		dropped := c.dropEmptyBuffers()
		asked := s.requestRetire(c) // idleconn.go
		c.bufIdle.Store(bufWaiting)
		s.idleGC.dropped += uint64(dropped)
		if asked {
			c.raw.rw.notify() // wake it: it reads nothing and retires
		}
	}
	// wmu first, as pushLoop and the flushes take them: none of them is
	// writing, and amu keeps pushes out.
	if c.wmu.TryLock() {
		c.amu.Lock()
		if len(c.abuf) == 0 && c.inflight.Load() == 0 {
			s.idleGC.dropped += uint64(cap(c.abuf))
			c.abuf = nil
		}
		s.idleGC.dropped += uint64(cap(c.aspare))
		c.aspare = nil
		c.amu.Unlock()
		c.wmu.Unlock()
	}
}

// dropEmptyBuffers drops the query and reply buffers when they hold
// nothing and reports the bytes dropped; the caller owns them (the loop,
// or the cron in bufTrimming).
func (c *Client) dropEmptyBuffers() (dropped int) {
	if q := c.rd.BufferCap(); c.rd.Release() {
		dropped += q
	}
	if len(c.w.B) == 0 {
		dropped += cap(c.w.B)
		c.w.B = nil
	}
	return dropped
}
