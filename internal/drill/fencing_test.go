package drill

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// The old master's write window runs from the fault to the last write a
// client acknowledged there: each client's writes before its own switch.
func TestOldMasterWriteWindow(t *testing.T) {
	bound := time.Second
	r := &Report{
		Faults: []FaultRecord{{Fault: "partition-master", Target: "10.0.0.2:7000", Start: 6000 * ms, End: 9000 * ms, IsolationBound: &bound},
			{Fault: "kill-master", Start: 10000 * ms, End: 11000 * ms}},
		MasterChanges: []TimedEvent{
			{At: 500 * ms, Type: "client:discovery", Payload: "client 1: 10.0.0.9:1 -> 10.0.0.2:7000"}, // before the fault
			{At: 7250 * ms, Type: "client:+switch-master", Payload: "client 0: 10.0.0.2:7000 -> 10.0.0.3:7001"},
			{At: 8000 * ms, Type: "client:+switch-master", Payload: "client 1: 10.0.0.2:7000 -> 10.0.0.3:7001"},
		},
	}
	ops := []Op{
		{Client: 0, Kind: KindWrite, Invoke: 5000 * ms, Done: 5100 * ms, Status: StatusOK},     // before the fault
		{Client: 0, Kind: KindWrite, Invoke: 6100 * ms, Done: 6200 * ms, Status: StatusOK},     // old master
		{Client: 0, Kind: KindWrite, Invoke: 7200 * ms, Done: 7300 * ms, Status: StatusOK},     // waited for the new master
		{Client: 0, Kind: KindWrite, Invoke: 7300 * ms, Done: 7350 * ms, Status: StatusOK},     // new master
		{Client: 1, Kind: KindRegWrite, Invoke: 6500 * ms, Done: 6800 * ms, Status: StatusOK},  // old master
		{Client: 1, Kind: KindWrite, Invoke: 7000 * ms, Done: 7900 * ms, Status: StatusFailed}, // refused
		{Client: 1, Kind: KindRegRead, Invoke: 7000 * ms, Done: 7950 * ms, Status: StatusOK},   // a read
		{Client: 1, Kind: KindWrite, Invoke: 8100 * ms, Done: 8200 * ms, Status: StatusOK},     // new master
		{Client: 2, Kind: KindWrite, Invoke: 10500 * ms, Done: 10600 * ms, Status: StatusOK},   // next round
	}
	fillWriteWindows(r, ops)
	f := r.Faults[0]
	if f.OldMasterWriteWindow == nil || *f.OldMasterWriteWindow != 800*ms || f.WithinIsolationBound == nil || !*f.WithinIsolationBound {
		t.Fatalf("partition-master: window %v within %v", f.OldMasterWriteWindow, f.WithinIsolationBound)
	}
	if r.Faults[1].OldMasterWriteWindow != nil {
		t.Fatal("kill-master has a write window")
	}
	var text bytes.Buffer
	r.WriteText(&text)
	if want := "old master's write window: 0.800s (within its master-isolation-timeout 1.000s)"; !strings.Contains(text.String(), want) {
		t.Errorf("text lacks %q:\n%s", want, text.String())
	}
	short := 500 * ms
	r.Faults[0].IsolationBound = &short
	fillWriteWindows(r, ops)
	if *r.Faults[0].WithinIsolationBound {
		t.Fatal("0.8 s within a 0.5 s bound")
	}
	r.Faults[0].IsolationBound, r.Faults[0].WithinIsolationBound = nil, nil
	fillWriteWindows(r, ops)
	text.Reset()
	r.WriteText(&text)
	if want := "old master's write window: 0.800s (no master-isolation-timeout: not bounded)"; !strings.Contains(text.String(), want) {
		t.Errorf("text lacks %q:\n%s", want, text.String())
	}
}
