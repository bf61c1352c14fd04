package drill

import (
	"sort"
	"sync"
	"time"
)

// Kind is an operation's kind.
type Kind string

const (
	// KindWrite is a SET of a key written once ("drill:<run>:w:<client>:<n>"),
	// for the lost-write check.
	KindWrite Kind = "write"
	// KindRegWrite and KindRegRead are the register workload: SET and GET
	// of a few shared keys, checked for linearizability.
	KindRegWrite Kind = "reg-write"
	KindRegRead  Kind = "reg-read"
)

// Status is an operation's outcome.
type Status string

const (
	// StatusOK: the server acknowledged it (for a write with --wait N,
	// SET replied OK; Op.Acked says whether WAIT counted N replicas too).
	StatusOK Status = "ok"
	// StatusFailed: it certainly had no effect (an error reply such as
	// -READONLY, or the client refused before sending, ErrStaleMaster).
	StatusFailed Status = "failed"
	// StatusUnknown: it may or may not have been applied (a timeout or a
	// connection error after the command may have been sent).
	StatusUnknown Status = "unknown"
)

// Op is one operation of the history. Times are offsets from the start of
// the drill.
type Op struct {
	Client int           `json:"client"`
	Kind   Kind          `json:"kind"`
	Key    string        `json:"key"`
	Value  string        `json:"value,omitempty"` // written, or read ("" = nil)
	Invoke time.Duration `json:"invoke_ns"`
	Done   time.Duration `json:"done_ns"`
	Status Status        `json:"status"`
	// Acked is whether the write counts as acknowledged: SET replied OK
	// and, with --wait N, WAIT reported at least N replicas.
	Acked    bool   `json:"acked,omitempty"`
	Replicas int    `json:"replicas,omitempty"` // WAIT's reply, with --wait
	Err      string `json:"error,omitempty"`
	// Node is the server that answered a successful operation: the
	// client's master, when it was the same before and after the
	// operation ("" when unknown).
	Node string `json:"node,omitempty"`
}

// History collects operations from concurrent clients.
type History struct {
	mu  sync.Mutex
	ops []Op
}

// Add records op.
func (h *History) Add(op Op) {
	h.mu.Lock()
	h.ops = append(h.ops, op)
	h.mu.Unlock()
}

// Ops is a copy of the operations, by invoke time.
func (h *History) Ops() []Op {
	h.mu.Lock()
	out := append([]Op(nil), h.ops...)
	h.mu.Unlock()
	sort.SliceStable(out, func(i, j int) bool { return out[i].Invoke < out[j].Invoke })
	return out
}

// Counts are operation totals.
type Counts struct {
	Total      int `json:"total"`
	OK         int `json:"ok"`
	Failed     int `json:"failed"`
	Unknown    int `json:"unknown"`
	WritesOK   int `json:"writes_ok"`    // KindWrite with SET OK
	WritesAckd int `json:"writes_acked"` // KindWrite acknowledged (WAIT included)
}

// Count tallies ops.
func Count(ops []Op) Counts {
	var c Counts
	for _, op := range ops {
		c.Total++
		switch op.Status {
		case StatusOK:
			c.OK++
			if op.Kind == KindWrite {
				c.WritesOK++
				if op.Acked {
					c.WritesAckd++
				}
			}
		case StatusFailed:
			c.Failed++
		default:
			c.Unknown++
		}
	}
	return c
}
