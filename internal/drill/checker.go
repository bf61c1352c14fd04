package drill

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// LostWrite is an acknowledged write whose key does not hold its value at
// the end.
type LostWrite struct {
	Key   string        `json:"key"`
	Want  string        `json:"want"`
	Got   string        `json:"got"` // "" = missing
	Done  time.Duration `json:"done_ns"`
	Acked bool          `json:"acked"` // acknowledged with WAIT too
}

// LossReport is the result of reading back every acknowledged write.
type LossReport struct {
	// Checked counts writes whose SET replied OK; Lost those of them whose
	// value is gone.
	Checked int         `json:"checked"`
	Lost    []LostWrite `json:"lost"`
	// Wait is --wait N (0: no WAIT). CheckedWithWait and LostWithWait
	// count only the writes WAIT acknowledged with N replicas.
	Wait            int `json:"wait"`
	CheckedWithWait int `json:"checked_with_wait"`
	LostWithWait    int `json:"lost_with_wait"`
	// UnknownPresent and FailedPresent count writes whose outcome was
	// unknown / failed and that are present at the end (not a loss).
	UnknownPresent int `json:"unknown_present"`
	FailedPresent  int `json:"failed_present"`
}

// AckedLost is the number of acknowledged writes lost: with --wait N only
// the writes WAIT acknowledged count.
func (l LossReport) AckedLost() int {
	if l.Wait > 0 {
		return l.LostWithWait
	}
	return len(l.Lost)
}

// CheckLoss compares the KindWrite operations with final, the value of
// each key read back from the final master (a missing key is absent or "").
func CheckLoss(ops []Op, final map[string]string, wait int) LossReport {
	r := LossReport{Wait: wait, Lost: []LostWrite{}}
	for _, op := range ops {
		if op.Kind != KindWrite {
			continue
		}
		got := final[op.Key]
		switch op.Status {
		case StatusOK:
			r.Checked++
			if op.Acked && wait > 0 {
				r.CheckedWithWait++
			}
			if got != op.Value {
				r.Lost = append(r.Lost, LostWrite{Key: op.Key, Want: op.Value, Got: got, Done: op.Done, Acked: op.Acked})
				if op.Acked && wait > 0 {
					r.LostWithWait++
				}
			}
		case StatusUnknown:
			if got == op.Value {
				r.UnknownPresent++
			}
		case StatusFailed:
			if got == op.Value {
				r.FailedPresent++
			}
		}
	}
	return r
}

// Window is a time span with no successful write.
type Window struct {
	Start    time.Duration `json:"start_ns"`
	End      time.Duration `json:"end_ns"`
	Duration time.Duration `json:"duration_ns"`
	// Group is the master name of the group that was unavailable (in the
	// totals of a drill over several groups).
	Group string `json:"group,omitempty"`
}

// Unavailability lists the gaps longer than min between successive
// successful writes (completion times), from the first operation to end.
func Unavailability(ops []Op, end, min time.Duration) []Window {
	return UnavailabilityWait(ops, end, min, 0)
}

// UnavailabilityWait is Unavailability counting only acknowledged writes:
// with wait 0 every write that replied OK; with --wait N (wait > 0) only
// the writes WAIT acknowledged with N replicas (the register writes, which
// do not WAIT, do not count), so a master that answers OK but whose
// replicas cannot acknowledge is unavailable.
func UnavailabilityWait(ops []Op, end, min time.Duration, wait int) []Window {
	var done []time.Duration
	start := time.Duration(-1)
	for _, op := range ops {
		if start < 0 || op.Invoke < start {
			start = op.Invoke
		}
		if op.Status != StatusOK {
			continue
		}
		if (wait == 0 && (op.Kind == KindWrite || op.Kind == KindRegWrite)) || (wait > 0 && op.Kind == KindWrite && op.Acked) {
			done = append(done, op.Done)
		}
	}
	if start < 0 {
		return []Window{}
	}
	sort.Slice(done, func(i, j int) bool { return done[i] < done[j] })
	out := []Window{}
	prev := start
	for _, t := range append(done, end) {
		if t-prev > min {
			out = append(out, Window{Start: prev, End: t, Duration: t - prev})
		}
		if t > prev {
			prev = t
		}
	}
	return out
}

// FirstWriteAfter is how long after t the first successful write invoked
// at or after t completed (-1 when none did).
func FirstWriteAfter(ops []Op, t time.Duration) time.Duration {
	best := time.Duration(-1)
	for _, op := range ops {
		if op.Status == StatusOK && (op.Kind == KindWrite || op.Kind == KindRegWrite) && op.Invoke >= t {
			if d := op.Done - t; best < 0 || d < best {
				best = d
			}
		}
	}
	return best
}

// oldMasterWriteWindow is, for a fault that cut the master off
// (partition-master, split), the time from the fault's start to the
// completion of the last write the old master (f.Target) acknowledged while
// it was cut off or deposed, and how many writes it acknowledged then; -1
// and 0 when it acknowledged none. The writes counted are those a drill
// client had sent to f.Target (Op.Node) that completed acknowledged (SET OK,
// and WAIT's count with --wait; every register write that replied OK) at or
// after the fault's start and: when another node was promoted during the
// fault (f.NewMaster), up to the fault's end (the old master acknowledging
// after the heal, before the sentinels demote it, loses writes too) or
// until a later +switch-master in events makes it the master again (the
// sentinels may fail back to it); otherwise up to the heal (f.Healed; the
// fault's end when not healed), after which the old master is again the
// master of everyone.
//
// With fencing, this window is bounded by the time a master that reaches
// neither a sentinel majority nor enough replicas keeps accepting writes.
func oldMasterWriteWindow(ops []Op, f FaultRecord, events []TimedEvent) (time.Duration, int) {
	limit := f.End
	if (f.NewMaster == "" || f.NewMaster == f.Target) && f.Healed > 0 {
		limit = f.Healed
	}
	for _, e := range events {
		if e.Type != "+switch-master" || e.At < f.Start || e.At > limit {
			continue
		}
		if p := strings.Fields(e.Payload); len(p) == 5 && p[3]+":"+p[4] == f.Target {
			limit = e.At
			break
		}
	}
	last, n := time.Duration(-1), 0
	for _, op := range ops {
		if op.Node == "" || op.Node != f.Target || op.Status != StatusOK || op.Done < f.Start || op.Done > limit {
			continue
		}
		if op.Kind == KindRegWrite || (op.Kind == KindWrite && op.Acked) {
			n++
			last = max(last, op.Done-f.Start)
		}
	}
	return last, n
}

// ClientSwitchAfter is the time of the first client master change to
// newMaster at or after from (the fault's start), from the drill's
// "client:<source>" events ("client N: old -> new"); ok is false when no
// client switched to it.
func ClientSwitchAfter(changes []TimedEvent, from time.Duration, newMaster string) (time.Duration, bool) {
	if newMaster == "" {
		return 0, false
	}
	for _, e := range changes {
		if e.At < from || !strings.HasPrefix(e.Type, "client:") {
			continue
		}
		if i := strings.LastIndex(e.Payload, " -> "); i >= 0 && e.Payload[i+4:] == newMaster {
			return e.At, true
		}
	}
	return 0, false
}

// LinResult is the linearizability check of the register workload.
type LinResult struct {
	Result string `json:"result"` // Ok, Illegal or Unknown (timed out)
	Ops    int    `json:"ops"`
	Keys   int    `json:"keys"`
	// Key and Counterexample describe the first key found illegal: the
	// longest linearizable prefix, then the operations none of whose
	// orders could follow it.
	Key            string `json:"key,omitempty"`
	Counterexample string `json:"counterexample,omitempty"`
}

type regInput struct {
	write bool
	value string
}

// registerModel is a read/write register: a read returns the last write
// ("" before any).
var registerModel = porcupine.Model{
	Init: func() interface{} { return "" },
	Step: func(state, input, output interface{}) (bool, interface{}) {
		in := input.(regInput)
		if in.write {
			return true, in.value
		}
		return output.(string) == state.(string), state
	},
	DescribeOperation: func(input, output interface{}) string {
		in := input.(regInput)
		if in.write {
			return fmt.Sprintf("write(%q)", in.value)
		}
		return fmt.Sprintf("read() -> %q", output.(string))
	},
}

// CheckLinearizable checks the register operations per key with porcupine.
// Failed operations are dropped (they had no effect; a failed read saw
// nothing); unknown reads are dropped. An unknown write may take effect at
// any time after its invocation, or never. Every written value is unique
// (client-sequence), so:
//   - an unknown write no successful read returned is dropped: a history
//     with it is linearizable exactly when the history without it is (it
//     can always be placed after everything else; and in any linearization
//     no read follows it before the next write, since none returned its
//     value). Kept, each one stays pending to the end of the history, and
//     a few hundred of them (the writes a restarted master answers with
//     UNACKED) make porcupine's search time out;
//   - an unknown write some read returned took effect before that read
//     returned: its return is the earliest such read's return (a
//     constraint every linearization already meets).
//
// timeout bounds each key's check (Unknown when exceeded).
func CheckLinearizable(ops []Op, timeout time.Duration) LinResult {
	byKey := map[string][]porcupine.Operation{}
	// seen[key][value]: the earliest return of a successful read of it.
	seen := map[string]map[string]time.Duration{}
	for _, op := range ops {
		if op.Kind != KindRegRead || op.Status != StatusOK {
			continue
		}
		m := seen[op.Key]
		if m == nil {
			m = map[string]time.Duration{}
			seen[op.Key] = m
		}
		if t, ok := m[op.Value]; !ok || op.Done < t {
			m[op.Value] = op.Done
		}
	}
	n := 0
	for i, op := range ops {
		if op.Kind != KindRegWrite && op.Kind != KindRegRead {
			continue
		}
		if op.Status == StatusFailed || (op.Status == StatusUnknown && op.Kind == KindRegRead) {
			continue
		}
		ret := op.Done
		client := op.Client
		if op.Status == StatusUnknown {
			t, read := seen[op.Key][op.Value]
			if !read {
				continue
			}
			ret = t
			client = 1_000_000 + i // an unknown op does not block its client's next one
		}
		var out interface{} = ""
		if op.Kind == KindRegRead {
			out = op.Value
		}
		byKey[op.Key] = append(byKey[op.Key], porcupine.Operation{
			ClientId: client, Input: regInput{write: op.Kind == KindRegWrite, value: op.Value},
			Call: int64(op.Invoke), Output: out, Return: int64(ret),
		})
		n++
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	res := LinResult{Result: string(porcupine.Ok), Ops: n, Keys: len(keys)}
	for _, k := range keys {
		h := byKey[k]
		r, info := porcupine.CheckOperationsVerbose(registerModel, h, timeout)
		switch r {
		case porcupine.Illegal:
			res.Result, res.Key = string(r), k
			res.Counterexample = counterexample(k, h, info)
			return res
		case porcupine.Unknown:
			res.Result = string(r)
		}
	}
	return res
}

// counterexample renders the longest partial linearization of h and the
// operations that could not extend it.
func counterexample(key string, h []porcupine.Operation, info porcupine.LinearizationInfo) string {
	var best []int
	for _, part := range info.PartialLinearizations() {
		for _, lin := range part {
			if len(lin) > len(best) {
				best = lin
			}
		}
	}
	desc := func(op porcupine.Operation) string {
		return fmt.Sprintf("[%s .. %s] client %d %s", fmtDur(time.Duration(op.Call)), fmtDur(time.Duration(op.Return)),
			op.ClientId, registerModel.DescribeOperation(op.Input, op.Output))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "key %s is not linearizable.\n", key)
	in := map[int]bool{}
	from := 0
	if len(best) > 8 {
		from = len(best) - 8
		fmt.Fprintf(&b, "  ... %d earlier operations linearize\n", from)
	}
	for i, id := range best {
		in[id] = true
		if i >= from {
			fmt.Fprintf(&b, "  linearized: %s\n", desc(h[id]))
		}
	}
	// The operations left over that were invoked before the earliest
	// return among them: one of them had to come next, and none can.
	var rest []int
	for i := range h {
		if !in[i] {
			rest = append(rest, i)
		}
	}
	sort.Slice(rest, func(i, j int) bool { return h[rest[i]].Call < h[rest[j]].Call })
	minRet := int64(1<<63 - 1)
	for _, i := range rest {
		if h[i].Return < minRet {
			minRet = h[i].Return
		}
	}
	state := interface{}("")
	for _, id := range best {
		_, state = registerModel.Step(state, h[id].Input, h[id].Output)
	}
	fmt.Fprintf(&b, "  register then holds %q; none of these can come next:\n", state)
	shown := 0
	for _, i := range rest {
		if h[i].Call <= minRet && shown < 8 {
			fmt.Fprintf(&b, "  stuck:      %s\n", desc(h[i]))
			shown++
		}
	}
	return b.String()
}

func fmtDur(d time.Duration) string {
	return fmt.Sprintf("%.3fs", d.Seconds())
}
