package server

import (
	"math"
	"math/big"
	"strconv"

	"github.com/vigil-kv/vigil/configs"
	"github.com/vigil-kv/vigil/internal/redisutil"
	"github.com/vigil-kv/vigil/server/keyspace"
)

// Hash commands, as Redis 7.0's t_hash.c. Values are *keyspace.Hash; a
// write changes one in place only on what DB.Mutable returns. Reads of a
// hashtable do Redis's incremental rehash step only when no running
// snapshot shares the value (DB.InPlace), so a snapshot's view is never
// written.

func init() {
	w, r := FlagWrite, FlagReadonly
	d, f := FlagDenyOOM, FlagFast
	acl := func(c ...string) []string { return c }
	wf := acl("write", "hash", "fast")
	rf := acl("read", "hash", "fast")
	rs := acl("read", "hash", "slow")
	register(
		&Command{Name: "hset", Arity: -4, Flags: w | d | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: wf, Handler: cmdHSet},
		&Command{Name: "hmset", Arity: -4, Flags: w | d | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: wf, Handler: cmdHSet},
		&Command{Name: "hsetnx", Arity: 4, Flags: w | d | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: wf, Handler: cmdHSetNX},
		&Command{Name: "hget", Arity: 3, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: rf, Handler: cmdHGet},
		&Command{Name: "hmget", Arity: -3, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: rf, Handler: cmdHMGet},
		&Command{Name: "hdel", Arity: -3, Flags: w | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: wf, Handler: cmdHDel},
		&Command{Name: "hlen", Arity: 2, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: rf, Handler: cmdHLen},
		&Command{Name: "hstrlen", Arity: 3, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: rf, Handler: cmdHStrlen},
		&Command{Name: "hexists", Arity: 3, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: rf, Handler: cmdHExists},
		&Command{Name: "hincrby", Arity: 4, Flags: w | d | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: wf, Handler: cmdHIncrBy},
		&Command{Name: "hincrbyfloat", Arity: 4, Flags: w | d | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: wf, Handler: cmdHIncrByFloat},
		&Command{Name: "hkeys", Arity: 2, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, ACL: rs, Handler: cmdHKeys},
		&Command{Name: "hvals", Arity: 2, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, ACL: rs, Handler: cmdHVals},
		&Command{Name: "hgetall", Arity: 2, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, ACL: rs, Handler: cmdHGetAll},
		&Command{Name: "hscan", Arity: -3, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, ACL: rs, Handler: cmdHScan},
		&Command{Name: "hrandfield", Arity: -2, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, ACL: rs, Handler: cmdHRandField},
	)
}

var wordHSet = []byte("HSET")

// hashRead is lookupRead for a hash, with step: whether the read may do
// rehashing work (no running snapshot shares the value).
func (c *Client) hashRead(key []byte) (h *keyspace.Hash, step, ok bool) {
	e := c.lookupKeyRead(key)
	if h, ok = valueAs[*keyspace.Hash](c, e); h != nil {
		step = c.selectedDB().InPlace(e)
	}
	return h, step, ok
}

// hashWrite is hashTypeLookupWriteOrCreate: the hash at key, ready for an
// in-place change, created (empty, listpack, with the "new" event) when
// the key is missing; nil after replying WRONGTYPE.
func (c *Client) hashWrite(key []byte) *keyspace.Hash {
	_, e, ok := lookupWrite[*keyspace.Hash](c, key)
	if !ok {
		return nil
	}
	db := c.selectedDB()
	if e == nil {
		_, v := db.SetNew(key, keyspace.NewHash(), c.srv.nowMs)
		c.notify(configs.NotifyNew, "new", key)
		return v.(*keyspace.Hash)
	}
	return db.Mutable(key, e).(*keyspace.Hash)
}

// cmdHSet is hsetCommand, for HSET (replies the number of new fields) and
// the deprecated HMSET (replies OK).
func cmdHSet(c *Client, args [][]byte) {
	isHMSet := len(args[0]) > 1 && (args[0][1] == 'm' || args[0][1] == 'M')
	if len(args)%2 == 1 {
		name := "hset"
		if isHMSet {
			name = "hmset"
		}
		c.w.Error(errWrongArgs(name))
		return
	}
	key := args[1]
	h := c.hashWrite(key)
	if h == nil {
		return
	}
	enc := c.srv.ks.Encodings
	h.TryConversion(args[2:], enc)
	created := 0
	for i := 2; i < len(args); i += 2 {
		if h.SetB(args[i], args[i+1], enc) {
			created++
		}
	}
	if isHMSet {
		c.w.OK()
	} else {
		c.w.Int(int64(created))
	}
	c.touch(key)
	c.notify(configs.NotifyHash, "hset", key)
	c.srv.ks.Dirty += int64(len(args)-2) / 2
}

// cmdHSetNX is hsetnxCommand.
func cmdHSetNX(c *Client, args [][]byte) {
	key, field := args[1], args[2]
	db := c.selectedDB()
	h, e, ok := lookupWrite[*keyspace.Hash](c, key)
	if !ok {
		return
	}
	if e != nil {
		if _, ok := h.Get(field, db.InPlace(e)); ok {
			c.w.Int(0)
			return
		}
		h = db.Mutable(key, e).(*keyspace.Hash)
	} else {
		_, v := db.SetNew(key, keyspace.NewHash(), c.srv.nowMs)
		h = v.(*keyspace.Hash)
		c.notify(configs.NotifyNew, "new", key)
	}
	enc := c.srv.ks.Encodings
	h.TryConversion(args[2:4], enc)
	h.SetB(field, args[3], enc)
	c.w.Int(1)
	c.touch(key)
	c.notify(configs.NotifyHash, "hset", key)
	c.srv.ks.Dirty++
}

// cmdHGet is hgetCommand.
func cmdHGet(c *Client, args [][]byte) {
	h, step, ok := c.hashRead(args[1])
	if !ok {
		return
	}
	if h == nil {
		c.w.Null()
		return
	}
	if v, ok := h.Get(args[2], step); ok {
		c.w.BulkString(v)
	} else {
		c.w.Null()
	}
}

// cmdHMGet is hmgetCommand: a missing key reads as an empty hash.
func cmdHMGet(c *Client, args [][]byte) {
	h, step, ok := c.hashRead(args[1])
	if !ok {
		return
	}
	c.w.ArrayLen(len(args) - 2)
	for _, f := range args[2:] {
		if h != nil {
			if v, ok := h.Get(f, step); ok {
				c.w.BulkString(v)
				continue
			}
		}
		c.w.Null()
	}
}

// cmdHDel is hdelCommand: the key goes with its last field ("del" event
// after "hdel"); Dirty counts the deleted fields.
func cmdHDel(c *Client, args [][]byte) {
	key := args[1]
	db := c.selectedDB()
	_, e, ok := lookupWrite[*keyspace.Hash](c, key)
	if !ok {
		return
	}
	if e == nil {
		c.w.Int(0)
		return
	}
	h := db.Mutable(key, e).(*keyspace.Hash)
	deleted := 0
	removed := false
	for _, f := range args[2:] {
		if h.DeleteArg(f) {
			deleted++
			if h.Len() == 0 {
				db.Delete(key)
				removed = true
				break
			}
		}
	}
	if deleted > 0 {
		c.touch(key)
		c.notify(configs.NotifyHash, "hdel", key)
		if removed {
			c.notify(configs.NotifyGeneric, "del", key)
		}
		c.srv.ks.Dirty += int64(deleted)
	}
	c.w.Int(int64(deleted))
}

// cmdHLen is hlenCommand.
func cmdHLen(c *Client, args [][]byte) {
	h, _, ok := c.hashRead(args[1])
	if !ok {
		return
	}
	if h == nil {
		c.w.Int(0)
		return
	}
	c.w.Int(int64(h.Len()))
}

// cmdHStrlen is hstrlenCommand.
func cmdHStrlen(c *Client, args [][]byte) {
	h, step, ok := c.hashRead(args[1])
	if !ok {
		return
	}
	if h == nil {
		c.w.Int(0)
		return
	}
	v, _ := h.Get(args[2], step)
	c.w.Int(int64(len(v)))
}

// cmdHExists is hexistsCommand.
func cmdHExists(c *Client, args [][]byte) {
	h, step, ok := c.hashRead(args[1])
	if !ok {
		return
	}
	if h == nil {
		c.w.Int(0)
		return
	}
	if _, found := h.Get(args[2], step); found {
		c.w.Int(1)
	} else {
		c.w.Int(0)
	}
}

// cmdHIncrBy is hincrbyCommand. The increment is parsed before the key is
// looked up (or created).
func cmdHIncrBy(c *Client, args [][]byte) {
	incr, ok := parseInt(args[3])
	if !ok {
		c.w.Error(ErrNotInteger)
		return
	}
	key, field := args[1], args[2]
	h := c.hashWrite(key)
	if h == nil {
		return
	}
	var value int64
	if v, ok := h.Get(field, true); ok {
		if value, ok = redisutil.String2ll(v); !ok {
			c.w.Error(ErrHashNotInteger)
			return
		}
	}
	if (incr < 0 && value < 0 && incr < math.MinInt64-value) ||
		(incr > 0 && value > 0 && incr > math.MaxInt64-value) {
		c.w.Error(ErrIncrOverflow)
		return
	}
	value += incr
	h.Set(field, strconv.FormatInt(value, 10), c.srv.ks.Encodings)
	c.w.Int(value)
	c.touch(key)
	c.notify(configs.NotifyHash, "hincrby", key)
	c.srv.ks.Dirty++
}

// cmdHIncrByFloat is hincrbyfloatCommand: long double arithmetic and
// formatting as INCRBYFLOAT (cmd_string.go), and always propagated as
// HSET key field <new value> (rewriteClientCommandArgument), so replicas
// and the AOF do not redo the float arithmetic.
func cmdHIncrByFloat(c *Client, args [][]byte) {
	incr, ok := parseLongDouble(args[3])
	if !ok {
		c.w.Error(ErrNotFloat)
		return
	}
	if incr.IsInf() {
		c.w.Error(ErrHashNaNIncr)
		return
	}
	key, field := args[1], args[2]
	h := c.hashWrite(key)
	if h == nil {
		return
	}
	var value *big.Float
	if v, ok := h.Get(field, true); ok {
		if value, ok = parseLongDouble([]byte(v)); !ok {
			c.w.Error(ErrHashNotFloat)
			return
		}
	} else {
		value = new(big.Float).SetPrec(ldPrec)
	}
	sum, ok := addLongDouble(value, incr)
	if !ok {
		c.w.Error(ErrIncrNaN)
		return
	}
	out := formatLongDouble(sum)
	h.Set(field, out, c.srv.ks.Encodings)
	c.w.BulkString(out)
	c.touch(key)
	c.notify(configs.NotifyHash, "hincrbyfloat", key)
	c.srv.ks.Dirty++
	if c.srv.propagating() {
		c.rewriteArgv(wordHSet, key, field, []byte(out))
	}
}

// Which parts of the pairs genericHgetallCommand replies.
const (
	hashKeys   = 1
	hashValues = 2
)

// hgetAll is genericHgetallCommand: HGETALL is a map (RESP3), HKEYS and
// HVALS arrays; a missing key is an empty map or array.
func (c *Client) hgetAll(key []byte, what int) {
	h, _, ok := c.hashRead(key)
	if !ok {
		return
	}
	if h == nil {
		if what == hashKeys|hashValues {
			c.w.MapLen(0)
		} else {
			c.w.ArrayLen(0)
		}
		return
	}
	if what == hashKeys|hashValues {
		c.w.MapLen(h.Len())
	} else {
		c.w.ArrayLen(h.Len())
	}
	h.Range(func(f, v string) bool {
		if what&hashKeys != 0 {
			c.w.BulkString(f)
		}
		if what&hashValues != 0 {
			c.w.BulkString(v)
		}
		return true
	})
}

func cmdHKeys(c *Client, args [][]byte)   { c.hgetAll(args[1], hashKeys) }
func cmdHVals(c *Client, args [][]byte)   { c.hgetAll(args[1], hashValues) }
func cmdHGetAll(c *Client, args [][]byte) { c.hgetAll(args[1], hashKeys|hashValues) }

// replyEmptyScan is shared.emptyscan: cursor 0, no elements.
func (c *Client) replyEmptyScan() {
	c.w.ArrayLen(2)
	c.w.BulkString("0")
	c.w.ArrayLen(0)
}

// cmdHScan is hscanCommand and scanGenericCommand for a hash: the cursor is
// checked first, then the key, then the options (COUNT, MATCH; no TYPE).
// A listpack is returned whole with cursor 0; a hashtable is scanned until
// COUNT fields are collected or 20*COUNT buckets visited (Redis doubles
// COUNT for the field/value pairs, then allows ten visits per element).
func cmdHScan(c *Client, args [][]byte) {
	cursor, ok := parseScanCursor(args[2])
	if !ok {
		c.w.Error(ErrInvalidCursor)
		return
	}
	h, _, ok := c.hashRead(args[1])
	if !ok {
		return
	}
	if h == nil {
		c.replyEmptyScan()
		return
	}
	count, pattern, usePattern, _, ok := c.parseScanOptions(args, 3, false)
	if !ok {
		return
	}
	var out []string
	collect := func(f, v string) { out = append(out, f, v) }
	if h.Encoding() == keyspace.EncodingListpack {
		cursor = h.Scan(0, collect)
	} else {
		count = min(count, math.MaxInt64/20)
		maxIter := count * 20
		for {
			cursor = h.Scan(cursor, collect)
			if cursor == 0 || maxIter == 0 || int64(len(out)/2) >= count {
				break
			}
			maxIter--
		}
	}
	n := len(out)
	if usePattern {
		n = 0
		for i := 0; i < len(out); i += 2 {
			if keyspace.GlobMatchString(pattern, out[i], false) {
				out[n], out[n+1] = out[i], out[i+1]
				n += 2
			}
		}
	}
	c.w.ArrayLen(2)
	var tmp [20]byte
	c.w.Bulk(strconv.AppendUint(tmp[:0], cursor, 10))
	c.w.ArrayLen(n)
	for _, s := range out[:n] {
		c.w.BulkString(s)
	}
}

// hrandfieldSubStrategyMul is HRANDFIELD_SUB_STRATEGY_MUL.
const hrandfieldSubStrategyMul = 3

// cmdHRandField is hrandfieldCommand: without a count one random field (or
// null); with one, hrandfieldWithCountCommand.
func cmdHRandField(c *Client, args [][]byte) {
	if len(args) >= 3 {
		l, ok := parseInt(args[2])
		if !ok {
			c.w.Error(ErrNotInteger)
			return
		}
		if l == math.MinInt64 {
			c.w.Error(ErrLongRange)
			return
		}
		withValues := false
		if len(args) > 4 || (len(args) == 4 && !eqFold(args[3], "withvalues")) {
			c.w.Error(ErrSyntax)
			return
		} else if len(args) == 4 {
			withValues = true
			if l < -math.MaxInt64/2 || l > math.MaxInt64/2 {
				c.w.Error(ErrOutOfRange)
				return
			}
		}
		c.hrandfieldWithCount(args[1], l, withValues)
		return
	}
	h, step, ok := c.hashRead(args[1])
	if !ok {
		return
	}
	if h == nil {
		c.w.Null()
		return
	}
	f, _, _ := h.RandomField(c.srv.rng, step)
	c.w.BulkString(f)
}

// hrandfieldWithCount is hrandfieldWithCountCommand. A negative count
// allows repetitions (random order); a positive one returns distinct
// fields: the whole hash when count >= its size, else a sample (listpack:
// in listpack order; hashtable: by removing random fields from a copy when
// count is over a third of the size, else by drawing fair random ones).
// RESP3 replies WITHVALUES pairs as two-element arrays, RESP2 flat.
func (c *Client) hrandfieldWithCount(key []byte, l int64, withValues bool) {
	h, step, ok := c.hashRead(key)
	if !ok {
		return
	}
	if h == nil {
		c.w.ArrayLen(0)
		return
	}
	count, uniq := uint64(l), true
	if l < 0 {
		count, uniq = uint64(-l), false
	}
	if count == 0 {
		c.w.ArrayLen(0)
		return
	}
	resp3 := c.w.Proto >= 3
	pair := func(f, v string) {
		if withValues && resp3 {
			c.w.ArrayLen(2)
		}
		c.w.BulkString(f)
		if withValues {
			c.w.BulkString(v)
		}
	}
	replyLen := func(n uint64) {
		if withValues && !resp3 {
			n *= 2
		}
		c.w.ArrayLen(int(n))
	}
	rng := c.srv.rng
	// CASE 1: repetitions allowed (or a single field).
	if !uniq || count == 1 {
		replyLen(count)
		for i := uint64(0); count > 0; count-- {
			f, v, _ := h.RandomField(rng, step)
			pair(f, v)
			if i++; i%hugeReplyCheckEvery == 0 && c.closeASAP() {
				break // closed for its output buffer (obuf.go)
			}
		}
		return
	}
	size := uint64(h.Len())
	// CASE 2: the whole hash.
	if count >= size {
		replyLen(size)
		h.Range(func(f, v string) bool { pair(f, v); return true })
		return
	}
	replyLen(count)
	// CASE 2.5: listpack, distinct fields in listpack order
	// (lpRandomPairsUnique's selection sampling).
	if h.Encoding() == keyspace.EncodingListpack {
		need, i := count, uint64(0)
		h.Range(func(f, v string) bool {
			if rng.Uint64N(size-i) < need {
				pair(f, v)
				need--
			}
			i++
			return need > 0
		})
		return
	}
	type fv struct{ f, v string }
	// CASE 3: copy the hash, remove random fields down to count.
	if count*hrandfieldSubStrategyMul > size {
		all := make([]fv, 0, size)
		h.Range(func(f, v string) bool { all = append(all, fv{f, v}); return true })
		for uint64(len(all)) > count {
			i := rng.IntN(len(all))
			all[i] = all[len(all)-1]
			all = all[:len(all)-1]
		}
		for _, p := range all {
			pair(p.f, p.v)
		}
		return
	}
	// CASE 4: draw fair random fields until count distinct ones.
	seen := make(map[string]struct{}, count)
	for uint64(len(seen)) < count {
		f, v, _ := h.RandomField(rng, step)
		if _, dup := seen[f]; dup {
			continue
		}
		seen[f] = struct{}{}
		pair(f, v)
	}
}
