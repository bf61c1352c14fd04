package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Client is a go-redis client whose connections follow the current master
// of a sentinel-monitored deployment. The embedded *redis.Client gives it
// every go-redis command; it satisfies redis.UniversalClient.
type Client struct {
	*redis.Client // the master pool; read-only commands may be routed to readers

	opt     Options
	readers *redis.Client // nil when ReadFrom == Master

	bg     context.Context // cancelled by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup

	// master is the current verified master address ("" before the first
	// discovery). It changes only under switchMu (see trackedConn.Write).
	master   atomic.Pointer[string]
	switchMu sync.RWMutex
	chMu     sync.Mutex
	change   chan struct{} // closed and replaced on every master change

	// stale asks the next dial to rediscover before using master.
	stale atomic.Bool

	discoverMu  sync.Mutex // one discovery at a time; guards lastFail*
	discoverGen atomic.Uint64
	switchGen   atomic.Uint64 // +switch-master messages heard (setMaster)
	lastFailAt  time.Time
	lastFailErr error

	smu       sync.Mutex
	sentinels []string                         // known sentinels, last good one first
	sclients  map[string]*redis.SentinelClient // by address
	watching  map[string]bool                  // +switch-master subscriptions
	pubsubs   []*redis.PubSub
	sconns    []net.Conn // every sentinel connection ever dialed (closed ones too)

	conns connSet

	rmu        sync.Mutex // replicas, replicasAt
	replicas   []node     // usable read nodes, ROLE-checked, with latency
	replicasAt time.Time
	rstale     atomic.Bool
}

// node is a read candidate.
type node struct {
	addr   string
	rtt    time.Duration
	master bool
}

var _ redis.UniversalClient = (*Client)(nil)

// New returns a client for the master opt.MasterName. It does no network I/O:
// the first command discovers the master.
func New(opt Options) (*Client, error) {
	if err := opt.init(); err != nil {
		return nil, err
	}
	c := &Client{
		opt:      opt,
		sclients: map[string]*redis.SentinelClient{},
		watching: map[string]bool{},
	}
	c.bg, c.cancel = context.WithCancel(context.Background())
	for _, a := range opt.SentinelAddrs {
		c.addSentinel(a)
	}
	mopt := c.dataOptions("master:"+opt.MasterName, c.dialMaster, c.checkMasterConn)
	// go-redis bounds a dial with DialTimeout; dialMaster connects with
	// opt.DialTimeout per attempt and keeps trying for MasterWait. A long
	// wait also keeps go-redis's dial circuit breaker shut: its probe (a
	// dial) then succeeds the moment the new master is known.
	mopt.DialTimeout = opt.MasterWait
	c.Client = redis.NewClient(mopt)
	c.Client.AddHook(hook{c})
	if opt.ReadFrom != Master {
		c.readers = redis.NewClient(c.dataOptions("readers:"+opt.MasterName, c.dialReader, nil))
	}
	return c, nil
}

func (c *Client) dataOptions(addr string, dial func(context.Context, string, string) (net.Conn, error),
	onConnect func(context.Context, *redis.Conn) error) *redis.Options {
	return &redis.Options{
		Addr:            addr, // only a label: the Dialer picks the address
		Dialer:          dial,
		OnConnect:       onConnect,
		Protocol:        c.opt.Protocol,
		Username:        c.opt.Username,
		Password:        c.opt.Password,
		DB:              c.opt.DB,
		ClientName:      c.opt.ClientName,
		DialTimeout:     c.opt.DialTimeout,
		ReadTimeout:     c.opt.ReadTimeout,
		WriteTimeout:    c.opt.WriteTimeout,
		PoolSize:        c.opt.PoolSize,
		MaxRetries:      -1, // the client's hook retries, after rediscovery
		DialerRetries:   1,
		DisableIdentity: true,
	}
}

// Close stops the sentinel subscriptions and closes every connection.
func (c *Client) Close() error {
	c.cancel()
	c.smu.Lock()
	for _, ps := range c.pubsubs {
		_ = ps.Close()
	}
	for _, sc := range c.sclients {
		_ = sc.Close()
	}
	for _, nc := range c.sconns {
		_ = nc.Close()
	}
	c.sconns = nil
	c.smu.Unlock()
	c.wg.Wait()
	if c.readers != nil {
		_ = c.readers.Close()
	}
	return c.Client.Close()
}

// MasterAddr returns the master address the client currently writes to,
// discovering it if needed.
func (c *Client) MasterAddr(ctx context.Context) (string, error) {
	if a := c.masterAddr(); a != "" && !c.stale.Load() {
		return a, nil
	}
	return c.rediscover(ctx, c.discoverGen.Load())
}

// Sentinels returns the sentinel addresses the client knows (the configured
// ones plus those SENTINEL SENTINELS reported), the last one that answered
// first.
func (c *Client) Sentinels() []string {
	c.smu.Lock()
	defer c.smu.Unlock()
	return append([]string(nil), c.sentinels...)
}

func (c *Client) masterAddr() string {
	if p := c.master.Load(); p != nil {
		return *p
	}
	return ""
}

// setMaster makes addr the master. On a change it closes every connection to
// another address (so nothing more goes to the demoted master) and drops the
// read nodes (the topology changed), then tells OnMasterChange.
func (c *Client) setMaster(addr, source string) {
	if source == "+switch-master" {
		c.switchGen.Add(1)
	}
	c.switchMu.Lock()
	old := c.masterAddr()
	if old == addr {
		c.switchMu.Unlock()
		return
	}
	c.master.Store(&addr)
	c.switchMu.Unlock()
	c.closeConns(func(t *trackedConn) bool { return t.addr != addr || !t.master })
	c.rstale.Store(true)
	c.chMu.Lock()
	if c.change != nil {
		close(c.change)
		c.change = nil
	}
	c.chMu.Unlock()
	if old != "" && c.opt.OnMasterChange != nil {
		c.opt.OnMasterChange(old, addr, source)
	}
}

// ---------------------------------------------------------------------------
// Master connections

func (c *Client) dialMaster(ctx context.Context, _, _ string) (net.Conn, error) {
	// A failed dial is retried here until the dial deadline, waking at once
	// when the master changes (+switch-master). Returning errors quickly
	// would trip go-redis's dial circuit breaker (after PoolSize failed
	// dials it probes only once a second), delaying the first write to the
	// new master by up to a second.
	var lastErr error
	for {
		changed := c.changed()
		addr := c.masterAddr()
		var err error
		if addr == "" || c.stale.Load() {
			addr, err = c.rediscover(ctx, c.discoverGen.Load())
		}
		if err == nil {
			var nc net.Conn
			if nc, err = dialTLS(ctx, c.opt.DialTimeout, "tcp", addr, c.opt.TLSConfig); err == nil {
				return c.track(nc, addr, true), nil
			}
			c.stale.Store(true)
		}
		lastErr = err
		t := time.NewTimer(c.opt.MinRetryBackoff)
		select {
		case <-changed:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, lastErr
		}
		t.Stop()
	}
}

// changed returns a channel closed at the next master change.
func (c *Client) changed() <-chan struct{} {
	c.chMu.Lock()
	defer c.chMu.Unlock()
	if c.change == nil {
		c.change = make(chan struct{})
	}
	return c.change
}

// checkMasterConn runs ROLE on every new master connection: a node that was
// demoted between discovery and dial (or a stale +switch-master) is refused
// before any command is sent to it.
func (c *Client) checkMasterConn(ctx context.Context, cn *redis.Conn) error {
	role, err := roleOf(ctx, cn)
	if err != nil {
		return err
	}
	if role != "master" {
		c.stale.Store(true)
		return &RoleError{Want: "master", Got: role}
	}
	return nil
}

// RoleError says a node's ROLE was not the expected one.
type RoleError struct {
	Addr      string
	Want, Got string
}

func (e *RoleError) Error() string {
	if e.Addr == "" {
		return fmt.Sprintf("client: ROLE is %q, want %q", e.Got, e.Want)
	}
	return fmt.Sprintf("client: %s: ROLE is %q, want %q", e.Addr, e.Got, e.Want)
}

// roleOf returns ROLE's first element; for a replica, "slave" only when its
// link to the master is up (else "slave-<state>").
func roleOf(ctx context.Context, cmd interface {
	Do(context.Context, ...interface{}) *redis.Cmd
}) (string, error) {
	v, err := cmd.Do(ctx, "ROLE").Slice()
	if err != nil {
		return "", err
	}
	if len(v) == 0 {
		return "", errors.New("client: empty ROLE reply")
	}
	role, _ := v[0].(string)
	if role == "slave" && len(v) >= 4 {
		if st, _ := v[3].(string); st != "connected" {
			return "slave-" + st, nil
		}
	}
	return role, nil
}

// probe connects to addr with the data credentials, checks ROLE and returns
// the latency of a PING on the established connection.
func (c *Client) probe(ctx context.Context, addr, want string) (time.Duration, error) {
	cl := redis.NewClient(&redis.Options{
		Addr:            addr,
		TLSConfig:       c.opt.TLSConfig,
		Username:        c.opt.Username,
		Password:        c.opt.Password,
		Protocol:        2,
		DialTimeout:     c.opt.DialTimeout,
		ReadTimeout:     c.opt.SentinelTimeout,
		WriteTimeout:    c.opt.SentinelTimeout,
		MaxRetries:      -1,
		DialerRetries:   1,
		PoolSize:        1,
		DisableIdentity: true,
	})
	defer cl.Close()
	role, err := roleOf(ctx, cl)
	if err != nil {
		return 0, fmt.Errorf("client: ROLE on %s: %w", addr, err)
	}
	if role != want {
		return 0, &RoleError{Addr: addr, Want: want, Got: role}
	}
	start := time.Now()
	if err := cl.Ping(ctx).Err(); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

// ---------------------------------------------------------------------------
// Retries and rediscovery

// hook routes reads, and retries after rediscovery.
type hook struct{ c *Client }

func (h hook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h hook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	c := h.c
	return func(ctx context.Context, cmd redis.Cmder) error {
		ro := ReadOnlyCommand(cmd.Args())
		if ro && c.readers != nil {
			err := c.readers.Process(ctx, cmd)
			if err == nil || !NeedsRediscovery(err) {
				return err
			}
			c.rstale.Store(true) // fall back to the master below
			cmd.SetErr(nil)
		}
		for attempt := 0; ; attempt++ {
			err := next(ctx, cmd)
			if err == nil || !NeedsRediscovery(err) {
				return err
			}
			gen := c.discoverGen.Load()
			c.stale.Store(true)
			if attempt >= c.opt.MaxRetries || !(ro || c.opt.RetryWrites) || ctx.Err() != nil {
				return err
			}
			if !sleep(ctx, c.backoff(attempt)) {
				return err
			}
			// Rediscover now rather than at the next dial: pooled
			// connections to a demoted master would keep answering
			// -READONLY. A failed discovery is left to the next dial.
			_, _ = c.rediscover(ctx, gen)
			cmd.SetErr(nil)
		}
	}
}

func (h hook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	c := h.c
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		for _, cmd := range cmds {
			if e := cmd.Err(); e != nil && NeedsRediscovery(e) {
				c.stale.Store(true)
				break
			}
		}
		if err != nil && NeedsRediscovery(err) {
			c.stale.Store(true)
		}
		return err
	}
}

func (c *Client) backoff(attempt int) time.Duration {
	d := c.opt.MinRetryBackoff << min(attempt, 16)
	if d > c.opt.MaxRetryBackoff || d <= 0 {
		d = c.opt.MaxRetryBackoff
	}
	return d/2 + rand.N(d/2+1)
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// NeedsRediscovery reports whether err means the client may be talking to
// the wrong node: -READONLY (a demoted master), -MASTERDOWN (a replica cut
// from its master), -LOADING (a restarted node), a ROLE mismatch, a failed
// discovery, or a connection error. The caller's own cancellation does not.
func NeedsRediscovery(err error) bool {
	if err == nil || errors.Is(err, redis.Nil) {
		return false
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		// A dial or read timeout inside go-redis is a net.Error, not these.
		var ne net.Error
		return errors.As(err, &ne) && ne.Timeout() && !errors.Is(err, context.Canceled)
	}
	var re redis.Error
	if errors.As(err, &re) {
		msg := re.Error()
		return strings.HasPrefix(msg, "READONLY ") || strings.HasPrefix(msg, "MASTERDOWN ") ||
			strings.HasPrefix(msg, "LOADING ")
	}
	var role *RoleError
	var disc *DiscoveryError
	var ne net.Error
	return errors.As(err, &role) || errors.As(err, &disc) || errors.As(err, &ne) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, ErrStaleMaster)
}
