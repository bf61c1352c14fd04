package drill

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/vigil-kv/vigil/internal/deploy"
)

// Fencing figures of the partition faults (docs/safety.md "Fencing a
// deposed master"): how long the cut-off master kept acknowledging writes,
// against the bound it was configured with (vigil-server's
// master-isolation-timeout).

// cutsMaster reports the faults that cut the master from its replicas and
// sentinels while the drill's clients still reach it.
func cutsMaster(fault string) bool { return fault == FaultPartitionMaster || fault == "split" }

// isolationBound reads master-isolation-timeout from the master about to be
// cut off: nil when the server has none (redis-server) or it is 0 (off).
func (d *drill) isolationBound(ctx context.Context, m *deploy.Node) *time.Duration {
	cl := redis.NewClient(&redis.Options{Addr: m.Addr(), Password: d.cfg.Password, MaxRetries: -1,
		DialTimeout: time.Second, ReadTimeout: time.Second})
	defer cl.Close()
	v, err := cl.ConfigGet(ctx, "master-isolation-timeout").Result()
	if err != nil {
		return nil
	}
	ms, err := strconv.ParseInt(v["master-isolation-timeout"], 10, 64)
	if err != nil || ms <= 0 {
		return nil
	}
	b := time.Duration(ms) * time.Millisecond
	return &b
}

// OldMasterWriteWindow is the time from a fault's start (f.Start) to the
// completion of the last write the old master acknowledged: a client's
// successful writes invoked after the fault and completed before that
// client's first master change after it (or before the end of the round
// when it never changed) went to the old master, as the client writes only
// to the master it follows. (A write invoked before the change may have
// waited for the new master and run there: it completes after the change.)
// 0 when it acknowledged none after the fault.
func OldMasterWriteWindow(ops []Op, changes []TimedEvent, f FaultRecord) time.Duration {
	switched := map[int]time.Duration{}
	for _, e := range changes {
		if e.At < f.Start || !strings.HasPrefix(e.Type, "client:") {
			continue
		}
		var c int
		p := strings.TrimPrefix(e.Payload, "client ")
		if i := strings.IndexByte(p, ':'); i > 0 {
			n, err := strconv.Atoi(p[:i])
			if err != nil {
				continue
			}
			c = n
		} else {
			continue
		}
		if _, ok := switched[c]; !ok {
			switched[c] = e.At
		}
	}
	var window time.Duration
	for _, op := range ops {
		if op.Status != StatusOK || (op.Kind != KindWrite && op.Kind != KindRegWrite) || op.Invoke < f.Start {
			continue
		}
		limit, ok := switched[op.Client]
		if !ok {
			limit = f.End
		}
		if op.Done >= limit {
			continue
		}
		if w := op.Done - f.Start; w > window {
			window = w
		}
	}
	return window
}

// fillWriteWindows sets the write window (and the verdict against the
// bound) of every fault that cut the master off.
func fillWriteWindows(rep *Report, ops []Op) {
	for i := range rep.Faults {
		f := &rep.Faults[i]
		if !cutsMaster(f.Fault) || f.Error != "" {
			continue
		}
		w := OldMasterWriteWindow(ops, rep.MasterChanges, *f)
		f.OldMasterWriteWindow = &w
		if f.IsolationBound != nil {
			ok := w <= *f.IsolationBound
			f.WithinIsolationBound = &ok
		}
	}
}
