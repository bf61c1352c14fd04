package server

import (
	"github.com/vigil-kv/vigil/internal/redistext"

	"crypto/rand"
	"encoding/hex"
	"math"
	"math/bits"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/vigil-kv/vigil/internal/resp"
	"github.com/vigil-kv/vigil/server/keyspace"
)

// Administrative commands: SLOWLOG, MONITOR, COMMAND, LATENCY, LASTSAVE,
// SHUTDOWN, ROLE, READONLY/READWRITE, WAIT, SAVE/BGSAVE; and the state they
// share with INFO (adminState): instantaneous metrics, the latency monitor,
// per-command latency histograms, the memory peak.

func init() {
	ls := FlagLoading | FlagStale
	admACL := []string{"admin", "slow", "dangerous"}
	conn := []string{"slow", "connection"}
	register(
		&Command{Name: "slowlog", Arity: -2, ACL: []string{"slow"}, Subs: []*Command{
			{Name: "get", Arity: -2, Flags: FlagAdmin | ls, ACL: admACL, Handler: cmdSlowlogGet},
			{Name: "help", Arity: 2, Flags: ls, ACL: []string{"slow"}, Handler: helpHandler("SLOWLOG", slowlogHelp)},
			{Name: "len", Arity: 2, Flags: FlagAdmin | ls, ACL: admACL, Handler: cmdSlowlogLen},
			{Name: "reset", Arity: 2, Flags: FlagAdmin | ls, ACL: admACL, Handler: cmdSlowlogReset},
		}},
		&Command{Name: "monitor", Arity: 1, Flags: FlagAdmin | FlagNoScript | ls, ACL: admACL, Handler: cmdMonitor},
		&Command{Name: "command", Arity: -1, Flags: ls, ACL: conn, Handler: cmdCommand, Subs: []*Command{
			{Name: "count", Arity: 2, Flags: ls, ACL: conn, Handler: cmdCommandCount},
			{Name: "docs", Arity: -2, Flags: ls, ACL: conn, Handler: cmdCommandDocs},
			{Name: "getkeys", Arity: -4, Flags: ls, ACL: conn, Handler: cmdCommandGetKeys},
			{Name: "getkeysandflags", Arity: -4, Flags: ls, ACL: conn, Handler: cmdCommandGetKeysAndFlags},
			{Name: "help", Arity: 2, Flags: ls, ACL: conn, Handler: helpHandler("COMMAND", commandHelp)},
			{Name: "info", Arity: -2, Flags: ls, ACL: conn, Handler: cmdCommandInfo},
			{Name: "list", Arity: -2, Flags: ls, ACL: conn, Handler: cmdCommandList},
		}},
		&Command{Name: "latency", Arity: -2, ACL: []string{"slow"}, Subs: []*Command{
			{Name: "doctor", Arity: 2, Flags: FlagAdmin | FlagNoScript | ls, ACL: admACL, Handler: cmdLatencyDoctor},
			{Name: "graph", Arity: 3, Flags: FlagAdmin | FlagNoScript | ls, ACL: admACL, Handler: cmdLatencyGraph},
			{Name: "help", Arity: 2, Flags: ls, ACL: []string{"slow"}, Handler: helpHandler("LATENCY", latencyHelp)},
			{Name: "histogram", Arity: -2, Flags: FlagAdmin | FlagNoScript | ls, ACL: admACL, Handler: cmdLatencyHistogram},
			{Name: "history", Arity: 3, Flags: FlagAdmin | FlagNoScript | ls, ACL: admACL, Handler: cmdLatencyHistory},
			{Name: "latest", Arity: 2, Flags: FlagAdmin | FlagNoScript | ls, ACL: admACL, Handler: cmdLatencyLatest},
			{Name: "reset", Arity: -2, Flags: FlagAdmin | FlagNoScript | ls, ACL: admACL, Handler: cmdLatencyReset},
		}},
		&Command{Name: "lastsave", Arity: 1, Flags: ls | FlagFast, ACL: []string{"admin", "fast", "dangerous"}, Handler: cmdLastSaveRDB},
		&Command{Name: "shutdown", Arity: -1, Flags: FlagAdmin | FlagNoScript | ls | FlagNoMulti | FlagAllowBusy, ACL: admACL, Handler: cmdShutdown},
		&Command{Name: "role", Arity: 1, Flags: FlagNoScript | ls | FlagFast, ACL: []string{"admin", "fast", "dangerous"}, Handler: cmdRole},
		&Command{Name: "readonly", Arity: 1, Flags: ls | FlagFast, ACL: []string{"fast", "connection"}, Handler: cmdClusterDisabled},
		&Command{Name: "readwrite", Arity: 1, Flags: ls | FlagFast, ACL: []string{"fast", "connection"}, Handler: cmdClusterDisabled},
		&Command{Name: "wait", Arity: 3, Flags: FlagNoScript, ACL: conn, Handler: cmdWait},
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
	h := a.hist[cmd.idx]
	if h == nil {
		h = new(cmdHistogram)
		a.hist[cmd.idx] = h
	}
	h.add(dur.Nanoseconds())
}

func latencyEventOf(cmd *Command) string {
	if cmd.has(FlagFast) {
		return "fast-command"
	}
	return "command"
}

// --- per-command latency histograms ---------------------------------------

// cmdHistogram counts durations in power-of-two buckets of 1024 ns << k,
// the buckets Redis's LATENCY HISTOGRAM reports from its HDR histogram.
type cmdHistogram struct {
	counts [48]int64
	total  int64
}

func histBucket(ns int64) int {
	if ns <= 1024 {
		return 0
	}
	k := bits.Len64(uint64(ns-1) >> 10)
	return min(k, 47)
}

func (h *cmdHistogram) add(ns int64) {
	h.counts[histBucket(ns)]++
	h.total++
}

// bucketMicros is the bucket's upper bound as Redis prints it: the HDR
// histogram's highest equivalent value (two significant digits) in µs.
func bucketMicros(k int) int64 {
	v := int64(1024) << k
	return (v + v>>7 - 1) / 1000
}

// percentile is the upper bound in µs of the bucket holding the p-th
// percentile (hdr_value_at_percentile, at this histogram's coarser
// resolution).
func (h *cmdHistogram) percentile(p float64) float64 {
	want := int64(math.Ceil(p / 100 * float64(h.total)))
	var cum int64
	for k, n := range h.counts {
		cum += n
		if cum >= want && cum > 0 {
			v := int64(1024) << k
			return float64(v+v>>7-1) / 1000
		}
	}
	return 0
}

// --- latency monitor (latency.c) -------------------------------------------

// latencyTSLen is LATENCY_TS_LEN.
const latencyTSLen = 160

type latencySample struct{ time, latency int64 }

// latencySeries is latencyTimeSeries: a ring of one sample per second.
type latencySeries struct {
	idx     int
	max     int64
	samples [latencyTSLen]latencySample
}

// latencyAddSampleIfNeeded is the macro of the same name: events at or
// above latency-monitor-threshold (ms) are recorded.
func (s *Server) latencyAddSampleIfNeeded(event string, ms int64) {
	th := s.cfg.LatencyMonitorThreshold
	if th > 0 && ms >= th {
		s.latencyAddSample(event, ms)
	}
}

// latencyAddSample is latencyAddSample: one sample per second, keeping the
// highest latency seen within the second.
func (s *Server) latencyAddSample(event string, ms int64) {
	ts := s.adm.latency[event]
	if ts == nil {
		ts = &latencySeries{}
		s.adm.latency[event] = ts
	}
	now := s.now.Unix()
	if ms > ts.max {
		ts.max = ms
	}
	prev := (ts.idx + latencyTSLen - 1) % latencyTSLen
	if ts.samples[prev].time == now {
		if ms > ts.samples[prev].latency {
			ts.samples[prev].latency = ms
		}
		return
	}
	ts.samples[ts.idx] = latencySample{now, ms}
	ts.idx = (ts.idx + 1) % latencyTSLen
}

func (s *Server) latencyEvents() []string {
	out := make([]string, 0, len(s.adm.latency))
	for e := range s.adm.latency {
		out = append(out, e)
	}
	sort.Strings(out)
	return out
}

var latencyHelp = []string{
	"DOCTOR",
	"    Return a human readable latency analysis report.",
	"GRAPH <event>",
	"    Return an ASCII latency graph for the <event> class.",
	"HISTORY <event>",
	"    Return time-latency samples for the <event> class.",
	"LATEST",
	"    Return the latest latency samples for all events.",
	"RESET [<event> ...]",
	"    Reset latency data of one or more <event> classes.",
	"    (default: reset all data for all event classes)",
	"HISTOGRAM [COMMAND ...]",
	"    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
	"    If no commands are specified then all histograms are replied.",
}

func cmdLatencyLatest(c *Client, args [][]byte) {
	s := c.srv
	events := s.latencyEvents()
	c.w.ArrayLen(len(events))
	for _, e := range events {
		ts := s.adm.latency[e]
		last := ts.samples[(ts.idx+latencyTSLen-1)%latencyTSLen]
		c.w.ArrayLen(4)
		c.w.BulkString(e)
		c.w.Int(last.time)
		c.w.Int(last.latency)
		c.w.Int(ts.max)
	}
}

// samplesInOrder returns the series' samples oldest first.
func (ts *latencySeries) samplesInOrder() []latencySample {
	var out []latencySample
	for j := 0; j < latencyTSLen; j++ {
		smp := ts.samples[(ts.idx+j)%latencyTSLen]
		if smp.time != 0 {
			out = append(out, smp)
		}
	}
	return out
}

func cmdLatencyHistory(c *Client, args [][]byte) {
	ts := c.srv.adm.latency[string(args[2])]
	if ts == nil {
		c.w.ArrayLen(0)
		return
	}
	smps := ts.samplesInOrder()
	c.w.ArrayLen(len(smps))
	for _, smp := range smps {
		c.w.ArrayLen(2)
		c.w.Int(smp.time)
		c.w.Int(smp.latency)
	}
}

func cmdLatencyReset(c *Client, args [][]byte) {
	s := c.srv
	n := 0
	if len(args) == 2 {
		n = len(s.adm.latency)
		s.adm.latency = map[string]*latencySeries{}
	} else {
		for _, a := range args[2:] {
			if _, ok := s.adm.latency[string(a)]; ok {
				delete(s.adm.latency, string(a))
				n++
			}
		}
	}
	c.w.Int(int64(n))
}

// cmdLatencyGraph is latencyCommandGenSparkeline: a sparkline of the
// event's samples, labelled with how long ago each happened.
func cmdLatencyGraph(c *Client, args [][]byte) {
	s := c.srv
	event := string(args[2])
	ts := s.adm.latency[event]
	if ts == nil {
		c.w.Error(errLatencyNoSamples(args[2]))
		return
	}
	smps := ts.samplesInOrder()
	var lo, hi int64
	seq := make([]sparkSample, 0, len(smps))
	now := s.now.Unix()
	for i, smp := range smps {
		if i == 0 {
			lo, hi = smp.latency, smp.latency
		}
		lo, hi = min(lo, smp.latency), max(hi, smp.latency)
		elapsed := now - smp.time
		var label string
		switch {
		case elapsed < 60:
			label = strconv.FormatInt(elapsed, 10) + "s"
		case elapsed < 3600:
			label = strconv.FormatInt(elapsed/60, 10) + "m"
		case elapsed < 3600*24:
			label = strconv.FormatInt(elapsed/3600, 10) + "h"
		default:
			label = strconv.FormatInt(elapsed/(3600*24), 10) + "d"
		}
		seq = append(seq, sparkSample{float64(smp.latency), label})
	}
	var b strings.Builder
	b.WriteString(event + " - high " + strconv.FormatInt(hi, 10) + " ms, low " + strconv.FormatInt(lo, 10) +
		" ms (all time high " + strconv.FormatInt(ts.max, 10) + " ms)\n")
	b.WriteString(strings.Repeat("-", 80) + "\n")
	b.WriteString(sparklineRender(seq, 80, 4))
	c.w.Verbatim("txt", b.String())
}

type sparkSample struct {
	value float64
	label string
}

// sparklineRender is sparkline.c's sparklineRender with SPARKLINE_FILL.
func sparklineRender(seq []sparkSample, columns, rows int) string {
	var out strings.Builder
	if len(seq) == 0 {
		return ""
	}
	lo, hi := seq[0].value, seq[0].value
	labels := 0
	for _, smp := range seq {
		lo, hi = math.Min(lo, smp.value), math.Max(hi, smp.value)
		if smp.label != "" {
			labels++
		}
	}
	for j := 0; j < len(seq); j += columns {
		if j != 0 {
			out.WriteByte('\n')
		}
		sparklineRenderRange(&out, seq[j:min(j+columns, len(seq))], lo, hi, labels, rows)
	}
	return out.String()
}

func sparklineRenderRange(out *strings.Builder, seq []sparkSample, lo, hi float64, labels, rows int) {
	const charset = "_o#"
	relmax := hi - lo
	if relmax == 0 {
		relmax = 1
	}
	steps := len(charset) * rows
	chars := make([]byte, len(seq))
	for row := 0; ; row++ {
		loop := false
		for j := range chars {
			chars[j] = ' '
		}
		for j, smp := range seq {
			step := int((smp.value - lo) * float64(steps) / relmax)
			step = max(0, min(step, steps-1))
			if row < rows {
				loop = true
				idx := step - (rows-row-1)*len(charset)
				if idx >= 0 && idx < len(charset) {
					chars[j] = charset[idx]
				} else if idx >= len(charset) {
					chars[j] = '|'
				}
				continue
			}
			if labels > 0 && row-rows < 1 { // label_margin_top
				loop = true
				break
			}
			if lc := row - rows - 1; smp.label != "" && len(smp.label) > lc {
				loop = true
				chars[j] = smp.label[lc]
			}
		}
		if !loop {
			return
		}
		out.Write(chars)
		out.WriteByte('\n')
	}
}

// cmdLatencyDoctor is createLatencyReport for the events Vigil records
// ("command", "fast-command").
func cmdLatencyDoctor(c *Client, args [][]byte) {
	s := c.srv
	th := s.cfg.LatencyMonitorThreshold
	var b strings.Builder
	if len(s.adm.latency) == 0 && th == 0 {
		b.WriteString("I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order to enable it. If we weren't in a deep space mission I'd suggest to take a look at https://redis.io/topics/latency-monitor.\n")
		c.w.Verbatim("txt", b.String())
		return
	}
	var slowlogEnabled, slowlogTuning, slowlogInspect, scheduler, largeObjects bool
	advices := 0
	now := s.now.Unix()
	for i, e := range s.latencyEvents() {
		ts := s.adm.latency[e]
		if i == 0 {
			b.WriteString("Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you Dave?\n\n")
		}
		var n, sum, oldest int64
		for _, smp := range ts.samples {
			if smp.time == 0 {
				continue
			}
			n++
			sum += smp.latency
			if oldest == 0 || smp.time < oldest {
				oldest = smp.time
			}
		}
		var avg, mad, period int64
		if n > 0 {
			avg = sum / n
			period = max(now-oldest, 1)
			var dev int64
			for _, smp := range ts.samples {
				if smp.time != 0 {
					d := avg - smp.latency
					if d < 0 {
						d = -d
					}
					dev += d
				}
			}
			mad = dev / n
		}
		perPeriod := 0.0
		if n > 0 {
			perPeriod = float64(period) / float64(n)
		}
		b.WriteString(strconv.Itoa(i+1) + ". " + e + ": " + strconv.FormatInt(n, 10) + " latency spikes (average " +
			strconv.FormatInt(avg, 10) + "ms, mean deviation " + strconv.FormatInt(mad, 10) + "ms, period " +
			strconv.FormatFloat(perPeriod, 'f', 2, 64) + " sec). Worst all time event " + strconv.FormatInt(ts.max, 10) + "ms.\n")
		switch e {
		case "command":
			if s.cfg.SlowlogLogSlowerThan < 0 || s.cfg.SlowlogMaxLen == 0 {
				slowlogEnabled = true
				advices++
			} else if s.cfg.SlowlogLogSlowerThan/1000 > th {
				slowlogTuning = true
				advices++
			}
			slowlogInspect, largeObjects = true, true
			advices += 2
		case "fast-command":
			scheduler = true
			advices++
		}
	}
	switch {
	case len(s.adm.latency) == 0 && advices == 0:
		b.WriteString("Dave, no latency spike was observed during the lifetime of this Redis instance, not in the slightest bit. I honestly think you ought to sit down calmly, take a stress pill, and think things over.\n")
	case advices == 0:
		b.WriteString("\nWhile there are latency events logged, I'm not able to suggest any easy fix. Please use the Redis community to get some help, providing this report in your help request.\n")
	default:
		b.WriteString("\nI have a few advices for you:\n\n")
		if slowlogEnabled {
			b.WriteString("- There are latency issues with potentially slow commands you are using. Try to enable the Slow Log Redis feature using the command 'CONFIG SET slowlog-log-slower-than " +
				strconv.FormatInt(th*1000, 10) + "'. If the Slow log is disabled Redis is not able to log slow commands execution for you.\n")
		}
		if slowlogTuning {
			b.WriteString("- Your current Slow Log configuration only logs events that are slower than your configured latency monitor threshold. Please use 'CONFIG SET slowlog-log-slower-than " +
				strconv.FormatInt(th*1000, 10) + "'.\n")
		}
		if slowlogInspect {
			b.WriteString("- Check your Slow Log to understand what are the commands you are running which are too slow to execute. Please check https://redis.io/commands/slowlog for more information.\n")
		}
		if scheduler {
			b.WriteString("- The system is slow to execute Redis code paths not containing system calls. This usually means the system does not provide Redis CPU time to run for long periods. You should try to:\n" +
				"  1) Lower the system load.\n" +
				"  2) Use a computer / VM just for Redis if you are running other software in the same system.\n" +
				"  3) Check if you have a \"noisy neighbour\" problem.\n" +
				"  4) Check with 'redis-cli --intrinsic-latency 100' what is the intrinsic latency in your system.\n")
		}
		if largeObjects {
			b.WriteString("- Deleting, expiring or evicting (because of maxmemory policy) large objects is a blocking operation. If you have very large objects that are often deleted, expired, or evicted, try to fragment those objects into multiple smaller objects.\n")
		}
	}
	c.w.Verbatim("txt", b.String())
}

// cmdLatencyHistogram is LATENCY HISTOGRAM [command ...]: per command, the
// calls and the cumulative count at each power-of-two bucket (µs).
func cmdLatencyHistogram(c *Client, args [][]byte) {
	s := c.srv
	var cmds []*Command
	if len(args) == 2 {
		for _, cmd := range allCommands {
			if h := s.histogramOf(cmd); h != nil {
				cmds = append(cmds, cmd)
			}
		}
	} else {
		seen := map[*Command]bool{}
		for _, a := range args[2:] {
			cmd := s.lookupFullName(string(a))
			if cmd == nil {
				continue
			}
			list := []*Command{cmd}
			if len(cmd.Subs) > 0 {
				list = cmd.Subs
			}
			for _, x := range list {
				if !seen[x] && s.histogramOf(x) != nil {
					seen[x] = true
					cmds = append(cmds, x)
				}
			}
		}
	}
	c.w.MapLen(len(cmds))
	for _, cmd := range cmds {
		h := s.histogramOf(cmd)
		c.w.BulkString(cmd.fullName)
		c.w.MapLen(2)
		c.w.BulkString("calls")
		c.w.Int(h.total)
		c.w.BulkString("histogram_usec")
		n := 0
		for _, v := range h.counts {
			if v > 0 {
				n++
			}
		}
		c.w.MapLen(n)
		var cum int64
		for k, v := range h.counts {
			cum += v
			if v > 0 {
				c.w.Int(bucketMicros(k))
				c.w.Int(cum)
			}
		}
	}
}

func (s *Server) histogramOf(cmd *Command) *cmdHistogram {
	if cmd.idx >= len(s.adm.hist) {
		return nil
	}
	h := s.adm.hist[cmd.idx]
	if h == nil || h.total == 0 {
		return nil
	}
	return h
}

// --- SLOWLOG -----------------------------------------------------------------

var slowlogHelp = []string{
	"GET [<count>]",
	"    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
	"    Entries are made of:",
	"    id, timestamp, time in microseconds, arguments array, client IP and port,",
	"    client name",
	"LEN",
	"    Return the length of the slowlog.",
	"RESET",
	"    Reset the slowlog.",
}

func cmdSlowlogGet(c *Client, args [][]byte) {
	if len(args) > 3 {
		c.w.Error(errSubcommandSyntax(args[1], "SLOWLOG"))
		return
	}
	entries := c.srv.slowlog.entries
	count := int64(10)
	if len(args) == 3 {
		n, ok := parseInt(args[2])
		if !ok || n < -1 {
			c.w.Error(ErrSlowlogCount)
			return
		}
		count = n
	}
	if count == -1 || count > int64(len(entries)) {
		count = int64(len(entries))
	}
	c.w.ArrayLen(int(count))
	for _, e := range entries[:count] {
		c.w.ArrayLen(6)
		c.w.Int(e.id)
		c.w.Int(e.at)
		c.w.Int(e.usec)
		c.w.ArrayLen(len(e.args))
		for _, a := range e.args {
			c.w.BulkString(a)
		}
		c.w.BulkString(e.addr)
		c.w.BulkString(e.name)
	}
}

func cmdSlowlogLen(c *Client, args [][]byte) { c.w.Int(int64(len(c.srv.slowlog.entries))) }

func cmdSlowlogReset(c *Client, args [][]byte) {
	c.srv.slowlog.entries = nil
	c.w.OK()
}

// --- MONITOR -------------------------------------------------------------------

// cmdMonitor is monitorCommand: +OK, then every command other clients run
// is pushed to this connection (feedMonitors). A second MONITOR is ignored
// without a reply, as Redis.
func cmdMonitor(c *Client, args [][]byte) {
	if c.monitor {
		return
	}
	c.monitor = true
	c.srv.monitors[c] = struct{}{}
	c.w.OK()
}

// --- COMMAND -------------------------------------------------------------------

// commandHelp is Redis 7.0's COMMAND HELP text.
var commandHelp = redistext.CommandHelp

// aclCategoryOrder is the order of Redis 7.0's ACL category bits, the
// order COMMAND INFO lists them in.
var aclCategoryOrder = []string{
	"keyspace", "read", "write", "set", "sortedset", "list", "hash", "string", "bitmap",
	"hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow", "blocking",
	"dangerous", "connection", "transaction", "scripting",
}

// aclCategories returns the command's categories with the implicit ones
// of setImplicitACLCategories, in Redis's order.
func aclCategories(cmd *Command) []string {
	has := map[string]bool{}
	for _, c := range cmd.ACL {
		has[strings.TrimPrefix(strings.ToLower(c), "@")] = true
	}
	if cmd.has(FlagWrite) {
		has["write"] = true
	}
	if cmd.has(FlagReadonly) && !has["scripting"] {
		has["read"] = true
	}
	if cmd.has(FlagAdmin) {
		has["admin"], has["dangerous"] = true, true
	}
	if cmd.has(FlagPubSub) {
		has["pubsub"] = true
	}
	if cmd.has(FlagFast) {
		has["fast"] = true
	}
	if cmd.has(FlagBlocking) {
		has["blocking"] = true
	}
	if !has["fast"] {
		has["slow"] = true
	}
	out := make([]string, 0, len(has))
	for _, c := range aclCategoryOrder {
		if has[c] {
			out = append(out, c)
		}
	}
	return out
}

// lookupFullName finds "name" or "container|sub" (lookupCommandBySds).
func (s *Server) lookupFullName(name string) *Command {
	name = strings.ToLower(name)
	parent, sub, isSub := strings.Cut(name, "|")
	cmd := s.cmds[parent]
	if cmd == nil || !isSub {
		return cmd
	}
	if cmd.subMap == nil || strings.Contains(sub, "|") {
		return nil
	}
	return cmd.subMap[sub]
}

// lookupArgv finds the command an argv would run (lookupCommand).
func (s *Server) lookupArgv(argv [][]byte) *Command {
	cmd := s.lookup(argv[0])
	if cmd == nil || cmd.subMap == nil || len(argv) < 2 {
		return cmd
	}
	return cmd.subMap[lowerASCII(argv[1])]
}

// topCommands returns the commands enabled in this server (after
// rename-command), ordered by name.
func (s *Server) topCommands() []*Command {
	out := make([]*Command, 0, len(s.cmds))
	for _, cmd := range s.cmds {
		out = append(out, cmd)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// keySpecFlags derives a key spec's flags from the command's flags: Vigil's
// table has key positions, not Redis's per-spec flags.
func keySpecFlags(cmd *Command) []string {
	switch {
	case cmd.has(FlagWrite):
		return []string{"RW", "update"}
	case cmd.has(FlagReadonly):
		return []string{"RO", "access"}
	}
	return []string{"RW"}
}

// movableKeys is CMD_MOVABLE_KEYS (populateCommandMovableKeys): a key
// spec that is not an index begin_search with a range find_keys (LMPOP's
// keynum, a keyword search).
func movableKeys(cmd *Command) bool {
	rc := redisCommands()[cmd.fullName]
	if rc == nil {
		return false
	}
	for _, ks := range rc.keySpecs() {
		if ks.keynum || ks.keyword != "" || ks.unknownBegin || ks.unknownFnd {
			return true
		}
	}
	return false
}

// writeCommandInfo is addReplyCommandInfo: the 10-element 7.0 entry.
func writeCommandInfo(w *resp.Writer, cmd *Command) {
	w.ArrayLen(10)
	w.BulkString(cmd.fullName)
	w.Int(int64(cmd.Arity))
	flags := cmd.Flags.Names()
	if movableKeys(cmd) && !cmd.has(FlagMovableKeys) {
		// Derived from the key specs when the table does not say so
		// (FlagMovableKeys prints it in Redis's flag order already).
		flags = append(flags, "movablekeys")
	}
	w.SetLen(len(flags))
	for _, f := range flags {
		w.Simple(f)
	}
	w.Int(int64(cmd.FirstKey))
	w.Int(int64(cmd.LastKey))
	w.Int(int64(cmd.Step))
	cats := aclCategories(cmd)
	w.SetLen(len(cats))
	for _, c := range cats {
		w.Simple("@" + c)
	}
	if rc := redisCommands()[cmd.fullName]; rc != nil {
		w.Value(rc.info.Elems[infoTips])
		w.Value(rc.info.Elems[infoKeySpecs])
	} else {
		w.SetLen(0)
		writeDerivedKeySpec(w, cmd)
	}
	// addReplyCommandSubCommands: an empty set, or an array.
	if len(cmd.Subs) == 0 {
		w.SetLen(0)
		return
	}
	w.ArrayLen(len(cmd.Subs))
	for _, sub := range cmd.Subs {
		writeCommandInfo(w, sub)
	}
}

// writeDerivedKeySpec writes the key specs of a command Redis does not
// have: one range spec from FirstKey/LastKey/Step, or none.
func writeDerivedKeySpec(w *resp.Writer, cmd *Command) {
	if cmd.FirstKey <= 0 {
		w.SetLen(0)
		return
	}
	w.SetLen(1)
	w.MapLen(3)
	w.BulkString("flags")
	kf := keySpecFlags(cmd)
	w.SetLen(len(kf))
	for _, f := range kf {
		w.Simple(f)
	}
	w.BulkString("begin_search")
	w.MapLen(2)
	w.BulkString("type")
	w.BulkString("index")
	w.BulkString("spec")
	w.MapLen(1)
	w.BulkString("index")
	w.Int(int64(cmd.FirstKey))
	w.BulkString("find_keys")
	w.MapLen(2)
	w.BulkString("type")
	w.BulkString("range")
	w.BulkString("spec")
	w.MapLen(3)
	last := cmd.LastKey
	if last >= 0 {
		last -= cmd.FirstKey
	}
	w.BulkString("lastkey")
	w.Int(int64(last))
	w.BulkString("keystep")
	w.Int(int64(cmd.Step))
	w.BulkString("limit")
	w.Int(0)
}

// cmdCommand is COMMAND with no subcommand: every command's info.
func cmdCommand(c *Client, args [][]byte) {
	cmds := c.srv.topCommands()
	c.w.ArrayLen(len(cmds))
	for _, cmd := range cmds {
		writeCommandInfo(&c.w, cmd)
	}
}

func cmdCommandCount(c *Client, args [][]byte) { c.w.Int(int64(len(c.srv.cmds))) }

func cmdCommandInfo(c *Client, args [][]byte) {
	if len(args) == 2 {
		cmdCommand(c, args)
		return
	}
	c.w.ArrayLen(len(args) - 2)
	for _, a := range args[2:] {
		cmd := c.srv.lookupFullName(string(a))
		if cmd == nil {
			c.w.Null()
			continue
		}
		writeCommandInfo(&c.w, cmd)
	}
}

// cmdCommandList is COMMAND LIST [FILTERBY MODULE name|ACLCAT cat|PATTERN p]:
// command and subcommand full names.
func cmdCommandList(c *Client, args [][]byte) {
	var match func(*Command) bool
	switch {
	case len(args) == 2:
		match = func(*Command) bool { return true }
	case len(args) == 5 && eqFold(args[2], "filterby"):
		val := args[4]
		switch {
		case eqFold(args[3], "module"):
			match = func(*Command) bool { return false } // no modules
		case eqFold(args[3], "aclcat"):
			cat := strings.ToLower(string(val))
			match = func(cmd *Command) bool {
				for _, x := range aclCategories(cmd) {
					if x == cat {
						return true
					}
				}
				return false
			}
		case eqFold(args[3], "pattern"):
			match = func(cmd *Command) bool { return keyspace.GlobMatchString(val, cmd.fullName, true) }
		default:
			c.w.Error(ErrSyntax)
			return
		}
	default:
		c.w.Error(ErrSyntax)
		return
	}
	var out []string
	for _, cmd := range c.srv.topCommands() {
		if match(cmd) {
			out = append(out, cmd.fullName)
		}
		for _, sub := range cmd.Subs {
			if match(sub) {
				out = append(out, sub.fullName)
			}
		}
	}
	c.w.ArrayLen(len(out))
	for _, n := range out {
		c.w.BulkString(n)
	}
}

// commandKeys returns the key positions of argv for cmd from its
// FirstKey/LastKey/Step (getKeysUsingLegacyRangeSpec); ok is false when
// the argument count does not fit the command.
func commandKeys(cmd *Command, argv [][]byte) []int {
	if cmd.FirstKey <= 0 {
		return nil
	}
	last := cmd.LastKey
	if last < 0 {
		last = len(argv) + last
	}
	step := max(cmd.Step, 1)
	var pos []int
	for i := cmd.FirstKey; i <= last && i < len(argv); i += step {
		pos = append(pos, i)
	}
	return pos
}

// getKeysCommon is getKeysSubcommandImpl's validation for COMMAND
// GETKEYS[ANDFLAGS]: it returns the command and its keys, or false after
// replying an error.
func getKeysCommon(c *Client, args [][]byte) (*Command, []keyRef, bool) {
	argv := args[2:]
	cmd := c.srv.lookupArgv(argv)
	if cmd == nil {
		c.w.Error(ErrInvalidCommand)
		return nil, nil, false
	}
	keys, hasKeys := commandKeyRefs(cmd, argv)
	switch {
	case !hasKeys:
		c.w.Error(ErrNoKeyArguments)
		return nil, nil, false
	case (cmd.Arity > 0 && cmd.Arity != len(argv)) || len(argv) < -cmd.Arity:
		c.w.Error(ErrInvalidArgCount)
		return nil, nil, false
	}
	if len(keys) == 0 && !cmd.has(FlagNoMandatoryKeys) {
		c.w.Error(ErrInvalidArguments)
		return nil, nil, false
	}
	return cmd, keys, true
}

func cmdCommandGetKeys(c *Client, args [][]byte) {
	_, keys, ok := getKeysCommon(c, args)
	if !ok {
		return
	}
	c.w.ArrayLen(len(keys))
	for _, k := range keys {
		c.w.Bulk(args[2+k.pos])
	}
}

// cmdCommandGetKeysAndFlags replies each key with the flags of the key
// spec that found it (addReplyFlagsForKeyArgs).
func cmdCommandGetKeysAndFlags(c *Client, args [][]byte) {
	_, keys, ok := getKeysCommon(c, args)
	if !ok {
		return
	}
	c.w.ArrayLen(len(keys))
	for _, k := range keys {
		c.w.ArrayLen(2)
		c.w.Bulk(args[2+k.pos])
		c.w.SetLen(len(k.flags))
		for _, f := range k.flags {
			c.w.Simple(f)
		}
	}
}

// docGroupByACL names the documentation group of a command Redis does not
// have, from its ACL categories.
func docGroupByACL(cmd *Command) string {
	groups := map[string]string{
		"string": "string", "list": "list", "hash": "hash", "set": "set", "sortedset": "sorted-set",
		"stream": "stream", "bitmap": "bitmap", "hyperloglog": "hyperloglog", "geo": "geo",
		"pubsub": "pubsub", "scripting": "scripting", "transaction": "transactions",
		"connection": "connection", "keyspace": "generic",
	}
	for _, c := range aclCategories(cmd) {
		if g, ok := groups[c]; ok {
			return g
		}
	}
	return "server"
}

// writeCommandDocs is addReplyCommandDocs: Redis 7.0.15's recorded docs of
// the command (redisCommands), field for field and in Redis's order, then
// "subcommands" with the docs of the subcommands Vigil implements. A command
// Redis does not have gets its group only, as Redis gives a command
// without docs.
func writeCommandDocs(w *resp.Writer, cmd *Command) {
	n := 0
	if len(cmd.Subs) > 0 {
		n++
	}
	rc := redisCommands()[cmd.fullName]
	if rc != nil {
		n += len(rc.docs.Elems) / 2
		w.MapLen(n)
		for _, e := range rc.docs.Elems {
			w.Value(e)
		}
	} else {
		w.MapLen(n + 1)
		w.BulkString("group")
		w.BulkString(docGroupByACL(cmd))
	}
	if len(cmd.Subs) > 0 {
		w.BulkString("subcommands")
		w.MapLen(len(cmd.Subs))
		for _, sub := range cmd.Subs {
			w.BulkString(sub.fullName)
			writeCommandDocs(w, sub)
		}
	}
}

// cmdCommandDocs is commandDocsCommand: every command's docs, or those of
// the named commands that exist (full names, "container|sub").
func cmdCommandDocs(c *Client, args [][]byte) {
	var cmds []*Command
	if len(args) == 2 {
		cmds = c.srv.topCommands()
	} else {
		for _, a := range args[2:] {
			if cmd := c.srv.lookupFullName(string(a)); cmd != nil {
				cmds = append(cmds, cmd)
			}
		}
	}
	c.w.MapLen(len(cmds))
	for _, cmd := range cmds {
		c.w.BulkString(cmd.fullName)
		writeCommandDocs(&c.w, cmd)
	}
}

// --- persistence and replication placeholders --------------------------------

// cmdRole is ROLE on a master without replicas (replication lands later).
func cmdRole(c *Client, args [][]byte) { c.srv.roleReply(c) } // repl

func cmdClusterDisabled(c *Client, args [][]byte) { c.w.Error(ErrClusterDisabled) }

// cmdWait is waitCommand: WAIT numreplicas timeout (milliseconds, 0:
// forever) replies how many replicas acknowledged the client's last write
// (c.woff), at once when enough have (always with numreplicas <= 0) or when
// blocking is denied (MULTI), else when enough acknowledge
// (ReplicasAcked), at the timeout or on CLIENT UNBLOCK. Without replicas
// it blocks for the whole timeout and replies 0, as 7.0.15 on a master
// with none.
func cmdWait(c *Client, args [][]byte) {
	numreplicas, ok := parseInt(args[1])
	if !ok {
		c.w.Error(ErrNotInteger)
		return
	}
	s := c.srv
	if s.isReplica() { // repl
		c.w.Error("ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a replica is configured to be writable (which is not the default) writes to replicas are just local and are not propagated.")
		return
	}
	deadline, ok := s.blockDeadline(c, args[2], false)
	if !ok {
		return
	}
	acked := s.countAcks(c.woff)
	if acked >= numreplicas || c.denyBlocking() {
		c.w.Int(acked)
		return
	}
	c.blockForAcks(s.lookup(args[0]), c.woff, numreplicas, deadline)
}

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
		default:
			c.w.Error(ErrSyntax)
			return
		}
	}
	if (abort && (req.nosave || req.save || req.now || req.force)) || (req.save && req.nosave) {
		c.w.Error(ErrSyntax)
		return
	}
	if abort {
		c.w.Error(ErrNoShutdown)
		return
	}
	s := c.srv
	// persist: prepareForShutdown's save (persist_rdb.go).
	if !s.prepareShutdownSave(req.save, req.nosave, req.force) {
		s.log.Warn().Msg("Errors trying to shut down the server. Check the logs for more information.")
		c.w.Error(ErrShutdownFailed)
		return
	}
	req.from = c
	s.requestShutdown(req)
}
