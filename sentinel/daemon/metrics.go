package daemon

import (
	"strings"

	"github.com/vigil-kv/vigil/sentinel"
)

// MasterMetrics is one monitored master as the Prometheus endpoint
// (internal/metrics) reads it.
type MasterMetrics struct {
	// Fields is the master's SENTINEL MASTERS entry.
	Fields map[string]string
	// ReplicaFlags and SentinelFlags are the flags of each entry of
	// SENTINEL REPLICAS and SENTINEL SENTINELS.
	ReplicaFlags, SentinelFlags []string
	// CKQuorumOK and CKQuorumText are SENTINEL CKQUORUM's reply (the
	// error's text without "-" when not OK).
	CKQuorumOK   bool
	CKQuorumText string
	// Failovers this sentinel started, finished and aborted for the master,
	// and the phases of the last one that ended (failoverstats.go).
	FailoversStarted, FailoversFinished, FailoversAborted uint64
	LastFailoverPhases                                    []FailoverPhase
}

// FailoverPhase is one phase of a failover and the seconds spent in it.
type FailoverPhase struct {
	Name    string
	Seconds float64
}

// MetricsSnapshot is what the metrics endpoint reads at scrape time: the
// text of INFO (every section) and every master's state. INFO's sentinel
// section and the masters are read in one turn of the loop, so they agree
// with each other; ok is false once the daemon has stopped.
func (d *Daemon) MetricsSnapshot() (info string, masters []MasterMetrics, ok bool) {
	base := d.infoText([]string{"server", "clients", "stats", "cpu"})
	var section string
	ok = d.call(func() {
		now := nowMs()
		running, queued := d.scripts.counts()
		section = d.core.InfoSection(now, running, queued)
		for _, fields := range d.core.Masters(now) {
			m := MasterMetrics{Fields: fieldMap(fields)}
			name := m.Fields["name"]
			reps, _ := d.core.Replicas(now, name)
			for _, r := range reps {
				m.ReplicaFlags = append(m.ReplicaFlags, fieldMap(r)["flags"])
			}
			sens, _ := d.core.Sentinels(now, name)
			for _, r := range sens {
				m.SentinelFlags = append(m.SentinelFlags, fieldMap(r)["flags"])
			}
			m.CKQuorumText, m.CKQuorumOK, _ = d.core.CKQuorum(name)
			masters = append(masters, m)
		}
	})
	if !ok {
		return "", nil, false
	}
	for i := range masters {
		m := &masters[i]
		var last []failoverPhase
		m.FailoversStarted, m.FailoversFinished, m.FailoversAborted, last = d.failovers.get(m.Fields["name"])
		for _, p := range last {
			m.LastFailoverPhases = append(m.LastFailoverPhases, FailoverPhase{p.name, float64(p.ms) / 1000})
		}
	}
	return strings.Join([]string{base, section}, "\r\n"), masters, true
}

func fieldMap(fs []sentinel.Field) map[string]string {
	m := make(map[string]string, len(fs))
	for _, f := range fs {
		m[f.Name] = f.Value
	}
	return m
}
