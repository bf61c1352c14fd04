package sentinel

import (
	"fmt"
	"strings"

	"github.com/vigil-kv/vigil/internal/redisutil"
)

func errReply(format string, args ...any) Reply {
	return Reply{Kind: ReplyError, Text: fmt.Sprintf(format, args...)}
}

const errNoSuchMaster = "ERR No such master with that name"

// onMonitor is SENTINEL MONITOR.
func (c *Core) onMonitor(e MonitorRequested) Action {
	if e.Quorum <= 0 {
		return errReply("ERR Quorum must be 1 or greater.")
	}
	// sentinelCommand's own anetResolve (no log line): a numeric host, or
	// with resolve-hostnames one that resolves.
	if c.resolveHost(e.IP) == "" {
		return errReply("ERR Invalid IP address or hostname specified")
	}
	m, err := c.createInstance(e.Name, fMaster, e.IP, e.Port, e.Quorum, nil)
	if err != "" {
		return errReply("ERR %s", err)
	}
	c.flushConfig()
	c.event(LevelWarning, "+monitor", m, "%@ quorum %d", m.quorum)
	return Reply{Kind: ReplyOK}
}

// onRemove is SENTINEL REMOVE.
func (c *Core) onRemove(e RemoveRequested) Action {
	m := c.masters[e.Name]
	if m == nil {
		return errReply(errNoSuchMaster)
	}
	c.event(LevelWarning, "-monitor", m, "%@")
	delete(c.masters, m.name)
	c.releaseInstance(m)
	c.flushConfig()
	return Reply{Kind: ReplyOK}
}

// resetByPattern is sentinelResetMastersByPattern (no config flush, as Redis).
func (c *Core) resetByPattern(pattern string) int {
	n := 0
	for _, m := range c.sortedMasters() {
		if redisutil.StringMatch(pattern, m.name, false) {
			c.resetMaster(m, false, true)
			n++
		}
	}
	return n
}

// onFailoverRequested is SENTINEL FAILOVER: a new epoch, no election.
func (c *Core) onFailoverRequested(e FailoverRequested) Action {
	m := c.masters[e.Name]
	if m == nil {
		return errReply(errNoSuchMaster)
	}
	if m.flags&fFailoverInProgress != 0 {
		return errReply("INPROG Failover already in progress")
	}
	if m.ack.n > 0 && !e.Coordinated {
		// Sync-ack mode (syncack.go): only a replica that proves it holds
		// every acknowledged write; a master still up keeps its replicas
		// linked, so none can: a COORDINATED failover is the way then.
		if v := c.ackVerdictFor(m); v.reason != "" {
			return errReply("NOGOODSLAVE No replica proves it holds every acknowledged write: %s", v.reason)
		}
	}
	if c.selectReplicaFor(m, e.Coordinated) == nil {
		return errReply("NOGOODSLAVE No suitable replica to promote")
	}
	if e.Coordinated && (m.flags&(fSDown|fODown) != 0 || m.link.disconnected()) {
		return errReply("NOGOODMASTER The master is down: a coordinated failover needs it up")
	}
	c.emit(Log{Level: LevelWarning, Message: "Executing user requested FAILOVER of '" + m.name + "'"})
	c.startFailover(m)
	m.flags |= fForceFailover
	m.coord.on = e.Coordinated
	return Reply{Kind: ReplyOK}
}

const errScriptsDenied = "ERR Reconfiguration of scripts path is denied for security reasons. " +
	"Check the deny-scripts-reconfig configuration directive in your Sentinel configuration"

// onSet is sentinelSetCommand: options are applied one by one; on an error
// the earlier ones stay applied (and are flushed), as in Redis.
func (c *Core) onSet(e SetRequested) Action {
	m := c.masters[e.Name]
	if m == nil {
		return errReply(errNoSuchMaster)
	}
	if len(e.Args) == 0 {
		return errReply("ERR wrong number of arguments for 'sentinel|set' command")
	}
	args := e.Args
	changes := 0
	fail := func(r Reply) Action {
		if changes > 0 {
			c.flushConfig()
		}
		return r
	}
	for j := 0; j < len(args); j++ {
		opt := args[j]
		more := len(args) - 1 - j
		old := j
		redacted := false
		badfmt := func(arg int) Action {
			return fail(errReply("ERR Invalid argument '%s' for SENTINEL SET '%s'", args[arg], opt))
		}
		switch o := strings.ToLower(opt); {
		case o == "down-after-milliseconds" && more > 0:
			j++
			v, ok := redisutil.String2ll(args[j])
			if !ok || v <= 0 {
				return badfmt(j)
			}
			m.downAfter = v
			c.propagateDownAfter(m)
		case o == "failover-timeout" && more > 0:
			j++
			v, ok := redisutil.String2ll(args[j])
			if !ok || v <= 0 {
				return badfmt(j)
			}
			m.failoverTimeout = v
		case o == "parallel-syncs" && more > 0:
			j++
			v, ok := redisutil.String2ll(args[j])
			if !ok || v <= 0 || v > 1<<31-1 {
				return badfmt(j)
			}
			m.parallelSyncs = int(v)
		case (o == "notification-script" || o == "client-reconfig-script") && more > 0:
			j++
			if c.denyScriptsReconfig {
				return fail(errReply(errScriptsDenied))
			}
			if o == "notification-script" {
				m.notificationScript = args[j]
			} else {
				m.clientReconfigScript = args[j]
			}
		case o == "auth-pass" && more > 0:
			j++
			m.authPass = args[j]
			c.dropInstanceConnections(m)
			redacted = true
		case o == "auth-user" && more > 0:
			j++
			m.authUser = args[j]
			c.dropInstanceConnections(m)
		case o == "quorum" && more > 0:
			j++
			v, ok := redisutil.String2ll(args[j])
			if !ok || v <= 0 || v > 1<<31-1 {
				return badfmt(j)
			}
			m.quorum = int(v)
		case o == "rename-command" && more > 1:
			oldName, newName := args[j+1], args[j+2]
			j += 2
			if oldName == "" || newName == "" {
				if newName != "" {
					return badfmt(j - 1)
				}
				return badfmt(j)
			}
			if i := m.renamedIndex(oldName); i >= 0 {
				m.renamed = append(m.renamed[:i], m.renamed[i+1:]...)
			}
			if !strings.EqualFold(oldName, newName) {
				m.renamed = append(m.renamed, Rename{oldName, newName})
			}
		case o == "master-reboot-down-after-period" && more > 0:
			j++
			v, ok := redisutil.String2ll(args[j])
			if !ok || v < 0 {
				return badfmt(j)
			}
			m.rebootDownAfter = v
		case o == "forget-after-milliseconds" && more > 0:
			// Vigil (forget.go): 0 turns the rule off.
			j++
			v, ok := redisutil.String2ll(args[j])
			if !ok || v < 0 {
				return badfmt(j)
			}
			m.forgetAfter = v
		default:
			return fail(errReply("ERR Unknown option or number of arguments for SENTINEL SET '%s'", opt))
		}
		changes++
		switch j - old + 1 {
		case 2:
			val := args[old+1]
			if redacted {
				val = "******"
			}
			c.event(LevelWarning, "+set", m, "%@ %s %s", args[old], val)
		case 3:
			c.event(LevelWarning, "+set", m, "%@ %s %s %s", args[old], args[old+1], args[old+2])
		default:
			c.event(LevelWarning, "+set", m, "%@ %s", args[old])
		}
	}
	c.flushConfig()
	return Reply{Kind: ReplyOK}
}

// dropInstanceConnections closes the links of a master and its replicas.
func (c *Core) dropInstanceConnections(m *instance) {
	c.closeConns(m, true, true)
	for _, r := range sortedInstances(m.replicas) {
		c.closeConns(r, true, true)
	}
}

func yesNo(s string) (bool, bool) {
	switch strings.ToLower(s) {
	case "yes":
		return true, true
	case "no":
		return false, true
	}
	return false, false
}

// onConfigSet is sentinelConfigSetCommand.
func (c *Core) onConfigSet(e ConfigSetRequested) Action {
	drop := false
	bad := func() Action {
		return errReply("ERR Invalid value '%s' to SENTINEL CONFIG SET '%s'", e.Value, e.Param)
	}
	switch strings.ToLower(e.Param) {
	case "resolve-hostnames":
		v, ok := yesNo(e.Value)
		if !ok {
			return bad()
		}
		c.resolveHostnames = v
	case "announce-hostnames":
		v, ok := yesNo(e.Value)
		if !ok {
			return bad()
		}
		c.announceHostnames = v
	case "announce-ip":
		c.announceIP = e.Value
	case "announce-port":
		v, ok := redisutil.String2ll(e.Value)
		if !ok || v < 0 || v > 65535 {
			return bad()
		}
		c.announcePort = int(v)
	case "sentinel-user":
		c.sentinelUser = e.Value
		drop = true
	case "sentinel-pass":
		c.sentinelPass = e.Value
		drop = true
	default:
		return errReply("ERR Invalid argument '%s' to SENTINEL CONFIG SET", e.Param)
	}
	c.flushConfig()
	if drop {
		for _, m := range c.sortedMasters() {
			for _, s := range sortedInstances(m.sentinels) {
				if !s.link.disconnected() {
					c.closeConns(s, true, true)
				}
			}
		}
	}
	return Reply{Kind: ReplyOK}
}

// ConfigGet is SENTINEL CONFIG GET pattern: the matching global parameters.
func (c *Core) ConfigGet(pattern string) []Field {
	yn := func(b bool) string {
		if b {
			return "yes"
		}
		return "no"
	}
	all := []Field{
		{"resolve-hostnames", yn(c.resolveHostnames)},
		{"announce-hostnames", yn(c.announceHostnames)},
		{"announce-ip", c.announceIP},
		{"announce-port", fmt.Sprint(c.announcePort)},
		{"sentinel-user", c.sentinelUser},
		{"sentinel-pass", c.sentinelPass},
	}
	var out []Field
	for _, f := range all {
		if redisutil.StringMatch(pattern, f.Name, true) {
			out = append(out, f)
		}
	}
	return out
}

// onDebug is sentinelSetDebugConfigParameters.
func (c *Core) onDebug(e DebugRequested) Action {
	args := e.Args
	for j := 0; j < len(args); j++ {
		opt := args[j]
		var p *debugParam
		for i := range debugParams {
			if strings.EqualFold(debugParams[i].name, opt) {
				p = &debugParams[i]
			}
		}
		if p == nil || j+1 >= len(args) {
			return errReply("ERR Unknown option or number of arguments for SENTINEL DEBUG '%s'", opt)
		}
		j++
		v, ok := redisutil.String2ll(args[j])
		if !ok || v <= 0 {
			return errReply("ERR Invalid argument '%s' for SENTINEL DEBUG '%s'", args[j], opt)
		}
		*p.ptr(&c.tun) = v
	}
	return Reply{Kind: ReplyOK}
}
