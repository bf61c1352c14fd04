package client

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/redis/go-redis/v9"
)

// RingOptions configure a Ring: one shard per sentinel-monitored group.
type RingOptions struct {
	// MasterNames are the groups, one shard each. The shard's name in the
	// ring's hash is the master name, not an address, so a key stays in
	// its group across failovers.
	MasterNames []string
	// Options apply to every group's Client (sentinels, credentials,
	// ReadFrom, retries...); MasterName is set per group.
	Options Options
	// Ring, when set, is a template for go-redis's RingOptions (hashing,
	// heartbeat). Addrs and NewClient are set by NewRing. HeartbeatFn
	// defaults to "always up": a group under failover is not dropped from
	// the ring (which would move its keys to another group); its commands
	// wait for the new master (Options.MasterWait) instead.
	Ring *redis.RingOptions
}

// Ring is go-redis's Ring whose shards are sentinel-followed groups: each
// shard is a Client following one master name through the sentinels.
type Ring struct {
	*redis.Ring

	mu      sync.Mutex
	clients map[string][]*Client // by master name; the ring may recreate a shard
	last    map[string]*Client
}

var _ redis.UniversalClient = (*Ring)(nil)

// shardAddr is the address the ring sees for a group (a label only).
func shardAddr(name string) string { return "sentinel-group:" + name }

// NewRing returns a Ring over opt.MasterNames. Like New it does no network
// I/O: each group discovers its master on its first command.
func NewRing(opt RingOptions) (*Ring, error) {
	if len(opt.MasterNames) == 0 {
		return nil, errors.New("client: RingOptions.MasterNames is empty")
	}
	byAddr := map[string]string{}
	for _, n := range opt.MasterNames {
		o := opt.Options
		o.MasterName = n
		if err := o.init(); err != nil {
			return nil, err
		}
		if _, dup := byAddr[shardAddr(n)]; dup {
			return nil, fmt.Errorf("client: master name %q twice in RingOptions.MasterNames", n)
		}
		byAddr[shardAddr(n)] = n
	}
	r := &Ring{clients: map[string][]*Client{}, last: map[string]*Client{}}
	ro := &redis.RingOptions{}
	if opt.Ring != nil {
		*ro = *opt.Ring
	}
	ro.Addrs = map[string]string{}
	for a, n := range byAddr {
		ro.Addrs[n] = a
	}
	if ro.HeartbeatFn == nil {
		ro.HeartbeatFn = func(context.Context, *redis.Client) bool { return true }
	}
	// The group's Client retries after rediscovery; the ring must not
	// retry on top of it (its retry would not know about failovers).
	ro.MaxRetries = -1
	ro.NewClient = func(ropt *redis.Options) *redis.Client {
		name := byAddr[ropt.Addr]
		o := opt.Options
		o.MasterName = name
		c, err := New(o)
		if err != nil {
			// Options were checked above; New fails on nothing else.
			panic(fmt.Sprintf("client: NewRing: group %q: %v", name, err))
		}
		r.mu.Lock()
		r.clients[name] = append(r.clients[name], c)
		r.last[name] = c
		r.mu.Unlock()
		return c.Client
	}
	r.Ring = redis.NewRing(ro)
	return r, nil
}

// Shard returns the Client of the group named name (nil if unknown), e.g.
// to ask it for its master address.
func (r *Ring) Shard(name string) *Client {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last[name]
}

// Close closes the ring and every group's Client (sentinel subscriptions
// included).
func (r *Ring) Close() error {
	err := r.Ring.Close()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, cs := range r.clients {
		for _, c := range cs {
			if e := c.Close(); e != nil && err == nil && !errors.Is(e, redis.ErrClosed) {
				err = e
			}
		}
	}
	return err
}
