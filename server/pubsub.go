package server

import (
	"sort"
	"strconv"

	"github.com/vigil-kv/vigil/configs"
	"github.com/vigil-kv/vigil/internal/netshell"
	"github.com/vigil-kv/vigil/server/keyspace"
)

// pubsub is the pub/sub hub (netshell.Hub, one implementation for both
// binaries), guarded by Server.mu. Shard channels (SSUBSCRIBE/SPUBLISH,
// Redis 7.0) are a namespace of their own: without cluster mode they
// behave like plain channels, with their own counts and no pattern
// matching. channels, patterns and shard are the hub's maps by name.
type pubsub struct {
	netshell.Hub[*Client]
	channels, patterns, shard map[string]map[*Client]struct{}
}

func (p *pubsub) init() {
	p.Init()
	p.channels = p.Names[netshell.Channel]
	p.patterns = p.Names[netshell.Pattern]
	p.shard = p.Names[netshell.Shard]
}

func (p *pubsub) unsubscribeAll(c *Client) {
	p.UnsubscribeAll(netshell.Channel, c, c.subs)
	p.UnsubscribeAll(netshell.Pattern, c, c.psubs)
	p.UnsubscribeAll(netshell.Shard, c, c.ssubs)
	c.subs, c.psubs, c.ssubs = nil, nil, nil
	c.srv.ordSubsChanged(c) // arrival order (order.go)
}

func (c *Client) subCount() int64 { return int64(len(c.subs) + len(c.psubs)) }

// replySub writes [kind, name, count] (push in RESP3) into the reply. The
// count is the channels and patterns subscribed, or for the shard kinds
// the shard channels (clientShardSubscriptionsCount).
func (c *Client) replySub(kind string, name []byte, null bool) {
	c.w.PushLen(3)
	c.w.BulkString(kind)
	if null {
		c.w.Null()
	} else {
		c.w.Bulk(name)
	}
	if kind == "ssubscribe" || kind == "sunsubscribe" {
		c.w.Int(int64(len(c.ssubs)))
		return
	}
	c.w.Int(c.subCount())
}

// replySubAlways is replySub for a pub/sub command's own pushes:
// redis-server 7.0 sends them (and published messages, which go through
// Client.push) whatever CLIENT REPLY says, in RESP2 as in RESP3
// (addReplyPubsubSubscribed and friends set CLIENT_PUSHING, which
// prepareClientToWrite lets through OFF and SKIP). While replies are
// suppressed the push's place in the reply buffer is recorded, and
// netshell.Replies keeps it when the command's reply is dropped.
func (c *Client) replySubAlways(kind string, name []byte, null bool) {
	if !c.suppressing() {
		c.replySub(kind, name, null)
		return
	}
	start := len(c.w.B)
	c.replySub(kind, name, null)
	c.rep.Pushed(&c.w, start)
}

// deliver queues a pub/sub message for sub. The client whose batch is
// running (it published to a channel it listens to, or raised a keyspace
// event it listens to) gets it in its reply buffer, between its own
// replies, as in Redis's one output buffer; the others through push.
func (s *Server) deliver(sub *Client, b []byte) {
	if sub == s.current {
		sub.pushOwn(b)
		return
	}
	sub.push(b)
}

// pushOwn appends a message to the running client's reply; CLIENT REPLY
// OFF and SKIP do not drop it (CLIENT_PUSHING).
func (c *Client) pushOwn(b []byte) {
	start := len(c.w.B)
	c.w.B = append(c.w.B, b...)
	c.rep.Pushed(&c.w, start)
}

func cmdSubscribe(c *Client, args [][]byte) {
	defer c.srv.ordSubsChanged(c) // arrival order (order.go)
	p := &c.srv.pubsub
	for _, a := range args[1:] {
		p.Subscribe(netshell.Channel, c, &c.subs, string(a))
		c.replySubAlways("subscribe", a, false)
	}
}

func cmdPSubscribe(c *Client, args [][]byte) {
	defer c.srv.ordSubsChanged(c) // arrival order (order.go)
	p := &c.srv.pubsub
	for _, a := range args[1:] {
		p.Subscribe(netshell.Pattern, c, &c.psubs, string(a))
		c.replySubAlways("psubscribe", a, false)
	}
}

func cmdUnsubscribe(c *Client, args [][]byte) {
	defer c.srv.ordSubsChanged(c) // arrival order (order.go)
	p := &c.srv.pubsub
	names := args[1:]
	if len(names) == 0 {
		if len(c.subs) == 0 {
			c.replySubAlways("unsubscribe", nil, true)
			return
		}
		for _, ch := range netshell.Sorted(c.subs) {
			names = append(names, []byte(ch))
		}
	}
	for _, a := range names {
		p.Unsubscribe(netshell.Channel, c, c.subs, string(a))
		c.replySubAlways("unsubscribe", a, false)
	}
}

func cmdPUnsubscribe(c *Client, args [][]byte) {
	defer c.srv.ordSubsChanged(c) // arrival order (order.go)
	p := &c.srv.pubsub
	names := args[1:]
	if len(names) == 0 {
		if len(c.psubs) == 0 {
			c.replySubAlways("punsubscribe", nil, true)
			return
		}
		for _, pat := range netshell.Sorted(c.psubs) {
			names = append(names, []byte(pat))
		}
	}
	for _, a := range names {
		p.Unsubscribe(netshell.Pattern, c, c.psubs, string(a))
		c.replySubAlways("punsubscribe", a, false)
	}
}

// publish delivers msg and returns the number of receivers
// (pubsubPublishMessage).
func (s *Server) publish(channel, msg []byte) int64 {
	s.stats.pubsubMessages++
	return s.pubsub.Publish(channel, func(sub *Client, pat string, isPat bool) {
		s.deliver(sub, netshell.Message(sub.w.Proto, pat, isPat, channel, msg))
	})
}

// notify is notify.c's notifyKeyspaceEvent: when notify-keyspace-events
// enables class, publish "__keyspace@<db>__:<key> <event>" (K) and
// "__keyevent@<db>__:<event> <key>" (E). Off, it costs one flag test.
func (s *Server) notify(class int, event string, key []byte, db int) {
	if s.cfg.NotifyKeyspaceEvents&class == 0 {
		return
	}
	s.notifyPublish(event, key, db)
}

func (s *Server) notifyPublish(event string, key []byte, db int) {
	flags := s.cfg.NotifyKeyspaceEvents
	prefix := "__keyspace@" + strconv.Itoa(db) + "__:"
	if flags&configs.NotifyKeyspace != 0 {
		s.publish(append([]byte(prefix), key...), []byte(event))
	}
	if flags&configs.NotifyKeyevent != 0 {
		s.publish([]byte("__keyevent"+prefix[len("__keyspace"):]+event), key)
	}
}

// notifyExpired is what deleteExpiredKeyAndPropagate signals for a key
// removed by lazy or active expiry (the keyspace's OnExpire hook): the
// "expired" event and, for WATCH, a modification.
func (s *Server) notifyExpired(db int, key string) {
	if s.tracking.keysOrPrefixes() { // tracking.go: signalModifiedKey(NULL, ...)
		s.trackingInvalidateKey(nil, []byte(key), true)
	}
	if len(s.watch.byClient) != 0 {
		s.touchWatchers(db, []byte(key))
	}
	if s.cfg.NotifyKeyspaceEvents&configs.NotifyExpired == 0 {
		return
	}
	s.notifyPublish("expired", []byte(key), db)
}

// notify is notifyKeyspaceEvent in the client's selected database.
func (c *Client) notify(class int, event string, key []byte) {
	c.srv.notify(class, event, key, c.db)
}

func cmdPublish(c *Client, args [][]byte) {
	if string(args[1]) == helloChannel { // fence.go
		c.srv.fenceHello(c, args[2])
	}
	c.w.Int(c.srv.publish(args[1], args[2]))
	c.forcePropagation(TargetRepl) // to replicas, never to the AOF
}

// cmdSSubscribe is ssubscribeCommand. It is refused where the client may
// not block (inside EXEC), unlike SUBSCRIBE.
func cmdSSubscribe(c *Client, args [][]byte) {
	defer c.srv.ordSubsChanged(c) // arrival order (order.go)
	if c.multi != nil && c.multi.executing {
		c.w.Error("ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client")
		return
	}
	p := &c.srv.pubsub
	for _, a := range args[1:] {
		p.Subscribe(netshell.Shard, c, &c.ssubs, string(a))
		c.replySubAlways("ssubscribe", a, false)
	}
}

func cmdSUnsubscribe(c *Client, args [][]byte) {
	defer c.srv.ordSubsChanged(c) // arrival order (order.go)
	p := &c.srv.pubsub
	names := args[1:]
	if len(names) == 0 {
		if len(c.ssubs) == 0 {
			c.replySubAlways("sunsubscribe", nil, true)
			return
		}
		for _, ch := range netshell.Sorted(c.ssubs) {
			names = append(names, []byte(ch))
		}
	}
	for _, a := range names {
		p.Unsubscribe(netshell.Shard, c, c.ssubs, string(a))
		c.replySubAlways("sunsubscribe", a, false)
	}
}

// cmdSPublish is spublishCommand: shard subscribers only, as "smessage".
func cmdSPublish(c *Client, args [][]byte) {
	s := c.srv
	var n int64
	s.stats.pubsubMessages++
	for sub := range s.pubsub.shard[string(args[1])] {
		s.deliver(sub, encodePush(sub.w.Proto, []byte("smessage"), args[1], args[2]))
		n++
	}
	c.forcePropagation(TargetRepl) // spublishCommand outside a cluster
	c.w.Int(n)
}

// channelsReply is pubsub channels/shardchannels: the channels of m
// matching the optional pattern (at most one: Redis's argc check).
func channelsReply(c *Client, args [][]byte, m map[string]map[*Client]struct{}) {
	if len(args) > 3 {
		c.w.Error(errSubcommandSyntax(args[1], "PUBSUB"))
		return
	}
	var out []string
	for ch := range m {
		if len(args) < 3 || keyspace.GlobMatch(args[2], []byte(ch), false) {
			out = append(out, ch)
		}
	}
	sort.Strings(out)
	c.w.ArrayLen(len(out))
	for _, ch := range out {
		c.w.BulkString(ch)
	}
}

func cmdPubsubChannels(c *Client, args [][]byte) { channelsReply(c, args, c.srv.pubsub.channels) }

func cmdPubsubShardChannels(c *Client, args [][]byte) { channelsReply(c, args, c.srv.pubsub.shard) }

func numsubReply(c *Client, args [][]byte, m map[string]map[*Client]struct{}) {
	c.w.ArrayLen((len(args) - 2) * 2) // an array in RESP3 too (Redis 7.0)
	for _, a := range args[2:] {
		c.w.Bulk(a)
		c.w.Int(int64(len(m[string(a)])))
	}
}

func cmdPubsubNumsub(c *Client, args [][]byte) { numsubReply(c, args, c.srv.pubsub.channels) }

func cmdPubsubShardNumsub(c *Client, args [][]byte) { numsubReply(c, args, c.srv.pubsub.shard) }

func cmdPubsubNumpat(c *Client, args [][]byte) {
	c.w.Int(int64(len(c.srv.pubsub.patterns)))
}

func init() {
	ps := FlagPubSub | FlagNoScript | FlagLoading | FlagStale
	register(
		&Command{Name: "subscribe", Arity: -2, Flags: ps, ACL: []string{"pubsub", "slow"}, Handler: cmdSubscribe},
		&Command{Name: "psubscribe", Arity: -2, Flags: ps, ACL: []string{"pubsub", "slow"}, Handler: cmdPSubscribe},
		&Command{Name: "unsubscribe", Arity: -1, Flags: ps, ACL: []string{"pubsub", "slow"}, Handler: cmdUnsubscribe},
		&Command{Name: "punsubscribe", Arity: -1, Flags: ps, ACL: []string{"pubsub", "slow"}, Handler: cmdPUnsubscribe},
		&Command{Name: "publish", Arity: 3, Flags: FlagPubSub | FlagLoading | FlagStale | FlagFast | FlagMayReplicate, ACL: []string{"pubsub", "fast"}, Handler: cmdPublish},
		&Command{Name: "ssubscribe", Arity: -2, Flags: ps, FirstKey: 1, LastKey: -1, Step: 1, ACL: []string{"pubsub", "slow"}, Handler: cmdSSubscribe},
		&Command{Name: "sunsubscribe", Arity: -1, Flags: ps, FirstKey: 1, LastKey: -1, Step: 1, ACL: []string{"pubsub", "slow"}, Handler: cmdSUnsubscribe},
		&Command{Name: "spublish", Arity: 3, Flags: FlagPubSub | FlagLoading | FlagStale | FlagFast | FlagMayReplicate, FirstKey: 1, LastKey: 1, Step: 1, ACL: []string{"pubsub", "fast"}, Handler: cmdSPublish},
		&Command{Name: "pubsub", Arity: -2, Subs: []*Command{
			{Name: "channels", Arity: -2, Flags: FlagPubSub | FlagLoading | FlagStale, ACL: []string{"pubsub", "slow"}, Handler: cmdPubsubChannels},
			{Name: "numsub", Arity: -2, Flags: FlagPubSub | FlagLoading | FlagStale, ACL: []string{"pubsub", "slow"}, Handler: cmdPubsubNumsub},
			{Name: "numpat", Arity: 2, Flags: FlagPubSub | FlagLoading | FlagStale, ACL: []string{"pubsub", "slow"}, Handler: cmdPubsubNumpat},
			{Name: "shardchannels", Arity: -2, Flags: FlagPubSub | FlagLoading | FlagStale, ACL: []string{"pubsub", "slow"}, Handler: cmdPubsubShardChannels},
			{Name: "shardnumsub", Arity: -2, Flags: FlagPubSub | FlagLoading | FlagStale, ACL: []string{"pubsub", "slow"}, Handler: cmdPubsubShardNumsub},
			{Name: "help", Arity: 2, Flags: FlagLoading | FlagStale, Handler: helpHandler("PUBSUB", []string{
				"CHANNELS [<pattern>]", "    Return the currently active channels matching a <pattern> (default: '*').",
				"NUMPAT", "    Return number of subscriptions to patterns.",
				"NUMSUB [<channel> ...]", "    Return the number of subscribers for the specified channels, excluding",
				"    pattern subscriptions(default: no channels).",
				"SHARDCHANNELS [<pattern>]", "    Return the currently active shard level channels matching a <pattern> (default: '*').",
				"SHARDNUMSUB [<shardchannel> ...]", "    Return the number of subscribers for the specified shard level channel(s)"})},
		}},
	)
}
