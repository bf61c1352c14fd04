package configs

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
)

// RedisVersion is the Redis release whose configuration this package mirrors
// (config.c of Redis 7.0.15); it appears in the fatal config error block.
const RedisVersion = "7.0.15"

// Config is the typed configuration of vigil-server. Every directive of the
// table (see Directives) is stored either in one of the exported fields below
// or, for directives Vigil does not act on yet, in an internal map that CONFIG
// GET/SET/REWRITE read and write like the rest; Value reads any of them.
//
// Field values are what CONFIG GET reports, in Go types: memory sizes are
// bytes, durations are in the unit of the directive (seconds, milliseconds
// or microseconds as named), enums are their lowercase names.
//
// A Config is not safe for concurrent use: the server guards it with its
// execution lock.
type Config struct {
	// File is the absolute path of the configuration file the server was
	// started with, "" when none (CONFIG REWRITE then fails, INFO prints an
	// empty config_file).
	File string

	// OnSet, when set, is called by Set for every directive whose value
	// changed (primary name, e.g. "replica-priority" for "slave-priority"),
	// after all the pairs have been stored, so the server can apply them
	// (rebind the port, resize the backlog...). An error undoes the whole
	// CONFIG SET, as config.c's apply functions do. See Set.
	OnSet func(name string) error

	// Network.
	Bind           []string // addresses to listen on; "-" prefix = optional; default "*", "-::*"
	BindSourceAddr string   // source address of outgoing connections
	Port           int      // TCP port, 0 = no TCP listener
	UnixSocket     string
	UnixSocketPerm uint32 // octal permission bits of the unix socket, 0 = umask default
	TCPBacklog     int
	TCPKeepAlive   int // seconds
	ProtectedMode  bool
	MaxClients     int
	Timeout        int // client idle timeout in seconds, 0 = never

	// Security.
	RequirePass            string // password of the default user, "" = none
	RenameCommands         map[string]string
	EnableDebugCommand     string // no | yes | local
	EnableProtectedConfigs string // no | yes | local
	EnableModuleCommand    string // no | yes | local

	// Process and logging.
	Daemonize         bool // accepted for compatibility; Vigil never daemonizes
	Supervised        string
	PidFile           string
	LogLevel          string // debug | verbose | notice | warning (and nothing, as Redis 7.2)
	LogFile           string // "" = standard output
	LogFormat         string // redis | json (Vigil's log-format)
	SyslogEnabled     bool   // also to the system log (internal/logging)
	SyslogIdent       string
	SyslogFacility    string // user | local0 ... local7
	AlwaysShowLogo    bool
	Databases         int
	Hz                int // always within 1..500, as Redis clamps it
	DynamicHz         bool
	ShutdownTimeout   int // seconds
	ShutdownOnSigint  int // Shutdown* flags; 0 = default
	ShutdownOnSigterm int

	// Limits.
	ProtoMaxBulkLen          int64 // bytes
	ClientQueryBufferLimit   int64 // bytes
	ClientOutputBufferLimits [ClientClasses]BufferLimit
	BusyReplyThreshold       int64 // lua-time-limit, milliseconds
	// LuaEnableDeprecatedAPI is lua-enable-deprecated-api (Redis 7.0.15 as
	// Debian patches it, CVE-2025-46818): setfenv, getfenv and newproxy
	// stay in the scripts' globals.
	LuaEnableDeprecatedAPI bool

	// Slow log and latency.
	SlowlogLogSlowerThan           int64 // microseconds, -1 = disabled
	SlowlogMaxLen                  int
	LatencyMonitorThreshold        int64 // milliseconds
	LatencyTracking                bool
	LatencyTrackingInfoPercentiles []float64

	// Memory.
	Maxmemory int64 // bytes, 0 = no limit
	// MaxmemoryClients is maxmemory-clients: bytes, or minus a percentage
	// of maxmemory ("10%" is -10), 0 = no client eviction.
	MaxmemoryClients          int64
	MaxmemoryPolicy           string
	MaxmemorySamples          int
	MaxmemoryEvictionTenacity int
	LFULogFactor              int
	LFUDecayTime              int
	ActiveExpireEffort        int

	// Snapshots.
	Dir                     string // absolute working directory: RDB, AOF and relative paths live here
	DBFilename              string
	Save                    []SaveParam
	RDBCompression          bool
	RDBChecksum             bool
	StopWritesOnBgsaveError bool
	RDBDelSyncFiles         bool
	// RDBKeySaveDelay and KeyLoadDelay are the hidden test knobs
	// rdb-key-save-delay (microseconds slept after each key saved: SAVE,
	// BGSAVE, AOF rewrites) and key-load-delay (after each key loaded).
	RDBKeySaveDelay int
	KeyLoadDelay    int

	// Append only file.
	AppendOnly               bool
	AppendFilename           string
	AppendDirName            string
	AppendFsync              string // always | everysec | no
	NoAppendFsyncOnRewrite   bool
	AutoAOFRewritePercentage int
	AutoAOFRewriteMinSize    int64 // bytes
	AOFLoadTruncated         bool
	AOFUseRDBPreamble        bool
	AOFTimestampEnabled      bool
	AOFDisableAutoGC         bool // aof-disable-auto-gc: history files stay until set back to no

	// Replication.
	ReplicaOf       Address // Host "" when this server is a master
	MasterAuth      string
	MasterUser      string
	ReplicaReadOnly bool
	// PropagationErrorBehavior is propagation-error-behavior: ignore,
	// panic or panic-on-replicas (server.afterErrorReply).
	PropagationErrorBehavior string
	// ReplicaRefuseEmptySync is replica-refuse-empty-sync (Vigil, default
	// yes): refuse a full sync that would replace this replica's data with
	// an empty dataset from a master it followed that restarted empty.
	ReplicaRefuseEmptySync bool
	ReplicaServeStaleData  bool
	ReplicaLazyFlush       bool
	ReplicaIgnoreMaxmemory bool
	// ReplIgnoreDiskWriteError: a replica that cannot persist (-MISCONF)
	// logs and applies its master's writes instead of exiting.
	ReplIgnoreDiskWriteError    bool
	ReplBacklogSize             int64 // bytes
	ReplBacklogTTL              int64 // seconds
	ReplTimeout                 int   // seconds
	ReplPingReplicaPeriod       int   // seconds
	ReplDisklessSync            bool
	ReplDisklessSyncDelay       int // seconds
	ReplDisklessSyncMaxReplicas int
	ReplDisklessLoad            string
	ReplDisableTCPNoDelay       bool
	ReplicaPriority             int
	ReplicaAnnounced            bool
	ReplicaAnnounceIP           string
	ReplicaAnnouncePort         int
	MinReplicasToWrite          int
	MinReplicasMaxLag           int // seconds
	MinReplicasAck              int // Vigil: sync-ack mode, replicas per write (0: off)
	MinReplicasAckTimeout       int // Vigil: milliseconds (0: forever)
	MetricsPort                 int // Vigil: HTTP port of /metrics (internal/metrics), 0 = off
	// PubsubArrivalOrder is pubsub-arrival-order (Vigil, server/order.go):
	// PUBLISH and PUBSUB counts first let the subscribers they count run
	// the input that had arrived, as redis-server's single thread does, and
	// INFO, CLIENT LIST/KILL/UNBLOCK/PAUSE, FLUSHALL, FLUSHDB and SWAPDB
	// every other connection.
	PubsubArrivalOrder bool
	// Fencing (Vigil, docs/safety.md "Fencing a deposed master"):
	// MasterConfigEpoch is master-config-epoch, the sentinels' config
	// epoch this server was configured at; MasterFence is master-fence,
	// "" or "<epoch> <ip> <port>" while writes are refused because that
	// epoch made ip:port the master; MasterIsolationTimeout is
	// master-isolation-timeout (ms, 0: off); MasterKnownSentinels is
	// master-known-sentinels, the keys of the sentinels learned from
	// hellos (space-separated), so a restart keeps them.
	MasterConfigEpoch      int64
	MasterFence            string
	MasterIsolationTimeout int
	MasterKnownSentinels   string
	// MasterSyncAckSentinels is master-sync-ack-sentinels: the keys of the
	// sentinels that ever confirmed a sync-ack INFO (vigil-sentinels,
	// replication.AckGate), kept across a restart.
	MasterSyncAckSentinels string

	// Events and encodings.
	NotifyKeyspaceEvents   int // Notify* flags
	HashMaxListpackEntries int64
	HashMaxListpackValue   int64
	ListMaxListpackSize    int
	ListCompressDepth      int
	SetMaxIntsetEntries    int64
	ZsetMaxListpackEntries int64
	ZsetMaxListpackValue   int64
	HLLSparseMaxBytes      int64
	// TrackingTableMaxKeys is tracking-table-max-keys: the keys the
	// client-side caching table holds before random ones are invalidated
	// (0: no limit).
	TrackingTableMaxKeys int64
	StreamNodeMaxBytes   int64
	StreamNodeMaxEntries int64
	ActiveRehashing      bool
	// LazyfreeLazyExpire and LazyfreeLazyEviction make expired and evicted
	// keys propagate as UNLINK instead of DEL (propagateDeletion).
	LazyfreeLazyExpire   bool
	LazyfreeLazyEviction bool
	// LazyfreeLazyUserDel makes GETDEL propagate as UNLINK.
	LazyfreeLazyUserDel bool
	// LazyfreeLazyUserFlush makes FLUSHALL, FLUSHDB and SCRIPT FLUSH
	// without SYNC|ASYNC asynchronous (INFO lazyfreed_objects).
	LazyfreeLazyUserFlush bool
	// LazyfreeLazyServerDel makes the deletes and overwrites the server
	// does on its own (dbDelete, dbOverwrite) free big values lazily
	// (INFO lazyfreed_objects).
	LazyfreeLazyServerDel bool

	// Misc.
	ClusterEnabled    bool
	OOMScoreAdjValues [3]int
	// Users holds the arguments of each "user" line (name first), in order.
	// Vigil does not implement ACLs; CONFIG REWRITE leaves these lines alone.
	Users [][]string
	// LoadModules holds the arguments of each "loadmodule" line (path
	// first). Vigil cannot load modules; the server decides what to do.
	LoadModules [][]string
	// ModuleConfigs holds "module.name value..." lines, name -> value.
	ModuleConfigs map[string]string

	// Directives Vigil stores but does not act on yet, by primary name.
	extraBool map[string]bool
	extraNum  map[string]int64
	extraStr  map[string]string

	// loading is set while Load parses text (save's first-line reset).
	loading *loadState
}

// Address is a host and port pair (replicaof).
type Address struct {
	Host string
	Port int
}

// SaveParam is one "save <seconds> <changes>" point.
type SaveParam struct {
	Seconds int64
	Changes int
}

// BufferLimit is one class of client-output-buffer-limit.
type BufferLimit struct {
	HardBytes   uint64
	SoftBytes   uint64
	SoftSeconds int
}

// Client classes of client-output-buffer-limit, in Redis's order.
const (
	ClientNormal  = 0
	ClientReplica = 1
	ClientPubSub  = 2
	ClientClasses = 3
)

// Shutdown flags of shutdown-on-sigint and shutdown-on-sigterm (server.h).
const (
	ShutdownSave   = 1
	ShutdownNoSave = 2
	ShutdownNow    = 4
	ShutdownForce  = 8
	// ShutdownFailover (Vigil): a master hands over to its best replica
	// (FAILOVER) before shutting down, and keeps running if that fails.
	ShutdownFailover = 16
)

// Keyspace notification classes (server.h NOTIFY_*), the value of
// notify-keyspace-events.
const (
	NotifyKeyspace = 1 << 0  // K
	NotifyKeyevent = 1 << 1  // E
	NotifyGeneric  = 1 << 2  // g
	NotifyString   = 1 << 3  // $
	NotifyList     = 1 << 4  // l
	NotifySet      = 1 << 5  // s
	NotifyHash     = 1 << 6  // h
	NotifyZset     = 1 << 7  // z
	NotifyExpired  = 1 << 8  // x
	NotifyEvicted  = 1 << 9  // e
	NotifyStream   = 1 << 10 // t
	NotifyKeyMiss  = 1 << 11 // m (not part of A)
	NotifyLoaded   = 1 << 12 // module only
	NotifyModule   = 1 << 13 // d
	NotifyNew      = 1 << 14 // n (not part of A)
	// NotifyAll is the 'A' alias: g$lshzxetd.
	NotifyAll = NotifyGeneric | NotifyString | NotifyList | NotifySet | NotifyHash |
		NotifyZset | NotifyExpired | NotifyEvicted | NotifyStream | NotifyModule
)

// ParseKeyspaceEvents is notify.c keyspaceEventsStringToFlags; ok is false on
// an unknown class character.
func ParseKeyspaceEvents(classes string) (flags int, ok bool) {
	for i := 0; i < len(classes); i++ {
		switch classes[i] {
		case 'A':
			flags |= NotifyAll
		case 'g':
			flags |= NotifyGeneric
		case '$':
			flags |= NotifyString
		case 'l':
			flags |= NotifyList
		case 's':
			flags |= NotifySet
		case 'h':
			flags |= NotifyHash
		case 'z':
			flags |= NotifyZset
		case 'x':
			flags |= NotifyExpired
		case 'e':
			flags |= NotifyEvicted
		case 'K':
			flags |= NotifyKeyspace
		case 'E':
			flags |= NotifyKeyevent
		case 't':
			flags |= NotifyStream
		case 'm':
			flags |= NotifyKeyMiss
		case 'd':
			flags |= NotifyModule
		case 'n':
			flags |= NotifyNew
		default:
			return 0, false
		}
	}
	return flags, true
}

// FormatKeyspaceEvents is notify.c keyspaceEventsFlagsToString.
func FormatKeyspaceEvents(flags int) string {
	var b strings.Builder
	if flags&NotifyAll == NotifyAll {
		b.WriteByte('A')
	} else {
		for _, f := range []struct {
			bit int
			c   byte
		}{
			{NotifyGeneric, 'g'}, {NotifyString, '$'}, {NotifyList, 'l'}, {NotifySet, 's'},
			{NotifyHash, 'h'}, {NotifyZset, 'z'}, {NotifyExpired, 'x'}, {NotifyEvicted, 'e'},
			{NotifyStream, 't'}, {NotifyModule, 'd'}, {NotifyNew, 'n'},
		} {
			if flags&f.bit != 0 {
				b.WriteByte(f.c)
			}
		}
	}
	if flags&NotifyKeyspace != 0 {
		b.WriteByte('K')
	}
	if flags&NotifyKeyevent != 0 {
		b.WriteByte('E')
	}
	if flags&NotifyKeyMiss != 0 {
		b.WriteByte('m')
	}
	return b.String()
}

// Default returns the configuration redis-server 7.0 runs with when no
// directive is given. Dir is the process working directory.
func Default() *Config {
	c := &Config{
		RenameCommands: map[string]string{},
		ModuleConfigs:  map[string]string{},
		extraBool:      map[string]bool{},
		extraNum:       map[string]int64{},
		extraStr:       map[string]string{},
	}
	for _, d := range table {
		d.init(c)
	}
	if wd, err := os.Getwd(); err == nil {
		c.Dir = wd
	}
	return c
}

// Clone returns a deep copy of c (OnSet included).
func (c *Config) Clone() *Config {
	n := *c
	n.Bind = slices.Clone(c.Bind)
	n.Save = slices.Clone(c.Save)
	n.LatencyTrackingInfoPercentiles = slices.Clone(c.LatencyTrackingInfoPercentiles)
	n.RenameCommands = maps.Clone(c.RenameCommands)
	n.ModuleConfigs = maps.Clone(c.ModuleConfigs)
	n.Users = cloneLines(c.Users)
	n.LoadModules = cloneLines(c.LoadModules)
	n.extraBool = maps.Clone(c.extraBool)
	n.extraNum = maps.Clone(c.extraNum)
	n.extraStr = maps.Clone(c.extraStr)
	return &n
}

func cloneLines(l [][]string) [][]string {
	if l == nil {
		return nil
	}
	out := make([][]string, len(l))
	for i, a := range l {
		out[i] = slices.Clone(a)
	}
	return out
}

// Validate checks c as redis-server checks its configuration before
// starting: every value must be one CONFIG SET would accept (so a Config
// built in Go is held to the same ranges as a file), Hz must be within
// 1..500, Dir must be absolute (it is not checked against the file system),
// replicaof is refused in cluster mode, and users cannot be declared both in
// the file and through aclfile. All problems are reported, joined.
func (c *Config) Validate() error {
	var errs []error
	scratch := c.Clone()
	for _, d := range table {
		if d.check != nil {
			if err := d.check(c); err != nil {
				errs = append(errs, err)
			}
			continue
		}
		v := d.get(c)
		var args []string
		if d.Flags&MultiArg != 0 {
			args = splitSpaces(v)
		} else {
			args = []string{v}
		}
		if err := d.set(scratch, args); err != nil {
			errs = append(errs, fmt.Errorf("%s %q: %w", d.Name, v, err))
		}
	}
	if c.Hz < minHz || c.Hz > maxHz {
		errs = append(errs, fmt.Errorf("hz %d: must be between %d and %d", c.Hz, minHz, maxHz))
	}
	if err := c.sanity(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// sanity holds the cross-directive checks loadServerConfigFromString and
// startup make.
func (c *Config) sanity() error {
	if c.ClusterEnabled && c.ReplicaOf.Host != "" {
		return errors.New(reasonReplicaofCluster)
	}
	if len(c.Users) > 0 && c.extraStr["aclfile"] != "" {
		return errors.New(reasonUsersAndACLFile)
	}
	return nil
}

// Value returns the value of one directive (or alias) as CONFIG GET prints
// it, and whether the directive exists. Hidden directives are found too.
func (c *Config) Value(name string) (string, bool) {
	d, _ := lookup(name)
	if d == nil {
		return "", false
	}
	return d.get(c), true
}
