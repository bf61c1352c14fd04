package sentinel_test

import (
	"os"
	"strings"
	"testing"

	"github.com/vigil-kv/vigil/sentinel"
	"github.com/vigil-kv/vigil/sentinel/internal/sim"
)

func obs(t *sentinel.Timeline, now int64, typ string, mod ...func(*sentinel.TimelineEvent)) {
	e := sentinel.TimelineEvent{Type: typ, Master: "m"}
	for _, f := range mod {
		f(&e)
	}
	t.Observe(now, e)
}

func TestTimelineLeaderFailover(t *testing.T) {
	tl := sentinel.NewTimeline(0)
	obs(tl, 1000, "+sdown")
	obs(tl, 1100, "+odown")
	obs(tl, 1200, "+try-failover")
	obs(tl, 1210, "+vote-for-leader", func(e *sentinel.TimelineEvent) { e.Leader, e.Epoch = "me", 7 })
	obs(tl, 1300, "+elected-leader")
	tl.Reject("m", "10.0.0.3:6379", "info-too-old")
	obs(tl, 1400, "+selected-slave", func(e *sentinel.TimelineEvent) { e.Replica = "10.0.0.2:6379" })
	if got := tl.Failovers("m"); len(got) != 1 || got[0].Result != "in-progress" {
		t.Fatalf("in progress: %+v", got)
	}
	obs(tl, 1500, "+promoted-slave", func(e *sentinel.TimelineEvent) { e.Replica = "10.0.0.2:6379" })
	obs(tl, 1500, "+failover-state-reconf-slaves")
	obs(tl, 1700, "+failover-end")
	v := tl.Version()
	obs(tl, 1800, "+switch-master", func(e *sentinel.TimelineEvent) { e.Detail = "10.0.0.2:6379" })
	if tl.Version() == v {
		t.Error("version unchanged by a committed failover")
	}
	got := tl.Failovers("m")
	if len(got) != 1 {
		t.Fatalf("failovers: %+v", got)
	}
	r := got[0]
	want := map[string]int64{"sdown": 1000, "odown": 1100, "try-failover": 1200, "elected-leader": 1300,
		"replica-selected": 1400, "promoted": 1500, "reconf-replicas": 1500, "replicas-reconfigured": 1700, "switch-master": 1800}
	for name, at := range want {
		if r.Phase(name) != at {
			t.Errorf("phase %s at %d, want %d", name, r.Phase(name), at)
		}
	}
	if r.Result != "failover-end" || r.Leader != "me" || r.Epoch != 7 || r.Selected != "10.0.0.2:6379" || r.Start != 1000 || r.End != 1800 {
		t.Errorf("record %+v", r)
	}
	if len(r.Rejected) != 1 || r.Rejected[0] != (sentinel.Rejection{Replica: "10.0.0.3:6379", Reason: "info-too-old"}) {
		t.Errorf("rejected %+v", r.Rejected)
	}
}

func TestTimelineAbortsAndFlaps(t *testing.T) {
	tl := sentinel.NewTimeline(2)
	// A flap: sdown then back, no attempt: nothing recorded.
	obs(tl, 100, "+sdown")
	obs(tl, 200, "-sdown")
	if len(tl.Failovers("m")) != 0 || tl.Has("m") {
		t.Fatalf("flap recorded: %+v", tl.Failovers("m"))
	}
	// Not elected, then another sentinel's switch arrives by hello.
	obs(tl, 1000, "+sdown")
	obs(tl, 1100, "+odown")
	obs(tl, 1200, "+try-failover")
	obs(tl, 1300, "-failover-abort-not-elected")
	obs(tl, 1400, "+switch-master", func(e *sentinel.TimelineEvent) { e.Detail = "x:1" })
	// No good replica: aborted, retried, then the master comes back.
	obs(tl, 2000, "+sdown")
	obs(tl, 2100, "+odown")
	obs(tl, 2200, "+try-failover")
	obs(tl, 2300, "+elected-leader")
	obs(tl, 2400, "-failover-abort-no-good-slave")
	obs(tl, 3200, "+try-failover")
	obs(tl, 3300, "-failover-abort-not-elected")
	obs(tl, 3400, "-sdown")
	got := tl.Failovers("m")
	if len(got) != 2 {
		t.Fatalf("kept %d, want the last 2: %+v", len(got), got)
	}
	if got[0].Result != "aborted: no-good-slave" || got[1].Result != "aborted: not-elected" {
		t.Errorf("results %q, %q", got[0].Result, got[1].Result)
	}
	// The retry keeps the sdown/odown of the down period it belongs to.
	if got[1].Phase("sdown") != 2000 || got[1].Phase("odown") != 2100 || got[1].Phase("try-failover") != 3200 {
		t.Errorf("retry phases %+v", got[1].Phases)
	}
	data, err := tl.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	back := sentinel.NewTimeline(0)
	if err := back.Load(data); err != nil {
		t.Fatal(err)
	}
	if b := back.Failovers("m"); len(b) != 2 || b[1].Result != got[1].Result || b[0].Phase("elected-leader") != 2300 {
		t.Errorf("reloaded %+v", b)
	}
	for _, bad := range []string{"", "{", `{"version":9}`, `{"version":1,"masters":{"a":[{"master":"b"}]}}`, `[1,2]`} {
		if err := back.Load([]byte(bad)); err == nil {
			t.Errorf("Load(%q) accepted", bad)
		}
	}
	if len(back.Failovers("m")) != 2 {
		t.Error("a failed Load changed the history")
	}
}

// TestTimelineScenario: the simulated plain failover (r2 behind, r1
// selected) leaves a timeline on the leader with every phase in order and
// r2's ranking loss, and an observer's record ending in +switch-master.
func TestTimelineScenario(t *testing.T) {
	src, err := os.ReadFile("testdata/plain_failover.script")
	if err != nil {
		t.Fatal(err)
	}
	s := sim.RunScript(string(src))
	leaders := 0
	for _, name := range []string{"s1", "s2", "s3"} {
		recs, ok := s.Nodes[name].Core.Timeline("mymaster")
		if !ok || len(recs) != 1 {
			t.Fatalf("%s: timeline %+v", name, recs)
		}
		r := recs[0]
		if r.Phase("sdown") == 0 || r.Phase("switch-master") < r.Phase("sdown") || r.End == 0 {
			t.Errorf("%s: phases %+v", name, r.Phases)
		}
		if r.Phase("elected-leader") == 0 {
			if r.Result != "switched by another sentinel" {
				t.Errorf("%s: observer result %q", name, r.Result)
			}
			continue
		}
		leaders++
		order := []string{"sdown", "odown", "try-failover", "elected-leader", "replica-selected", "promoted", "reconf-replicas", "replicas-reconfigured", "switch-master"}
		for i := 1; i < len(order); i++ {
			if r.Phase(order[i]) == 0 || r.Phase(order[i]) < r.Phase(order[i-1]) {
				t.Errorf("%s: %s at %d, after %s at %d", name, order[i], r.Phase(order[i]), order[i-1], r.Phase(order[i-1]))
			}
		}
		if r.Result != "failover-end" || r.Selected != "127.0.0.1:6380" {
			t.Errorf("%s: result %q selected %q", name, r.Result, r.Selected)
		}
		if len(r.Rejected) != 1 || r.Rejected[0].Replica != "127.0.0.1:6381" || !strings.HasPrefix(r.Rejected[0].Reason, "ranked below 127.0.0.1:6380: replica-priority 110 > 100") {
			t.Errorf("%s: rejected %+v", name, r.Rejected)
		}
	}
	if leaders != 1 {
		t.Errorf("%d leaders", leaders)
	}
}
