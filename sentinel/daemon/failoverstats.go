package daemon

import (
	"strings"
	"sync"
)

// failoverStats counts, per master, the failovers this sentinel ran and
// times the phases of the last one, from the events the core notifies
// (the same +try-failover ... +failover-end lines the log and pub/sub
// carry). It feeds the vigil_sentinel_failovers_* and
// vigil_sentinel_last_failover_phase_seconds series (internal/metrics).
//
// A failover starts at +try-failover (so a sentinel that is not elected
// counts it, then aborts it with -failover-abort-not-elected), moves
// through the states of sentinel.c's failover state machine, each entered
// with its +failover-state-* event, and ends with +failover-end (or
// +failover-end-for-timeout: finished) or a -failover-abort-* event
// (aborted).
type failoverStats struct {
	mu sync.Mutex
	m  map[string]*masterFailovers // by master name
}

// failoverPhase is a phase of the failover and its length in ms.
type failoverPhase struct {
	name string
	ms   int64
}

type masterFailovers struct {
	started, finished, aborted uint64
	// The failover in progress: its start, the phase it is in and when it
	// entered it, and the phases it went through.
	running    bool
	start      int64
	phase      string
	phaseStart int64
	phases     []failoverPhase
	// last is the phases of the last failover that ended, "total" last.
	last []failoverPhase
}

// phaseOf maps the events that enter a state of the failover to the
// state's name (sentinel.c's SENTINEL_FAILOVER_STATE_*, named as
// sentinel.Core's states).
var phaseOf = map[string]string{
	"+try-failover":                      "wait_start",
	"+failover-state-select-slave":       "select_replica",
	"+failover-state-send-slaveof-noone": "send_replicaof_noone",
	"+failover-state-wait-promotion":     "wait_promotion",
	"+failover-state-reconf-slaves":      "reconf_replicas",
}

// masterOfEvent is the master an event's message is about: "<type> <name>
// <ip> <port>" for a master, "... @ <master> <ip> <port>" for the others.
func masterOfEvent(msg string) string {
	if i := strings.Index(msg, " @ "); i >= 0 {
		if f := strings.Fields(msg[i+3:]); len(f) > 0 {
			return f[0]
		}
		return ""
	}
	if f := strings.Fields(msg); len(f) >= 2 && f[0] == "master" {
		return f[1]
	}
	return ""
}

// event records one notified event at now (unix ms).
func (s *failoverStats) event(typ, msg string, now int64) {
	phase, enters := phaseOf[typ]
	end := typ == "+failover-end" || typ == "+failover-end-for-timeout"
	abort := strings.HasPrefix(typ, "-failover-abort-")
	if !enters && !end && !abort {
		return
	}
	name := masterOfEvent(msg)
	if name == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]*masterFailovers{}
	}
	f := s.m[name]
	if f == nil {
		f = &masterFailovers{}
		s.m[name] = f
	}
	closePhase := func() {
		if f.phase != "" {
			f.phases = append(f.phases, failoverPhase{f.phase, now - f.phaseStart})
		}
		f.phase, f.phaseStart = "", now
	}
	switch {
	case typ == "+try-failover":
		f.started++
		f.running, f.start, f.phases = true, now, nil
		f.phase, f.phaseStart = phase, now
	case !f.running:
		// An event of a failover that started before this process (or
		// before its stats): nothing to time.
	case enters:
		closePhase()
		f.phase, f.phaseStart = phase, now
	default: // end or abort
		closePhase()
		if end {
			f.finished++
		} else {
			f.aborted++
		}
		f.last = append(f.phases, failoverPhase{"total", now - f.start})
		f.running, f.phases = false, nil
	}
}

// get returns a master's counters and the phases of its last failover.
func (s *failoverStats) get(name string) (started, finished, aborted uint64, last []failoverPhase) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.m[name]
	if f == nil {
		return 0, 0, 0, nil
	}
	return f.started, f.finished, f.aborted, append([]failoverPhase(nil), f.last...)
}
