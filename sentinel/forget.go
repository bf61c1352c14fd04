package sentinel

// The forget rule (Vigil; issue 25, redis/redis#8540,
// valkey-io/valkey#2158). Redis's sentinel never forgets a replica or a
// sentinel it once knew: an instance that comes back under a new address
// (a container or pod restarted with a new IP) is learned again under that
// address, and the old entry stays in SENTINEL REPLICAS / SENTINELS, down,
// and in the config file (known-replica, known-sentinel lines) until an
// operator runs SENTINEL RESET. The stale entries count in num-slaves and
// num-other-sentinels, and a stale replica address reused by an unrelated
// server is reconfigured as a replica of this master (bitnami/charts#8224).
//
// With `sentinel forget-after-milliseconds <master> <ms>` (0, the default:
// never, as Redis) a replica or a sentinel of that master is forgotten,
// as SENTINEL RESET forgets every one of them (sentinelResetMaster), once
//   - it is SDOWN, and
//   - its last valid PING reply (or, never answered, its creation or the
//     config load) is more than forget-after ms ago,
//
// checked on every timer tick after the instances were handled, never in
// TILT. It is removed from the master's table, its link released, and the
// config rewritten without it; the event is -slave or -sentinel (the
// counterparts of +slave and +sentinel), logged and published at warning
// level so notification-script sees it. An instance that answers a PING
// again is no longer SDOWN and its reply time is fresh: it is not
// forgotten. One forgotten and then back is learned again as Redis learns
// any instance (+slave from the master's INFO, +sentinel from a hello).
//
// Never forgotten:
//   - the master itself (only replicas and sentinels are candidates), nor a
//     replica at the current master address;
//   - anything while a failover of the master is in progress: the promoted
//     replica and the replicas being reconfigured stay;
//   - in sync-ack mode (syncack.go), a replica seen following the master
//     (an ack member): the rule counts it as a replica that may hold
//     acknowledged writes, and forgetting it would let a failover promote
//     a replica that lacks some. Such an entry stays until SENTINEL RESET.
//
// What forgetting costs. A forgotten replica is no longer reconfigured by
// this sentinel when it comes back at the same address pointing at a
// former master, and a former master (kept as a replica after a failover)
// forgotten before it restarts at the same address comes back as a master
// nobody demotes; sentinels only learn replicas the master lists. That is
// why it is off by default: set it well above any outage after which a
// node is expected to come back at its address (minutes), in deployments
// where addresses change (containers, Kubernetes pods).

// forgetGone applies the forget rule to m's replicas and sentinels.
func (c *Core) forgetGone(m *instance) {
	if m.forgetAfter <= 0 || m.removed || m.flags&fFailoverInProgress != 0 {
		return
	}
	maddr := c.currentMasterAddr(m)
	forgot := false
	for _, r := range sortedInstances(m.replicas) {
		if !c.gone(r, m.forgetAfter) || addrEqual(r.addr, maddr) || (m.ack.n > 0 && r.ackMember) {
			continue
		}
		c.event(LevelWarning, "-slave", r, "%@ #unreachable for %d ms", c.now-r.link.lastAvail)
		delete(m.replicas, r.name)
		c.releaseInstance(r)
		forgot = true
	}
	for _, s := range sortedInstances(m.sentinels) {
		if !c.gone(s, m.forgetAfter) {
			continue
		}
		c.event(LevelWarning, "-sentinel", s, "%@ #unreachable for %d ms", c.now-s.link.lastAvail)
		delete(m.sentinels, s.name)
		c.releaseInstance(s)
		forgot = true
	}
	if forgot {
		c.flushConfig()
	}
}

// gone: SDOWN, and no valid PING reply for more than after ms.
func (c *Core) gone(ri *instance, after int64) bool {
	return ri.flags&fSDown != 0 && c.now-ri.link.lastAvail > after
}
