package drill

import (
	"context"
	"fmt"
	"strings"

	"github.com/vigil-kv/vigil/internal/deploy"
)

// rollingRestart is the rolling-restart fault. With vigil-sentinel it is
// deploy.RollingRestart: the replicas (in the seeded order), then a
// coordinated failover (SENTINEL FAILOVER ... COORDINATED: the master's
// FAILOVER waits for the replica to reach its offset, so no acknowledged
// write is lost), the old master, the sentinels. With redis-sentinel (no
// COORDINATED) every node restarts in the seeded order, the master in
// place.
func (d *drill) rollingRestart(ctx context.Context, s Step, rec *FaultRecord) error {
	dep := d.cfg.Deployment
	if dep.Spec.CoordinatedSentinels() {
		names, err := dep.RollingRestart(ctx, deploy.RollingOptions{Order: s.Order,
			Progress: func(step string) { d.set(s.Round, s.Fault, step) }})
		rec.Target = strings.Join(names, ",")
		return err
	}
	nodes := dep.Nodes()
	var names []string
	for _, i := range s.Order {
		n := nodes[i%len(nodes)]
		names = append(names, n.Name)
		d.set(s.Round, s.Fault, "restart "+n.Name)
		if err := n.Restart(); err != nil {
			return err
		}
		if err := d.awaitHealthy(ctx); err != nil {
			return fmt.Errorf("after restarting %s: %w", n.Name, err)
		}
	}
	rec.Target = strings.Join(names, ",")
	return nil
}
