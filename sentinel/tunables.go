package sentinel

import "strconv"

// Per-master defaults and fixed limits (sentinel.c).
const (
	DefaultQuorum          = 2 // not a Redis default; MONITOR always gives one
	DefaultParallelSyncs   = 1
	DefaultReplicaPriority = 100
	// MaxDesync is SENTINEL_MAX_DESYNC: random 0..999 ms added to failover
	// start times so sentinels do not retry in lockstep.
	MaxDesync = 1000
	// MaxPendingCommands is SENTINEL_MAX_PENDING_COMMANDS (per link reference).
	MaxPendingCommands = 100
	// ReplicaFastInfoPeriod is the literal 1000 ms INFO period of replicas of an
	// ODOWN / failing-over master, or that report a broken master link.
	ReplicaFastInfoPeriod = 1000
	// InfoValidityTime is SENTINEL_INFO_VALIDITY_TIME (ask replies older than
	// 5 × ask period are forgotten).
	InfoValidityTime = 5000
)

// Tunables are the timers SENTINEL DEBUG lists (all milliseconds), plus
// Vigil's speed-ups. DefaultTunables gives Redis 7.0's values.
type Tunables struct {
	InfoPeriod             int64 // INFO-PERIOD 10000
	PingPeriod             int64 // PING-PERIOD 1000 (effective per instance: min(down-after, this))
	AskPeriod              int64 // ASK-PERIOD 1000
	PublishPeriod          int64 // PUBLISH-PERIOD 2000
	DefaultDownAfter       int64 // DEFAULT-DOWN-AFTER 30000
	DefaultFailoverTimeout int64 // DEFAULT-FAILOVER-TIMEOUT 180000
	TiltTrigger            int64 // TILT-TRIGGER 2000
	TiltPeriod             int64 // TILT-PERIOD 30000
	SlaveReconfTimeout     int64 // SLAVE-RECONF-TIMEOUT 10000
	MinLinkReconnectPeriod int64 // MIN-LINK-RECONNECT-PERIOD 15000
	ElectionTimeout        int64 // ELECTION-TIMEOUT 10000
	ScriptMaxRuntime       int64 // SCRIPT-MAX-RUNTIME 60000 (enforced by the shell)
	ScriptRetryDelay       int64 // SCRIPT-RETRY-DELAY 30000 (enforced by the shell)

	// AskOnSDown (Vigil; default true) sends IS-MASTER-DOWN-BY-ADDR to every
	// connected sentinel in the very tick a master turns SDOWN, even if a
	// sentinel answered less than AskPeriod ago. Redis only asks then when the
	// last answer is older than AskPeriod. It changes when we ask, never what
	// counts: ODOWN still needs quorum sentinels that see SDOWN themselves.
	AskOnSDown bool
	// PromotionInfoPeriod (Vigil; default 100 ms, 0 = Redis's 1000 ms) is the
	// INFO period of the promoted replica while the failover waits for it to
	// report role:master (WAIT_PROMOTION), so promotion is seen within a tick.
	PromotionInfoPeriod int64
	// ReconfInfoPeriod (Vigil; default 250 ms, 0 = Redis's 1000 ms) is the INFO
	// period of replicas in RECONF_SENT / RECONF_INPROG, so +failover-end and
	// +switch-master follow the resync closely.
	ReconfInfoPeriod int64
	// EagerFailover (Vigil; default true) takes the failover steps that need
	// no new information at once instead of at the next timer tick (Redis
	// advances one state per tick, 50-100 ms each): the SLAVEOF NO ONE in the
	// step that selected the replica; INFO to the promoted replica as soon as
	// its SLAVEOF NO ONE is acknowledged (and to a replica being reconfigured
	// as soon as its SLAVEOF is); on promotion, the hellos announcing the new
	// configuration and the other replicas' SLAVEOF. ODOWN, the votes and
	// the replica selection stay on the tick, with Redis's rules.
	EagerFailover bool
	// InfoOnReconnect (Vigil; default true) asks INFO of a master on the
	// tick after its command link reconnects, and of its replicas when its
	// run_id changed (+reboot), instead of at the next INFO period (up to
	// 10 s): a master that restarted empty is failed over that much sooner
	// (emptyrestart.go), and master-reboot-down-after-period counts from
	// the restart.
	InfoOnReconnect bool
}

// DefaultTunables returns Redis 7.0's timers with Vigil's speed-ups enabled.
func DefaultTunables() Tunables {
	return Tunables{
		InfoPeriod:             10000,
		PingPeriod:             1000,
		AskPeriod:              1000,
		PublishPeriod:          2000,
		DefaultDownAfter:       30000,
		DefaultFailoverTimeout: 180000,
		TiltTrigger:            2000,
		TiltPeriod:             30000,
		SlaveReconfTimeout:     10000,
		MinLinkReconnectPeriod: 15000,
		ElectionTimeout:        10000,
		ScriptMaxRuntime:       60000,
		ScriptRetryDelay:       30000,
		AskOnSDown:             true,
		PromotionInfoPeriod:    100,
		ReconfInfoPeriod:       250,
		EagerFailover:          true,
		InfoOnReconnect:        true,
	}
}

// RedisTunables returns Redis 7.0's timers with Vigil's speed-ups disabled.
func RedisTunables() Tunables {
	t := DefaultTunables()
	t.AskOnSDown = false
	t.PromotionInfoPeriod = 0
	t.ReconfInfoPeriod = 0
	t.EagerFailover = false
	t.InfoOnReconnect = false
	return t
}

type debugParam struct {
	name string
	ptr  func(*Tunables) *int64
}

var debugParams = []debugParam{
	{"INFO-PERIOD", func(t *Tunables) *int64 { return &t.InfoPeriod }},
	{"PING-PERIOD", func(t *Tunables) *int64 { return &t.PingPeriod }},
	{"ASK-PERIOD", func(t *Tunables) *int64 { return &t.AskPeriod }},
	{"PUBLISH-PERIOD", func(t *Tunables) *int64 { return &t.PublishPeriod }},
	{"DEFAULT-DOWN-AFTER", func(t *Tunables) *int64 { return &t.DefaultDownAfter }},
	{"DEFAULT-FAILOVER-TIMEOUT", func(t *Tunables) *int64 { return &t.DefaultFailoverTimeout }},
	{"TILT-TRIGGER", func(t *Tunables) *int64 { return &t.TiltTrigger }},
	{"TILT-PERIOD", func(t *Tunables) *int64 { return &t.TiltPeriod }},
	{"SLAVE-RECONF-TIMEOUT", func(t *Tunables) *int64 { return &t.SlaveReconfTimeout }},
	{"MIN-LINK-RECONNECT-PERIOD", func(t *Tunables) *int64 { return &t.MinLinkReconnectPeriod }},
	{"ELECTION-TIMEOUT", func(t *Tunables) *int64 { return &t.ElectionTimeout }},
	{"SCRIPT-MAX-RUNTIME", func(t *Tunables) *int64 { return &t.ScriptMaxRuntime }},
	{"SCRIPT-RETRY-DELAY", func(t *Tunables) *int64 { return &t.ScriptRetryDelay }},
}

// Debug returns SENTINEL DEBUG's map (no arguments): the 13 timers in Redis's
// order, values in milliseconds.
func (c *Core) Debug() []Field {
	out := make([]Field, 0, len(debugParams))
	for _, p := range debugParams {
		out = append(out, Field{p.name, strconv.FormatInt(*p.ptr(&c.tun), 10)})
	}
	return out
}

// Tunables returns the current timers.
func (c *Core) Tunables() Tunables { return c.tun }
