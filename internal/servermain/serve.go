package servermain

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/vigil-kv/vigil/configs"
	"github.com/vigil-kv/vigil/internal/logging"
	"github.com/vigil-kv/vigil/internal/metrics"
	"github.com/vigil-kv/vigil/internal/netshell"
	"github.com/vigil-kv/vigil/server"
)

// fatalHeader opens Redis's block for configuration errors.
const fatalHeader = "*** FATAL CONFIG FILE ERROR"

// loadConfig reads the configuration as the command line asks.
func loadConfig(inv invocation, stdin io.Reader) (*configs.Config, error) {
	opts := configs.LoadOptions{ConfigFile: inv.configFile, Stdin: stdin, Args: inv.overrides}
	if inv.stdin {
		if inv.configFile == "" {
			opts.ConfigFile = "-"
		} else {
			opts.ReadStdin = true
		}
	}
	return configs.Load(opts)
}

// printConfigError writes err as Redis's fatal config error block.
func printConfigError(w io.Writer, err error) {
	msg := strings.TrimRight(err.Error(), "\n")
	if !strings.Contains(msg, fatalHeader) && !strings.HasPrefix(msg, "Fatal error") {
		msg = fmt.Sprintf("\n%s (Redis %s) ***\n%s", fatalHeader, redisVersion(), msg)
	}
	fmt.Fprintln(w, msg)
}

// serve loads the configuration, starts the server and runs it until a
// signal or SHUTDOWN. It returns the exit code.
func serve(inv invocation, stdin io.Reader, stdout, stderr io.Writer, sigs <-chan os.Signal) int {
	cfg, err := loadConfig(inv, stdin)
	if err != nil {
		printConfigError(stderr, err)
		return 1
	}
	out, err := logging.Open(cfg.LogFile, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "Can't open the log file: %s\n", logging.ErrText(err))
		return 1
	}
	defer out.Close()
	out.SetFormat(cfg.LogFormat)
	// serverLogRaw's role: C until initServer sets server.pid (its getpid()
	// differs until then), then M or S (Server.LogRole).
	out.SetRole(func() byte { return 'C' })
	log := logging.New(out, cfg.LogLevel, "server")
	// serverLogRaw's syslog(): the lines go to the system log too.
	if err := out.Syslog(cfg.SyslogEnabled, cfg.SyslogIdent, cfg.SyslogFacility); err != nil {
		log.Warn().Msgf("Can't open the system log: %s", err)
	}
	pid := os.Getpid()

	if inv.stdin {
		log.Warn().Msg("Reading config from stdin")
	}
	log.Warn().Msg("oO0OoO0OoO0Oo Redis is starting oO0OoO0OoO0Oo")
	log.Warn().Msgf("Redis version=%s, bits=64, commit=00000000, modified=0, pid=%d, just started", redisVersion(), pid)
	if inv.noArgs {
		log.Warn().Msg("Warning: no config file specified, using the default config. In order to specify a config file use vigil-server /path/to/redis.conf")
	} else {
		log.Warn().Msg("Configuration loaded")
	}
	if cfg.Daemonize {
		log.Warn().Msg("daemonize yes is ignored: Vigil does not daemonize and keeps running in the foreground (use a supervisor)")
	}
	if cfg.ClusterEnabled {
		log.Warn().Msg("cluster-enabled yes is ignored: vigil-server has no cluster mode and runs standalone (CLUSTER answers as a server without cluster support)")
	}

	server.ConfigureRuntime(cfg) // GOMAXPROCS = io-threads unless set in the environment
	// DEBUG RESTART and CRASH-AND-RECOVER re-execute this process.
	if err := server.EnableRestart(); err != nil {
		log.Warn().Err(err).Msg("DEBUG RESTART will not be able to restart: no path to the executable")
	}
	srv, err := server.New(cfg, log)
	if err != nil {
		log.Error().Err(err).Msg("Can't start the server")
		return 1
	}
	// sigsegvHandler's signals, when another process sends them: the bug
	// report, then death by the signal (server.CrashBySignal).
	fatal := make(chan os.Signal, 1)
	signal.Notify(fatal, syscall.SIGABRT, syscall.SIGBUS, syscall.SIGFPE, syscall.SIGILL, syscall.SIGSEGV)
	fatalDone := make(chan struct{})
	defer func() { signal.Stop(fatal); close(fatalDone) }()
	go func() {
		select {
		case sig := <-fatal:
			srv.CrashBySignal(sig.(syscall.Signal))
		case <-fatalDone:
		}
	}()
	out.SetRole(srv.LogRole)
	srv.SetLogFormatter(out.SetFormat) // CONFIG SET log-format
	srv.SetStdout(stdout)              // the RDB checker's trace after a corrupt dbfilename
	keepPages := os.Getenv("VIGIL_KEEP_STARTUP_PAGES") != ""
	if !keepPages {
		// A write burst's code and data leave the resident set too,
		// once it is over (server/idlegc.go, startpages_linux.go).
		srv.SetIdleRelease(func() { dropStartupPages() })
	}
	if err := srv.Listen(); err != nil {
		netshell.LogListenError(err, cfg.Port, func(m string) { log.Warn().Msg(m) }, func(m string) { log.Error().Msg(m) })
		return 1
	}
	port := srv.ShownPort()
	if cfg.MetricsPort != 0 {
		ep, err := metrics.Listen(cfg.Bind, cfg.MetricsPort)
		if err != nil {
			log.Error().Msg(err.Error())
			return 1
		}
		defer ep.Close()
		ep.Serve(metrics.NewRegistry(metrics.ServerCollector(serverSnapshot(srv))))
		log.Info().Msgf("Serving Prometheus metrics on port %d (http, %s).", cfg.MetricsPort, metrics.Path)
	}

	// loadFailed: the load's error is the log's last line, as Redis's
	// exit(1) in loadDataFromDisk leaves it (aof.tcl reads it with tail -1).
	loadFailed := false
	if cfg.PidFile != "" {
		if err := writePidFile(cfg.PidFile, pid); err != nil {
			log.Warn().Msgf("Failed to write PID file: %s", logging.ErrText(err))
		} else {
			defer func() {
				if !loadFailed {
					log.Info().Msg("Removing the pid file.")
				}
				_ = os.Remove(cfg.PidFile)
			}()
		}
	}

	srv.SetProcTitle() // after the pid file, as Redis's main
	// Redis shows the logo when asked to, or on a terminal with no logfile.
	if cfg.AlwaysShowLogo || (out.Console && cfg.LogFile == "") {
		showLogo(log, out, port, pid)
	} else {
		log.Info().Msgf("Running mode=standalone, port=%d.", port)
	}
	log.Warn().Msg("Server initialized")
	// linuxMemoryWarnings: THP off for this process (disable-thp), or the
	// warning. (Its overcommit warning is for fork; Vigil does not fork.)
	thpOff, _ := cfg.Value("disable-thp") // always set: the table's default is yes
	if w := disableTHP(thpOff == "yes", prctlTHPDisable); w != "" {
		log.Warn().Msg(w)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	srv.MarkLoading() // persist: -LOADING until the dataset is loaded
	go func() { done <- srv.Run(ctx) }()
	// persist: the dataset loads while the server answers -LOADING
	// (loadDataFromDisk); in a goroutine so that signals are handled.
	loaded := make(chan error, 1)
	go func() { loaded <- srv.LoadDataFromDisk() }()

	for {
		select {
		case err := <-loaded:
			loaded = nil
			if errors.Is(err, server.ErrLoadAborted) {
				continue // a shutdown: Run ends
			}
			if err != nil {
				var logged *server.LoggedError
				if !errors.As(err, &logged) { // else rdbFileLoadFailed logged it
					for _, line := range strings.Split(err.Error(), "\n") {
						log.Warn().Msg(line)
					}
				}
				cancel()
				<-done
				loadFailed = true
				return 1
			}
			// Redis 7.0's lines (server.c main): 7.2's "tcp"/"unix"
			// suffixes are not 7.0.15's.
			if port != 0 {
				log.Info().Msg("Ready to accept connections")
			}
			if cfg.UnixSocket != "" {
				log.Info().Msgf("The server is now ready to accept connections at %s", cfg.UnixSocket)
			}
			// The code and data only the startup touched leave the
			// resident set (startpages_linux.go).
			if !keepPages {
				dropStartupPages()
			}
		case err := <-done:
			if err != nil {
				log.Error().Err(err).Msg("Server stopped with an error")
				return 1
			}
			return 0
		case sig := <-sigs:
			// sigShutdownHandler: the signal sets shutdown_asap and the
			// server's cron shuts down (SHUTDOWN ABORT can cancel it
			// meanwhile). A second SIGINT (or, in Vigil, SIGTERM) while
			// that shutdown is pending or under way exits now.
			if srv.ShutdownPending() {
				logging.FromHandler(log.Warn()).Msg("You insist... exiting now.")
				// rdbRemoveTempFile(getpid()): a shutdown SAVE under way
				// leaves no temp file behind.
				_ = os.Remove(filepath.Join(cfg.Dir, fmt.Sprintf("temp-%d.rdb", os.Getpid())))
				if cfg.PidFile != "" {
					_ = os.Remove(cfg.PidFile)
				}
				return 1
			}
			if srv.StartupLoading() {
				logging.FromHandler(log.Warn()).Msg("Received shutdown signal during loading, scheduling shutdown.")
			} else {
				logging.FromHandler(log.Warn()).Msgf("Received %s scheduling shutdown...", logging.SignalName(sig))
			}
			srv.ShutdownSignal(sig == syscall.SIGINT) // persist: shutdown-on-sigint/sigterm
		}
	}
}

// serverSnapshot reads srv for the metrics collector (internal/metrics).
func serverSnapshot(srv *server.Server) func() (metrics.ServerSnapshot, bool) {
	return func() (metrics.ServerSnapshot, bool) {
		info, lat := srv.MetricsSnapshot()
		snap := metrics.ServerSnapshot{Info: info}
		for _, l := range lat {
			snap.Latency = append(snap.Latency, metrics.CommandHistogram{Cmd: l.Cmd, Buckets: l.Buckets})
		}
		return snap, true
	}
}
