package daemon

import (
	"sort"
	"sync"

	"github.com/vigil-kv/vigil/internal/redisutil"
	"github.com/vigil-kv/vigil/internal/resp"
)

// hub is the sentinel's own pub/sub: clients subscribe to event channels
// ("+switch-master", "*"...) and every Notify is published on the channel
// named by its type.
type hub struct {
	mu       sync.Mutex
	channels map[string]map[*client]bool
	patterns map[string]map[*client]bool
}

func newHub() *hub {
	return &hub{channels: map[string]map[*client]bool{}, patterns: map[string]map[*client]bool{}}
}

func (h *hub) counts() (channels, patterns int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.channels), len(h.patterns)
}

// publish delivers msg to the subscribers of channel and of the patterns
// matching it; it returns the number of receivers.
func (h *hub) publish(channel, msg string) int {
	type delivery struct {
		c       *client
		pattern string
	}
	var ds []delivery
	h.mu.Lock()
	for c := range h.channels[channel] {
		ds = append(ds, delivery{c, ""})
	}
	for p, cs := range h.patterns {
		if redisutil.StringMatch(p, channel, false) {
			for c := range cs {
				ds = append(ds, delivery{c, p})
			}
		}
	}
	h.mu.Unlock()
	for _, dv := range ds {
		var w resp.Writer
		w.Proto = dv.c.proto()
		if dv.pattern == "" {
			w.PushLen(3)
			w.BulkString("message")
		} else {
			w.PushLen(4)
			w.BulkString("pmessage")
			w.BulkString(dv.pattern)
		}
		w.BulkString(channel)
		w.BulkString(msg)
		dv.c.writePush(w.B)
	}
	return len(ds)
}

func (c *client) proto() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.w.Proto
}

// subscribe implements SUBSCRIBE / PSUBSCRIBE for one name; it returns the
// client's subscription count after it.
func (h *hub) subscribe(c *client, name string, pattern bool) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	m, own := h.channels, &c.subs
	if pattern {
		m, own = h.patterns, &c.psubs
	}
	if *own == nil {
		*own = map[string]bool{}
	}
	if !(*own)[name] {
		(*own)[name] = true
		if m[name] == nil {
			m[name] = map[*client]bool{}
		}
		m[name][c] = true
	}
	return len(c.subs) + len(c.psubs)
}

// unsubscribe removes one subscription; it reports the count after it.
func (h *hub) unsubscribe(c *client, name string, pattern bool) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	m, own := h.channels, c.subs
	if pattern {
		m, own = h.patterns, c.psubs
	}
	if own[name] {
		delete(own, name)
		delete(m[name], c)
		if len(m[name]) == 0 {
			delete(m, name)
		}
	}
	return len(c.subs) + len(c.psubs)
}

// list returns the client's channels or patterns, sorted.
func (h *hub) list(c *client, pattern bool) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	own := c.subs
	if pattern {
		own = c.psubs
	}
	out := make([]string, 0, len(own))
	for n := range own {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func (h *hub) unsubscribeAll(c *client) {
	for _, n := range h.list(c, false) {
		h.unsubscribe(c, n, false)
	}
	for _, n := range h.list(c, true) {
		h.unsubscribe(c, n, true)
	}
}
