package sentinel

import (
	"math/rand"
	"strings"
)

// Options configure a Core.
type Options struct {
	// Port is this sentinel's announced port when announce-port is 0 (the
	// shell passes tls-port instead when tls-replication is on).
	Port int
	// Tunables; the zero value means DefaultTunables().
	Tunables *Tunables
	// RequirePass tells that requirepass is set: links to other sentinels
	// then begin with an AUTH when sentinel-pass is not set
	// (sentinelSendAuthIfNeeded), which counts as a pending command.
	RequirePass bool
	// Resolve resolves a host name as createSentinelAddr's anetResolve does
	// with resolve-hostnames on (the first address getaddrinfo gives). It is
	// the one lookup the core makes; nil resolves numeric hosts only.
	Resolve func(host string) (ip string, ok bool)
}

// Core is the pure failover core of one sentinel: per-master state, the
// global current epoch, votes, TILT and the failover state machine of
// sentinel.c. It does no I/O, reads no clock (time is the unix-ms `now`
// passed to Step) and draws randomness only from the *rand.Rand given to New.
// It is not safe for concurrent use.
type Core struct {
	rng         *rand.Rand
	tun         Tunables
	port        int
	requirePass bool
	resolve     func(string) (string, bool)

	myID         string
	currentEpoch uint64
	masters      map[string]*instance
	instances    map[uint64]*instance
	links        map[uint64]*link
	nextID       uint64

	tilt         bool
	tiltStart    int64
	previousTime int64
	started      bool
	crashed      bool

	announceIP          string
	announcePort        int
	denyScriptsReconfig bool
	sentinelUser        string
	sentinelPass        string
	resolveHostnames    bool
	announceHostnames   bool
	simCrashElection    bool
	simCrashPromotion   bool

	timeline *Timeline // failover history (timeline.go), made on first use

	// Per-Step scratch.
	now   int64
	out   []Action
	flush bool
	// late: actions that go after the Step's RewriteConfig (SendAckSeen).
	late []Action
}

// New returns a Core with no masters. Deliver ConfigLoaded first.
func New(opts Options, rng *rand.Rand) *Core {
	t := DefaultTunables()
	if opts.Tunables != nil {
		t = *opts.Tunables
	}
	return &Core{
		rng:                 rng,
		tun:                 t,
		port:                opts.Port,
		requirePass:         opts.RequirePass,
		resolve:             opts.Resolve,
		masters:             map[string]*instance{},
		instances:           map[uint64]*instance{},
		links:               map[uint64]*link{},
		denyScriptsReconfig: true,
	}
}

func (c *Core) emit(a Action) { c.out = append(c.out, a) }

// flushConfig is sentinelFlushConfig: one RewriteConfig per Step, emitted
// before the Step's Reply.
func (c *Core) flushConfig() { c.flush = true }

// TickDelay returns the delay in ms before the next Ticked: sentinelTimer
// re-randomises hz to 10..19 every run so sentinels do not stay in lockstep.
func (c *Core) TickDelay() int64 { return 1000 / int64(10+c.rng.Intn(10)) }

func (c *Core) generateID() {
	const hex = "0123456789abcdef"
	b := make([]byte, RunIDSize)
	for i := range b {
		b[i] = hex[c.rng.Intn(16)]
	}
	c.myID = string(b)
	c.flushConfig()
}

// Step applies one event at time now (unix milliseconds) and returns the
// actions to execute, in order.
func (c *Core) Step(now int64, ev Event) []Action {
	if c.crashed {
		return nil
	}
	c.now = now
	c.out = nil
	c.late = nil
	c.flush = false
	if !c.started {
		c.started = true
		c.previousTime = now
	}
	var reply Action
	switch e := ev.(type) {
	case ConfigLoaded:
		reply = c.onConfigLoaded(e)
	case Ticked:
		if c.myID == "" {
			c.generateID()
		}
		c.tick()
	case LinkConnected:
		c.onLinkConnected(e)
	case LinkLocalIP:
		if l := c.links[e.Instance.Link]; l != nil && l.cc != connNone && e.LocalIP != "" {
			l.localIP = e.LocalIP
		}
	case LinkDisconnected:
		c.onLinkDisconnected(e)
	case PingReplied:
		c.onPingReplied(e)
	case InfoReceived:
		c.onInfo(e)
	case HelloReceived:
		c.onHello(e)
	case PublishReplied:
		if ri := c.replyTarget(e.Instance); ri != nil && e.OK {
			ri.lastPubTime = c.now
		}
	case IsMasterDownReplied:
		c.onIsMasterDownReplied(e)
	case PreludeReplied:
		c.onPreludeReplied(e)
	case CommandReplied:
		if ri := c.replyTarget(e.Instance); ri != nil {
			c.eagerAfterCommand(ri)
		}
	case IsMasterDownAsked:
		reply = c.onIsMasterDownAsked(e)
	case MonitorRequested:
		reply = c.onMonitor(e)
	case RemoveRequested:
		reply = c.onRemove(e)
	case SetRequested:
		reply = c.onSet(e)
	case ResetRequested:
		reply = Reply{Kind: ReplyInteger, Int: int64(c.resetByPattern(e.Pattern))}
	case FailoverRequested:
		reply = c.onFailoverRequested(e)
	case FailoverReplied:
		c.onFailoverReplied(e)
	case ConfigSetRequested:
		reply = c.onConfigSet(e)
	case DebugRequested:
		reply = c.onDebug(e)
	case FlushConfigRequested:
		c.flushConfig()
		reply = Reply{Kind: ReplyOK}
	case SimulateFailureRequested:
		c.simCrashElection = false
		c.simCrashPromotion = false
		for _, f := range e.Flags {
			switch f {
			case SimCrashAfterElection:
				c.simCrashElection = true
				c.emit(Log{Level: LevelWarning, Message: "Failure simulation: this Sentinel will crash after being successfully elected as failover leader"})
			case SimCrashAfterPromotion:
				c.simCrashPromotion = true
				c.emit(Log{Level: LevelWarning, Message: "Failure simulation: this Sentinel will crash after promoting the selected replica to master"})
			}
		}
		reply = Reply{Kind: ReplyOK}
	}
	out := c.out
	if c.crashed {
		return out
	}
	if c.flush {
		out = append(out, RewriteConfig{})
	}
	out = append(out, c.late...)
	c.late = nil
	if reply != nil {
		out = append(out, reply)
	}
	c.out = nil
	return out
}

func (c *Core) crash(reason string) {
	c.emit(Crash{Reason: reason})
	c.crashed = true
}

func (c *Core) onConfigLoaded(e ConfigLoaded) Action {
	if err := c.loadConfig(e.Config); err != "" {
		return Reply{Kind: ReplyError, Text: "ERR " + err}
	}
	if c.myID == "" {
		c.generateID()
	}
	for _, m := range c.sortedMasters() {
		c.event(LevelWarning, "+monitor", m, "%@ quorum %d", m.quorum)
	}
	return Reply{Kind: ReplyOK}
}

// tick is sentinelTimer: TILT check, then every master, its replicas and its
// sentinels, then the switch of a master that reached UPDATE_CONFIG.
func (c *Core) tick() {
	c.checkTilt()
	var switchTo *instance
	for _, m := range c.sortedMasters() {
		if m.removed || c.crashed {
			continue
		}
		c.handleInstance(m)
		for _, r := range sortedInstances(m.replicas) {
			if !r.removed && !c.crashed {
				c.handleInstance(r)
			}
		}
		for _, s := range sortedInstances(m.sentinels) {
			if !s.removed && !c.crashed {
				c.handleInstance(s)
			}
		}
		if !c.tilt && !c.crashed {
			c.forgetGone(m) // forget.go
		}
		if m.failoverState == UpdateConfig {
			switchTo = m
		}
	}
	if switchTo != nil && !switchTo.removed && !c.crashed {
		c.switchToPromoted(switchTo)
	}
}

// checkTilt is sentinelCheckTiltCondition.
func (c *Core) checkTilt() {
	delta := c.now - c.previousTime
	if delta < 0 || delta > c.tun.TiltTrigger {
		c.tilt = true
		c.tiltStart = c.now
		c.event(LevelWarning, "+tilt", nil, "#tilt mode entered")
	}
	c.previousTime = c.now
}

// handleInstance is sentinelHandleRedisInstance.
func (c *Core) handleInstance(ri *instance) {
	c.reconnect(ri)
	c.sendPeriodicCommands(ri)
	if c.tilt {
		if c.now-c.tiltStart < c.tun.TiltPeriod {
			return
		}
		c.tilt = false
		c.event(LevelWarning, "-tilt", nil, "#tilt mode exited")
	}
	justDown := c.checkSDown(ri)
	if ri.flags&fMaster != 0 {
		if justDown {
			c.ackAskReplicas(ri)
		}
		c.checkODown(ri)
		c.ackGate(ri)
		if c.startFailoverIfNeeded(ri) {
			c.askMasterState(ri, true)
		}
		c.failoverStateMachine(ri)
		c.askMasterState(ri, justDown && c.tun.AskOnSDown)
	}
}

// reconnect is sentinelReconnectInstance: ask for the missing connections at
// most once per ping period. Port 0 means never connect.
func (c *Core) reconnect(ri *instance) {
	l := ri.link
	if !l.disconnected() || ri.addr.Port == 0 {
		return
	}
	if c.now-l.lastReconn < c.tun.PingPeriod {
		return
	}
	l.lastReconn = c.now
	needCmd := l.cc == connNone
	needPub := !l.sentinel && l.pc == connNone
	if !needCmd && !needPub {
		return
	}
	prelude := 1 // CLIENT SETNAME
	if _, pass := c.Auth(c.ref(ri)); pass != "" || (l.sentinel && c.requirePass) {
		prelude++ // AUTH
	}
	if needCmd {
		l.cc = connPending
		l.pending = prelude
		l.ccPrelude = prelude
		l.ccConnTime = c.now
	}
	if needPub {
		l.pc = connPending
		l.pending += prelude
		l.pcPrelude = prelude
		l.pcConnTime = c.now
	}
	c.emit(Connect{Instance: c.ref(ri), Cmd: needCmd, PubSub: needPub})
	if needCmd {
		// "Send a PING ASAP when reconnecting": queued on the connection
		// being opened, so the ping timers start now even if it never
		// completes.
		c.sendPing(ri)
	}
}

// sendPeriodicCommands is sentinelSendPeriodicCommands.
func (c *Core) sendPeriodicCommands(ri *instance) {
	l := ri.link
	if l.disconnected() {
		return
	}
	if l.pending >= MaxPendingCommands*l.refcount {
		return
	}
	infoPeriod := c.tun.InfoPeriod
	if ri.flags&fSlave != 0 {
		m := ri.master
		if m.flags&(fODown|fFailoverInProgress) != 0 || ri.masterLinkDownTime != 0 {
			infoPeriod = ReplicaFastInfoPeriod
		}
		// Vigil (InfoOnReconnect): for down-after after the master's
		// +reboot its replicas are polled at the fast period, so one whose
		// empty-restart guard refuses the restarted master is seen within
		// a second (emptyrestart.go), not at the next 10 s INFO: its
		// whole-second master_link_down_since_seconds still reads 0.
		if c.tun.InfoOnReconnect && m.rebootSeen != 0 && c.now-m.rebootSeen < m.downAfter {
			infoPeriod = min(infoPeriod, ReplicaFastInfoPeriod)
		}
		// Vigil: watch the replica being promoted / reconfigured closely.
		if p := c.tun.PromotionInfoPeriod; p > 0 && p < infoPeriod && ri.flags&fPromoted != 0 &&
			m.flags&fFailoverInProgress != 0 && (m.failoverState == SendReplicaOfNoOne || m.failoverState == WaitPromotion) {
			infoPeriod = p
		}
		if p := c.tun.ReconfInfoPeriod; p > 0 && p < infoPeriod && ri.flags&(fReconfSent|fReconfInprog) != 0 {
			infoPeriod = p
		}
	}
	// Vigil: watch the master handing over in a coordinated failover.
	if ri.flags&fMaster != 0 && ri.coord.sent && ri.failoverState == WaitPromotion {
		p := c.tun.PromotionInfoPeriod
		if p <= 0 {
			p = ReplicaFastInfoPeriod
		}
		if p < infoPeriod {
			infoPeriod = p
		}
	}
	pingPeriod := ri.downAfter
	if pingPeriod > c.tun.PingPeriod {
		pingPeriod = c.tun.PingPeriod
	}
	if ri.flags&fSentinel == 0 && (ri.infoRefresh == 0 || ri.infoAsap || c.now-ri.infoRefresh > infoPeriod) {
		ri.infoAsap = false
		l.pending++
		c.emit(SendInfo{Instance: c.ref(ri)})
	}
	if c.now-l.lastPong > pingPeriod && c.now-l.lastPing > pingPeriod/2 {
		c.sendPing(ri)
	}
	if c.now-ri.lastPubTime > c.tun.PublishPeriod {
		c.sendHello(ri)
	}
}

// sendPing is sentinelSendPing.
func (c *Core) sendPing(ri *instance) {
	l := ri.link
	l.pending++
	l.lastPing = c.now
	if l.actPing == 0 {
		l.actPing = l.lastPing
	}
	c.emit(SendPing{Instance: c.ref(ri)})
}

// replyTarget settles the pending count of the reply's link and returns the
// instance it answers, or nil when that instance no longer exists.
func (c *Core) replyTarget(r Ref) *instance {
	if l := c.links[r.Link]; l != nil && l.pending > 0 {
		l.pending--
	}
	ri := c.instances[r.ID]
	if ri == nil || ri.link.id != r.Link {
		return nil
	}
	return ri
}

func (c *Core) onLinkConnected(e LinkConnected) {
	l := c.links[e.Instance.Link]
	if l == nil {
		return
	}
	switch e.Conn {
	case ConnCmd:
		if l.cc != connPending {
			return
		}
		l.cc = connUp
		l.localIP = e.LocalIP
		// Vigil: a master's command link came back (it may have restarted
		// empty, emptyrestart.go): ask it for INFO at once rather than up
		// to INFO-PERIOD later; a new run_id then asks its replicas
		// (refreshInfo).
		if ri := c.instances[e.Instance.ID]; c.tun.InfoOnReconnect && ri != nil && ri.link == l && ri.flags&fMaster != 0 && ri.infoRefresh != 0 {
			ri.infoAsap = true
		}
	case ConnPubSub:
		if l.pc != connPending || l.sentinel {
			return
		}
		l.pc = connUp
		l.pcLastActivity = c.now
	}
}

func (c *Core) onLinkDisconnected(e LinkDisconnected) {
	l := c.links[e.Instance.Link]
	if l == nil {
		return
	}
	// instanceLinkConnectionError: the pending count is not reset (the next
	// reconnection does it); hiredis calls the callbacks of what was left
	// unanswered with no reply, and only AUTH/SETNAME's discard callback
	// settles its count then.
	switch e.Conn {
	case ConnCmd:
		l.cc = connNone
		l.pending -= l.ccPrelude
		l.ccPrelude = 0
	case ConnPubSub:
		l.pc = connNone
		l.pending -= l.pcPrelude
		l.pcPrelude = 0
	}
	if l.pending < 0 {
		l.pending = 0
	}
}

// onPreludeReplied settles one AUTH/SETNAME of a connection.
func (c *Core) onPreludeReplied(e PreludeReplied) {
	l := c.links[e.Instance.Link]
	if l == nil {
		return
	}
	p := &l.ccPrelude
	if e.Conn == ConnPubSub {
		p = &l.pcPrelude
	}
	if *p > 0 {
		*p--
		if l.pending > 0 {
			l.pending--
		}
	}
}

// onPingReplied is sentinelPingReplyCallback.
func (c *Core) onPingReplied(e PingReplied) {
	l := c.links[e.Instance.Link]
	ri := c.replyTarget(e.Instance)
	if l == nil {
		return
	}
	r := e.Reply
	if strings.HasPrefix(r, "PONG") || strings.HasPrefix(r, "LOADING") || strings.HasPrefix(r, "MASTERDOWN") {
		l.lastAvail = c.now
		l.availSeen = c.now
		l.actPing = 0
		if ri != nil && ri.flags&fMasterReboot != 0 && strings.HasPrefix(r, "PONG") {
			ri.flags &^= fMasterReboot
		}
	} else if ri != nil && strings.HasPrefix(r, "BUSY") && ri.flags&fSDown != 0 && ri.flags&fScriptKillSent == 0 {
		if l.cc != connNone {
			l.pending++
			c.emit(SendScriptKill{Instance: c.ref(ri)})
		}
		ri.flags |= fScriptKillSent
	}
	l.lastPong = c.now
}

// MapCommand returns the name to send for cmd to the instance, after the
// master's rename-command table (sentinelInstanceMapCommand).
func (c *Core) MapCommand(r Ref, cmd string) string {
	m := c.masters[r.Master]
	if m == nil {
		return cmd
	}
	if i := m.renamedIndex(cmd); i >= 0 {
		return m.renamed[i].Renamed
	}
	return cmd
}

// Auth returns the credentials for the instance's connections
// (sentinelSendAuthIfNeeded): the master's auth-user/auth-pass for masters and
// replicas, sentinel-user/sentinel-pass for sentinels. An empty pass for a
// sentinel means: use this sentinel's own requirepass (no user), if any.
func (c *Core) Auth(r Ref) (user, pass string) {
	if r.Kind == KindSentinel {
		if c.sentinelPass != "" {
			return c.sentinelUser, c.sentinelPass
		}
		return "", ""
	}
	m := c.masters[r.Master]
	if m == nil || m.authPass == "" {
		return "", ""
	}
	return m.authUser, m.authPass
}
