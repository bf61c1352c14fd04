package deploy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// RollingOptions tune RollingRestart.
type RollingOptions struct {
	// Order, when set, is the order in which replicas and sentinels are
	// restarted: indexes into Nodes() (taken modulo its length; the master
	// is skipped there, it goes after the hand-over). Nil: Nodes() order.
	Order []int
	// Progress, when set, is told each step ("restart server-6380",
	// "hand over from server-6379", ...).
	Progress func(step string)
}

// ErrHandoverAborted is returned when the sentinels' coordinated failover
// ended without a new master (its TIMEOUT, the master refusing it): the old
// master is still the master and lost nothing.
var ErrHandoverAborted = errors.New("the coordinated failover was aborted: the master is unchanged")

// RollingRestart restarts every server and sentinel, one at a time, waiting
// for a healthy deployment after each, without losing an acknowledged write:
// the replicas first; then the master hands over through the sentinels
// (HandOver: SENTINEL FAILOVER <name> COORDINATED, the master's FAILOVER
// command waiting for the chosen replica to reach its offset); the old
// master, now a replica, writes that to its config file (CONFIG REWRITE) and
// restarts; the sentinels last.
func (d *Deployment) RollingRestart(ctx context.Context, opts RollingOptions) ([]string, error) {
	progress := opts.Progress
	if progress == nil {
		progress = func(string) {}
	}
	nodes := d.Nodes()
	order := opts.Order
	if order == nil {
		for i := range nodes {
			order = append(order, i)
		}
	}
	m, err := d.CurrentMaster(ctx)
	if err != nil {
		return nil, err
	}
	var done []string
	restart := func(n *Node) error {
		progress("restart " + n.Name)
		if err := n.Restart(); err != nil {
			return err
		}
		done = append(done, n.Name)
		if err := d.WaitHealthy(ctx); err != nil {
			return fmt.Errorf("after restarting %s: %w", n.Name, err)
		}
		return nil
	}
	seen := map[*Node]bool{}
	var sentinels []*Node
	for _, i := range order {
		n := nodes[i%len(nodes)]
		if seen[n] || n == m {
			continue
		}
		seen[n] = true
		if n.Role == RoleSentinel {
			sentinels = append(sentinels, n)
			continue
		}
		if err := restart(n); err != nil {
			return done, err
		}
	}
	if len(d.Servers) > 1 {
		progress("hand over from " + m.Name)
		if _, err := d.HandOver(ctx); err != nil {
			return done, err
		}
		// The old master follows the new one: make that survive its restart.
		cl := redis.NewClient(clientOptions(m.Addr(), 5*time.Second))
		_ = cl.Do(ctx, "CONFIG", "REWRITE").Err()
		cl.Close()
	}
	if err := restart(m); err != nil {
		return done, err
	}
	for _, n := range sentinels {
		if err := restart(n); err != nil {
			return done, err
		}
	}
	return done, nil
}

// HandOver asks a sentinel for a coordinated failover (SENTINEL FAILOVER
// <name> COORDINATED) and waits until every sentinel names the new master
// and the deployment is healthy; it returns the new master. Against
// redis-sentinel, which has no COORDINATED, it is an error (a plain
// SENTINEL FAILOVER may lose writes). ErrHandoverAborted: the sentinel gave
// up and the master is unchanged.
func (d *Deployment) HandOver(ctx context.Context) (*Node, error) {
	if len(d.Sentinels) == 0 {
		return nil, errors.New("hand-over: the deployment has no sentinel")
	}
	old, err := d.CurrentMaster(ctx)
	if err != nil {
		return nil, err
	}
	addr, err := HandOverVia(ctx, d.SentinelAddrs(), d.Spec.MasterName, old.PeerAddr(), func(ctx context.Context) (string, error) {
		n, err := d.CurrentMaster(ctx)
		if err != nil {
			return "", err
		}
		return n.PeerAddr(), nil
	})
	if err != nil {
		return nil, fmt.Errorf("hand-over from %s: %w", old.Name, err)
	}
	n := d.Node(addr)
	if err := d.WaitHealthy(ctx); err != nil {
		return n, fmt.Errorf("after the hand-over to %s: %w", addr, err)
	}
	return n, nil
}

// HandOverVia asks the first of sentinels that accepts for SENTINEL
// FAILOVER <masterName> COORDINATED, then polls until current names a
// master other than old (returned) or that sentinel's failover ended with
// the master at old (ErrHandoverAborted). A sentinel without COORDINATED
// (redis-sentinel answers a wrong-number-of-arguments error) is an error:
// a plain failover may lose writes.
//
// An aborted hand-over leaves the master in place with its writes resumed
// (the replica did not catch up within the FAILOVER's TIMEOUT on a busy
// machine, or the master refused it for a replica still syncing), so it is
// asked again, up to handOverAttempts times in all, before
// ErrHandoverAborted is returned.
func HandOverVia(ctx context.Context, sentinels []string, masterName, old string,
	current func(context.Context) (string, error)) (string, error) {
	for attempt := 1; ; attempt++ {
		addr, err := handOverOnce(ctx, sentinels, masterName, old, current)
		if !errors.Is(err, ErrHandoverAborted) || attempt == handOverAttempts {
			return addr, err
		}
		select {
		case <-ctx.Done():
			return "", err
		case <-time.After(time.Second):
		}
	}
}

// handOverAttempts bounds HandOverVia's retries of an aborted hand-over.
const handOverAttempts = 3

// handOverOnce is one SENTINEL FAILOVER ... COORDINATED and its outcome.
func handOverOnce(ctx context.Context, sentinels []string, masterName, old string,
	current func(context.Context) (string, error)) (string, error) {
	leader := ""
	var errs []error
	// A replica restarted a moment ago is not yet a candidate in the
	// sentinels' view (its INFO is stale or reports its link down until the
	// next INFO): -NOGOODSLAVE then is transient, so ask again until ctx
	// ends. Any other refusal is final.
	for {
		errs = errs[:0]
		transient := true
		for _, s := range sentinels {
			cl := redis.NewClient(clientOptions(s, 5*time.Second))
			err := cl.Do(ctx, "SENTINEL", "FAILOVER", masterName, "COORDINATED").Err()
			cl.Close()
			if err == nil {
				leader = s
				break
			}
			if strings.Contains(err.Error(), "wrong number of arguments") {
				return "", fmt.Errorf("sentinel %s has no SENTINEL FAILOVER ... COORDINATED (redis-sentinel?): %w", s, err)
			}
			if !strings.HasPrefix(err.Error(), "NOGOODSLAVE") {
				transient = false
			}
			errs = append(errs, fmt.Errorf("sentinel %s: %w", s, err))
		}
		if leader != "" || !transient {
			break
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("no sentinel started it before %w: %w", ctx.Err(), errors.Join(errs...))
		case <-time.After(250 * time.Millisecond):
		}
	}
	if leader == "" {
		return "", fmt.Errorf("no sentinel started it: %w", errors.Join(errs...))
	}
	cl := redis.NewClient(clientOptions(leader, 2*time.Second))
	defer cl.Close()
	for {
		if a, err := current(ctx); err == nil && a != "" && a != old {
			return a, nil
		}
		// The leader's view: the failover is over (flag gone) with the
		// address unchanged means it was aborted.
		if v, err := cl.Do(ctx, "SENTINEL", "MASTER", masterName).Slice(); err == nil {
			f := map[string]string{}
			for i := 0; i+1 < len(v); i += 2 {
				k, _ := v[i].(string)
				val, _ := v[i+1].(string)
				f[k] = val
			}
			if !strings.Contains(f["flags"], "failover_in_progress") && net.JoinHostPort(f["ip"], f["port"]) == old {
				return "", ErrHandoverAborted
			}
		}
		t := time.NewTimer(100 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return "", ctx.Err()
		case <-t.C:
		}
	}
}

// CoordinatedSentinels reports whether the sentinels are vigil-sentinel,
// which has SENTINEL FAILOVER ... COORDINATED (HandOver, RollingRestart).
func (s Spec) CoordinatedSentinels() bool {
	k := s.SentinelKind
	if k == "" {
		k = s.Kind
	}
	return k == KindVigil
}
