package client

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// DiscoveryError says no sentinel gave a usable master address. Errs holds
// one error per sentinel asked.
type DiscoveryError struct {
	MasterName string
	Errs       []error
}

func (e *DiscoveryError) Error() string {
	return fmt.Sprintf("client: no sentinel gave a usable master for %q: %v", e.MasterName, errors.Join(e.Errs...))
}

func (e *DiscoveryError) Unwrap() []error { return e.Errs }

// rediscover finds the master through the sentinels and switches to it. gen
// is the discovery generation the caller saw: if another goroutine finished a
// discovery meanwhile, its result is used instead of asking again.
func (c *Client) rediscover(ctx context.Context, gen uint64) (string, error) {
	c.discoverMu.Lock()
	defer c.discoverMu.Unlock()
	if a := c.masterAddr(); c.discoverGen.Load() != gen && a != "" && !c.stale.Load() {
		return a, nil
	}
	// Many connections fail together in a failover; one failed discovery
	// answers them all for a moment instead of each asking every sentinel.
	if c.lastFailErr != nil && time.Since(c.lastFailAt) < c.opt.MinRetryBackoff/2 {
		return "", c.lastFailErr
	}
	sw := c.switchGen.Load()
	addr, err := c.discover(ctx)
	// A +switch-master heard while discover ran is newer than its answer:
	// the sentinels it asked may still have named the old master, and a
	// paused old master resuming answers ROLE "master" until it is told to
	// replicate. Keep the switch (found by the drill: pause-master, seed 5).
	if sw != c.switchGen.Load() {
		if a := c.masterAddr(); a != "" {
			c.lastFailErr = nil
			c.stale.Store(false)
			c.discoverGen.Add(1)
			return a, nil
		}
	}
	if err != nil {
		if ctx.Err() == nil {
			c.lastFailAt, c.lastFailErr = time.Now(), err
		}
		return "", err
	}
	c.lastFailErr = nil
	c.setMaster(addr, "discovery")
	c.stale.Store(false)
	c.discoverGen.Add(1)
	return addr, nil
}

// discover asks every known sentinel at once for the master's address and
// returns the first answer whose ROLE is master. go-redis's FailoverClient
// (until v9.23) asked them one after another, so one sentinel that never
// answered stalled discovery for its whole timeout (go-redis#3652), and it
// never checked ROLE, so a stale sentinel sent clients to a demoted master.
func (c *Client) discover(ctx context.Context) (string, error) {
	sentinels := c.Sentinels()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type result struct {
		sentinel, addr string
		err            error
	}
	results := make(chan result, len(sentinels))
	for _, s := range sentinels {
		go func() {
			addr, err := c.askMaster(ctx, s)
			if err == nil {
				_, err = c.probe(ctx, addr, "master")
			}
			results <- result{s, addr, err}
		}()
	}
	var errs []error
	for range sentinels {
		r := <-results
		if r.err != nil {
			errs = append(errs, fmt.Errorf("sentinel %s: %w", r.sentinel, r.err))
			continue
		}
		c.promoteSentinel(r.sentinel)
		c.goBackground(func() { c.refreshSentinels(r.sentinel) })
		return r.addr, nil
	}
	return "", &DiscoveryError{MasterName: c.opt.MasterName, Errs: errs}
}

func (c *Client) askMaster(ctx context.Context, sentinel string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opt.SentinelTimeout)
	defer cancel()
	a, err := c.sentinel(sentinel).GetMasterAddrByName(ctx, c.opt.MasterName).Result()
	if errors.Is(err, redis.Nil) {
		return "", fmt.Errorf("master %q unknown", c.opt.MasterName)
	}
	if err != nil {
		return "", err
	}
	if len(a) != 2 || a[0] == "" || a[1] == "" {
		return "", fmt.Errorf("get-master-addr-by-name replied %q, not [ip, port]", a)
	}
	return net.JoinHostPort(a[0], a[1]), nil
}

// sentinel returns the (lazily created) client of one sentinel.
func (c *Client) sentinel(addr string) *redis.SentinelClient {
	c.smu.Lock()
	defer c.smu.Unlock()
	sc := c.sclients[addr]
	if sc == nil {
		sc = redis.NewSentinelClient(&redis.Options{
			Addr:            addr,
			Dialer:          c.dialSentinel,
			Username:        c.opt.SentinelUsername,
			Password:        c.opt.SentinelPassword,
			DialTimeout:     c.opt.DialTimeout,
			ReadTimeout:     c.opt.SentinelTimeout,
			WriteTimeout:    c.opt.SentinelTimeout,
			MaxRetries:      -1,
			DialerRetries:   1,
			PoolSize:        4,
			DisableIdentity: true,
		})
		c.sclients[addr] = sc
	}
	return sc
}

// dialSentinel dials a sentinel and remembers the connection, so Close can
// cut every sentinel connection, including one stuck waiting for a sentinel
// that never answers.
func (c *Client) dialSentinel(ctx context.Context, network, addr string) (net.Conn, error) {
	nc, err := dialTLS(ctx, c.opt.DialTimeout, network, addr, c.opt.SentinelTLSConfig)
	if err != nil {
		return nil, err
	}
	c.smu.Lock()
	defer c.smu.Unlock()
	if c.bg.Err() != nil {
		_ = nc.Close()
		return nil, net.ErrClosed
	}
	c.sconns = append(c.sconns, nc)
	return nc, nil
}

// goBackground runs f in a goroutine Close waits for, unless Close has
// begun. (wg.Add happens under smu after checking bg, and Close cancels bg
// before taking smu, so no Add can race with Close's Wait.)
func (c *Client) goBackground(f func()) {
	c.smu.Lock()
	defer c.smu.Unlock()
	if c.bg.Err() != nil {
		return
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		f()
	}()
}

// addSentinel adds addr to the known sentinels (if new) and subscribes to
// its +switch-master.
func (c *Client) addSentinel(addr string) {
	c.smu.Lock()
	defer c.smu.Unlock()
	for _, s := range c.sentinels {
		if s == addr {
			return
		}
	}
	c.sentinels = append(c.sentinels, addr)
	if c.watching[addr] || c.bg.Err() != nil {
		return
	}
	c.watching[addr] = true
	c.wg.Add(1)
	go c.watch(addr)
}

// promoteSentinel moves the sentinel that answered to the front: it is the
// one whose failure is the least likely next time (client spec step 2).
func (c *Client) promoteSentinel(addr string) {
	c.smu.Lock()
	defer c.smu.Unlock()
	for i, s := range c.sentinels {
		if s == addr {
			copy(c.sentinels[1:i+1], c.sentinels[:i])
			c.sentinels[0] = addr
			return
		}
	}
}

// refreshSentinels learns the other sentinels of the master from
// SENTINEL SENTINELS, so discovery survives the loss of every sentinel the
// application was configured with, and +switch-master is heard from all.
func (c *Client) refreshSentinels(from string) {
	ctx, cancel := context.WithTimeout(c.bg, c.opt.SentinelTimeout)
	defer cancel()
	others, err := c.sentinel(from).Sentinels(ctx, c.opt.MasterName).Result()
	if err != nil {
		return
	}
	for _, m := range others {
		if m["ip"] != "" && m["port"] != "" {
			c.addSentinel(net.JoinHostPort(m["ip"], m["port"]))
		}
	}
}

// watch follows one sentinel's +switch-master until Close. go-redis's PubSub
// reconnects and resubscribes by itself; a missed message is covered by the
// rediscovery that errors trigger (pub/sub is never relied on alone).
func (c *Client) watch(addr string) {
	defer c.wg.Done()
	ps := c.sentinel(addr).Subscribe(c.bg, "+switch-master")
	c.smu.Lock()
	if c.bg.Err() != nil {
		c.smu.Unlock()
		_ = ps.Close()
		return
	}
	c.pubsubs = append(c.pubsubs, ps)
	c.smu.Unlock()
	ch := ps.Channel()
	for {
		select {
		case <-c.bg.Done():
			return
		case msg, ok := <-ch:
			if !ok {
				return
			}
			// <name> <old-ip> <old-port> <new-ip> <new-port>
			f := strings.Fields(msg.Payload)
			if len(f) != 5 || f[0] != c.opt.MasterName {
				continue
			}
			c.setMaster(net.JoinHostPort(f[3], f[4]), "+switch-master")
			c.stale.Store(false)
		}
	}
}

// ---------------------------------------------------------------------------
// Read nodes

const replicaRefresh = 5 * time.Second

func (c *Client) dialReader(ctx context.Context, _, _ string) (net.Conn, error) {
	addr, err := c.pickReader(ctx)
	if err != nil {
		return nil, err
	}
	nc, err := dialTLS(ctx, c.opt.DialTimeout, "tcp", addr, c.opt.TLSConfig)
	if err != nil {
		c.rstale.Store(true)
		return nil, err
	}
	return c.track(nc, addr, false), nil
}

// pickReader chooses the node for a new read connection: a random healthy
// replica (ReadFrom Replica) or the node with the lowest PING latency
// (Nearest). With no usable replica it is the master.
func (c *Client) pickReader(ctx context.Context) (string, error) {
	nodes, err := c.readNodes(ctx)
	if err != nil {
		return "", err
	}
	var best node
	found := false
	switch c.opt.ReadFrom {
	case Nearest:
		for _, n := range nodes {
			if !found || n.rtt < best.rtt {
				best, found = n, true
			}
		}
	default:
		var reps []node
		for _, n := range nodes {
			if !n.master {
				reps = append(reps, n)
			}
		}
		if len(reps) > 0 {
			best, found = reps[rand.N(len(reps))], true
		}
	}
	if !found {
		return c.MasterAddr(ctx)
	}
	return best.addr, nil
}

// ReadNodes returns the nodes reads may go to, with their measured latency
// ("addr" -> PING round trip); the master is included for ReadFrom Nearest.
func (c *Client) ReadNodes(ctx context.Context) (map[string]time.Duration, error) {
	nodes, err := c.readNodes(ctx)
	if err != nil {
		return nil, err
	}
	m := map[string]time.Duration{}
	for _, n := range nodes {
		m[n.addr] = n.rtt
	}
	return m, nil
}

func (c *Client) readNodes(ctx context.Context) ([]node, error) {
	c.rmu.Lock()
	defer c.rmu.Unlock()
	if !c.rstale.Load() && !c.replicasAt.IsZero() && time.Since(c.replicasAt) < replicaRefresh {
		return c.replicas, nil
	}
	nodes, err := c.findReplicas(ctx)
	if err != nil {
		return nil, err
	}
	c.replicas, c.replicasAt = nodes, time.Now()
	c.rstale.Store(false)
	return nodes, nil
}

// findReplicas asks the sentinels (in parallel, first answer wins) for
// SENTINEL REPLICAS, keeps those not flagged s_down, o_down or disconnected
// whose master-link-status is ok, and checks each with ROLE (a replica whose
// link is up) while measuring its latency.
func (c *Client) findReplicas(ctx context.Context) ([]node, error) {
	sentinels := c.Sentinels()
	qctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type result struct {
		reps []map[string]string
		err  error
	}
	results := make(chan result, len(sentinels))
	for _, s := range sentinels {
		go func() {
			ctx, cancel := context.WithTimeout(qctx, c.opt.SentinelTimeout)
			defer cancel()
			r, err := c.sentinel(s).Replicas(ctx, c.opt.MasterName).Result()
			results <- result{r, err}
		}()
	}
	var reps []map[string]string
	var errs []error
	for range sentinels {
		r := <-results
		if r.err == nil {
			reps = r.reps
			errs = nil
			break
		}
		errs = append(errs, r.err)
	}
	if errs != nil {
		return nil, &DiscoveryError{MasterName: c.opt.MasterName, Errs: errs}
	}
	cands := usableReplicas(reps)
	want := map[string]string{}
	for _, a := range cands {
		want[a] = "slave"
	}
	if c.opt.ReadFrom == Nearest {
		if m, err := c.MasterAddr(ctx); err == nil {
			want[m] = "master"
		}
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	var nodes []node
	for addr, role := range want {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rtt, err := c.probe(ctx, addr, role)
			if err != nil {
				return
			}
			mu.Lock()
			nodes = append(nodes, node{addr: addr, rtt: rtt, master: role == "master"})
			mu.Unlock()
		}()
	}
	wg.Wait()
	return nodes, nil
}

// usableReplicas filters a SENTINEL REPLICAS reply.
func usableReplicas(reps []map[string]string) []string {
	var out []string
	for _, r := range reps {
		if r["ip"] == "" || r["port"] == "" {
			continue
		}
		bad := false
		for _, f := range strings.Split(r["flags"], ",") {
			if f == "s_down" || f == "o_down" || f == "disconnected" {
				bad = true
			}
		}
		if st, ok := r["master-link-status"]; ok && st != "ok" {
			bad = true
		}
		if !bad {
			out = append(out, net.JoinHostPort(r["ip"], r["port"]))
		}
	}
	return out
}
