package daemon

import (
	"strconv"
	"strings"
	"syscall"

	"github.com/vigil-kv/vigil/internal/netshell"
	"github.com/vigil-kv/vigil/internal/redisutil"
	"github.com/vigil-kv/vigil/sentinel"
)

func sentinelSubcommands() []*command {
	acl := []string{"admin", "slow", "dangerous"}
	s := func(name string, arity int, h handler) *command {
		return &command{Name: name, Arity: arity, Flags: netshell.FlagAdmin, ACL: acl, Handler: h}
	}
	return []*command{
		s("ckquorum", 3, sCKQuorum),
		s("config", -3, sConfig),
		s("debug", -2, sDebug),
		s("failover", -3, sFailover),
		s("flushconfig", 2, func(c *client, a [][]byte) { c.coreReply(sentinel.FlushConfigRequested{}) }),
		s("get-master-addr-by-name", 3, sGetMasterAddr),
		{Name: "help", Arity: 2, Flags: netshell.FlagLoading | netshell.FlagStale, ACL: []string{"slow"}, Handler: func(c *client, _ [][]byte) { c.help("SENTINEL", sentinelHelp) }},
		s("info-cache", -3, sInfoCache),
		s("is-master-down-by-addr", 6, sIsMasterDown),
		s("master", 3, sMaster),
		s("masters", 2, sMasters),
		s("monitor", 6, sMonitor),
		s("myid", 2, func(c *client, _ [][]byte) { c.w.BulkString(c.d.MyID()) }),
		s("pending-scripts", 2, sPendingScripts),
		s("remove", 3, func(c *client, a [][]byte) { c.coreReply(sentinel.RemoveRequested{Name: string(a[2])}) }),
		s("replicas", 3, sReplicas),
		s("reset", 3, func(c *client, a [][]byte) { c.coreReply(sentinel.ResetRequested{Pattern: string(a[2])}) }),
		s("sentinels", 3, sSentinels),
		s("set", -5, sSet),
		s("simulate-failure", -3, sSimulateFailure),
		s("slaves", 3, sReplicas),
		s("timeline", 3, sTimeline),
	}
}

// sFailover is SENTINEL FAILOVER <master-name> [COORDINATED]. COORDINATED
// is Vigil's: the hand-over goes through the master's FAILOVER command (see
// sentinel/coordinated.go). Any other extra argument gets the arity error
// redis-sentinel gives.
func sFailover(c *client, a [][]byte) {
	coordinated := len(a) == 4 && strings.EqualFold(string(a[3]), "coordinated")
	if len(a) > 3 && !coordinated {
		c.w.Error("ERR wrong number of arguments for 'sentinel|failover' command")
		return
	}
	c.coreReply(sentinel.FailoverRequested{Name: string(a[2]), Coordinated: coordinated})
}

// coreReply delivers a request event and writes the core's reply.
func (c *client) coreReply(ev sentinel.Event) {
	var reply sentinel.Action
	if !c.d.call(func() { reply = c.d.step(ev) }) {
		c.w.Error("ERR shutting down")
		return
	}
	c.writeAction(reply)
}

func (c *client) writeAction(a sentinel.Action) {
	switch r := a.(type) {
	case sentinel.Reply:
		switch r.Kind {
		case sentinel.ReplyOK:
			c.w.OK()
		case sentinel.ReplyError:
			c.w.Error(r.Text)
		case sentinel.ReplyInteger:
			c.w.Int(r.Int)
		}
	case sentinel.MasterDownReply:
		c.w.ArrayLen(3)
		if r.Down {
			c.w.Int(1)
		} else {
			c.w.Int(0)
		}
		c.w.BulkString(r.Leader)
		c.w.Int(int64(r.LeaderEpoch))
	default:
		c.w.OK()
	}
}

func (c *client) writeFields(f []sentinel.Field) {
	c.w.MapLen(len(f))
	for _, x := range f {
		c.w.BulkString(x.Name)
		c.w.BulkString(x.Value)
	}
}

func sMasters(c *client, _ [][]byte) {
	var ms [][]sentinel.Field
	c.d.call(func() { ms = c.d.core.Masters(nowMs()) })
	c.w.ArrayLen(len(ms))
	for _, m := range ms {
		c.writeFields(m)
	}
}

func sMaster(c *client, a [][]byte) {
	var f []sentinel.Field
	ok := false
	name := string(a[2])
	c.d.call(func() { f, ok = c.d.core.Master(nowMs(), name) })
	if !ok {
		c.w.Error(errNoSuchMaster)
		return
	}
	c.writeFields(f)
}

func (c *client) writeInstances(list [][]sentinel.Field, ok bool) {
	if !ok {
		c.w.Error(errNoSuchMaster)
		return
	}
	c.w.ArrayLen(len(list))
	for _, f := range list {
		c.writeFields(f)
	}
}

func sReplicas(c *client, a [][]byte) {
	var list [][]sentinel.Field
	ok := false
	name := string(a[2])
	c.d.call(func() { list, ok = c.d.core.Replicas(nowMs(), name) })
	c.writeInstances(list, ok)
}

func sSentinels(c *client, a [][]byte) {
	var list [][]sentinel.Field
	ok := false
	name := string(a[2])
	c.d.call(func() { list, ok = c.d.core.Sentinels(nowMs(), name) })
	c.writeInstances(list, ok)
}

func sGetMasterAddr(c *client, a [][]byte) {
	var addr sentinel.Addr
	ok := false
	name := string(a[2])
	c.d.call(func() { addr, ok = c.d.core.MasterAddr(name) })
	if !ok {
		c.w.NullArray()
		return
	}
	c.w.ArrayLen(2)
	c.w.BulkString(addr.IP)
	c.w.BulkString(strconv.Itoa(addr.Port))
}

func sCKQuorum(c *client, a [][]byte) {
	var text string
	var ok, found bool
	name := string(a[2])
	c.d.call(func() { text, ok, found = c.d.core.CKQuorum(name) })
	switch {
	case !found:
		c.w.Error(errNoSuchMaster)
	case ok:
		c.w.Simple(text)
	default:
		c.w.Error(text)
	}
}

// getLong is getLongFromObjectOrReply's parse (string2l).
func getLong(b []byte) (int64, bool) { return redisutil.String2ll(b) }

func sMonitor(c *client, a [][]byte) {
	quorum, ok := getLong(a[5])
	if !ok {
		c.w.Error("ERR Invalid quorum")
		return
	}
	port, ok := getLong(a[4])
	if !ok {
		c.w.Error("ERR Invalid port")
		return
	}
	if quorum <= 0 {
		c.w.Error("ERR Quorum must be 1 or greater.")
		return
	}
	if port < 0 || port > 65535 {
		c.w.Error("ERR Invalid port number.")
		return
	}
	if quorum > 1<<31-1 {
		quorum = 1<<31 - 1
	}
	c.coreReply(sentinel.MonitorRequested{Name: string(a[2]), IP: string(a[3]), Port: int(port), Quorum: int(quorum)})
}

func sIsMasterDown(c *client, a [][]byte) {
	port, ok := getLong(a[3])
	if !ok {
		c.w.Error(errNotInteger)
		return
	}
	epoch, ok := getLong(a[4])
	if !ok {
		c.w.Error(errNotInteger)
		return
	}
	c.coreReply(sentinel.IsMasterDownAsked{IP: string(a[2]), Port: int(port), Epoch: uint64(epoch), RunID: string(a[5])})
}

// sSet checks script paths (access X_OK) before the core applies the
// options, as sentinelSetCommand does.
func sSet(c *client, a [][]byte) {
	args := strs(a[3:])
	for j := 0; j+1 < len(args); j++ {
		opt := strings.ToLower(args[j])
		if opt == "notification-script" || opt == "client-reconfig-script" {
			path := args[j+1]
			var deny bool
			c.d.call(func() { deny = c.d.core.Config().DenyScriptsReconfig })
			if !deny && path != "" && syscall.Access(path, 1) != nil {
				if opt == "notification-script" {
					c.w.Error("ERR Notification script seems non existing or non executable")
				} else {
					c.w.Error("ERR Client reconfiguration script seems non existing or non executable")
				}
				return
			}
		}
	}
	c.coreReply(sentinel.SetRequested{Name: string(a[2]), Args: args})
}

// sSimulateFailure follows sentinelCommand: the flags are cleared first, and
// each known argument sets its flag and logs a line, in order, up to a HELP
// (array reply) or an unknown argument (error); the flags set before either
// stay set.
func sSimulateFailure(c *client, a [][]byte) {
	ev := sentinel.SimulateFailureRequested{}
	stop := ""
	for _, x := range a[2:] {
		f := strings.ToLower(string(x))
		if f == sentinel.SimCrashAfterElection || f == sentinel.SimCrashAfterPromotion {
			ev.Flags = append(ev.Flags, f)
			continue
		}
		stop = f
		break
	}
	if stop == "" {
		c.coreReply(ev)
		return
	}
	if !c.d.call(func() { c.d.step(ev) }) {
		c.w.Error("ERR shutting down")
		return
	}
	if stop == "help" {
		c.w.ArrayLen(2)
		c.w.BulkString(sentinel.SimCrashAfterElection)
		c.w.BulkString(sentinel.SimCrashAfterPromotion)
		return
	}
	c.w.Error(errUnknownSimFail)
}

func sDebug(c *client, a [][]byte) {
	if len(a) == 2 {
		var f []sentinel.Field
		c.d.call(func() { f = c.d.core.Debug() })
		c.w.MapLen(len(f))
		for _, x := range f {
			c.w.BulkString(x.Name)
			c.w.BulkString(x.Value)
		}
		return
	}
	c.coreReply(sentinel.DebugRequested{Args: strs(a[2:])})
}

func sConfig(c *client, a [][]byte) {
	switch {
	case len(a) == 4 && redisutil.EqFold(a[2], "get"):
		var f []sentinel.Field
		param := string(a[3])
		c.d.call(func() { f = c.d.core.ConfigGet(param) })
		// Vigil's metrics-port (internal/metrics) is a directive of the
		// process, not of the core: shown when asked by its name only,
		// so that "*" lists what redis-sentinel lists. SET refuses it
		// (the core knows no such parameter): it is read at startup.
		if strings.EqualFold(param, "metrics-port") {
			f = append(f, sentinel.Field{Name: "metrics-port", Value: strconv.Itoa(c.d.st.Server.MetricsPort)})
		}
		c.writeFields(f)
	case len(a) == 5 && redisutil.EqFold(a[2], "set"):
		c.coreReply(sentinel.ConfigSetRequested{Param: string(a[3]), Value: string(a[4])})
	default:
		c.w.Error(errConfigUsage)
	}
}

func sInfoCache(c *client, a [][]byte) {
	var ms []sentinel.InfoCacheMaster
	names := strs(a[2:])
	c.d.call(func() { ms = c.d.core.InfoCache(nowMs(), names) })
	c.w.ArrayLen(2 * len(ms))
	for _, m := range ms {
		c.w.BulkString(m.Name)
		c.w.ArrayLen(len(m.Entries))
		for _, e := range m.Entries {
			c.w.ArrayLen(2)
			c.w.Int(e.AgeMs)
			if e.HasInfo {
				c.w.BulkString(e.Info)
			} else {
				c.w.Null()
			}
		}
	}
}

func sPendingScripts(c *client, _ [][]byte) {
	var jobs []scriptInfo
	c.d.call(func() { jobs = c.d.scripts.pending(nowMs()) })
	c.w.ArrayLen(len(jobs))
	for _, j := range jobs {
		c.w.MapLen(5)
		c.w.BulkString("argv")
		c.w.ArrayLen(len(j.argv))
		for _, x := range j.argv {
			c.w.BulkString(x)
		}
		c.w.BulkString("flags")
		if j.running {
			c.w.BulkString("running")
		} else {
			c.w.BulkString("scheduled")
		}
		c.w.BulkString("pid")
		c.w.BulkString(strconv.Itoa(j.pid))
		if j.running {
			c.w.BulkString("run-time")
		} else {
			c.w.BulkString("run-delay")
		}
		c.w.BulkString(strconv.FormatInt(j.ms, 10))
		c.w.BulkString("retry-num")
		c.w.BulkString(strconv.Itoa(j.retry))
	}
}
