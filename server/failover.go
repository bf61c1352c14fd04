package server

import (
	"github.com/vigil-kv/vigil/replication"
)

// The FAILOVER command's shell (Redis 7.0's failoverCommand,
// updateFailoverStatus, abortFailover, clearFailoverState): the decisions
// are replication's (DecideFailoverCommand, Failover.Update), this file
// executes them under the execution lock: it pauses the writes
// (pauseState.startFailover, PAUSE_DURING_FAILOVER), turns the node into a
// replica of the target (startReplication, whose handshake sends PSYNC
// <replid> <offset> FAILOVER while the state is FAILOVER_IN_PROGRESS) and
// back (unsetMaster), and clears the state when the target accepted
// (linkSession's FailoverReply). The target's half, a replica promoting
// itself on PSYNC ... FAILOVER, is syncRequest's PsyncPromote
// (repl_master.go).

func init() {
	register(
		&Command{Name: "failover", Arity: -1, Flags: FlagAdmin | FlagNoScript | FlagStale, ACL: []string{"admin", "slow", "dangerous"}, Handler: cmdFailover},
	)
}

// cmdFailover is failoverCommand: FAILOVER [TO host port [FORCE]] [ABORT]
// [TIMEOUT ms].
func cmdFailover(c *Client, args [][]byte) {
	s := c.srv
	env := replication.FailoverEnv{ClusterEnabled: s.cfg.ClusterEnabled, State: s.repl.failover.State,
		IsReplica: s.isReplica(), Replicas: s.failoverReplicas()}
	d := replication.DecideFailoverCommand(args, env)
	switch {
	case d.Abort:
		s.abortFailover("Failover manually aborted")
	case d.Start:
		s.startFailover(d)
	}
	c.w.Raw([]byte(d.Reply))
}

// startFailover is the end of failoverCommand (lock held).
func (s *Server) startFailover(d replication.FailoverCommand) {
	s.log.Info().Msg(d.Log)
	s.repl.failover.Start(d.Request, s.clock.Now())
	s.pause.startFailover()
	// While paused the dataset stays static: expired keys read as
	// missing but are not deleted (expireIfNeeded returns 1 without
	// deleting when clients are paused), as on a replica.
	s.ks.Replica = true
}

// failoverReplicas is the replica list as findReplica and
// updateFailoverStatus see it (lock held).
func (s *Server) failoverReplicas() []replication.FailoverReplica {
	out := make([]replication.FailoverReplica, len(s.repl.replicas))
	for i, rp := range s.repl.replicas {
		out[i] = replication.FailoverReplica{Host: rp.ip, Port: rp.port,
			Online: rp.ack.State == replication.ReplicaOnline, AckOffset: rp.ack.Offset}
	}
	return out
}

// updateFailover is updateFailoverStatus, run on every cron tick (Redis
// runs it in beforeSleep and replicationCron; the tick is 1/hz): the
// deadline, then whether the target acknowledged master_repl_offset
// (lock held).
func (s *Server) updateFailover() {
	f := &s.repl.failover
	if f.State != replication.FailoverWaitSync {
		return
	}
	st := f.Update(s.clock.Now(), s.repl.offset, s.failoverReplicas())
	switch st.Kind {
	case replication.FailoverAbort:
		s.abortFailover(st.Reason)
	case replication.FailoverGo:
		s.log.Info().Msg(st.Log)
		// replicationSetMaster: the handshake sends PSYNC ... FAILOVER
		// because the state is FAILOVER_IN_PROGRESS.
		s.startReplication(st.Host, st.Port)
	}
}

// abortFailover is abortFailover: back to a master when the node already
// follows the target, then clearFailoverState (lock held).
func (s *Server) abortFailover(reason string) {
	f := &s.repl.failover
	if f.State == replication.NoFailover {
		return
	}
	s.log.Info().Msg(f.AbortLog(reason))
	if f.State == replication.FailoverInProgress {
		s.unsetMaster()
	}
	s.clearFailover()
	s.shutdownFailoverEnd(false, reason)
}

// clearFailover is clearFailoverState: the writes paused by FAILOVER go
// on (they run the checks again: on a node that became a replica they get
// -READONLY).
func (s *Server) clearFailover() {
	s.repl.failover.Clear()
	s.pause.endFailover()
	s.ks.Replica = s.isReplica()
}

// failoverReply handles the target's answer to PSYNC ... FAILOVER
// (syncWithMaster in FAILOVER_IN_PROGRESS); false when the failover was
// aborted and the link must end (lock held).
func (s *Server) failoverReply(a replication.FailoverReply) bool {
	if s.repl.failover.State != replication.FailoverInProgress {
		return a.Accepted
	}
	if a.Accepted {
		s.clearFailover()
		s.shutdownFailoverEnd(true, "")
		return true
	}
	s.log.Warn().Msgf("PSYNC FAILOVER rejected by the target: %s", a.Reply)
	s.abortFailover("Failover target rejected psync request")
	return false
}

// pausedCmd is the command the pause check sees for cmd from c: EXEC of a
// transaction that queued a write (or a command that may replicate) counts
// as one, as processCommand's is_may_replicate_command looks at
// mstate.cmd_flags; a copy, so that CLIENT LIST still shows exec (lock
// held).
func (s *Server) pausedCmd(c *Client, cmd *Command) *Command {
	if s.pause.ch == nil || cmd.FullName() != "exec" || c.multi == nil || cmd.Has(FlagWrite|FlagMayReplicate) {
		return cmd
	}
	for _, q := range c.multi.cmds {
		if q.cmd.Has(FlagWrite | FlagMayReplicate) {
			x := *cmd
			x.Flags |= FlagMayReplicate
			return &x
		}
	}
	return cmd
}
