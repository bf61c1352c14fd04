package drill

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/deploy"
)

const ms = time.Millisecond

func TestCheckLossFindsLostAcknowledgedWrites(t *testing.T) {
	ops := []Op{
		{Kind: KindWrite, Key: "a", Value: "1", Status: StatusOK, Acked: true, Done: 10 * ms},
		{Kind: KindWrite, Key: "b", Value: "2", Status: StatusOK, Acked: true, Done: 20 * ms},  // lost: missing
		{Kind: KindWrite, Key: "c", Value: "3", Status: StatusOK, Acked: false, Done: 30 * ms}, // lost, WAIT not met
		{Kind: KindWrite, Key: "d", Value: "4", Status: StatusUnknown},                         // present, not a loss
		{Kind: KindWrite, Key: "e", Value: "5", Status: StatusFailed},                          // absent, not a loss
		{Kind: KindRegWrite, Key: "r", Value: "x", Status: StatusOK},                           // not checked
	}
	final := map[string]string{"a": "1", "d": "4"}
	r := CheckLoss(ops, final, 0)
	if r.Checked != 3 || len(r.Lost) != 2 || r.Lost[0].Key != "b" || r.Lost[1].Key != "c" || r.AckedLost() != 2 {
		t.Fatalf("no WAIT: %+v", r)
	}
	if r.UnknownPresent != 1 || r.FailedPresent != 0 {
		t.Fatalf("present counts: %+v", r)
	}
	r = CheckLoss(ops, final, 1)
	if r.CheckedWithWait != 2 || r.LostWithWait != 1 || r.AckedLost() != 1 || len(r.Lost) != 2 {
		t.Fatalf("WAIT 1: %+v", r)
	}
	if r := CheckLoss(ops[:1], final, 0); r.AckedLost() != 0 || r.Checked != 1 {
		t.Fatalf("nothing lost: %+v", r)
	}
}

func TestUnavailabilityWindows(t *testing.T) {
	w := func(invoke, done time.Duration, s Status) Op {
		return Op{Kind: KindWrite, Invoke: invoke, Done: done, Status: s}
	}
	ops := []Op{
		w(0, 10*ms, StatusOK),
		w(10*ms, 20*ms, StatusOK),
		w(20*ms, 900*ms, StatusFailed), // failures do not end a window
		w(900*ms, 1500*ms, StatusOK),   // gap 20ms..1500ms
		w(1500*ms, 1510*ms, StatusOK),
	}
	got := Unavailability(ops, 2600*ms, 500*ms)
	want := []Window{{Start: 20 * ms, End: 1500 * ms, Duration: 1480 * ms}, {Start: 1510 * ms, End: 2600 * ms, Duration: 1090 * ms}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("windows = %+v, want %+v", got, want)
	}
	if got := Unavailability(ops[:2], 30*ms, 500*ms); len(got) != 0 {
		t.Fatalf("no gap: %+v", got)
	}
	if d := FirstWriteAfter(ops, 15*ms); d != 1485*ms {
		t.Fatalf("FirstWriteAfter = %v, want 1.485s (the write invoked at 900ms)", d)
	}
	if d := FirstWriteAfter(ops, 2*time.Second); d != -1 {
		t.Fatalf("FirstWriteAfter past the end = %v, want -1", d)
	}
	// With --wait, only the writes WAIT acknowledged end a window.
	acked := append([]Op{}, ops...)
	acked[0].Acked, acked[1].Acked, acked[4].Acked = true, true, true
	acked = append(acked, Op{Kind: KindRegWrite, Invoke: 1600 * ms, Done: 1610 * ms, Status: StatusOK, Acked: true})
	got = UnavailabilityWait(acked, 2600*ms, 500*ms, 1)
	want = []Window{{Start: 20 * ms, End: 1510 * ms, Duration: 1490 * ms}, {Start: 1510 * ms, End: 2600 * ms, Duration: 1090 * ms}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("WAIT 1: windows = %+v, want %+v", got, want)
	}
}

func reg(client int, kind Kind, value string, invoke, done time.Duration, s Status) Op {
	return Op{Client: client, Kind: kind, Key: "drill:r:0", Value: value, Invoke: invoke, Done: done, Status: s}
}

func TestLinearizableHistoryPasses(t *testing.T) {
	ops := []Op{
		reg(0, KindRegWrite, "a", 0, 10*ms, StatusOK),
		reg(1, KindRegRead, "a", 20*ms, 30*ms, StatusOK),
		reg(0, KindRegWrite, "b", 25*ms, 50*ms, StatusOK),
		reg(1, KindRegRead, "a", 31*ms, 40*ms, StatusOK), // concurrent with write b: may see a
		reg(1, KindRegRead, "b", 60*ms, 70*ms, StatusOK),
		// An unknown write may take effect later, at any time.
		reg(2, KindRegWrite, "c", 80*ms, 90*ms, StatusUnknown),
		reg(1, KindRegRead, "b", 100*ms, 110*ms, StatusOK),
		reg(1, KindRegRead, "c", 120*ms, 130*ms, StatusOK),
		// A failed write had no effect.
		reg(2, KindRegWrite, "d", 140*ms, 150*ms, StatusFailed),
		reg(1, KindRegRead, "c", 160*ms, 170*ms, StatusOK),
	}
	r := CheckLinearizable(ops, 5*time.Second)
	if r.Result != "Ok" || r.Counterexample != "" || r.Ops != 9 || r.Keys != 1 {
		t.Fatalf("got %+v, want Ok over 9 ops", r)
	}
}

// TestUnknownWritesInTheCheck: unknown writes no read returned are left out
// (thousands of them check at once, where porcupine used to time out); one
// a read returned took effect before that read returned, so a later read
// of an older value is caught.
func TestUnknownWritesInTheCheck(t *testing.T) {
	ops := []Op{reg(0, KindRegWrite, "a", 0, 10*ms, StatusOK)}
	at := 20 * ms
	for i := 0; i < 3000; i++ {
		ops = append(ops, reg(1+i%4, KindRegWrite, fmt.Sprintf("u%d", i), at, at+ms, StatusUnknown),
			reg(5, KindRegRead, "a", at+ms, at+2*ms, StatusOK))
		at += 3 * ms
	}
	r := CheckLinearizable(ops, 5*time.Second)
	if r.Result != "Ok" || r.Ops != 3001 {
		t.Fatalf("unread unknown writes: got %+v, want Ok over 3001 ops", r)
	}
	// u1 was read at [at, at+1ms]: a read of a after it is stale.
	ops = append(ops, reg(5, KindRegRead, "u1", at, at+ms, StatusOK), reg(5, KindRegRead, "a", at+2*ms, at+3*ms, StatusOK))
	if r := CheckLinearizable(ops, 5*time.Second); r.Result != "Illegal" {
		t.Fatalf("a read of a after one of u1: got %+v, want Illegal", r)
	}
}

func TestNonLinearizableHistoryIsDetectedWithCounterexample(t *testing.T) {
	// A stale read: b was acknowledged before the read began, yet the read
	// returns a (what a client reading a demoted master sees).
	ops := []Op{
		reg(0, KindRegWrite, "a", 0, 10*ms, StatusOK),
		reg(0, KindRegWrite, "b", 20*ms, 30*ms, StatusOK),
		reg(1, KindRegRead, "a", 40*ms, 50*ms, StatusOK),
	}
	r := CheckLinearizable(ops, 5*time.Second)
	if r.Result != "Illegal" || r.Key != "drill:r:0" {
		t.Fatalf("got %+v, want Illegal on drill:r:0", r)
	}
	for _, want := range []string{"not linearizable", `write("b")`, `read() -> "a"`, "stuck"} {
		if !strings.Contains(r.Counterexample, want) {
			t.Errorf("counterexample lacks %q:\n%s", want, r.Counterexample)
		}
	}
}

func TestScheduleIsSeeded(t *testing.T) {
	a, err := Schedule(42, FaultAll, 20, 3, 3)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Schedule(42, FaultAll, 20, 3, 3)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("same seed, different schedules:\n%+v\n%+v", a, b)
	}
	c, _ := Schedule(43, FaultAll, 20, 3, 3)
	if reflect.DeepEqual(a, c) {
		t.Fatal("seeds 42 and 43 gave the same 20-round schedule")
	}
	kinds := map[string]bool{}
	for i, s := range a {
		kinds[s.Fault] = true
		if s.Round != i+1 || s.Target < 0 || s.Target >= 3 || !ValidFault(s.Fault) || s.Fault == FaultAll {
			t.Fatalf("step %d: %+v", i, s)
		}
		if s.Fault == FaultRollingRestart && len(s.Order) != 6 {
			t.Fatalf("rolling restart order %v, want a permutation of 6 nodes", s.Order)
		}
	}
	if len(kinds) < 2 {
		t.Fatalf("all: 20 rounds drew only %v", kinds)
	}
	one, _ := Schedule(1, FaultKillMaster, 3, 3, 3)
	for _, s := range one {
		if s.Fault != FaultKillMaster {
			t.Fatalf("kill-master schedule has %s", s.Fault)
		}
	}
	if _, err := Schedule(1, "flood", 1, 3, 3); err == nil {
		t.Fatal("unknown fault accepted")
	}
	if _, err := Schedule(1, FaultKillMaster, 0, 3, 3); err == nil {
		t.Fatal("0 rounds accepted")
	}
}

func TestSVGIsValidXML(t *testing.T) {
	r := &Report{Fault: "kill-master", Rounds: 1, Seed: 1, Clients: 2, Duration: 3 * time.Second,
		History: []Op{
			{Client: 0, Kind: KindWrite, Key: "k<&>", Value: `"v"`, Invoke: 0, Done: 5 * ms, Status: StatusOK},
			{Client: 1, Kind: KindRegRead, Key: "r", Invoke: 1 * time.Second, Done: 2 * time.Second, Status: StatusUnknown, Err: "i/o timeout <x>"},
			{Client: 1, Kind: KindRegWrite, Key: "r", Invoke: 2 * time.Second, Done: 2100 * ms, Status: StatusFailed},
		},
		Faults:        []FaultRecord{{Round: 1, Fault: "kill-master", Target: "127.0.0.1:1", Start: time.Second, End: 2 * time.Second}},
		Events:        []TimedEvent{{At: 1500 * ms, Type: "+switch-master", Payload: "mymaster 127.0.0.1 1 127.0.0.1 2"}},
		MasterChanges: []TimedEvent{{At: 1600 * ms, Type: "client:+switch-master", Payload: "a -> b"}},
	}
	var buf bytes.Buffer
	if err := r.WriteSVG(&buf); err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(&buf)
	rects, root := 0, ""
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("invalid XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			if root == "" {
				root = se.Name.Local
			}
			if se.Name.Local == "rect" {
				rects++
			}
		}
	}
	if root != "svg" || rects < 5 { // background, fault span, 3 ops
		t.Fatalf("root %q, %d rects", root, rects)
	}
}

func TestClassify(t *testing.T) {
	if s, _ := classify(nil); s != StatusOK {
		t.Fatal(s)
	}
	if s, _ := classify(errors.New("read tcp 127.0.0.1:1->127.0.0.1:2: i/o timeout")); s != StatusUnknown {
		t.Fatalf("timeout: %s", s)
	}
	if s, _ := classify(errors.New("dial tcp 127.0.0.1:2: connect: connection refused")); s != StatusFailed {
		t.Fatalf("refused: %s", s)
	}
	// Error replies: refused writes failed; a write whose held reply
	// became an error (sync-ack mode) ran and may survive.
	if s, _ := classify(replyErr("READONLY You can't write against a read only replica.")); s != StatusFailed {
		t.Fatalf("READONLY: %s", s)
	}
	if s, _ := classify(replyErr("UNACKED Write may or may not be applied: acknowledged by 0 of 1 required replicas within 100 ms")); s != StatusUnknown {
		t.Fatalf("UNACKED: %s", s)
	}
	if s, _ := classify(replyErr("UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)")); s != StatusUnknown {
		t.Fatalf("UNBLOCKED: %s", s)
	}
}

func TestReportFilesAndText(t *testing.T) {
	yes := true
	r := &Report{Fault: "pause-master", Rounds: 1, Seed: 3, Clients: 1, Wait: 1, Duration: time.Second,
		History:      []Op{{Client: 0, Kind: KindWrite, Key: "k", Value: "v", Invoke: 0, Done: ms, Status: StatusOK, Acked: true}},
		Faults:       []FaultRecord{{Round: 1, Fault: "pause-master", Target: "127.0.0.1:1", SwitchMaster: 300 * ms, NewMaster: "127.0.0.1:2", FirstWrite: 400 * ms, RejoinedAsReplica: &yes}},
		Loss:         CheckLoss([]Op{{Kind: KindWrite, Key: "k", Value: "v", Status: StatusOK, Acked: true}}, map[string]string{}, 1),
		Linearizable: LinResult{Result: "Ok"},
		Deployment:   &DeploymentInfo{Server: "redis-server", Sentinel: "redis-sentinel", ServerCount: 3, SentinelCount: 3}}
	dir := t.TempDir()
	if err := r.WriteFiles(dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("report.json: %v", err)
	}
	if back.Loss.AckedLost() != 1 || len(back.History) != 1 || *back.Faults[0].RejoinedAsReplica != true ||
		back.Deployment == nil || *back.Deployment != *r.Deployment {
		t.Fatalf("round trip: %+v", back)
	}
	if _, err := os.Stat(filepath.Join(dir, "timeline.svg")); err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	r.WriteText(&text)
	for _, want := range []string{"+switch-master after 0.300s", "first successful write after 0.400s",
		"rejoined as a replica: true", "acknowledged writes lost: 1 of 1", "with WAIT 1: 1 of 1", "lost k = \"v\"",
		"deployment: 3 redis-server, 3 redis-sentinel"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
}

func TestFaultTimesMeasureTheClientSwitch(t *testing.T) {
	r := &Report{
		Faults: []FaultRecord{
			{Fault: "kill-master", Start: 1000 * ms, End: 5000 * ms},
			{Fault: "partition-master", Start: 6000 * ms, End: 9000 * ms},
			{Fault: "kill-sentinel", Start: 10000 * ms, End: 11000 * ms},
		},
		Events: []TimedEvent{
			{At: 2000 * ms, Type: "+switch-master", Payload: "mymaster 10.0.0.2 7000 10.0.0.3 7001"},
			{At: 7000 * ms, Type: "+switch-master", Payload: "mymaster 10.0.0.3 7001 10.0.0.2 7000"},
		},
		MasterChanges: []TimedEvent{
			{At: 500 * ms, Type: "client:+switch-master", Payload: "client 0: 10.0.0.9:1 -> 10.0.0.3:7001"}, // before the fault
			{At: 2050 * ms, Type: "client:+switch-master", Payload: "client 1: 10.0.0.2:7000 -> 10.0.0.3:7001"},
			{At: 2300 * ms, Type: "client:+switch-master", Payload: "client 0: 10.0.0.2:7000 -> 10.0.0.3:7001"},
			{At: 7250 * ms, Type: "client:discovery", Payload: "client 0: 10.0.0.3:7001 -> 10.0.0.2:7000"},
		},
	}
	ops := []Op{
		{Kind: KindWrite, Invoke: 1500 * ms, Done: 1600 * ms, Status: StatusFailed},
		{Kind: KindWrite, Invoke: 2010 * ms, Done: 2080 * ms, Status: StatusOK},
		{Kind: KindRegWrite, Invoke: 7100 * ms, Done: 7400 * ms, Status: StatusOK},
	}
	fillFaultTimes(r, ops)
	f := r.Faults[0]
	if f.SwitchMaster != 1000*ms || f.NewMaster != "10.0.0.3:7001" || f.FirstWrite != 1080*ms || f.FirstWriteAfterSwitch != 80*ms {
		t.Errorf("kill-master: %+v", f)
	}
	if f.ClientSwitch == nil || *f.ClientSwitch != 50*ms || !*f.ClientWithin100ms {
		t.Errorf("kill-master client switch: %v %v, want +50ms within", f.ClientSwitch, f.ClientWithin100ms)
	}
	f = r.Faults[1]
	if f.ClientSwitch == nil || *f.ClientSwitch != 250*ms || *f.ClientWithin100ms || f.FirstWriteAfterSwitch != 400*ms {
		t.Errorf("partition-master: %+v", f)
	}
	f = r.Faults[2]
	if f.SwitchMaster != -1 || f.ClientSwitch != nil || f.FirstWriteAfterSwitch != -1 || f.FirstWrite != -1 {
		t.Errorf("kill-sentinel (no failover): %+v", f)
	}
	r.Network, r.NetworkInfo = "netns", "network namespaces: one per node"
	var text bytes.Buffer
	r.WriteText(&text)
	for _, want := range []string{"partitions: netns (network namespaces: one per node)",
		"client on the new master +0.050s after +switch-master: within switch time + 100 ms",
		"client on the new master +0.250s after +switch-master: more than switch time + 100 ms",
		"first successful write 0.080s after +switch-master"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
}

// The schedules of single faults drawn before split existed stay the same
// (split draws its sides only in its own rounds): seed 7's, as the code
// before split drew them.
func TestScheduleOfOtherFaultsUnchangedBySplit(t *testing.T) {
	type want struct {
		before, hold time.Duration
		target       int
		order        []int
	}
	for fault, rounds := range map[string][]want{
		FaultKillSentinel: {{1037043955, 952531224, 0, nil}, {1455557379, 1207786506, 2, nil}, {792884469, 1129424482, 1, nil}},
		FaultRollingRestart: {{1037043955, 952531224, 0, []int{3, 0, 4, 1, 5, 2}}, {969496988, 897749873, 1, []int{5, 2, 4, 1, 0, 3}},
			{1349867314, 1164898757, 0, []int{0, 5, 2, 1, 3, 4}}},
	} {
		got, err := Schedule(7, fault, 3, 3, 3)
		if err != nil {
			t.Fatal(err)
		}
		for i, w := range rounds {
			g := got[i]
			if g.Before != w.before || g.Hold != w.hold || g.Target != w.target || !reflect.DeepEqual(g.Order, w.order) || g.SplitSentinels != nil {
				t.Errorf("%s round %d: %+v, want %+v", fault, i+1, g, w)
			}
		}
	}
}

func TestScheduleSplit(t *testing.T) {
	a, err := Schedule(5, FaultSplit, 10, 3, 3)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Schedule(5, FaultSplit, 10, 3, 3)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed, different split schedules")
	}
	sides := map[int]bool{}
	for _, s := range a {
		if s.Fault != FaultSplit || len(s.SplitSentinels) != 1 || s.SplitSentinels[0] < 0 || s.SplitSentinels[0] > 2 {
			t.Fatalf("3 sentinels: step %+v, want split keeping one sentinel with the master", s)
		}
		if s.Hold < 500*ms || s.Hold >= 1500*ms {
			t.Fatalf("hold %v outside [0.5s, 1.5s)", s.Hold)
		}
		sides[s.SplitSentinels[0]] = true
	}
	if len(sides) < 2 {
		t.Errorf("10 splits kept the same sentinel with the master: %v", sides)
	}
	five, _ := Schedule(5, FaultSplit, 5, 3, 5)
	for _, s := range five {
		if len(s.SplitSentinels) != 2 || s.SplitSentinels[0] == s.SplitSentinels[1] {
			t.Fatalf("5 sentinels: %v, want two distinct (a minority)", s.SplitSentinels)
		}
	}
	all, _ := Schedule(11, FaultAll, 60, 3, 3)
	n := 0
	for _, s := range all {
		if s.Fault == FaultSplit {
			n++
			if len(s.SplitSentinels) != 1 {
				t.Fatalf("all: split step %+v", s)
			}
		} else if s.SplitSentinels != nil {
			t.Fatalf("all: %s step has split sentinels", s.Fault)
		}
	}
	if n == 0 {
		t.Error("all: 60 rounds drew no split")
	}
	if !ValidFault(FaultSplit) || !strings.Contains(FaultNames(), "split or all") {
		t.Errorf("split not listed: %q", FaultNames())
	}
}

// fleet is a deployment shape without processes: servers (the first the
// master as started) and sentinels.
func fleet(servers, sentinels int) *deploy.Deployment {
	d := &deploy.Deployment{}
	for i := 0; i < servers; i++ {
		role := deploy.RoleReplica
		if i == 0 {
			role = deploy.RoleMaster
		}
		d.Servers = append(d.Servers, &deploy.Node{Name: fmt.Sprintf("server-%d", 7000+i), Role: role, Host: "127.0.0.1", Port: 7000 + i})
	}
	for i := 0; i < sentinels; i++ {
		d.Sentinels = append(d.Sentinels, &deploy.Node{Name: fmt.Sprintf("sentinel-%d", 27000+i), Role: deploy.RoleSentinel, Host: "127.0.0.1", Port: 27000 + i})
	}
	return d
}

func TestSplitSides(t *testing.T) {
	d := fleet(3, 3)
	// The master is server-7001 now (after a failover); the step keeps
	// replica index 1 (server-7002) and sentinel 2 with it.
	m := d.Servers[1]
	minority, majority, err := splitSides(d, m, Step{Fault: FaultSplit, Target: 1, SplitSentinels: []int{2}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(names(minority), " "), "server-7001 server-7002 sentinel-27002"; got != want {
		t.Errorf("minority %q, want %q", got, want)
	}
	if got, want := strings.Join(names(majority), " "), "server-7000 sentinel-27000 sentinel-27001"; got != want {
		t.Errorf("majority %q, want %q", got, want)
	}
	// Target is taken modulo the replicas.
	minority, _, _ = splitSides(d, d.Servers[0], Step{Target: 2, SplitSentinels: []int{0}})
	if got, want := strings.Join(names(minority), " "), "server-7000 server-7001 sentinel-27000"; got != want {
		t.Errorf("minority %q, want %q", got, want)
	}
	two := fleet(2, 3)
	if _, _, err := splitSides(two, two.Servers[0], Step{}); err == nil || !strings.Contains(err.Error(), "two replicas") {
		t.Errorf("one replica: %v", err)
	}
}

func TestCheckSplitRefusesWithoutNamespaces(t *testing.T) {
	sched := []Step{{Round: 1, Fault: FaultKillMaster}, {Round: 2, Fault: FaultSplit}}
	err := checkSplit(sched, Config{Fault: FaultAll, Deployment: fleet(3, 3)})
	if err == nil || !strings.Contains(err.Error(), "--net netns") || !strings.Contains(err.Error(), "round 2") {
		t.Errorf("all over loopback: %v", err)
	}
	err = checkSplit(sched[1:], Config{Fault: FaultSplit})
	if err == nil || !strings.Contains(err.Error(), "network namespaces") {
		t.Errorf("split without a deployment: %v", err)
	}
	if err := checkSplit(sched[:1], Config{Fault: FaultAll, Deployment: fleet(3, 3)}); err != nil {
		t.Errorf("no split drawn: %v", err)
	}
}

func TestOldMasterWriteWindow(t *testing.T) {
	old, other := "10.0.0.2:7000", "10.0.0.3:7001"
	w := func(node string, done time.Duration, acked bool) Op {
		return Op{Kind: KindWrite, Node: node, Status: StatusOK, Acked: acked, Invoke: done - 5*ms, Done: done}
	}
	ops := []Op{
		w(old, 900*ms, true),   // before the fault
		w(old, 1500*ms, true),  // in the cut
		w(old, 2500*ms, false), // WAIT not met: not acknowledged
		{Kind: KindRegWrite, Node: old, Status: StatusOK, Done: 3 * time.Second},
		{Kind: KindWrite, Node: old, Status: StatusUnknown, Done: 3500 * ms},
		{Kind: KindRegRead, Node: old, Status: StatusOK, Done: 3600 * ms}, // a read
		w(other, 4*time.Second, true),                                     // the new master
		w(old, 5500*ms, true),                                             // after the heal, before the demotion
		w("", 5600*ms, true),                                              // unknown node
		w(old, 9*time.Second, true),                                       // after the fault's end
	}
	f := FaultRecord{Fault: FaultSplit, Target: old, Start: time.Second, Healed: 5 * time.Second, End: 8 * time.Second, NewMaster: other}
	if win, n := oldMasterWriteWindow(ops, f, nil); win != 4500*ms || n != 3 {
		t.Errorf("promoted: window %v, %d writes; want 4.5s, 3", win, n)
	}
	f.NewMaster = "" // no failover: only up to the heal counts
	if win, n := oldMasterWriteWindow(ops, f, nil); win != 2*time.Second || n != 2 {
		t.Errorf("not promoted: window %v, %d writes; want 2s, 2", win, n)
	}
	// The sentinels failed back to the old master at 2.6 s: its writes
	// after that are a master's, not a deposed one's.
	f.NewMaster = other
	back := []TimedEvent{{At: 2 * time.Second, Type: "+switch-master", Payload: "mymaster 10.0.0.2 7000 10.0.0.3 7001"},
		{At: 2600 * ms, Type: "+switch-master", Payload: "mymaster 10.0.0.3 7001 10.0.0.2 7000"}}
	if win, n := oldMasterWriteWindow(ops, f, back); win != 500*ms || n != 1 {
		t.Errorf("failed back: window %v, %d writes; want 0.5s, 1", win, n)
	}
	f.Target = "10.0.0.9:7009"
	if win, n := oldMasterWriteWindow(ops, f, nil); win != -1 || n != 0 {
		t.Errorf("no write: window %v, %d; want -1, 0", win, n)
	}
	r := &Report{Faults: []FaultRecord{{Fault: FaultPartitionMaster, Target: old, Start: time.Second, Healed: 5 * time.Second, End: 8 * time.Second},
		{Fault: FaultKillMaster, Target: old, Start: time.Second, End: 8 * time.Second}}}
	fillFaultTimes(r, ops)
	if p := r.Faults[0].OldMasterWriteWindow; p == nil || *p != 2*time.Second || r.Faults[0].OldMasterWrites != 2 {
		t.Errorf("partition-master record: %+v", r.Faults[0])
	}
	if r.Faults[1].OldMasterWriteWindow != nil {
		t.Errorf("kill-master has no write window: %+v", r.Faults[1])
	}
}

func TestFaultStatsAndSplitText(t *testing.T) {
	win := 2500 * ms
	sched := []Step{{Round: 1, Before: time.Second}, {Round: 2, Before: 500 * ms}, {Round: 3, Before: time.Second}}
	faults := []FaultRecord{
		{Round: 1, Fault: FaultSplit, Target: "10.0.0.2:7000", Start: 2 * time.Second, Healed: 11 * time.Second, End: 14 * time.Second,
			SwitchMaster: 3 * time.Second, NewMaster: "10.0.0.4:7002", OldMasterWriteWindow: &win, OldMasterWrites: 17,
			Split: &SplitRecord{Minority: []string{"server-7000", "server-7001", "sentinel-27000"}, Majority: []string{"server-7002", "sentinel-27001", "sentinel-27002"},
				MajorityReplica: "server-7002", Hold: 9 * time.Second,
				SentinelViews: map[string]string{"sentinel-27000": "10.0.0.2:7000", "sentinel-27001": "10.0.0.4:7002", "sentinel-27002": "10.0.0.4:7002"},
				ServerRoles:   map[string]string{"server-7000": "master", "server-7001": "replica of 10.0.0.2:7000", "server-7002": "master"}}},
		{Round: 2, Fault: FaultKillMaster, Start: 15 * time.Second, End: 19 * time.Second},
		{Round: 3, Fault: FaultSplit, Start: 20 * time.Second, End: 26 * time.Second, Error: "boom", Note: "the sentinel majority promoted no replica during the split"},
	}
	st := faultStats(sched, faults)
	want := []FaultStat{{Fault: FaultSplit, Rounds: 2, Errors: 1, Mean: 10 * time.Second, Max: 13 * time.Second},
		{Fault: FaultKillMaster, Rounds: 1, Mean: 4500 * ms, Max: 4500 * ms}}
	if !reflect.DeepEqual(st, want) {
		t.Fatalf("faultStats = %+v, want %+v", st, want)
	}
	r := &Report{Fault: FaultAll, Rounds: 3, Faults: faults, FaultStats: st, UnavailableTotal: 3 * time.Second}
	var text bytes.Buffer
	r.WriteText(&text)
	for _, want := range []string{
		"split for 9.000s: [server-7000 server-7001 sentinel-27000] | [server-7002 sentinel-27001 sentinel-27002]",
		"sentinels name sentinel-27000=10.0.0.2:7000, sentinel-27001=10.0.0.4:7002, sentinel-27002=10.0.0.4:7002",
		"server-7001=replica of 10.0.0.2:7000",
		"old master's write window: 2.500s (it acknowledged 17 write(s) after the fault)",
		"note: the sentinel majority promoted no replica during the split",
		"split                   2 round(s), mean 10.000s, max 13.000s, 1 with an error",
		"unavailability (no successful write): 3.000s in all",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
}

// replyErr is an error reply as go-redis returns it (redis.Error).
type replyErr string

func (e replyErr) Error() string { return string(e) }
func (replyErr) RedisError()     {}
