package sentinel

// Coordinated failover (Vigil): SENTINEL FAILOVER <name> COORDINATED. The
// leader selects the replica as for any failover, then, instead of sending
// SLAVEOF NO ONE to it, asks the master for `FAILOVER TO <ip> <port> TIMEOUT
// <ms>` (Redis 7.0's FAILOVER: the master pauses writes, waits for the
// replica to reach its offset and hands over with PSYNC FAILOVER). The
// promotion is then seen as usual, when the replica reports role:master, and
// the failover goes on to reconfigure the other replicas and switch the
// master. If the master refuses the FAILOVER, or reports role:master and
// master_failover_state:no-failover again (its TIMEOUT expired or it was
// aborted), or failover-timeout passes, the failover is aborted and the old
// master stays in place.
//
// When the replica reports role:master it is sent the transaction a plain
// promotion sends (coordPersist), so its config file no longer names the old
// master.
//
// Events: +coordinated-failover-start (the FAILOVER was sent),
// +coordinated-failover-state (the master's master_failover_state changed),
// +coordinated-failover-end (the replica took over), and
// -coordinated-failover-abort / -coordinated-failover-timeout (the master
// kept its role).

// coordState is a master's coordinated-failover progress.
type coordState struct {
	on        bool   // the running failover is coordinated
	sent      bool   // FAILOVER sent to the master
	acked     bool   // and answered +OK
	timeoutMs int64  // the TIMEOUT given to the master
	state     string // last master_failover_state seen after the ack
}

// coordTimeout is the TIMEOUT the master is given: half the failover
// timeout, so the master gives up (and resumes writes) before the sentinel
// does.
func coordTimeout(m *instance) int64 {
	t := m.failoverTimeout / 2
	if t < 1 {
		t = 1
	}
	return t
}

// coordSend replaces SEND_SLAVEOF_NOONE: FAILOVER TO the promoted replica,
// sent to the master.
func (c *Core) coordSend(m *instance) {
	p := m.promoted
	if m.link.cc == connNone || p.link.disconnected() {
		if c.now-m.failoverStateChangeTime > m.failoverTimeout {
			c.event(LevelWarning, "-coordinated-failover-timeout", m, "%@")
			c.abortFailover(m)
		}
		return
	}
	m.coord.sent = true
	m.coord.timeoutMs = coordTimeout(m)
	m.link.pending++
	c.emit(SendFailover{Instance: c.ref(m), Host: p.addr.IP, Port: p.addr.Port, TimeoutMs: m.coord.timeoutMs})
	c.event(LevelWarning, "+coordinated-failover-start", m, "%@ to %s %d timeout %d",
		c.announce(p.addr), p.addr.Port, m.coord.timeoutMs)
	c.event(LevelNotice, "+failover-state-wait-promotion", p, "%@")
	m.failoverState = WaitPromotion
	m.failoverStateChangeTime = c.now
}

// coordWait is WAIT_PROMOTION's timeout for a coordinated failover: the
// master is told to abort (best effort) and the failover ends.
func (c *Core) coordWait(m *instance) {
	if c.now-m.failoverStateChangeTime <= m.failoverTimeout {
		return
	}
	c.event(LevelWarning, "-coordinated-failover-timeout", m, "%@")
	if m.link.cc != connNone {
		m.link.pending++
		c.emit(SendFailover{Instance: c.ref(m), Abort: true})
	}
	c.abortFailover(m)
}

// onFailoverReplied handles the master's answer to FAILOVER.
func (c *Core) onFailoverReplied(e FailoverReplied) {
	m := c.replyTarget(e.Instance)
	if m == nil || m.flags&fMaster == 0 || !m.coord.sent || m.coord.acked ||
		m.flags&fFailoverInProgress == 0 || m.failoverState != WaitPromotion {
		return
	}
	if e.Err != "" {
		c.event(LevelWarning, "-coordinated-failover-abort", m, "%@ %s", e.Err)
		c.abortFailover(m)
		return
	}
	m.coord.acked = true
	if c.tun.EagerFailover {
		for _, ri := range []*instance{m, m.promoted} {
			if ri != nil && !ri.link.disconnected() {
				ri.link.pending++
				c.emit(SendInfo{Instance: c.ref(ri)})
			}
		}
	}
}

// coordMasterInfo follows the master's INFO while it hands over: its
// master_failover_state changes are events, and its return to role:master
// with no failover running (before the replica took over) aborts the
// failover. INFO replies after FAILOVER's +OK on the same connection were
// asked for after it, so they show its effect.
func (c *Core) coordMasterInfo(m *instance, in Info) {
	if !m.coord.acked || m.flags&fFailoverInProgress == 0 || m.failoverState != WaitPromotion {
		return
	}
	if in.FailoverState != "" && in.FailoverState != m.coord.state {
		m.coord.state = in.FailoverState
		if in.FailoverState != "no-failover" {
			c.event(LevelNotice, "+coordinated-failover-state", m, "%@ %s", in.FailoverState)
		}
	}
	if in.Role != KindMaster || (in.FailoverState != "no-failover" && in.FailoverState != "") {
		return
	}
	typ := "-coordinated-failover-abort"
	if c.now-m.failoverStateChangeTime >= m.coord.timeoutMs {
		typ = "-coordinated-failover-timeout"
	}
	c.event(LevelWarning, typ, m, "%@")
	c.abortFailover(m)
}

// coordPersist follows +coordinated-failover-end: the promoted replica took
// over through PSYNC FAILOVER, which changes its role in memory only, so its
// config file may still say `replicaof <old master>` and a restart would
// bring it back as a replica. It is sent the transaction Redis sends on a
// plain promotion (SendReplicaOf with Host ""): SLAVEOF NO ONE, a no-op on a
// master ("+OK Already master"), then CONFIG REWRITE, which persists the new
// role, and the CLIENT KILLs of normal and pubsub clients. The kills are kept
// as in a plain promotion: the clients connected to the node until now were
// connected to a replica, and closing them makes them ask the sentinels
// again and find the new roles, as after any failover (CLIENT KILL skips the
// sentinel's own connection). The reply (CommandReplied) only settles the
// pending count: eagerAfterCommand asks for INFO only while promoting
// (WaitPromotion) or for a replica with SLAVEOF sent in ReconfReplicas, and
// the promoted replica is neither. Best effort, as Redis's own SLAVEOF NO
// ONE: with no command connection nothing is sent (the link was up a moment
// ago, when its INFO reported role:master).
func (c *Core) coordPersist(p *instance) {
	c.sendReplicaOf(p, nil)
}
