package sentinel

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// RunIDSize is CONFIG_RUN_ID_SIZE: run ids and sentinel ids are 40 chars.
const RunIDSize = 40

// flag is sentinel.c's SRI_* bit set. "disconnected" is a property of the link.
type flag uint32

const (
	fMaster flag = 1 << iota
	fSlave
	fSentinel
	fSDown
	fODown
	fMasterDown
	fFailoverInProgress
	fPromoted
	fReconfSent
	fReconfInprog
	fReconfDone
	fForceFailover
	fScriptKillSent
	fMasterReboot
	// fEmptyRestart (Vigil): a master whose replicas refuse its empty
	// full sync (their empty-restart guard holds, INFO
	// master_sync_refused_empty:1) while it reports no keys: it restarted
	// without its data, and checkSDown counts it down (emptyrestart.go).
	fEmptyRestart
)

type connState uint8

const (
	connNone    connState = iota // no connection (cc/pc == NULL)
	connPending                  // Connect emitted, not yet established
	connUp
)

// link is sentinel.c's instanceLink: the connection pair and the failure
// detection timers, shared by all instances of the same sentinel run id.
type link struct {
	id       uint64
	sentinel bool // sentinel links have no pub/sub connection
	addr     Addr
	refcount int

	cc, pc         connState
	pending        int   // pending_commands
	ccPrelude      int   // AUTH/SETNAME of cc not answered yet (counted in pending)
	pcPrelude      int   // AUTH/SETNAME of pc not answered yet (counted in pending)
	ccConnTime     int64 // cc_conn_time
	pcConnTime     int64 // pc_conn_time
	pcLastActivity int64 // pc_last_activity
	lastAvail      int64 // last_avail_time: last valid PING reply
	// availSeen is the time of the last valid PING reply actually
	// received (lastAvail also starts at the link's creation and at a
	// master reset); 0: none yet (syncack.go).
	availSeen  int64
	actPing    int64 // act_ping_time: oldest unanswered PING, 0 if none
	lastPing   int64 // last_ping_time
	lastPong   int64 // last_pong_time: last reply of any kind
	lastReconn int64 // last_reconn_time
	localIP    string
}

// disconnected is link->disconnected: not both connections (or just the
// command connection for sentinels) present. A connection being opened is
// present: sentinelReconnectInstance clears the flag as soon as the hiredis
// contexts exist, and commands sent meanwhile wait in them.
func (l *link) disconnected() bool {
	return l.cc == connNone || (!l.sentinel && l.pc == connNone)
}

// instance is sentinelRedisInstance.
type instance struct {
	id          uint64
	flags       flag
	name        string
	runID       string
	configEpoch uint64
	addr        Addr
	link        *link
	removed     bool

	lastPubTime             int64
	lastHelloTime           int64
	lastMasterDownReplyTime int64
	sdownSince              int64
	odownSince              int64
	downAfter               int64
	rebootDownAfter         int64
	rebootSince             int64
	rebootSeen              int64 // Vigil: when +reboot was last seen (InfoOnReconnect)
	infoRefresh             int64
	// infoAsap (Vigil): send INFO on the next tick (a master's command
	// link reconnected, see onLinkConnected).
	infoAsap bool
	info     string
	hasInfo  bool
	renamed  []Rename

	roleReported        flag // fMaster, fSlave or 0
	roleReportedTime    int64
	slaveConfChangeTime int64

	// Master specific.
	sentinels     map[string]*instance // by run id
	replicas      map[string]*instance // by ip:port
	quorum        int
	parallelSyncs int
	authPass      string
	authUser      string
	// forgetAfter (Vigil, forget.go): forget-after-milliseconds, 0 = never.
	forgetAfter int64

	// Replica specific.
	masterLinkDownTime  int64
	slavePriority       int
	replicaAnnounced    int
	slaveReconfSentTime int64
	master              *instance
	slaveMasterHost     string
	hasSlaveMasterHost  bool
	slaveMasterPort     int
	slaveMasterLinkUp   bool
	slaveReplOffset     uint64
	// slaveRefusedEmpty: the last INFO said master_sync_refused_empty:1.
	slaveRefusedEmpty bool
	// replID is the master_replid of the last INFO (syncack.go).
	replID string
	// ackMember: the replica was seen following its master, so it may
	// have acknowledged writes in sync-ack mode (syncack.go).
	ackMember bool

	// Failover. For a sentinel instance, leader/leaderEpoch is its vote.
	leader                  string
	leaderEpoch             uint64
	failoverEpoch           uint64
	failoverState           FailoverState
	failoverStateChangeTime int64
	failoverStartTime       int64
	failoverDelayLogged     int64 // failoverStartTime whose delay was logged
	failoverTimeout         int64
	promoted                *instance
	coord                   coordState // coordinated failover (Vigil)
	ack                     ackState   // sync-ack mode (Vigil, syncack.go)

	notificationScript   string
	clientReconfigScript string
}

func (ri *instance) kind() Kind {
	switch {
	case ri.flags&fMaster != 0:
		return KindMaster
	case ri.flags&fSlave != 0:
		return KindReplica
	default:
		return KindSentinel
	}
}

// masterOf returns the master itself for a master, else its master.
func (ri *instance) masterOf() *instance {
	if ri.flags&fMaster != 0 {
		return ri
	}
	return ri.master
}

func (ri *instance) renamedIndex(cmd string) int {
	for i, r := range ri.renamed {
		if strings.EqualFold(r.Command, cmd) {
			return i
		}
	}
	return -1
}

func sortedInstances(m map[string]*instance) []*instance {
	out := make([]*instance, 0, len(m))
	for _, ri := range m {
		out = append(out, ri)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

func (c *Core) sortedMasters() []*instance { return sortedInstances(c.masters) }

// validAddr is createSentinelAddr's check: port in range and, unless
// resolve-hostnames is on, a numeric host as getaddrinfo's AI_NUMERICHOST
// takes it (parseIP). It returns the Redis error text.
func (c *Core) validAddr(host string, port int) string {
	if port < 0 || port > 65535 {
		return "Invalid port number."
	}
	if c.resolveHostnames {
		if host == "" {
			return "Can't resolve instance hostname."
		}
		return ""
	}
	if _, ok := parseIP(host); !ok {
		return "Can't resolve instance hostname."
	}
	return ""
}

// addrEqual is sentinelAddrIsEqual: the resolved addresses and the ports
// (the hosts as given when either was not resolved).
func addrEqual(a, b Addr) bool {
	return a.Port == b.Port && strings.EqualFold(a.key(), b.key())
}

// key is the address an Addr compares by.
func (a Addr) key() string {
	if a.Resolved != "" {
		return a.Resolved
	}
	return a.IP
}

// newAddr is createSentinelAddr: validAddr then makeAddr. A valid port with
// a host anetResolve cannot resolve (a host name without resolve-hostnames,
// or one the resolver fails on) logs Redis's warning, whether or not the
// caller then accepts the address unresolved.
func (c *Core) newAddr(host string, port int) (Addr, string) {
	e := c.validAddr(host, port)
	var a Addr
	if e == "" {
		a = c.makeAddr(host, port)
	}
	if port >= 0 && port <= 65535 && a.Resolved == "" {
		c.emit(Log{Level: LevelWarning, Message: fmt.Sprintf("Failed to resolve hostname '%s'", host)})
	}
	return a, e
}

// makeAddr is createSentinelAddr without its checks (validAddr): the host
// in its canonical form and, resolved, its address.
func (c *Core) makeAddr(host string, port int) Addr {
	host = canonicalHost(host)
	return Addr{IP: host, Port: port, Resolved: c.resolveHost(host)}
}

// resolveHost is anetResolve: a numeric host is its own address; a host
// name resolves through Options.Resolve with resolve-hostnames on.
func (c *Core) resolveHost(host string) string {
	if a, ok := parseIP(host); ok {
		return formatIP(a)
	}
	if c.resolveHostnames && c.resolve != nil && host != "" {
		if ip, ok := c.resolve(host); ok {
			return canonicalHost(ip)
		}
	}
	return ""
}

// announce is announceSentinelAddr: the host as given with
// announce-hostnames, else the resolved address (the host as given when it
// was not resolved).
func (c *Core) announce(a Addr) string {
	if c.announceHostnames || a.Resolved == "" {
		return a.IP
	}
	return a.Resolved
}

// announced is a with announce(a) as its IP.
func (c *Core) announced(a Addr) Addr {
	return Addr{IP: c.announce(a), Port: a.Port}
}

// addrEqualsHost is sentinelAddrEqualsHostname: host is "resolved" (here:
// parsed) and compared with a's IP.
func (c *Core) addrEqualsHost(a Addr, host string) bool {
	if ip := c.resolveHost(host); ip != "" {
		return strings.EqualFold(a.key(), ip)
	}
	// Not resolved: compare the names, Redis's best effort.
	if c.resolveHostnames {
		return host != "" && strings.EqualFold(a.IP, host)
	}
	return strings.EqualFold(a.Resolved, host)
}

func (c *Core) newLink(addr Addr, sentinel bool) *link {
	c.nextID++
	l := &link{
		id:        c.nextID,
		sentinel:  sentinel,
		addr:      addr,
		refcount:  1,
		actPing:   c.now,
		lastAvail: c.now,
		lastPong:  c.now,
	}
	c.links[l.id] = l
	return l
}

// createInstance is createSentinelRedisInstance. The error is Redis's text.
func (c *Core) createInstance(name string, fl flag, host string, port int, quorum int, master *instance) (*instance, string) {
	addr, e := c.newAddr(host, port)
	if e != "" {
		return nil, e
	}
	if fl&fSlave != 0 {
		name = addr.String()
	}
	var table map[string]*instance
	var dup string
	switch {
	case fl&fMaster != 0:
		table, dup = c.masters, "Duplicate master name."
	case fl&fSlave != 0:
		table, dup = master.replicas, "Duplicate hostname and port for replica."
	default:
		table, dup = master.sentinels, "Duplicate runid for sentinel."
	}
	if _, ok := table[name]; ok {
		return nil, dup
	}
	c.nextID++
	ri := &instance{
		id:                      c.nextID,
		flags:                   fl,
		name:                    name,
		addr:                    addr,
		lastPubTime:             c.now,
		lastHelloTime:           c.now,
		lastMasterDownReplyTime: c.now,
		downAfter:               c.tun.DefaultDownAfter,
		slavePriority:           DefaultReplicaPriority,
		replicaAnnounced:        1,
		sentinels:               map[string]*instance{},
		replicas:                map[string]*instance{},
		quorum:                  quorum,
		parallelSyncs:           DefaultParallelSyncs,
		master:                  master,
		failoverTimeout:         c.tun.DefaultFailoverTimeout,
		roleReported:            fl & (fMaster | fSlave),
		roleReportedTime:        c.now,
		slaveConfChangeTime:     c.now,
	}
	if master != nil {
		ri.downAfter = master.downAfter
	}
	ri.link = c.newLink(addr, fl&fSentinel != 0)
	c.instances[ri.id] = ri
	table[name] = ri
	return ri, ""
}

// releaseLink drops one reference; the last one closes the connections.
func (c *Core) releaseLink(ri *instance) {
	l := ri.link
	l.refcount--
	if l.refcount > 0 {
		return
	}
	c.closeConns(ri, true, true)
	delete(c.links, l.id)
}

// releaseInstance is releaseSentinelRedisInstance (the caller unlinks it from
// its table).
func (c *Core) releaseInstance(ri *instance) {
	for _, s := range sortedInstances(ri.sentinels) {
		c.releaseInstance(s)
	}
	for _, r := range sortedInstances(ri.replicas) {
		c.releaseInstance(r)
	}
	ri.sentinels, ri.replicas = map[string]*instance{}, map[string]*instance{}
	c.releaseLink(ri)
	ri.removed = true
	delete(c.instances, ri.id)
	if ri.flags&fSlave != 0 && ri.flags&fPromoted != 0 && ri.master != nil && ri.master.promoted == ri {
		ri.master.promoted = nil
	}
}

// closeConns is instanceLinkCloseConnection for cc and/or pc.
func (c *Core) closeConns(ri *instance, cmd, pubsub bool) {
	l := ri.link
	cmd = cmd && l.cc != connNone
	pubsub = pubsub && l.pc != connNone
	if !cmd && !pubsub {
		return
	}
	if cmd {
		l.cc = connNone
		l.pending = 0
		l.ccPrelude = 0
	}
	if pubsub {
		// The context's callbacks no longer see the link (c->data = NULL):
		// an unanswered AUTH/SETNAME of pc stays counted.
		l.pc = connNone
		l.pcPrelude = 0
	}
	c.emit(Disconnect{Instance: c.ref(ri), Cmd: cmd, PubSub: pubsub})
}

func (c *Core) ref(ri *instance) Ref {
	r := Ref{ID: ri.id, Link: ri.link.id, Kind: ri.kind(), Name: ri.name, Addr: ri.addr}
	if ri.master != nil {
		r.Master = ri.master.name
	} else {
		r.Master = ri.name
	}
	return r
}

// event is sentinelEvent. A format starting with "%@" is prefixed with
// "<type> <name> <ip> <port>" and, for non-masters,
// " @ <master-name> <master-ip> <master-port>".
func (c *Core) event(level Level, typ string, ri *instance, format string, args ...any) {
	var msg string
	if strings.HasPrefix(format, "%@") {
		msg = ri.kind().String() + " " + ri.name + " " + c.announce(ri.addr) + " " + strconv.Itoa(ri.addr.Port)
		if ri.flags&fMaster == 0 && ri.master != nil {
			m := ri.master
			msg += " @ " + m.name + " " + c.announce(m.addr) + " " + strconv.Itoa(m.addr.Port)
		}
		format = format[2:]
	}
	if format != "" {
		msg += fmt.Sprintf(format, args...)
	}
	c.timelineEvent(typ, ri, msg) // timeline.go
	if level == LevelDebug {
		return
	}
	c.emit(Notify{Level: level, Type: typ, Message: msg})
	if level == LevelWarning && ri != nil {
		if m := ri.masterOf(); m != nil && m.notificationScript != "" {
			c.emit(RunScript{Path: m.notificationScript, Args: []string{typ, msg}})
		}
	}
}

// currentMasterAddr is sentinelGetCurrentMasterAddress: the promoted replica's
// address once a failover reached RECONF_SLAVES, else the master's.
func (c *Core) currentMasterAddr(m *instance) Addr {
	if m.flags&fFailoverInProgress != 0 && m.promoted != nil && m.failoverState >= ReconfReplicas {
		return m.promoted.addr
	}
	return m.addr
}

// noDownFor is sentinelRedisInstanceNoDownFor.
func (c *Core) noDownFor(ri *instance, ms int64) bool {
	recent := ri.sdownSince
	if ri.odownSince > recent {
		recent = ri.odownSince
	}
	return recent == 0 || c.now-recent > ms
}

func (c *Core) propagateDownAfter(m *instance) {
	for _, r := range m.replicas {
		r.downAfter = m.downAfter
	}
	for _, s := range m.sentinels {
		s.downAfter = m.downAfter
	}
}

// findSentinel is getSentinelRedisInstanceByAddrAndRunID over a master's
// sentinels; an empty runID or an invalid host disables that criterion / finds
// nothing.
func (c *Core) findSentinel(m *instance, host string, port int, runID string, byAddr bool) *instance {
	var want Addr
	if byAddr {
		var e string
		if want, e = c.newAddr(host, port); e != "" {
			return nil
		}
	}
	for _, ri := range sortedInstances(m.sentinels) {
		if runID != "" && ri.runID == "" {
			continue
		}
		if (runID == "" || ri.runID == runID) && (!byAddr || addrEqual(ri.addr, want)) {
			return ri
		}
	}
	return nil
}

// removeMatchingSentinel is removeMatchingSentinelFromMaster.
func (c *Core) removeMatchingSentinel(m *instance, runID string) int {
	if runID == "" {
		return 0
	}
	n := 0
	for _, ri := range sortedInstances(m.sentinels) {
		if ri.runID == runID {
			delete(m.sentinels, ri.name)
			c.releaseInstance(ri)
			n++
		}
	}
	return n
}

// tryConnectionSharing is sentinelTryConnectionSharing.
func (c *Core) tryConnectionSharing(si *instance) bool {
	if si.runID == "" || si.link.refcount > 1 {
		return false
	}
	for _, m := range c.sortedMasters() {
		if m == si.master {
			continue
		}
		match := c.findSentinel(m, "", 0, si.runID, false)
		if match == nil || match == si {
			continue
		}
		c.releaseLink(si)
		si.link = match.link
		match.link.refcount++
		return true
	}
	return false
}

// updateSentinelAddressInAllMasters is sentinelUpdateSentinelAddressInAllMasters.
func (c *Core) updateSentinelAddressInAllMasters(si *instance) int {
	n := 0
	for _, m := range c.sortedMasters() {
		match := c.findSentinel(m, "", 0, si.runID, false)
		if match == nil {
			continue
		}
		c.closeConns(match, true, true)
		if match == si {
			continue
		}
		match.addr = si.addr
		n++
	}
	si.link.addr = si.addr
	if n > 0 {
		c.event(LevelNotice, "+sentinel-address-update", si, "%@ %d additional matching instances", n)
	}
	return n
}

// resetMaster is sentinelResetMaster.
func (c *Core) resetMaster(m *instance, keepSentinels, generateEvent bool) {
	for _, r := range sortedInstances(m.replicas) {
		delete(m.replicas, r.name)
		c.releaseInstance(r)
	}
	if !keepSentinels {
		for _, s := range sortedInstances(m.sentinels) {
			delete(m.sentinels, s.name)
			c.releaseInstance(s)
		}
	}
	c.closeConns(m, true, true)
	m.flags &= fMaster
	m.leader = ""
	m.failoverState = NoFailover
	m.failoverStateChangeTime = 0
	m.rebootSeen = 0
	m.failoverStartTime = 0
	m.promoted = nil
	m.coord = coordState{}
	c.ackClear(m)
	m.ack.proven = 0
	m.runID = ""
	m.slaveMasterHost, m.hasSlaveMasterHost = "", false
	l := m.link
	l.actPing = c.now
	l.lastPing = 0
	l.lastAvail = c.now
	l.lastPong = c.now
	m.roleReportedTime = c.now
	m.roleReported = fMaster
	if generateEvent {
		c.event(LevelWarning, "+reset-master", m, "%@")
	}
}

// resetMasterAndChangeAddress is sentinelResetMasterAndChangeAddress: the
// replicas other than the new address, plus the old master address, are
// re-created under the new address.
func (c *Core) resetMasterAndChangeAddress(m *instance, host string, port int) bool {
	newAddr, e := c.newAddr(host, port)
	if e != "" {
		return false
	}
	var keep []Addr
	for _, r := range sortedInstances(m.replicas) {
		if addrEqual(r.addr, newAddr) {
			continue
		}
		keep = append(keep, r.addr)
	}
	if !addrEqual(newAddr, m.addr) {
		keep = append(keep, m.addr)
	}
	c.resetMaster(m, true, false)
	// A new master: its replication history is learned anew, and its own
	// min_replicas_ack replaces the old one (syncack.go).
	m.ack.history, m.ack.seen = "", false
	m.addr = newAddr
	m.link.addr = newAddr
	m.odownSince = 0
	m.sdownSince = 0
	for _, a := range keep {
		if r, _ := c.createInstance("", fSlave, a.IP, a.Port, m.quorum, m); r != nil {
			c.event(LevelNotice, "+slave", r, "%@")
		}
	}
	c.flushConfig()
	return true
}

// callClientReconfScript is sentinelCallClientReconfScript.
func (c *Core) callClientReconfScript(m *instance, leader bool, state string, from, to Addr) {
	if m.clientReconfigScript == "" {
		return
	}
	role := "observer"
	if leader {
		role = "leader"
	}
	c.emit(RunScript{Path: m.clientReconfigScript, Args: []string{
		m.name, role, state, c.announce(from), strconv.Itoa(from.Port), c.announce(to), strconv.Itoa(to.Port),
	}})
}
