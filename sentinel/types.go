package sentinel

import (
	"strconv"
	"strings"
)

// Kind is the role Sentinel gives an instance (sentinel.c's SRI_MASTER,
// SRI_SLAVE, SRI_SENTINEL).
type Kind uint8

// Instance kinds.
const (
	KindMaster Kind = iota + 1
	KindReplica
	KindSentinel
)

// String returns the wire name used in events and replies
// (sentinelRedisInstanceTypeStr): "master", "slave" or "sentinel".
func (k Kind) String() string {
	switch k {
	case KindMaster:
		return "master"
	case KindReplica:
		return "slave"
	case KindSentinel:
		return "sentinel"
	}
	return "unknown"
}

// Addr is sentinelAddr. IP is its "hostname" field: the host as given (a
// host name with resolve-hostnames, else a numeric address in inet_ntop
// form). Resolved is its "ip" field: the address the host resolved to when
// the core made the Addr (Options.Resolve), "" when not resolved. Replies,
// events, hellos and the rewritten file show IP with announce-hostnames
// yes and Resolved with announce-hostnames no (announceSentinelAddr);
// addresses compare by Resolved (sentinelAddrIsEqual).
type Addr struct {
	IP       string
	Port     int
	Resolved string
}

// String formats the address as announceSentinelAddrAndPort does:
// "ip:port", or "[ip]:port" when the IP contains a colon (IPv6).
func (a Addr) String() string {
	if strings.Contains(a.IP, ":") {
		return "[" + a.IP + "]:" + strconv.Itoa(a.Port)
	}
	return a.IP + ":" + strconv.Itoa(a.Port)
}

// Ref identifies one instance as the core knows it. The shell receives Refs in
// actions and echoes them, unchanged, in the events that answer them.
//
// ID is unique per instance object for the life of the Core and never reused:
// a reply for an instance that was removed (SENTINEL RESET, address switch,
// +switch-master) is recognised as stale and only settles the link's pending
// count. Link names the connection pair the instance uses; sentinels known
// under several masters share one Link (sentinelTryConnectionSharing), so the
// shell must key its connections by Link, not by ID.
type Ref struct {
	ID     uint64
	Link   uint64
	Kind   Kind
	Master string // name of the master group the instance belongs to
	Name   string // master name, "ip:port" for replicas, run id for sentinels
	Addr   Addr
}

// Conn names one of an instance link's two connections.
type Conn uint8

// Connections of a link: the command connection (cc) and, for masters and
// replicas only, the pub/sub connection (pc) subscribed to __sentinel__:hello.
const (
	ConnCmd Conn = iota + 1
	ConnPubSub
)

// Level is the log level of a Notify, as Redis's LL_* levels.
type Level uint8

// Levels. Debug-level events are never emitted by the core.
const (
	LevelDebug Level = iota
	LevelVerbose
	LevelNotice
	LevelWarning
)

// String returns the level name.
func (l Level) String() string {
	switch l {
	case LevelDebug:
		return "debug"
	case LevelVerbose:
		return "verbose"
	case LevelNotice:
		return "notice"
	case LevelWarning:
		return "warning"
	}
	return "unknown"
}

// FailoverState is a master's failover state, named after sentinel.c's
// SENTINEL_FAILOVER_STATE_*.
type FailoverState uint8

// Failover states, in the order sentinel.c defines them (the order matters:
// sentinelGetCurrentMasterAddress compares with >= ReconfReplicas).
const (
	NoFailover         FailoverState = iota // SENTINEL_FAILOVER_STATE_NONE
	WaitStart                               // wait_start
	SelectReplica                           // select_slave
	SendReplicaOfNoOne                      // send_slaveof_noone
	WaitPromotion                           // wait_promotion
	ReconfReplicas                          // reconf_slaves
	UpdateConfig                            // update_config
)

// String returns sentinelFailoverStateStr's string.
func (s FailoverState) String() string {
	switch s {
	case NoFailover:
		return "none"
	case WaitStart:
		return "wait_start"
	case SelectReplica:
		return "select_slave"
	case SendReplicaOfNoOne:
		return "send_slaveof_noone"
	case WaitPromotion:
		return "wait_promotion"
	case ReconfReplicas:
		return "reconf_slaves"
	case UpdateConfig:
		return "update_config"
	}
	return "unknown"
}
