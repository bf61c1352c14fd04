package sentinel

import (
	"sort"
	"strings"
	"time"
)

// voteLeader is sentinelVoteLeader: adopt a greater epoch, then vote for
// reqRunID unless we already voted in this epoch (or a later one). It returns
// the current vote ("" if none) and its epoch.
func (c *Core) voteLeader(m *instance, reqEpoch uint64, reqRunID string) (string, uint64) {
	if reqEpoch > c.currentEpoch {
		c.currentEpoch = reqEpoch
		c.flushConfig()
		c.event(LevelWarning, "+new-epoch", m, "%d", c.currentEpoch)
	}
	if m.leaderEpoch < reqEpoch && c.currentEpoch <= reqEpoch {
		m.leader = reqRunID
		m.leaderEpoch = c.currentEpoch
		c.flushConfig()
		c.event(LevelWarning, "+vote-for-leader", m, "%s %d", m.leader, m.leaderEpoch)
		// Voting for someone else delays our own failover attempt.
		if !strings.EqualFold(m.leader, c.myID) {
			m.failoverStartTime = c.now + c.rng.Int63n(MaxDesync)
		}
	}
	return m.leader, m.leaderEpoch
}

// getLeader is sentinelGetLeader: tally the votes of the other sentinels for
// the current epoch, cast our own vote for the most voted one (or ourselves),
// and return the winner if it has max(quorum, voters/2+1) votes, else "".
func (c *Core) getLeader(m *instance, epoch uint64) string {
	voters := len(m.sentinels) + 1
	counters := map[string]int{}
	for _, s := range sortedInstances(m.sentinels) {
		if s.leader != "" && s.leaderEpoch == c.currentEpoch {
			counters[s.leader]++
		}
	}
	names := make([]string, 0, len(counters))
	for k := range counters {
		names = append(names, k)
	}
	sort.Strings(names)
	winner, maxVotes := "", 0
	for _, k := range names {
		if counters[k] > maxVotes {
			winner, maxVotes = k, counters[k]
		}
	}
	var myVote string
	var leaderEpoch uint64
	if winner != "" {
		myVote, leaderEpoch = c.voteLeader(m, epoch, winner)
	} else {
		myVote, leaderEpoch = c.voteLeader(m, epoch, c.myID)
	}
	if myVote != "" && leaderEpoch == epoch {
		counters[myVote]++
		if counters[myVote] > maxVotes {
			winner, maxVotes = myVote, counters[myVote]
		}
	}
	if winner != "" && (maxVotes < voters/2+1 || maxVotes < m.quorum) {
		winner = ""
	}
	return winner
}

// startFailover is sentinelStartFailover (no config flush, as in Redis).
func (c *Core) startFailover(m *instance) {
	m.failoverState = WaitStart
	m.flags |= fFailoverInProgress
	c.currentEpoch++
	m.failoverEpoch = c.currentEpoch
	c.event(LevelWarning, "+new-epoch", m, "%d", c.currentEpoch)
	c.event(LevelWarning, "+try-failover", m, "%@")
	m.failoverStartTime = c.now + c.rng.Int63n(MaxDesync)
	m.failoverStateChangeTime = c.now
}

// startFailoverIfNeeded is sentinelStartFailoverIfNeeded.
func (c *Core) startFailoverIfNeeded(m *instance) bool {
	if m.flags&fODown == 0 || m.flags&fFailoverInProgress != 0 {
		return false
	}
	if c.now-m.failoverStartTime < m.failoverTimeout*2 {
		if m.failoverDelayLogged != m.failoverStartTime {
			// Once per failover start time, in ctime_r's local-time format.
			m.failoverDelayLogged = m.failoverStartTime
			until := time.Unix((m.failoverStartTime+m.failoverTimeout*2)/1000, 0)
			c.emit(Log{Level: LevelWarning, Message: "Next failover delay: I will not start a failover before " +
				until.Format("Mon Jan _2 15:04:05 2006")})
		}
		return false
	}
	if m.ack.block != "" {
		return false // the sync-ack rule holds the failover back (ackGate)
	}
	c.startFailover(m)
	return true
}

// compareReplicas is compareSlavesForPromotion: lower priority first, then
// larger replication offset, then run id (case-insensitive; none sorts last).
func compareReplicas(a, b *instance) int {
	if a.slavePriority != b.slavePriority {
		if a.slavePriority < b.slavePriority {
			return -1
		}
		return 1
	}
	if a.slaveReplOffset > b.slaveReplOffset {
		return -1
	} else if a.slaveReplOffset < b.slaveReplOffset {
		return 1
	}
	switch {
	case a.runID == "" && b.runID == "":
		return 0
	case a.runID == "":
		return 1
	case b.runID == "":
		return -1
	}
	return strings.Compare(strings.ToLower(a.runID), strings.ToLower(b.runID))
}

// replicaExcluded reports why sentinelSelectSlave skips a replica ("" if it
// is a candidate).
func (c *Core) replicaExcluded(m, r *instance, maxMasterDownTime int64) string {
	switch {
	case r.flags&(fSDown|fODown) != 0:
		return "down"
	case r.link.disconnected():
		return "disconnected"
	case c.now-r.link.lastAvail > c.tun.PingPeriod*5:
		return "ping-reply-too-old"
	case r.slavePriority == 0:
		return "priority-zero"
	}
	validity := c.tun.InfoPeriod * 3
	if m.flags&fSDown != 0 {
		validity = c.tun.PingPeriod * 5
	}
	if c.now-r.infoRefresh > validity {
		return "info-too-old"
	}
	if r.masterLinkDownTime > maxMasterDownTime {
		return "link-down-too-long"
	}
	return ""
}

// maxMasterDown is sentinelSelectSlave's bound on a replica's
// master_link_down_time.
func (c *Core) maxMasterDown(m *instance) int64 {
	var maxDown int64
	if m.flags&fSDown != 0 {
		maxDown += c.now - m.sdownSince
	}
	return maxDown + m.downAfter*10
}

// selectReplica is sentinelSelectSlave. In sync-ack mode (but not for a
// coordinated failover, whose FAILOVER waits for the replica to reach the
// master's offset) the candidates are only the replicas the sync-ack rule
// allows (syncack.go).
func (c *Core) selectReplica(m *instance) *instance {
	return c.selectReplicaFor(m, m.coord.on)
}

// selectReplicaFor is selectReplica for a coordinated failover or not.
func (c *Core) selectReplicaFor(m *instance, coordinated bool) *instance {
	maxDown := c.maxMasterDown(m)
	var cands []*instance
	for _, r := range sortedInstances(m.replicas) {
		if c.replicaExcluded(m, r, maxDown) == "" {
			cands = append(cands, r)
		}
	}
	if m.ack.n > 0 && !coordinated {
		v := c.ackCheck(m)
		if v.reason != "" {
			return nil
		}
		cands = ackCandidates(v, cands)
	}
	if len(cands) == 0 {
		return nil
	}
	sort.SliceStable(cands, func(i, j int) bool { return compareReplicas(cands[i], cands[j]) < 0 })
	return cands[0]
}

// sendReplicaOf is sentinelSendSlaveOf; to == nil means SLAVEOF NO ONE.
func (c *Core) sendReplicaOf(ri *instance, to *Addr) bool {
	if ri.link.cc == connNone {
		return false
	}
	a := SendReplicaOf{Instance: c.ref(ri)}
	if to != nil {
		a.Host, a.Port = c.announce(*to), to.Port
	}
	ri.link.pending++
	c.emit(a)
	return true
}

// failoverStateMachine is sentinelFailoverStateMachine. With EagerFailover,
// a selection (SELECT_SLAVE -> SEND_SLAVEOF_NOONE) is followed at once by the
// SLAVEOF NO ONE, where Redis waits for the next tick. The election is not
// chained into the selection: the replicas' INFO must first be refreshed at
// the fast period ODOWN turns on, or every replica is "info-too-old", as in
// Redis.
func (c *Core) failoverStateMachine(m *instance) {
	before := m.failoverState
	c.failoverStep(m)
	if c.tun.EagerFailover && !c.crashed && m.flags&fFailoverInProgress != 0 &&
		before == SelectReplica && m.failoverState == SendReplicaOfNoOne {
		c.failoverStep(m)
	}
}

// eagerAfterCommand is, with EagerFailover, the reaction to the reply of a
// SLAVEOF transaction: ask the replica for INFO at once, so its promotion
// (or reconfiguration) is seen without waiting for the INFO period.
func (c *Core) eagerAfterCommand(ri *instance) {
	if !c.tun.EagerFailover || ri.flags&fSlave == 0 || ri.master == nil || ri.link.disconnected() {
		return
	}
	m := ri.master
	if m.flags&fFailoverInProgress == 0 {
		return
	}
	promoting := ri.flags&fPromoted != 0 && m.failoverState == WaitPromotion
	reconf := ri.flags&fReconfSent != 0 && m.failoverState == ReconfReplicas
	if !promoting && !reconf {
		return
	}
	ri.link.pending++
	c.emit(SendInfo{Instance: c.ref(ri)})
}

// eagerAfterPromotion is, with EagerFailover, what follows +promoted-slave
// at once instead of at the next ticks: the hellos announcing the new
// configuration (forceHelloUpdate made them due) and the SLAVEOF of the
// other replicas (RECONF_SLAVES).
func (c *Core) eagerAfterPromotion(m *instance) {
	if !c.tun.EagerFailover || c.crashed {
		return
	}
	due := func(ri *instance) {
		if !ri.removed && c.now-ri.lastPubTime > c.tun.PublishPeriod {
			c.sendHello(ri)
		}
	}
	due(m)
	for _, r := range sortedInstances(m.replicas) {
		due(r)
	}
	for _, s := range sortedInstances(m.sentinels) {
		due(s)
	}
	c.failoverStateMachine(m)
}

// failoverStep is one call of sentinelFailoverStateMachine.
func (c *Core) failoverStep(m *instance) {
	if m.flags&fFailoverInProgress == 0 {
		return
	}
	switch m.failoverState {
	case WaitStart:
		c.failoverWaitStart(m)
	case SelectReplica:
		c.failoverSelectReplica(m)
	case SendReplicaOfNoOne:
		c.failoverSendReplicaOfNoOne(m)
	case WaitPromotion:
		if m.coord.on {
			c.coordWait(m)
			return
		}
		if c.now-m.failoverStateChangeTime > m.failoverTimeout {
			c.event(LevelWarning, "-failover-abort-slave-timeout", m, "%@")
			c.abortFailover(m)
		}
	case ReconfReplicas:
		c.failoverReconfNextReplica(m)
	}
}

func (c *Core) failoverWaitStart(m *instance) {
	leader := c.getLeader(m, m.failoverEpoch)
	isLeader := leader != "" && strings.EqualFold(leader, c.myID)
	if !isLeader && m.flags&fForceFailover == 0 {
		timeout := c.tun.ElectionTimeout
		if timeout > m.failoverTimeout {
			timeout = m.failoverTimeout
		}
		if c.now-m.failoverStartTime > timeout {
			c.event(LevelWarning, "-failover-abort-not-elected", m, "%@")
			c.abortFailover(m)
		}
		return
	}
	c.event(LevelWarning, "+elected-leader", m, "%@")
	if c.simCrashElection {
		c.crash("CRASH-AFTER-ELECTION")
		return
	}
	m.failoverState = SelectReplica
	m.failoverStateChangeTime = c.now
	c.event(LevelWarning, "+failover-state-select-slave", m, "%@")
}

func (c *Core) failoverSelectReplica(m *instance) {
	if !c.ackSelect(m) {
		return
	}
	r := c.selectReplica(m)
	if r == nil {
		c.event(LevelWarning, "-failover-abort-no-good-slave", m, "%@")
		c.abortFailover(m)
		return
	}
	c.event(LevelWarning, "+selected-slave", r, "%@")
	r.flags |= fPromoted
	m.promoted = r
	m.failoverState = SendReplicaOfNoOne
	m.failoverStateChangeTime = c.now
	c.event(LevelNotice, "+failover-state-send-slaveof-noone", r, "%@")
}

func (c *Core) failoverSendReplicaOfNoOne(m *instance) {
	if m.coord.on {
		c.coordSend(m)
		return
	}
	p := m.promoted
	if p.link.disconnected() {
		if c.now-m.failoverStateChangeTime > m.failoverTimeout {
			c.event(LevelWarning, "-failover-abort-slave-timeout", m, "%@")
			c.abortFailover(m)
		}
		return
	}
	if !c.sendReplicaOf(p, nil) {
		return
	}
	c.event(LevelNotice, "+failover-state-wait-promotion", p, "%@")
	m.failoverState = WaitPromotion
	m.failoverStateChangeTime = c.now
}

// failoverDetectEnd is sentinelFailoverDetectEnd.
func (c *Core) failoverDetectEnd(m *instance) {
	if m.promoted == nil || m.promoted.flags&fSDown != 0 {
		return
	}
	elapsed := c.now - m.failoverStateChangeTime
	notReconfigured, timeout := 0, false
	for _, r := range m.replicas {
		if r.flags&(fPromoted|fReconfDone) != 0 || r.flags&fSDown != 0 {
			continue
		}
		notReconfigured++
	}
	if elapsed > m.failoverTimeout {
		notReconfigured = 0
		timeout = true
		c.event(LevelWarning, "+failover-end-for-timeout", m, "%@")
	}
	if notReconfigured == 0 {
		c.event(LevelWarning, "+failover-end", m, "%@")
		m.failoverState = UpdateConfig
		m.failoverStateChangeTime = c.now
	}
	if timeout {
		to := m.promoted.addr
		for _, r := range sortedInstances(m.replicas) {
			if r.flags&(fPromoted|fReconfDone|fReconfSent) != 0 || r.link.disconnected() {
				continue
			}
			if c.sendReplicaOf(r, &to) {
				c.event(LevelNotice, "+slave-reconf-sent-be", r, "%@")
				r.flags |= fReconfSent
			}
		}
	}
}

// failoverReconfNextReplica is sentinelFailoverReconfNextSlave. As in Redis,
// the RECONF_SENT timeout is only examined while fewer than parallel-syncs
// replicas are in progress.
func (c *Core) failoverReconfNextReplica(m *instance) {
	inProgress := 0
	for _, r := range m.replicas {
		if r.flags&(fReconfSent|fReconfInprog) != 0 {
			inProgress++
		}
	}
	to := m.promoted.addr
	for _, r := range sortedInstances(m.replicas) {
		if inProgress >= m.parallelSyncs {
			break
		}
		if r.flags&(fPromoted|fReconfDone) != 0 {
			continue
		}
		if r.flags&fReconfSent != 0 && c.now-r.slaveReconfSentTime > c.tun.SlaveReconfTimeout {
			c.event(LevelNotice, "-slave-reconf-sent-timeout", r, "%@")
			r.flags &^= fReconfSent
			r.flags |= fReconfDone
		}
		if r.flags&(fReconfSent|fReconfInprog) != 0 || r.link.disconnected() {
			continue
		}
		if c.sendReplicaOf(r, &to) {
			r.flags |= fReconfSent
			r.slaveReconfSentTime = c.now
			c.event(LevelNotice, "+slave-reconf-sent", r, "%@")
			inProgress++
		}
	}
	c.failoverDetectEnd(m)
}

// switchToPromoted is sentinelFailoverSwitchToPromotedSlave.
func (c *Core) switchToPromoted(m *instance) {
	ref := m.promoted
	if ref == nil {
		ref = m
	}
	c.event(LevelWarning, "+switch-master", m, "%s %s %d %s %d",
		m.name, c.announce(m.addr), m.addr.Port, c.announce(ref.addr), ref.addr.Port)
	c.resetMasterAndChangeAddress(m, ref.addr.IP, ref.addr.Port)
}

// abortFailover is sentinelAbortFailover (only up to WAIT_PROMOTION).
func (c *Core) abortFailover(m *instance) {
	m.flags &^= fFailoverInProgress | fForceFailover
	m.failoverState = NoFailover
	m.failoverStateChangeTime = c.now
	m.coord = coordState{}
	if m.promoted != nil {
		m.promoted.flags &^= fPromoted
		m.promoted = nil
	}
}

// forceHelloUpdate is sentinelForceHelloUpdateForMaster.
func (c *Core) forceHelloUpdate(m *instance) {
	back := func(ri *instance) {
		if ri.lastPubTime >= c.tun.PublishPeriod+1 {
			ri.lastPubTime -= c.tun.PublishPeriod + 1
		}
	}
	back(m)
	for _, s := range m.sentinels {
		back(s)
	}
	for _, r := range m.replicas {
		back(r)
	}
}
