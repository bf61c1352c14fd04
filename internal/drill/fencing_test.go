package drill

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// The old master's write window (oldMasterWriteWindow) is judged against
// the master-isolation-timeout the drill read from the master before the
// cut, and the text report says which.
func TestWriteWindowIsolationBound(t *testing.T) {
	bound, win, none := time.Second, 800*ms, time.Duration(-1)
	r := &Report{Faults: []FaultRecord{
		{Fault: "partition-master", Target: "10.0.0.2:7000", Start: 6000 * ms, End: 9000 * ms, IsolationBound: &bound, OldMasterWriteWindow: &win, OldMasterWrites: 3},
		{Fault: "kill-master", Start: 10000 * ms, End: 11000 * ms},
		{Fault: "split", Target: "10.0.0.2:7000", Start: 12000 * ms, End: 19000 * ms, IsolationBound: &bound, OldMasterWriteWindow: &none},
	}}
	fillWriteWindows(r)
	if f := r.Faults[0]; f.WithinIsolationBound == nil || !*f.WithinIsolationBound {
		t.Fatalf("partition-master: within %v", f.WithinIsolationBound)
	}
	if r.Faults[1].WithinIsolationBound != nil {
		t.Fatal("kill-master has a verdict")
	}
	if f := r.Faults[2]; f.WithinIsolationBound == nil || !*f.WithinIsolationBound {
		t.Fatal("no write after the fault is within any bound")
	}
	var text bytes.Buffer
	r.WriteText(&text)
	if want := "old master's write window: 0.800s (it acknowledged 3 write(s) after the fault), within its master-isolation-timeout 1.000s"; !strings.Contains(text.String(), want) {
		t.Errorf("text lacks %q:\n%s", want, text.String())
	}
	short := 500 * ms
	r.Faults[0].IsolationBound = &short
	fillWriteWindows(r)
	if *r.Faults[0].WithinIsolationBound {
		t.Fatal("0.8 s within a 0.5 s bound")
	}
	r.Faults[0].IsolationBound = nil
	fillWriteWindows(r)
	text.Reset()
	r.WriteText(&text)
	if want := "old master's write window: 0.800s (it acknowledged 3 write(s) after the fault), no master-isolation-timeout: not bounded"; !strings.Contains(text.String(), want) {
		t.Errorf("text lacks %q:\n%s", want, text.String())
	}
}
