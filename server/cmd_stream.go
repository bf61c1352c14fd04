package server

import (
	"bytes"
	"math"
	"time"

	"github.com/vigil-kv/vigil/configs"
	"github.com/vigil-kv/vigil/internal/redisutil"
	"github.com/vigil-kv/vigil/server/keyspace"
)

// Stream commands, as Redis 7.0.15's t_stream.c. Values are
// *keyspace.Stream (an empty stream is a key like any other: XDEL and
// XTRIM never delete it). A write changes one in place only on what
// DB.Mutable returns.

func init() {
	w, r := FlagWrite, FlagReadonly
	d, f, b := FlagDenyOOM, FlagFast, FlagBlocking
	acl := func(c ...string) []string { return c }
	register(
		&Command{Name: "xadd", Arity: -5, Flags: w | d | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: acl("write", "stream", "fast"), Handler: cmdXAdd},
		&Command{Name: "xlen", Arity: 2, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: acl("read", "stream", "fast"), Handler: cmdXLen},
		&Command{Name: "xrange", Arity: -4, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, ACL: acl("read", "stream", "slow"), Handler: func(c *Client, a [][]byte) { xrangeGeneric(c, a, false) }},
		&Command{Name: "xrevrange", Arity: -4, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, ACL: acl("read", "stream", "slow"), Handler: func(c *Client, a [][]byte) { xrangeGeneric(c, a, true) }},
		&Command{Name: "xdel", Arity: -3, Flags: w | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: acl("write", "stream", "fast"), Handler: cmdXDel},
		&Command{Name: "xtrim", Arity: -4, Flags: w, FirstKey: 1, LastKey: 1, Step: 1, ACL: acl("write", "stream", "slow"), Handler: cmdXTrim},
		&Command{Name: "xsetid", Arity: -3, Flags: w | d | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: acl("write", "stream", "fast"), Handler: cmdXSetID},
		&Command{Name: "xread", Arity: -4, Flags: r | b, FirstKey: 0, LastKey: 0, Step: 0, ACL: acl("read", "stream", "slow", "blocking"), Handler: cmdXRead},
		&Command{Name: "xreadgroup", Arity: -7, Flags: w | b, FirstKey: 0, LastKey: 0, Step: 0, ACL: acl("write", "stream", "slow", "blocking"), Handler: cmdXReadGroup},
		&Command{Name: "xack", Arity: -4, Flags: w | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: acl("write", "stream", "fast"), Handler: cmdXAck},
		&Command{Name: "xpending", Arity: -3, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, ACL: acl("read", "stream", "slow"), Handler: cmdXPending},
		&Command{Name: "xclaim", Arity: -6, Flags: w | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: acl("write", "stream", "fast"), Handler: cmdXClaim},
		&Command{Name: "xautoclaim", Arity: -6, Flags: w | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: acl("write", "stream", "fast"), Handler: cmdXAutoClaim},
		&Command{Name: "xgroup", Arity: -2, ACL: acl("slow"), Subs: []*Command{
			{Name: "create", Arity: -5, Flags: w | d, FirstKey: 2, LastKey: 2, Step: 1, ACL: acl("write", "stream", "slow"), Handler: cmdXGroupCreate},
			{Name: "setid", Arity: -5, Flags: w, FirstKey: 2, LastKey: 2, Step: 1, ACL: acl("write", "stream", "slow"), Handler: cmdXGroupSetID},
			{Name: "destroy", Arity: 4, Flags: w, FirstKey: 2, LastKey: 2, Step: 1, ACL: acl("write", "stream", "slow"), Handler: cmdXGroupDestroy},
			{Name: "createconsumer", Arity: 5, Flags: w | d, FirstKey: 2, LastKey: 2, Step: 1, ACL: acl("write", "stream", "slow"), Handler: cmdXGroupCreateConsumer},
			{Name: "delconsumer", Arity: 5, Flags: w, FirstKey: 2, LastKey: 2, Step: 1, ACL: acl("write", "stream", "slow"), Handler: cmdXGroupDelConsumer},
			{Name: "help", Arity: 2, Flags: FlagLoading | FlagStale, ACL: acl("stream", "slow"), Handler: helpHandler("XGROUP", xgroupHelp)},
		}},
		&Command{Name: "xinfo", Arity: -2, ACL: acl("slow"), Subs: []*Command{
			{Name: "consumers", Arity: 4, Flags: r, FirstKey: 2, LastKey: 2, Step: 1, ACL: acl("read", "stream", "slow"), Handler: cmdXInfoConsumers},
			{Name: "groups", Arity: 3, Flags: r, FirstKey: 2, LastKey: 2, Step: 1, ACL: acl("read", "stream", "slow"), Handler: cmdXInfoGroups},
			{Name: "stream", Arity: -3, Flags: r, FirstKey: 2, LastKey: 2, Step: 1, ACL: acl("read", "stream", "slow"), Handler: cmdXInfoStream},
			{Name: "help", Arity: 2, Flags: FlagLoading | FlagStale, ACL: acl("stream", "slow"), Handler: helpHandler("XINFO", xinfoHelp)},
		}},
	)
}

// Stream error replies (t_stream.c).
const (
	ErrStreamInvalidID     = "ERR Invalid stream ID specified as stream command argument"
	ErrStreamXAddZero      = "ERR The ID specified in XADD must be greater than 0-0"
	ErrStreamXAddSmall     = "ERR The ID specified in XADD is equal or smaller than the target stream top item"
	ErrStreamExhausted     = "ERR The stream has exhausted the last possible ID, unable to add more items"
	ErrStreamTooLarge      = "ERR Elements are too large to be stored"
	ErrStreamMaxLenNeg     = "ERR The MAXLEN argument must be >= 0."
	ErrStreamLimitNeg      = "ERR The LIMIT argument must be >= 0."
	ErrStreamTrimBoth      = "ERR syntax error, MAXLEN and MINID options at the same time are not compatible"
	ErrStreamLimitNoTrim   = "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy"
	ErrStreamXTrimNoStrat  = "ERR syntax error, XTRIM must be called with a trimming strategy"
	ErrStreamLimitNoApprox = "ERR syntax error, LIMIT cannot be used without the special ~ option"
	ErrStreamStartID       = "ERR invalid start ID for the interval"
	ErrStreamEndID         = "ERR invalid end ID for the interval"
	ErrStreamEntriesAdded  = "ERR entries_added must be positive"
	ErrStreamSetIDMaxDel   = "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id"
	ErrStreamSetIDTop      = "ERR The ID specified in XSETID is smaller than the target stream top item"
	ErrStreamSetIDAdded    = "ERR The entries_added specified in XSETID is smaller than the target stream length"
	ErrStreamGroupXRead    = "ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead."
	ErrStreamNoAckXRead    = "ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead."
	ErrStreamGtXRead       = "ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option."
)

// xreadBlockedDefaultCount is XREAD_BLOCKED_DEFAULT_COUNT.
const xreadBlockedDefaultCount = 1000

// --- IDs ------------------------------------------------------------------------

// string2ull is util.c's string2ull: string2ll for non-negative values,
// else strtoull (leading spaces, a sign, base 10, a negative value wrapped
// around), all of the string consumed.
func string2ull(s []byte) (uint64, bool) {
	if v, ok := redisutil.String2ll(s); ok {
		if v < 0 {
			return 0, false
		}
		return uint64(v), true
	}
	i := 0
	for i < len(s) && (s[i] == ' ' || (s[i] >= '\t' && s[i] <= '\r')) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	start := i
	var v uint64
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		d := uint64(s[i] - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, false // ERANGE
		}
		v = v*10 + d
	}
	if i == start || i != len(s) {
		return 0, false
	}
	if neg {
		v = -v
	}
	return v, true
}

// parseStreamID is streamGenericParseIDOrReply without the reply: "-",
// "+", "<ms>", "<ms>-<seq>" and, when seqGiven is not nil (XADD),
// "<ms>-*". strict refuses "-" and "+". The argument is read as a C
// string (up to its first NUL), at most 127 bytes.
func parseStreamID(arg []byte, missingSeq uint64, strict bool, seqGiven *bool) (keyspace.StreamID, bool) {
	if len(arg) > 127 {
		return keyspace.StreamID{}, false
	}
	if i := bytes.IndexByte(arg, 0); i >= 0 {
		arg = arg[:i]
	}
	if strict && len(arg) == 1 && (arg[0] == '-' || arg[0] == '+') {
		return keyspace.StreamID{}, false
	}
	if seqGiven != nil {
		*seqGiven = true
	}
	if len(arg) == 1 && arg[0] == '-' {
		return keyspace.StreamID{}, true
	}
	if len(arg) == 1 && arg[0] == '+' {
		return keyspace.MaxStreamID, true
	}
	msPart, seqPart, dot := bytes.Cut(arg, []byte{'-'})
	ms, ok := string2ull(msPart)
	if !ok {
		return keyspace.StreamID{}, false
	}
	seq := missingSeq
	if dot {
		if seqGiven != nil && len(seqPart) == 1 && seqPart[0] == '*' {
			seq = 0
			*seqGiven = false
		} else if seq, ok = string2ull(seqPart); !ok {
			return keyspace.StreamID{}, false
		}
	}
	return keyspace.StreamID{Ms: ms, Seq: seq}, true
}

// streamIDOrReply is streamParseIDOrReply / streamParseStrictIDOrReply.
func streamIDOrReply(c *Client, arg []byte, missingSeq uint64, strict bool) (keyspace.StreamID, bool) {
	id, ok := parseStreamID(arg, missingSeq, strict, nil)
	if !ok {
		c.w.Error(ErrStreamInvalidID)
	}
	return id, ok
}

// intervalIDOrReply is streamParseIntervalIDOrReply: "(" makes the bound
// exclusive (and strict).
func intervalIDOrReply(c *Client, arg []byte, missingSeq uint64) (keyspace.StreamID, bool, bool) {
	if len(arg) > 1 && arg[0] == '(' {
		id, ok := streamIDOrReply(c, arg[1:], missingSeq, true)
		return id, true, ok
	}
	id, ok := streamIDOrReply(c, arg, missingSeq, false)
	return id, false, ok
}

func streamIDBulk(c *Client, id keyspace.StreamID) {
	var buf [48]byte
	c.w.Bulk(id.AppendTo(buf[:0]))
}

// --- replies ----------------------------------------------------------------------

// writeStreamEntry writes one entry as [id, [field, value, ...]].
func writeStreamEntry(c *Client, n *keyspace.StreamNode, e *keyspace.StreamEntry) {
	c.w.ArrayLen(2)
	streamIDBulk(c, e.ID)
	nf := e.NumFields()
	c.w.ArrayLen(2 * nf)
	same := e.SameFields()
	for i := 0; i < nf; i++ {
		if same {
			c.w.BulkString(n.MasterFields[i])
		} else {
			c.w.Bulk(e.Field(i))
		}
		c.w.Bulk(e.Value(i))
	}
}

// replyStreamRange is streamReplyWithRange without a group: the entries
// from start to end (count 0: all), in order or reversed.
func replyStreamRange(c *Client, s *keyspace.Stream, start, end keyspace.StreamID, count int64, rev bool) {
	// The reply's length is known only at the end: count first (the
	// walk is what the reply costs anyway).
	var n int64
	s.Range(start, end, rev, func(_ *keyspace.StreamNode, _ *keyspace.StreamEntry) bool {
		n++
		return count == 0 || n < count
	})
	c.w.ArrayLen(int(n))
	var i int64
	s.Range(start, end, rev, func(nd *keyspace.StreamNode, e *keyspace.StreamEntry) bool {
		writeStreamEntry(c, nd, e)
		i++
		return i < n
	})
}

// --- XADD / XTRIM -----------------------------------------------------------------

// streamAddTrimArgs is streamAddTrimArgs.
type streamAddTrimArgs struct {
	trim       keyspace.StreamTrim
	trimArgIdx int
	id         keyspace.StreamID
	idGiven    bool
	seqGiven   bool
	noMkStream bool
}

// parseAddOrTrimArgs is streamParseAddOrTrimArgsOrReply: the position of
// XADD's ID argument (or the end), or -1 after replying an error.
func parseAddOrTrimArgs(c *Client, args [][]byte, xadd bool) (streamAddTrimArgs, int) {
	var a streamAddTrimArgs
	limitGiven := false
	i := 2
	for ; i < len(args); i++ {
		more := len(args) - 1 - i
		opt := args[i]
		switch {
		case xadd && len(opt) == 1 && opt[0] == '*':
			return a.finish(c, xadd, limitGiven, i)
		case eqFold(opt, "maxlen") && more > 0, eqFold(opt, "minid") && more > 0:
			if a.trim.Strategy != keyspace.TrimNone {
				c.w.Error(ErrStreamTrimBoth)
				return a, -1
			}
			a.trim.Approx = false
			next := args[i+1]
			if more >= 2 && len(next) == 1 && next[0] == '~' {
				a.trim.Approx = true
				i++
			} else if more >= 2 && len(next) == 1 && next[0] == '=' {
				i++
			}
			if eqFold(opt, "maxlen") {
				v, ok := parseInt(args[i+1])
				if !ok {
					c.w.Error(ErrNotInteger)
					return a, -1
				}
				if v < 0 {
					c.w.Error(ErrStreamMaxLenNeg)
					return a, -1
				}
				a.trim.MaxLen = v
				a.trim.Strategy = keyspace.TrimMaxLen
			} else {
				id, ok := streamIDOrReply(c, args[i+1], 0, true)
				if !ok {
					return a, -1
				}
				a.trim.MinID = id
				a.trim.Strategy = keyspace.TrimMinID
			}
			i++
			a.trimArgIdx = i
		case eqFold(opt, "limit") && more > 0:
			v, ok := parseInt(args[i+1])
			if !ok {
				c.w.Error(ErrNotInteger)
				return a, -1
			}
			if v < 0 {
				c.w.Error(ErrStreamLimitNeg)
				return a, -1
			}
			a.trim.Limit = v
			limitGiven = true
			i++
		case xadd && eqFold(opt, "nomkstream"):
			a.noMkStream = true
		case xadd:
			id, ok := parseStreamID(opt, 0, true, &a.seqGiven)
			if !ok {
				c.w.Error(ErrStreamInvalidID)
				return a, -1
			}
			a.id, a.idGiven = id, true
			return a.finish(c, xadd, limitGiven, i)
		default:
			c.w.Error(ErrSyntax)
			return a, -1
		}
	}
	return a.finish(c, xadd, limitGiven, i)
}

func (a *streamAddTrimArgs) finish(c *Client, xadd, limitGiven bool, i int) (streamAddTrimArgs, int) {
	if a.trim.Limit != 0 && a.trim.Strategy == keyspace.TrimNone {
		c.w.Error(ErrStreamLimitNoTrim)
		return *a, -1
	}
	if !xadd && a.trim.Strategy == keyspace.TrimNone {
		c.w.Error(ErrStreamXTrimNoStrat)
		return *a, -1
	}
	if c.mustObey() {
		a.trim.Limit = 0
	} else if limitGiven {
		if !a.trim.Approx {
			c.w.Error(ErrStreamLimitNoApprox)
			return *a, -1
		}
	} else if a.trim.Approx {
		a.trim.Limit = 100 * int64(c.srv.ks.Encodings.StreamNodeMaxEntries)
		if a.trim.Limit <= 0 || a.trim.Limit > 10000 {
			a.trim.Limit = 10000
		}
	} else {
		a.trim.Limit = 0
	}
	return *a, i
}

// streamWrite is streamTypeLookupWriteOrCreate: the stream at key ready
// for an in-place change, created when missing (unless noCreate: a null
// reply). nil after replying.
func (c *Client) streamWrite(key []byte, noCreate bool) *keyspace.Stream {
	_, e, ok := lookupWrite[*keyspace.Stream](c, key)
	if !ok {
		return nil
	}
	db := c.selectedDB()
	if e == nil {
		if noCreate {
			c.w.Null()
			return nil
		}
		s := keyspace.NewStream()
		db.Set(key, s, c.srv.nowMs)
		c.notify(configs.NotifyNew, "new", key)
		return s
	}
	return db.Mutable(key, e).(*keyspace.Stream)
}

// rewriteTrimArgs is streamRewriteApproxSpecifier + streamRewriteTrimArgument:
// after an approximate (or LIMITed) trim, "~" becomes "=" and the
// threshold what the stream now holds, so replicas and the AOF trim
// exactly as this did.
func rewriteTrimArgs(argv [][]byte, s *keyspace.Stream, a *streamAddTrimArgs) {
	argv[a.trimArgIdx-1] = []byte("=")
	if a.trim.Strategy == keyspace.TrimMaxLen {
		argv[a.trimArgIdx] = []byte(formatInt(int64(s.Len())))
	} else {
		argv[a.trimArgIdx] = firstIDWithTombstones(s).AppendTo(nil)
	}
}

// firstIDWithTombstones is streamGetEdgeID(s, 1, 0): the first node's
// first entry, deleted or not (the max ID when empty).
func firstIDWithTombstones(s *keyspace.Stream) keyspace.StreamID {
	if nodes := s.Nodes(); len(nodes) > 0 {
		return nodes[0].FirstEntryID()
	}
	return keyspace.MaxStreamID
}

func formatInt(v int64) string {
	var buf [24]byte
	return string(appendInt(buf[:0], v))
}

func appendInt(b []byte, v int64) []byte {
	if v < 0 {
		b = append(b, '-')
		return appendUint(b, uint64(-v))
	}
	return appendUint(b, uint64(v))
}

func appendUint(b []byte, v uint64) []byte {
	var tmp [20]byte
	i := len(tmp)
	for {
		i--
		tmp[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			break
		}
	}
	return append(b, tmp[i:]...)
}

// cmdXAdd is xaddCommand.
func cmdXAdd(c *Client, args [][]byte) {
	a, idpos := parseAddOrTrimArgs(c, args, true)
	if idpos < 0 {
		return
	}
	fieldPos := idpos + 1
	if n := len(args) - fieldPos; n < 2 || n%2 == 1 {
		c.w.Error(errWrongArgs("xadd"))
		return
	}
	if a.idGiven && a.seqGiven && a.id.IsZero() {
		c.w.Error(ErrStreamXAddZero)
		return
	}
	key := args[1]
	s := c.streamWrite(key, a.noMkStream)
	if s == nil {
		return
	}
	if s.LastID() == keyspace.MaxStreamID {
		c.w.Error(ErrStreamExhausted)
		return
	}
	var use *keyspace.StreamID
	if a.idGiven {
		use = &a.id
	}
	id, err := s.Add(args[fieldPos:], use, a.seqGiven, c.srv.nowMs, c.srv.ks.Encodings)
	if err != nil {
		if err == keyspace.ErrStreamID {
			c.w.Error(ErrStreamXAddSmall)
		} else {
			c.w.Error(ErrStreamTooLarge)
		}
		return
	}
	streamIDBulk(c, id)
	c.touch(key)
	c.notify(configs.NotifyStream, "xadd", key)
	c.srv.ks.Dirty++
	var argv [][]byte
	if a.trim.Strategy != keyspace.TrimNone {
		if s.Trim(a.trim) > 0 {
			c.notify(configs.NotifyStream, "xtrim", key)
		}
		if a.trim.Approx {
			argv = append([][]byte(nil), args...)
			rewriteTrimArgs(argv, s, &a)
		}
	}
	if !a.idGiven || !a.seqGiven {
		if argv == nil {
			argv = append([][]byte(nil), args...)
		}
		argv[idpos] = id.AppendTo(nil)
	}
	if argv != nil {
		c.rewriteArgv(argv...)
	}
}

// cmdXTrim is xtrimCommand.
func cmdXTrim(c *Client, args [][]byte) {
	a, pos := parseAddOrTrimArgs(c, args, false)
	if pos < 0 {
		return
	}
	key := args[1]
	_, e, ok := lookupWrite[*keyspace.Stream](c, key)
	if !ok {
		return
	}
	if e == nil {
		c.w.Int(0)
		return
	}
	s := c.selectedDB().Mutable(key, e).(*keyspace.Stream)
	deleted := s.Trim(a.trim)
	if deleted > 0 {
		c.notify(configs.NotifyStream, "xtrim", key)
		if a.trim.Approx {
			argv := append([][]byte(nil), args...)
			rewriteTrimArgs(argv, s, &a)
			c.rewriteArgv(argv...)
		}
		c.touchNoReady(key)
		c.srv.ks.Dirty += deleted
	}
	c.w.Int(deleted)
}

// touchNoReady is signalModifiedKey without signalKeyAsReady, which Redis
// 7.0 calls for a stream only from XADD, dbAdd and XGROUP DESTROY: an XDEL,
// XTRIM or XSETID does not serve the clients blocked on the stream (it
// may move last_id past their ID with nothing to read).
func (c *Client) touchNoReady(key []byte) {
	b := &c.srv.blocking
	dk := dbKey{c.db, string(key)}
	_, was := b.readySet[dk]
	c.touch(key)
	if _, now := b.readySet[dk]; now && !was {
		delete(b.readySet, dk)
		b.ready = b.ready[:len(b.ready)-1]
	}
}

// --- XLEN / XRANGE / XDEL / XSETID ---------------------------------------------

func cmdXLen(c *Client, args [][]byte) {
	s, ok := lookupRead[*keyspace.Stream](c, args[1])
	if !ok {
		return
	}
	if s == nil {
		c.w.Int(0)
		return
	}
	c.w.Int(int64(s.Len()))
}

// xrangeGeneric is xrangeGenericCommand.
func xrangeGeneric(c *Client, args [][]byte, rev bool) {
	startArg, endArg := args[2], args[3]
	if rev {
		startArg, endArg = endArg, startArg
	}
	start, startEx, ok := intervalIDOrReply(c, startArg, 0)
	if !ok {
		return
	}
	if startEx {
		if start, ok = start.Incr(); !ok {
			c.w.Error(ErrStreamStartID)
			return
		}
	}
	end, endEx, ok := intervalIDOrReply(c, endArg, math.MaxUint64)
	if !ok {
		return
	}
	if endEx {
		if end, ok = end.Decr(); !ok {
			c.w.Error(ErrStreamEndID)
			return
		}
	}
	count := int64(-1)
	for j := 4; j < len(args); j++ {
		if eqFold(args[j], "count") && len(args)-j-1 >= 1 {
			v, ok := parseInt(args[j+1])
			if !ok {
				c.w.Error(ErrNotInteger)
				return
			}
			count = max(v, 0)
			j++
		} else {
			c.w.Error(ErrSyntax)
			return
		}
	}
	s, ok := lookupRead[*keyspace.Stream](c, args[1])
	if !ok {
		return
	}
	if s == nil {
		c.w.ArrayLen(0)
		return
	}
	if count == 0 {
		c.w.NullArray()
		return
	}
	replyStreamRange(c, s, start, end, max(count, 0), rev)
}

// cmdXDel is xdelCommand.
func cmdXDel(c *Client, args [][]byte) {
	key := args[1]
	_, e, ok := lookupWrite[*keyspace.Stream](c, key)
	if !ok {
		return
	}
	if e == nil {
		c.w.Int(0)
		return
	}
	ids := make([]keyspace.StreamID, 0, len(args)-2)
	for _, a := range args[2:] {
		id, ok := streamIDOrReply(c, a, 0, true)
		if !ok {
			return
		}
		ids = append(ids, id)
	}
	s := e.Value().(*keyspace.Stream)
	// Mutable only when something goes (a snapshot's copy is not free).
	any := false
	for _, id := range ids {
		if s.Exists(id) {
			any = true
			break
		}
	}
	deleted := 0
	if any {
		s = c.selectedDB().Mutable(key, e).(*keyspace.Stream)
		deleted = s.Delete(ids)
	}
	if deleted > 0 {
		c.touchNoReady(key)
		c.notify(configs.NotifyStream, "xdel", key)
		c.srv.ks.Dirty += int64(deleted)
	}
	c.w.Int(int64(deleted))
}

// cmdXSetID is xsetidCommand.
func cmdXSetID(c *Client, args [][]byte) {
	id, ok := streamIDOrReply(c, args[2], 0, true)
	if !ok {
		return
	}
	var maxDel keyspace.StreamID
	added := int64(-1)
	for i := 3; i < len(args); {
		more := len(args) - 1 - i
		switch {
		case eqFold(args[i], "entriesadded") && more > 0:
			v, ok := parseInt(args[i+1])
			if !ok {
				c.w.Error(ErrNotInteger)
				return
			}
			if v < 0 {
				c.w.Error(ErrStreamEntriesAdded)
				return
			}
			added = v
			i += 2
		case eqFold(args[i], "maxdeletedid") && more > 0:
			v, ok := streamIDOrReply(c, args[i+1], 0, true)
			if !ok {
				return
			}
			if id.Cmp(v) < 0 {
				c.w.Error(ErrStreamSetIDMaxDel)
				return
			}
			maxDel = v
			i += 2
		default:
			c.w.Error(ErrSyntax)
			return
		}
	}
	key := args[1]
	_, e, ok := lookupWrite[*keyspace.Stream](c, key)
	if !ok {
		return
	}
	if e == nil {
		c.w.Error(ErrNoSuchKey)
		return
	}
	s := e.Value().(*keyspace.Stream)
	if s.Len() > 0 {
		if id.Cmp(s.LastValidID()) < 0 {
			c.w.Error(ErrStreamSetIDTop)
			return
		}
		if added != -1 && s.Len() > uint64(added) {
			c.w.Error(ErrStreamSetIDAdded)
			return
		}
	}
	s = c.selectedDB().Mutable(key, e).(*keyspace.Stream)
	entriesAdded := s.EntriesAdded()
	if added != -1 {
		entriesAdded = uint64(added)
	}
	md := s.MaxDeletedID()
	if !maxDel.IsZero() {
		md = maxDel
	}
	s.SetMeta(id, s.FirstID(), md, entriesAdded)
	c.w.OK()
	c.touchNoReady(key)
	c.notify(configs.NotifyStream, "xsetid", key)
	c.srv.ks.Dirty++
}

// --- XREAD / XREADGROUP -----------------------------------------------------------

func cmdXRead(c *Client, args [][]byte)      { xreadGeneric(c, args, false) }
func cmdXReadGroup(c *Client, args [][]byte) { xreadGeneric(c, args, true) }

// xreadGeneric is xreadCommand, for XREAD and XREADGROUP.
func xreadGeneric(c *Client, args [][]byte, xreadgroup bool) {
	s := c.srv
	var count int64
	timeout := false
	var deadline time.Time
	streamsArg, nstreams := 0, 0
	var groupName, consName []byte
	noack := false
	for i := 1; i < len(args); i++ {
		more := len(args) - i - 1
		o := args[i]
		switch {
		case eqFold(o, "block") && more > 0:
			if c.inScript {
				c.w.Error("ERR " + string(args[0]) + " command is not allowed with BLOCK option from scripts")
				return
			}
			i++
			dl, ok := s.blockDeadline(c, args[i], false)
			if !ok {
				return
			}
			timeout, deadline = true, dl
		case eqFold(o, "count") && more > 0:
			i++
			v, ok := parseInt(args[i])
			if !ok {
				c.w.Error(ErrNotInteger)
				return
			}
			count = max(v, 0)
		case eqFold(o, "streams") && more > 0:
			streamsArg = i + 1
			nstreams = len(args) - streamsArg
			if nstreams%2 != 0 {
				// 7.0.15 names XREAD and '$' for XREADGROUP too.
				c.w.Error("ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.")
				return
			}
			nstreams /= 2
			i = len(args)
		case eqFold(o, "group") && more >= 2:
			if !xreadgroup {
				c.w.Error(ErrStreamGroupXRead)
				return
			}
			groupName, consName = args[i+1], args[i+2]
			i += 2
		case eqFold(o, "noack"):
			if !xreadgroup {
				c.w.Error(ErrStreamNoAckXRead)
				return
			}
			noack = true
		default:
			c.w.Error(ErrSyntax)
			return
		}
	}
	if streamsArg == 0 {
		c.w.Error(ErrSyntax)
		return
	}
	if xreadgroup && groupName == nil {
		c.w.Error("ERR Missing GROUP option for XREADGROUP")
		return
	}
	keys := args[streamsArg : streamsArg+nstreams]
	ids := make([]keyspace.StreamID, nstreams)
	for i, arg := range args[streamsArg+nstreams:] {
		st, ok := valueAs[*keyspace.Stream](c, c.lookupKeyRead(keys[i]))
		if !ok {
			return
		}
		if groupName != nil && (st == nil || st.Group(groupName) == nil) {
			c.w.Error("NOGROUP No such key '" + string(keys[i]) + "' or consumer group '" + string(groupName) + "' in XREADGROUP with GROUP option")
			return
		}
		if len(arg) == 1 && arg[0] == '$' {
			if xreadgroup {
				c.w.Error("ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set.")
				return
			}
			if st != nil {
				ids[i] = st.LastID()
			}
			continue
		}
		if len(arg) == 1 && arg[0] == '>' {
			if !xreadgroup {
				c.w.Error(ErrStreamGtXRead)
				return
			}
			ids[i] = keyspace.MaxStreamID
			continue
		}
		id, ok := streamIDOrReply(c, arg, 0, true)
		if !ok {
			return
		}
		ids[i] = id
	}
	// Serve synchronously what can be served. The reply's length is known
	// at the end: the parts are written first, the header inserted.
	mark := len(c.w.B)
	served := 0
	for i, key := range keys {
		e := c.lookupKeyRead(key)
		if e == nil {
			continue
		}
		st := e.Value().(*keyspace.Stream)
		gt := ids[i]
		sync, history := false, false
		var g *keyspace.StreamCG
		var cons *keyspace.StreamConsumer
		if groupName != nil {
			st = c.mutableStream(key, e)
			g = st.Group(groupName)
			if gt != keyspace.MaxStreamID {
				sync, history = true, true
			} else if st.Len() > 0 && st.LastValidID().Cmp(g.LastID) > 0 {
				sync = true
				gt = g.LastID
			}
		} else if st.Len() > 0 && st.LastValidID().Cmp(gt) > 0 {
			sync = true
		}
		if !sync {
			continue
		}
		if g != nil {
			// 7.0.15 looks the consumer up (or creates it) only to serve,
			// and propagates its creation only with NOACK (otherwise the
			// XCLAIMs create it on the replica).
			var created bool
			if cons, created = lookupOrCreateConsumer(c, key, g, consName); created && noack {
				propagateConsumerCreation(c, key, groupName, cons.Name)
			}
		}
		served++
		start, _ := gt.Incr()
		if c.w.Proto == 2 {
			c.w.ArrayLen(2)
		}
		c.w.Bulk(key)
		switch {
		case g == nil:
			replyStreamRange(c, st, start, keyspace.MaxStreamID, count, false)
		case history:
			replyConsumerHistory(c, st, cons, start, count)
		default:
			replyGroupRange(c, key, groupName, st, g, cons, start, count, noack)
		}
		if g != nil {
			s.ks.Dirty++
		}
	}
	if xreadgroup {
		c.preventPropagation()
	}
	if served > 0 {
		kind := byte('*')
		if c.w.Proto != 2 {
			kind = '%'
		}
		c.w.B = insertLen(c.w.B, mark, kind, served)
		return
	}
	if !timeout {
		c.w.NullArray()
		return
	}
	if count == 0 {
		count = xreadBlockedDefaultCount
	}
	gts := map[string]keyspace.StreamID{}
	for i, k := range keys {
		if _, dup := gts[string(k)]; !dup {
			gts[string(k)] = ids[i] // blockForKeys keeps a key's first ID
		}
	}
	if groupName != nil {
		groupName, consName = copyBytes(groupName), copyBytes(consName)
	}
	serve := func(c *Client, key []byte) bool {
		e := c.lookupKeyWrite(key)
		var st *keyspace.Stream
		if e != nil {
			st, _ = e.Value().(*keyspace.Stream)
		}
		if st == nil {
			if groupName != nil {
				// 7.0.15's signalDeletedKeyAsReady: a group reader
				// learns that its stream is gone (deleted or replaced).
				c.w.Error("UNBLOCKED the stream key no longer exists")
				return true
			}
			return false
		}
		gt := gts[string(key)]
		var g *keyspace.StreamCG
		if groupName != nil {
			if g = st.Group(groupName); g == nil {
				c.w.Error("NOGROUP the consumer group this client was blocked on no longer exists")
				return true
			}
			gt = g.LastID
		}
		if st.LastID().Cmp(gt) <= 0 {
			return false
		}
		start, _ := gt.Incr()
		if c.w.Proto == 2 {
			c.w.ArrayLen(1)
			c.w.ArrayLen(2)
		} else {
			c.w.MapLen(1)
		}
		c.w.Bulk(key)
		if g == nil {
			replyStreamRange(c, st, start, keyspace.MaxStreamID, count, false)
			return true
		}
		st = c.mutableStream(key, e)
		g = st.Group(groupName)
		cons, created := lookupOrCreateConsumer(c, key, g, consName)
		if created && noack {
			propagateConsumerCreation(c, key, groupName, cons.Name)
		}
		replyGroupRange(c, key, groupName, st, g, cons, start, count, noack)
		c.preventPropagation()
		return true
	}
	c.blockOnKeys(s.lookup(args[0]), copyArgs(keys), deadline, serve, nil)
}
