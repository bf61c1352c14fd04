package daemon

import (
	"strings"

	"github.com/vigil-kv/vigil/internal/netshell"
)

// CLIENT TRACKING, CACHING, GETREDIR and TRACKINGINFO as redis-sentinel
// 7.0.15 answers them: it runs networking.c's clientCommand, so tracking
// is accepted and reported (TRACKINGINFO, CLIENT LIST's t/B flags and
// redir=, INFO's tracking_clients), but a sentinel has no keyspace, so no
// invalidation is ever sent, and a REDIRECT client that goes away is never
// noticed (no tracking-redir-broken push, no R flag).

// tracking is the client's tracking state (nil: off). Only the client's
// goroutine changes it, under c.mu: CLIENT TRACKING publishes a new
// state, CACHING's flag (which CLIENT LIST does not read) changes in place.
func (c *client) tracking() *netshell.Tracking {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.track
}

// setTracking replaces the client's tracking state, counting tracking
// clients (server.tracking_clients).
func (c *client) setTracking(t *netshell.Tracking) {
	c.mu.Lock()
	was := c.track != nil
	c.track = t
	c.mu.Unlock()
	switch {
	case !was && t != nil:
		c.d.trackingClients.Add(1)
	case was && t == nil:
		c.d.trackingClients.Add(-1)
	}
}

func cmdClientTracking(c *client, argv [][]byte) {
	cur := c.tracking()
	var snapshot *netshell.Tracking
	if cur != nil {
		cp := *cur
		snapshot = &cp
	}
	a, ok := netshell.ParseTracking(&c.w, argv, snapshot, func(id int64) bool {
		c.d.clientsMu.Lock()
		defer c.d.clientsMu.Unlock()
		return c.d.clients[id] != nil
	})
	if !ok {
		return
	}
	if !a.On {
		c.setTracking(nil)
		c.w.OK()
		return
	}
	// Enable on a copy, published under c.mu: CLIENT LIST reads it from
	// other goroutines.
	var next netshell.Tracking
	if cur != nil {
		next = *cur
		next.Prefixes = make(map[string]struct{}, len(cur.Prefixes))
		for p := range cur.Prefixes {
			next.Prefixes[p] = struct{}{}
		}
	}
	t, _ := next.Enable(a)
	c.setTracking(t)
	c.w.OK()
}

func cmdClientCaching(c *client, argv [][]byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	netshell.Caching(&c.w, c.track, argv[2])
}

// endCaching is resetClient's part: CLIENT CACHING's flag lasts for the
// next command only. 7.0 keeps it after a command whose proc is
// clientCommand: a CLIENT subcommand it found (even one refused for its
// arity), not a bare CLIENT nor an unknown subcommand.
func (c *client) endCaching(argv [][]byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.track == nil || !c.track.Caching {
		return
	}
	if cmd := netshell.Lookup(c.d.cmds, argv[0]); cmd != nil {
		if sub, _ := cmd.Resolve(argv); sub != nil && strings.HasPrefix(sub.FullName(), "client|") {
			return
		}
	}
	c.track.Caching = false
}
