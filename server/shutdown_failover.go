package server

import (
	"strings"

	"github.com/vigil-kv/vigil/configs"
	"github.com/vigil-kv/vigil/replication"
)

// Shutdown after a hand-over (Vigil): SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE]
// FAILOVER, and shutdown-on-sigterm / shutdown-on-sigint `failover`. The
// master runs FAILOVER TO <its best replica> TIMEOUT <shutdown-timeout>
// (replication.ShutdownFailoverArgs: the online replica with the largest
// acknowledged offset); when the replica accepted the PSYNC FAILOVER (the
// node is now its replica, and it had every write) the shutdown goes on as
// asked. If the failover is aborted (its TIMEOUT, FAILOVER ABORT, SHUTDOWN
// ABORT, the target refusing) the node stays the master, writes resume and
// the shutdown is refused: SHUTDOWN FAILOVER answers an error, a signal is
// logged and the server keeps running. The SHUTDOWN client blocks
// meanwhile (a blockKeys block on no key, so CLIENT UNBLOCK and CLIENT KILL
// work as for any blocked command; the hand-over goes on without it).

// pendingShutdown is a shutdown waiting for its hand-over.
type pendingShutdown struct {
	req    shutdownReq
	bs     *blockState // the SHUTDOWN client's block; nil for a signal
	signal string      // "SIGTERM" / "SIGINT" for a signal
}

const errShutdownFailoverBlock = "ERR SHUTDOWN FAILOVER can't be used inside MULTI or scripts"

// startShutdownFailover starts the hand-over of a shutdown; it returns the
// error (without "-" and CRLF) when it cannot start (lock held).
func (s *Server) startShutdownFailover(p *pendingShutdown) string {
	if s.shutdownFailover != nil {
		return "ERR SHUTDOWN FAILOVER already in progress"
	}
	if s.isReplica() {
		return "ERR SHUTDOWN FAILOVER is not valid when server is a replica."
	}
	rs := s.failoverReplicas()
	args, ok := replication.ShutdownFailoverArgs(rs, int64(s.cfg.ShutdownTimeout)*1000)
	if !ok {
		return "ERR SHUTDOWN FAILOVER requires an online replica."
	}
	env := replication.FailoverEnv{ClusterEnabled: s.cfg.ClusterEnabled, State: s.repl.failover.State,
		IsReplica: s.isReplica(), Replicas: rs}
	d := replication.DecideFailoverCommand(args, env)
	if !d.Start {
		return strings.TrimSuffix(strings.TrimPrefix(d.Reply, "-"), "\r\n")
	}
	s.startFailover(d)
	s.shutdownFailover = p
	return ""
}

// shutdownWithFailover is SHUTDOWN ... FAILOVER: start the hand-over and
// block the client until it ends (lock held).
func (s *Server) shutdownWithFailover(c *Client, req shutdownReq) {
	if c.denyBlocking() {
		c.w.Error(errShutdownFailoverBlock)
		return
	}
	p := &pendingShutdown{req: req}
	if e := s.startShutdownFailover(p); e != "" {
		c.w.Error(e)
		return
	}
	p.bs = &blockState{c: c, kind: blockKeys, cmd: s.lookup([]byte("shutdown")), db: c.db,
		shutdown: true}
	s.block(p.bs)
}

// signalShutdownFailover starts the hand-over of a shutdown by signal when
// shutdown-on-sigterm (sigint) has `failover`; false when the shutdown
// should go on at once: no `failover`, or nothing to hand over to (a
// replica, no online replica), which is logged.
func (s *Server) signalShutdownFailover() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.signalShutdownFailoverLocked()
}

func (s *Server) signalShutdownFailoverLocked() bool {
	flags, name := s.cfg.ShutdownOnSigterm, "SIGTERM"
	if s.shutdownSig.Load() == 2 {
		flags, name = s.cfg.ShutdownOnSigint, "SIGINT"
	}
	if flags&configs.ShutdownFailover == 0 {
		return false
	}
	if s.isReplica() {
		return false
	}
	p := &pendingShutdown{signal: name, req: shutdownReq{save: flags&configs.ShutdownSave != 0,
		nosave: flags&configs.ShutdownNoSave != 0, now: flags&configs.ShutdownNow != 0,
		force: flags&configs.ShutdownForce != 0, failover: true}}
	if e := s.startShutdownFailover(p); e != "" {
		s.log.Warn().Msgf("%s received: no hand-over before shutting down (%s)", name, e)
		return false
	}
	s.log.Warn().Msgf("%s received: handing over to a replica before shutting down", name)
	return true
}

// abortShutdownFailover is SHUTDOWN ABORT of a shutdown waiting for its
// hand-over: the failover is aborted (lock held).
func (s *Server) abortShutdownFailover() bool {
	if s.shutdownFailover == nil {
		return false
	}
	s.abortFailover("Shutdown aborted")
	return true
}

// shutdownFailoverEnd is the end of a failover: if a shutdown waits for it,
// shut down after a hand-over (ok), or refuse the shutdown (lock held).
func (s *Server) shutdownFailoverEnd(ok bool, reason string) {
	p := s.shutdownFailover
	if p == nil {
		return
	}
	s.shutdownFailover = nil
	var c *Client
	if p.bs != nil && p.bs.c.blocked == p.bs {
		c = p.bs.c
	}
	refuse := func(msg string) {
		if p.signal != "" {
			s.shutdownAsap.Store(asapNone) // cancelShutdown: a later signal shuts down again
			s.log.Warn().Msgf("%s received but %s: the server keeps running", p.signal, msg)
		} else {
			s.log.Warn().Msgf("SHUTDOWN FAILOVER refused: %s", msg)
		}
		if c != nil {
			c.w.Error("ERR SHUTDOWN FAILOVER refused: " + msg)
			s.unblock(p.bs, false)
		}
	}
	if !ok {
		refuse("the failover was aborted (" + reason + "), this server is still the master")
		return
	}
	if !s.prepareShutdownSave(p.req.save, p.req.nosave, p.req.force) {
		refuse("errors trying to save the DB after the hand-over")
		return
	}
	req := p.req
	req.from = nil
	if c != nil {
		req.from = c
		s.unblock(p.bs, true) // no reply: the connection closes, as for SHUTDOWN
	}
	s.requestShutdown(req)
}
