package server

import (
	"bytes"
	"slices"
	"strconv"

	"github.com/vigil-kv/vigil/configs"
	"github.com/vigil-kv/vigil/server/keyspace"
)

// List commands, as Redis 7.0.15's t_list.c (and blocked.c's
// serveClientsBlockedOnListKey for the blocking ones). Values are
// *keyspace.List; a write changes one only through DB.Mutable. The list
// copies the bytes it stores (pushes, LSET, LINSERT take the arguments as
// they are); Index returns views valid until the list changes, pops bytes
// the caller owns.

func init() {
	w, r := FlagWrite, FlagReadonly
	d, f := FlagDenyOOM, FlagFast
	ns, b := FlagNoScript, FlagBlocking
	rs := func(acl ...string) []string { return acl }
	register(
		&Command{Name: "lpush", Arity: -3, Flags: w | d | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: rs("write", "list", "fast"), Handler: cmdLPush},
		&Command{Name: "rpush", Arity: -3, Flags: w | d | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: rs("write", "list", "fast"), Handler: cmdRPush},
		&Command{Name: "lpushx", Arity: -3, Flags: w | d | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: rs("write", "list", "fast"), Handler: cmdLPushX},
		&Command{Name: "rpushx", Arity: -3, Flags: w | d | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: rs("write", "list", "fast"), Handler: cmdRPushX},
		&Command{Name: "lpop", Arity: -2, Flags: w | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: rs("write", "list", "fast"), Handler: cmdLPop},
		&Command{Name: "rpop", Arity: -2, Flags: w | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: rs("write", "list", "fast"), Handler: cmdRPop},
		&Command{Name: "lrange", Arity: 4, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, ACL: rs("read", "list", "slow"), Handler: cmdLRange},
		&Command{Name: "lindex", Arity: 3, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, ACL: rs("read", "list", "slow"), Handler: cmdLIndex},
		&Command{Name: "lset", Arity: 4, Flags: w | d, FirstKey: 1, LastKey: 1, Step: 1, ACL: rs("write", "list", "slow"), Handler: cmdLSet},
		&Command{Name: "linsert", Arity: 5, Flags: w | d, FirstKey: 1, LastKey: 1, Step: 1, ACL: rs("write", "list", "slow"), Handler: cmdLInsert},
		&Command{Name: "llen", Arity: 2, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: rs("read", "list", "fast"), Handler: cmdLLen},
		&Command{Name: "lrem", Arity: 4, Flags: w, FirstKey: 1, LastKey: 1, Step: 1, ACL: rs("write", "list", "slow"), Handler: cmdLRem},
		&Command{Name: "ltrim", Arity: 4, Flags: w, FirstKey: 1, LastKey: 1, Step: 1, ACL: rs("write", "list", "slow"), Handler: cmdLTrim},
		&Command{Name: "lpos", Arity: -3, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, ACL: rs("read", "list", "slow"), Handler: cmdLPos},
		&Command{Name: "lmove", Arity: 5, Flags: w | d, FirstKey: 1, LastKey: 2, Step: 1, ACL: rs("write", "list", "slow"), Handler: cmdLMove},
		&Command{Name: "rpoplpush", Arity: 3, Flags: w | d, FirstKey: 1, LastKey: 2, Step: 1, ACL: rs("write", "list", "slow"), Handler: cmdRPopLPush},
		&Command{Name: "lmpop", Arity: -4, Flags: w, ACL: rs("write", "list", "slow"), Handler: cmdLMPop},
		&Command{Name: "blpop", Arity: -3, Flags: w | ns | b, FirstKey: 1, LastKey: -2, Step: 1, ACL: rs("write", "list", "slow", "blocking"), Handler: cmdBLPop},
		&Command{Name: "brpop", Arity: -3, Flags: w | ns | b, FirstKey: 1, LastKey: -2, Step: 1, ACL: rs("write", "list", "slow", "blocking"), Handler: cmdBRPop},
		&Command{Name: "blmove", Arity: 6, Flags: w | d | ns | b, FirstKey: 1, LastKey: 2, Step: 1, ACL: rs("write", "list", "slow", "blocking"), Handler: cmdBLMove},
		&Command{Name: "brpoplpush", Arity: 4, Flags: w | d | ns | b, FirstKey: 1, LastKey: 2, Step: 1, ACL: rs("write", "list", "slow", "blocking"), Handler: cmdBRPopLPush},
		&Command{Name: "blmpop", Arity: -5, Flags: w | b, ACL: rs("write", "list", "slow", "blocking"), Handler: cmdBLMPop},
	)
}

// Redis 7.0's list error replies.
const (
	ErrPositive     = "ERR value is out of range, must be positive"
	ErrIndexRange   = "ERR index out of range"
	ErrLPosRankZero = "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list"
	ErrLPosCount    = "ERR COUNT can't be negative"
	ErrLPosMaxlen   = "ERR MAXLEN can't be negative"
	ErrNumkeysPos   = "ERR numkeys should be greater than 0"
	ErrCountPos     = "ERR count should be greater than 0"
)

const (
	listHead = 0 // LIST_HEAD: LEFT
	listTail = 1 // LIST_TAIL: RIGHT
)

var (
	wordLPop      = []byte("LPOP")
	wordRPop      = []byte("RPOP")
	wordLMove     = []byte("LMOVE")
	wordRPopLPush = []byte("RPOPLPUSH")
	wordLeft      = []byte("left")
	wordRight     = []byte("right")
)

// mutableList is the list of e (key's entry) for an in-place change.
func (c *Client) mutableList(key []byte, e *keyspace.Entry) *keyspace.List {
	l := c.selectedDB().Mutable(key, e).(*keyspace.List)
	l.SetFill(c.srv.ks.Encodings.ListMaxListpackSize)
	l.SetPackedThreshold(c.srv.dbg.packedThreshold)
	return l
}

// listWalked leaves on elements i..j of the list at key (entry e) the
// compression the reading iterator of Redis's command leaves
// (keyspace.List.Walk): the value is made the client's own (DB.Mutable)
// only when that changes a node.
func (c *Client) listWalked(key []byte, e *keyspace.Entry, l *keyspace.List, i, j int) {
	if l.CompressDepth() != 0 && l.WalkChanges(i, j) {
		c.selectedDB().Mutable(key, e).(*keyspace.List).Walk(i, j)
	}
}

// newListKey is createQuicklistObject + quicklistSetOptions (the list
// keeps list-compress-depth as it is now) + dbAdd (the "new" event).
func (c *Client) newListKey(key []byte) (*keyspace.Entry, *keyspace.List) {
	l := keyspace.NewList(c.srv.ks.Encodings.ListMaxListpackSize)
	l.SetCompressDepth(c.srv.ks.Encodings.ListCompressDepth)
	l.SetPackedThreshold(c.srv.dbg.packedThreshold)
	e, v := c.selectedDB().SetNew(key, l, c.srv.nowMs)
	c.notify(configs.NotifyNew, "new", key)
	return e, v.(*keyspace.List)
}

// listPosition is getListPositionFromObjectOrReply: LEFT or RIGHT.
func listPosition(b []byte) (int, bool) {
	switch {
	case bytes.EqualFold(b, []byte("left")):
		return listHead, true
	case bytes.EqualFold(b, []byte("right")):
		return listTail, true
	}
	return 0, false
}

// --- push ---------------------------------------------------------------------

// pushGeneric is pushGenericCommand; xx is LPUSHX/RPUSHX.
func (c *Client) pushGeneric(args [][]byte, where int, xx bool) {
	key := args[1]
	l, e, ok := lookupWrite[*keyspace.List](c, key)
	if !ok {
		return
	}
	if e != nil {
		l = c.mutableList(key, e)
	} else {
		if xx {
			c.w.Int(0)
			return
		}
		_, l = c.newListKey(key)
	}
	for _, a := range args[2:] {
		if where == listHead {
			l.PushFront(a)
		} else {
			l.PushBack(a)
		}
	}
	c.w.Int(int64(l.Len()))
	c.touch(key)
	if where == listHead {
		c.notify(configs.NotifyList, "lpush", key)
	} else {
		c.notify(configs.NotifyList, "rpush", key)
	}
	c.srv.ks.Dirty += int64(len(args) - 2)
}

func cmdLPush(c *Client, args [][]byte)  { c.pushGeneric(args, listHead, false) }
func cmdRPush(c *Client, args [][]byte)  { c.pushGeneric(args, listTail, false) }
func cmdLPushX(c *Client, args [][]byte) { c.pushGeneric(args, listHead, true) }
func cmdRPushX(c *Client, args [][]byte) { c.pushGeneric(args, listTail, true) }

// --- pop ----------------------------------------------------------------------

// listElementsRemoved is listElementsRemoved: the pop event, the key
// deleted when emptied, WATCH, dirty. It reports whether the key was
// deleted.
func (c *Client) listElementsRemoved(key []byte, where int, l *keyspace.List, count int) bool {
	if where == listHead {
		c.notify(configs.NotifyList, "lpop", key)
	} else {
		c.notify(configs.NotifyList, "rpop", key)
	}
	deleted := false
	if l.Len() == 0 {
		c.selectedDB().Delete(key)
		c.notify(configs.NotifyGeneric, "del", key)
		deleted = true
	}
	c.touch(key)
	c.srv.ks.Dirty += int64(count)
	return deleted
}

// popRange pops up to count elements from where and replies them as an
// array (addListRangeReply in pop order); it returns how many.
func (c *Client) popRange(l *keyspace.List, where int, count int64) int {
	n := l.Len()
	if count < int64(n) {
		n = int(count)
	}
	c.w.ArrayLen(n)
	for i := 0; i < n; i++ {
		if where == listHead {
			c.w.Bulk(l.PopFrontView())
		} else {
			c.w.Bulk(l.PopBackView())
		}
	}
	return n
}

// popGeneric is popGenericCommand (LPOP/RPOP key [count]).
func (c *Client) popGeneric(args [][]byte, where int) {
	if len(args) > 3 {
		c.w.Error(errWrongArgs(string(bytes.ToLower(args[0]))))
		return
	}
	hasCount := len(args) == 3
	var count int64
	if hasCount {
		v, ok := parseInt(args[2])
		if !ok || v < 0 {
			c.w.Error(ErrPositive)
			return
		}
		count = v
	}
	key := args[1]
	_, e, ok := lookupWrite[*keyspace.List](c, key)
	if !ok {
		return
	}
	if e == nil {
		if hasCount {
			c.w.NullArray()
		} else {
			c.w.Null()
		}
		return
	}
	if hasCount && count == 0 {
		c.w.ArrayLen(0)
		return
	}
	l := c.mutableList(key, e)
	if !hasCount {
		if where == listHead {
			c.w.Bulk(l.PopFrontView())
		} else {
			c.w.Bulk(l.PopBackView())
		}
		c.listElementsRemoved(key, where, l, 1)
		return
	}
	n := c.popRange(l, where, count)
	c.listElementsRemoved(key, where, l, n)
}

func cmdLPop(c *Client, args [][]byte) { c.popGeneric(args, listHead) }
func cmdRPop(c *Client, args [][]byte) { c.popGeneric(args, listTail) }

// --- reads ----------------------------------------------------------------------

func cmdLLen(c *Client, args [][]byte) {
	l, ok := lookupRead[*keyspace.List](c, args[1])
	if !ok {
		return
	}
	if l == nil {
		c.w.Int(0)
		return
	}
	c.w.Int(int64(l.Len()))
}

func cmdLIndex(c *Client, args [][]byte) {
	e := c.lookupKeyRead(args[1])
	l, ok := valueAs[*keyspace.List](c, e)
	if !ok {
		return
	}
	if l == nil {
		c.w.Null()
		return
	}
	idx, ok := parseInt(args[2])
	if !ok {
		c.w.Error(ErrNotInteger)
		return
	}
	n := int64(l.Len())
	if idx < 0 {
		idx += n
	}
	if idx < 0 || idx >= n {
		c.w.Null()
		return
	}
	c.w.Bulk(l.Index(int(idx)))
	c.listWalked(args[1], e, l, int(idx), int(idx)) // quicklistReleaseIterator
}

// listRange normalizes start..end (inclusive, negative from the end) over
// n elements as Redis's range commands; ok is false for an empty range.
func listRange(start, end, n int64) (int64, int64, bool) {
	if start < 0 {
		start += n
	}
	if end < 0 {
		end += n
	}
	if start < 0 {
		start = 0
	}
	if start > end || start >= n {
		return 0, 0, false
	}
	if end >= n {
		end = n - 1
	}
	return start, end, true
}

func cmdLRange(c *Client, args [][]byte) {
	start, ok1 := parseInt(args[2])
	end, ok2 := parseInt(args[3])
	if !ok1 || !ok2 {
		c.w.Error(ErrNotInteger)
		return
	}
	ent := c.lookupKeyRead(args[1])
	l, ok := valueAs[*keyspace.List](c, ent)
	if !ok {
		return
	}
	if l == nil {
		c.w.ArrayLen(0)
		return
	}
	s, e, ok := listRange(start, end, int64(l.Len()))
	if !ok {
		c.w.ArrayLen(0)
		return
	}
	c.w.ArrayLen(int(e - s + 1))
	l.Range(int(s), int(e), func(b []byte) bool {
		c.w.Bulk(b)
		return true
	})
	c.listWalked(args[1], ent, l, int(s), int(e))
}

// cmdLPos is lposCommand.
func cmdLPos(c *Client, args [][]byte) {
	ele := args[2]
	rank, count, maxlen := int64(1), int64(-1), int64(0)
	for j := 3; j < len(args); j++ {
		opt := args[j]
		more := len(args) - 1 - j
		switch {
		case bytes.EqualFold(opt, []byte("rank")) && more > 0:
			j++
			v, ok := parseInt(args[j])
			if !ok {
				c.w.Error(ErrNotInteger)
				return
			}
			if v == 0 {
				c.w.Error(ErrLPosRankZero)
				return
			}
			rank = v
		case bytes.EqualFold(opt, []byte("count")) && more > 0:
			j++
			v, ok := parseInt(args[j])
			if !ok || v < 0 {
				c.w.Error(ErrLPosCount)
				return
			}
			count = v
		case bytes.EqualFold(opt, []byte("maxlen")) && more > 0:
			j++
			v, ok := parseInt(args[j])
			if !ok || v < 0 {
				c.w.Error(ErrLPosMaxlen)
				return
			}
			maxlen = v
		default:
			c.w.Error(ErrSyntax)
			return
		}
	}
	fromTail := false
	if rank < 0 {
		// As Redis, -LONG_MIN wraps to itself: every match then ranks.
		rank, fromTail = -rank, true
	}
	e := c.lookupKeyRead(args[1])
	l, ok := valueAs[*keyspace.List](c, e)
	if !ok {
		return
	}
	if l == nil {
		if count != -1 {
			c.w.ArrayLen(0)
		} else {
			c.w.Null()
		}
		return
	}
	n := int64(l.Len())
	var found []int64
	var matches int64
	// last is the last index the iterator reached: the one it stopped at,
	// or (the maxlen test coming after listTypeNext) the one past MAXLEN.
	last := n - 1
	if maxlen != 0 && maxlen < n {
		last = maxlen
	}
	for index := int64(0); index < n && (maxlen == 0 || index < maxlen); index++ {
		pos := index
		if fromTail {
			pos = n - 1 - index
		}
		if !bytes.Equal(l.Index(int(pos)), ele) {
			continue
		}
		matches++
		if matches < rank {
			continue
		}
		found = append(found, pos)
		if count == -1 || (count != 0 && matches-rank+1 >= count) {
			last = index
			break
		}
	}
	if fromTail {
		c.listWalked(args[1], e, l, int(n-1-last), int(n-1))
	} else {
		c.listWalked(args[1], e, l, 0, int(last))
	}
	if count == -1 {
		if len(found) == 0 {
			c.w.Null()
		} else {
			c.w.Int(found[0])
		}
		return
	}
	c.w.ArrayLen(len(found))
	for _, p := range found {
		c.w.Int(p)
	}
}

// --- in-place writes ------------------------------------------------------------

func cmdLSet(c *Client, args [][]byte) {
	key := args[1]
	l, e, ok := lookupWrite[*keyspace.List](c, key)
	if !ok {
		return
	}
	if e == nil {
		c.w.Error(ErrNoSuchKey)
		return
	}
	idx, ok := parseInt(args[2])
	if !ok {
		c.w.Error(ErrNotInteger)
		return
	}
	n := int64(l.Len())
	if idx < 0 {
		idx += n
	}
	if idx < 0 || idx >= n {
		c.w.Error(ErrIndexRange)
		return
	}
	c.mutableList(key, e).Set(int(idx), args[3])
	c.w.OK()
	c.touch(key)
	c.notify(configs.NotifyList, "lset", key)
	c.srv.ks.Dirty++
}

func cmdLInsert(c *Client, args [][]byte) {
	var after bool
	switch {
	case bytes.EqualFold(args[2], []byte("after")):
		after = true
	case bytes.EqualFold(args[2], []byte("before")):
	default:
		c.w.Error(ErrSyntax)
		return
	}
	key := args[1]
	l, e, ok := lookupWrite[*keyspace.List](c, key)
	if !ok {
		return
	}
	if e == nil {
		c.w.Int(0)
		return
	}
	pos := -1
	for i := 0; i < l.Len(); i++ {
		if bytes.Equal(l.Index(i), args[3]) {
			pos = i
			break
		}
	}
	if pos < 0 {
		c.listWalked(key, e, l, 0, l.Len()-1)
		c.w.Int(-1)
		return
	}
	l = c.mutableList(key, e)
	l.Insert(pos, after, args[4])
	c.touch(key)
	c.notify(configs.NotifyList, "linsert", key)
	c.srv.ks.Dirty++
	c.w.Int(int64(l.Len()))
}

func cmdLRem(c *Client, args [][]byte) {
	toRemove, ok := parseInt(args[2])
	if !ok {
		c.w.Error(ErrNotInteger)
		return
	}
	key := args[1]
	l, e, ok := lookupWrite[*keyspace.List](c, key)
	if !ok {
		return
	}
	if e == nil {
		c.w.Int(0)
		return
	}
	ele := args[3]
	// Find the indexes to drop first (a read), then change the list only
	// if there are any.
	n := l.Len()
	var drop []int // ascending
	limit := toRemove
	if limit < 0 {
		limit = -limit
	}
	if toRemove >= 0 {
		for i := 0; i < n && (toRemove == 0 || int64(len(drop)) != limit); i++ {
			if bytes.Equal(l.Index(i), ele) {
				drop = append(drop, i)
			}
		}
	} else {
		// From the tail; -LONG_MIN wraps to itself: no limit, as Redis.
		for i := n - 1; i >= 0 && int64(len(drop)) != limit; i-- {
			if bytes.Equal(l.Index(i), ele) {
				drop = append(drop, i)
			}
		}
		slices.Reverse(drop)
	}
	removed := len(drop)
	if removed > 0 {
		l = c.mutableList(key, e)
		next := 0
		l.FilterFrom(func(i int, _ []byte) bool {
			if next < len(drop) && drop[next] == i {
				next++
				return false
			}
			return true
		}, toRemove < 0)
		c.touch(key)
		c.notify(configs.NotifyList, "lrem", key)
		if l.Len() == 0 {
			c.selectedDB().Delete(key)
			c.notify(configs.NotifyGeneric, "del", key)
		}
		c.srv.ks.Dirty += int64(removed)
	}
	c.w.Int(int64(removed))
}

func cmdLTrim(c *Client, args [][]byte) {
	start, ok1 := parseInt(args[2])
	end, ok2 := parseInt(args[3])
	if !ok1 || !ok2 {
		c.w.Error(ErrNotInteger)
		return
	}
	key := args[1]
	_, e, ok := lookupWrite[*keyspace.List](c, key)
	if !ok {
		return
	}
	if e == nil {
		c.w.OK()
		return
	}
	l := c.mutableList(key, e)
	n := int64(l.Len())
	s, en, ok := listRange(start, end, n)
	var removed int64
	if !ok {
		removed = n
		l.Trim(0, -1)
	} else {
		removed = n - (en - s + 1)
		l.Trim(int(s), int(en))
	}
	c.notify(configs.NotifyList, "ltrim", key)
	if l.Len() == 0 {
		c.selectedDB().Delete(key)
		c.notify(configs.NotifyGeneric, "del", key)
	}
	c.touch(key)
	c.srv.ks.Dirty += removed
	c.w.OK()
}

// --- LMOVE family -------------------------------------------------------------

// lmovePush is lmoveHandlePush: push value onto dst (created if missing),
// WATCH, the push event, and the reply.
func (c *Client) lmovePush(dst []byte, dl *keyspace.List, value []byte, whereto int) {
	if dl == nil {
		_, dl = c.newListKey(dst)
	}
	c.touch(dst)
	if whereto == listHead {
		dl.PushFront(value)
		c.notify(configs.NotifyList, "lpush", dst)
	} else {
		dl.PushBack(value)
		c.notify(configs.NotifyList, "rpush", dst)
	}
	c.w.Bulk(value)
}

// lmoveGeneric is lmoveGenericCommand without the source lookup: se is
// src's entry, a non-empty list. It reports false (after replying
// WRONGTYPE) when dst holds another type.
func (c *Client) lmoveGeneric(src, dst []byte, se *keyspace.Entry, wherefrom, whereto int) bool {
	_, de, ok := lookupWrite[*keyspace.List](c, dst)
	if !ok {
		return false
	}
	sl := c.mutableList(src, se)
	var value []byte
	if wherefrom == listHead {
		value = sl.PopFront()
	} else {
		value = sl.PopBack()
	}
	var dl *keyspace.List
	if de == se {
		dl = sl
	} else if de != nil {
		dl = c.mutableList(dst, de)
	}
	c.lmovePush(dst, dl, value, whereto)
	if wherefrom == listHead {
		c.notify(configs.NotifyList, "lpop", src)
	} else {
		c.notify(configs.NotifyList, "rpop", src)
	}
	if sl.Len() == 0 {
		c.selectedDB().Delete(src)
		c.notify(configs.NotifyGeneric, "del", src)
	}
	c.touch(src)
	c.srv.ks.Dirty++
	return true
}

func (c *Client) lmoveCommand(src, dst []byte, wherefrom, whereto int) {
	_, e, ok := lookupWrite[*keyspace.List](c, src)
	if !ok {
		return
	}
	if e == nil {
		c.w.Null()
		return
	}
	c.lmoveGeneric(src, dst, e, wherefrom, whereto)
}

func cmdLMove(c *Client, args [][]byte) {
	from, ok1 := listPosition(args[3])
	to, ok2 := listPosition(args[4])
	if !ok1 || !ok2 {
		c.w.Error(ErrSyntax)
		return
	}
	c.lmoveCommand(args[1], args[2], from, to)
}

func cmdRPopLPush(c *Client, args [][]byte) { c.lmoveCommand(args[1], args[2], listTail, listHead) }

// --- LMPOP ---------------------------------------------------------------------

// parseMPop is lmpopGenericCommand's parsing: the keys, where and count
// (default 1), from numkeys at numkeysIdx.
func parseMPop(c *Client, args [][]byte, numkeysIdx int) (keys [][]byte, where int, count int64, ok bool) {
	numkeys, isInt := parseInt(args[numkeysIdx])
	if !isInt || numkeys < 1 {
		c.w.Error(ErrNumkeysPos)
		return nil, 0, 0, false
	}
	if numkeys >= int64(len(args)-numkeysIdx-1) {
		c.w.Error(ErrSyntax)
		return nil, 0, 0, false
	}
	whereIdx := numkeysIdx + int(numkeys) + 1
	where, ok = listPosition(args[whereIdx])
	if !ok {
		c.w.Error(ErrSyntax)
		return nil, 0, 0, false
	}
	count = -1
	for j := whereIdx + 1; j < len(args); j++ {
		more := len(args) - 1 - j
		if count == -1 && bytes.EqualFold(args[j], []byte("count")) && more > 0 {
			j++
			v, isInt := parseInt(args[j])
			if !isInt || v < 1 {
				c.w.Error(ErrCountPos)
				return nil, 0, 0, false
			}
			count = v
			continue
		}
		c.w.Error(ErrSyntax)
		return nil, 0, 0, false
	}
	if count == -1 {
		count = 1
	}
	return args[numkeysIdx+1 : whereIdx], where, count, true
}

// popRangeWithKey is listPopRangeAndReplyWithKey plus the propagation as
// [LR]POP key count (the count actually popped).
func (c *Client) popRangeWithKey(key []byte, e *keyspace.Entry, where int, count int64, served bool) {
	l := c.mutableList(key, e)
	c.w.ArrayLen(2)
	c.w.Bulk(key)
	n := c.popRange(l, where, count)
	c.listElementsRemoved(key, where, l, n)
	if c.srv.propagating() {
		name := wordLPop
		if where == listTail {
			name = wordRPop
		}
		argv := [][]byte{name, copyBytes(key), []byte(strconv.Itoa(n))}
		if served {
			c.srv.alsoPropagate(c.db, TargetAll, argv...)
		} else {
			c.rewriteArgv(argv...)
		}
	}
}

func cmdLMPop(c *Client, args [][]byte) {
	keys, where, count, ok := parseMPop(c, args, 1)
	if !ok {
		return
	}
	for _, key := range keys {
		l, e, ok := lookupWrite[*keyspace.List](c, key)
		if !ok {
			return
		}
		if e == nil || l.Len() == 0 {
			continue
		}
		c.popRangeWithKey(key, e, where, count, false)
		return
	}
	c.w.NullArray()
}

// --- blocking ------------------------------------------------------------------

// cmdBLPop and cmdBRPop are blockingPopGenericCommand with count -1.
func cmdBLPop(c *Client, args [][]byte) {
	c.blockingPop(args, args[1:len(args)-1], listHead, args[len(args)-1], -1)
}
func cmdBRPop(c *Client, args [][]byte) {
	c.blockingPop(args, args[1:len(args)-1], listTail, args[len(args)-1], -1)
}

func cmdBLMPop(c *Client, args [][]byte) {
	keys, where, count, ok := parseMPop(c, args, 2)
	if !ok {
		return
	}
	c.blockingPop(args, keys, where, args[1], count)
}

// blockingPop is blockingPopGenericCommand: serve from the first non-empty
// key, else block (count -1: BLPOP/BRPOP's reply, else BLMPOP's).
func (c *Client) blockingPop(args, keys [][]byte, where int, timeout []byte, count int64) {
	s := c.srv
	deadline, ok := s.blockDeadline(c, timeout, true)
	if !ok {
		return
	}
	for _, key := range keys {
		l, e, ok := lookupWrite[*keyspace.List](c, key)
		if !ok {
			return
		}
		if e == nil || l.Len() == 0 {
			continue
		}
		c.popServe(key, e, where, count, false)
		return
	}
	serve := func(c *Client, key []byte) bool {
		e := c.lookupKeyWrite(key)
		if e == nil {
			return false
		}
		l, ok := e.Value().(*keyspace.List)
		if !ok || l.Len() == 0 {
			return false
		}
		c.popServe(key, e, where, count, true)
		return true
	}
	c.blockOnKeys(s.lookup(args[0]), copyArgs(keys), deadline, serve, nil)
}

// popServe pops for BLPOP/BRPOP/BLMPOP from key's non-empty list e and
// propagates the non-blocking form: rewritten when served at once, added
// as its own operation when serving a blocked client.
func (c *Client) popServe(key []byte, e *keyspace.Entry, where int, count int64, served bool) {
	if count != -1 {
		c.popRangeWithKey(key, e, where, count, served)
		return
	}
	l := c.mutableList(key, e)
	c.w.ArrayLen(2)
	c.w.Bulk(key)
	if where == listHead {
		c.w.Bulk(l.PopFrontView())
	} else {
		c.w.Bulk(l.PopBackView())
	}
	c.listElementsRemoved(key, where, l, 1)
	if c.srv.propagating() {
		name := wordLPop
		if where == listTail {
			name = wordRPop
		}
		if served {
			c.srv.alsoPropagate(c.db, TargetAll, name, copyBytes(key))
		} else {
			c.rewriteArgv(name, copyBytes(key))
		}
	}
}

// copyArgs copies arguments kept beyond the command (a blocked client's
// keys).
func copyArgs(args [][]byte) [][]byte {
	out := make([][]byte, len(args))
	for i, a := range args {
		out[i] = copyBytes(a)
	}
	return out
}

func cmdBLMove(c *Client, args [][]byte) {
	from, ok1 := listPosition(args[3])
	to, ok2 := listPosition(args[4])
	if !ok1 || !ok2 {
		c.w.Error(ErrSyntax)
		return
	}
	c.blmoveGeneric(args, from, to, args[5], false)
}

func cmdBRPopLPush(c *Client, args [][]byte) {
	c.blmoveGeneric(args, listTail, listHead, args[3], true)
}

// blmoveGeneric is blmoveGenericCommand. Served at once it propagates as
// LMOVE with the client's own arguments (or RPOPLPUSH); serving a blocked
// client it propagates LMOVE src dst left|right left|right (or RPOPLPUSH
// src dst), as serveClientBlockedOnList.
func (c *Client) blmoveGeneric(args [][]byte, from, to int, timeout []byte, isRPopLPush bool) {
	s := c.srv
	deadline, ok := s.blockDeadline(c, timeout, true)
	if !ok {
		return
	}
	src, dst := args[1], args[2]
	_, e, ok := lookupWrite[*keyspace.List](c, src)
	if !ok {
		return
	}
	if e != nil {
		if c.lmoveGeneric(src, dst, e, from, to) && s.propagating() {
			if isRPopLPush {
				c.rewriteArgv(wordRPopLPush, src, dst)
			} else {
				c.rewriteArgv(wordLMove, src, dst, args[3], args[4])
			}
		}
		return
	}
	if c.denyBlocking() {
		c.w.Null()
		return
	}
	dstKey := copyBytes(dst)
	serve := func(c *Client, key []byte) bool {
		e := c.lookupKeyWrite(key)
		if e == nil {
			return false
		}
		l, ok := e.Value().(*keyspace.List)
		if !ok || l.Len() == 0 {
			return false
		}
		if !c.lmoveGeneric(key, dstKey, e, from, to) {
			return true // WRONGTYPE destination: unblocked with the error
		}
		if c.srv.propagating() {
			k := copyBytes(key)
			if isRPopLPush {
				c.srv.alsoPropagate(c.db, TargetAll, wordRPopLPush, k, dstKey)
			} else {
				c.srv.alsoPropagate(c.db, TargetAll, wordLMove, k, dstKey, sideWord(from), sideWord(to))
			}
		}
		return true
	}
	c.blockOnKeys(s.lookup(args[0]), [][]byte{copyBytes(src)}, deadline, serve, nil)
}

func sideWord(where int) []byte {
	if where == listHead {
		return wordLeft
	}
	return wordRight
}
