package netshell

import (
	"sort"

	"github.com/vigil-kv/vigil/internal/redisutil"
	"github.com/vigil-kv/vigil/internal/resp"
)

// Kind is a pub/sub namespace: plain channels, patterns, and shard
// channels (SSUBSCRIBE/SPUBLISH, Redis 7.0: without cluster mode plain
// channels with counts of their own and no pattern matching).
type Kind int

const (
	Channel Kind = iota
	Pattern
	Shard
)

// Hub is the one pub/sub registry of both binaries (pubsub.c's
// pubsub_channels, pubsub_patterns, pubsubshard_channels): for each
// namespace, a name and its subscribers. Each subscriber keeps its own set
// of names per namespace (c->pubsub_channels...), passed in as own. The hub
// holds no lock: its owner guards it (the server's execution lock, the
// sentinel's hub lock).
type Hub[C comparable] struct {
	Names [3]map[string]map[C]struct{} // by Kind
}

// NewHub returns an empty hub.
func NewHub[C comparable]() *Hub[C] {
	h := &Hub[C]{}
	h.Init()
	return h
}

// Init empties the hub.
func (h *Hub[C]) Init() {
	for k := range h.Names {
		h.Names[k] = map[string]map[C]struct{}{}
	}
}

// Subscribe adds c to name in namespace k and name to own, c's set of
// that namespace; it reports whether c was not subscribed yet.
func (h *Hub[C]) Subscribe(k Kind, c C, own *map[string]struct{}, name string) bool {
	if *own == nil {
		*own = map[string]struct{}{}
	}
	if _, ok := (*own)[name]; ok {
		return false
	}
	(*own)[name] = struct{}{}
	m := h.Names[k]
	if m[name] == nil {
		m[name] = map[C]struct{}{}
	}
	m[name][c] = struct{}{}
	return true
}

// Unsubscribe removes c from name in namespace k and name from own; it
// reports whether c was subscribed.
func (h *Hub[C]) Unsubscribe(k Kind, c C, own map[string]struct{}, name string) bool {
	if _, ok := own[name]; !ok {
		return false
	}
	delete(own, name)
	m := h.Names[k]
	delete(m[name], c)
	if len(m[name]) == 0 {
		delete(m, name)
	}
	return true
}

// UnsubscribeAll removes c from every name of own in namespace k.
func (h *Hub[C]) UnsubscribeAll(k Kind, c C, own map[string]struct{}) {
	m := h.Names[k]
	for name := range own {
		delete(m[name], c)
		if len(m[name]) == 0 {
			delete(m, name)
		}
	}
}

// Publish calls deliver for every receiver of a message on channel, as
// pubsubPublishMessage: the channel's subscribers (isPattern false), then
// those of each pattern matching it. It returns the number of receivers.
func (h *Hub[C]) Publish(channel []byte, deliver func(sub C, pattern string, isPattern bool)) int64 {
	var n int64
	for sub := range h.Names[Channel][string(channel)] {
		deliver(sub, "", false)
		n++
	}
	for pat, subs := range h.Names[Pattern] {
		if !redisutil.StringMatch(pat, channel, false) {
			continue
		}
		for sub := range subs {
			deliver(sub, pat, true)
			n++
		}
	}
	return n
}

// Count is the number of names with subscribers in namespace k (INFO's
// pubsub_channels, PUBSUB NUMPAT).
func (h *Hub[C]) Count(k Kind) int { return len(h.Names[k]) }

// Sorted returns the names of a subscriber's set in order (UNSUBSCRIBE
// with no argument).
func Sorted(own map[string]struct{}) []string {
	out := make([]string, 0, len(own))
	for k := range own {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Message encodes a published message for a client speaking proto: a
// "message" push, or with isPattern a "pmessage" one; the same bytes in
// both binaries.
func Message(proto int, pattern string, isPattern bool, channel, msg []byte) []byte {
	w := resp.Writer{Proto: proto}
	if !isPattern {
		w.PushLen(3)
		w.BulkString("message")
	} else {
		w.PushLen(4)
		w.BulkString("pmessage")
		w.BulkString(pattern)
	}
	w.Bulk(channel)
	w.Bulk(msg)
	return w.B
}
