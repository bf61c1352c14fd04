package sentinel

import (
	"fmt"
	"strings"
)

// checkSDown is sentinelCheckSubjectivelyDown, including the link recycling
// it does. It reports whether the instance turned SDOWN in this call.
func (c *Core) checkSDown(ri *instance) bool {
	l := ri.link
	var elapsed int64
	if l.actPing != 0 {
		elapsed = c.now - l.actPing
	} else if l.disconnected() {
		elapsed = c.now - l.lastAvail
	}

	// 1) Command link connected long enough but a PING is pending for more
	// than half the down-after period without any reply: reconnect it.
	if l.cc != connNone && c.now-l.ccConnTime > c.tun.MinLinkReconnectPeriod &&
		l.actPing != 0 && c.now-l.actPing > ri.downAfter/2 && c.now-l.lastPong > ri.downAfter/2 {
		c.closeConns(ri, true, false)
	}
	// 2) Pub/sub link connected long enough but silent for 3 publish periods
	// (we receive our own hellos on it).
	if l.pc != connNone && c.now-l.pcConnTime > c.tun.MinLinkReconnectPeriod &&
		c.now-l.pcLastActivity > c.tun.PublishPeriod*3 {
		c.closeConns(ri, false, true)
	}

	down := elapsed > ri.downAfter ||
		(ri.flags&fMaster != 0 && ri.roleReported == fSlave &&
			c.now-ri.roleReportedTime > ri.downAfter+c.tun.InfoPeriod*2) ||
		(ri.flags&fMasterReboot != 0 && c.now-ri.rebootSince > ri.rebootDownAfter) ||
		c.checkEmptyRestart(ri)
	if down {
		if ri.flags&fSDown == 0 {
			c.event(LevelWarning, "+sdown", ri, "%@")
			ri.sdownSince = c.now
			ri.flags |= fSDown
			return true
		}
	} else if ri.flags&fSDown != 0 {
		c.event(LevelWarning, "-sdown", ri, "%@")
		ri.flags &^= fSDown | fScriptKillSent
	}
	return false
}

// checkODown is sentinelCheckObjectivelyDown: ODOWN while we see SDOWN and,
// counting ourselves, at least quorum sentinels said the master is down.
func (c *Core) checkODown(m *instance) {
	count, odown := 0, false
	if m.flags&fSDown != 0 {
		count = 1
		for _, s := range m.sentinels {
			if s.flags&fMasterDown != 0 {
				count++
			}
		}
		odown = count >= m.quorum
	}
	if odown {
		if m.flags&fODown == 0 {
			c.event(LevelWarning, "+odown", m, "%@ #quorum %d/%d", count, m.quorum)
			m.flags |= fODown
			m.odownSince = c.now
		}
	} else if m.flags&fODown != 0 {
		c.event(LevelWarning, "-odown", m, "%@")
		m.flags &^= fODown
	}
}

// askMasterState is sentinelAskMasterStateToOtherSentinels.
func (c *Core) askMasterState(m *instance, forced bool) {
	for _, s := range sortedInstances(m.sentinels) {
		if c.now-s.lastMasterDownReplyTime > c.tun.AskPeriod*5 {
			s.flags &^= fMasterDown
			s.leader = ""
		}
		if m.flags&fSDown == 0 {
			continue
		}
		if s.link.disconnected() {
			continue
		}
		if !forced && c.now-s.lastMasterDownReplyTime < c.tun.AskPeriod {
			continue
		}
		runID := "*"
		if m.failoverState > NoFailover {
			runID = c.myID
		}
		s.link.pending++
		c.emit(AskMasterDown{
			Sentinel:   c.ref(s),
			MasterIP:   c.announce(m.addr),
			MasterPort: m.addr.Port,
			Epoch:      c.currentEpoch,
			RunID:      runID,
		})
	}
}

// onIsMasterDownReplied is sentinelReceiveIsMasterDownReply.
func (c *Core) onIsMasterDownReplied(e IsMasterDownReplied) {
	s := c.replyTarget(e.Sentinel)
	if s == nil || e.Invalid {
		return
	}
	s.lastMasterDownReplyTime = c.now
	if e.Down {
		s.flags |= fMasterDown
	} else {
		s.flags &^= fMasterDown
	}
	if e.Leader != "*" {
		if s.leaderEpoch != e.LeaderEpoch {
			c.emit(Log{Level: LevelWarning, Message: fmt.Sprintf("%s voted for %s %d", s.name, e.Leader, e.LeaderEpoch)})
		}
		s.leader = e.Leader
		s.leaderEpoch = e.LeaderEpoch
	}
}

// findMasterByAddr is getSentinelRedisInstanceByAddrAndRunID over masters.
func (c *Core) findMasterByAddr(ip string, port int) *instance {
	want, e := c.newAddr(ip, port)
	if e != "" {
		return nil
	}
	for _, m := range c.sortedMasters() {
		if addrEqual(m.addr, want) {
			return m
		}
	}
	return nil
}

// onIsMasterDownAsked answers SENTINEL IS-MASTER-DOWN-BY-ADDR: down iff not in
// TILT and we see the master SDOWN; a vote is cast (even in TILT) when runid
// is not "*".
func (c *Core) onIsMasterDownAsked(e IsMasterDownAsked) Action {
	m := c.findMasterByAddr(e.IP, e.Port)
	down := !c.tilt && m != nil && m.flags&fSDown != 0 && m.flags&fMaster != 0
	leader, epoch := "", uint64(0)
	if m != nil && m.flags&fMaster != 0 && !strings.EqualFold(e.RunID, "*") {
		leader, epoch = c.voteLeader(m, e.Epoch, e.RunID)
	}
	if leader == "" {
		leader = "*"
	}
	return MasterDownReply{Down: down, Leader: leader, LeaderEpoch: epoch}
}
