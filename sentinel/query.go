package sentinel

import (
	"fmt"
	"strconv"
	"strings"
)

// Field is one name/value pair of an instance map; every value is sent as a
// bulk string.
type Field struct {
	Name  string
	Value string
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// flagString is the `flags` field, in addReplySentinelRedisInstance's order.
func flagString(ri *instance) string {
	var b []string
	add := func(cond bool, s string) {
		if cond {
			b = append(b, s)
		}
	}
	f := ri.flags
	add(f&fSDown != 0, "s_down")
	add(f&fODown != 0, "o_down")
	add(f&fMaster != 0, "master")
	add(f&fSlave != 0, "slave")
	add(f&fSentinel != 0, "sentinel")
	add(ri.link.disconnected(), "disconnected")
	add(f&fMasterDown != 0, "master_down")
	add(f&fFailoverInProgress != 0, "failover_in_progress")
	add(f&fPromoted != 0, "promoted")
	add(f&fReconfSent != 0, "reconf_sent")
	add(f&fReconfInprog != 0, "reconf_inprog")
	add(f&fReconfDone != 0, "reconf_done")
	add(f&fForceFailover != 0, "force_failover")
	add(f&fScriptKillSent != 0, "script_kill_sent")
	add(f&fEmptyRestart != 0, "empty_restart")
	add(f&fSlave != 0 && ri.slaveRefusedEmpty, "refused_empty")
	add(f&fMaster != 0 && ri.ack.announced, "no_ack_quorum")
	return strings.Join(b, ",")
}

// instanceFields is addReplySentinelRedisInstance. Times are ms ago.
func (c *Core) instanceFields(now int64, ri *instance) []Field {
	l := ri.link
	f := []Field{
		{"name", ri.name},
		{"ip", c.announce(ri.addr)},
		{"port", itoa(int64(ri.addr.Port))},
		{"runid", ri.runID},
		{"flags", flagString(ri)},
		{"link-pending-commands", itoa(int64(l.pending))},
		{"link-refcount", itoa(int64(l.refcount))},
	}
	if ri.flags&fFailoverInProgress != 0 {
		f = append(f, Field{"failover-state", ri.failoverState.String()})
	}
	var sent int64
	if l.actPing != 0 {
		sent = now - l.actPing
	}
	f = append(f,
		Field{"last-ping-sent", itoa(sent)},
		Field{"last-ok-ping-reply", itoa(now - l.lastAvail)},
		Field{"last-ping-reply", itoa(now - l.lastPong)},
	)
	if ri.flags&fSDown != 0 {
		f = append(f, Field{"s-down-time", itoa(now - ri.sdownSince)})
	}
	if ri.flags&fODown != 0 {
		f = append(f, Field{"o-down-time", itoa(now - ri.odownSince)})
	}
	f = append(f, Field{"down-after-milliseconds", itoa(ri.downAfter)})
	if ri.flags&(fMaster|fSlave) != 0 {
		var refresh int64
		if ri.infoRefresh != 0 {
			refresh = now - ri.infoRefresh
		}
		role := "slave"
		if ri.roleReported == fMaster {
			role = "master"
		}
		f = append(f,
			Field{"info-refresh", itoa(refresh)},
			Field{"role-reported", role},
			Field{"role-reported-time", itoa(now - ri.roleReportedTime)},
		)
	}
	if ri.flags&fMaster != 0 {
		f = append(f,
			Field{"config-epoch", strconv.FormatUint(ri.configEpoch, 10)},
			Field{"num-slaves", itoa(int64(len(ri.replicas)))},
			Field{"num-other-sentinels", itoa(int64(len(ri.sentinels)))},
			Field{"quorum", itoa(int64(ri.quorum))},
			Field{"failover-timeout", itoa(ri.failoverTimeout)},
			Field{"parallel-syncs", itoa(int64(ri.parallelSyncs))},
		)
		if ri.forgetAfter > 0 {
			// Vigil (forget.go); not shown when off, so the fields are
			// Redis's then.
			f = append(f, Field{"forget-after-milliseconds", itoa(ri.forgetAfter)})
		}
		if ri.notificationScript != "" {
			f = append(f, Field{"notification-script", ri.notificationScript})
		}
		if ri.clientReconfigScript != "" {
			f = append(f, Field{"client-reconfig-script", ri.clientReconfigScript})
		}
		f = append(f, ri.ackFields()...)
	}
	if ri.flags&fSlave != 0 {
		status := "err"
		if ri.slaveMasterLinkUp {
			status = "ok"
		}
		host := "?"
		if ri.hasSlaveMasterHost {
			host = ri.slaveMasterHost
		}
		f = append(f,
			Field{"master-link-down-time", itoa(ri.masterLinkDownTime)},
			Field{"master-link-status", status},
			Field{"master-host", host},
			Field{"master-port", itoa(int64(ri.slaveMasterPort))},
			Field{"slave-priority", itoa(int64(ri.slavePriority))},
			Field{"slave-repl-offset", strconv.FormatUint(ri.slaveReplOffset, 10)},
			Field{"replica-announced", itoa(int64(ri.replicaAnnounced))},
		)
	}
	if ri.flags&fSentinel != 0 {
		leader := ri.leader
		if leader == "" {
			leader = "?"
		}
		f = append(f,
			Field{"last-hello-message", itoa(now - ri.lastHelloTime)},
			Field{"voted-leader", leader},
			Field{"voted-leader-epoch", strconv.FormatUint(ri.leaderEpoch, 10)},
		)
	}
	return f
}

// Masters is SENTINEL MASTERS (ordered by name).
func (c *Core) Masters(now int64) [][]Field {
	var out [][]Field
	for _, m := range c.sortedMasters() {
		out = append(out, c.instanceFields(now, m))
	}
	return out
}

// Master is SENTINEL MASTER name; ok is false for an unknown name
// ("-ERR No such master with that name").
func (c *Core) Master(now int64, name string) ([]Field, bool) {
	m := c.masters[name]
	if m == nil {
		return nil, false
	}
	return c.instanceFields(now, m), true
}

// Replicas is SENTINEL REPLICAS name (replicas reporting replica_announced:0
// are omitted).
func (c *Core) Replicas(now int64, name string) ([][]Field, bool) {
	m := c.masters[name]
	if m == nil {
		return nil, false
	}
	out := [][]Field{}
	for _, r := range sortedInstances(m.replicas) {
		if r.replicaAnnounced == 0 {
			continue
		}
		out = append(out, c.instanceFields(now, r))
	}
	return out, true
}

// Sentinels is SENTINEL SENTINELS name (the other sentinels, not this one).
func (c *Core) Sentinels(now int64, name string) ([][]Field, bool) {
	m := c.masters[name]
	if m == nil {
		return nil, false
	}
	out := [][]Field{}
	for _, s := range sortedInstances(m.sentinels) {
		out = append(out, c.instanceFields(now, s))
	}
	return out, true
}

// MasterAddr is SENTINEL GET-MASTER-ADDR-BY-NAME: the promoted replica's
// address once a failover reached RECONF_SLAVES (sentinelGetCurrentMasterAddress).
func (c *Core) MasterAddr(name string) (Addr, bool) {
	m := c.masters[name]
	if m == nil {
		return Addr{}, false
	}
	return c.announced(c.currentMasterAddr(m)), true
}

// MasterNames lists the monitored masters (ROLE), ordered by name.
func (c *Core) MasterNames() []string {
	var out []string
	for _, m := range c.sortedMasters() {
		out = append(out, m.name)
	}
	return out
}

// CKQuorum is SENTINEL CKQUORUM name. ok selects the reply type: "+<text>" when
// true, "-<text>" when false. found is false for an unknown master.
func (c *Core) CKQuorum(name string) (text string, ok, found bool) {
	m := c.masters[name]
	if m == nil {
		return "", false, false
	}
	usable := 1
	for _, s := range m.sentinels {
		if s.flags&(fSDown|fODown) == 0 {
			usable++
		}
	}
	voters := len(m.sentinels) + 1
	noQuorum := usable < m.quorum
	noAuth := usable < voters/2+1
	if !noQuorum && !noAuth {
		return fmt.Sprintf("OK %d usable Sentinels. Quorum and failover authorization can be reached", usable), true, true
	}
	t := fmt.Sprintf("NOQUORUM %d usable Sentinels. ", usable)
	if noQuorum {
		t += "Not enough available Sentinels to reach the specified quorum for this master"
	}
	if noAuth {
		if noQuorum {
			t += ". "
		}
		t += "Not enough available Sentinels to reach the majority and authorize a failover"
	}
	return t, false, true
}

// MyID returns this sentinel's 40-char id.
func (c *Core) MyID() string { return c.myID }

// CurrentEpoch returns the global current epoch.
func (c *Core) CurrentEpoch() uint64 { return c.currentEpoch }

// Tilt reports whether the sentinel is in TILT mode and since when (unix ms).
func (c *Core) Tilt() (bool, int64) { return c.tilt, c.tiltStart }

// SimulateFailureFlags is sentinel_simulate_failure_flags (bit 0: crash after
// election, bit 1: crash after promotion).
func (c *Core) SimulateFailureFlags() int {
	f := 0
	if c.simCrashElection {
		f |= 1
	}
	if c.simCrashPromotion {
		f |= 2
	}
	return f
}

// InfoSection returns INFO's "# Sentinel" section (lines ending in \r\n); the
// shell supplies its script counters.
func (c *Core) InfoSection(now int64, runningScripts, scriptsQueued int) string {
	var b strings.Builder
	tiltSince := int64(-1)
	tilt := 0
	if c.tilt {
		tilt = 1
		tiltSince = (now - c.tiltStart) / 1000
	}
	fmt.Fprintf(&b, "# Sentinel\r\nsentinel_masters:%d\r\nsentinel_tilt:%d\r\nsentinel_tilt_since_seconds:%d\r\n"+
		"sentinel_running_scripts:%d\r\nsentinel_scripts_queue_length:%d\r\nsentinel_simulate_failure_flags:%d\r\n",
		len(c.masters), tilt, tiltSince, runningScripts, scriptsQueued, c.SimulateFailureFlags())
	for i, m := range c.sortedMasters() {
		status := "ok"
		if m.flags&fODown != 0 {
			status = "odown"
		} else if m.flags&fSDown != 0 {
			status = "sdown"
		}
		fmt.Fprintf(&b, "master%d:name=%s,status=%s,address=%s,slaves=%d,sentinels=%d",
			i, m.name, status, c.announced(m.addr).String(), len(m.replicas), len(m.sentinels)+1)
		if m.ack.n > 0 {
			// Vigil's sync-ack mode (syncack.go): the reason is in SENTINEL
			// MASTER's failover-blocked field.
			blocked := 0
			if m.ack.block != "" && !m.ack.pending {
				blocked = 1
			}
			fmt.Fprintf(&b, ",min_replicas_ack=%d,failover_blocked=%d", m.ack.n, blocked)
		}
		b.WriteString("\r\n")
	}
	return b.String()
}

// InfoCacheEntry is one instance's cached INFO for SENTINEL INFO-CACHE.
type InfoCacheEntry struct {
	AgeMs   int64
	Info    string
	HasInfo bool // false: reply null
}

// InfoCacheMaster is one master's SENTINEL INFO-CACHE entry: the master first,
// then its replicas.
type InfoCacheMaster struct {
	Name    string
	Entries []InfoCacheEntry
}

// InfoCache is SENTINEL INFO-CACHE [name ...]; unknown names are skipped and
// no names means all masters. As in Redis 7.0, a replica's age is reported as
// 0 when the master has never answered INFO.
func (c *Core) InfoCache(now int64, names []string) []InfoCacheMaster {
	var ms []*instance
	if len(names) == 0 {
		ms = c.sortedMasters()
	} else {
		seen := map[string]bool{}
		for _, n := range names {
			if m := c.masters[n]; m != nil && !seen[n] {
				seen[n] = true
				ms = append(ms, m)
			}
		}
	}
	var out []InfoCacheMaster
	for _, m := range ms {
		e := InfoCacheMaster{Name: m.name}
		age := func(ri *instance) int64 {
			if m.infoRefresh == 0 {
				return 0
			}
			return now - ri.infoRefresh
		}
		e.Entries = append(e.Entries, InfoCacheEntry{age(m), m.info, m.hasInfo})
		for _, r := range sortedInstances(m.replicas) {
			e.Entries = append(e.Entries, InfoCacheEntry{age(r), r.info, r.hasInfo})
		}
		out = append(out, e)
	}
	return out
}
