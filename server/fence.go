package server

import (
	"time"

	"github.com/vigil-kv/vigil/replication"
)

// Fencing a deposed or isolated master (Vigil; docs/safety.md "Fencing a
// deposed master"). The decisions are replication.Fence's (pure); this
// file feeds it the sentinel hellos published to this server, the PINGs
// of the sentinels' command connections, the replicas' ACK times, and
// turns its verdicts into refused writes, INFO fields, log lines and the
// config directives master-config-epoch / master-fence (so that CONFIG
// REWRITE, and the rewrite done when the fence changes, persist them).

// fenceState is the server's fencing state (replication.Fence).
type fenceState = replication.Fence

// helloChannel is the channel of the sentinels' hellos.
const helloChannel = replication.HelloChannel

// fenceInit loads the persisted state (New; lock not needed yet).
func (s *Server) fenceInit() {
	s.fence.Epoch = uint64(max(s.cfg.MasterConfigEpoch, 0))
	if e, by, ok := replication.ParseFenceString(s.cfg.MasterFence); ok && e != 0 {
		s.fence.Restore(e, by)
	}
	s.fence.RestoreSentinels(s.clock.Now(), s.cfg.MasterKnownSentinels)
}

// fenceActive: the write path must consult fenceDenies (lock held).
func (s *Server) fenceActive() bool {
	return s.fence.FencedEpoch != 0 || s.cfg.MasterIsolationTimeout > 0 && s.fence.Monitored()
}

// fenceNeedReplicas is max(1, min-replicas-to-write, min-replicas-ack).
func (s *Server) fenceNeedReplicas() int {
	return max(1, s.cfg.MinReplicasToWrite, s.cfg.MinReplicasAck)
}

func (s *Server) fenceReplicaAcks() []time.Time {
	out := make([]time.Time, 0, len(s.repl.replicas))
	for _, rp := range s.repl.replicas {
		if !rp.ack.Time.IsZero() {
			out = append(out, rp.ack.Time)
		}
	}
	return out
}

// fenceDenies is the reply to a write on a master that is fenced, or ""
// (lock held; the caller checked fenceActive and that this is a master).
func (s *Server) fenceDenies() string {
	if s.fence.FencedEpoch != 0 {
		return s.fence.FencedError()
	}
	timeout := time.Duration(s.cfg.MasterIsolationTimeout) * time.Millisecond
	// The command's time (call's setCmdNow): no clock read per write.
	now := s.now
	if now.IsZero() {
		now = s.clock.Now()
	}
	if !s.fence.NeedCheck(now, timeout) {
		return ""
	}
	if s.fenceIsolated(now, timeout) {
		return replication.IsolatedError(timeout, s.fence.Sentinels(), s.fenceNeedReplicas())
	}
	return ""
}

// fenceIsolated evaluates the isolation rule and logs its transitions.
func (s *Server) fenceIsolated(now time.Time, timeout time.Duration) bool {
	iso, changed := s.fence.IsolatedAt(now, replication.IsolationInput{Timeout: timeout,
		MinReplicas: s.fenceNeedReplicas(), ReplicaAcks: s.fenceReplicaAcks()})
	if changed {
		if iso {
			s.log.Warn().Msgf("Master isolated: no contact with a majority of %d sentinels nor with %d replica(s) for %d ms (master-isolation-timeout): refusing writes",
				s.fence.Sentinels(), s.fenceNeedReplicas(), timeout.Milliseconds())
		} else {
			s.log.Warn().Msg("Master contact restored: accepting writes again")
		}
	}
	return iso
}

// fenceCron evaluates the isolation rule once a second (replCron), so the
// log and INFO show the isolation when it begins, writes or not.
func (s *Server) fenceCron(now time.Time) {
	if s.isReplica() {
		return
	}
	timeout := time.Duration(s.cfg.MasterIsolationTimeout) * time.Millisecond
	if s.fence.NeedCheck(now, timeout) {
		s.fenceIsolated(now, timeout)
	}
}

// fenceHello is a PUBLISH on __sentinel__:hello by c (a sentinel's
// connection; never the master link: a master relays its sentinels'
// hellos to its replicas).
func (s *Server) fenceHello(c *Client, msg []byte) {
	if c.kind() == kindMaster || c.aofClient || c.inScript {
		return
	}
	h, ok := replication.ParseHello(msg)
	if !ok {
		return
	}
	master := !s.isReplica()
	self := master && replication.IsSelf(h.MasterIP, h.MasterPort, c.laddr, s.cfg.ReplicaAnnounceIP, s.cfg.ReplicaAnnouncePort)
	switch s.fence.Hello(s.clock.Now(), h, master, self) {
	case replication.HelloFenced:
		s.log.Warn().Msgf("Fenced: config epoch %d made %s the master (hello of sentinel %s for '%s'); refusing writes until reconfigured (REPLICAOF, or CONFIG SET master-fence \"\")",
			s.fence.FencedEpoch, s.fence.FencedBy, replication.SentinelKey(h.SentinelID), h.MasterName)
		s.fenceChanged(true)
	case replication.HelloAdopted:
		s.fenceChanged(false)
	}
	if k := s.fence.KnownSentinels(); k != s.cfg.MasterKnownSentinels {
		// A sentinel learned: persist the set, so that a restart keeps
		// the isolation rule armed before the first hello comes.
		s.fenceChanged(true)
	}
}

// fenceSentinelCmd records a command of a sentinel's command connection
// (PING, INFO) as contact with that sentinel.
func (s *Server) fenceSentinelCmd(c *Client) {
	if len(c.name) != len("sentinel-12345678-cmd") {
		return
	}
	if k := replication.SentinelClientKey(c.name); k != "" {
		s.fence.SentinelContact(s.clock.Now(), k)
	}
}

// fenceReconfigured is a successful REPLICAOF/SLAVEOF: the fence is lifted.
func (s *Server) fenceReconfigured() {
	was := s.fence.FencedEpoch != 0
	s.fence.Reconfigured()
	if was {
		s.log.Info().Msgf("Fence lifted by REPLICAOF (config epoch %d)", s.fence.Epoch)
	}
	s.fenceChanged(was)
}

// fenceChanged copies the state into the directives; persist rewrites the
// config file (when there is one) so that a restart keeps a raised fence
// (or forgets a lifted one): a deposed master restarted while still cut
// off must not accept writes again.
func (s *Server) fenceChanged(persist bool) {
	s.cfg.MasterConfigEpoch = int64(s.fence.Epoch)
	s.cfg.MasterFence = s.fence.FenceString()
	s.cfg.MasterKnownSentinels = s.fence.KnownSentinels()
	if !persist || s.cfg.File == "" {
		return
	}
	if err := s.cfg.Rewrite(); err != nil {
		s.log.Warn().Err(err).Msg("Fencing: could not rewrite the config file; the fence is not persisted")
	}
}

// fenceOnConfigSet applies CONFIG SET master-config-epoch / master-fence.
func (s *Server) fenceOnConfigSet(name string) {
	switch name {
	case "master-config-epoch":
		s.fence.Stamp(uint64(max(s.cfg.MasterConfigEpoch, 0)))
	case "master-fence":
		e, by, _ := replication.ParseFenceString(s.cfg.MasterFence)
		if e == 0 && s.fence.FencedEpoch != 0 {
			s.log.Info().Msgf("Fence of config epoch %d lifted by CONFIG SET master-fence", s.fence.FencedEpoch)
		}
		s.fence.Restore(e, by)
	case "master-known-sentinels":
		s.fence.RestoreSentinels(s.clock.Now(), s.cfg.MasterKnownSentinels)
		// Dropping a sentinel may let replicas count for sync-ack.
		s.processWaitingReplicas(s.repl.offset)
	}
	s.fenceChanged(false)
}

// infoFence appends the fencing fields to INFO replication, only once the
// server was monitored or stamped (INFO stays redis-server's otherwise).
func (s *Server) infoFence(w *infoWriter) {
	f := &s.fence
	if !f.Monitored() && f.Epoch == 0 && f.FencedEpoch == 0 && f.HighestEpoch == 0 {
		return
	}
	timeout := time.Duration(s.cfg.MasterIsolationTimeout) * time.Millisecond
	now := s.clock.Now()
	isolated := false
	if !s.isReplica() && f.FencedEpoch == 0 && s.fence.NeedCheck(now, timeout) {
		isolated = s.fenceIsolated(now, timeout)
	} else if !s.isReplica() {
		isolated = f.Isolated
	}
	w.int("master_config_epoch", int64(f.Epoch))
	w.int("master_config_epoch_seen", int64(f.HighestEpoch))
	switch {
	case f.FencedEpoch != 0 && !s.isReplica():
		w.int("master_fenced", 1)
		w.str("master_fenced_reason", "epoch")
		w.int("master_fenced_epoch", int64(f.FencedEpoch))
		w.str("master_fenced_by", f.FencedBy)
	case isolated:
		w.int("master_fenced", 1)
		w.str("master_fenced_reason", "isolated")
	default:
		w.int("master_fenced", 0)
	}
	sh, rh := f.Heard(now, timeout, s.fenceReplicaAcks())
	w.int("master_isolation_timeout", int64(s.cfg.MasterIsolationTimeout))
	w.int("master_sentinels_known", int64(f.Sentinels()))
	w.int("master_sentinels_heard", int64(sh))
	w.int("master_replicas_heard", int64(rh))
}
