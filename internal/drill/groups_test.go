package drill

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/deploy"
)

func TestScheduleGroups(t *testing.T) {
	one, _ := Schedule(7, FaultAll, 10, 3, 3)
	same, _ := ScheduleGroups(7, FaultAll, 10, 3, 3, 1)
	if !reflect.DeepEqual(one, same) {
		t.Error("one group changed the schedule")
	}
	a, err := ScheduleGroups(7, FaultKillMaster, 40, 3, 3, 3)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := ScheduleGroups(7, FaultKillMaster, 40, 3, 3, 3)
	if !reflect.DeepEqual(a, b) {
		t.Error("the same seed gave two schedules")
	}
	hit := map[int]int{}
	for _, s := range a {
		if s.Group < 0 || s.Group >= 3 {
			t.Fatalf("round %d targets group %d of 3", s.Round, s.Group)
		}
		hit[s.Group]++
	}
	if len(hit) != 3 {
		t.Errorf("40 rounds over 3 groups hit only %v", hit)
	}
	c, _ := ScheduleGroups(8, FaultKillMaster, 40, 3, 3, 3)
	if reflect.DeepEqual(a, c) {
		t.Error("two seeds gave the same schedule")
	}
	if _, err := ScheduleGroups(7, FaultKillMaster, 1, 3, 3, 0); err == nil {
		t.Error("0 groups accepted")
	}
}

func groupViews(names ...string) []*deploy.Deployment {
	var out []*deploy.Deployment
	for _, n := range names {
		out = append(out, &deploy.Deployment{Spec: deploy.Spec{MasterName: n}})
	}
	return out
}

func TestEventGroups(t *testing.T) {
	gs := groupViews("mymaster", "mymaster-2")
	for payload, want := range map[string][]int{
		"mymaster-2 127.0.0.1 7003 127.0.0.1 7004":                                  {1},
		"master mymaster 127.0.0.1 7000":                                            {0},
		"sentinel 3f1c 127.0.0.1 27380 @ mymaster-2 127.0.0.1 7003":                 {1},
		"slave 127.0.0.1:7001 127.0.0.1 7001 @ mymaster 127.0.0.1 7000":             {0},
		"#tilt mode entered":                                                        {0, 1},
		"new-epoch 3":                                                               {0, 1},
		"+try-failover master mymaster-20 127.0.0.1 7000 (not one of these groups)": {0, 1},
	} {
		if got := eventGroups(payload, gs); !reflect.DeepEqual(got, want) {
			t.Errorf("%q: groups %v, want %v", payload, got, want)
		}
	}
}

func TestMergeGroups(t *testing.T) {
	gs := groupViews("g", "g-2")
	ms := time.Millisecond
	subs := []*Report{
		{
			InitialMaster: "a:1", FinalMaster: "a:2",
			Faults:      []FaultRecord{{Round: 2, Group: "g", Fault: FaultKillMaster, Start: 10 * ms, End: 20 * ms}},
			History:     []Op{{Client: 0, Kind: KindWrite, Key: "k", Value: "1", Invoke: 5 * ms, Done: 6 * ms, Status: StatusOK}},
			Events:      []TimedEvent{{At: 3 * ms, Type: "+switch-master", Payload: "g a 1 a 2"}, {At: 1 * ms, Type: "+tilt", Payload: "#tilt mode entered"}},
			Counts:      Counts{Total: 10, OK: 8, Failed: 1, Unknown: 1, WritesOK: 5, WritesAckd: 5},
			Loss:        LossReport{Checked: 5, Lost: []LostWrite{{Key: "k", Want: "1"}}, UnknownPresent: 1},
			Unavailable: []Window{{Start: 10 * ms, End: 30 * ms, Duration: 20 * ms}}, UnavailableTotal: 20 * ms,
			Linearizable: LinResult{Result: "Ok", Ops: 4, Keys: 2},
		},
		{
			InitialMaster: "b:1", FinalMaster: "b:1",
			Faults:       []FaultRecord{{Round: 1, Group: "g-2", Fault: FaultKillSentinel}},
			History:      []Op{{Client: 1, Kind: KindWrite, Key: "k", Value: "1", Invoke: 1 * ms, Done: 2 * ms, Status: StatusOK}},
			Events:       []TimedEvent{{At: 1 * ms, Type: "+tilt", Payload: "#tilt mode entered"}},
			Counts:       Counts{Total: 4, OK: 4, WritesOK: 2, WritesAckd: 2},
			Loss:         LossReport{Checked: 2, FailedPresent: 1},
			Linearizable: LinResult{Result: "Illegal", Ops: 3, Keys: 1, Key: "r", Counterexample: "x"},
		},
	}
	rep := &Report{Schedule: []Step{{Round: 1}, {Round: 2}}}
	mergeGroups(rep, gs, subs, 4)
	if len(rep.Groups) != 2 || rep.Groups[1].MasterName != "g-2" || rep.Groups[1].FirstClient != 4 ||
		!reflect.DeepEqual(rep.Groups[0].Rounds, []int{2}) || rep.Groups[0].FinalMaster != "a:2" {
		t.Errorf("groups %+v", rep.Groups)
	}
	if want := (Counts{Total: 14, OK: 12, Failed: 1, Unknown: 1, WritesOK: 7, WritesAckd: 7}); rep.Counts != want {
		t.Errorf("counts %+v, want %+v", rep.Counts, want)
	}
	if l := rep.Loss; l.Checked != 7 || len(l.Lost) != 1 || l.Lost[0].Key != "g/k" || l.UnknownPresent != 1 || l.FailedPresent != 1 {
		t.Errorf("loss %+v", l)
	}
	if rep.UnavailableTotal != 20*ms || len(rep.Unavailable) != 1 || rep.Unavailable[0].Group != "g" {
		t.Errorf("unavailability %v %+v", rep.UnavailableTotal, rep.Unavailable)
	}
	if lr := rep.Linearizable; lr.Result != "Illegal" || lr.Key != "g-2/r" || lr.Ops != 7 || lr.Keys != 3 {
		t.Errorf("linearizability %+v", lr)
	}
	// History: keys prefixed, clients numbered on, ordered by invocation.
	if h := rep.History; len(h) != 2 || h[0].Key != "g-2/k" || h[0].Client != 5 || h[1].Key != "g/k" || h[1].Client != 0 {
		t.Errorf("history %+v", h)
	}
	// Faults by round; an event both groups saw is listed once.
	if rep.Faults[0].Round != 1 || rep.Faults[1].Round != 2 || len(rep.Events) != 2 || rep.Events[0].Type != "+tilt" {
		t.Errorf("faults %+v events %+v", rep.Faults, rep.Events)
	}
	if rep.FinalMaster != "a:2 b:1" || len(rep.FaultStats) != 2 {
		t.Errorf("final master %q, fault stats %+v", rep.FinalMaster, rep.FaultStats)
	}
	var b strings.Builder
	rep.WriteText(&b)
	for _, want := range []string{"groups (2;", "g-2", "b:1 -> b:1", "round 2: kill-master of  in group g", "group g\n", "Illegal"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, b.String())
		}
	}
}

func TestGroupsSVGLabels(t *testing.T) {
	r := &Report{Clients: 4, Duration: time.Second,
		Groups: []GroupReport{{MasterName: "g", FirstClient: 0}, {MasterName: "g-2", FirstClient: 2}},
		Faults: []FaultRecord{{Round: 1, Fault: FaultKillMaster, Group: "g-2", End: time.Millisecond}}}
	var b strings.Builder
	if err := r.WriteSVG(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{">g #0<", ">g #1<", ">g-2 #0<", ">g-2 #1<", ">kill-master g-2<"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("timeline lacks %q", want)
		}
	}
	if got := (&Report{}).clientLabel(3); got != "client 3" {
		t.Errorf("one group's label %q", got)
	}
}
