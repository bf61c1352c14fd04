package drill

import (
	"context"
	"fmt"
	"time"

	"github.com/vigil-kv/vigil/internal/deploy"
)

// splitSides divides the deployment for a split: the master, the replica
// s.Target picks (modulo the replicas) and the sentinels s.SplitSentinels
// (a minority) on one side, every other replica and sentinel on the other.
func splitSides(dep *deploy.Deployment, m *deploy.Node, s Step) (minority, majority []*deploy.Node, err error) {
	var replicas []*deploy.Node
	for _, n := range dep.Servers {
		if n != m {
			replicas = append(replicas, n)
		}
	}
	if len(replicas) < 2 {
		return nil, nil, fmt.Errorf("split: needs at least two replicas (one on each side), the deployment has %d", len(replicas))
	}
	keep := replicas[s.Target%len(replicas)]
	minority = []*deploy.Node{m, keep}
	for _, n := range replicas {
		if n != keep {
			majority = append(majority, n)
		}
	}
	with := map[int]bool{}
	for _, i := range s.SplitSentinels {
		with[i%len(dep.Sentinels)] = true
	}
	for i, n := range dep.Sentinels {
		if with[i] {
			minority = append(minority, n)
		} else {
			majority = append(majority, n)
		}
	}
	return minority, majority, nil
}

func names(nodes []*deploy.Node) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.Name
	}
	return out
}

// split is the split fault: the deployment is cut in two (the master with
// one replica and a minority of the sentinels; the other replicas with the
// sentinel majority), the drill's clients reaching both sides, for
// Config.SplitHold plus the step's Hold whatever happens meanwhile (the
// majority may promote a replica, or, with a sentinel that will not promote
// a replica that cannot prove it has every acknowledged write, not). Just
// before the heal it records what each sentinel names as master and each
// server's role; after it, that the old master rejoined as a replica when
// another was promoted, and a healthy deployment.
func (d *drill) split(ctx context.Context, s Step, rec *FaultRecord) error {
	dep := d.cfg.Deployment
	m, err := dep.CurrentMaster(ctx)
	if err != nil {
		return err
	}
	minority, majority, err := splitSides(dep, m, s)
	if err != nil {
		return err
	}
	hold := d.cfg.SplitHold + s.Hold
	sr := &SplitRecord{Minority: names(minority), Majority: names(majority), Hold: hold,
		SentinelViews: map[string]string{}, ServerRoles: map[string]string{}}
	for _, n := range majority {
		if n.Role != deploy.RoleSentinel {
			sr.MajorityReplica = n.Name
			break
		}
	}
	rec.Target, rec.Split = m.PeerAddr(), sr
	rec.Start = d.since()
	heal, err := dep.Split(minority, majority)
	if err != nil {
		return err
	}
	d.set(s.Round, s.Fault, "split held")
	sleepCtx(ctx, hold)

	// The evidence, read from this process (it reaches both sides).
	cctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	st := deploy.Collect(cctx, dep.CollectOptions())
	cancel()
	for _, n := range dep.Sentinels {
		sr.SentinelViews[n.Name] = ""
		for _, ss := range st.Sentinels {
			if ss.Addr == n.Addr() {
				sr.SentinelViews[n.Name] = ss.MasterAddr
			}
		}
	}
	for _, n := range dep.Servers {
		role := ""
		for _, ss := range st.Servers {
			if ss.Addr == n.PeerAddr() || ss.Addr == n.Addr() {
				role = ss.Role
				if ss.Role == "replica" {
					role = "replica of " + ss.MasterAddr
				}
				if ss.Error != "" && role == "" {
					role = "error: " + ss.Error
				}
			}
		}
		sr.ServerRoles[n.Name] = role
	}

	d.set(s.Round, s.Fault, "heal")
	herr := heal()
	rec.Healed = d.since()
	if herr != nil {
		return herr
	}
	d.set(s.Round, s.Fault, "recover")
	// What the majority decided: the master its sentinels name.
	promoted := false
	for _, n := range majority {
		if n.Role != deploy.RoleSentinel {
			continue
		}
		if a := sr.SentinelViews[n.Name]; a != "" && a != m.PeerAddr() {
			promoted = true
		}
	}
	if promoted {
		ok := d.awaitReplica(ctx, m) == nil
		rec.RejoinedAsReplica = &ok
	} else {
		rec.Note = "the sentinel majority promoted no replica during the split"
	}
	if err := d.awaitHealthy(ctx); err != nil {
		return fmt.Errorf("after the split healed: %w", err)
	}
	return nil
}
