package daemon

import (
	"reflect"
	"testing"
)

func TestMasterOfEvent(t *testing.T) {
	for msg, want := range map[string]string{
		"master mymaster 127.0.0.1 6379":                                "mymaster",
		"slave 127.0.0.1:6380 127.0.0.1 6380 @ mymaster 127.0.0.1 6379": "mymaster",
		"sentinel 0123abcd 127.0.0.1 26380 @ other 10.0.0.1 6379":       "other",
		"mymaster 127.0.0.1 6379 127.0.0.1 6380":                        "",
		"":                                                              "",
	} {
		if got := masterOfEvent(msg); got != want {
			t.Errorf("masterOfEvent(%q) = %q, want %q", msg, got, want)
		}
	}
}

// TestFailoverStats drives the tracker with the events of a failover that
// finishes (as sentinel/failover.go emits them), then one that aborts.
func TestFailoverStats(t *testing.T) {
	var s failoverStats
	const m = "master mymaster 127.0.0.1 6379"
	const r = "slave 127.0.0.1:6380 127.0.0.1 6380 @ mymaster 127.0.0.1 6379"
	s.event("+sdown", m, 0)                        // not a failover event
	s.event("+failover-state-select-slave", m, 50) // before any start: not timed
	for _, e := range []struct {
		typ, msg string
		at       int64
	}{
		{"+new-epoch", "1", 1000},
		{"+try-failover", m, 1000},
		{"+vote-for-leader", "abc 1", 1001},
		{"+elected-leader", m, 1200},
		{"+failover-state-select-slave", m, 1200},
		{"+selected-slave", r, 1300},
		{"+failover-state-send-slaveof-noone", r, 1300},
		{"+failover-state-wait-promotion", r, 1310},
		{"+promoted-slave", r, 1800},
		{"+failover-state-reconf-slaves", m, 1800},
		{"+slave-reconf-sent", r, 1810},
		{"+failover-end", m, 2500},
		{"+switch-master", "mymaster 127.0.0.1 6379 127.0.0.1 6380", 2500},
	} {
		s.event(e.typ, e.msg, e.at)
	}
	started, finished, aborted, last := s.get("mymaster")
	if started != 1 || finished != 1 || aborted != 0 {
		t.Errorf("counts %d %d %d, want 1 1 0", started, finished, aborted)
	}
	want := []failoverPhase{{"wait_start", 200}, {"select_replica", 100}, {"send_replicaof_noone", 10},
		{"wait_promotion", 490}, {"reconf_replicas", 700}, {"total", 1500}}
	if !reflect.DeepEqual(last, want) {
		t.Errorf("phases %v, want %v", last, want)
	}
	s.event("+try-failover", m, 10000)
	s.event("-failover-abort-not-elected", m, 10400)
	started, finished, aborted, last = s.get("mymaster")
	if started != 2 || finished != 1 || aborted != 1 {
		t.Errorf("counts %d %d %d, want 2 1 1", started, finished, aborted)
	}
	if want := []failoverPhase{{"wait_start", 400}, {"total", 400}}; !reflect.DeepEqual(last, want) {
		t.Errorf("phases %v, want %v", last, want)
	}
	if a, b, c, l := s.get("other"); a+b+c != 0 || l != nil {
		t.Errorf("unknown master has stats")
	}
}
