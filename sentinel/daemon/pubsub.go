package daemon

import (
	"sync"

	"github.com/vigil-kv/vigil/internal/netshell"
)

// hub is the sentinel's own pub/sub: clients subscribe to event channels
// ("+switch-master", "*"...) and every Notify is published on the channel
// named by its type. It is the server's hub (netshell.Hub) behind a lock:
// clients subscribe from their goroutines, the event loop publishes.
type hub struct {
	mu sync.Mutex
	h  netshell.Hub[*client] // guarded by mu, as the clients' subs and psubs
}

func newHub() *hub {
	h := &hub{}
	h.h.Init()
	return h
}

func (h *hub) counts() (channels, patterns int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.h.Count(netshell.Channel), h.h.Count(netshell.Pattern)
}

// publish delivers msg to the subscribers of channel and of the patterns
// matching it; it returns the number of receivers.
func (h *hub) publish(channel, msg string) int {
	type delivery struct {
		c         *client
		pattern   string
		isPattern bool
	}
	var ds []delivery
	h.mu.Lock()
	h.h.Publish([]byte(channel), func(c *client, pattern string, isPattern bool) {
		ds = append(ds, delivery{c, pattern, isPattern})
	})
	h.mu.Unlock()
	for _, dv := range ds {
		dv.c.writePush(netshell.Message(dv.c.proto(), dv.pattern, dv.isPattern, []byte(channel), []byte(msg)))
	}
	return len(ds)
}

func (c *client) proto() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.w.Proto
}

// own is the client's set of names of a namespace; guarded by hub.mu.
func (c *client) own(pattern bool) (netshell.Kind, *map[string]struct{}) {
	if pattern {
		return netshell.Pattern, &c.psubs
	}
	return netshell.Channel, &c.subs
}

// subscribe implements SUBSCRIBE / PSUBSCRIBE for one name; it returns the
// client's subscription count after it.
func (h *hub) subscribe(c *client, name string, pattern bool) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	k, own := c.own(pattern)
	h.h.Subscribe(k, c, own, name)
	return len(c.subs) + len(c.psubs)
}

// unsubscribe removes one subscription; it reports the count after it.
func (h *hub) unsubscribe(c *client, name string, pattern bool) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	k, own := c.own(pattern)
	h.h.Unsubscribe(k, c, *own, name)
	return len(c.subs) + len(c.psubs)
}

// list returns the client's channels or patterns, sorted.
func (h *hub) list(c *client, pattern bool) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, own := c.own(pattern)
	return netshell.Sorted(*own)
}

func (h *hub) unsubscribeAll(c *client) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.h.UnsubscribeAll(netshell.Channel, c, c.subs)
	h.h.UnsubscribeAll(netshell.Pattern, c, c.psubs)
	c.subs, c.psubs = nil, nil
}
