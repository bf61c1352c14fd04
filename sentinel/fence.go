package sentinel

import "strings"

// Fencing (Vigil; docs/safety.md "Fencing a deposed master"): when
// vigil-sentinel reconfigures a vigil-server (the SLAVEOF transaction), it
// stamps the server with the config epoch of the configuration it imposes
// (CONFIG SET master-config-epoch E, before CONFIG REWRITE so the file
// keeps it). redis-server has no such directive: an unknown CONFIG
// parameter fails at run time inside MULTI, so the stamp is sent only to
// instances whose last INFO carried vigil_version. Every other server
// (redis-server, or a vigil-server reconfigured by redis-sentinel) learns
// the epoch from the hellos the sentinels publish to it.

// StampEpoch returns the config epoch to stamp on the instance r is about
// to be reconfigured by a SendReplicaOf, and whether to stamp it (the
// instance is a vigil-server). The epoch is the larger of its master's
// config epoch and failover epoch: during a failover the promotion and the
// replicas' reconfiguration run at the failover epoch, which becomes the
// config epoch once the promoted replica reports its new role; otherwise
// (a replica pointed at the wrong master) the config epoch is current. An
// aborted failover leaves a failover epoch above the config epoch: stamping
// it is safe, every later failover takes a higher epoch.
func (c *Core) StampEpoch(r Ref) (uint64, bool) {
	ri := c.instances[r.ID]
	if ri == nil || !ri.hasInfo || !strings.Contains(ri.info, "\r\nvigil_version:") {
		return 0, false
	}
	m := ri
	if ri.master != nil {
		m = ri.master
	}
	return max(m.configEpoch, m.failoverEpoch), true
}
