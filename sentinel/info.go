package sentinel

import "strings"

// Info holds the INFO fields Sentinel reads (sentinelRefreshInstanceInfo).
// Lines are split on "\r\n" and matched by prefix as Redis does; the replica
// fields (master_host ... replica_announced) only count after a role:slave
// line. Numbers are parsed with C atoi/strtoull semantics (leading digits,
// garbage ignored, 0 on failure).
type Info struct {
	RunID string // run_id: first 40 chars, "" if absent or shorter
	Role  Kind   // KindMaster, KindReplica or 0 if no role line
	// Replicas from the master's slaveN: lines (ip=,port= or the legacy
	// "ip,port,state" form), unvalidated.
	Replicas []Addr
	// LinkDownSinceMs is master_link_down_since_seconds × 1000 (0 if absent).
	LinkDownSinceMs int64

	MasterHost          string
	HasMasterHost       bool
	MasterPort          int
	HasMasterPort       bool
	MasterLinkUp        bool
	HasMasterLinkStatus bool
	Priority            int
	HasPriority         bool
	ReplOffset          uint64
	HasReplOffset       bool
	ReplicaAnnounced    int
	HasReplicaAnnounced bool
	// FailoverState is master_failover_state (no-failover,
	// waiting-for-sync, failover-in-progress), "" if absent.
	FailoverState string
	// RefusedEmpty (Vigil): master_sync_refused_empty:1, the replica's
	// empty-restart guard refuses its master's empty full sync.
	RefusedEmpty bool
	// ReplID is master_replid: the replication history the instance's
	// offset counts in (syncack.go).
	ReplID string
	// MinReplicasAck (Vigil) is min_replicas_ack, printed by a vigil-server
	// when sync-ack mode is on or has been used; HasMinReplicasAck tells
	// whether the line was there.
	MinReplicasAck    int
	HasMinReplicasAck bool
	// AckInfoSeq (Vigil) is sync_ack_info_seq, the number a vigil-server
	// master in sync-ack mode gives each INFO; the sentinel confirms it
	// (SendAckSeen) once it recorded every replica listed.
	AckInfoSeq uint64
}

// ParseInfo parses INFO text. It never panics.
func ParseInfo(text string) Info {
	var in Info
	for _, l := range strings.Split(text, "\r\n") {
		if len(l) >= 47 && strings.HasPrefix(l, "run_id:") {
			in.RunID = l[7:47]
		}
		if len(l) >= 7 && strings.HasPrefix(l, "slave") && isDigit(l[5]) {
			if a, ok := parseSlaveLine(l); ok {
				in.Replicas = append(in.Replicas, a)
			}
		}
		if len(l) >= 32 && strings.HasPrefix(l, "master_link_down_since_seconds") {
			in.LinkDownSinceMs = cStrtoll(l[31:]) * 1000
		}
		if len(l) >= 11 && strings.HasPrefix(l, "role:master") {
			in.Role = KindMaster
		} else if len(l) >= 10 && strings.HasPrefix(l, "role:slave") {
			in.Role = KindReplica
		}
		if strings.HasPrefix(l, "master_failover_state:") {
			in.FailoverState = l[len("master_failover_state:"):]
		}
		if strings.HasPrefix(l, "master_replid:") {
			in.ReplID = l[len("master_replid:"):]
		}
		if strings.HasPrefix(l, "sync_ack_info_seq:") {
			in.AckInfoSeq = cStrtoull(l[len("sync_ack_info_seq:"):])
		}
		if strings.HasPrefix(l, "min_replicas_ack:") {
			in.MinReplicasAck, in.HasMinReplicasAck = cAtoi(l[len("min_replicas_ack:"):]), true
		}
		if in.Role != KindReplica {
			continue
		}
		switch {
		case strings.HasPrefix(l, "master_host:"):
			in.MasterHost, in.HasMasterHost = l[12:], true
		case strings.HasPrefix(l, "master_port:"):
			in.MasterPort, in.HasMasterPort = cAtoi(l[12:]), true
		case strings.HasPrefix(l, "master_link_status:"):
			in.MasterLinkUp, in.HasMasterLinkStatus = strings.EqualFold(l[19:], "up"), true
		case strings.HasPrefix(l, "slave_priority:"):
			in.Priority, in.HasPriority = cAtoi(l[15:]), true
		case strings.HasPrefix(l, "replica_priority:"):
			// Not read by Redis 7.0's sentinel; accepted for servers that
			// only print the new name.
			in.Priority, in.HasPriority = cAtoi(l[17:]), true
		case strings.HasPrefix(l, "slave_repl_offset:"):
			in.ReplOffset, in.HasReplOffset = cStrtoull(l[18:]), true
		case strings.HasPrefix(l, "replica_announced:"):
			in.ReplicaAnnounced, in.HasReplicaAnnounced = cAtoi(l[18:]), true
		case strings.HasPrefix(l, "master_sync_refused_empty:"):
			in.RefusedEmpty = cAtoi(l[26:]) == 1
		}
	}
	return in
}

// parseSlaveLine reads "slaveN:ip=...,port=...,..." or the legacy
// "slaveN:<ip>,<port>,<state>".
func parseSlaveLine(l string) (Addr, bool) {
	if !strings.Contains(l, "ip=") {
		i := strings.IndexByte(l, ':')
		if i < 0 {
			return Addr{}, false
		}
		rest := l[i+1:]
		j := strings.IndexByte(rest, ',')
		if j < 0 {
			return Addr{}, false
		}
		ip, rest := rest[:j], rest[j+1:]
		k := strings.IndexByte(rest, ',')
		if k < 0 {
			return Addr{}, false
		}
		return Addr{IP: ip, Port: cAtoi(rest[:k])}, true
	}
	i := strings.Index(l, "ip=")
	p := strings.Index(l, "port=")
	if p < 0 {
		return Addr{}, false
	}
	ip := l[i+3:]
	if e := strings.IndexByte(ip, ','); e >= 0 {
		ip = ip[:e]
	}
	port := l[p+5:]
	if e := strings.IndexByte(port, ','); e >= 0 {
		port = port[:e]
	}
	return Addr{IP: ip, Port: cAtoi(port)}, true
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

// cStrtoll mimics strtoll(s, NULL, 10): leading spaces, optional sign,
// digits; saturates on overflow.
func cStrtoll(s string) int64 {
	t := strings.TrimLeft(s, " \t\n\v\f\r")
	neg := strings.HasPrefix(t, "-")
	if neg || strings.HasPrefix(t, "+") {
		t = t[1:]
	}
	const limit = uint64(1) << 63
	var v uint64
	for i := 0; i < len(t) && isDigit(t[i]); i++ {
		if v > limit/10 {
			v = limit + 1
			break
		}
		v = v*10 + uint64(t[i]-'0')
		if v > limit {
			v = limit + 1
			break
		}
	}
	if neg {
		if v >= limit {
			return -1 << 63
		}
		return -int64(v)
	}
	if v >= limit {
		return 1<<63 - 1
	}
	return int64(v)
}

// cAtoi mimics atoi (as strtol truncated to int32).
func cAtoi(s string) int {
	v := cStrtoll(s)
	return int(int32(v))
}

// cStrtoull mimics strtoull: a leading '-' negates modulo 2^64.
func cStrtoull(s string) uint64 {
	t := strings.TrimLeft(s, " \t\n\v\f\r")
	neg := strings.HasPrefix(t, "-")
	if neg || strings.HasPrefix(t, "+") {
		t = t[1:]
	}
	var v uint64
	for i := 0; i < len(t) && isDigit(t[i]); i++ {
		d := uint64(t[i] - '0')
		if v > (^uint64(0)-d)/10 {
			return ^uint64(0)
		}
		v = v*10 + d
	}
	if neg {
		return -v
	}
	return v
}

// onInfo is sentinelInfoReplyCallback.
func (c *Core) onInfo(e InfoReceived) {
	ri := c.replyTarget(e.Instance)
	if ri == nil || e.Failed || ri.flags&fSentinel != 0 {
		return
	}
	c.refreshInfo(ri, e.Info)
}

// refreshInfo is sentinelRefreshInstanceInfo.
func (c *Core) refreshInfo(ri *instance, text string) {
	in := ParseInfo(text)
	ri.info, ri.hasInfo = text, true
	ri.masterLinkDownTime = in.LinkDownSinceMs
	ri.slaveRefusedEmpty = in.Role == KindReplica && in.RefusedEmpty
	ri.replID = in.ReplID

	if in.RunID != "" {
		if ri.runID == "" {
			ri.runID = in.RunID
		} else if ri.runID != in.RunID {
			c.event(LevelNotice, "+reboot", ri, "%@")
			if ri.flags&fMaster != 0 && c.tun.InfoOnReconnect {
				// Vigil: its replicas may now refuse an empty sync
				// (emptyrestart.go); ask them at once.
				for _, r := range ri.replicas {
					r.infoAsap = true
				}
				ri.rebootSeen = c.now
			}
			if ri.flags&fMaster != 0 && ri.rebootDownAfter != 0 {
				ri.flags |= fMasterReboot
				ri.rebootSince = c.now
			}
			ri.runID = in.RunID
		}
	}
	if ri.flags&fMaster != 0 {
		for _, a := range in.Replicas {
			// sentinelRedisInstanceLookupSlave's createSentinelAddr
			// (accept_unresolved 0): when it fails, Redis goes on to
			// createSentinelRedisInstance, whose createSentinelAddr logs
			// the warning again and fails too or finds the name taken.
			addr, e := c.newAddr(a.IP, a.Port)
			if e != "" {
				c.newAddr(a.IP, a.Port)
				continue
			}
			a.IP = canonicalHost(a.IP)
			if _, ok := ri.replicas[a.String()]; ok {
				if addr.Resolved == "" {
					c.newAddr(a.IP, a.Port)
				}
				continue
			}
			if r, _ := c.createInstance("", fSlave, a.IP, a.Port, ri.quorum, ri); r != nil {
				c.event(LevelNotice, "+slave", r, "%@")
				c.flushConfig()
			}
		}
	}
	var role flag
	switch in.Role {
	case KindMaster:
		role = fMaster
	case KindReplica:
		role = fSlave
	}
	if role == fSlave {
		if in.HasMasterHost && (!ri.hasSlaveMasterHost || !strings.EqualFold(in.MasterHost, ri.slaveMasterHost)) {
			ri.slaveMasterHost, ri.hasSlaveMasterHost = in.MasterHost, true
			ri.slaveConfChangeTime = c.now
		}
		if in.HasMasterPort && ri.slaveMasterPort != in.MasterPort {
			ri.slaveMasterPort = in.MasterPort
			ri.slaveConfChangeTime = c.now
		}
		if in.HasMasterLinkStatus {
			ri.slaveMasterLinkUp = in.MasterLinkUp
		}
		if in.HasPriority {
			ri.slavePriority = in.Priority
		}
		if in.HasReplOffset {
			ri.slaveReplOffset = in.ReplOffset
		}
		if in.HasReplicaAnnounced {
			ri.replicaAnnounced = in.ReplicaAnnounced
		}
	}
	ri.infoRefresh = c.now
	c.syncAckInfo(ri, in)

	// Acting half.
	if role != ri.roleReported {
		ri.roleReportedTime = c.now
		ri.roleReported = role
		if role == fSlave {
			ri.slaveConfChangeTime = c.now
		}
		typ := "-role-change"
		if ri.flags&(fMaster|fSlave) == role {
			typ = "+role-change"
		}
		name := "slave"
		if role == fMaster {
			name = "master"
		}
		c.event(LevelVerbose, typ, ri, "%@ new reported role is %s", name)
	}
	if c.tilt {
		return
	}
	if ri.flags&fMaster != 0 {
		c.coordMasterInfo(ri, in)
	}
	// A master reporting role:slave needs no action here: checkSDown turns it
	// SDOWN after down-after + 2 INFO periods.

	if ri.flags&fSlave != 0 && role == fMaster {
		m := ri.master
		if ri.flags&fPromoted != 0 && m.flags&fFailoverInProgress != 0 && m.failoverState == WaitPromotion {
			if m.coord.on {
				c.event(LevelWarning, "+coordinated-failover-end", m, "%@")
				c.coordPersist(ri)
			}
			m.configEpoch = m.failoverEpoch
			m.failoverState = ReconfReplicas
			m.failoverStateChangeTime = c.now
			c.flushConfig()
			c.event(LevelWarning, "+promoted-slave", ri, "%@")
			if c.simCrashPromotion {
				c.crash("CRASH-AFTER-PROMOTION")
				return
			}
			c.event(LevelWarning, "+failover-state-reconf-slaves", m, "%@")
			c.callClientReconfScript(m, true, "start", m.addr, ri.addr)
			c.forceHelloUpdate(m)
			c.eagerAfterPromotion(m)
		} else {
			wait := c.tun.PublishPeriod * 4
			if ri.flags&fPromoted == 0 && c.masterLooksSane(m) && c.noDownFor(ri, wait) && c.now-ri.roleReportedTime > wait {
				to := m.addr
				if c.sendReplicaOf(ri, &to) {
					c.event(LevelNotice, "+convert-to-slave", ri, "%@")
				}
			}
		}
	}

	if ri.flags&fSlave != 0 && role == fSlave {
		m := ri.master
		if ri.slaveMasterPort != m.addr.Port || !ri.hasSlaveMasterHost || !c.addrEqualsHost(m.addr, ri.slaveMasterHost) {
			wait := m.failoverTimeout
			if c.masterLooksSane(m) && c.noDownFor(ri, wait) && c.now-ri.slaveConfChangeTime > wait {
				to := m.addr
				if c.sendReplicaOf(ri, &to) {
					c.event(LevelNotice, "+fix-slave-config", ri, "%@")
				}
			}
		}
	}

	if ri.flags&fSlave != 0 && role == fSlave && ri.flags&(fReconfSent|fReconfInprog) != 0 {
		p := ri.master.promoted
		if ri.flags&fReconfSent != 0 && p != nil && ri.hasSlaveMasterHost &&
			c.addrEqualsHost(p.addr, ri.slaveMasterHost) && ri.slaveMasterPort == p.addr.Port {
			ri.flags &^= fReconfSent
			ri.flags |= fReconfInprog
			c.event(LevelNotice, "+slave-reconf-inprog", ri, "%@")
		}
		if ri.flags&fReconfInprog != 0 && ri.slaveMasterLinkUp {
			ri.flags &^= fReconfInprog
			ri.flags |= fReconfDone
			c.event(LevelNotice, "+slave-reconf-done", ri, "%@")
		}
	}
}

// masterLooksSane is sentinelMasterLooksSane.
func (c *Core) masterLooksSane(m *instance) bool {
	return m.flags&fMaster != 0 && m.roleReported == fMaster &&
		m.flags&(fSDown|fODown) == 0 && c.now-m.infoRefresh < c.tun.InfoPeriod*2
}
