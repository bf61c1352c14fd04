package sentinel

// The empty-restart rule (Vigil; issue 23, redis/redis#2087). A master that
// restarts without its files sooner than down-after answers PING and would
// never be SDOWN, while its replicas, whose empty-restart guard refuses its
// empty full sync (vigil-server's replica-refuse-empty-sync), hold the only
// copy of the data. The master is counted down when:
//   - it is a master that reports role:master,
//   - and at least one of its replicas, connected and not SDOWN, with an
//     INFO reply younger than 3 INFO periods, reports role:slave following
//     this master's address and master_sync_refused_empty:1.
//
// The replica's guard already established that the master restarted
// without its data (a new replication ID and an empty dataset, or one that
// began empty at its restart: vigil-server's vigil-fresh-start); the master
// usually holds keys by then, written by clients since its restart, so its
// keyspace is not consulted.
//
// Every sentinel sees the same INFO, so each turns the master SDOWN, answers
// IS-MASTER-DOWN-BY-ADDR with "down", and the normal ODOWN, election and
// failover follow; the refusing replicas are promotable (their link went
// down when the master died, within the usual master_link_down_time bound).
// The flag shows as empty_restart on the master (and refused_empty on the
// replicas) in SENTINEL MASTERS/REPLICAS, with the events +empty-restart
// and -empty-restart.

// checkEmptyRestart updates fEmptyRestart on a master and reports whether it
// is set.
func (c *Core) checkEmptyRestart(m *instance) bool {
	on := false
	if m.flags&fMaster != 0 && m.roleReported == fMaster && m.hasInfo {
		for _, r := range sortedInstances(m.replicas) {
			if r.slaveRefusedEmpty && r.roleReported == fSlave && r.flags&fSDown == 0 && !r.link.disconnected() &&
				c.now-r.infoRefresh < c.tun.InfoPeriod*3 &&
				r.hasSlaveMasterHost && c.addrEqualsHost(m.addr, r.slaveMasterHost) && r.slaveMasterPort == m.addr.Port {
				on = true
				break
			}
		}
	}
	if on && m.flags&fEmptyRestart == 0 {
		m.flags |= fEmptyRestart
		c.event(LevelWarning, "+empty-restart", m, "%@")
	} else if !on && m.flags&fEmptyRestart != 0 {
		m.flags &^= fEmptyRestart
		c.event(LevelWarning, "-empty-restart", m, "%@")
	}
	return on
}
