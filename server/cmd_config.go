package server

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/rs/zerolog"

	"github.com/vigil-kv/vigil/configs"
	"github.com/vigil-kv/vigil/internal/resp"
)

// CONFIG, as config.c (Redis 7.0). The directive table, parsing, atomic
// multi-pair SET and REWRITE live in package configs; this file replies and
// makes the running server follow what changed.

func init() {
	ls := FlagNoScript | FlagLoading | FlagStale
	adm := FlagAdmin | ls
	acl := []string{"admin", "slow", "dangerous"}
	register(&Command{Name: "config", Arity: -2, ACL: []string{"slow"}, Subs: []*Command{
		{Name: "get", Arity: -3, Flags: adm, ACL: acl, Handler: cmdConfigGet},
		{Name: "help", Arity: 2, Flags: FlagLoading | FlagStale, ACL: []string{"slow"}, Handler: helpHandler("CONFIG", configHelp)},
		{Name: "resetstat", Arity: 2, Flags: adm, ACL: acl, Handler: cmdConfigResetStat},
		{Name: "rewrite", Arity: 2, Flags: adm, ACL: acl, Handler: cmdConfigRewrite},
		{Name: "set", Arity: -4, Flags: adm, ACL: acl, Handler: cmdConfigSet},
	}})
}

var configHelp = []string{
	"GET <pattern>",
	"    Return parameters matching the glob-like <pattern> and their values.",
	"SET <directive> <value>",
	"    Set the configuration <directive> to <value>.",
	"RESETSTAT",
	"    Reset statistics reported by the INFO command.",
	"REWRITE",
	"    Rewrite the configuration file.",
}

// configError is the reply for a configs error: its text is the whole
// Redis reply, code included ("ERR ...", "LOADING ...").
func configError(err error) string {
	msg := err.Error()
	if i := strings.IndexByte(msg, ' '); i > 0 && msg[:i] == strings.ToUpper(msg[:i]) {
		return msg
	}
	return "ERR " + msg
}

func cmdConfigGet(c *Client, args [][]byte) {
	patterns := make([]string, len(args)-2)
	for i, a := range args[2:] {
		patterns[i] = string(a)
	}
	kv := c.srv.cfg.Get(patterns...)
	c.w.MapLen(len(kv) / 2)
	for _, s := range kv {
		c.w.BulkString(s)
	}
}

// cmdConfigSet sets every pair or none (configs.Config.Set is atomic);
// the server follows the changes through onConfigSet, then refreshes the
// settings the connection loops read without the lock.
func cmdConfigSet(c *Client, args [][]byte) {
	if (len(args)-2)%2 != 0 {
		c.w.Error(ErrSyntax)
		return
	}
	pairs := make([][2]string, 0, (len(args)-2)/2)
	for i := 2; i < len(args); i += 2 {
		pairs = append(pairs, [2]string{string(args[i]), string(args[i+1])})
		// SENSITIVE_CONFIG values (requirepass, masterauth, masteruser)
		// are redacted for SLOWLOG and MONITOR, whatever the outcome.
		if d, ok := configs.Lookup(string(args[i])); ok && d.Flags&configs.Sensitive != 0 {
			redactArgs(args, i+1, i+1)
		}
	}
	s := c.srv
	local := c.unix || c.conn == nil || isLoopback(c.conn.RemoteAddr())
	// While the dataset loads (an async load too: server.loading is 1
	// then), appendonly, repl-diskless-load and dir are refused: -LOADING.
	if err := s.cfg.SetWith(configs.SetOptions{LocalClient: local, Loading: s.rdb.loading}, pairs...); err != nil {
		c.w.Error(configError(err))
		return
	}
	s.applyAtomics()
	c.w.OK()
}

// hookConfig installs onConfigSet as the configuration's apply hook,
// keeping any hook already installed.
func (s *Server) hookConfig() {
	prev := s.cfg.OnSet
	s.cfg.OnSet = func(name string) error {
		if prev != nil {
			if err := prev(name); err != nil {
				return err
			}
		}
		return s.onConfigSet(name)
	}
}

// onConfigSet is called (under mu, by configs.Config.Set) for each
// directive CONFIG SET changed: the server side of config.c's apply
// functions. maxclients and timeout are atomics refreshed after the Set;
// hz, slowlog-* and latency-* are read where they are used.
func (s *Server) onConfigSet(name string) error {
	switch name {
	case "port": // relisten.go
		return s.relistenTCP("Unable to listen on this port. Check server logs.")
	case "bind": // changeBindAddr: the TCP and the TLS listeners
		if err := s.relistenTCP("Failed to bind to specified addresses."); err != nil {
			return err
		}
		if s.tlsPort != 0 {
			if err := s.relistenTLS(s.tlsPort); err != nil {
				return errors.New("Failed to bind to specified addresses.")
			}
		}
	case "tls-port", "tls-auth-clients": // tls.go
		return s.tlsOnConfigSet(name)
	case "proto-max-bulk-len":
		lim := resp.Limits{MaxBulkLen: s.cfg.ProtoMaxBulkLen, MaxArgs: resp.DefaultLimits.MaxArgs, MaxInline: resp.DefaultLimits.MaxInline}
		// Parsers read their limits in Next, which runs under mu.
		for _, cl := range s.clientsByID() {
			if cl.rd != nil {
				cl.rd.SetLimits(lim)
			}
		}
	case "requirepass", "acl-pubsub-default", "acllog-max-len":
		s.aclOnConfigSet(name)
	case "appendonly", "appendfsync", "no-appendfsync-on-rewrite", "aof-disable-auto-gc": // persistence (persist_aof.go)
		return s.aofOnConfigSet(name)
	case "watchdog-period", "hz": // watchdog.go
		s.watchdogConfigure()
	case "repl-backlog-size": // repl_master.go: updateReplBacklogSize
		s.resizeBacklog()
	case "maxmemory": // evict.go: updateMaxmemory evicts once applied
		s.evict.configChanged = true
	case "master-config-epoch", "master-fence", "master-known-sentinels": // fence.go
		s.fenceOnConfigSet(name)
	case "master-sync-ack-sentinels": // syncack.go
		s.syncAck.gate.RestoreConfirmers(s.cfg.MasterSyncAckSentinels)
		s.processWaitingReplicas(s.repl.offset)
	case "master-isolation-timeout", "min-replicas-to-write", "min-replicas-ack": // fence.go: the rule changed
		s.fence.Recheck()
	case "proc-title-template": // updateProcTitleTemplate
		s.SetProcTitle()
	case "oom-score-adj", "oom-score-adj-values": // updateOOMScoreAdj
		if v := s.cfg.OOMScoreAdjValues; name == "oom-score-adj-values" && (v[1] < v[0] || v[2] < v[1]) {
			s.log.Warn().Msg("The oom-score-adj-values configuration may not work for non-privileged processes! Please consult the documentation.")
		}
		if s.setOOMScoreAdj(-1) != nil {
			return errors.New("Failed to set current oom_score_adj. Check server logs.")
		}
	case "loglevel":
		s.adm.logLevel.Store(int32(redisLogLevel(s.cfg.LogLevel)))
	case "log-format":
		if s.logFmt != nil {
			s.logFmt(s.cfg.LogFormat)
		}
	case "maxclients": // updateMaxclients
		n, err := s.adjustOpenFilesLimit(s.cfg.MaxClients)
		if err != nil {
			return err
		}
		if n != s.cfg.MaxClients {
			return fmt.Errorf("The operating system is not able to handle the specified number of clients, try with %d", n)
		}
	default:
		if tlsApplied[name] { // tls.go: applyTlsCfg
			return s.tlsOnConfigSet(name)
		}
	}
	return nil
}

// redisLogLevel maps the loglevel directive onto zerolog, as the
// command's logger does (internal/logging.Level): debug is trace, verbose
// is debug.
func redisLogLevel(level string) zerolog.Level {
	switch strings.ToLower(level) {
	case "debug":
		return zerolog.TraceLevel
	case "verbose":
		return zerolog.DebugLevel
	case "warning":
		return zerolog.WarnLevel
	case "nothing":
		return zerolog.Disabled
	}
	return zerolog.InfoLevel
}

// levelGate is a zerolog hook that drops events below a level that
// CONFIG SET loglevel can change while other goroutines log.
type levelGate struct{ lvl *atomic.Int32 }

func (g levelGate) Run(e *zerolog.Event, l zerolog.Level, msg string) {
	if l < zerolog.Level(g.lvl.Load()) {
		e.Discard()
	}
}

// gateLogger returns log with its level under the gate's control: the
// logger itself passes everything and the hook filters.
func (a *adminState) gateLogger(log zerolog.Logger) zerolog.Logger {
	a.logLevel.Store(int32(log.GetLevel()))
	return log.Level(zerolog.TraceLevel).Hook(levelGate{&a.logLevel})
}

// cmdConfigResetStat is CONFIG RESETSTAT: INFO stats, commandstats,
// errorstats, latencystats and the memory peak.
func cmdConfigResetStat(c *Client, args [][]byte) {
	c.srv.resetStats()
	c.srv.adm.resetStats()
	c.w.OK()
}

func cmdConfigRewrite(c *Client, args [][]byte) {
	s := c.srv
	if s.cfg.File == "" {
		c.w.Error(ErrNoConfigFile)
		return
	}
	if err := s.cfg.Rewrite(); err != nil {
		s.log.Warn().Err(err).Msg("CONFIG REWRITE failed")
		c.w.Error(configError(err))
		return
	}
	s.log.Info().Msg("CONFIG REWRITE executed with success.")
	c.w.OK()
}
