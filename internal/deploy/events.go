package deploy

import (
	"context"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Event is a sentinel notification (+sdown, -sdown, +odown, +switch-master,
// ...) as published on the sentinels' pub/sub: Type is the channel name,
// Payload the message ("master mymaster 127.0.0.1 6379").
type Event struct {
	Time     time.Time `json:"time"`
	Sentinel string    `json:"sentinel"` // the first sentinel that published it
	Type     string    `json:"event"`
	Payload  string    `json:"payload"`
}

// WatchEvents subscribes (PSUBSCRIBE *) to every sentinel and sends each
// event on the returned channel until ctx ends. The same event published by
// several sentinels (each one's +sdown of the master, the +switch-master
// every sentinel announces) is sent once: an event equal to one sent within
// dedupWindow is dropped. Subscriptions reconnect on their own (go-redis),
// so a sentinel restarted later is followed again.
func WatchEvents(ctx context.Context, sentinels []string, dedupWindow time.Duration) <-chan Event {
	out := make(chan Event, 64)
	raw := make(chan Event, 64)
	var wg sync.WaitGroup
	for _, addr := range sentinels {
		wg.Add(1)
		go func() {
			defer wg.Done()
			opts := clientOptions(addr, time.Second)
			opts.ReadTimeout = -1 // pub/sub: wait for messages
			opts.MaxRetries = 0
			cl := redis.NewClient(opts)
			defer cl.Close()
			ps := cl.PSubscribe(ctx, "*")
			defer ps.Close()
			ch := ps.Channel(redis.WithChannelHealthCheckInterval(time.Second))
			for {
				select {
				case <-ctx.Done():
					return
				case m, ok := <-ch:
					if !ok {
						return
					}
					select {
					case raw <- Event{Time: time.Now(), Sentinel: addr, Type: m.Channel, Payload: m.Payload}:
					case <-ctx.Done():
						return
					}
				}
			}
		}()
	}
	go func() {
		wg.Wait()
		close(raw)
	}()
	go func() {
		defer close(out)
		d := NewDeduper(dedupWindow)
		for e := range raw {
			if d.Fresh(e) {
				select {
				case out <- e:
				case <-ctx.Done():
				}
			}
		}
	}()
	return out
}

// Deduper drops an event equal (type and payload) to one seen within a
// window of its time.
type Deduper struct {
	window time.Duration
	seen   map[[2]string]time.Time
}

// NewDeduper returns a Deduper with the given window.
func NewDeduper(window time.Duration) *Deduper {
	return &Deduper{window: window, seen: map[[2]string]time.Time{}}
}

// Fresh reports whether e is new, and remembers it.
func (d *Deduper) Fresh(e Event) bool {
	k := [2]string{e.Type, e.Payload}
	if t, ok := d.seen[k]; ok && e.Time.Sub(t) < d.window && e.Time.Sub(t) >= -d.window {
		return false
	}
	for key, t := range d.seen {
		if e.Time.Sub(t) >= d.window {
			delete(d.seen, key)
		}
	}
	d.seen[k] = e.Time
	return true
}
