package server

import (
	"math"
	"math/bits"
	"sort"
	"strconv"
	"strings"
)

// LATENCY (latency.c) and the per-command latency histograms (LATENCY
// HISTOGRAM, INFO latencystats). Their state lives in adminState
// (cmd_admin.go), which afterCommand feeds.

func init() {
	ls := FlagLoading | FlagStale
	admACL := []string{"admin", "slow", "dangerous"}
	register(
		&Command{Name: "latency", Arity: -2, ACL: []string{"slow"}, Subs: []*Command{
			{Name: "doctor", Arity: 2, Flags: FlagAdmin | FlagNoScript | ls, ACL: admACL, Handler: cmdLatencyDoctor},
			{Name: "graph", Arity: 3, Flags: FlagAdmin | FlagNoScript | ls, ACL: admACL, Handler: cmdLatencyGraph},
			{Name: "help", Arity: 2, Flags: ls, ACL: []string{"slow"}, Handler: helpHandler("LATENCY", latencyHelp)},
			{Name: "histogram", Arity: -2, Flags: FlagAdmin | FlagNoScript | ls, ACL: admACL, Handler: cmdLatencyHistogram},
			{Name: "history", Arity: 3, Flags: FlagAdmin | FlagNoScript | ls, ACL: admACL, Handler: cmdLatencyHistory},
			{Name: "latest", Arity: 2, Flags: FlagAdmin | FlagNoScript | ls, ACL: admACL, Handler: cmdLatencyLatest},
			{Name: "reset", Arity: -2, Flags: FlagAdmin | FlagNoScript | ls, ACL: admACL, Handler: cmdLatencyReset},
		}},
	)
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
		c.w.BulkString(cmd.FullName())
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
	if cmd.Index() >= len(s.adm.hist) {
		return nil
	}
	h := s.adm.hist[cmd.Index()]
	if h == nil || h.total == 0 {
		return nil
	}
	return h
}
