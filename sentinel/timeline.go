package sentinel

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// TimelineMax is how many failovers Timeline keeps per master.
const TimelineMax = 16

// TimelinePhase is one step of a failover and when it happened (unix ms).
// Detail adds what the step was about (the replica selected, the abort's
// reason, the new master's address).
type TimelinePhase struct {
	Name   string `json:"name"`
	At     int64  `json:"at"`
	Detail string `json:"detail,omitempty"`
}

// Rejection is a replica that was not promoted and why: one of
// replicaExcluded's reasons, or how it lost the ranking to the replica
// selected (compareReplicas).
type Rejection struct {
	Replica string `json:"replica"`
	Reason  string `json:"reason"`
}

// FailoverRecord is one failover of a master as this sentinel saw it: from
// the master's +sdown to +switch-master (done by this sentinel or learned
// from the leader's hellos) or to an abort.
type FailoverRecord struct {
	Master   string          `json:"master"`
	Epoch    uint64          `json:"epoch,omitempty"`
	Leader   string          `json:"leader,omitempty"`
	Selected string          `json:"selected,omitempty"`
	Result   string          `json:"result"`
	Start    int64           `json:"start"`
	End      int64           `json:"end,omitempty"`
	Phases   []TimelinePhase `json:"phases"`
	Rejected []Rejection     `json:"rejected,omitempty"`
}

// Phase returns the time of the first phase named name (0 if none).
func (r *FailoverRecord) Phase(name string) int64 {
	for _, p := range r.Phases {
		if p.Name == name {
			return p.At
		}
	}
	return 0
}

// TimelineEvent is a failover-related event of the core, in typed form.
type TimelineEvent struct {
	Type    string // the event type: +sdown, +odown, +try-failover, ...
	Master  string
	Replica string // ip:port for +selected-slave, +promoted-slave
	Leader  string // +vote-for-leader
	Epoch   uint64 // +vote-for-leader
	Detail  string // +switch-master: the new address
}

// Timeline keeps the last failovers of each master, built from the core's
// events; time is an input (Observe's now), so it is deterministic. Not
// safe for concurrent use (the core owns it).
type Timeline struct {
	max     int
	done    map[string][]FailoverRecord
	open    map[string]*FailoverRecord
	down    map[string][]TimelinePhase // the sdown/odown of the master's current down period
	version uint64
}

// NewTimeline returns an empty timeline keeping max failovers per master
// (TimelineMax when max <= 0).
func NewTimeline(max int) *Timeline {
	if max <= 0 {
		max = TimelineMax
	}
	return &Timeline{max: max, done: map[string][]FailoverRecord{},
		open: map[string]*FailoverRecord{}, down: map[string][]TimelinePhase{}}
}

// Version changes each time a failover is committed to the history (the
// shell persists the timeline when it changed).
func (t *Timeline) Version() uint64 { return t.version }

// phaseNames maps event types to the phase they record.
var phaseNames = map[string]string{
	"+sdown":                        "sdown",
	"+odown":                        "odown",
	"+try-failover":                 "try-failover",
	"+elected-leader":               "elected-leader",
	"+selected-slave":               "replica-selected",
	"+promoted-slave":               "promoted",
	"+failover-state-reconf-slaves": "reconf-replicas",
	"+failover-end":                 "replicas-reconfigured",
	"+failover-end-for-timeout":     "replicas-reconfigured-timeout",
	"+switch-master":                "switch-master",
}

func (t *Timeline) commit(master string, now int64, result string) {
	r := t.open[master]
	if r == nil {
		return
	}
	delete(t.open, master)
	r.Result, r.End = result, now
	list := append(t.done[master], *r)
	if len(list) > t.max {
		list = append([]FailoverRecord(nil), list[len(list)-t.max:]...)
	}
	t.done[master] = list
	t.version++
}

// attempted reports whether a record went beyond sdown/odown.
func attempted(r *FailoverRecord) bool {
	for _, p := range r.Phases {
		if p.Name != "sdown" && p.Name != "odown" {
			return true
		}
	}
	return r.Leader != ""
}

func (t *Timeline) openRecord(master string, now int64) *FailoverRecord {
	r := t.open[master]
	if r == nil {
		r = &FailoverRecord{Master: master, Start: now, Result: "in-progress"}
		for _, p := range t.down[master] {
			r.Phases = append(r.Phases, p)
			if p.At < r.Start {
				r.Start = p.At
			}
		}
		t.open[master] = r
	}
	return r
}

// Observe records one event at now (unix ms).
func (t *Timeline) Observe(now int64, e TimelineEvent) {
	m := e.Master
	if m == "" {
		return
	}
	r := t.open[m]
	switch e.Type {
	case "+sdown", "+odown":
		t.down[m] = append(t.down[m], TimelinePhase{Name: phaseNames[e.Type], At: now})
		r = t.openRecord(m, now)
		if r.Phase(phaseNames[e.Type]) == 0 {
			r.Phases = append(r.Phases, TimelinePhase{Name: phaseNames[e.Type], At: now})
		}
		return
	case "-sdown":
		delete(t.down, m)
		if r == nil {
			return
		}
		if !attempted(r) {
			delete(t.open, m) // down for a while, no failover
			return
		}
		r.Phases = append(r.Phases, TimelinePhase{Name: "master-back", At: now})
		t.commit(m, now, resultOfAborted(r, "master-back"))
		return
	case "-odown":
		if r != nil {
			r.Phases = append(r.Phases, TimelinePhase{Name: "odown-cleared", At: now})
		}
		return
	case "+vote-for-leader":
		r = t.openRecord(m, now)
		if e.Epoch >= r.Epoch {
			r.Leader, r.Epoch = e.Leader, e.Epoch
		}
		return
	case "+try-failover":
		if r != nil && r.Phase("try-failover") != 0 {
			// A new attempt: the previous one ended without a switch.
			t.commit(m, now, resultOfAborted(r, "retried"))
		}
		r = t.openRecord(m, now)
	}
	if strings.HasPrefix(e.Type, "-failover-abort-") {
		if r == nil {
			return
		}
		reason := e.Type[len("-failover-abort-"):]
		r.Phases = append(r.Phases, TimelinePhase{Name: "abort", At: now, Detail: reason})
		if reason != "not-elected" {
			// Another sentinel may still fail over when we were not
			// elected: keep the record open for its +switch-master.
			t.commit(m, now, "aborted: "+reason)
		}
		return
	}
	name, ok := phaseNames[e.Type]
	if !ok {
		return
	}
	if r == nil {
		if e.Type != "+switch-master" {
			return
		}
		r = t.openRecord(m, now)
	}
	detail := e.Replica
	if e.Type == "+switch-master" {
		detail = e.Detail
	}
	if e.Type == "+selected-slave" {
		r.Selected = e.Replica
	}
	r.Phases = append(r.Phases, TimelinePhase{Name: name, At: now, Detail: detail})
	if e.Type == "+switch-master" {
		delete(t.down, m)
		result := "switched by another sentinel"
		switch {
		case r.Phase("replicas-reconfigured") != 0:
			result = "failover-end"
		case r.Phase("replicas-reconfigured-timeout") != 0:
			result = "failover-end-for-timeout"
		}
		t.commit(m, now, result)
	}
}

func resultOfAborted(r *FailoverRecord, fallback string) string {
	for i := len(r.Phases) - 1; i >= 0; i-- {
		if r.Phases[i].Name == "abort" {
			return "aborted: " + r.Phases[i].Detail
		}
	}
	return "aborted: " + fallback
}

// Reject records why a replica was not chosen by the selection in
// progress for master (recorded before its +selected-slave or abort).
func (t *Timeline) Reject(master, replica, reason string) {
	r := t.open[master]
	if r == nil {
		return
	}
	for i := range r.Rejected {
		if r.Rejected[i].Replica == replica {
			r.Rejected[i].Reason = reason
			return
		}
	}
	r.Rejected = append(r.Rejected, Rejection{Replica: replica, Reason: reason})
}

// Failovers returns master's recorded failovers, oldest first, followed by
// the one in progress (Result "in-progress") if any.
func (t *Timeline) Failovers(master string) []FailoverRecord {
	out := append([]FailoverRecord(nil), t.done[master]...)
	if r := t.open[master]; r != nil && attempted(r) {
		out = append(out, *r)
	}
	return out
}

// Has reports whether anything is recorded for master.
func (t *Timeline) Has(master string) bool {
	return len(t.done[master]) > 0 || t.open[master] != nil
}

type timelineFile struct {
	Version int                         `json:"version"`
	Masters map[string][]FailoverRecord `json:"masters"`
}

// MarshalJSON is the persisted form: the committed failovers of every
// master.
func (t *Timeline) MarshalJSON() ([]byte, error) {
	return json.Marshal(timelineFile{Version: 1, Masters: t.done})
}

// Load replaces the committed history by the one in data (MarshalJSON's
// form). On an error the timeline is left unchanged.
func (t *Timeline) Load(data []byte) error {
	var f timelineFile
	if err := json.Unmarshal(data, &f); err != nil {
		return err
	}
	if f.Version != 1 {
		return fmt.Errorf("timeline: unknown version %d", f.Version)
	}
	done := map[string][]FailoverRecord{}
	for name, list := range f.Masters {
		for _, r := range list {
			if r.Master != name {
				return fmt.Errorf("timeline: record of %q under %q", r.Master, name)
			}
		}
		if len(list) > t.max {
			list = list[len(list)-t.max:]
		}
		done[name] = list
	}
	t.done = done
	return nil
}

// Fields is the reply form of a record (SENTINEL TIMELINE): scalar fields;
// phases and rejections are returned separately.
func (r *FailoverRecord) Fields() []Field {
	f := []Field{
		{"master", r.Master},
		{"epoch", strconv.FormatUint(r.Epoch, 10)},
		{"leader", r.Leader},
		{"result", r.Result},
		{"selected-replica", r.Selected},
		{"start-ms", strconv.FormatInt(r.Start, 10)},
		{"end-ms", strconv.FormatInt(r.End, 10)},
	}
	if r.End != 0 {
		f = append(f, Field{"duration-ms", strconv.FormatInt(r.End-r.Start, 10)})
	}
	return f
}

// rankLoss says why loser ranks after winner (compareReplicas).
func rankLoss(winner, loser *instance, winnerAddr string) string {
	switch {
	case winner.slavePriority != loser.slavePriority:
		return fmt.Sprintf("ranked below %s: replica-priority %d > %d", winnerAddr, loser.slavePriority, winner.slavePriority)
	case winner.slaveReplOffset != loser.slaveReplOffset:
		return fmt.Sprintf("ranked below %s: offset %d < %d", winnerAddr, loser.slaveReplOffset, winner.slaveReplOffset)
	}
	return fmt.Sprintf("ranked below %s: run id sorts after", winnerAddr)
}

// timelineEvent is the core's hook from event(): it feeds the timeline,
// and at a replica selection (+selected-slave or its abort for no good
// replica) records why each other replica was rejected, with the same
// checks selectReplica just made (the state has not changed since).
func (c *Core) timelineEvent(typ string, ri *instance, msg string) {
	if ri == nil {
		return
	}
	if _, ok := phaseNames[typ]; !ok && typ != "-sdown" && typ != "-odown" && typ != "+vote-for-leader" &&
		!strings.HasPrefix(typ, "-failover-abort-") {
		return
	}
	m := ri.masterOf()
	if m == nil {
		return
	}
	if (typ == "+sdown" || typ == "-sdown" || typ == "+odown" || typ == "-odown") && ri.flags&fMaster == 0 {
		return
	}
	if c.timeline == nil {
		c.timeline = NewTimeline(0)
	}
	e := TimelineEvent{Type: typ, Master: m.name}
	switch typ {
	case "+selected-slave", "+promoted-slave":
		e.Replica = c.announce(ri.addr) + ":" + strconv.Itoa(ri.addr.Port)
	case "+vote-for-leader":
		e.Leader, e.Epoch = m.leader, m.leaderEpoch
	case "+switch-master":
		// "<name> <old-ip> <old-port> <new-ip> <new-port>"
		if f := strings.Fields(msg); len(f) == 5 {
			e.Detail = f[3] + ":" + f[4]
		}
	case "+try-failover":
		e.Epoch = m.failoverEpoch
	}
	if typ == "+selected-slave" || typ == "-failover-abort-no-good-slave" {
		c.timelineRejections(m, e.Replica)
	}
	c.timeline.Observe(c.now, e)
}

func (c *Core) timelineRejections(m *instance, selected string) {
	// The same bound as selectReplica.
	var maxDown int64
	if m.flags&fSDown != 0 {
		maxDown += c.now - m.sdownSince
	}
	maxDown += m.downAfter * 10
	var cands []*instance
	addr := func(r *instance) string { return c.announce(r.addr) + ":" + strconv.Itoa(r.addr.Port) }
	for _, r := range sortedInstances(m.replicas) {
		if why := c.replicaExcluded(m, r, maxDown); why != "" {
			c.timeline.Reject(m.name, addr(r), why)
		} else {
			cands = append(cands, r)
		}
	}
	sort.SliceStable(cands, func(i, j int) bool { return compareReplicas(cands[i], cands[j]) < 0 })
	var winner *instance
	for _, r := range cands {
		if addr(r) == selected {
			winner = r
		}
	}
	if winner == nil {
		return
	}
	for _, r := range cands {
		if r != winner {
			c.timeline.Reject(m.name, addr(r), rankLoss(winner, r, selected))
		}
	}
}

// Timeline returns master's recorded failovers (oldest first) and whether
// the master is monitored or has a history.
func (c *Core) Timeline(master string) ([]FailoverRecord, bool) {
	_, monitored := c.masters[master]
	if c.timeline == nil {
		return nil, monitored
	}
	return c.timeline.Failovers(master), monitored || c.timeline.Has(master)
}

// TimelineVersion changes when a failover is added to the history.
func (c *Core) TimelineVersion() uint64 {
	if c.timeline == nil {
		return 0
	}
	return c.timeline.Version()
}

// TimelineJSON is the persisted form of the history (Timeline.MarshalJSON).
func (c *Core) TimelineJSON() ([]byte, error) {
	if c.timeline == nil {
		c.timeline = NewTimeline(0)
	}
	return c.timeline.MarshalJSON()
}

// LoadTimeline restores a persisted history (at startup).
func (c *Core) LoadTimeline(data []byte) error {
	if c.timeline == nil {
		c.timeline = NewTimeline(0)
	}
	return c.timeline.Load(data)
}
