package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	mrand "math/rand/v2"
	"net"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/vigil-kv/vigil/configs"
	"github.com/vigil-kv/vigil/internal/acl"
	"github.com/vigil-kv/vigil/internal/clock"
	"github.com/vigil-kv/vigil/internal/netshell"
	"github.com/vigil-kv/vigil/server/keyspace"
)

// RedisVersion is the version reported to clients (INFO redis_version,
// HELLO version) for compatibility with tools that gate on it.
const RedisVersion = "7.0.15"

// Version is Vigil's own version (INFO vigil_version, --version).
var Version = "0.1.0"

// Server is one vigil-server process.
type Server struct {
	// mu is the execution lock: Redis's single thread. Taken once per batch.
	// A sync.Mutex that a busy script's rescue can let go of for a moment
	// (execMutex, scripting_busy.go).
	mu       execMutex
	cfg      *configs.Config      // guarded by mu
	ks       *keyspace.Keyspace   // guarded by mu
	rng      *mrand.Rand          // guarded by mu
	cmds     map[string]*Command  // guarded by mu (rename-command at start only)
	stdout   io.Writer            // SetStdout: set before Run
	logFmt   func(format string)  // SetLogFormatter: set before Run
	logSlave atomic.Bool          // LogRole: server.masterhost is set
	now      time.Time            // guarded by mu: time of the command being run
	nowMs    int64                // guarded by mu
	stats    stats                // guarded by mu, except the atomics inside
	monitors map[*Client]struct{} // guarded by mu
	watch    watchState           // guarded by mu
	slowlog  slowlog              // guarded by mu
	pubsub   pubsub               // guarded by mu
	tracking trackingState        // guarded by mu: client-side caching (tracking.go)
	pause    pauseState           // guarded by mu
	// expiryFrozen: freezeExpiry saw a pause and set ks.Replica for it.
	expiryFrozen bool
	blocking     blockingState  // guarded by mu (blocking.go)
	syncAck      syncAckStats   // guarded by mu (syncack.go)
	fence        fenceState     // guarded by mu (fence.go)
	propUnits    int64          // execution units propagated, guarded by mu (syncack.go)
	idleGC       idleGC         // guarded by mu, except the atomic inside (idlegc.go)
	adm          adminState     // guarded by mu, except the atomics inside (cmd_admin.go)
	bufm         bufModelState  // guarded by mu: Redis's client buffers, modeled (bufmodel.go)
	cronTicking  atomic.Bool    // the cron's ticker exists (a fake clock's Advance reaches it)
	cmem         clientMemState // guarded by mu: client memory and eviction (clientevict.go)
	dbg          debugState     // guarded by mu (cmd_debug_more.go)
	watchdog     watchdogState  // watchdog-period (watchdog.go)
	props        []Propagator   // guarded by mu: consumers of the write path (propagate.go)
	pending      []Op           // guarded by mu: the current execution unit's operations
	// execDepth counts the commands running (EXEC nests its queue): the
	// execution unit ends when it returns to 0. Guarded by mu.
	execDepth int
	acl       *acl.Store // guarded by mu: users and ACL log (acl.go)
	current   *Client    // guarded by mu: the client whose batch runs (pubsub.go deliver)
	ord       ordWaiters // publishers waiting for arrival order (order.go)

	log zerolog.Logger
	// clock is the time of commands, expiry, the cron and its budgets,
	// command durations (slowlog, latency, commandstats), client ages and
	// the start time: a fake clock makes them deterministic. Socket
	// deadlines (idle timeout, write timeout) and the last-interaction
	// times that arm them, the idle spinner's budget, accept back-off and
	// the shutdown grace period use the real clock: the kernel and the
	// netpoller count real time. With the real clock, exec reads
	// time.Since (monotonic only) for command ends (commands.go).
	clock     clock.Clock
	realClock bool // clock is clock.Real: command times may reuse time.Now readings
	runID     string
	startTime time.Time
	execPath  string // executable path (INFO executable)
	cfgFile   string

	// settings read outside the lock, updated on CONFIG SET
	timeoutSec   atomic.Int64
	maxClients   atomic.Int64
	protoMaxBulk atomic.Int64

	clientsMu sync.Mutex
	clients   map[int64]*Client // guarded by clientsMu
	nextID    atomic.Int64

	listenersMu sync.Mutex
	listeners   []net.Listener
	tcpPort     int
	listened    bool // Listen ran: CONFIG SET port and bind move the listeners
	// tls is the TLS context (netshell/tls.go); the tls-port's listeners
	// are in listeners too, tlsPort the port they are bound to.
	tls     netshell.TLSState
	tlsPort int

	shutdownOnce sync.Once
	shutdownCh   chan shutdownReq
	doneCh       chan struct{}
	connWG       sync.WaitGroup
	closing      atomic.Bool
	// ldbWake is the Lua debugger's wake eventfd plus one (0: none yet),
	// in the poll set of a sync session waiting for its client
	// (scripting_ldb.go); a signal writes it, as Redis's signal makes the
	// session's read fail with EINTR.
	ldbWake atomic.Int32
	// ldbChildren are the forked debugging sessions' children by pid,
	// ldbKilled those killed, not reaped yet (guarded by ldbMu, taken
	// alone or inside mu: Run's end reaps them while a busy script may
	// hold mu); ldbChild is set in such a child (scripting_ldbfork.go).
	ldbMu       sync.Mutex
	ldbChildren map[int]*ldbChildInfo
	ldbKilled   []*ldbChildInfo
	ldbChild    bool
	// ldbGoodReplicas is, in such a child, the parent's count of good
	// replicas when the session started (server.repl_good_slaves_count,
	// which the forked child keeps and never refreshes).
	ldbGoodReplicas int
	// ldbCopy is the dataset copy a forked session's child is being sent,
	// read from the running snapshot (guarded by mu; nil: none).
	ldbCopy *ldbCopy
	// The startup load (persist_aof.go loadDataOnStart), seen without mu:
	// loadMarked is MarkLoading (Run starts serving, then LoadDataFromDisk
	// loads: serving is closed once the listeners, the cron and the
	// replicaof link are up); startupLoading is set while the load runs;
	// abortLoad is a shutdown asked meanwhile (the load stops at its
	// next yield, as Redis exits from whileBlockedCron).
	loadMarked     atomic.Bool
	startupLoading atomic.Bool
	// replLoading is set while a full sync's payload loads (not async):
	// a signal then stops the load and shuts down, as at start-up
	// (whileBlockedCron's shutdown_asap with server.loading).
	replLoading atomic.Bool
	abortLoad   atomic.Bool
	serving     chan struct{}
	// spinner keeps the thread polling between batches (spin.go); nil
	// when off. Set by Run before the first connection.
	spinner *idleSpinner
	// ready is the client sockets' epoll set: it wakes the connection
	// loops in the order their input came (readywait.go); nil when
	// unavailable.
	ready *readyPoller
	// lastWait is the client whose loop last went to wait for input
	// (parkForInput).
	lastWait atomic.Int64

	// Lua scripting (scripting.go): the engine, created on first use
	// (guarded by mu), and the running script, read without mu by the
	// clients a busy script keeps waiting (scripting_busy.go).
	lua  *luaHost
	busy atomic.Pointer[busyScript]
	// parked counts the batches waiting in mu.Lock (lockBatch), which a
	// script past the busy threshold lets out (rescueParked).
	parked atomic.Int32
	// beforeBusy (tests, set before Run) runs as a script starts, before
	// it is published (startBusyFn).
	beforeBusy func()

	// What a new connection's admission reads without mu (serveConn), so
	// that a client connecting while a busy script holds the lock is
	// accepted and answered (-BUSY, AUTH, SCRIPT KILL): tcp-keepalive,
	// protected mode with a passwordless default user, and whether new
	// connections start authenticated. Set by syncAdmission.
	admKeepAlive   atomic.Int64
	admProtected   atomic.Bool
	admDefaultOpen atomic.Bool
	admDefNoPass   atomic.Bool
	fns            *functionsEngine // functions (functions.go), created on first use, guarded by mu

	aof aofState // guarded by mu: the append-only file (persist_aof.go)
	// persist: RDB persistence state (persist_rdb.go), guarded by mu, and
	// the signal that asked for shutdown (0: SIGTERM, 2: SIGINT).
	rdb         persistState
	repl        replState // repl: replication (repl_master.go, repl_replica.go), guarded by mu
	shutdownSig atomic.Int32
	// shutdownAsap is Redis's shutdown_asap: a SIGTERM or SIGINT asked for
	// a shutdown (ShutdownSignal), which the cron performs
	// (cronSignalShutdown): asapNone, asapPending (SHUTDOWN ABORT clears
	// it; DEBUG PAUSE-CRON holds it) or asapTaken (the shutdown is under
	// way). sigWake tells Run of a signal (the startup load stops at once).
	shutdownAsap atomic.Int32
	sigWake      chan struct{}
	// shutdownRequested: requestShutdown ran (Run is ending the process).
	shutdownRequested atomic.Bool
	// shutdownFailover is the shutdown waiting for its hand-over (SHUTDOWN
	// FAILOVER, shutdown-on-sigterm failover), guarded by mu; nil if none.
	shutdownFailover *pendingShutdown
	// shutdownWait is the shutdown waiting for lagging replicas
	// (shutdown_wait.go), guarded by mu.
	shutdownWait shutdownWaitState

	// evict: maxmemory and eviction (evict.go), guarded by mu.
	evict evictState
	// migrateSockets: MIGRATE's cached connections by "host:port"
	// (cmd_migrate.go), guarded by mu.
	migrateSockets map[string]*migrateSocket
}

type shutdownReq struct {
	save, nosave, now, force bool
	failover                 bool // Vigil: hand over to the best replica first
	announced                bool // "User requested shutdown..." is logged already
	from                     *Client
}

// Option customises a Server (tests inject a fake clock).
type Option func(*Server)

// WithClock makes the server read time from clk (commands, expiry).
func WithClock(clk clock.Clock) Option { return func(s *Server) { s.clock = clk } }

// New builds a server from a validated configuration. Nothing listens
// until Run.
func New(cfg *configs.Config, log zerolog.Logger, opts ...Option) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	var seed [8]byte
	_, _ = rand.Read(seed[:])
	id := make([]byte, 20)
	_, _ = rand.Read(id)
	s := &Server{
		cfg:        cfg,
		ks:         keyspace.New(cfg.Databases),
		rng:        mrand.New(mrand.NewPCG(uint64(time.Now().UnixNano()), uint64(seed[0])|uint64(seed[1])<<8)),
		monitors:   map[*Client]struct{}{},
		log:        log,
		runID:      hex.EncodeToString(id),
		clients:    map[int64]*Client{},
		shutdownCh: make(chan shutdownReq, 1),
		sigWake:    make(chan struct{}, 1),
		doneCh:     make(chan struct{}),
		serving:    make(chan struct{}),
		cfgFile:    cfg.File,
		clock:      clock.Real{},
	}
	for _, o := range opts {
		o(s)
	}
	_, s.realClock = s.clock.(clock.Real)
	s.startTime = s.clock.Now()
	s.execPath, _ = os.Executable()
	s.applyAtomics()
	s.logSlave.Store(cfg.ReplicaOf.Host != "")
	s.fenceInit()
	s.syncAckInit()
	s.initAdmin()
	s.bufm.peakResetMs = replyBufPeakResetDefMs
	s.slowlog.init()
	s.initRepl() // repl
	s.pubsub.init()
	s.ks.ExpandAllowed = s.dictExpandAllowed
	s.ks.OnExpire = func(db int, key string, v keyspace.Value) {
		s.stats.expiredKeys++
		if s.cfg.LazyfreeLazyExpire {
			s.lazyfree(v) // dbGenericDelete(db, key, lazyfree-lazy-expire)
		}
		s.notifyExpired(db, key)
		s.propagateDeletion(db, []byte(key), s.cfg.LazyfreeLazyExpire)
	}
	// dbDelete and dbOverwrite: freeObjAsync under lazyfree-lazy-server-del.
	s.ks.OnServerDel = func(v keyspace.Value) {
		if s.cfg.LazyfreeLazyServerDel {
			s.lazyfree(v)
		}
	}
	cmds, err := buildCommandTable(cfg.RenameCommands)
	if err != nil {
		return nil, err
	}
	s.cmds = cmds
	if err := s.initACL(cfg); err != nil {
		return nil, err
	}
	s.syncAdmission()
	s.nextID.Store(functionClientID) // ids 1 and 2 are the scripting clients' (scripting.go)
	return s, nil
}

// applyAtomics copies the settings the connection loops read without the
// lock. Called at start and after CONFIG SET.
func (s *Server) applyAtomics() {
	s.timeoutSec.Store(int64(s.cfg.Timeout))
	s.maxClients.Store(int64(s.cfg.MaxClients))
	s.protoMaxBulk.Store(s.cfg.ProtoMaxBulkLen)
	s.applyKeyspaceConfig()
	s.applyEvictConfig()          // evict.go
	s.applyClientEvictionConfig() // clientevict.go
	if s.acl != nil {
		s.syncAdmission()
	}
}

// syncAdmission copies what serveConn's admission reads without the lock
// (Server.admKeepAlive...). Under mu: at start, after CONFIG SET and
// after every admin command (ACL SETUSER, ACL LOAD... change the default
// user).
func (s *Server) syncAdmission() {
	s.admKeepAlive.Store(int64(s.cfg.TCPKeepAlive))
	noPass := s.aclDefaultNoPass()
	s.admDefNoPass.Store(noPass)
	s.admProtected.Store(s.cfg.ProtectedMode && noPass)
	s.admDefaultOpen.Store(s.aclDefaultOpen())
}

// RunID is the server's 40-hex-character run id.
func (s *Server) RunID() string { return s.runID }

// Addrs returns the addresses the server listens on.
func (s *Server) Addrs() []net.Addr {
	s.listenersMu.Lock()
	defer s.listenersMu.Unlock()
	out := make([]net.Addr, 0, len(s.listeners))
	for _, l := range s.listeners {
		out = append(out, l.Addr())
	}
	return out
}

// Listen opens the configured TCP and unix listeners (netshell.Listen, as
// Redis's listenToPort: "*" binds all IPv4 addresses, "::*" all IPv6; a
// leading "-" makes an address optional).
func (s *Server) Listen() error {
	s.mu.Lock()
	// initServer's adjustOpenFilesLimit: maxclients within the open
	// files limit, raised where the system allows.
	n, err := s.adjustOpenFilesLimit(s.cfg.MaxClients)
	if err != nil {
		s.mu.Unlock()
		return err
	}
	s.cfg.MaxClients = n
	s.maxClients.Store(int64(n))
	// initServer's monotonicInit line, next: Go's monotonic clock is
	// clock_gettime(CLOCK_MONOTONIC), what Redis reports on Linux without
	// USE_PROCESSOR_CLOCK (INFO's monotonic_clock).
	s.log.Info().Msg("monotonic clock: POSIX clock_gettime")
	s.setOOMScoreAdj(-1) // main's, before serving
	cfg := *s.cfg
	cfg.Bind = slices.Clone(s.cfg.Bind) // bind "" stays empty, not nil (the default)
	s.mu.Unlock()
	ls, err := netshell.Listen(&cfg, &s.tls)
	if err != nil {
		return err
	}
	for _, w := range ls.TLSWarnings {
		s.log.Warn().Msg(w)
	}
	if ls.Port != 0 {
		s.tcpPort = ls.Port
	}
	s.tlsPort = ls.TLSPort
	s.listenersMu.Lock()
	s.listeners, s.listened = ls.List, true
	s.listenersMu.Unlock()
	return nil
}

// Port is the TCP port actually bound (after Listen).
func (s *Server) Port() int { return s.tcpPort }

// ShownPort is the port Redis's start-up lines show: the TCP port, else
// the TLS port (server.port ? server.port : server.tls_port).
func (s *Server) ShownPort() int {
	if s.tcpPort != 0 {
		return s.tcpPort
	}
	return s.tlsPort
}

// Run serves until ctx is cancelled or SHUTDOWN runs, then stops accepting,
// lets in-flight replies finish, closes every client and returns. Listen
// must have been called.
func (s *Server) Run(ctx context.Context) error {
	defer s.releaseDictResizePolicy() // persist_rdb.go
	if path := os.Getenv(CPUProfileEnv); path != "" {
		if stop, err := startCPUProfile(path); err != nil {
			s.log.Warn().Err(err).Msg("Can't start the CPU profile")
		} else {
			defer stop()
			s.log.Warn().Str("file", path).Msg("Writing a CPU profile until shutdown")
		}
	}
	if path := os.Getenv(TraceEnv); path != "" {
		if stop, err := startTrace(path); err != nil {
			s.log.Warn().Err(err).Msg("Can't start the execution trace")
		} else {
			defer stop()
			s.log.Warn().Str("file", path).Msg("Writing an execution trace until shutdown")
		}
	}
	s.listenersMu.Lock()
	ls := append([]net.Listener(nil), s.listeners...)
	s.listenersMu.Unlock()
	// Persistence: load the AOF (or the RDB) before serving (persist_aof.go).
	// Unless the caller marked the server loading and loads it in the
	// background (MarkLoading, LoadDataFromDisk: -LOADING meanwhile),
	// which waits for serving: nothing here waits for the load.
	if !s.loadMarked.Load() {
		if err := s.loadDataOnStart(); err != nil {
			return err
		}
	}
	if s.ready = newReadyPoller(); s.ready != nil {
		defer s.ready.close()
	}
	if s.spinner = newIdleSpinner(s.ready); s.spinner != nil {
		defer s.spinner.close()
	}
	defer s.ordClose() // arrival order's epoll set (order.go)
	for _, l := range ls {
		go s.acceptLoop(l)
	}
	// repl: the replicaof directive connects once the port is known.
	s.mu.Lock()
	if a := s.cfg.ReplicaOf; a.Host != "" && s.repl.link == nil {
		s.startReplication(a.Host, a.Port)
	}
	s.mu.Unlock()
	cronStop := make(chan struct{})
	s.watchdog.on = make(chan struct{}, 1)
	s.mu.Lock()
	s.watchdogConfigure()
	hz := s.cfg.Hz
	s.mu.Unlock()
	go s.cron(cronStop, hz)
	go s.watchdogLoop(cronStop)
	close(s.serving) // LoadDataFromDisk may start (MarkLoading)
	var req shutdownReq
	// persist: a signal (ctx) saves as shutdown-on-sigterm/sigint say; if
	// that fails the server keeps running, as Redis. A signal through
	// ShutdownSignal is performed by the cron (cronSignalShutdown), as
	// Redis's serverCron; during the startup load it stops the load here.
	for ctxDone := ctx.Done(); ; {
		select {
		case <-s.sigWake:
			s.loadingSignalShutdown() // else the cron's (or aborted)
			continue
		case <-ctxDone:
			// A debugging session waiting for its client is interrupted
			// (the session holds the lock the shutdown needs).
			s.ldbInterrupt()
			// During the startup load a signal shuts down at once,
			// without saving (Redis's whileBlockedCron with
			// shutdown_asap): a busy script of the AOF is stopped.
			if s.startupLoading.Load() {
				s.stopLoadForShutdown()
				break
			}
			// A hand-over first (shutdown-on-sig* failover): the shutdown
			// then comes through shutdownCh when it completes.
			if s.signalShutdownFailover() {
				ctxDone = nil
				continue
			}
			if !s.signalShutdownSave() {
				ctxDone = nil
				continue
			}
		case req = <-s.shutdownCh:
		}
		break
	}
	s.abortLoad.Store(true) // a startup load still running stops at its next yield
	// A failed startup load ends the process as Redis's exit(1): its
	// error is the last thing logged, no shutdown is announced.
	s.mu.Lock()
	quiet := s.rdb.loadFailed
	s.mu.Unlock()
	if !quiet && !req.announced {
		s.log.Warn().Msg("User requested shutdown...")
	}
	close(cronStop)
	s.closeListeners()
	s.unblockAllForShutdown() // parked blocked clients: their loops end
	// Interrupt blocked reads; loops finish their batch, write, and exit.
	s.clientsMu.Lock()
	for _, c := range s.clients {
		if c != req.from {
			c.setReadDeadlineFromOutside(time.Now())
		}
	}
	s.clientsMu.Unlock()
	if req.from != nil {
		req.from.closeAsync() // asynchronously: see Client.kill
	}
	waitDone := make(chan struct{})
	go func() { s.connWG.Wait(); close(waitDone) }()
	select {
	case <-waitDone:
	case <-time.After(5 * time.Second):
		s.clientsMu.Lock()
		for _, c := range s.clients {
			c.closeAsync() // asynchronously: see Client.kill
		}
		s.clientsMu.Unlock()
	}
	s.mu.Lock()
	s.migrateCloseAll() // MIGRATE's cached sockets (cmd_migrate.go)
	s.mu.Unlock()
	s.aofShutdown() // persistence: flush and fsync the AOF (persist_aof.go)
	s.ldbClose()
	s.ldbWaitKilled() // no debugging child outlives the server
	close(s.doneCh)
	if !quiet {
		s.log.Warn().Msg("Redis is now ready to exit, bye bye...")
	}
	return nil
}

// closeListeners is the first step of a shutdown: new connections are
// refused from here on (closing is set, the TCP listeners and the unix
// socket closed). Called again, it does nothing more.
func (s *Server) closeListeners() {
	s.closing.Store(true)
	s.listenersMu.Lock() // CONFIG SET port and bind replace them (relisten.go)
	for _, l := range s.listeners {
		l.Close()
	}
	s.listenersMu.Unlock()
	if s.cfg.UnixSocket != "" {
		_ = os.Remove(s.cfg.UnixSocket)
	}
}

// requestShutdown asks Run to stop. Safe to call more than once.
func (s *Server) requestShutdown(r shutdownReq) {
	s.abortLoad.Store(true) // a startup load stops at its next yield (final: saved already or nosave)
	s.shutdownRequested.Store(true)
	s.shutdownOnce.Do(func() { s.shutdownCh <- r })
}

func (s *Server) acceptLoop(l net.Listener) {
	netshell.Serve(l, s.closing.Load, func(conn net.Conn) {
		s.connWG.Add(1)
		go s.serveConn(conn)
	}, func(err error) { s.log.Warn().Err(err).Msg("Accepting client connection") })
}

// cron is serverCron: active expiry hz times a second, on the server's
// clock (a fake clock's Advance runs it). hz is read by Run: the cron's
// goroutine takes no lock before its ticker runs, since a script begun
// meanwhile would hold it back from the slow-script log and the rescue
// of the batches parked behind the script (TestBusyParkedBatch).
func (s *Server) cron(stop <-chan struct{}, hz int) {
	if hz <= 0 {
		hz = 10
	}
	t := s.clock.NewTicker(time.Second / time.Duration(hz))
	defer func() { t.Stop() }()
	s.cronTicking.Store(true) // tests with a fake clock advance it only from now on
	var pend *cronWait        // lockCron's wait on mu, across ticks
	for {
		select {
		case <-stop:
			return
		case <-t.C():
		}
		// A script past the busy threshold holds the server: this tick
		// only logs it (noteSlowScript), as serverCron does not run then.
		if b := s.lockCron(&pend); b != nil {
			s.loadingSignalShutdown()
			s.noteSlowScript(b)
			s.rescueParked(b) // batches waiting for mu since before b began
			continue
		}
		if s.loadingSignalShutdown() || s.rdb.loading || s.dbg.pauseCron { // persist: no cron while the dataset loads; DEBUG PAUSE-CRON
			s.mu.Unlock()
			continue
		}
		s.setNow()
		if s.cronSignalShutdown() || s.cronShutdownWait() { // serverCron's shutdown_asap (persist_rdb.go), isShutdownInitiated (shutdown_wait.go)
			s.mu.Unlock()
			continue
		}
		s.activeExpireCron()
		// databasesCron: shrink sparse tables and, with activerehashing,
		// spend up to 1 ms moving buckets of a table being rehashed.
		// Neither while a background save runs (Redis: no child process),
		// whose dict resize policy is kept here too.
		s.updateDictResizePolicy()
		rehashBudget := int64(0)
		if s.cfg.ActiveRehashing {
			rehashBudget = 1000
		}
		if !s.childActive() {
			s.ks.ResizeAndRehash(rehashBudget, s.elapsedUs(s.clock.Now()))
		}
		// serverCron's trackingLimitUsedSlots: a CONFIG SET of
		// tracking-table-max-keys evicts keys (and sends their
		// invalidations) even when no command follows (tracking.go).
		if s.tracking.active() {
			s.trackingLimitUsedSlots()
		}
		s.adminCron()
		s.aofCron()      // persistence (persist_aof.go)
		s.rdbCron()      // persist: save points, scheduled BGSAVE
		s.replCron()     // repl: replicationCron, once a second
		s.replTrimCron() // beforeSleep's incrementalTrimReplicationBacklog (repl_master.go)
		// evict.go: an eviction stopped at its time limit goes on.
		s.evictCron()
		s.trackingBroadcast() // tracking.go: BCAST invalidations (beforeSleep)
		s.clientsCron()       // output buffer limits, query and reply buffers (bufmodel.go)
		s.idleGCCron()        // a write burst's garbage goes back once idle (idlegc.go)
		s.migrateCron()       // MIGRATE's idle cached sockets (cmd_migrate.go)
		s.stats.cronLoops++
		s.watchdogCronRan() // watchdog.go
		if s.cfg.Hz != hz && s.cfg.Hz > 0 {
			hz = s.cfg.Hz
			t.Stop()
			t = s.clock.NewTicker(time.Second / time.Duration(hz))
		}
		s.mu.Unlock()
	}
}

// activeExpireCron is databasesCron's activeExpireCycle(SLOW) call, with
// the execution lock held. The whole cycle's time in milliseconds is the
// latency monitor's "expire-cycle" event, as expire.c records it (even
// when the cycle expired nothing; not while clients are paused, where
// activeExpireCycle returns first, nor on a replica, where databasesCron
// does not call it).
func (s *Server) activeExpireCron() {
	// ACTIVE_EXPIRE_CYCLE_SLOW_TIME_PERC (25%) of a cron period, plus
	// 2% per step of active-expire-effort above 1, as expire.c.
	budget := keyspace.SlowCycleBudget(s.cfg.Hz, s.ks.ActiveExpireEffort)
	// Not while clients are paused (CLIENT PAUSE, FAILOVER): the
	// dataset stays static, as activeExpireCycle returns then.
	// A replica runs expireSlaveKeys instead: its writable-replica
	// keys (RememberReplicaKeyWithExpire), paused or not.
	switch {
	case s.adm.noActiveExpire: // DEBUG SET-ACTIVE-EXPIRE 0
	case s.isReplica():
		s.ks.ExpireReplicaKeys(s.nowMs, s.elapsedUs(s.clock.Now()))
	case !s.pause.active(s.now):
		res := s.ks.ActiveExpireCycle(s.nowMs, s.rng, budget, s.elapsedUs(s.clock.Now()))
		s.latencyAddSampleIfNeeded("expire-cycle", res.ElapsedMicros/1000)
	}
}

// elapsedUs returns the microseconds elapsed since start on the server's
// clock: the time budgets of the cron's cycles (a fake clock that stands
// still gives them no time limit, only their other bounds).
func (s *Server) elapsedUs(start time.Time) func() int64 {
	return func() int64 { return s.clock.Now().Sub(start).Microseconds() }
}

// setNow caches the time for the command about to run (Redis's
// server.mstime), so one command sees one instant.
func (s *Server) setNow() {
	s.now = s.clock.Now()
	s.nowMs = s.now.UnixMilli()
}

// ConfigureRuntime sets GOMAXPROCS, the number of threads running Go code,
// to the io-threads directive (default 1, Redis's single thread), unless
// the GOMAXPROCS environment variable is set, and returns it. Commands run
// one at a time under the execution lock anyway; with one P the connection
// goroutines take turns on one thread and no spinning threads or sysmon
// hand-offs compete for the CPU with the clients or other processes. On a
// machine shared with its clients this gave 10-40% more throughput than
// GOMAXPROCS=2 (docs/benchmarks.md, Throughput). Raise io-threads (or set
// GOMAXPROCS) to parallelise socket I/O and parsing on a dedicated host.
// Called once by cmd/vigil-server; tests and embedders leave the runtime
// alone. A background snapshot borrows one more P while it runs
// (borrowProc), as Redis's forked child runs on another core.
func ConfigureRuntime(cfg *configs.Config) int {
	if os.Getenv("GOMAXPROCS") != "" {
		return runtime.GOMAXPROCS(0)
	}
	n := 1
	if v, ok := cfg.Value("io-threads"); ok {
		if k, err := strconv.Atoi(v); err == nil && k > 0 {
			n = k
		}
	}
	n = min(n, runtime.NumCPU())
	runtime.GOMAXPROCS(n)
	bgProcs.mu.Lock()
	bgProcs.base = n
	bgProcs.mu.Unlock()
	return n
}

// CPUProfileEnv names the environment variable that makes Run write a Go
// CPU profile (go tool pprof) to the file it names, from start to shutdown:
// an opt-in for profiling under a real load (docs/benchmarks.md, Profiling). No
// port is opened.
const CPUProfileEnv = "VIGIL_CPUPROFILE"

// TraceEnv names the environment variable that makes Run write a Go
// execution trace (go tool trace: scheduling, GC, system calls) to the file
// it names, from start to shutdown: an opt-in for finding where a latency
// tail comes from (issue 24). It costs CPU and grows by megabytes a second
// under load; keep the run short.
const TraceEnv = "VIGIL_TRACE"

func startTrace(path string) (stop func(), err error) {
	return startToFile(path, trace.Start, trace.Stop)
}

func startCPUProfile(path string) (stop func(), err error) {
	return startToFile(path, pprof.StartCPUProfile, pprof.StopCPUProfile)
}

// startToFile creates path and starts a recorder writing to it (a trace, a
// CPU profile); stop ends it and closes the file.
func startToFile(path string, start func(io.Writer) error, end func()) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := start(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		end()
		f.Close()
	}, nil
}
