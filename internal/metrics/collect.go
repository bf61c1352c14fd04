package metrics

import (
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// ServerSnapshot is what vigil-server's collector reads at scrape time, all
// taken at one moment under the execution lock.
type ServerSnapshot struct {
	// Info is the text of INFO everything.
	Info string
	// Latency holds the per-command latency histograms (the ones LATENCY
	// HISTOGRAM and INFO latencystats read), one per command that ran.
	Latency []CommandHistogram
}

// CommandHistogram is one command's latency histogram: Buckets[k] counts
// the calls that took more than 1024<<(k-1) ns and at most 1024<<k ns
// (bucket 0: at most 1024 ns), the power-of-two buckets of LATENCY
// HISTOGRAM.
type CommandHistogram struct {
	Cmd     string // the name commandstats uses ("get", "config|get")
	Buckets []uint64
}

// SentinelSnapshot is what vigil-sentinel's collector reads at scrape
// time: INFO (all sections) and, per master, what SENTINEL MASTERS,
// SENTINEL REPLICAS, SENTINEL SENTINELS and SENTINEL CKQUORUM reply, all
// taken in one turn of the daemon's loop.
type SentinelSnapshot struct {
	Info    string
	Masters []SentinelMaster
}

// SentinelMaster is one monitored master.
type SentinelMaster struct {
	// Fields is the master's SENTINEL MASTERS entry (name, ip, port,
	// flags, quorum, config-epoch...).
	Fields map[string]string
	// ReplicaFlags and SentinelFlags are the "flags" of each entry of
	// SENTINEL REPLICAS and SENTINEL SENTINELS.
	ReplicaFlags, SentinelFlags []string
	// CKQuorumOK and CKQuorumText are SENTINEL CKQUORUM's answer: the
	// status text, or the error text without its "-".
	CKQuorumOK   bool
	CKQuorumText string
	// Failovers are this sentinel's counts of the failovers it led.
	Failovers FailoverStats
}

// FailoverStats counts the failovers a sentinel led for one master, and
// times the phases of the last one.
type FailoverStats struct {
	Started, Finished, Aborted uint64
	// LastPhases are the phases the last failover went through, in order,
	// with the time spent in each (a phase it did not reach is absent).
	LastPhases []Phase
}

// Phase is one state of the failover state machine and the time spent in
// it.
type Phase struct {
	Name    string
	Seconds float64
}

// Vigil's own series.
var (
	descCommandDuration = desc("vigil_command_duration_seconds",
		"Latency of each command, from the per-command histograms of LATENCY HISTOGRAM (sum: INFO commandstats usec)", "cmd")
	descFailoversStarted = desc("vigil_sentinel_failovers_started_total",
		"Failovers this sentinel started as leader candidate (+try-failover)", "master_name")
	descFailoversFinished = desc("vigil_sentinel_failovers_finished_total",
		"Failovers this sentinel finished (+failover-end, +failover-end-for-timeout)", "master_name")
	descFailoversAborted = desc("vigil_sentinel_failovers_aborted_total",
		"Failovers this sentinel aborted (-failover-abort-*)", "master_name")
	descFailoverPhase = desc("vigil_sentinel_last_failover_phase_seconds",
		"Time the last failover this sentinel led spent in each phase (the state machine's states, as sentinel.c's SENTINEL_FAILOVER_STATE_*)", "master_name", "phase")
)

// Sentinel series of SENTINEL MASTERS, with redis_exporter's names and
// labels (exporter/sentinels.go, extractSentinelMetrics and
// processSentinelSentinels/processSentinelSlaves).
var (
	descCKQuorum     = desc(ns+"sentinel_master_ckquorum_status", "Master ckquorum status", "master_name", "message")
	descSetQuorum    = desc(ns+"sentinel_master_setting_ckquorum", "Show the current ckquorum config for each master", "master_name", "master_address")
	descSetFOTimeout = desc(ns+"sentinel_master_setting_failover_timeout", "Show the current failover-timeout config for each master", "master_name", "master_address")
	descSetParallel  = desc(ns+"sentinel_master_setting_parallel_syncs", "Show the current parallel-syncs config for each master", "master_name", "master_address")
	descSetDownAfter = desc(ns+"sentinel_master_setting_down_after_milliseconds", "Show the current down-after-milliseconds config for each master", "master_name", "master_address")
	descConfigEpoch  = desc(ns+"sentinel_master_config_epoch", "The configuration epoch of the master (increments on each failover)", "master_name", "master_address")
	descLastOKPing   = desc(ns+"sentinel_master_last_ok_ping_reply_seconds", "Elapsed time in seconds since the last successful ping reply from the master", "master_name", "master_address")
	descOKSentinels  = desc(ns+"sentinel_master_ok_sentinels", "The number of okay sentinels monitoring this master", "master_name", "master_address")
	descOKSlaves     = desc(ns+"sentinel_master_ok_slaves", "The number of okay slaves of the master", "master_name", "master_address")
	sentinelSettings = []struct {
		field string
		d     *prometheus.Desc
		scale float64
	}{
		{"quorum", descSetQuorum, 1},
		{"failover-timeout", descSetFOTimeout, 1},
		{"parallel-syncs", descSetParallel, 1},
		{"down-after-milliseconds", descSetDownAfter, 1},
		{"config-epoch", descConfigEpoch, 1},
		{"last-ok-ping-reply", descLastOKPing, 1.0 / 1000},
	}
)

// HistogramBounds are the upper bounds, in seconds, of
// vigil_command_duration_seconds' buckets: every other power-of-two bucket
// of the command histograms, 1.024 µs to 17.2 s.
var HistogramBounds = func() []float64 {
	var out []float64
	for k := 0; k <= 24; k += 2 {
		out = append(out, float64(int64(1024)<<k)/1e9)
	}
	return out
}()

// emitHistogram sends one command's vigil_command_duration_seconds.
func emitHistogram(ch chan<- prometheus.Metric, h CommandHistogram, sumSeconds float64) {
	var count uint64
	cum := make([]uint64, len(h.Buckets))
	for k, n := range h.Buckets {
		count += n
		cum[k] = count
	}
	buckets := make(map[float64]uint64, len(HistogramBounds))
	for i, b := range HistogramBounds {
		k := 2 * i
		switch {
		case k < len(cum):
			buckets[b] = cum[k]
		default:
			buckets[b] = count
		}
	}
	ch <- prometheus.MustNewConstHistogram(descCommandDuration, count, sumSeconds, buckets, h.Cmd)
}

// collector is a prometheus.Collector over a function. It is unchecked
// (Describe sends nothing): which series exist depends on the state (the
// commands that ran, the replicas, the masters).
type collector func(ch chan<- prometheus.Metric)

func (c collector) Describe(chan<- *prometheus.Desc)    {}
func (c collector) Collect(ch chan<- prometheus.Metric) { c(ch) }

// ServerCollector collects vigil-server's series from snap, called once per
// scrape; ok false (the server is shutting down) gives redis_up 0 alone.
func ServerCollector(snap func() (ServerSnapshot, bool)) prometheus.Collector {
	return collector(func(ch chan<- prometheus.Metric) {
		s, ok := snap()
		if !ok {
			ch <- prometheus.MustNewConstMetric(descUp, prometheus.GaugeValue, 0)
			return
		}
		EmitServer(ch, s, float64(time.Now().Unix()))
	})
}

// EmitServer sends the series of one server snapshot; now is the unix time
// in seconds.
func EmitServer(ch chan<- prometheus.Metric, s ServerSnapshot, now float64) {
	cmds := emitInfo(ch, s.Info, now)
	for _, h := range s.Latency {
		emitHistogram(ch, h, cmds[h.Cmd].usec/1e6)
	}
}

// SentinelCollector collects vigil-sentinel's series from snap, called
// once per scrape.
func SentinelCollector(snap func() (SentinelSnapshot, bool)) prometheus.Collector {
	return collector(func(ch chan<- prometheus.Metric) {
		s, ok := snap()
		if !ok {
			ch <- prometheus.MustNewConstMetric(descUp, prometheus.GaugeValue, 0)
			return
		}
		EmitSentinel(ch, s, float64(time.Now().Unix()))
	})
}

// EmitSentinel sends the series of one sentinel snapshot.
func EmitSentinel(ch chan<- prometheus.Metric, s SentinelSnapshot, now float64) {
	emitInfo(ch, s.Info, now)
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	for _, m := range s.Masters {
		name := m.Fields["name"]
		addr := m.Fields["ip"] + ":" + m.Fields["port"]
		ck := 0.0
		if m.CKQuorumOK {
			ck = 1
		}
		gauge(descCKQuorum, ck, name, m.CKQuorumText)
		for _, st := range sentinelSettings {
			v, _ := strconv.ParseFloat(m.Fields[st.field], 64) // as sentinels.go: missing is 0
			gauge(st.d, v*st.scale, name, addr)
		}
		// processSentinelSentinels: this sentinel plus the others that are
		// not s_down/o_down.
		okSentinels := 1
		for _, f := range m.SentinelFlags {
			if !strings.Contains(f, "o_down") && !strings.Contains(f, "s_down") {
				okSentinels++
			}
		}
		gauge(descOKSentinels, float64(okSentinels), name, addr)
		okReplicas := 0
		for _, f := range m.ReplicaFlags {
			if !strings.Contains(f, "o_down") && !strings.Contains(f, "s_down") {
				okReplicas++
			}
		}
		gauge(descOKSlaves, float64(okReplicas), name, addr)
		counter(descFailoversStarted, m.Failovers.Started, name)
		counter(descFailoversFinished, m.Failovers.Finished, name)
		counter(descFailoversAborted, m.Failovers.Aborted, name)
		for _, p := range m.Failovers.LastPhases {
			gauge(descFailoverPhase, p.Seconds, name, p.Name)
		}
	}
}
