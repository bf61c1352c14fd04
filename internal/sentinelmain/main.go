package sentinelmain

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/vigil-kv/vigil/configs"
	"github.com/vigil-kv/vigil/internal/logging"
	"github.com/vigil-kv/vigil/internal/metrics"
	"github.com/vigil-kv/vigil/internal/netshell"
	"github.com/vigil-kv/vigil/internal/proctitle"
	"github.com/vigil-kv/vigil/sentinel/daemon"
)

// Version is Vigil's version.
const Version = "0.1.0"

// Run is vigil-sentinel's main: it runs the sentinel as redis-sentinel would
// with these arguments (os.Args[1:]) until SIGTERM/SIGINT, and returns the
// exit code. `vigil sentinel` calls it too.
func Run(args []string, stdout, stderr io.Writer) int {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sigs)
	return runWithSignals(args, stdout, stderr, sigs)
}

func runWithSignals(args []string, stdout, stderr io.Writer, sigs <-chan os.Signal) int {
	code := 0
	app := &cli.App{
		Name:            "vigil-sentinel",
		Usage:           "a Redis 7.0 compatible Sentinel",
		UsageText:       "vigil-sentinel /path/to/sentinel.conf [--directive value ...]",
		Version:         Version,
		SkipFlagParsing: true,
		HideHelp:        true,
		HideHelpCommand: true,
		HideVersion:     true,
		Writer:          stdout,
		ErrWriter:       stderr,
		ExitErrHandler:  func(*cli.Context, error) {},
		Action: func(c *cli.Context) error {
			code = dispatch(c.Args().Slice(), stdout, stderr, sigs)
			return nil
		},
	}
	if err := app.Run(append([]string{"vigil-sentinel"}, args...)); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return code
}

func dispatch(args []string, stdout, stderr io.Writer, sigs <-chan os.Signal) int {
	if len(args) > 0 {
		switch args[0] {
		case "-v", "--version":
			fmt.Fprintf(stdout, "Redis server v=%s sha=00000000:0 malloc=go bits=64 build=%s\n", daemon.RedisVersion, buildID())
			fmt.Fprintf(stdout, "vigil-sentinel %s\n", Version)
			return 0
		case "-h", "--help":
			usage(stderr)
			return 1
		}
	}
	file := ""
	rest := args
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		file, rest = args[0], args[1:]
	}
	// "--sentinel" alone (redis-server's mode flag) becomes a lone
	// "sentinel" line, which the loader accepts; followed by values it is a
	// "sentinel <directive> ..." line, as in redis-sentinel.
	return serve(file, rest, stdout, stderr, sigs)
}

func usage(w io.Writer) {
	fmt.Fprint(w, `Usage: vigil-sentinel /path/to/sentinel.conf [options]
       vigil-sentinel -v or --version
       vigil-sentinel -h or --help

Examples:
       vigil-sentinel /etc/sentinel.conf
       vigil-sentinel /etc/sentinel.conf --port 26380
       vigil-sentinel /etc/sentinel.conf --loglevel verbose

Options are config directives (see sentinel.conf and redis.conf) with two
dashes; they are applied after the config file, so they override it.
The configuration file must be writable: the sentinel saves its state there.
`)
}

func buildID() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 16 {
				return s.Value[:16]
			}
		}
	}
	return "0"
}

const fatalHeader = "*** FATAL CONFIG FILE ERROR"

func serve(file string, overrides []string, stdout, stderr io.Writer, sigs <-chan os.Signal) int {
	pid := os.Getpid()
	st, err := daemon.LoadConfig(file, overrides)
	if err != nil {
		var ce *configs.ConfigError
		switch {
		case errors.As(err, &ce):
			fmt.Fprintln(stderr, strings.TrimRight(err.Error(), "\n"))
		default:
			// "Sentinel needs config file..." and "Fatal error, can't open
			// config file" are log lines in redis-sentinel.
			out, _ := logging.Open("", stdout)
			log := logging.New(out, "notice", "sentinel")
			log.Warn().Msg(err.Error())
		}
		return 1
	}
	cfg := st.Server
	// redis-sentinel chdir()s while it reads the "dir" line, so every
	// relative path used afterwards (logfile, pidfile, the scripts, SENTINEL
	// SET's script checks) is relative to it; the configuration file was
	// made absolute before (main()'s getAbsolutePath).
	if cfg.Dir != "" {
		if err := os.Chdir(cfg.Dir); err != nil {
			fmt.Fprintf(stderr, "Can't chdir to '%s': %s\n", cfg.Dir, logging.ErrText(err))
			return 1
		}
	}
	out, err := logging.Open(cfg.LogFile, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "Can't open the log file: %s\n", logging.ErrText(err))
		return 1
	}
	defer out.Close()
	out.SetFormat(cfg.LogFormat)
	log := logging.New(out, cfg.LogLevel, "sentinel")
	// serverLogRaw's syslog(): the lines go to the system log too.
	if err := out.Syslog(cfg.SyslogEnabled, cfg.SyslogIdent, cfg.SyslogFacility); err != nil {
		log.Warn().Msgf("Can't open the system log: %s", err)
	}
	log.Warn().Msg("oO0OoO0OoO0Oo Redis is starting oO0OoO0OoO0Oo")
	log.Warn().Msgf("Redis version=%s, bits=64, commit=00000000, modified=0, pid=%d, just started", daemon.RedisVersion, pid)
	log.Warn().Msg("Configuration loaded")
	for _, n := range st.Notes {
		log.Warn().Msg(n)
	}
	if cfg.Daemonize {
		log.Warn().Msg("daemonize yes is ignored: Vigil does not daemonize and keeps running in the foreground (use a supervisor)")
	}

	d, err := daemon.New(daemon.Options{Settings: st, Log: log})
	if err != nil {
		log.Error().Err(err).Msg("Can't start the sentinel")
		return 1
	}
	// initServer's monotonicInit line (redis-sentinel runs the same
	// main): Go's monotonic clock is clock_gettime(CLOCK_MONOTONIC).
	log.Info().Msg("monotonic clock: POSIX clock_gettime")
	if err := d.Listen(); err != nil {
		// As the server's main: the texts are netshell.Listen's.
		netshell.LogListenError(err, cfg.Port, func(m string) { log.Warn().Msg(m) }, func(m string) { log.Error().Msg(m) })
		return 1
	}
	if cfg.MetricsPort != 0 {
		ep, err := metrics.Listen(cfg.Bind, cfg.MetricsPort)
		if err != nil {
			log.Error().Msg(err.Error())
			return 1
		}
		defer ep.Close()
		ep.Serve(metrics.NewRegistry(metrics.SentinelCollector(sentinelSnapshot(d))))
		log.Info().Msgf("Serving Prometheus metrics on port %d (http, %s).", cfg.MetricsPort, metrics.Path)
	}
	if cfg.PidFile != "" {
		if err := writePidFile(cfg.PidFile, pid); err != nil {
			log.Warn().Msgf("Failed to write PID file: %s", logging.ErrText(err))
		} else {
			defer func() { _ = os.Remove(cfg.PidFile) }()
		}
	}
	setProcTitle(cfg, st.File)
	shown := cfg.Port
	if shown == 0 { // server.port ? server.port : server.tls_port
		shown = netshell.TLSSettingsOf(cfg).Port
	}
	log.Info().Msgf("Running mode=sentinel, port=%d.", shown)
	if err := daemon.CheckWritable(st.File); err != nil {
		log.Warn().Msg(err.Error())
		return 1
	}
	if err := d.Start(); err != nil {
		var ce *configs.ConfigError
		if errors.As(err, &ce) {
			fmt.Fprintln(stderr, strings.TrimRight(err.Error(), "\n"))
		} else {
			log.Warn().Msg(err.Error())
		}
		return 1
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() { done <- d.Run(ctx) }()
	for {
		select {
		case code := <-done:
			log.Warn().Msg("Sentinel is now ready to exit, bye bye...")
			return code
		case sig := <-sigs:
			if ctx.Err() != nil {
				logging.FromHandler(log.Warn()).Msg("You insist... exiting now.")
				return 1
			}
			logging.FromHandler(log.Warn()).Msgf("Received %s scheduling shutdown...", logging.SignalName(sig))
			log.Warn().Msg("User requested shutdown...")
			cancel()
		}
	}
}

// writePidFile writes the pid and a newline, as Redis's createPidFile.
func writePidFile(path string, pid int) error {
	return os.WriteFile(path, []byte(fmt.Sprintf("%d\n", pid)), 0o644)
}

// sentinelSnapshot reads d for the metrics collector (internal/metrics).
func sentinelSnapshot(d *daemon.Daemon) func() (metrics.SentinelSnapshot, bool) {
	return func() (metrics.SentinelSnapshot, bool) {
		info, masters, ok := d.MetricsSnapshot()
		if !ok {
			return metrics.SentinelSnapshot{}, false
		}
		snap := metrics.SentinelSnapshot{Info: info}
		for _, m := range masters {
			sm := metrics.SentinelMaster{Fields: m.Fields, ReplicaFlags: m.ReplicaFlags, SentinelFlags: m.SentinelFlags,
				CKQuorumOK: m.CKQuorumOK, CKQuorumText: m.CKQuorumText,
				Failovers: metrics.FailoverStats{Started: m.FailoversStarted, Finished: m.FailoversFinished, Aborted: m.FailoversAborted}}
			for _, p := range m.LastFailoverPhases {
				sm.Failovers.LastPhases = append(sm.Failovers.LastPhases, metrics.Phase{Name: p.Name, Seconds: p.Seconds})
			}
			snap.Masters = append(snap.Masters, sm)
		}
		return snap, true
	}
}

// setProcTitle is redisSetProcTitle in sentinel mode, after the pid file
// as in Redis's main: {server-mode} is "[sentinel]" and {config-file} the
// sentinel's configuration file.
func setProcTitle(cfg *configs.Config, file string) {
	if v, _ := cfg.Value("set-proc-title"); v != "yes" {
		return
	}
	tmpl, _ := cfg.Value("proc-title-template")
	v := cfg.ProcTitleVars(proctitle.Arg0(), "[sentinel]")
	v.ConfigFile = file
	if t, ok := configs.ExpandProcTitle(tmpl, v); ok {
		proctitle.Set(t)
	}
}
