package server

import (
	"time"

	"github.com/vigil-kv/vigil/internal/resp"
	"github.com/vigil-kv/vigil/replication"
)

// Shutdown waiting for lagging replicas (Redis 7.0's prepareForShutdown
// with shutdown-timeout): a SHUTDOWN without NOW, or a SIGTERM/SIGINT,
// while some replica's acknowledged offset is not master_repl_offset
// sends REPLCONF GETACK to the replicas, pauses writes
// (PAUSE_DURING_SHUTDOWN) and blocks the SHUTDOWN client
// (BLOCKED_SHUTDOWN); the cron finishes the shutdown once every replica
// caught up or shutdown-timeout passed (finishShutdown). A failed save
// then, or SHUTDOWN ABORT, cancels it (cancelShutdown): the blocked
// clients get an error and writes resume.

// shutdownWaitState is the shutdown being initiated (lock held).
type shutdownWaitState struct {
	deadline time.Time     // shutdown_mstime; zero: no shutdown initiated
	req      shutdownReq   // shutdown_flags
	signal   bool          // asked by a signal (shutdown_asap)
	blocked  []*blockState // the clients blocked on SHUTDOWN
}

// shutdownInitiated is isShutdownInitiated.
func (s *Server) shutdownInitiated() bool { return !s.shutdownWait.deadline.IsZero() }

// readyToShutdown is isReadyToShutdown: every replica acknowledged
// master_repl_offset.
func (s *Server) readyToShutdown() bool {
	for _, rp := range s.repl.replicas {
		if rp.ack.Offset != s.repl.offset {
			return false
		}
	}
	return true
}

// startShutdownWait is prepareForShutdown's wait for the replicas: true
// when the shutdown now waits (c, if any, is blocked on it), false when it
// should go on at once (NOW, shutdown-timeout 0, every replica in sync).
func (s *Server) startShutdownWait(req shutdownReq, c *Client, signal bool) bool {
	if req.now || s.cfg.ShutdownTimeout == 0 || s.readyToShutdown() {
		return false
	}
	now := s.clock.Now()
	req.announced = true
	s.shutdownWait = shutdownWaitState{deadline: now.Add(time.Duration(s.cfg.ShutdownTimeout) * time.Second),
		req: req, signal: signal}
	s.log.Warn().Msg("User requested shutdown...")
	if !s.pause.active(now) {
		s.sendGetackToReplicas()
	}
	s.pause.startShutdown()
	s.log.Info().Msg("Waiting for replicas before shutting down.")
	if c != nil {
		s.blockOnShutdown(c)
	}
	return true
}

// sendGetackToReplicas feeds REPLCONF GETACK * to the replicas.
func (s *Server) sendGetackToReplicas() {
	if s.repl.backlog == nil || len(s.repl.replicas) == 0 || s.isReplica() {
		return
	}
	s.replFeed(resp.AppendCommandStrings(nil, "REPLCONF", "GETACK", "*"))
}

// blockOnShutdown is blockClient(c, BLOCKED_SHUTDOWN): c waits for the
// shutdown in progress; it counts in blocked_clients.
func (s *Server) blockOnShutdown(c *Client) {
	bs := &blockState{c: c, kind: blockKeys, cmd: s.lookup([]byte("shutdown")), db: c.db,
		shutdown: true}
	s.block(bs)
	s.shutdownWait.blocked = append(s.shutdownWait.blocked, bs)
}

// logReplicasAtShutdown is finishShutdown's report of the replicas: one
// line per lagging replica, then how many are in sync.
func (s *Server) logReplicasAtShutdown() {
	n, lagging := len(s.repl.replicas), 0
	if n == 0 {
		return
	}
	now := s.clock.Now()
	for _, rp := range s.repl.replicas {
		if rp.ack.Offset == s.repl.offset {
			continue
		}
		lagging++
		lag := int64(0)
		if rp.ack.State == replication.ReplicaOnline {
			lag = now.Unix() - rp.ack.Time.Unix()
		}
		s.log.Warn().Msgf("Lagging replica %s reported offset %d behind master, lag=%d, state=%s.",
			s.replicaName(rp.c), s.repl.offset-rp.ack.Offset, lag, rp.ack.State)
	}
	s.log.Info().Msgf("%d of %d replicas are in sync when shutting down.", n-lagging, n)
}

// cronShutdownWait is serverCron's isShutdownInitiated branch: the
// shutdown finishes when every replica caught up or the timeout passed.
// True when the shutdown was requested.
func (s *Server) cronShutdownWait() bool {
	if !s.shutdownInitiated() {
		return false
	}
	if s.clock.Now().Before(s.shutdownWait.deadline) && !s.readyToShutdown() {
		return false
	}
	return s.finishShutdownWait()
}

// finishShutdownWait is finishShutdown after the wait: on success the
// blocked SHUTDOWN clients are closed without a reply, as the process
// exits; a failed save cancels the shutdown (cancelShutdown).
func (s *Server) finishShutdownWait() bool {
	w := &s.shutdownWait
	s.logReplicasAtShutdown()
	if !s.prepareShutdownSave(w.req.save, w.req.nosave, w.req.force) {
		s.log.Warn().Msg("Errors trying to shut down the server. Check the logs for more information.")
		s.cancelShutdown()
		return false
	}
	req := w.req
	req.from = nil
	for _, bs := range w.blocked {
		if bs.c.blocked != bs {
			continue
		}
		if req.from == nil {
			req.from = bs.c
		}
		s.unblock(bs, true) // no reply: the connection closes, as for SHUTDOWN
	}
	w.blocked = nil
	// The writes parked by the pause never run: the listeners close
	// (closing) before the pause ends and wakes them.
	s.closeListeners()
	s.pause.endShutdown()
	s.requestShutdown(req)
	return true
}

// cancelShutdown: the blocked SHUTDOWN clients get an error
// (replyToClientsBlockedOnShutdown), writes resume, and a signal's
// shutdown is forgotten (a later signal shuts down again, as any
// shutdown_asap is cleared).
func (s *Server) cancelShutdown() {
	w := &s.shutdownWait
	s.shutdownAsap.Store(asapNone)
	for _, bs := range w.blocked {
		if bs.c.blocked == bs {
			bs.c.w.Error(ErrShutdownFailed)
			s.unblock(bs, false)
		}
	}
	*w = shutdownWaitState{}
	s.pause.endShutdown()
}

// abortShutdownWait is abortShutdown of an initiated shutdown.
func (s *Server) abortShutdownWait() bool {
	if !s.shutdownInitiated() {
		return false
	}
	s.cancelShutdown()
	return true
}
