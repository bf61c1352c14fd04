package sentinel

// Config is the state sentinel.conf persists (rewriteConfigSentinelOption),
// used both to load the file (ConfigLoaded) and to rewrite it (Core.Config).
// It holds actual values, defaults included; the writer omits lines equal to
// the defaults as Redis does (down-after, failover-timeout, parallel-syncs,
// zero reboot period, empty scripts/auth, default globals).
type Config struct {
	MyID                string // 40 chars; "" makes the core generate one
	CurrentEpoch        uint64
	AnnounceIP          string
	AnnouncePort        int
	DenyScriptsReconfig bool // Redis default: yes (see NewConfig)
	ResolveHostnames    bool
	AnnounceHostnames   bool
	SentinelUser        string
	SentinelPass        string
	Masters             []MasterConfig
}

// NewConfig returns an empty config with Redis's global defaults.
func NewConfig() Config { return Config{DenyScriptsReconfig: true} }

// MasterConfig is one monitored master's persisted state.
type MasterConfig struct {
	Name   string
	IP     string // the current master address (sentinelGetCurrentMasterAddress)
	Port   int
	Quorum int

	DownAfter       int64 // ms; 0 on load = default
	FailoverTimeout int64 // ms; 0 on load = default
	ParallelSyncs   int   // 0 on load = default (1)
	RebootDownAfter int64 // master-reboot-down-after-period, ms; 0 = disabled
	// ForgetAfter (Vigil, forget.go) is forget-after-milliseconds: a
	// replica or sentinel unreachable that long is forgotten; 0 = never.
	ForgetAfter int64

	NotificationScript   string
	ClientReconfigScript string
	AuthPass             string
	AuthUser             string

	ConfigEpoch uint64
	LeaderEpoch uint64

	// KnownReplicas: with a failover past RECONF_SLAVES, the promoted
	// replica's address is replaced by the old master address, as Redis does.
	KnownReplicas  []Addr
	KnownSentinels []KnownSentinel
	RenameCommands []Rename

	// MinReplicasAck and AckHistory (Vigil, syncack.go) are the master's
	// sync-ack mode as last learned from its INFO (0: off) and the
	// replication ID its acknowledgements happen in (`sentinel
	// known-sync-ack <name> <n> [<replid>]`), so a restarted sentinel
	// applies the rule to a master that is already down.
	MinReplicasAck int
	AckHistory     string
}

// KnownSentinel is a `sentinel known-sentinel <name> <ip> <port> <runid>` line.
type KnownSentinel struct {
	Addr  Addr
	RunID string
}

// Rename is a `sentinel rename-command <name> <command> <renamed>` line.
type Rename struct {
	Command string
	Renamed string
}

// Config returns a snapshot of what sentinel.conf must persist now.
func (c *Core) Config() Config {
	cfg := Config{
		MyID:                c.myID,
		CurrentEpoch:        c.currentEpoch,
		AnnounceIP:          c.announceIP,
		AnnouncePort:        c.announcePort,
		DenyScriptsReconfig: c.denyScriptsReconfig,
		ResolveHostnames:    c.resolveHostnames,
		AnnounceHostnames:   c.announceHostnames,
		SentinelUser:        c.sentinelUser,
		SentinelPass:        c.sentinelPass,
	}
	for _, m := range c.sortedMasters() {
		maddr := c.currentMasterAddr(m)
		mc := MasterConfig{
			Name:                 m.name,
			IP:                   c.announce(maddr),
			Port:                 maddr.Port,
			Quorum:               m.quorum,
			DownAfter:            m.downAfter,
			FailoverTimeout:      m.failoverTimeout,
			ParallelSyncs:        m.parallelSyncs,
			RebootDownAfter:      m.rebootDownAfter,
			ForgetAfter:          m.forgetAfter,
			NotificationScript:   m.notificationScript,
			ClientReconfigScript: m.clientReconfigScript,
			AuthPass:             m.authPass,
			AuthUser:             m.authUser,
			ConfigEpoch:          m.configEpoch,
			LeaderEpoch:          m.leaderEpoch,
			MinReplicasAck:       m.ack.n,
		}
		if m.ack.n > 0 {
			mc.AckHistory = m.ack.history
		}
		for _, r := range sortedInstances(m.replicas) {
			a := r.addr
			if addrEqual(a, maddr) {
				a = m.addr
			}
			mc.KnownReplicas = append(mc.KnownReplicas, c.announced(a))
		}
		for _, s := range sortedInstances(m.sentinels) {
			if s.runID == "" {
				continue
			}
			mc.KnownSentinels = append(mc.KnownSentinels, KnownSentinel{c.announced(s.addr), s.runID})
		}
		mc.RenameCommands = append(mc.RenameCommands, m.renamed...)
		cfg.Masters = append(cfg.Masters, mc)
	}
	return cfg
}

// loadConfig applies cfg as sentinelHandleConfiguration would, in Redis's load
// order: globals, then monitors, then per-master directives. It returns the
// text of the first error (Redis aborts startup on it).
func (c *Core) loadConfig(cfg Config) string {
	// Pre-monitor (global) directives.
	if cfg.AnnounceIP != "" {
		c.announceIP = cfg.AnnounceIP
	}
	c.announcePort = cfg.AnnouncePort
	c.denyScriptsReconfig = cfg.DenyScriptsReconfig
	c.sentinelUser = cfg.SentinelUser
	c.sentinelPass = cfg.SentinelPass
	if cfg.CurrentEpoch > c.currentEpoch {
		c.currentEpoch = cfg.CurrentEpoch
	}
	if cfg.MyID != "" {
		if len(cfg.MyID) != RunIDSize {
			return "Malformed Sentinel id in myid option."
		}
		c.myID = cfg.MyID
	}
	c.resolveHostnames = cfg.ResolveHostnames
	c.announceHostnames = cfg.AnnounceHostnames

	// monitor lines.
	for _, mc := range cfg.Masters {
		if mc.Quorum <= 0 {
			return "Quorum must be 1 or greater."
		}
		if _, err := c.createInstance(mc.Name, fMaster, mc.IP, mc.Port, mc.Quorum, nil); err != "" {
			return err
		}
	}
	// Everything else.
	for _, mc := range cfg.Masters {
		m := c.masters[mc.Name]
		if mc.DownAfter < 0 || mc.FailoverTimeout < 0 {
			return "negative or zero time parameter."
		}
		if mc.RebootDownAfter < 0 || mc.ForgetAfter < 0 {
			return "negative time parameter."
		}
		if mc.DownAfter > 0 {
			m.downAfter = mc.DownAfter
			c.propagateDownAfter(m)
		}
		if mc.FailoverTimeout > 0 {
			m.failoverTimeout = mc.FailoverTimeout
		}
		if mc.ParallelSyncs != 0 {
			m.parallelSyncs = mc.ParallelSyncs
		}
		m.rebootDownAfter = mc.RebootDownAfter
		m.forgetAfter = mc.ForgetAfter
		m.notificationScript = mc.NotificationScript
		m.clientReconfigScript = mc.ClientReconfigScript
		m.authPass = mc.AuthPass
		m.authUser = mc.AuthUser
		m.configEpoch = mc.ConfigEpoch
		if m.configEpoch > c.currentEpoch {
			c.currentEpoch = m.configEpoch
		}
		m.leaderEpoch = mc.LeaderEpoch
		if mc.MinReplicasAck < 0 {
			return "min-replicas-ack must be 0 or greater."
		}
		m.ack.n, m.ack.seen, m.ack.history = mc.MinReplicasAck, mc.MinReplicasAck > 0, mc.AckHistory
		for _, a := range mc.KnownReplicas {
			r, err := c.createInstance("", fSlave, a.IP, a.Port, m.quorum, m)
			if err != "" {
				return err
			}
			// The file does not say which replicas followed the master:
			// in sync-ack mode, count them all (syncack.go).
			r.ackMember = true
		}
		for _, ks := range mc.KnownSentinels {
			si, err := c.createInstance(ks.RunID, fSentinel, ks.Addr.IP, ks.Addr.Port, m.quorum, m)
			if err != "" {
				return err
			}
			si.runID = ks.RunID
			c.tryConnectionSharing(si)
		}
		for _, rn := range mc.RenameCommands {
			if m.renamedIndex(rn.Command) >= 0 {
				return "Same command renamed multiple times with rename-command."
			}
			m.renamed = append(m.renamed, rn)
		}
	}
	return ""
}
