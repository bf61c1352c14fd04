package deploy

import (
	"context"
	"fmt"
	"net"
)

// RestartDead starts again every node whose process died (not one that is
// paused or was stopped with the deployment), as a supervisor would: a
// sentinel from its config file, a server as a replica of the master the
// sentinels name now (--replicaof after its config file), so a dead master
// rejoins as a replica. A server the sentinels still name as master is
// left down until they fail over. It returns what it did, one line per
// node. With several groups each server rejoins its own group's master.
func (d *Deployment) RestartDead(ctx context.Context) ([]string, error) {
	if len(d.groups) == 0 {
		return d.restartDead(ctx, true)
	}
	var did []string
	var errs []error
	for i, g := range d.groups {
		// The sentinels are shared: the first group's pass restarts them.
		x, err := g.restartDead(ctx, i == 0)
		did = append(did, x...)
		if err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return did, errs[0]
	}
	return did, nil
}

func (d *Deployment) restartDead(ctx context.Context, sentinels bool) ([]string, error) {
	var did []string
	var firstErr error
	fail := func(err error) {
		if firstErr == nil {
			firstErr = err
		}
	}
	for _, n := range d.Sentinels {
		if !sentinels || n.Running() {
			continue
		}
		if err := n.Start(); err != nil {
			fail(err)
			continue
		}
		did = append(did, n.Name+" restarted")
	}
	for _, n := range d.Servers {
		if n.Running() {
			continue
		}
		m, err := d.CurrentMaster(ctx)
		if err != nil {
			fail(fmt.Errorf("%s: not restarted: %w", n.Name, err))
			continue
		}
		if m == n {
			if len(d.Sentinels) == 0 {
				if err := n.Start(); err != nil {
					fail(err)
				} else {
					did = append(did, n.Name+" restarted as master")
				}
			}
			continue // the sentinels have not failed over yet
		}
		host, port, _ := net.SplitHostPort(m.PeerAddr())
		n.mu.Lock()
		n.nextArgs = []string{"--replicaof", host, port}
		n.mu.Unlock()
		if err := n.Start(); err != nil {
			fail(err)
			continue
		}
		did = append(did, n.Name+" restarted as a replica of "+net.JoinHostPort(host, port))
	}
	return did, firstErr
}
