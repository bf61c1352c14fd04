package server

import (
	"math"
	"math/rand/v2"
	"sort"
	"strconv"

	"github.com/vigil-kv/vigil/configs"
	"github.com/vigil-kv/vigil/server/keyspace"
)

// Set commands, as Redis 7.0.15's t_set.c: SADD, SREM, SMOVE, SISMEMBER,
// SMISMEMBER, SCARD, SPOP, SRANDMEMBER, SINTER (and SMEMBERS, which 7.0
// serves with sinterCommand), SINTERCARD, SINTERSTORE, SUNION,
// SUNIONSTORE, SDIFF, SDIFFSTORE and SSCAN. Values are *keyspace.Set
// (intset or hashtable, converted as setTypeAdd does).

// Error replies of t_set.c (the shared ones are in errors.go).
const (
	ErrMustBePositive     = "ERR value is out of range, must be positive"
	ErrSRandCountRange    = "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"
	ErrNumkeysPositive    = "ERR numkeys should be greater than 0"
	ErrNumkeysTooMany     = "ERR Number of keys can't be greater than number of args"
	ErrLimitNegative      = "ERR LIMIT can't be negative"
	spopMoveStrategyMul   = 5 // SPOP_MOVE_STRATEGY_MUL
	srandSubStrategyMul   = 3 // SRANDMEMBER_SUB_STRATEGY_MUL
	setOpUnion, setOpDiff = 0, 1
)

func init() {
	w, r, f, d := FlagWrite, FlagReadonly, FlagFast, FlagDenyOOM
	acl := func(a ...string) []string { return a }
	register(
		&Command{Name: "sadd", Arity: -3, Flags: w | d | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: acl("write", "set", "fast"), Handler: cmdSAdd},
		&Command{Name: "srem", Arity: -3, Flags: w | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: acl("write", "set", "fast"), Handler: cmdSRem},
		&Command{Name: "smove", Arity: 4, Flags: w | f, FirstKey: 1, LastKey: 2, Step: 1, ACL: acl("write", "set", "fast"), Handler: cmdSMove},
		&Command{Name: "sismember", Arity: 3, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: acl("read", "set", "fast"), Handler: cmdSIsMember},
		&Command{Name: "smismember", Arity: -3, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: acl("read", "set", "fast"), Handler: cmdSMIsMember},
		&Command{Name: "scard", Arity: 2, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: acl("read", "set", "fast"), Handler: cmdSCard},
		&Command{Name: "spop", Arity: -2, Flags: w | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: acl("write", "set", "fast"), Handler: cmdSPop},
		&Command{Name: "srandmember", Arity: -2, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, ACL: acl("read", "set", "slow"), Handler: cmdSRandMember},
		&Command{Name: "smembers", Arity: 2, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, ACL: acl("read", "set", "slow"), Handler: cmdSInter},
		&Command{Name: "sinter", Arity: -2, Flags: r, FirstKey: 1, LastKey: -1, Step: 1, ACL: acl("read", "set", "slow"), Handler: cmdSInter},
		&Command{Name: "sintercard", Arity: -3, Flags: r | FlagMovableKeys, ACL: acl("read", "set", "slow"), Handler: cmdSInterCard},
		&Command{Name: "sinterstore", Arity: -3, Flags: w | d, FirstKey: 1, LastKey: -1, Step: 1, ACL: acl("write", "set", "slow"), Handler: cmdSInterStore},
		&Command{Name: "sunion", Arity: -2, Flags: r, FirstKey: 1, LastKey: -1, Step: 1, ACL: acl("read", "set", "slow"), Handler: cmdSUnion},
		&Command{Name: "sunionstore", Arity: -3, Flags: w | d, FirstKey: 1, LastKey: -1, Step: 1, ACL: acl("write", "set", "slow"), Handler: cmdSUnionStore},
		&Command{Name: "sdiff", Arity: -2, Flags: r, FirstKey: 1, LastKey: -1, Step: 1, ACL: acl("read", "set", "slow"), Handler: cmdSDiff},
		&Command{Name: "sdiffstore", Arity: -3, Flags: w | d, FirstKey: 1, LastKey: -1, Step: 1, ACL: acl("write", "set", "slow"), Handler: cmdSDiffStore},
		&Command{Name: "sscan", Arity: -3, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, ACL: acl("read", "set", "slow"), Handler: cmdSScan},
	)
}

var wordSRem = []byte("SREM")

// maxIntset is set-max-intset-entries.
func (c *Client) maxIntset() int { return c.srv.ks.Encodings.SetMaxIntsetEntries }

// writeMember replies one member (addReplyBulkLongLong or
// addReplyBulkCBuffer).
func (c *Client) writeMember(m keyspace.Member) {
	if m.IsInt {
		c.w.BulkInt(m.N)
		return
	}
	c.w.BulkString(m.S)
}

// memberArg is a member as a fresh argument for a propagated command.
func memberArg(m keyspace.Member) []byte {
	if m.IsInt {
		return strconv.AppendInt(nil, m.N, 10)
	}
	return []byte(m.S)
}

// storeSet is setKey(c, db, key, val, 0) for the *STORE commands: the
// destination is looked up for write (expiring it), replaced or added
// ("new"), loses its TTL, and WATCH sees it. s, just built, is handed over
// (DB.SetNew): the caller must not use it again.
func (c *Client) storeSet(key []byte, s *keyspace.Set) {
	exists := c.lookupKeyWrite(key) != nil
	c.selectedDB().SetNew(key, s, c.srv.nowMs)
	if !exists {
		c.notify(configs.NotifyNew, "new", key)
	}
	c.touch(key)
}

// --- SADD, SREM, SMOVE ------------------------------------------------------

func cmdSAdd(c *Client, args [][]byte) {
	key := args[1]
	s, e, ok := lookupWrite[*keyspace.Set](c, key)
	if !ok {
		return
	}
	db := c.selectedDB()
	if s == nil {
		_, v := db.SetNew(key, keyspace.NewSetFor(args[2]), c.srv.nowMs)
		s = v.(*keyspace.Set)
		c.notify(configs.NotifyNew, "new", key)
	} else {
		s = db.Mutable(key, e).(*keyspace.Set)
	}
	added := int64(0)
	limit := c.maxIntset()
	for _, m := range args[2:] {
		if s.Add(m, limit) {
			added++
		}
	}
	if added > 0 {
		c.touch(key)
		c.notify(configs.NotifySet, "sadd", key)
	}
	c.srv.ks.Dirty += added
	c.w.Int(added)
}

func cmdSRem(c *Client, args [][]byte) {
	key := args[1]
	_, e, ok := lookupWrite[*keyspace.Set](c, key)
	if !ok {
		return
	}
	if e == nil {
		c.w.Int(0)
		return
	}
	db := c.selectedDB()
	s := db.Mutable(key, e).(*keyspace.Set)
	deleted := int64(0)
	removed := false
	for _, m := range args[2:] {
		if s.Remove(m) {
			deleted++
			if s.Len() == 0 {
				db.Delete(key)
				removed = true
				break
			}
		}
	}
	if deleted > 0 {
		c.touch(key)
		c.notify(configs.NotifySet, "srem", key)
		if removed {
			c.notify(configs.NotifyGeneric, "del", key)
		}
		c.srv.ks.Dirty += deleted
	}
	c.w.Int(deleted)
}

func cmdSMove(c *Client, args [][]byte) {
	srcKey, dstKey, ele := args[1], args[2], args[3]
	se := c.lookupKeyWrite(srcKey)
	de := c.lookupKeyWrite(dstKey)
	if se == nil {
		c.w.Int(0)
		return
	}
	src, ok := valueAs[*keyspace.Set](c, se)
	if !ok {
		return
	}
	if _, ok := valueAs[*keyspace.Set](c, de); !ok {
		return
	}
	db := c.selectedDB()
	if se == de {
		if src.Contains(ele) {
			c.w.Int(1)
		} else {
			c.w.Int(0)
		}
		return
	}
	src = db.Mutable(srcKey, se).(*keyspace.Set)
	if !src.Remove(ele) {
		c.w.Int(0)
		return
	}
	c.notify(configs.NotifySet, "srem", srcKey)
	if src.Len() == 0 {
		db.Delete(srcKey)
		c.notify(configs.NotifyGeneric, "del", srcKey)
	}
	var dst *keyspace.Set
	if de == nil {
		_, v := db.SetNew(dstKey, keyspace.NewSetFor(ele), c.srv.nowMs)
		dst = v.(*keyspace.Set)
		c.notify(configs.NotifyNew, "new", dstKey)
	} else {
		dst = db.Mutable(dstKey, de).(*keyspace.Set)
	}
	c.touch(srcKey)
	c.srv.ks.Dirty++
	if dst.Add(ele, c.maxIntset()) {
		c.srv.ks.Dirty++
		c.touch(dstKey)
		c.notify(configs.NotifySet, "sadd", dstKey)
	}
	c.w.Int(1)
}

// --- SISMEMBER, SMISMEMBER, SCARD ---------------------------------------------

func cmdSIsMember(c *Client, args [][]byte) {
	s, ok := lookupRead[*keyspace.Set](c, args[1])
	if !ok {
		return
	}
	if s != nil && s.Contains(args[2]) {
		c.w.Int(1)
		return
	}
	c.w.Int(0)
}

func cmdSMIsMember(c *Client, args [][]byte) {
	s, ok := lookupRead[*keyspace.Set](c, args[1])
	if !ok {
		return
	}
	c.w.ArrayLen(len(args) - 2)
	for _, m := range args[2:] {
		if s != nil && s.Contains(m) {
			c.w.Int(1)
		} else {
			c.w.Int(0)
		}
	}
}

func cmdSCard(c *Client, args [][]byte) {
	s, ok := lookupRead[*keyspace.Set](c, args[1])
	if !ok {
		return
	}
	if s == nil {
		c.w.Int(0)
		return
	}
	c.w.Int(int64(s.Len()))
}

// --- SPOP, SRANDMEMBER ------------------------------------------------------------

// cmdSPop is spopCommand: one random member, propagated as `SREM key
// member`; with a count, spopWithCountCommand.
func cmdSPop(c *Client, args [][]byte) {
	if len(args) == 3 {
		c.spopWithCount(args)
		return
	}
	if len(args) > 3 {
		c.w.Error(ErrSyntax)
		return
	}
	key := args[1]
	_, e, ok := lookupWrite[*keyspace.Set](c, key)
	if !ok {
		return
	}
	if e == nil {
		c.w.Null()
		return
	}
	db := c.selectedDB()
	s := db.Mutable(key, e).(*keyspace.Set)
	m := s.Random(c.srv.rng)
	s.RemoveMember(m)
	c.notify(configs.NotifySet, "spop", key)
	if c.srv.propagating() {
		c.rewriteArgv(wordSRem, key, memberArg(m))
	}
	c.writeMember(m)
	if s.Len() == 0 {
		db.Delete(key)
		c.notify(configs.NotifyGeneric, "del", key)
	}
	c.touch(key)
	c.srv.ks.Dirty++
}

// spopWithCount is spopWithCountCommand. Popping the whole set replies it
// as SUNION would and propagates DEL; otherwise every popped member is
// propagated as its own SREM (the command itself is not), either picked
// at random one by one (CASE 2) or, when few members remain, by moving
// random survivors to a new set and popping the rest in order (CASE 3).
func (c *Client) spopWithCount(args [][]byte) {
	// getPositiveLongFromObjectOrReply: one message for both failures.
	l, ok := parseInt(args[2])
	if !ok || l < 0 {
		c.w.Error(ErrMustBePositive)
		return
	}
	count := uint64(l)
	key := args[1]
	set, e, ok := lookupWrite[*keyspace.Set](c, key)
	if !ok {
		return
	}
	if e == nil {
		c.w.SetLen(0)
		return
	}
	if count == 0 {
		c.w.SetLen(0)
		return
	}
	db := c.selectedDB()
	size := uint64(set.Len())
	c.notify(configs.NotifySet, "spop", key)
	c.srv.ks.Dirty += int64(min(count, size))

	// CASE 1: the whole set.
	if count >= size {
		c.sunionDiff(args[1:2], nil, setOpUnion)
		db.Delete(key)
		c.notify(configs.NotifyGeneric, "del", key)
		if c.srv.propagating() {
			c.rewriteArgv(argvDel[0], key)
		}
		c.touch(key)
		return
	}

	s := db.Mutable(key, e).(*keyspace.Set)
	prop := c.srv.propagating()
	c.w.SetLen(int(count))
	remaining := size - count
	if remaining*spopMoveStrategyMul > count {
		// CASE 2: pick and remove count random members.
		for ; count > 0; count-- {
			m := s.Random(c.srv.rng)
			c.writeMember(m)
			s.RemoveMember(m)
			if prop {
				c.srv.alsoPropagate(c.db, TargetAll, wordSRem, key, memberArg(m))
			}
		}
	} else {
		// CASE 3: move the survivors to a new set, pop the rest.
		var ns *keyspace.Set
		limit := c.maxIntset()
		for ; remaining > 0; remaining-- {
			m := s.Random(c.srv.rng)
			if ns == nil {
				var buf [20]byte
				ns = keyspace.NewSetFor(m.AppendTo(buf[:0]))
			}
			ns.AddMember(m, limit)
			s.RemoveMember(m)
		}
		s.Range(func(m keyspace.Member) bool {
			c.writeMember(m)
			if prop {
				c.srv.alsoPropagate(c.db, TargetAll, wordSRem, key, memberArg(m))
			}
			return true
		})
		db.SetKeepTTL(key, ns, c.srv.nowMs) // dbOverwrite
	}
	c.preventPropagation()
	c.touch(key)
}

// cmdSRandMember is srandmemberCommand.
func cmdSRandMember(c *Client, args [][]byte) {
	if len(args) == 3 {
		c.srandMemberWithCount(args)
		return
	}
	if len(args) > 3 {
		c.w.Error(ErrSyntax)
		return
	}
	s, draw, ok := c.srandSet(args[1])
	if !ok {
		return
	}
	if s == nil {
		c.w.Null()
		return
	}
	c.writeMember(draw(c.srv.rng))
}

// srandSet is SRANDMEMBER's lookup: the set at key and its draw. Redis's
// draws (dictGetRandomKey, dictGetFairRandomKey) take a rehash step of a
// set being rehashed; here too, on the set's own value (Mutable copies it
// first when a running snapshot still needs it, as a fork child's page is
// copied on write). A set not rehashing is drawn from as it is.
func (c *Client) srandSet(key []byte) (s *keyspace.Set, draw func(*rand.Rand) keyspace.Member, ok bool) {
	e := c.lookupKeyRead(key)
	s, ok = valueAs[*keyspace.Set](c, e)
	if !ok || s == nil {
		return s, nil, ok
	}
	if !s.Rehashing() {
		return s, s.RandomRead, true
	}
	s = c.selectedDB().Mutable(key, e).(*keyspace.Set)
	return s, s.Random, true
}

// srandMemberWithCount is srandmemberWithCountCommand: a negative count
// allows repeats (CASE 1, also used for a count of 1); a count covering
// the set returns all of it (CASE 2); otherwise distinct members are
// collected in a scratch dict, by removing random ones from a copy when
// count is close to the size (CASE 3) or adding random ones (CASE 4).
func (c *Client) srandMemberWithCount(args [][]byte) {
	l, ok := parseInt(args[2])
	if !ok {
		c.w.Error(ErrNotInteger)
		return
	}
	if l < -math.MaxInt64 {
		c.w.Error(ErrSRandCountRange)
		return
	}
	uniq := l >= 0
	count := uint64(l)
	if !uniq {
		count = uint64(-l)
	}
	s, draw, ok := c.srandSet(args[1])
	if !ok {
		return
	}
	if s == nil {
		c.w.ArrayLen(0)
		return
	}
	size := uint64(s.Len())
	if count == 0 {
		c.w.ArrayLen(0)
		return
	}
	rng := c.srv.rng
	if !uniq || count == 1 {
		c.w.ArrayLen(int(count))
		for i := uint64(0); count > 0; count-- {
			c.writeMember(draw(rng))
			if i++; i%hugeReplyCheckEvery == 0 && c.closeASAP() {
				break // closed for its output buffer (obuf.go)
			}
		}
		return
	}
	if count >= size {
		c.w.ArrayLen(int(size))
		s.Range(func(m keyspace.Member) bool {
			c.writeMember(m)
			return true
		})
		return
	}
	d := &keyspace.Dict{}
	val := &keyspace.Entry{}
	if count*srandSubStrategyMul > size {
		d.Expand(int(size))
		s.Range(func(m keyspace.Member) bool {
			d.Set(m.String(), val)
			return true
		})
		for ; size > count; size-- {
			k, _, _ := d.FairRandomKey(rng)
			d.DeleteString(k)
		}
	} else {
		d.Expand(int(count))
		for added := uint64(0); added < count; {
			m := draw(rng)
			k := m.String()
			if d.FindString(k) == nil {
				d.Set(k, val)
				added++
			}
		}
	}
	c.w.ArrayLen(int(count))
	d.Range(func(k string, _ *keyspace.Entry) bool {
		c.w.BulkString(k)
		return true
	})
}

// --- SINTER, SINTERCARD, SINTERSTORE ------------------------------------------------

func cmdSInter(c *Client, args [][]byte) { c.sinter(args[1:], nil, false, 0) }

func cmdSInterStore(c *Client, args [][]byte) { c.sinter(args[2:], args[1], false, 0) }

// cmdSInterCard is sinterCardCommand: SINTERCARD numkeys key... [LIMIT n].
func cmdSInterCard(c *Client, args [][]byte) {
	numkeys, ok := parseInt(args[1])
	if !ok || numkeys < 1 {
		c.w.Error(ErrNumkeysPositive)
		return
	}
	if numkeys > int64(len(args)-2) {
		c.w.Error(ErrNumkeysTooMany)
		return
	}
	limit := int64(0)
	for j := 2 + int(numkeys); j < len(args); j++ {
		if eqFold(args[j], "limit") && j+1 < len(args) {
			j++
			n, ok := parseInt(args[j])
			if !ok || n < 0 {
				c.w.Error(ErrLimitNegative)
				return
			}
			limit = n
		} else {
			c.w.Error(ErrSyntax)
			return
		}
	}
	c.sinter(args[2:2+numkeys], nil, true, limit)
}

// sinter is sinterGenericCommand: the members of the smallest set found
// in all the others. A missing key is an empty set; with dst the result
// replaces dst (or deletes it when empty); cardOnly replies only the
// count, stopping at limit (0: none).
func (c *Client) sinter(keys [][]byte, dst []byte, cardOnly bool, limit int64) {
	sets := make([]*keyspace.Set, len(keys))
	empty := false
	for j, k := range keys {
		s, ok := lookupRead[*keyspace.Set](c, k)
		if !ok {
			return
		}
		if s == nil {
			empty = true
		}
		sets[j] = s
	}
	if empty {
		switch {
		case dst != nil:
			if c.selectedDB().Delete(dst) {
				c.touch(dst)
				c.notify(configs.NotifyGeneric, "del", dst)
				c.srv.ks.Dirty++
			}
			c.w.Int(0)
		case cardOnly:
			c.w.Int(0)
		default:
			c.w.SetLen(0)
		}
		return
	}
	// qsort by cardinality (glibc's is a stable merge sort here).
	sort.SliceStable(sets, func(i, j int) bool { return sets[i].Len() < sets[j].Len() })

	var out *keyspace.Set
	var found []keyspace.Member
	if dst != nil {
		out = keyspace.NewIntSet()
	}
	limitMax := c.maxIntset()
	card := int64(0)
	sets[0].Range(func(m keyspace.Member) bool {
		for _, o := range sets[1:] {
			if o != sets[0] && !o.ContainsMember(m) {
				return true
			}
		}
		switch {
		case cardOnly:
			card++
			if limit != 0 && card >= limit {
				return false
			}
		case dst == nil:
			found = append(found, m)
		default:
			out.AddMember(m, limitMax)
		}
		return true
	})
	switch {
	case cardOnly:
		c.w.Int(card)
	case dst != nil:
		c.finishStore(dst, out, "sinterstore")
	default:
		c.w.SetLen(len(found))
		for _, m := range found {
			c.writeMember(m)
		}
	}
}

// finishStore is the tail of the *STORE commands: a non-empty result
// replaces dst (setKey) and fires event, an empty one deletes dst.
func (c *Client) finishStore(dst []byte, out *keyspace.Set, event string) {
	if n := out.Len(); n > 0 {
		c.storeSet(dst, out)
		c.w.Int(int64(n))
		c.notify(configs.NotifySet, event, dst)
		c.srv.ks.Dirty++
		return
	}
	c.w.Int(0)
	if c.selectedDB().Delete(dst) {
		c.srv.ks.Dirty++
		c.touch(dst)
		c.notify(configs.NotifyGeneric, "del", dst)
	}
}

// --- SUNION, SDIFF and their STORE forms -----------------------------------------------

func cmdSUnion(c *Client, args [][]byte)      { c.sunionDiff(args[1:], nil, setOpUnion) }
func cmdSUnionStore(c *Client, args [][]byte) { c.sunionDiff(args[2:], args[1], setOpUnion) }
func cmdSDiff(c *Client, args [][]byte)       { c.sunionDiff(args[1:], nil, setOpDiff) }
func cmdSDiffStore(c *Client, args [][]byte)  { c.sunionDiff(args[2:], args[1], setOpDiff) }

// sunionDiff is sunionDiffGenericCommand: the result is built in a new
// set that starts as an intset (so its encoding and, for a reply, its
// order are Redis's), with SDIFF's two algorithms chosen by the same
// estimate of their work.
func (c *Client) sunionDiff(keys [][]byte, dst []byte, op int) {
	sets := make([]*keyspace.Set, len(keys))
	sameset := false
	for j, k := range keys {
		s, ok := lookupRead[*keyspace.Set](c, k)
		if !ok {
			return
		}
		sets[j] = s
		if s != nil && j > 0 && sets[0] == s {
			sameset = true
		}
	}
	algo := 1
	if op == setOpDiff && sets[0] != nil && !sameset {
		var one, two int64
		for _, s := range sets {
			if s == nil {
				continue
			}
			one += int64(sets[0].Len())
			two += int64(s.Len())
		}
		one /= 2
		if one > two {
			algo = 2
		}
		if algo == 1 && len(sets) > 1 {
			rest := sets[1:]
			sort.SliceStable(rest, func(i, j int) bool { return setLen(rest[i]) > setLen(rest[j]) })
		}
	}
	out := keyspace.NewIntSet()
	limit := c.maxIntset()
	card := 0
	switch {
	case op == setOpUnion:
		for _, s := range sets {
			if s == nil {
				continue
			}
			s.Range(func(m keyspace.Member) bool {
				if out.AddMember(m, limit) {
					card++
				}
				return true
			})
		}
	case sameset || sets[0] == nil:
	case algo == 1:
		sets[0].Range(func(m keyspace.Member) bool {
			for _, o := range sets[1:] {
				if o == nil {
					continue
				}
				if o == sets[0] || o.ContainsMember(m) {
					return true
				}
			}
			out.AddMember(m, limit)
			card++
			return true
		})
	default:
		for j, s := range sets {
			if s == nil {
				continue
			}
			s.Range(func(m keyspace.Member) bool {
				if j == 0 {
					if out.AddMember(m, limit) {
						card++
					}
				} else if out.RemoveMember(m) {
					card--
				}
				return true
			})
			if card == 0 {
				break
			}
		}
	}
	if dst == nil {
		c.w.SetLen(card)
		out.Range(func(m keyspace.Member) bool {
			c.writeMember(m)
			return true
		})
		// The temporary set is freed with freeObjAsync under
		// lazyfree-lazy-server-del.
		if c.srv.cfg.LazyfreeLazyServerDel {
			c.srv.lazyfree(out)
		}
		return
	}
	event := "sunionstore"
	if op == setOpDiff {
		event = "sdiffstore"
	}
	c.finishStore(dst, out, event)
}

func setLen(s *keyspace.Set) int {
	if s == nil {
		return 0
	}
	return s.Len()
}

// --- SSCAN ---------------------------------------------------------------------------------

// cmdSScan is sscanCommand: the cursor is parsed first, a missing key
// replies an empty scan before the options are looked at, and
// scanGenericCommand returns a whole intset at once (cursor 0) or walks
// the hashtable with dictScan until COUNT members or 10*COUNT buckets.
func cmdSScan(c *Client, args [][]byte) {
	cursor, ok := parseScanCursor(args[2])
	if !ok {
		c.w.Error(ErrInvalidCursor)
		return
	}
	s, ok := lookupRead[*keyspace.Set](c, args[1])
	if !ok {
		return
	}
	if s == nil {
		c.w.ArrayLen(2)
		c.w.BulkString("0")
		c.w.ArrayLen(0)
		return
	}
	count, pattern, usePattern, _, ok := c.parseScanOptions(args, 3, false)
	if !ok {
		return
	}
	var members []string
	if s.IsIntset() {
		s.Range(func(m keyspace.Member) bool {
			members = append(members, m.String())
			return true
		})
		cursor = 0
	} else {
		maxIter := count * 10
		for {
			cursor = s.Scan(cursor, func(m string) { members = append(members, m) })
			if cursor == 0 || maxIter == 0 || int64(len(members)) >= count {
				break
			}
			maxIter--
		}
	}
	if usePattern {
		kept := members[:0]
		for _, m := range members {
			if keyspace.GlobMatchString(pattern, m, false) {
				kept = append(kept, m)
			}
		}
		members = kept
	}
	c.w.ArrayLen(2)
	var tmp [20]byte
	c.w.Bulk(strconv.AppendUint(tmp[:0], cursor, 10))
	c.w.ArrayLen(len(members))
	for _, m := range members {
		c.w.BulkString(m)
	}
}
