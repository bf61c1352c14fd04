package configs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/vigil-kv/vigil/internal/redisutil"
)

// table is the single source of truth for directives: config.c's
// static_configs of Redis 7.0.15 (as built by Debian, with TLS), one entry
// per directive, aliases included in their entry. Order is the order of
// config.c, which is also the order CONFIG GET * and the generated part of
// CONFIG REWRITE use.
//
// Directives Vigil stores and reports (CONFIG GET/SET/REWRITE) but does not
// act on yet carry the Unimplemented flag and have no Config field; read them
// with Config.Value. They are:
//
//	io-threads-do-reads io-threads set-proc-title proc-title-template
//	rdb-save-incremental-fsync aof-rewrite-incremental-fsync
//	lazyfree-lazy-user-flush replica-ignore-disk-write-errors
//	jemalloc-bg-thread activedefrag active-defrag-* crash-log-enabled
//	crash-memcheck-enabled use-exit-on-panic
//	aclfile acllog-max-len acl-pubsub-default
//	ignore-warnings server_cpulist bio_cpulist aof_rewrite_cpulist bgsave_cpulist
//	cluster-* (cluster-enabled has a field, for the replicaof check)
//	oom-score-adj sanitize-dump-payload propagation-error-behavior
//	socket-mark-id
//	watchdog-period
//	loading-process-events-interval-bytes
//
// The tls-* directives have no Config field either (so they carry the
// flag); internal/netshell's TLSSettingsOf reads them and acts on them.
//
// Besides the table, the loader knows include, rename-command, user,
// loadmodule, sentinel, module configs (names with a dot) and the deprecated
// list-max-ziplist-entries, list-max-ziplist-value and lua-replicate-commands,
// which are accepted and ignored.
// vigilOnly lists the directives of the table Redis 7.0.15 does not have.
var vigilOnly = map[string]bool{"replica-refuse-empty-sync": true}

var table = []*Directive{
	// Bool configs.
	boolD("rdbchecksum", "", Immutable, true, func(c *Config) *bool { return &c.RDBChecksum }, nil),
	boolD("daemonize", "", Immutable, false, func(c *Config) *bool { return &c.Daemonize }, nil),
	boolD("io-threads-do-reads", "", Immutable, false, nil, nil),
	boolD("always-show-logo", "", Immutable, false, func(c *Config) *bool { return &c.AlwaysShowLogo }, nil),
	boolD("protected-mode", "", 0, true, func(c *Config) *bool { return &c.ProtectedMode }, nil),
	boolD("rdbcompression", "", 0, true, func(c *Config) *bool { return &c.RDBCompression }, nil),
	boolD("rdb-del-sync-files", "", 0, false, func(c *Config) *bool { return &c.RDBDelSyncFiles }, nil),
	boolD("activerehashing", "", 0, true, func(c *Config) *bool { return &c.ActiveRehashing }, nil),
	boolD("stop-writes-on-bgsave-error", "", 0, true, func(c *Config) *bool { return &c.StopWritesOnBgsaveError }, nil),
	boolD("set-proc-title", "", Immutable, true, nil, nil),
	boolD("dynamic-hz", "", 0, true, func(c *Config) *bool { return &c.DynamicHz }, nil),
	boolD("lazyfree-lazy-eviction", "", 0, false, func(c *Config) *bool { return &c.LazyfreeLazyEviction }, nil),
	boolD("lazyfree-lazy-expire", "", 0, false, func(c *Config) *bool { return &c.LazyfreeLazyExpire }, nil),
	boolD("lazyfree-lazy-server-del", "", 0, false, func(c *Config) *bool { return &c.LazyfreeLazyServerDel }, nil),
	boolD("lazyfree-lazy-user-del", "", 0, false, func(c *Config) *bool { return &c.LazyfreeLazyUserDel }, nil),
	boolD("lazyfree-lazy-user-flush", "", 0, false, func(c *Config) *bool { return &c.LazyfreeLazyUserFlush }, nil),
	boolD("repl-disable-tcp-nodelay", "", 0, false, func(c *Config) *bool { return &c.ReplDisableTCPNoDelay }, nil),
	boolD("repl-diskless-sync", "", 0, true, func(c *Config) *bool { return &c.ReplDisklessSync }, nil),
	boolD("aof-rewrite-incremental-fsync", "", 0, true, nil, nil),
	boolD("no-appendfsync-on-rewrite", "", 0, false, func(c *Config) *bool { return &c.NoAppendFsyncOnRewrite }, nil),
	boolD("cluster-require-full-coverage", "", 0, true, nil, nil),
	boolD("rdb-save-incremental-fsync", "", 0, true, nil, nil),
	boolD("aof-load-truncated", "", 0, true, func(c *Config) *bool { return &c.AOFLoadTruncated }, nil),
	boolD("aof-use-rdb-preamble", "", 0, true, func(c *Config) *bool { return &c.AOFUseRDBPreamble }, nil),
	boolD("aof-timestamp-enabled", "", 0, false, func(c *Config) *bool { return &c.AOFTimestampEnabled }, nil),
	boolD("cluster-replica-no-failover", "cluster-slave-no-failover", 0, false, nil, nil),
	boolD("replica-lazy-flush", "slave-lazy-flush", 0, false, func(c *Config) *bool { return &c.ReplicaLazyFlush }, nil),
	boolD("replica-serve-stale-data", "slave-serve-stale-data", 0, true, func(c *Config) *bool { return &c.ReplicaServeStaleData }, nil),
	boolD("replica-read-only", "slave-read-only", 0, true, func(c *Config) *bool { return &c.ReplicaReadOnly }, nil),
	// Vigil's empty-restart guard (replication/emptysync.go): Hidden, so that
	// CONFIG GET * lists Redis's directives only; CONFIG GET/SET by name work.
	boolD("replica-refuse-empty-sync", "", Hidden, true, func(c *Config) *bool { return &c.ReplicaRefuseEmptySync }, nil),
	boolD("replica-ignore-maxmemory", "slave-ignore-maxmemory", 0, true, func(c *Config) *bool { return &c.ReplicaIgnoreMaxmemory }, nil),
	boolD("jemalloc-bg-thread", "", 0, true, nil, nil),
	boolD("activedefrag", "", 0, false, nil, validActiveDefrag),
	boolD("syslog-enabled", "", Immutable, false, func(c *Config) *bool { return &c.SyslogEnabled }, nil),
	boolD("cluster-enabled", "", Immutable, false, func(c *Config) *bool { return &c.ClusterEnabled }, nil),
	boolD("appendonly", "", DenyLoading, false, func(c *Config) *bool { return &c.AppendOnly }, nil),
	boolD("cluster-allow-reads-when-down", "", 0, false, nil, nil),
	boolD("cluster-allow-pubsubshard-when-down", "", 0, true, nil, nil),
	boolD("crash-log-enabled", "", 0, true, nil, nil),
	boolD("crash-memcheck-enabled", "", 0, true, nil, nil),
	boolD("use-exit-on-panic", "", Hidden, false, nil, nil),
	boolD("lua-enable-deprecated-api", "", Immutable|Hidden, false, func(c *Config) *bool { return &c.LuaEnableDeprecatedAPI }, nil),
	boolD("disable-thp", "", Immutable, true, nil, nil),
	boolD("cluster-allow-replica-migration", "", 0, true, nil, nil),
	boolD("replica-announced", "", 0, true, func(c *Config) *bool { return &c.ReplicaAnnounced }, nil),
	boolD("latency-tracking", "", 0, true, func(c *Config) *bool { return &c.LatencyTracking }, nil),
	boolD("aof-disable-auto-gc", "", 0, false, func(c *Config) *bool { return &c.AOFDisableAutoGC }, nil),
	boolD("replica-ignore-disk-write-errors", "", 0, false, nil, nil),

	// String configs. EmptyIsNull ones default to unset.
	strD("aclfile", "", Immutable, "", nil, nil),
	strD("unixsocket", "", Immutable|EmptyIsNull, "", func(c *Config) *string { return &c.UnixSocket }, nil),
	strD("pidfile", "", Immutable|EmptyIsNull, "", func(c *Config) *string { return &c.PidFile }, nil),
	strD("replica-announce-ip", "slave-announce-ip", EmptyIsNull, "", func(c *Config) *string { return &c.ReplicaAnnounceIP }, nil),
	strD("masteruser", "", Sensitive|EmptyIsNull, "", func(c *Config) *string { return &c.MasterUser }, nil),
	strD("cluster-announce-ip", "", EmptyIsNull, "", nil, nil),
	strD("cluster-config-file", "", Immutable, "nodes.conf", nil, nil),
	strD("cluster-announce-hostname", "", EmptyIsNull, "", nil, validHostname),
	strD("syslog-ident", "", Immutable, "redis", func(c *Config) *string { return &c.SyslogIdent }, nil),
	strD("dbfilename", "", Protected, "dump.rdb", func(c *Config) *string { return &c.DBFilename }, validDBFilename),
	strD("appendfilename", "", Immutable, "appendonly.aof", func(c *Config) *string { return &c.AppendFilename }, validAOFFilename),
	strD("appenddirname", "", Immutable, "appendonlydir", func(c *Config) *string { return &c.AppendDirName }, validAOFDirname),
	strD("server_cpulist", "", Immutable|EmptyIsNull, "", nil, nil),
	strD("bio_cpulist", "", Immutable|EmptyIsNull, "", nil, nil),
	strD("aof_rewrite_cpulist", "", Immutable|EmptyIsNull, "", nil, nil),
	strD("bgsave_cpulist", "", Immutable|EmptyIsNull, "", nil, nil),
	strD("ignore-warnings", "", 0, "", nil, nil),
	strD("proc-title-template", "", 0, "{title} {listen-addr} {server-mode}", nil, validProcTitle),
	strD("bind-source-addr", "", EmptyIsNull, "", func(c *Config) *string { return &c.BindSourceAddr }, nil),
	strD("logfile", "", Immutable, "", func(c *Config) *string { return &c.LogFile }, nil),
	strD("masterauth", "", Sensitive|EmptyIsNull, "", func(c *Config) *string { return &c.MasterAuth }, nil),
	strD("requirepass", "", Sensitive|EmptyIsNull, "", func(c *Config) *string { return &c.RequirePass }, nil),

	// Enum configs.
	enumD("supervised", "", Immutable, []enumItem{{"upstart", 1, false}, {"systemd", 2, false}, {"auto", 3, false}, {"no", 0, false}}, "no", func(c *Config) *string { return &c.Supervised }),
	enumD("syslog-facility", "", Immutable, []enumItem{
		{"user", 1, false}, {"local0", 16, false}, {"local1", 17, false}, {"local2", 18, false}, {"local3", 19, false},
		{"local4", 20, false}, {"local5", 21, false}, {"local6", 22, false}, {"local7", 23, false},
	}, "local0", func(c *Config) *string { return &c.SyslogFacility }),
	enumD("repl-diskless-load", "", DenyLoading, []enumItem{{"disabled", 0, false}, {"on-empty-db", 1, false}, {"swapdb", 2, false}}, "disabled", func(c *Config) *string { return &c.ReplDisklessLoad }),
	// "nothing" is Redis 7.2's; 7.0 refuses it. Vigil accepts it without
	// listing it, so 7.0's error text is unchanged.
	enumD("loglevel", "", 0, []enumItem{{"debug", 0, false}, {"verbose", 1, false}, {"notice", 2, false}, {"warning", 3, false}, {"nothing", 4, true}}, "notice", func(c *Config) *string { return &c.LogLevel }),
	// Vigil: the shape of the log's lines (internal/logging): redis-server's
	// "pid:role dd Mon yyyy hh:mm:ss.mmm <level> message", or JSON lines.
	enumD("log-format", "", Hidden|VigilOnly, []enumItem{{"redis", 0, false}, {"json", 1, false}}, "redis", func(c *Config) *string { return &c.LogFormat }),
	enumD("maxmemory-policy", "", 0, []enumItem{
		{"volatile-lru", 0, false}, {"volatile-lfu", 1, false}, {"volatile-random", 2, false}, {"volatile-ttl", 3, false},
		{"allkeys-lru", 4, false}, {"allkeys-lfu", 5, false}, {"allkeys-random", 6, false}, {"noeviction", 7, false},
	}, "noeviction", func(c *Config) *string { return &c.MaxmemoryPolicy }),
	enumD("appendfsync", "", 0, []enumItem{{"everysec", 1, false}, {"always", 2, false}, {"no", 0, false}}, "everysec", func(c *Config) *string { return &c.AppendFsync }),
	enumD("oom-score-adj", "", 0, []enumItem{{"no", 0, false}, {"yes", 1, false}, {"relative", 1, false}, {"absolute", 2, false}}, "no", nil),
	enumD("acl-pubsub-default", "", 0, []enumItem{{"allchannels", 1, false}, {"resetchannels", 0, false}}, "resetchannels", nil),
	enumD("sanitize-dump-payload", "", 0, []enumItem{{"no", 0, false}, {"yes", 1, false}, {"clients", 2, false}}, "no", nil),
	enumD("enable-protected-configs", "", Immutable, protectedActions, "no", func(c *Config) *string { return &c.EnableProtectedConfigs }),
	enumD("enable-debug-command", "", Immutable, protectedActions, "no", func(c *Config) *string { return &c.EnableDebugCommand }),
	enumD("enable-module-command", "", Immutable, protectedActions, "no", func(c *Config) *string { return &c.EnableModuleCommand }),
	enumD("cluster-preferred-endpoint-type", "", 0, []enumItem{{"ip", 0, false}, {"hostname", 1, false}, {"unknown-endpoint", 2, false}}, "ip", nil),
	enumD("propagation-error-behavior", "", 0, []enumItem{{"ignore", 0, false}, {"panic", 1, false}, {"panic-on-replicas", 2, false}}, "ignore", func(c *Config) *string { return &c.PropagationErrorBehavior }),
	flagsD("shutdown-on-sigint", 0, shutdownFlags, 0, func(c *Config) *int { return &c.ShutdownOnSigint }, validShutdownFlags),
	flagsD("shutdown-on-sigterm", 0, shutdownFlags, 0, func(c *Config) *int { return &c.ShutdownOnSigterm }, validShutdownFlags),

	// Integer configs.
	numD("databases", "", Immutable, TypeInt, 1, intMax, 16, fNum(func(c *Config) *int { return &c.Databases })),
	numD("port", "", 0, TypeInt, 0, 65535, 6379, fNum(func(c *Config) *int { return &c.Port })),
	numD("io-threads", "", Immutable, TypeInt, 1, 128, 1, numAcc{}),
	numD("auto-aof-rewrite-percentage", "", 0, TypeInt, 0, intMax, 100, fNum(func(c *Config) *int { return &c.AutoAOFRewritePercentage })),
	numD("cluster-replica-validity-factor", "cluster-slave-validity-factor", 0, TypeInt, 0, intMax, 10, numAcc{}),
	numD("list-max-listpack-size", "list-max-ziplist-size", 0, TypeInt, intMin, intMax, -2, fNum(func(c *Config) *int { return &c.ListMaxListpackSize })),
	numD("tcp-keepalive", "", 0, TypeInt, 0, intMax, 300, fNum(func(c *Config) *int { return &c.TCPKeepAlive })),
	numD("cluster-migration-barrier", "", 0, TypeInt, 0, intMax, 1, numAcc{}),
	numD("active-defrag-cycle-min", "", 0, TypeInt, 1, 99, 1, numAcc{}),
	numD("active-defrag-cycle-max", "", 0, TypeInt, 1, 99, 25, numAcc{}),
	numD("active-defrag-threshold-lower", "", 0, TypeInt, 0, 1000, 10, numAcc{}),
	numD("active-defrag-threshold-upper", "", 0, TypeInt, 0, 1000, 100, numAcc{}),
	numD("lfu-log-factor", "", 0, TypeInt, 0, intMax, 10, fNum(func(c *Config) *int { return &c.LFULogFactor })),
	numD("lfu-decay-time", "", 0, TypeInt, 0, intMax, 1, fNum(func(c *Config) *int { return &c.LFUDecayTime })),
	numD("replica-priority", "slave-priority", 0, TypeInt, 0, intMax, 100, fNum(func(c *Config) *int { return &c.ReplicaPriority })),
	numD("repl-diskless-sync-delay", "", 0, TypeInt, 0, intMax, 5, fNum(func(c *Config) *int { return &c.ReplDisklessSyncDelay })),
	numD("maxmemory-samples", "", 0, TypeInt, 1, intMax, 5, fNum(func(c *Config) *int { return &c.MaxmemorySamples })),
	numD("maxmemory-eviction-tenacity", "", 0, TypeInt, 0, 100, 10, fNum(func(c *Config) *int { return &c.MaxmemoryEvictionTenacity })),
	numD("timeout", "", 0, TypeInt, 0, intMax, 0, fNum(func(c *Config) *int { return &c.Timeout })),
	numD("replica-announce-port", "slave-announce-port", 0, TypeInt, 0, 65535, 0, fNum(func(c *Config) *int { return &c.ReplicaAnnouncePort })),
	numD("tcp-backlog", "", Immutable, TypeInt, 0, intMax, 511, fNum(func(c *Config) *int { return &c.TCPBacklog })),
	numD("cluster-port", "", Immutable, TypeInt, 0, 65535, 0, numAcc{}),
	numD("cluster-announce-bus-port", "", 0, TypeInt, 0, 65535, 0, numAcc{}),
	numD("cluster-announce-port", "", 0, TypeInt, 0, 65535, 0, numAcc{}),
	numD("cluster-announce-tls-port", "", 0, TypeInt, 0, 65535, 0, numAcc{}),
	numD("repl-timeout", "", 0, TypeInt, 1, intMax, 60, fNum(func(c *Config) *int { return &c.ReplTimeout })),
	numD("repl-ping-replica-period", "repl-ping-slave-period", 0, TypeInt, 1, intMax, 10, fNum(func(c *Config) *int { return &c.ReplPingReplicaPeriod })),
	numD("list-compress-depth", "", 0, TypeInt, 0, intMax, 0, fNum(func(c *Config) *int { return &c.ListCompressDepth })),
	numD("rdb-key-save-delay", "", Hidden, TypeInt, intMin, intMax, 0, fNum(func(c *Config) *int { return &c.RDBKeySaveDelay })),
	numD("key-load-delay", "", Hidden, TypeInt, intMin, intMax, 0, fNum(func(c *Config) *int { return &c.KeyLoadDelay })),
	numD("active-expire-effort", "", 0, TypeInt, 1, 10, 1, fNum(func(c *Config) *int { return &c.ActiveExpireEffort })),
	hzD(),
	numD("min-replicas-to-write", "min-slaves-to-write", 0, TypeInt, 0, intMax, 0, fNum(func(c *Config) *int { return &c.MinReplicasToWrite })),
	numD("min-replicas-max-lag", "min-slaves-max-lag", 0, TypeInt, 0, intMax, 10, fNum(func(c *Config) *int { return &c.MinReplicasMaxLag })),
	// Vigil's sync-ack mode (docs/safety.md): a write's reply waits for
	// this many replicas to acknowledge its offset (0: off), at most the
	// timeout in milliseconds (0: forever).
	numD("min-replicas-ack", "", Hidden|VigilOnly, TypeInt, 0, intMax, 0, fNum(func(c *Config) *int { return &c.MinReplicasAck })),
	numD("min-replicas-ack-timeout", "", Hidden|VigilOnly, TypeInt, 0, intMax, 1000, fNum(func(c *Config) *int { return &c.MinReplicasAckTimeout })),
	// Vigil's Prometheus endpoint (internal/metrics): /metrics over HTTP on
	// this port at the bind addresses, 0 = off. Read at startup only.
	numD("metrics-port", "", Immutable|Hidden|VigilOnly, TypeInt, 0, 65535, 0, fNum(func(c *Config) *int { return &c.MetricsPort })),
	// Vigil: pub/sub counts in arrival order (server/order.go); "no" saves
	// PUBLISH the epoll_wait it takes when the channel has subscribers.
	boolD("pubsub-arrival-order", "", Hidden|VigilOnly, true, func(c *Config) *bool { return &c.PubsubArrivalOrder }, nil),
	// Vigil's fencing (docs/safety.md): the config epoch this server was
	// configured at, the fence raised by a later epoch, and the
	// self-fencing bound of a master cut from its sentinels and replicas.
	numD("master-config-epoch", "", Hidden|VigilOnly, TypeInt, 0, llongMax, 0, fNum(func(c *Config) *int64 { return &c.MasterConfigEpoch })),
	strD("master-fence", "", Hidden|VigilOnly, "", func(c *Config) *string { return &c.MasterFence }, validFence),
	// The sentinels a master learned from hellos, kept across a restart so
	// the isolation rule applies before the first hello (fence.go).
	strD("master-known-sentinels", "", Hidden|VigilOnly, "", func(c *Config) *string { return &c.MasterKnownSentinels }, validKnownSentinels),
	// The sentinels that confirmed a sync-ack INFO (vigil-sentinels): a
	// replica's acks count once each known one saw it (server/syncack.go).
	strD("master-sync-ack-sentinels", "", Hidden|VigilOnly, "", func(c *Config) *string { return &c.MasterSyncAckSentinels }, validKnownSentinels),
	numD("master-isolation-timeout", "", Hidden|VigilOnly, TypeInt, 0, intMax, 10000, fNum(func(c *Config) *int { return &c.MasterIsolationTimeout })),
	numD("watchdog-period", "", Hidden, TypeInt, 0, intMax, 0, numAcc{}),
	numD("shutdown-timeout", "", 0, TypeInt, 0, intMax, 10, fNum(func(c *Config) *int { return &c.ShutdownTimeout })),
	numD("repl-diskless-sync-max-replicas", "", 0, TypeInt, 0, intMax, 0, fNum(func(c *Config) *int { return &c.ReplDisklessSyncMaxReplicas })),

	// Unsigned int configs.
	numD("maxclients", "", Unsigned, TypeInt, 1, uintMax, 10000, fNum(func(c *Config) *int { return &c.MaxClients })),
	numD("unixsocketperm", "", Immutable|Unsigned, TypeOctal, 0, 0o777, 0, fNum(func(c *Config) *uint32 { return &c.UnixSocketPerm })),
	numD("socket-mark-id", "", Immutable|Unsigned, TypeInt, 0, uintMax, 0, numAcc{}),

	// Unsigned long configs (bound-checked as signed by Redis).
	numD("active-defrag-max-scan-fields", "", 0, TypeInt, 1, longMax, 1000, numAcc{}),
	numD("slowlog-max-len", "", 0, TypeInt, 0, longMax, 128, fNum(func(c *Config) *int { return &c.SlowlogMaxLen })),
	numD("acllog-max-len", "", 0, TypeInt, 0, longMax, 128, numAcc{}),

	// Long long configs.
	numD("busy-reply-threshold", "lua-time-limit", 0, TypeInt, 0, longMax, 5000, fNum(func(c *Config) *int64 { return &c.BusyReplyThreshold })),
	numD("cluster-node-timeout", "", 0, TypeInt, 0, llongMax, 15000, numAcc{}),
	numD("slowlog-log-slower-than", "", 0, TypeInt, -1, llongMax, 10000, fNum(func(c *Config) *int64 { return &c.SlowlogLogSlowerThan })),
	numD("latency-monitor-threshold", "", 0, TypeInt, 0, llongMax, 0, fNum(func(c *Config) *int64 { return &c.LatencyMonitorThreshold })),
	numD("proto-max-bulk-len", "", 0, TypeMemory, 1024*1024, longMax, 512*1024*1024, fNum(func(c *Config) *int64 { return &c.ProtoMaxBulkLen })),
	numD("stream-node-max-entries", "", 0, TypeInt, 0, llongMax, 100, fNum(func(c *Config) *int64 { return &c.StreamNodeMaxEntries })),
	numD("repl-backlog-size", "", 0, TypeMemory, 1, llongMax, 1024*1024, fNum(func(c *Config) *int64 { return &c.ReplBacklogSize })),

	// Unsigned long long configs. Maxmemory above 2^63-1 is stored as its
	// two's complement, as C would.
	numD("maxmemory", "", Unsigned, TypeMemory, 0, ullMax, 0, fNum(func(c *Config) *int64 { return &c.Maxmemory })),
	numD("cluster-link-sendbuf-limit", "", Unsigned, TypeMemory, 0, ullMax, 0, numAcc{}),

	// size_t configs.
	numD("hash-max-listpack-entries", "hash-max-ziplist-entries", Unsigned, TypeInt, 0, longMax, 512, fNum(func(c *Config) *int64 { return &c.HashMaxListpackEntries })),
	numD("set-max-intset-entries", "", Unsigned, TypeInt, 0, longMax, 512, fNum(func(c *Config) *int64 { return &c.SetMaxIntsetEntries })),
	numD("zset-max-listpack-entries", "zset-max-ziplist-entries", Unsigned, TypeInt, 0, longMax, 128, fNum(func(c *Config) *int64 { return &c.ZsetMaxListpackEntries })),
	numD("active-defrag-ignore-bytes", "", Unsigned, TypeMemory, 1, llongMax, 100<<20, numAcc{}),
	numD("hash-max-listpack-value", "hash-max-ziplist-value", Unsigned, TypeMemory, 0, longMax, 64, fNum(func(c *Config) *int64 { return &c.HashMaxListpackValue })),
	numD("stream-node-max-bytes", "", Unsigned, TypeMemory, 0, longMax, 4096, fNum(func(c *Config) *int64 { return &c.StreamNodeMaxBytes })),
	numD("zset-max-listpack-value", "zset-max-ziplist-value", Unsigned, TypeMemory, 0, longMax, 64, fNum(func(c *Config) *int64 { return &c.ZsetMaxListpackValue })),
	numD("hll-sparse-max-bytes", "", Unsigned, TypeMemory, 0, longMax, 3000, fNum(func(c *Config) *int64 { return &c.HLLSparseMaxBytes })),
	numD("tracking-table-max-keys", "", Unsigned, TypeInt, 0, longMax, 1000000, fNum(func(c *Config) *int64 { return &c.TrackingTableMaxKeys })),
	numD("client-query-buffer-limit", "", Unsigned, TypeMemory, 1024*1024, longMax, 1024*1024*1024, fNum(func(c *Config) *int64 { return &c.ClientQueryBufferLimit })),
	// ssize_t, memory or percent of maxmemory (stored negated).
	numD("maxmemory-clients", "", Percent, TypeMemory, -100, longMax, 0, fNum(func(c *Config) *int64 { return &c.MaxmemoryClients })),

	// Other numeric configs.
	numD("repl-backlog-ttl", "", 0, TypeInt, 0, longMax, 3600, fNum(func(c *Config) *int64 { return &c.ReplBacklogTTL })),
	numD("auto-aof-rewrite-min-size", "", 0, TypeMemory, 0, llongMax, 64*1024*1024, fNum(func(c *Config) *int64 { return &c.AutoAOFRewriteMinSize })),
	numD("loading-process-events-interval-bytes", "", Hidden, TypeInt, 1024, intMax, 2*1024*1024, numAcc{}),

	// TLS configs (Debian builds Redis with TLS).
	numD("tls-port", "", 0, TypeInt, 0, 65535, 0, numAcc{}),
	numD("tls-session-cache-size", "", 0, TypeInt, 0, intMax, 20*1024, numAcc{}),
	numD("tls-session-cache-timeout", "", 0, TypeInt, 0, intMax, 300, numAcc{}),
	boolD("tls-cluster", "", 0, false, nil, nil),
	boolD("tls-replication", "", 0, false, nil, nil),
	enumD("tls-auth-clients", "", 0, []enumItem{{"no", 0, false}, {"yes", 1, false}, {"optional", 2, false}}, "yes", nil),
	boolD("tls-prefer-server-ciphers", "", 0, false, nil, nil),
	boolD("tls-session-caching", "", 0, true, nil, nil),
	strD("tls-cert-file", "", EmptyIsNull, "", nil, nil),
	strD("tls-key-file", "", EmptyIsNull, "", nil, nil),
	strD("tls-key-file-pass", "", EmptyIsNull, "", nil, nil),
	strD("tls-client-cert-file", "", EmptyIsNull, "", nil, nil),
	strD("tls-client-key-file", "", EmptyIsNull, "", nil, nil),
	strD("tls-client-key-file-pass", "", EmptyIsNull, "", nil, nil),
	strD("tls-dh-params-file", "", EmptyIsNull, "", nil, nil),
	strD("tls-ca-cert-file", "", EmptyIsNull, "", nil, nil),
	strD("tls-ca-cert-dir", "", EmptyIsNull, "", nil, nil),
	strD("tls-protocols", "", EmptyIsNull, "", nil, nil),
	strD("tls-ciphers", "", EmptyIsNull, "", nil, nil),
	strD("tls-ciphersuites", "", EmptyIsNull, "", nil, nil),

	// Special configs.
	dirD(),
	saveD(),
	clientOutputBufferLimitD(),
	oomScoreAdjValuesD(),
	notifyKeyspaceEventsD(),
	bindD(),
	replicaofD(),
	latencyPercentilesD(),
}

var protectedActions = []enumItem{{"no", 0, false}, {"yes", 1, false}, {"local", 2, false}}

var shutdownFlags = []enumItem{
	{"default", 0, false}, {"save", ShutdownSave, false}, {"nosave", ShutdownNoSave, false},
	{"now", ShutdownNow, false}, {"force", ShutdownForce, false},
	{"failover", ShutdownFailover, true}, // Vigil; hidden: the error lists Redis's values
}

// hzD is hz: any non-negative value is accepted and clamped to 1..500
// (updateHZ), so CONFIG GET shows the clamped value.
func hzD() *Directive {
	d := numD("hz", "", 0, TypeInt, 0, intMax, 10, fNum(func(c *Config) *int { return &c.Hz }))
	set := d.set
	d.set = func(c *Config, args []string) error {
		if err := set(c, args); err != nil {
			return err
		}
		c.Hz = min(max(c.Hz, minHz), maxHz)
		return nil
	}
	return d
}

// dirD is dir: setting it checks the directory as chdir would, relative
// paths resolving against the current Dir (redis-server chdirs into it, so a
// later relative dir or include is relative to it). The stored value is
// absolute, symbolic links resolved, as getcwd reports it.
func dirD() *Directive {
	d := &Directive{Name: "dir", Type: TypeSpecial, Flags: Protected | DenyLoading}
	d.init = func(c *Config) {}
	d.get = func(c *Config) string { return c.Dir }
	d.set = func(c *Config, args []string) error {
		if len(args) != 1 {
			return errWrongArgs
		}
		p := args[0]
		if p == "" {
			return errors.New(redisutil.Strerror(syscall.ENOENT))
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(c.Dir, p)
		}
		fi, err := os.Stat(p)
		if err != nil {
			return errors.New(redisutil.Strerror(err))
		}
		if !fi.IsDir() {
			return errors.New(redisutil.Strerror(syscall.ENOTDIR))
		}
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		c.Dir = filepath.Clean(p)
		return nil
	}
	d.rewrite = func(c *Config, s *RewriteState) {
		if c.Dir == "" {
			s.MarkProcessed("dir")
			return
		}
		s.RewriteLine("dir", "dir "+redisutil.Quote(c.Dir), true)
	}
	d.check = func(c *Config) error {
		if c.Dir == "" || !filepath.IsAbs(c.Dir) {
			return fmt.Errorf("dir %q: must be an absolute path", c.Dir)
		}
		return nil
	}
	return d
}

var defaultSave = []SaveParam{{3600, 1}, {300, 100}, {60, 10000}}

// saveD is save. While a file is loaded the first save line replaces the
// defaults and the next ones add to it; CONFIG SET replaces the whole list.
// A single "" empties it.
func saveD() *Directive {
	d := &Directive{Name: "save", Type: TypeSpecial, Flags: MultiArg, Default: "3600 1 300 100 60 10000"}
	d.init = func(c *Config) { c.Save = slices.Clone(defaultSave) }
	d.get = func(c *Config) string {
		parts := make([]string, len(c.Save))
		for i, p := range c.Save {
			parts[i] = strconv.FormatInt(p.Seconds, 10) + " " + strconv.Itoa(p.Changes)
		}
		return strings.Join(parts, " ")
	}
	d.set = func(c *Config, args []string) error {
		if len(args) == 1 && args[0] == "" {
			c.Save = nil
			args = nil
		}
		if len(args)%2 != 0 {
			return errors.New(reasonSave)
		}
		params := make([]SaveParam, 0, len(args)/2)
		for j := 0; j < len(args); j += 2 {
			secs, rest, _ := strtoll(args[j], 10)
			if rest != "" || secs < 1 {
				return errors.New(reasonSave)
			}
			changes, rest, _ := strtoll(args[j+1], 10)
			if rest != "" || changes < 0 {
				return errors.New(reasonSave)
			}
			params = append(params, SaveParam{Seconds: secs, Changes: int(int32(changes))})
		}
		if c.loading == nil || !c.loading.saveLoaded {
			c.Save = nil
			if c.loading != nil {
				c.loading.saveLoaded = true
			}
		}
		c.Save = append(c.Save, params...)
		return nil
	}
	d.rewrite = func(c *Config, s *RewriteState) {
		if len(c.Save) == 0 {
			s.RewriteLine("save", `save ""`, true)
		}
		for _, p := range c.Save {
			s.RewriteLine("save", "save "+strconv.FormatInt(p.Seconds, 10)+" "+strconv.Itoa(p.Changes), true)
		}
		s.MarkProcessed("save")
	}
	d.check = func(c *Config) error {
		for _, p := range c.Save {
			if p.Seconds < 1 || p.Changes < 0 {
				return fmt.Errorf("save %d %d: %s", p.Seconds, p.Changes, reasonSave)
			}
		}
		return nil
	}
	return d
}

var defaultBufferLimits = [ClientClasses]BufferLimit{
	{0, 0, 0},
	{256 * 1024 * 1024, 64 * 1024 * 1024, 60},
	{32 * 1024 * 1024, 8 * 1024 * 1024, 60},
}

// clientClass is getClientTypeByName; master is a class but not a valid one
// for buffer limits.
func clientClass(name string) int {
	switch strings.ToLower(name) {
	case "normal":
		return ClientNormal
	case "slave", "replica":
		return ClientReplica
	case "pubsub":
		return ClientPubSub
	}
	return -1
}

var clientClassNames = [ClientClasses]string{"normal", "slave", "pubsub"}

// clientOutputBufferLimitD is client-output-buffer-limit <class> <hard>
// <soft> <soft seconds> [...]: all groups are checked before any is stored.
func clientOutputBufferLimitD() *Directive {
	d := &Directive{Name: "client-output-buffer-limit", Type: TypeSpecial, Flags: MultiArg,
		Default: "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"}
	d.init = func(c *Config) { c.ClientOutputBufferLimits = defaultBufferLimits }
	d.get = func(c *Config) string {
		parts := make([]string, ClientClasses)
		for i, l := range c.ClientOutputBufferLimits {
			parts[i] = fmt.Sprintf("%s %d %d %d", clientClassNames[i], l.HardBytes, l.SoftBytes, l.SoftSeconds)
		}
		return strings.Join(parts, " ")
	}
	d.set = func(c *Config, args []string) error {
		if len(args)%4 != 0 {
			return errors.New("Wrong number of arguments in buffer limit configuration.")
		}
		limits := c.ClientOutputBufferLimits
		for j := 0; j < len(args); j += 4 {
			class := clientClass(args[j])
			if class < 0 {
				return errors.New("Invalid client class specified in buffer limit configuration.")
			}
			hard, ok1 := memtoull(args[j+1])
			soft, ok2 := memtoull(args[j+2])
			secs, rest, _ := strtoll(args[j+3], 10)
			if !ok1 || !ok2 || int32(secs) < 0 || rest != "" {
				return errors.New("Error in hard, soft or soft_seconds setting in buffer limit configuration.")
			}
			limits[class] = BufferLimit{HardBytes: hard, SoftBytes: soft, SoftSeconds: int(int32(secs))}
		}
		c.ClientOutputBufferLimits = limits
		return nil
	}
	d.rewrite = func(c *Config, s *RewriteState) {
		for i, l := range c.ClientOutputBufferLimits {
			name := clientClassNames[i]
			if name == "slave" {
				name = "replica"
			}
			line := fmt.Sprintf("client-output-buffer-limit %s %s %s %d", name,
				formatMemory(int64(l.HardBytes)), formatMemory(int64(l.SoftBytes)), l.SoftSeconds)
			s.RewriteLine("client-output-buffer-limit", line, l != defaultBufferLimits[i])
		}
	}
	return d
}

var defaultOOMScoreAdjValues = [3]int{0, 200, 800}

func oomScoreAdjValuesD() *Directive {
	d := &Directive{Name: "oom-score-adj-values", Type: TypeSpecial, Flags: MultiArg, Default: "0 200 800"}
	d.init = func(c *Config) { c.OOMScoreAdjValues = defaultOOMScoreAdjValues }
	d.get = func(c *Config) string {
		v := c.OOMScoreAdjValues
		return fmt.Sprintf("%d %d %d", v[0], v[1], v[2])
	}
	d.set = func(c *Config, args []string) error {
		if len(args) != 3 {
			return errWrongArgs
		}
		var vals [3]int
		for i, a := range args {
			v, rest, _ := strtoll(a, 10)
			if rest != "" || v < -2000 || v > 2000 {
				return errors.New("Invalid oom-score-adj-values, elements must be between -2000 and 2000.")
			}
			vals[i] = int(v)
		}
		c.OOMScoreAdjValues = vals
		return nil
	}
	d.rewrite = func(c *Config, s *RewriteState) {
		s.RewriteLine("oom-score-adj-values", "oom-score-adj-values "+d.get(c), c.OOMScoreAdjValues != defaultOOMScoreAdjValues)
	}
	return d
}

func notifyKeyspaceEventsD() *Directive {
	d := &Directive{Name: "notify-keyspace-events", Type: TypeSpecial}
	d.init = func(c *Config) { c.NotifyKeyspaceEvents = 0 }
	d.get = func(c *Config) string { return FormatKeyspaceEvents(c.NotifyKeyspaceEvents) }
	d.set = func(c *Config, args []string) error {
		if len(args) != 1 {
			return errWrongArgs
		}
		flags, ok := ParseKeyspaceEvents(args[0])
		if !ok {
			return errors.New("Invalid event class character. Use 'Ag$lshzxeKEtmdn'.")
		}
		c.NotifyKeyspaceEvents = flags
		return nil
	}
	d.rewrite = func(c *Config, s *RewriteState) {
		s.RewriteLine("notify-keyspace-events", "notify-keyspace-events "+redisutil.Quote(d.get(c)), c.NotifyKeyspaceEvents != 0)
	}
	return d
}

var defaultBind = []string{"*", "-::*"}

func bindD() *Directive {
	d := &Directive{Name: "bind", Type: TypeSpecial, Flags: MultiArg, Default: "* -::*"}
	d.init = func(c *Config) { c.Bind = slices.Clone(defaultBind) }
	d.get = func(c *Config) string { return strings.Join(c.Bind, " ") }
	d.set = func(c *Config, args []string) error {
		if len(args) > bindMax {
			return errors.New(reasonTooManyBind)
		}
		if len(args) == 1 && args[0] == "" {
			args = nil
		}
		c.Bind = slices.Clone(args)
		if c.Bind == nil {
			c.Bind = []string{}
		}
		return nil
	}
	d.rewrite = func(c *Config, s *RewriteState) {
		if slices.Equal(c.Bind, defaultBind) {
			s.MarkProcessed("bind")
			return
		}
		addrs := `""`
		if len(c.Bind) > 0 {
			addrs = strings.Join(c.Bind, " ")
		}
		s.RewriteLine("bind", "bind "+addrs, true)
	}
	return d
}

// replicaofD is replicaof <host> <port> | replicaof no one. It is immutable:
// the REPLICAOF command changes the role at run time (and then updates
// Config.ReplicaOf itself).
func replicaofD() *Directive {
	d := &Directive{Name: "replicaof", Alias: "slaveof", Type: TypeSpecial, Flags: Immutable | MultiArg}
	d.init = func(c *Config) { c.ReplicaOf = Address{} }
	d.get = func(c *Config) string {
		if c.ReplicaOf.Host == "" {
			return ""
		}
		return c.ReplicaOf.Host + " " + strconv.Itoa(c.ReplicaOf.Port)
	}
	d.set = func(c *Config, args []string) error {
		if len(args) != 2 {
			return errWrongArgs
		}
		if strings.EqualFold(args[0], "no") && strings.EqualFold(args[1], "one") {
			c.ReplicaOf = Address{}
			return nil
		}
		port, rest, overflow := strtoll(args[1], 10)
		if overflow || rest != "" || port < 0 || port > 65535 {
			return errors.New(reasonMasterPort)
		}
		c.ReplicaOf = Address{Host: args[0], Port: int(port)}
		return nil
	}
	d.rewrite = func(c *Config, s *RewriteState) {
		if c.ClusterEnabled || c.ReplicaOf.Host == "" {
			s.MarkProcessed("replicaof")
			return
		}
		s.RewriteLine("replicaof", "replicaof "+c.ReplicaOf.Host+" "+strconv.Itoa(c.ReplicaOf.Port), true)
	}
	d.check = func(c *Config) error {
		if c.ReplicaOf.Host != "" && (c.ReplicaOf.Port < 0 || c.ReplicaOf.Port > 65535) {
			return errors.New(reasonMasterPort)
		}
		return nil
	}
	return d
}

var defaultPercentiles = []float64{50, 99, 99.9}

func latencyPercentilesD() *Directive {
	d := &Directive{Name: "latency-tracking-info-percentiles", Type: TypeSpecial, Flags: MultiArg, Default: "50 99 99.9"}
	d.init = func(c *Config) { c.LatencyTrackingInfoPercentiles = slices.Clone(defaultPercentiles) }
	d.get = func(c *Config) string {
		parts := make([]string, len(c.LatencyTrackingInfoPercentiles))
		for i, f := range c.LatencyTrackingInfoPercentiles {
			parts[i] = formatDouble(f)
		}
		return strings.Join(parts, " ")
	}
	d.set = func(c *Config, args []string) error {
		if len(args) == 1 && args[0] == "" {
			args = nil
		}
		vals := []float64{}
		for _, a := range args {
			f, ok := string2d(a)
			if !ok {
				return errors.New("Invalid latency-tracking-info-percentiles parameters")
			}
			if f > 100 || f < 0 {
				return errors.New("latency-tracking-info-percentiles parameters should sit between [0.0,100.0]")
			}
			vals = append(vals, f)
		}
		c.LatencyTrackingInfoPercentiles = vals
		return nil
	}
	d.rewrite = func(c *Config, s *RewriteState) {
		line := "latency-tracking-info-percentiles"
		if len(c.LatencyTrackingInfoPercentiles) == 0 {
			line += ` ""`
		}
		for _, f := range c.LatencyTrackingInfoPercentiles {
			line += " " + formatDouble(f)
		}
		s.RewriteLine("latency-tracking-info-percentiles", line, true)
	}
	return d
}

// validKnownSentinels checks master-known-sentinels' value: sentinel keys
// (the first 8 characters of a run ID, SentinelKey) separated by spaces.
func validKnownSentinels(v string) error {
	for _, k := range strings.Fields(v) {
		if len(k) > 8 || strings.ContainsAny(k, "\"'") {
			return errors.New("argument must be sentinel run ID prefixes (8 characters) separated by spaces")
		}
	}
	return nil
}

// validFence checks master-fence's value: "" or "<epoch> <ip> <port>"
// with epoch >= 1 and a TCP port.
func validFence(v string) error {
	f := strings.Fields(v)
	if len(f) == 0 {
		return nil
	}
	bad := errors.New("argument must be empty or '<epoch> <ip> <port>'")
	if len(f) != 3 {
		return bad
	}
	e, err := strconv.ParseUint(f[0], 10, 64)
	p, err2 := strconv.Atoi(f[2])
	if err != nil || err2 != nil || e == 0 || p <= 0 || p > 65535 {
		return bad
	}
	return nil
}
