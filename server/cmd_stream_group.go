package server

import (
	"math"
	"strconv"

	"github.com/vigil-kv/vigil/configs"
	"github.com/vigil-kv/vigil/server/keyspace"
)

// Consumer groups and XINFO, as Redis 7.0.15's t_stream.c: XGROUP,
// XREADGROUP (through xreadGeneric in cmd_stream.go), XACK, XPENDING,
// XCLAIM, XAUTOCLAIM, XINFO. Their effects propagate as 7.0 writes them:
// an entry delivered or claimed as XCLAIM ... FORCE JUSTID LASTID
// (streamPropagateXCLAIM), a group's last ID as XGROUP SETID ...
// ENTRIESREAD (streamPropagateGroupID), a consumer created by a read as
// XGROUP CREATECONSUMER.

var (
	wordXClaim         = []byte("XCLAIM")
	wordXGroup         = []byte("XGROUP")
	wordSetID          = []byte("SETID")
	wordEntriesRead    = []byte("ENTRIESREAD")
	wordCreateConsumer = []byte("CREATECONSUMER")
	wordTime           = []byte("TIME")
	wordRetryCount     = []byte("RETRYCOUNT")
	wordForce          = []byte("FORCE")
	wordJustID         = []byte("JUSTID")
	wordLastID         = []byte("LASTID")
	wordZero           = []byte("0")
)

var xgroupHelp = []string{
	"CREATE <key> <groupname> <id|$> [option]",
	"    Create a new consumer group. Options are:",
	"    * MKSTREAM",
	"      Create the empty stream if it does not exist.",
	"    * ENTRIESREAD entries_read",
	"      Set the group's entries_read counter (internal use).",
	"CREATECONSUMER <key> <groupname> <consumer>",
	"    Create a new consumer in the specified group.",
	"DELCONSUMER <key> <groupname> <consumer>",
	"    Remove the specified consumer.",
	"DESTROY <key> <groupname>",
	"    Remove the specified group.",
	"SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
	"    Set the current group ID and entries_read counter.",
}

var xinfoHelp = []string{
	"CONSUMERS <key> <groupname>",
	"    Show consumers of <groupname>.",
	"GROUPS <key>",
	"    Show the stream consumer groups.",
	"STREAM <key> [FULL [COUNT <count>]",
	"    Show information about the stream.",
}

// propagateXClaim is streamPropagateXCLAIM. The ID is XCLAIM's argument as
// given (Redis propagates c->argv[j]: "29" stays "29"), else formatted.
func propagateXClaim(c *Client, key, group []byte, g *keyspace.StreamCG, id keyspace.StreamID, nack *keyspace.StreamNACK) {
	propagateXClaimArg(c, key, group, g, id.AppendTo(nil), nack)
}

func propagateXClaimArg(c *Client, key, group []byte, g *keyspace.StreamCG, idArg []byte, nack *keyspace.StreamNACK) {
	var cons []byte
	if nack.Consumer != nil {
		cons = []byte(nack.Consumer.Name)
	}
	c.srv.alsoPropagate(c.db, TargetAll, wordXClaim, copyBytes(key), copyBytes(group), cons, wordZero,
		idArg, wordTime, strconv.AppendInt(nil, nack.DeliveryTime, 10),
		wordRetryCount, strconv.AppendUint(nil, nack.DeliveryCount, 10), wordForce, wordJustID,
		wordLastID, g.LastID.AppendTo(nil))
}

// propagateGroupID is streamPropagateGroupID.
func propagateGroupID(c *Client, key, group []byte, g *keyspace.StreamCG) {
	c.srv.alsoPropagate(c.db, TargetAll, wordXGroup, wordSetID, copyBytes(key), copyBytes(group),
		g.LastID.AppendTo(nil), wordEntriesRead, strconv.AppendInt(nil, g.EntriesRead, 10))
}

// propagateConsumerCreation is streamPropagateConsumerCreation.
func propagateConsumerCreation(c *Client, key, group []byte, name string) {
	c.srv.alsoPropagate(c.db, TargetAll, wordXGroup, wordCreateConsumer, copyBytes(key), copyBytes(group), []byte(name))
}

// lookupOrCreateConsumer is streamLookupConsumer (refreshing seen_time)
// or streamCreateConsumer for the readers and claimers; created tells.
func lookupOrCreateConsumer(c *Client, key []byte, g *keyspace.StreamCG, name []byte) (cons *keyspace.StreamConsumer, created bool) {
	now := c.srv.nowMs
	if cons = g.Consumer(name); cons != nil {
		cons.SeenTime = now
		return cons, false
	}
	cons = g.CreateConsumer(string(name), now)
	c.srv.ks.Dirty++
	c.notify(configs.NotifyStream, "xgroup-createconsumer", key)
	return cons, true
}

// replyGroupRange is streamReplyWithRange for a group reader (not its
// history): the entries from start on (count 0: all), the group's last ID
// and entries_read advanced, each entry made pending for cons (unless
// noack) and propagated as XCLAIM.
func replyGroupRange(c *Client, key, group []byte, s *keyspace.Stream, g *keyspace.StreamCG, cons *keyspace.StreamConsumer, start keyspace.StreamID, count int64, noack bool) {
	type ent struct {
		n   *keyspace.StreamNode
		off int
	}
	var ents []ent
	s.Range(start, keyspace.MaxStreamID, false, func(n *keyspace.StreamNode, e *keyspace.StreamEntry) bool {
		ents = append(ents, ent{n, e.Off()})
		return count == 0 || int64(len(ents)) < count
	})
	var e keyspace.StreamEntry
	c.w.ArrayLen(len(ents))
	propagateLast := false
	now := c.srv.nowMs
	for _, x := range ents {
		x.n.EntryAt(x.off, &e)
		id := e.ID
		if id.Cmp(g.LastID) > 0 {
			if g.EntriesRead != -1 && !s.HasTombstonesFrom(id) {
				g.EntriesRead++
			} else if s.EntriesAdded() != 0 {
				g.EntriesRead = s.EstimateEntriesRead(id)
			}
			g.LastID = id
			if noack {
				propagateLast = true
			}
		}
		writeStreamEntry(c, x.n, &e)
		if noack {
			continue
		}
		nack := g.PELGet(id)
		if nack == nil {
			nack = &keyspace.StreamNACK{DeliveryTime: now, DeliveryCount: 1, Consumer: cons}
			g.PELAdd(id, nack)
		} else {
			nack.Consumer.PELDelete(id)
			nack.Consumer = cons
			nack.DeliveryTime = now
			nack.DeliveryCount = 1
		}
		cons.PELAdd(id, nack)
		propagateXClaim(c, key, group, g, id, nack)
	}
	if propagateLast {
		propagateGroupID(c, key, group, g)
	}
}

// replyConsumerHistory is streamReplyWithRangeFromConsumerPEL: the
// consumer's pending entries from start on (an entry deleted since shows
// as [id, nil]); each one still there counts as delivered again.
func replyConsumerHistory(c *Client, s *keyspace.Stream, cons *keyspace.StreamConsumer, start keyspace.StreamID, count int64) {
	var ids []keyspace.StreamID
	var nacks []*keyspace.StreamNACK
	cons.PELRange(start, func(id keyspace.StreamID, n *keyspace.StreamNACK) bool {
		ids = append(ids, id)
		nacks = append(nacks, n)
		return count == 0 || int64(len(ids)) < count
	})
	c.w.ArrayLen(len(ids))
	for i, id := range ids {
		if !writeEntryByID(c, s, id) {
			c.w.ArrayLen(2)
			streamIDBulk(c, id)
			c.w.NullArray()
			continue
		}
		nacks[i].DeliveryTime = c.srv.nowMs
		nacks[i].DeliveryCount++
	}
}

// writeEntryByID writes the live entry id ([id, fields]) if there is one.
func writeEntryByID(c *Client, s *keyspace.Stream, id keyspace.StreamID) bool {
	found := false
	s.Range(id, id, false, func(n *keyspace.StreamNode, e *keyspace.StreamEntry) bool {
		writeStreamEntry(c, n, e)
		found = true
		return false
	})
	return found
}

// --- XGROUP -------------------------------------------------------------------------

const errXGroupNoKey = "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically."

// xgroupPrelude is xgroupCommand's common part for the subcommands with a
// key and a group: the options of CREATE and SETID, the key (created by
// CREATE MKSTREAM later), the group. ok false after replying.
type xgroupArgs struct {
	s           *keyspace.Stream
	e           *keyspace.Entry
	g           *keyspace.StreamCG
	mkstream    bool
	entriesRead int64
}

func xgroupPrelude(c *Client, args [][]byte, sub string) (xgroupArgs, bool) {
	a := xgroupArgs{entriesRead: -1}
	create, setid := sub == "create", sub == "setid"
	for i := 5; i < len(args); {
		switch {
		case create && eqFold(args[i], "mkstream"):
			a.mkstream = true
			i++
		case (create || setid) && eqFold(args[i], "entriesread") && i+1 < len(args):
			v, ok := parseInt(args[i+1])
			if !ok {
				c.w.Error(ErrNotInteger)
				return a, false
			}
			if v < 0 && v != -1 {
				c.w.Error("ERR value for ENTRIESREAD must be positive or -1")
				return a, false
			}
			a.entriesRead = v
			i += 2
		default:
			c.w.Error(errSubcommandSyntax(args[1], "XGROUP"))
			return a, false
		}
	}
	s, e, ok := lookupWrite[*keyspace.Stream](c, args[2])
	if !ok {
		return a, false
	}
	a.s, a.e = s, e
	if !a.mkstream {
		if s == nil {
			c.w.Error(errXGroupNoKey)
			return a, false
		}
		a.g = s.Group(args[3])
		if a.g == nil && (setid || sub == "createconsumer" || sub == "delconsumer") {
			c.w.Error("NOGROUP No such consumer group '" + string(args[3]) + "' for key name '" + string(args[2]) + "'")
			return a, false
		}
	} else if s != nil {
		a.g = s.Group(args[3])
	}
	return a, true
}

// mutableStream is DB.Mutable for a stream entry.
func (c *Client) mutableStream(key []byte, e *keyspace.Entry) *keyspace.Stream {
	return c.selectedDB().Mutable(key, e).(*keyspace.Stream)
}

func cmdXGroupCreate(c *Client, args [][]byte) {
	if len(args) > 8 {
		c.w.Error(errSubcommandSyntax(args[1], "XGROUP"))
		return
	}
	a, ok := xgroupPrelude(c, args, "create")
	if !ok {
		return
	}
	var id keyspace.StreamID
	if string(args[4]) == "$" {
		if a.s != nil {
			id = a.s.LastID()
		}
	} else if id, ok = streamIDOrReply(c, args[4], 0, true); !ok {
		return
	}
	key := args[2]
	var s *keyspace.Stream
	if a.s == nil {
		s = keyspace.NewStream()
		c.selectedDB().Set(key, s, c.srv.nowMs)
		c.notify(configs.NotifyNew, "new", key)
		c.touch(key)
	} else {
		if a.g != nil {
			c.w.Error("BUSYGROUP Consumer Group name already exists")
			return
		}
		s = c.mutableStream(key, a.e)
	}
	if s.CreateGroup(string(args[3]), id, a.entriesRead) == nil {
		c.w.Error("BUSYGROUP Consumer Group name already exists")
		return
	}
	c.w.OK()
	c.srv.ks.Dirty++
	c.notify(configs.NotifyStream, "xgroup-create", key)
}

func cmdXGroupSetID(c *Client, args [][]byte) {
	if len(args) != 5 && len(args) != 7 {
		c.w.Error(errSubcommandSyntax(args[1], "XGROUP"))
		return
	}
	a, ok := xgroupPrelude(c, args, "setid")
	if !ok {
		return
	}
	var id keyspace.StreamID
	if string(args[4]) == "$" {
		id = a.s.LastID()
	} else if id, ok = streamIDOrReply(c, args[4], 0, false); !ok {
		return
	}
	key := args[2]
	s := c.mutableStream(key, a.e)
	g := s.Group(args[3])
	g.LastID = id
	g.EntriesRead = a.entriesRead
	c.w.OK()
	c.srv.ks.Dirty++
	c.notify(configs.NotifyStream, "xgroup-setid", key)
}

func cmdXGroupDestroy(c *Client, args [][]byte) {
	a, ok := xgroupPrelude(c, args, "destroy")
	if !ok {
		return
	}
	if a.g == nil {
		c.w.Int(0)
		return
	}
	key := args[2]
	c.mutableStream(key, a.e).DestroyGroup(args[3])
	c.w.Int(1)
	c.srv.ks.Dirty++
	c.notify(configs.NotifyStream, "xgroup-destroy", key)
	// Wake the XREADGROUP clients of the group, with -NOGROUP.
	c.srv.signalKeyAsReady(c.db, key)
}

func cmdXGroupCreateConsumer(c *Client, args [][]byte) {
	a, ok := xgroupPrelude(c, args, "createconsumer")
	if !ok {
		return
	}
	key := args[2]
	if a.g.Consumer(args[4]) != nil {
		c.w.Int(0)
		return
	}
	g := c.mutableStream(key, a.e).Group(args[3])
	g.CreateConsumer(string(args[4]), c.srv.nowMs)
	c.srv.ks.Dirty++
	c.notify(configs.NotifyStream, "xgroup-createconsumer", key)
	c.w.Int(1)
}

func cmdXGroupDelConsumer(c *Client, args [][]byte) {
	a, ok := xgroupPrelude(c, args, "delconsumer")
	if !ok {
		return
	}
	key := args[2]
	if a.g.Consumer(args[4]) == nil {
		c.w.Int(0)
		return
	}
	g := c.mutableStream(key, a.e).Group(args[3])
	pending := g.DeleteConsumer(g.Consumer(args[4]))
	c.srv.ks.Dirty++
	c.notify(configs.NotifyStream, "xgroup-delconsumer", key)
	c.w.Int(int64(pending))
}

// --- XACK ---------------------------------------------------------------------------

// groupOf is the stream at key (read lookup) and its group name; s nil or
// g nil when missing; ok false after WRONGTYPE.
func groupOf(c *Client, key, name []byte) (*keyspace.Stream, *keyspace.Entry, *keyspace.StreamCG, bool) {
	e := c.lookupKeyRead(key)
	s, ok := valueAs[*keyspace.Stream](c, e)
	if !ok {
		return nil, nil, nil, false
	}
	var g *keyspace.StreamCG
	if s != nil {
		g = s.Group(name)
	}
	return s, e, g, true
}

func cmdXAck(c *Client, args [][]byte) {
	key := args[1]
	_, e, g, ok := groupOf(c, key, args[2])
	if !ok {
		return
	}
	if g == nil {
		c.w.Int(0)
		return
	}
	ids := make([]keyspace.StreamID, 0, len(args)-3)
	for _, a := range args[3:] {
		id, ok := streamIDOrReply(c, a, 0, true)
		if !ok {
			return
		}
		ids = append(ids, id)
	}
	acked := 0
	for _, id := range ids {
		if g.PELGet(id) == nil {
			continue
		}
		g = c.mutableStream(key, e).Group(args[2]) // a copy while a snapshot shares it
		nack := g.PELGet(id)
		g.PELDelete(id)
		nack.Consumer.PELDelete(id)
		acked++
		c.srv.ks.Dirty++
	}
	c.w.Int(int64(acked))
}

// --- XPENDING -----------------------------------------------------------------------

func errNoGroupKey(key, group []byte) string {
	return "NOGROUP No such key '" + string(key) + "' or consumer group '" + string(group) + "'"
}

func cmdXPending(c *Client, args [][]byte) {
	justInfo := len(args) == 3
	if len(args) != 3 && (len(args) < 6 || len(args) > 9) {
		c.w.Error(ErrSyntax)
		return
	}
	var start, end keyspace.StreamID
	var count, minIdle int64
	var consName []byte
	if len(args) >= 6 {
		si := 3
		if eqFold(args[3], "idle") {
			v, ok := parseInt(args[4])
			if !ok {
				c.w.Error(ErrNotInteger)
				return
			}
			minIdle = v
			if len(args) < 8 {
				c.w.Error(ErrSyntax)
				return
			}
			si += 2
		}
		v, ok := parseInt(args[si+2])
		if !ok {
			c.w.Error(ErrNotInteger)
			return
		}
		count = max(v, 0)
		var ex bool
		if start, ex, ok = intervalIDOrReply(c, args[si], 0); !ok {
			return
		}
		if ex {
			if start, ok = start.Incr(); !ok {
				c.w.Error(ErrStreamStartID)
				return
			}
		}
		if end, ex, ok = intervalIDOrReply(c, args[si+1], math.MaxUint64); !ok {
			return
		}
		if ex {
			if end, ok = end.Decr(); !ok {
				c.w.Error(ErrStreamEndID)
				return
			}
		}
		if si+3 < len(args) {
			consName = args[si+3]
		}
	}
	_, _, g, ok := groupOf(c, args[1], args[2])
	if !ok {
		return
	}
	if g == nil {
		c.w.Error(errNoGroupKey(args[1], args[2]))
		return
	}
	if justInfo {
		c.w.ArrayLen(4)
		c.w.Int(int64(g.PELLen()))
		first, last, any := g.PELFirstLast()
		if !any {
			c.w.Null()
			c.w.Null()
			c.w.NullArray()
			return
		}
		streamIDBulk(c, first)
		streamIDBulk(c, last)
		n := 0
		g.ConsumersRange(func(cons *keyspace.StreamConsumer) bool {
			if cons.PELLen() > 0 {
				n++
			}
			return true
		})
		c.w.ArrayLen(n)
		g.ConsumersRange(func(cons *keyspace.StreamConsumer) bool {
			if cons.PELLen() > 0 {
				c.w.ArrayLen(2)
				c.w.BulkString(cons.Name)
				c.w.BulkInt(int64(cons.PELLen()))
			}
			return true
		})
		return
	}
	rng := g.PELRange
	if consName != nil {
		cons := g.Consumer(consName)
		if cons == nil {
			c.w.ArrayLen(0)
			return
		}
		rng = cons.PELRange
	}
	now := c.srv.nowMs
	type row struct {
		id   keyspace.StreamID
		nack *keyspace.StreamNACK
	}
	var rows []row
	if count > 0 {
		rng(start, func(id keyspace.StreamID, n *keyspace.StreamNACK) bool {
			if id.Cmp(end) > 0 {
				return false
			}
			if minIdle != 0 && now-n.DeliveryTime < minIdle {
				return true
			}
			rows = append(rows, row{id, n})
			return int64(len(rows)) < count
		})
	}
	c.w.ArrayLen(len(rows))
	for _, r := range rows {
		c.w.ArrayLen(4)
		streamIDBulk(c, r.id)
		c.w.BulkString(r.nack.Consumer.Name)
		c.w.Int(max(now-r.nack.DeliveryTime, 0))
		c.w.Int(int64(r.nack.DeliveryCount))
	}
}

// --- XCLAIM / XAUTOCLAIM ------------------------------------------------------------

func cmdXClaim(c *Client, args [][]byte) {
	key, gname := args[1], args[2]
	s, e, g, ok := groupOf(c, key, args[2])
	if !ok {
		return
	}
	if g == nil {
		c.w.Error(errNoGroupKey(key, gname))
		return
	}
	minIdle, ok := parseInt(args[4])
	if !ok {
		c.w.Error("ERR Invalid min-idle-time argument for XCLAIM")
		return
	}
	minIdle = max(minIdle, 0)
	j := 5
	var ids []keyspace.StreamID
	for ; j < len(args); j++ {
		id, ok := parseStreamID(args[j], 0, true, nil)
		if !ok {
			break
		}
		ids = append(ids, id)
	}
	idArgs := args[5 : 5+len(ids)]
	now := c.srv.nowMs
	retry, delivery := int64(-1), int64(-1)
	force, justid := false, false
	var lastID keyspace.StreamID
	for ; j < len(args); j++ {
		more := len(args) - 1 - j
		o := args[j]
		switch {
		case eqFold(o, "force"):
			force = true
		case eqFold(o, "justid"):
			justid = true
		case eqFold(o, "idle") && more > 0:
			j++
			v, ok := parseInt(args[j])
			if !ok {
				c.w.Error("ERR Invalid IDLE option argument for XCLAIM")
				return
			}
			delivery = now - v
		case eqFold(o, "time") && more > 0:
			j++
			v, ok := parseInt(args[j])
			if !ok {
				c.w.Error("ERR Invalid TIME option argument for XCLAIM")
				return
			}
			delivery = v
		case eqFold(o, "retrycount") && more > 0:
			j++
			v, ok := parseInt(args[j])
			if !ok {
				c.w.Error("ERR Invalid RETRYCOUNT option argument for XCLAIM")
				return
			}
			retry = v
		case eqFold(o, "lastid") && more > 0:
			j++
			id, ok := streamIDOrReply(c, args[j], 0, true)
			if !ok {
				return
			}
			lastID = id
		default:
			c.w.Error("ERR Unrecognized XCLAIM option '" + string(o) + "'")
			return
		}
	}
	// From here on the command cannot fail: work on the mutable stream.
	s = c.mutableStream(key, e)
	g = s.Group(gname)
	propagateLast := false
	if lastID.Cmp(g.LastID) > 0 {
		g.LastID = lastID
		propagateLast = true
	}
	if delivery != -1 {
		if delivery < 0 || delivery > now {
			delivery = now
		}
	} else {
		delivery = now
	}
	var cons *keyspace.StreamConsumer
	mark := len(c.w.B)
	n := 0
	for k, id := range ids {
		nack := g.PELGet(id)
		if !s.Exists(id) {
			if nack != nil {
				propagateXClaimArg(c, key, gname, g, copyBytes(idArgs[k]), nack)
				propagateLast = false
				c.srv.ks.Dirty++
				g.PELDelete(id)
				nack.Consumer.PELDelete(id)
			}
			continue
		}
		if force && nack == nil {
			nack = &keyspace.StreamNACK{DeliveryTime: now, DeliveryCount: 1}
			g.PELAdd(id, nack)
		}
		if nack == nil {
			continue
		}
		if nack.Consumer != nil && minIdle != 0 && now-nack.DeliveryTime < minIdle {
			continue
		}
		if cons == nil {
			cons, _ = lookupOrCreateConsumer(c, key, g, args[3])
		}
		if nack.Consumer != cons && nack.Consumer != nil {
			nack.Consumer.PELDelete(id)
		}
		nack.DeliveryTime = delivery
		if retry >= 0 {
			nack.DeliveryCount = uint64(retry)
		} else if !justid {
			nack.DeliveryCount++
		}
		if nack.Consumer != cons {
			cons.PELAdd(id, nack)
			nack.Consumer = cons
		}
		if justid {
			streamIDBulk(c, id)
		} else if !writeEntryByID(c, s, id) {
			c.w.Null()
		}
		n++
		propagateXClaimArg(c, key, gname, g, copyBytes(idArgs[k]), nack)
		propagateLast = false
		c.srv.ks.Dirty++
	}
	if propagateLast {
		propagateGroupID(c, key, gname, g)
		c.srv.ks.Dirty++
	}
	c.w.B = insertLen(c.w.B, mark, '*', n)
	c.preventPropagation()
}

// insertLen inserts an aggregate header (kind, n) at b[mark:]: the
// deferred length of a reply written before its length was known.
func insertLen(b []byte, mark int, kind byte, n int) []byte {
	var hdr [24]byte
	h := append(hdr[:0], kind)
	h = strconv.AppendInt(h, int64(n), 10)
	h = append(h, '\r', '\n')
	b = append(b, h...)
	copy(b[mark+len(h):], b[mark:len(b)-len(h)])
	copy(b[mark:], h)
	return b
}

func cmdXAutoClaim(c *Client, args [][]byte) {
	key, gname := args[1], args[2]
	minIdle, ok := parseInt(args[4])
	if !ok {
		c.w.Error("ERR Invalid min-idle-time argument for XAUTOCLAIM")
		return
	}
	minIdle = max(minIdle, 0)
	start, ex, ok := intervalIDOrReply(c, args[5], 0)
	if !ok {
		return
	}
	if ex {
		if start, ok = start.Incr(); !ok {
			c.w.Error(ErrStreamStartID)
			return
		}
	}
	count := int64(100)
	justid := false
	const attemptsFactor = 10
	for j := 6; j < len(args); j++ {
		more := len(args) - 1 - j
		switch {
		case eqFold(args[j], "count") && more > 0:
			// LONG_MAX / max(sizeof(streamID), attempts_factor): the
			// deleted IDs' array must not overflow.
			v, ok := parseInt(args[j+1])
			if !ok || v < 1 || v > math.MaxInt64/max(16, attemptsFactor) {
				c.w.Error("ERR COUNT must be > 0")
				return
			}
			count = v
			j++
		case eqFold(args[j], "justid"):
			justid = true
		default:
			c.w.Error(ErrSyntax)
			return
		}
	}
	s, e, g, ok := groupOf(c, key, gname)
	if !ok {
		return
	}
	if g == nil {
		c.w.Error(errNoGroupKey(key, gname))
		return
	}
	s = c.mutableStream(key, e)
	g = s.Group(gname)
	attempts := count * attemptsFactor
	now := c.srv.nowMs
	var cons *keyspace.StreamConsumer
	var deleted []keyspace.StreamID
	c.w.ArrayLen(3)
	mark := len(c.w.B)
	n := 0
	cur := start
	next := func(from keyspace.StreamID) (keyspace.StreamID, *keyspace.StreamNACK, bool) {
		var id keyspace.StreamID
		var nack *keyspace.StreamNACK
		found := false
		g.PELRange(from, func(k keyspace.StreamID, v *keyspace.StreamNACK) bool {
			id, nack, found = k, v, true
			return false
		})
		return id, nack, found
	}
	exhausted := false
	for attempts > 0 && count > 0 {
		attempts--
		id, nack, found := next(cur)
		if !found {
			exhausted = true
			break
		}
		if nxt, ok := id.Incr(); ok {
			cur = nxt
		} else {
			exhausted = true // the last possible ID: nothing after it
		}
		if !s.Exists(id) {
			propagateXClaim(c, key, gname, g, id, nack)
			c.srv.ks.Dirty++
			g.PELDelete(id)
			nack.Consumer.PELDelete(id)
			deleted = append(deleted, id)
			count--
			if exhausted {
				break
			}
			continue
		}
		if minIdle != 0 && now-nack.DeliveryTime < minIdle {
			if exhausted {
				break
			}
			continue
		}
		if cons == nil {
			cons, _ = lookupOrCreateConsumer(c, key, g, args[3])
		}
		if nack.Consumer != cons {
			nack.Consumer.PELDelete(id)
		}
		nack.DeliveryTime = now
		if !justid {
			nack.DeliveryCount++
		}
		if nack.Consumer != cons {
			cons.PELAdd(id, nack)
			nack.Consumer = cons
		}
		if justid {
			streamIDBulk(c, id)
		} else if !writeEntryByID(c, s, id) {
			c.w.Null()
		}
		n++
		count--
		propagateXClaim(c, key, gname, g, id, nack)
		c.srv.ks.Dirty++
		if exhausted {
			break
		}
	}
	var cursor keyspace.StreamID
	if !exhausted {
		if id, _, found := next(cur); found {
			cursor = id
		}
	}
	c.w.B = insertLen(c.w.B, mark, '*', n)
	var idb [48]byte
	cb := cursor.AppendTo(idb[:0])
	hdr := append([]byte{'$'}, strconv.Itoa(len(cb))...)
	hdr = append(hdr, '\r', '\n')
	hdr = append(hdr, cb...)
	hdr = append(hdr, '\r', '\n')
	c.w.B = append(c.w.B, hdr...)
	copy(c.w.B[mark+len(hdr):], c.w.B[mark:len(c.w.B)-len(hdr)])
	copy(c.w.B[mark:], hdr)
	c.w.ArrayLen(len(deleted))
	for _, id := range deleted {
		streamIDBulk(c, id)
	}
	c.preventPropagation()
}

// --- XINFO --------------------------------------------------------------------------

// xinfoStream is the key lookup common to the XINFO subcommands.
func xinfoStream(c *Client, key []byte) *keyspace.Stream {
	s, ok := lookupRead[*keyspace.Stream](c, key)
	if !ok {
		return nil
	}
	if s == nil {
		c.w.Error(ErrNoSuchKey)
	}
	return s
}

func writeLag(c *Client, s *keyspace.Stream, g *keyspace.StreamCG) {
	if lag, ok := s.Lag(g); ok {
		c.w.Int(lag)
	} else {
		c.w.Null()
	}
}

func writeEntriesRead(c *Client, g *keyspace.StreamCG) {
	if g.EntriesRead != -1 {
		c.w.Int(g.EntriesRead)
	} else {
		c.w.Null()
	}
}

func cmdXInfoConsumers(c *Client, args [][]byte) {
	s := xinfoStream(c, args[2])
	if s == nil {
		return
	}
	g := s.Group(args[3])
	if g == nil {
		c.w.Error("NOGROUP No such consumer group '" + string(args[3]) + "' for key name '" + string(args[2]) + "'")
		return
	}
	now := c.srv.nowMs
	c.w.ArrayLen(g.NumConsumers())
	g.ConsumersRange(func(cons *keyspace.StreamConsumer) bool {
		c.w.MapLen(3)
		c.w.BulkString("name")
		c.w.BulkString(cons.Name)
		c.w.BulkString("pending")
		c.w.Int(int64(cons.PELLen()))
		c.w.BulkString("idle")
		c.w.Int(max(now-cons.SeenTime, 0))
		return true
	})
}

func cmdXInfoGroups(c *Client, args [][]byte) {
	s := xinfoStream(c, args[2])
	if s == nil {
		return
	}
	c.w.ArrayLen(s.NumGroups())
	s.Groups(func(g *keyspace.StreamCG) bool {
		c.w.MapLen(6)
		c.w.BulkString("name")
		c.w.BulkString(g.Name)
		c.w.BulkString("consumers")
		c.w.Int(int64(g.NumConsumers()))
		c.w.BulkString("pending")
		c.w.Int(int64(g.PELLen()))
		c.w.BulkString("last-delivered-id")
		streamIDBulk(c, g.LastID)
		c.w.BulkString("entries-read")
		writeEntriesRead(c, g)
		c.w.BulkString("lag")
		writeLag(c, s, g)
		return true
	})
}

func cmdXInfoStream(c *Client, args [][]byte) {
	s := xinfoStream(c, args[2])
	if s == nil {
		return
	}
	full := false
	count := int64(10)
	if rest := args[3:]; len(rest) > 0 {
		if !eqFold(rest[0], "full") {
			c.w.Error(errSubcommandSyntax(args[1], "XINFO"))
			return
		}
		full = true
		if len(rest) > 1 {
			if len(rest) != 3 || !eqFold(rest[1], "count") {
				c.w.Error(errSubcommandSyntax(args[1], "XINFO"))
				return
			}
			v, ok := parseInt(rest[2])
			if !ok {
				c.w.Error(ErrNotInteger)
				return
			}
			if v < 0 {
				v = 10
			}
			count = v
		}
	}
	if full {
		c.w.MapLen(9)
	} else {
		c.w.MapLen(10)
	}
	c.w.BulkString("length")
	c.w.Int(int64(s.Len()))
	c.w.BulkString("radix-tree-keys")
	c.w.Int(int64(s.NumNodes()))
	c.w.BulkString("radix-tree-nodes")
	c.w.Int(int64(s.RaxNodes()))
	c.w.BulkString("last-generated-id")
	streamIDBulk(c, s.LastID())
	c.w.BulkString("max-deleted-entry-id")
	streamIDBulk(c, s.MaxDeletedID())
	c.w.BulkString("entries-added")
	c.w.Int(int64(s.EntriesAdded()))
	c.w.BulkString("recorded-first-entry-id")
	streamIDBulk(c, s.FirstID())
	if !full {
		c.w.BulkString("groups")
		c.w.Int(int64(s.NumGroups()))
		for _, rev := range []bool{false, true} {
			if rev {
				c.w.BulkString("last-entry")
			} else {
				c.w.BulkString("first-entry")
			}
			found := false
			s.Range(keyspace.StreamID{}, keyspace.MaxStreamID, rev, func(n *keyspace.StreamNode, e *keyspace.StreamEntry) bool {
				writeStreamEntry(c, n, e)
				found = true
				return false
			})
			if !found {
				c.w.Null()
			}
		}
		return
	}
	c.w.BulkString("entries")
	replyStreamRange(c, s, keyspace.StreamID{}, keyspace.MaxStreamID, count, false)
	c.w.BulkString("groups")
	c.w.ArrayLen(s.NumGroups())
	limit := func(n int) int {
		if count == 0 || int64(n) < count {
			return n
		}
		return int(count)
	}
	s.Groups(func(g *keyspace.StreamCG) bool {
		c.w.MapLen(7)
		c.w.BulkString("name")
		c.w.BulkString(g.Name)
		c.w.BulkString("last-delivered-id")
		streamIDBulk(c, g.LastID)
		c.w.BulkString("entries-read")
		writeEntriesRead(c, g)
		c.w.BulkString("lag")
		writeLag(c, s, g)
		c.w.BulkString("pel-count")
		c.w.Int(int64(g.PELLen()))
		c.w.BulkString("pending")
		n := limit(g.PELLen())
		c.w.ArrayLen(n)
		i := 0
		g.PELRange(keyspace.StreamID{}, func(id keyspace.StreamID, nack *keyspace.StreamNACK) bool {
			if i >= n {
				return false
			}
			i++
			c.w.ArrayLen(4)
			streamIDBulk(c, id)
			c.w.BulkString(nack.Consumer.Name)
			c.w.Int(nack.DeliveryTime)
			c.w.Int(int64(nack.DeliveryCount))
			return true
		})
		c.w.BulkString("consumers")
		c.w.ArrayLen(g.NumConsumers())
		g.ConsumersRange(func(cons *keyspace.StreamConsumer) bool {
			c.w.MapLen(4)
			c.w.BulkString("name")
			c.w.BulkString(cons.Name)
			c.w.BulkString("seen-time")
			c.w.Int(cons.SeenTime)
			c.w.BulkString("pel-count")
			c.w.Int(int64(cons.PELLen()))
			c.w.BulkString("pending")
			n := limit(cons.PELLen())
			c.w.ArrayLen(n)
			i := 0
			cons.PELRange(keyspace.StreamID{}, func(id keyspace.StreamID, nack *keyspace.StreamNACK) bool {
				if i >= n {
					return false
				}
				i++
				c.w.ArrayLen(3)
				streamIDBulk(c, id)
				c.w.Int(nack.DeliveryTime)
				c.w.Int(int64(nack.DeliveryCount))
				return true
			})
			return true
		})
		return true
	})
}
