package sentinel

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// The sync-ack rule (Vigil; issue 23). A vigil-server master with
// `min-replicas-ack N` replies to a write only once N replicas acknowledged
// (REPLCONF ACK) an offset at least the write's. The sentinel must then
// promote only a replica that holds every acknowledged write. The rule, its
// proof and its limits are in doc.go ("Sync-ack mode") and docs/safety.md.
//
// What the core learns:
//   - N, from the master's INFO (min_replicas_ack, printed only by a
//     vigil-server with the mode on or used): the first report for a
//     master address sets it, later ones may only lower it (writes
//     acknowledged under the lower N are still out there); 0 or no line
//     (a redis-server) turns the rule off. It survives restarts (`sentinel
//     known-sync-ack`), so a sentinel restarted while the master is down
//     keeps applying it.
//   - The ack members M: every known replica that was seen following the
//     master (listed in the master's INFO, or reporting it as its master
//     with the link up), and every known replica that may have started
//     following it since the master's last INFO (ackMayHaveJoined). Only
//     they can have acknowledged a write. All known replicas count as
//     members after a config load (the file does not say which were).
//   - The history H: the master_replid a replica reports while its link to
//     the master is up. Offsets only compare within one history.
//
// The failover check (ackCheck), with r = |M|: a replica proves its offset
// when it is a member, reachable (not SDOWN, connected), its INFO is recent
// (and, once the master is SDOWN, taken after that), it reports role:slave
// following the master with master_link_status:down and master_replid H.
// With P the proving replicas and k = r - |P| the members that cannot
// prove, the failover needs k <= N-1 (|P| >= r-N+1); then every
// acknowledged write is at or below T, the (N-k)-th greatest offset in P,
// and only a replica of P at offset >= T may be promoted (Redis's order
// among them: priority, offset, run id).

// ackState is a master's sync-ack knowledge and the state of its check.
type ackState struct {
	n         int    // effective min-replicas-ack; 0: the rule is off
	seen      bool   // the current master address reported n
	history   string // the replid acknowledgements happen in ("" unknown)
	block     string // why no failover now ("" none)
	pending   bool   // block only waits for fresh INFO (no event)
	announced bool   // +no-ack-quorum emitted, -no-ack-quorum due
	proven    int    // last check: replicas proving their offset
}

// ackVerdict is one evaluation of the rule.
type ackVerdict struct {
	reason    string // "" : a failover may promote a replica of proof at >= threshold
	pending   bool   // the reason is only that some INFO predates the master's SDOWN
	proof     map[*instance]bool
	threshold uint64
	proven    int
	needed    int
	members   int
}

// syncAckInfo records what an INFO reply tells the rule.
func (c *Core) syncAckInfo(ri *instance, in Info) {
	if ri.flags&fMaster != 0 && in.Role == KindMaster {
		// No line: a redis-server, or a vigil-server that never had the
		// mode on: off.
		n := max(in.MinReplicasAck, 0)
		old := ri.ack.n
		if n == 0 || !ri.ack.seen || ri.ack.n == 0 || n < ri.ack.n {
			ri.ack.n = n
		}
		ri.ack.seen = n > 0
		if ri.ack.n != old {
			c.flushConfig()
			if ri.ack.n == 0 {
				c.ackClear(ri)
			}
		}
		all := true
		for _, a := range in.Replicas {
			if r := ri.replicas[Addr{IP: canonicalHost(a.IP), Port: a.Port}.String()]; r != nil {
				r.ackMember = true
			} else {
				all = false // an address the sentinel refused: not recorded
			}
		}
		if in.AckInfoSeq > 0 && all && ri.ack.n > 0 && ri.link != nil && !ri.link.disconnected() && c.myID != "" {
			// Every listed replica is an ack member (and, after this
			// Step's RewriteConfig, in the config file): tell the master
			// their acknowledgements may count (AckGate).
			ri.link.pending++
			c.late = append(c.late, SendAckSeen{Instance: c.ref(ri), Seq: in.AckInfoSeq, RunID: c.myID})
		}
		return
	}
	m := ri.master
	if ri.flags&fSlave == 0 || m == nil || in.Role != KindReplica || !c.followsMaster(ri, m) || !in.MasterLinkUp {
		return
	}
	ri.ackMember = true
	if in.ReplID != "" && in.ReplID != m.ack.history {
		m.ack.history = in.ReplID
		if m.ack.n > 0 {
			c.flushConfig()
		}
	}
}

// followsMaster: the replica's last INFO names m's address as its master.
func (c *Core) followsMaster(r, m *instance) bool {
	return r.hasSlaveMasterHost && r.slaveMasterPort == m.addr.Port && c.addrEqualsHost(m.addr, r.slaveMasterHost)
}

// ackMayHaveJoined: a known replica not seen following m may have started
// following it (and acknowledging writes) since the master's last INFO the
// sentinel read, which would have listed it: the sentinel reached it
// (a valid PING reply) around or after that INFO, and no INFO of its own
// taken since shows it cannot hold the master's acknowledged writes. Such
// a replica counts as an ack member (the drill lost 757 acknowledged writes
// without this: a deposed master converted into a replica synced and
// acknowledged within the 10 s between two INFOs of the new master, then a
// split left it on the new master's side, out of the sentinels' reach, and
// the majority promoted the other replica). A replica the sentinel has not
// reached since well before the master's last INFO (a dead one) does not
// block failovers.
func (c *Core) ackMayHaveJoined(r, m *instance) bool {
	if m.infoRefresh == 0 || r.link == nil || r.link.availSeen == 0 || r.link.availSeen < m.infoRefresh-2*c.tun.PingPeriod {
		return false
	}
	if r.hasInfo && r.infoRefresh > m.infoRefresh && (m.flags&fSDown == 0 || r.infoRefresh >= m.sdownSince) {
		// Its own INFO, taken since: not following the master, or
		// following it in another history without a link (it never
		// synced with it: its replication ID would be the master's).
		if r.roleReported != fSlave || !c.followsMaster(r, m) {
			return false
		}
		if !r.slaveMasterLinkUp && m.ack.history != "" && r.replID != m.ack.history {
			return false
		}
	}
	return true
}

// ackCheck evaluates the rule for m now (m.ack.n > 0).
func (c *Core) ackCheck(m *instance) ackVerdict {
	n := m.ack.n
	var v ackVerdict
	var members []*instance
	for _, r := range sortedInstances(m.replicas) {
		if r.ackMember || c.ackMayHaveJoined(r, m) {
			members = append(members, r)
		}
	}
	v.members = len(members)
	v.needed = v.members - n + 1
	if v.members < n {
		v.reason = fmt.Sprintf("%d replicas seen following the master, fewer than min-replicas-ack %d", v.members, n)
		return v
	}
	validity := c.tun.InfoPeriod * 3
	if m.flags&fSDown != 0 {
		validity = c.tun.PingPeriod * 5
	}
	var final []*instance
	linked, waiting := 0, 0
	for _, r := range members {
		if r.flags&(fSDown|fODown) != 0 || r.link.disconnected() {
			continue
		}
		if !r.hasInfo || c.now-r.infoRefresh > validity || (m.flags&fSDown != 0 && r.infoRefresh < m.sdownSince) {
			waiting++ // reachable: its INFO comes (asked at the master's SDOWN)
			continue
		}
		if r.roleReported != fSlave || !c.followsMaster(r, m) {
			continue
		}
		if r.slaveMasterLinkUp {
			linked++
			continue
		}
		final = append(final, r)
	}
	history := m.ack.history
	if history == "" {
		// Not learned (a sentinel restarted with the master down, or a
		// new master): the proving replicas must agree on one.
		for _, r := range final {
			if history == "" {
				history = r.replID
			} else if r.replID != history {
				history = ""
				break
			}
		}
	}
	v.proof = map[*instance]bool{}
	var offs []uint64
	for _, r := range final {
		if history != "" && r.replID == history {
			v.proof[r] = true
			offs = append(offs, r.slaveReplOffset)
		}
	}
	v.proven = len(offs)
	if v.proven < v.needed {
		v.reason = fmt.Sprintf("%d of %d replicas prove their offset, %d needed (min-replicas-ack %d)",
			v.proven, v.members, v.needed, n)
		if linked > 0 {
			v.reason += fmt.Sprintf(", %d still linked to the master", linked)
		}
		if other := len(final) - v.proven; other > 0 {
			v.reason += fmt.Sprintf(", %d in another replication history", other)
		}
		v.pending = waiting > 0 && v.proven+waiting >= v.needed
		return v
	}
	sort.Slice(offs, func(i, j int) bool { return offs[i] > offs[j] })
	k := v.members - v.proven
	v.threshold = offs[n-k-1]
	return v
}

// ackCandidates filters selectReplica's candidates by the verdict: proving
// replicas at or above the threshold.
func ackCandidates(v ackVerdict, cands []*instance) []*instance {
	var out []*instance
	for _, r := range cands {
		if v.proof[r] && r.slaveReplOffset >= v.threshold {
			out = append(out, r)
		}
	}
	return out
}

// ackNoCandidate explains why no replica at or above the threshold can be
// promoted (priority 0, or one of Redis's other exclusions).
func (c *Core) ackNoCandidate(m *instance, v ackVerdict) string {
	maxDown := c.maxMasterDown(m)
	var why []string
	for _, r := range sortedInstances(m.replicas) {
		if v.proof[r] && r.slaveReplOffset >= v.threshold {
			why = append(why, r.name+" "+c.replicaExcluded(m, r, maxDown))
		}
	}
	return fmt.Sprintf("no replica at offset >= %d can be promoted (%s)", v.threshold, strings.Join(why, ", "))
}

// ackVerdictFor evaluates the rule and, when it allows a failover, that a
// replica can be selected; reason "" means go.
func (c *Core) ackVerdictFor(m *instance) ackVerdict {
	v := c.ackCheck(m)
	m.ack.proven = v.proven
	if v.reason == "" && c.selectReplica(m) == nil {
		v.reason = c.ackNoCandidate(m, v)
	}
	return v
}

// ackGate runs each tick for a master in sync-ack mode with no failover in
// progress: while it is ODOWN and the rule forbids a failover, the failover
// is held back (+no-ack-quorum once, the reason in SENTINEL MASTER's
// failover-blocked field); it reports whether a failover may start.
func (c *Core) ackGate(m *instance) bool {
	if m.ack.n == 0 || m.flags&fFailoverInProgress != 0 {
		return true
	}
	if m.flags&fODown == 0 {
		c.ackClear(m)
		return true
	}
	v := c.ackVerdictFor(m)
	if v.reason == "" {
		c.ackClear(m)
		return true
	}
	if c.now-m.failoverStartTime < m.failoverTimeout*2 && !m.ack.announced {
		// No failover could start now anyway (this sentinel voted for
		// another's, or its own attempt is in its retry delay): the
		// reason shows, the event waits until the rule is what holds
		// the failover back.
		v.pending = true
	}
	c.ackBlock(m, v)
	return false
}

// ackAskReplicas: the master just turned SDOWN in sync-ack mode; its
// replicas are asked for INFO at once, so the rule sees their offsets from
// after the failure without waiting for the INFO period.
func (c *Core) ackAskReplicas(m *instance) {
	if m.ack.n == 0 {
		return
	}
	for _, r := range m.replicas {
		r.infoAsap = true
	}
}

// ackBlock records a block and announces it unless it only waits for INFO.
func (c *Core) ackBlock(m *instance, v ackVerdict) {
	m.ack.block, m.ack.pending = v.reason, v.pending
	if !v.pending && !m.ack.announced {
		m.ack.announced = true
		c.event(LevelWarning, "+no-ack-quorum", m, "%@ %s", v.reason)
	}
}

// ackClear lifts a block (-no-ack-quorum if it was announced).
func (c *Core) ackClear(m *instance) {
	if m.ack.announced {
		c.event(LevelWarning, "-no-ack-quorum", m, "%@")
	}
	m.ack.block, m.ack.pending, m.ack.announced = "", false, false
}

// ackSelect is SELECT_SLAVE's check in sync-ack mode. It returns false when
// the failover must not select now: it waits (only for fresh INFO, within
// the failover timeout) or was aborted (-failover-abort-no-ack-quorum).
func (c *Core) ackSelect(m *instance) bool {
	if m.ack.n == 0 || m.coord.on {
		return true
	}
	v := c.ackVerdictFor(m)
	if v.reason == "" {
		c.ackClear(m)
		return true
	}
	if v.pending && c.now-m.failoverStateChangeTime <= m.failoverTimeout {
		m.ack.block, m.ack.pending = v.reason, true
		return false
	}
	v.pending = false
	c.ackBlock(m, v)
	c.event(LevelWarning, "-failover-abort-no-ack-quorum", m, "%@ %s", v.reason)
	c.abortFailover(m)
	return false
}

// ackFields are SENTINEL MASTER's sync-ack fields, present only with the
// rule on.
func (m *instance) ackFields() []Field {
	if m.ack.n == 0 {
		return nil
	}
	blocked := "no"
	if m.ack.block != "" {
		blocked = m.ack.block
	}
	members := 0
	for _, r := range m.replicas {
		if r.ackMember {
			members++
		}
	}
	return []Field{
		{"min-replicas-ack", strconv.Itoa(m.ack.n)},
		{"ack-replicas", strconv.Itoa(members)},
		{"ack-replicas-needed", strconv.Itoa(max(members-m.ack.n+1, 0))},
		{"ack-replicas-proven", strconv.Itoa(m.ack.proven)},
		{"failover-blocked", blocked},
	}
}
