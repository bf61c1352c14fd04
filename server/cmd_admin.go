package server

import (
	"crypto/rand"
	"encoding/hex"
	"sync/atomic"
	"time"
)

// Administrative commands: LASTSAVE, SHUTDOWN, READONLY/READWRITE,
// SAVE/BGSAVE; and the state the server shares with INFO, LATENCY and
// DEBUG (adminState): instantaneous metrics, the latency monitor,
// per-command latency histograms, the memory peak. LATENCY is in
// cmd_latency.go, SLOWLOG and MONITOR in cmd_slowlog.go, COMMAND in
// cmd_command.go, ROLE and WAIT in cmd_repl.go.

func init() {
	ls := FlagLoading | FlagStale
	admACL := []string{"admin", "slow", "dangerous"}
	register(
		&Command{Name: "lastsave", Arity: 1, Flags: ls | FlagFast, ACL: []string{"admin", "fast", "dangerous"}, Handler: cmdLastSaveRDB},
		&Command{Name: "shutdown", Arity: -1, Flags: FlagAdmin | FlagNoScript | ls | FlagNoMulti | FlagAllowBusy, ACL: admACL, Handler: cmdShutdown},
		&Command{Name: "readonly", Arity: 1, Flags: ls | FlagFast, ACL: []string{"fast", "connection"}, Handler: cmdClusterDisabled},
		&Command{Name: "readwrite", Arity: 1, Flags: ls | FlagFast, ACL: []string{"fast", "connection"}, Handler: cmdClusterDisabled},
		&Command{Name: "save", Arity: 1, Flags: FlagAdmin | FlagNoScript | FlagNoAsyncLoading | FlagNoMulti, ACL: admACL, Handler: cmdSave}, // persist: persist_rdb.go
		&Command{Name: "bgsave", Arity: -1, Flags: FlagAdmin | FlagNoScript | FlagNoAsyncLoading, ACL: admACL, Handler: cmdBgsave},
	)
}

// --- adminState ------------------------------------------------------------

// statsMetricSamples is STATS_METRIC_SAMPLES.
const statsMetricSamples = 16

// instMetric is one of Redis's inst_metric: the per-second rate sampled
// every 100 ms, averaged over the last 16 samples.
type instMetric struct {
	lastMs, lastCount int64
	samples           [statsMetricSamples]int64
	idx               int
}

// track is trackInstantaneousMetric.
func (m *instMetric) track(nowMs, reading int64) {
	t := nowMs - m.lastMs
	var rate int64
	if t > 0 && m.lastMs != 0 {
		rate = (reading - m.lastCount) * 1000 / t
	}
	m.samples[m.idx] = max(rate, 0)
	m.idx = (m.idx + 1) % statsMetricSamples
	m.lastMs, m.lastCount = nowMs, reading
}

// value is getInstantaneousMetric.
func (m *instMetric) value() int64 {
	var sum int64
	for _, v := range m.samples {
		sum += v
	}
	return sum / statsMetricSamples
}

const (
	metricCommands = iota
	metricNetInput
	metricNetOutput
	numMetrics
)

// adminState is the server's state for INFO, LATENCY and DEBUG; guarded by
// Server.mu except the atomics.
type adminState struct {
	logLevel       atomic.Int32 // zerolog.Level the log gate lets through
	reads, writes  atomic.Int64 // total_reads_processed, total_writes_processed
	noActiveExpire bool         // DEBUG SET-ACTIVE-EXPIRE 0
	replID         string       // master_replid until replication owns it
	metrics        [numMetrics]instMetric
	memPeak        uint64
	memStartup     uint64
	hist           []*cmdHistogram // by Command.idx, allocated on first call
	latency        map[string]*latencySeries
}

// initAdmin runs once in New.
func (s *Server) initAdmin() {
	s.log = s.adm.gateLogger(s.log)
	s.hookConfig()
	id := make([]byte, 20)
	_, _ = rand.Read(id)
	s.adm.replID = hex.EncodeToString(id)
	s.adm.memStartup = min(readMem().heapObjects, maxStartupMemory) // evict.go
	s.adm.memPeak = s.adm.memStartup
	s.adm.latency = map[string]*latencySeries{}
}

// resetStats is adminState's part of CONFIG RESETSTAT.
func (a *adminState) resetStats() {
	a.reads.Store(0)
	a.writes.Store(0)
	a.metrics = [numMetrics]instMetric{}
	a.hist = nil
	a.memPeak = 0 // INFO raises it to used_memory
}

// adminCron runs in the server cron with mu held: the instantaneous
// metrics every 100 ms (serverCron's run_with_period(100)) and the memory
// peak.
func (s *Server) adminCron() {
	a := &s.adm
	if s.nowMs-a.metrics[metricCommands].lastMs >= 100 {
		a.metrics[metricCommands].track(s.nowMs, s.stats.commands)
		a.metrics[metricNetInput].track(s.nowMs, s.stats.netInput.Load())
		a.metrics[metricNetOutput].track(s.nowMs, s.stats.netOutput.Load())
	}
	if m := s.usedMemory(); m > a.memPeak {
		a.memPeak = m
	}
	s.blockedCron()
}

// afterCommand records a command's duration: its latency histogram
// (LATENCY HISTOGRAM, INFO latencystats) and the latency monitor's
// "command" / "fast-command" events, as call() in server.c.
func (s *Server) afterCommand(cmd *Command, dur time.Duration) {
	a := &s.adm
	s.latencyAddSampleIfNeeded(latencyEventOf(cmd), dur.Milliseconds())
	if !s.cfg.LatencyTracking {
		return
	}
	if len(a.hist) != len(allCommands) {
		a.hist = make([]*cmdHistogram, len(allCommands))
	}
	h := a.hist[cmd.Index()]
	if h == nil {
		h = new(cmdHistogram)
		a.hist[cmd.Index()] = h
	}
	h.add(dur.Nanoseconds())
}

func latencyEventOf(cmd *Command) string {
	if cmd.Has(FlagFast) {
		return "fast-command"
	}
	return "command"
}

func cmdClusterDisabled(c *Client, args [][]byte) { c.w.Error(ErrClusterDisabled) }

// cmdShutdown is shutdownCommand. On success there is no reply: Run stops
// the server and closes this connection last. A failed save (SAVE, or
// save points without NOSAVE) keeps the server running unless FORCE.
func cmdShutdown(c *Client, args [][]byte) {
	var req shutdownReq
	abort := false
	for _, a := range args[1:] {
		switch {
		case eqFold(a, "nosave"):
			req.nosave = true
		case eqFold(a, "save"):
			req.save = true
		case eqFold(a, "now"):
			req.now = true
		case eqFold(a, "force"):
			req.force = true
		case eqFold(a, "abort"):
			abort = true
		case eqFold(a, "failover"):
			req.failover = true
		default:
			c.w.Error(ErrSyntax)
			return
		}
	}
	if (abort && (req.nosave || req.save || req.now || req.force || req.failover)) || (req.save && req.nosave) {
		c.w.Error(ErrSyntax)
		return
	}
	s := c.srv
	if abort {
		// abortShutdown: a hand-over waiting, or a signal's shutdown the
		// cron has not started (shutdown_asap).
		aborted := s.abortShutdownFailover()
		if s.abortShutdownWait() || s.abortSignalShutdown() {
			aborted = true
		}
		if aborted {
			s.log.Info().Msg("Shutdown manually aborted.")
			c.w.OK()
			return
		}
		c.w.Error(ErrNoShutdown)
		return
	}
	if !req.now && c.denyBlocking() && !req.failover {
		c.w.Error("ERR SHUTDOWN without NOW or ABORT isn't allowed for DENY BLOCKING client")
		return
	}
	if b := c.busyRun; b != nil {
		// shutdownCommand during a busy script: NOSAVE only; the script
		// is stopped and its effects dropped (Redis exits without
		// running it to its end).
		if !req.nosave {
			c.w.Error(b.busyErr())
			return
		}
		b.shutdown.Store(true)
		s.abortLoad.Store(true) // a script of the startup AOF load: the load ends with it
		b.stop()
		s.requestShutdown(shutdownReq{nosave: true, from: c})
		// Redis exits inside the command: the client sees its connection
		// end and a new one refused. The listeners close before this
		// client's connection does (closeAfterReply), not after it.
		s.closeListeners()
		c.closeAfterReply = true
		return
	}
	// prepareForShutdown: a shutdown already initiated (waiting for its
	// replicas) is joined; the client blocks until it ends.
	if s.shutdownInitiated() {
		s.blockOnShutdown(c)
		return
	}
	if req.failover {
		s.shutdownWithFailover(c, req)
		return
	}
	// Lagging replicas are waited for (shutdown_wait.go).
	if s.startShutdownWait(req, c, false) {
		return
	}
	s.logReplicasAtShutdown()
	// persist: prepareForShutdown's save (persist_rdb.go).
	if !s.prepareShutdownSave(req.save, req.nosave, req.force) {
		s.log.Warn().Msg("Errors trying to shut down the server. Check the logs for more information.")
		c.w.Error(ErrShutdownFailed)
		return
	}
	req.from = c
	s.requestShutdown(req)
}
