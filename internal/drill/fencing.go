package drill

import (
	"context"
	"strconv"
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
func cutsMaster(fault string) bool { return fault == FaultPartitionMaster || fault == FaultSplit }

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

// fillWriteWindows sets, for every fault whose old master's write window
// was measured (oldMasterWriteWindow) and whose master had a bound, whether
// the window is within it (a window of -1, no write, always is).
func fillWriteWindows(rep *Report) {
	for i := range rep.Faults {
		f := &rep.Faults[i]
		if f.OldMasterWriteWindow == nil || f.IsolationBound == nil {
			f.WithinIsolationBound = nil
			continue
		}
		ok := *f.OldMasterWriteWindow <= *f.IsolationBound
		f.WithinIsolationBound = &ok
	}
}
