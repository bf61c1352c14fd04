package drill

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vigil-kv/vigil/internal/deploy"
)

// inject runs one step's fault and waits for the deployment to recover.
func (d *drill) inject(ctx context.Context, s Step) FaultRecord {
	rec := FaultRecord{Round: s.Round, Fault: s.Fault, Start: d.since(), SwitchMaster: -1, FirstWrite: -1}
	rctx, cancel := context.WithTimeout(ctx, d.cfg.RecoverTimeout)
	defer cancel()
	var err error
	if d.cfg.Deployment == nil {
		err = d.injectRemote(rctx, s, &rec)
	} else {
		err = d.injectLocal(rctx, s, &rec)
	}
	if err != nil {
		rec.Error = err.Error()
	}
	rec.End = d.since()
	return rec
}

func (d *drill) injectLocal(ctx context.Context, s Step, rec *FaultRecord) error {
	dep := d.cfg.Deployment
	switch s.Fault {
	case FaultKillMaster, FaultPauseMaster, FaultPartitionMaster:
		m, err := dep.CurrentMaster(ctx)
		if err != nil {
			return err
		}
		rec.Target = m.PeerAddr()
		if cutsMaster(s.Fault) {
			rec.IsolationBound = d.isolationBound(ctx, m) // fencing.go
		}
		rec.Start = d.since()
		var undo func() error
		switch s.Fault {
		case FaultKillMaster:
			err = m.Kill()
			undo = m.Start
		case FaultPauseMaster:
			err = m.Pause()
			undo = m.Resume
		default:
			var heal func() error
			// Cut from the replicas and sentinels; the drill's clients
			// (this process) still reach it: the split-brain case.
			heal, err = dep.PartitionPeers([]*deploy.Node{m})
			undo = func() error {
				if heal == nil {
					return nil
				}
				return heal()
			}
		}
		if err != nil {
			return err
		}
		d.set(s.Round, s.Fault, "await failover")
		ferr := d.awaitNewMaster(ctx, m, rec.Start)
		d.set(s.Round, s.Fault, "recover")
		uerr := undo()
		if s.Fault == FaultPartitionMaster {
			rec.Healed = d.since()
		}
		if uerr != nil {
			return errors.Join(ferr, uerr)
		}
		if ferr != nil {
			return ferr
		}
		if s.Fault != FaultKillMaster {
			ok := d.awaitReplica(ctx, m) == nil
			rec.RejoinedAsReplica = &ok
		}
		return d.awaitHealthy(ctx)
	case FaultKillSentinel:
		n := dep.Sentinels[s.Target%len(dep.Sentinels)]
		rec.Target = n.Addr()
		rec.Start = d.since()
		if err := n.Kill(); err != nil {
			return err
		}
		sleepCtx(ctx, s.Hold)
		if err := n.Start(); err != nil {
			return err
		}
		return d.awaitHealthy(ctx)
	case FaultKillReplicaSync:
		m, err := dep.CurrentMaster(ctx)
		if err != nil {
			return err
		}
		var replicas []*deploy.Node
		for _, n := range dep.Servers {
			if n != m {
				replicas = append(replicas, n)
			}
		}
		if len(replicas) == 0 {
			return errors.New("kill-replica-sync: the deployment has no replica")
		}
		n := replicas[s.Target%len(replicas)]
		rec.Target = n.PeerAddr()
		rec.Start = d.since()
		if err := n.Stop(); err != nil {
			return err
		}
		// Without its RDB the replica cannot PSYNC: a full sync it is.
		if err := os.Remove(filepath.Join(n.Dir, "dump.rdb")); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if err := n.Start(); err != nil {
			return err
		}
		d.set(s.Round, s.Fault, "await full sync")
		sctx, scancel := context.WithTimeout(ctx, 30*time.Second)
		syncing := d.awaitSync(sctx, m, n) == nil
		scancel()
		rec.KilledDuringSync = &syncing
		if err := n.Kill(); err != nil {
			return err
		}
		if err := n.Start(); err != nil {
			return err
		}
		d.set(s.Round, s.Fault, "recover")
		if err := d.awaitReplica(ctx, n); err != nil {
			return err
		}
		return d.awaitHealthy(ctx)
	case FaultRestartMasterEmpty:
		m, err := dep.CurrentMaster(ctx)
		if err != nil {
			return err
		}
		rec.Target = m.PeerAddr()
		rec.Start = d.since()
		if err := m.Kill(); err != nil {
			return err
		}
		// No RDB, no AOF: the master starts empty with a new replication ID.
		for _, f := range []string{"dump.rdb", "appendonlydir", "appendonly.aof"} {
			if err := os.RemoveAll(filepath.Join(m.Dir, f)); err != nil {
				return err
			}
		}
		if err := m.Start(); err != nil {
			return err
		}
		d.set(s.Round, s.Fault, "await failover")
		// vigil-server's replicas refuse the empty sync and vigil-sentinel
		// fails such a master over; any other pair has no guard.
		if guarded := dep.Spec.Kind == deploy.KindVigil && dep.Spec.CoordinatedSentinels(); !guarded {
			// Redis's replicas full-sync the empty master and its
			// sentinels see a reboot, not a failure: no failover comes.
			// Wait a bounded time, then report it and go on; the loss
			// check shows what the full syncs erased.
			wctx, wcancel := context.WithTimeout(ctx, min(d.cfg.RecoverTimeout, 3*d.cfg.DownAfter+5*time.Second))
			err := d.awaitNewMaster(wctx, m, rec.Start)
			wcancel()
			if err != nil {
				rec.Note = fmt.Sprintf("no failover within %s: %s has no empty-restart guard, so its replicas full-sync the empty master (the loss check shows what that erased)",
					min(d.cfg.RecoverTimeout, 3*d.cfg.DownAfter+5*time.Second), string(dep.Spec.Kind)+"-server")
				return d.awaitHealthy(ctx)
			}
		} else if err := d.awaitNewMaster(ctx, m, rec.Start); err != nil {
			return fmt.Errorf("the master restarted empty and no replica was promoted (without vigil-server's empty-restart guard its replicas full-sync the empty dataset): %w", err)
		}
		d.set(s.Round, s.Fault, "recover")
		ok := d.awaitReplica(ctx, m) == nil
		rec.RejoinedAsReplica = &ok
		return d.awaitHealthy(ctx)
	case FaultRollingRestart:
		return d.rollingRestart(ctx, s, rec)
	case FaultSplit:
		return d.split(ctx, s, rec)
	}
	return fmt.Errorf("unknown fault %q", s.Fault)
}

// injectRemote acts on a deployment the drill did not start, through
// commands to the master the sentinels name.
func (d *drill) injectRemote(ctx context.Context, s Step, rec *FaultRecord) error {
	addr, err := d.masterAddr(ctx)
	if err != nil {
		return err
	}
	rec.Target = addr
	cl := redis.NewClient(&redis.Options{Addr: addr, Password: d.cfg.Password, MaxRetries: -1, DialTimeout: time.Second,
		ReadTimeout: -1})
	defer cl.Close()
	rec.Start = d.since()
	switch s.Fault {
	case FaultKillMaster:
		// The connection drops as the server exits; the fault starts then.
		cl.Do(ctx, "SHUTDOWN", "NOSAVE", "NOW", "FORCE")
		rec.Start = d.since()
	case FaultPauseMaster:
		// Redis 7.0 refuses DEBUG unless enable-debug-command allows it.
		if err := cl.Do(ctx, "DEBUG", "SLEEP", "0").Err(); err != nil {
			return fmt.Errorf("pause-master on an existing deployment uses DEBUG SLEEP on the master, which refused it (enable-debug-command yes or local allows it): %w", err)
		}
		secs := (d.cfg.DownAfter*3 + time.Second).Seconds()
		go cl.Do(context.Background(), "DEBUG", "SLEEP", fmt.Sprintf("%.1f", secs))
	default:
		return fmt.Errorf("fault %s needs a deployment started by the drill", s.Fault)
	}
	deadline := time.Now().Add(d.cfg.RecoverTimeout)
	for time.Now().Before(deadline) {
		if a, err := d.masterAddr(ctx); err == nil && a != addr {
			d.awaitSwitchEvent(ctx, rec.Start)
			return nil
		}
		if !sleepCtx(ctx, 100*time.Millisecond) {
			break
		}
	}
	return fmt.Errorf("the sentinels still name %s as master", addr)
}

// awaitNewMaster polls until the sentinels name a master other than old.
func (d *drill) awaitNewMaster(ctx context.Context, old *deploy.Node, since time.Duration) error {
	for {
		if n, err := d.cfg.Deployment.CurrentMaster(ctx); err == nil && n != old {
			d.awaitSwitchEvent(ctx, since)
			return nil
		}
		if !sleepCtx(ctx, 100*time.Millisecond) {
			return fmt.Errorf("no failover away from %s: %w", old.Name, ctx.Err())
		}
	}
}

// awaitSwitchEvent waits (at most 10 s) until a +switch-master published
// after since has been recorded: a sentinel names the promoted replica as
// soon as it is promoted, before it publishes +switch-master, and the
// report wants the event's time.
func (d *drill) awaitSwitchEvent(ctx context.Context, since time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		d.mu.Lock()
		seen := false
		for _, e := range d.events {
			if e.Type == "+switch-master" && e.At >= since {
				seen = true
			}
		}
		d.mu.Unlock()
		if seen || !sleepCtx(ctx, 50*time.Millisecond) {
			return
		}
	}
}

// awaitReplica polls until n reports role slave with its link up.
func (d *drill) awaitReplica(ctx context.Context, n *deploy.Node) error {
	cl := redis.NewClient(&redis.Options{Addr: n.Addr(), Password: d.cfg.Password, MaxRetries: -1,
		DialTimeout: time.Second, ReadTimeout: time.Second})
	defer cl.Close()
	for {
		info, err := cl.Info(ctx, "replication").Result()
		if err == nil && strings.Contains(info, "role:slave") && strings.Contains(info, "master_link_status:up") {
			return nil
		}
		if !sleepCtx(ctx, 100*time.Millisecond) {
			return fmt.Errorf("%s did not rejoin as a replica", n.Name)
		}
	}
}

// awaitSync polls the master until it reports a full sync to replica n in
// progress: its INFO line for n has state wait_bgsave (Redis 7.0 waits
// repl-diskless-sync-delay, 5 s by default, before streaming) or
// send_bulk. The replica's own master_sync_in_progress is 1 only while the
// payload streams, too short to catch on a small data set.
func (d *drill) awaitSync(ctx context.Context, m, n *deploy.Node) error {
	cl := redis.NewClient(&redis.Options{Addr: m.Addr(), Password: d.cfg.Password, MaxRetries: -1,
		DialTimeout: time.Second, ReadTimeout: time.Second})
	defer cl.Close()
	_, port, _ := net.SplitHostPort(n.PeerAddr())
	for {
		info, err := cl.Info(ctx, "replication").Result()
		if err == nil {
			for _, line := range strings.Split(info, "\n") {
				if strings.HasPrefix(line, "slave") && strings.Contains(line, ",port="+port+",") &&
					(strings.Contains(line, "state=wait_bgsave") || strings.Contains(line, "state=send_bulk")) {
					return nil
				}
			}
		}
		if !sleepCtx(ctx, 20*time.Millisecond) {
			return fmt.Errorf("the master never reported a full sync to %s in progress", n.Name)
		}
	}
}

func (d *drill) awaitHealthy(ctx context.Context) error {
	return d.cfg.Deployment.WaitHealthy(ctx)
}
