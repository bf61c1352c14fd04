package server

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/vigil-kv/vigil/configs"
	"github.com/vigil-kv/vigil/server/keyspace"
)

// Sorted set commands, as Redis 7.0.15's t_zset.c. The value is
// keyspace.ZSet (a skiplist plus a member map; listpack-encoded while under
// zset-max-listpack-entries/-value, converted one-way as zsetConvert).
// Scores print as addReplyDouble (%.17g, inf, -inf; RESP3 doubles); ZSCAN
// prints them as the listpack/ld2string text (bulk strings).

// Error replies of t_zset.c (the shared ones are in errors.go).
const (
	ErrZAddXXNX        = "ERR XX and NX options at the same time are not compatible"
	ErrZAddGTLTNX      = "ERR GT, LT, and/or NX options at the same time are not compatible"
	ErrZAddIncrPair    = "ERR INCR option supports a single increment-element pair"
	ErrZNaN            = "ERR resulting score is not a number (NaN)"
	ErrZMinMaxFloat    = "ERR min or max is not a float"
	ErrZMinMaxLex      = "ERR min or max not valid string range item"
	ErrZLimitRank      = "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX"
	ErrZWithscoresLex  = "ERR syntax error, WITHSCORES not supported in combination with BYLEX"
	ErrZWeightFloat    = "ERR weight value is not a float"
	ErrZAtLeastOneKey  = "ERR at least 1 input key is needed for '%s' command"
	ErrZLimitNegative  = "ERR LIMIT can't be negative"
	ErrZNumkeys        = "ERR numkeys should be greater than 0"
	ErrZCount          = "ERR count should be greater than 0"
	ErrZMustBePositive = "ERR value is out of range, must be positive"
	ErrZOutOfRange     = "ERR value is out of range"
	ErrZRandRange      = "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"
)

func init() {
	w, r := FlagWrite, FlagReadonly
	d, f, m := FlagDenyOOM, FlagFast, FlagMovableKeys
	acl := func(a ...string) []string { return a }
	zr := func(name string, arity int, h func(*Client, [][]byte)) *Command {
		return &Command{Name: name, Arity: arity, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, ACL: acl("read", "sortedset", "slow"), Handler: h}
	}
	register(
		&Command{Name: "zadd", Arity: -4, Flags: w | d | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: acl("write", "sortedset", "fast"), Handler: cmdZAdd},
		&Command{Name: "zincrby", Arity: 4, Flags: w | d | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: acl("write", "sortedset", "fast"), Handler: cmdZIncrBy},
		&Command{Name: "zrem", Arity: -3, Flags: w | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: acl("write", "sortedset", "fast"), Handler: cmdZRem},
		&Command{Name: "zscore", Arity: 3, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: acl("read", "sortedset", "fast"), Handler: cmdZScore},
		&Command{Name: "zmscore", Arity: -3, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: acl("read", "sortedset", "fast"), Handler: cmdZMScore},
		&Command{Name: "zcard", Arity: 2, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: acl("read", "sortedset", "fast"), Handler: cmdZCard},
		&Command{Name: "zcount", Arity: 4, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: acl("read", "sortedset", "fast"), Handler: cmdZCount},
		&Command{Name: "zlexcount", Arity: 4, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: acl("read", "sortedset", "fast"), Handler: cmdZLexCount},
		&Command{Name: "zrank", Arity: 3, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: acl("read", "sortedset", "fast"), Handler: func(c *Client, a [][]byte) { zrankGeneric(c, a, false) }},
		&Command{Name: "zrevrank", Arity: 3, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: acl("read", "sortedset", "fast"), Handler: func(c *Client, a [][]byte) { zrankGeneric(c, a, true) }},
		zr("zrange", -4, func(c *Client, a [][]byte) { zrangeGeneric(c, a, 1, false, zrangeAuto, dirAuto) }),
		zr("zrevrange", -4, func(c *Client, a [][]byte) { zrangeGeneric(c, a, 1, false, zrangeRank, dirReverse) }),
		zr("zrangebyscore", -4, func(c *Client, a [][]byte) { zrangeGeneric(c, a, 1, false, zrangeScore, dirForward) }),
		zr("zrevrangebyscore", -4, func(c *Client, a [][]byte) { zrangeGeneric(c, a, 1, false, zrangeScore, dirReverse) }),
		zr("zrangebylex", -4, func(c *Client, a [][]byte) { zrangeGeneric(c, a, 1, false, zrangeLex, dirForward) }),
		zr("zrevrangebylex", -4, func(c *Client, a [][]byte) { zrangeGeneric(c, a, 1, false, zrangeLex, dirReverse) }),
		&Command{Name: "zrangestore", Arity: -5, Flags: w | d, FirstKey: 1, LastKey: 2, Step: 1, ACL: acl("write", "sortedset", "slow"), Handler: func(c *Client, a [][]byte) { zrangeGeneric(c, a, 2, true, zrangeAuto, dirAuto) }},
		&Command{Name: "zremrangebyrank", Arity: 4, Flags: w, FirstKey: 1, LastKey: 1, Step: 1, ACL: acl("write", "sortedset", "slow"), Handler: func(c *Client, a [][]byte) { zremrangeGeneric(c, a, zrangeRank) }},
		&Command{Name: "zremrangebyscore", Arity: 4, Flags: w, FirstKey: 1, LastKey: 1, Step: 1, ACL: acl("write", "sortedset", "slow"), Handler: func(c *Client, a [][]byte) { zremrangeGeneric(c, a, zrangeScore) }},
		&Command{Name: "zremrangebylex", Arity: 4, Flags: w, FirstKey: 1, LastKey: 1, Step: 1, ACL: acl("write", "sortedset", "slow"), Handler: func(c *Client, a [][]byte) { zremrangeGeneric(c, a, zrangeLex) }},
		&Command{Name: "zpopmin", Arity: -2, Flags: w | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: acl("write", "sortedset", "fast"), Handler: func(c *Client, a [][]byte) { zpopMinMax(c, a, false) }},
		&Command{Name: "zpopmax", Arity: -2, Flags: w | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: acl("write", "sortedset", "fast"), Handler: func(c *Client, a [][]byte) { zpopMinMax(c, a, true) }},
		&Command{Name: "zmpop", Arity: -4, Flags: w | m, ACL: acl("write", "sortedset", "slow"), Handler: cmdZMPop},
		&Command{Name: "zunion", Arity: -3, Flags: r | m, ACL: acl("read", "sortedset", "slow"), Handler: func(c *Client, a [][]byte) { zsetOpGeneric(c, a, nil, 1, zopUnion, false) }},
		&Command{Name: "zinter", Arity: -3, Flags: r | m, ACL: acl("read", "sortedset", "slow"), Handler: func(c *Client, a [][]byte) { zsetOpGeneric(c, a, nil, 1, zopInter, false) }},
		&Command{Name: "zdiff", Arity: -3, Flags: r | m, ACL: acl("read", "sortedset", "slow"), Handler: func(c *Client, a [][]byte) { zsetOpGeneric(c, a, nil, 1, zopDiff, false) }},
		&Command{Name: "zintercard", Arity: -3, Flags: r | m, ACL: acl("read", "sortedset", "slow"), Handler: func(c *Client, a [][]byte) { zsetOpGeneric(c, a, nil, 1, zopInter, true) }},
		&Command{Name: "zunionstore", Arity: -4, Flags: w | d | m, FirstKey: 1, LastKey: 1, Step: 1, ACL: acl("write", "sortedset", "slow"), Handler: func(c *Client, a [][]byte) { zsetOpGeneric(c, a, a[1], 2, zopUnion, false) }},
		&Command{Name: "zinterstore", Arity: -4, Flags: w | d | m, FirstKey: 1, LastKey: 1, Step: 1, ACL: acl("write", "sortedset", "slow"), Handler: func(c *Client, a [][]byte) { zsetOpGeneric(c, a, a[1], 2, zopInter, false) }},
		&Command{Name: "zdiffstore", Arity: -4, Flags: w | d | m, FirstKey: 1, LastKey: 1, Step: 1, ACL: acl("write", "sortedset", "slow"), Handler: func(c *Client, a [][]byte) { zsetOpGeneric(c, a, a[1], 2, zopDiff, false) }},
		zr("zrandmember", -2, cmdZRandMember),
		&Command{Name: "bzpopmin", Arity: -3, Flags: w | FlagNoScript | FlagBlocking | f, FirstKey: 1, LastKey: -2, Step: 1, ACL: acl("write", "sortedset", "fast", "blocking"), Handler: func(c *Client, a [][]byte) { bzpopGeneric(c, a, false) }},
		&Command{Name: "bzpopmax", Arity: -3, Flags: w | FlagNoScript | FlagBlocking | f, FirstKey: 1, LastKey: -2, Step: 1, ACL: acl("write", "sortedset", "fast", "blocking"), Handler: func(c *Client, a [][]byte) { bzpopGeneric(c, a, true) }},
		&Command{Name: "bzmpop", Arity: -5, Flags: w | FlagBlocking | m, ACL: acl("write", "sortedset", "slow", "blocking"), Handler: cmdBZMPop},
		zr("zscan", -3, cmdZScan),
	)
}

// --- parsing -----------------------------------------------------------------

func isCSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\v' || b == '\f' || b == '\r'
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

func isHex(b byte) bool {
	return isDigit(b) || (b|0x20 >= 'a' && b|0x20 <= 'f')
}

// strtod is C's strtod (glibc): it parses the longest prefix of b that is
// a number (leading white space, a sign, decimal or hexadecimal digits,
// inf/infinity, nan) and returns the value, the bytes consumed (0: none)
// and ERANGE (an overflow, or an underflow to zero).
func strtod(b []byte) (v float64, n int, erange bool) {
	i := 0
	for i < len(b) && isCSpace(b[i]) {
		i++
	}
	start := i
	neg := false
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		neg = b[i] == '-'
		i++
	}
	word := func(w string) bool {
		if len(b)-i < len(w) {
			return false
		}
		for k := 0; k < len(w); k++ {
			if b[i+k]|0x20 != w[k] {
				return false
			}
		}
		return true
	}
	sign := 1.0
	if neg {
		sign = -1
	}
	switch {
	case word("infinity"):
		return sign * math.Inf(1), i + 8, false
	case word("inf"):
		return sign * math.Inf(1), i + 3, false
	case word("nan"):
		i += 3
		if i < len(b) && b[i] == '(' {
			k := i + 1
			for k < len(b) && (isDigit(b[k]) || b[k]|0x20 >= 'a' && b[k]|0x20 <= 'z' || b[k] == '_') {
				k++
			}
			if k < len(b) && b[k] == ')' {
				i = k + 1
			}
		}
		return math.NaN(), i, false
	}
	numStart := i
	hex := i+1 < len(b) && b[i] == '0' && b[i+1]|0x20 == 'x' && (i+2 < len(b) && (isHex(b[i+2]) || b[i+2] == '.' && i+3 < len(b) && isHex(b[i+3])))
	digitOK := isDigit
	if hex {
		i += 2
		digitOK = isHex
	}
	nd, nonzero := 0, false
	for i < len(b) && digitOK(b[i]) {
		nonzero = nonzero || b[i] != '0'
		nd++
		i++
	}
	if i < len(b) && b[i] == '.' {
		i++
		for i < len(b) && digitOK(b[i]) {
			nonzero = nonzero || b[i] != '0'
			nd++
			i++
		}
	}
	if nd == 0 {
		return 0, 0, false
	}
	expCh := byte('e')
	if hex {
		expCh = 'p'
	}
	if i < len(b) && b[i]|0x20 == expCh {
		k := i + 1
		if k < len(b) && (b[k] == '+' || b[k] == '-') {
			k++
		}
		if k < len(b) && isDigit(b[k]) {
			for k < len(b) && isDigit(b[k]) {
				k++
			}
			i = k
		}
	}
	s := string(b[numStart:i])
	if hex && (len(s) == 0 || s[len(s)-1]|0x20 != 'p') {
		hasP := false
		for k := 0; k < len(s); k++ {
			if s[k]|0x20 == 'p' {
				hasP = true
			}
		}
		if !hasP {
			s += "p0"
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); !ok || ne.Err != strconv.ErrRange {
			return 0, 0, false
		}
		erange = true
	}
	if f == 0 && nonzero {
		erange = true
	}
	_ = start
	return sign * f, i, erange
}

// parseDouble is getDoubleFromObject: the whole argument is a number, with
// no leading space, not NaN, not out of range.
func parseDouble(b []byte) (float64, bool) {
	if len(b) == 0 || isCSpace(b[0]) {
		return 0, false
	}
	v, n, erange := strtod(b)
	if n != len(b) || math.IsNaN(v) || (erange && (math.IsInf(v, 0) || v == 0)) {
		return 0, false
	}
	return v, true
}

// parseScoreBound is one side of zslParseRange.
func parseScoreBound(b []byte) (v float64, ex, ok bool) {
	b = cstr(b)
	if len(b) > 0 && b[0] == '(' {
		ex = true
		b = b[1:]
	}
	v, n, _ := strtod(b)
	if n != len(b) || math.IsNaN(v) {
		return 0, false, false
	}
	return v, ex, true
}

// parseScoreRange is zslParseRange.
func parseScoreRange(min, max []byte) (keyspace.ScoreRange, bool) {
	var r keyspace.ScoreRange
	var ok bool
	if r.Min, r.MinEx, ok = parseScoreBound(min); !ok {
		return r, false
	}
	if r.Max, r.MaxEx, ok = parseScoreBound(max); !ok {
		return r, false
	}
	return r, true
}

// parseLexRange is zslParseLexRange.
func parseLexRange(min, max []byte) (keyspace.LexRange, bool) {
	var r keyspace.LexRange
	item := func(b []byte) (s string, ex, plus, minus, ok bool) {
		if len(b) == 0 {
			return "", false, false, false, false
		}
		switch b[0] {
		case '+':
			return "", true, true, false, len(b) == 1 || b[1] == 0
		case '-':
			return "", true, false, true, len(b) == 1 || b[1] == 0
		case '(':
			return string(b[1:]), true, false, false, true
		case '[':
			return string(b[1:]), false, false, false, true
		}
		return "", false, false, false, false
	}
	var plus, minus, ok bool
	if r.Min, r.MinEx, plus, minus, ok = item(min); !ok {
		return r, false
	}
	r.MinInf, r.MinPlus = minus, plus
	if r.Max, r.MaxEx, plus, minus, ok = item(max); !ok {
		return r, false
	}
	r.MaxInf, r.MaxMinus = plus, minus
	return r, true
}

// zsetMutable is the writable sorted set of key (e: its entry).
func (c *Client) zsetMutable(key []byte, e *keyspace.Entry) *keyspace.ZSet {
	return c.selectedDB().Mutable(key, e).(*keyspace.ZSet)
}

// zsetAddOne is zsetAdd on a set being written: the listpack conversion
// before inserting a new member, then the insert. member is copied.
func (c *Client) zsetAddOne(z *keyspace.ZSet, member []byte, score float64) bool {
	if z.IsListpack() {
		if _, ok := z.Score(member); !ok {
			c.zsetConvertForNew(z, member)
		}
	}
	return z.SetB(member, score)
}

// zsetAddFound is zsetAddOne for a member Find reported absent (ref).
func (c *Client) zsetAddFound(z *keyspace.ZSet, ref keyspace.ZRef, member []byte, score float64) {
	c.zsetConvertForNew(z, member)
	z.SetFound(ref, member, score)
}

// zsetConvertForNew converts a listpack z to a skiplist when adding the
// new member would pass zset-max-listpack-entries or -value (zsetAdd).
func (c *Client) zsetConvertForNew(z *keyspace.ZSet, member []byte) {
	cfg := &c.srv.ks.Encodings
	if z.IsListpack() && (z.Len()+1 > cfg.ZSetMaxListpackEntries || len(member) > cfg.ZSetMaxListpackValue) {
		z.ConvertToSkiplist()
	}
}

// newZSetFor is the encoding ZADD creates a key with (the first member's
// length decides).
func (c *Client) newZSetFor(firstMember []byte) *keyspace.ZSet {
	cfg := &c.srv.ks.Encodings
	return keyspace.NewZSet(!(cfg.ZSetMaxListpackEntries == 0 || cfg.ZSetMaxListpackValue < len(firstMember)))
}

// deleteIfEmpty deletes key when z is empty (the "del" event is the
// caller's, in Redis's order); it reports the deletion.
func (c *Client) zdeleteIfEmpty(key []byte, z *keyspace.ZSet) bool {
	if z.Len() == 0 {
		c.selectedDB().Delete(key)
		return true
	}
	return false
}

// --- ZADD, ZINCRBY, ZREM ------------------------------------------------------------

const (
	zaddIncr = 1 << iota
	zaddNX
	zaddXX
	zaddGT
	zaddLT
	zaddCH
)

func cmdZAdd(c *Client, args [][]byte) { zaddGeneric(c, args, 0) }

func cmdZIncrBy(c *Client, args [][]byte) { zaddGeneric(c, args, zaddIncr) }

// zaddGeneric is zaddGenericCommand.
func zaddGeneric(c *Client, args [][]byte, flags int) {
	key := args[1]
	scoreidx := 2
parse:
	for scoreidx < len(args) {
		a := args[scoreidx]
		switch {
		case eqFold(a, "nx"):
			flags |= zaddNX
		case eqFold(a, "xx"):
			flags |= zaddXX
		case eqFold(a, "ch"):
			flags |= zaddCH
		case eqFold(a, "incr"):
			flags |= zaddIncr
		case eqFold(a, "gt"):
			flags |= zaddGT
		case eqFold(a, "lt"):
			flags |= zaddLT
		default:
			break parse
		}
		scoreidx++
	}
	incr, nx, xx := flags&zaddIncr != 0, flags&zaddNX != 0, flags&zaddXX != 0
	gt, lt, ch := flags&zaddGT != 0, flags&zaddLT != 0, flags&zaddCH != 0
	elements := len(args) - scoreidx
	if elements%2 != 0 || elements == 0 {
		c.w.Error(ErrSyntax)
		return
	}
	elements /= 2
	if nx && xx {
		c.w.Error(ErrZAddXXNX)
		return
	}
	if (gt && nx) || (lt && nx) || (gt && lt) {
		c.w.Error(ErrZAddGTLTNX)
		return
	}
	if incr && elements > 1 {
		c.w.Error(ErrZAddIncrPair)
		return
	}
	var scoreBuf [4]float64
	scores := scoreBuf[:0]
	if elements > len(scoreBuf) {
		scores = make([]float64, 0, elements)
	}
	scores = scores[:elements]
	for j := range scores {
		v, ok := parseDouble(args[scoreidx+j*2])
		if !ok {
			c.w.Error(ErrNotFloat)
			return
		}
		scores[j] = v
	}
	z, e, ok := lookupWrite[*keyspace.ZSet](c, key)
	if !ok {
		return
	}
	var added, updated, processed int64
	var newscore float64
	nan := false
	switch {
	case z == nil && xx:
		elements = 0 // no key + XX: nothing to do
	case z == nil:
		_, v := c.selectedDB().SetNew(key, c.newZSetFor(args[scoreidx+1]), c.srv.nowMs)
		z = v.(*keyspace.ZSet)
		c.notify(configs.NotifyNew, "new", key)
	default:
		z = c.zsetMutable(key, e)
	}
	for j := 0; j < elements; j++ {
		score := scores[j]
		member := args[scoreidx+j*2+1]
		if cur, ref, exists := z.Find(member); exists {
			if nx {
				continue
			}
			if incr {
				score += cur
				if math.IsNaN(score) {
					nan = true
					break
				}
			}
			if (lt && score >= cur) || (gt && score <= cur) {
				continue
			}
			newscore = score
			if score != cur {
				z.SetFound(ref, member, score)
				updated++
			}
			processed++
		} else if !xx {
			c.zsetAddFound(z, ref, member, score)
			newscore = score
			added++
			processed++
		}
	}
	if nan {
		c.w.Error(ErrZNaN)
	} else {
		if incr {
			if processed > 0 {
				c.w.Double(newscore)
			} else {
				c.w.Null()
			}
		} else if ch {
			c.w.Int(added + updated)
		} else {
			c.w.Int(added)
		}
	}
	if added+updated > 0 {
		c.touch(key)
		ev := "zadd"
		if incr {
			ev = "zincr"
		}
		c.notify(configs.NotifyZset, ev, key)
	}
	c.srv.ks.Dirty += added + updated
}

// cmdZRem is zremCommand.
func cmdZRem(c *Client, args [][]byte) {
	key := args[1]
	z, e, ok := lookupWrite[*keyspace.ZSet](c, key)
	if !ok {
		return
	}
	if e == nil {
		c.w.Int(0)
		return
	}
	z = c.zsetMutable(key, e)
	var deleted int64
	removed := false
	for _, m := range args[2:] {
		if z.RemoveArg(m) {
			deleted++
		}
		if z.Len() == 0 {
			c.selectedDB().Delete(key)
			removed = true
			break
		}
	}
	if deleted > 0 {
		c.notify(configs.NotifyZset, "zrem", key)
		if removed {
			c.notify(configs.NotifyGeneric, "del", key)
		}
		c.touch(key)
		c.srv.ks.Dirty += deleted
	}
	c.w.Int(deleted)
}

// --- reads ---------------------------------------------------------------------------

func cmdZScore(c *Client, args [][]byte) {
	z, ok := lookupRead[*keyspace.ZSet](c, args[1])
	if !ok {
		return
	}
	if z == nil {
		c.w.Null()
		return
	}
	if s, ok := z.Score(args[2]); ok {
		c.w.Double(s)
	} else {
		c.w.Null()
	}
}

func cmdZMScore(c *Client, args [][]byte) {
	z, ok := lookupRead[*keyspace.ZSet](c, args[1])
	if !ok {
		return
	}
	c.w.ArrayLen(len(args) - 2)
	for _, m := range args[2:] {
		if z == nil {
			c.w.Null()
		} else if s, ok := z.Score(m); ok {
			c.w.Double(s)
		} else {
			c.w.Null()
		}
	}
}

func cmdZCard(c *Client, args [][]byte) {
	z, ok := lookupRead[*keyspace.ZSet](c, args[1])
	if !ok {
		return
	}
	if z == nil {
		c.w.Int(0)
		return
	}
	c.w.Int(int64(z.Len()))
}

func cmdZCount(c *Client, args [][]byte) {
	r, ok := parseScoreRange(args[2], args[3])
	if !ok {
		c.w.Error(ErrZMinMaxFloat)
		return
	}
	z, ok := lookupRead[*keyspace.ZSet](c, args[1])
	if !ok {
		return
	}
	if z == nil {
		c.w.Int(0)
		return
	}
	c.w.Int(int64(z.CountByScore(r)))
}

func cmdZLexCount(c *Client, args [][]byte) {
	r, ok := parseLexRange(args[2], args[3])
	if !ok {
		c.w.Error(ErrZMinMaxLex)
		return
	}
	z, ok := lookupRead[*keyspace.ZSet](c, args[1])
	if !ok {
		return
	}
	if z == nil {
		c.w.Int(0)
		return
	}
	c.w.Int(int64(z.CountByLex(r)))
}

func zrankGeneric(c *Client, args [][]byte, rev bool) {
	z, ok := lookupRead[*keyspace.ZSet](c, args[1])
	if !ok {
		return
	}
	if z == nil {
		c.w.Null()
		return
	}
	if r, ok := z.Rank(args[2], rev); ok {
		c.w.Int(int64(r))
	} else {
		c.w.Null()
	}
}

// --- ZRANGE family -------------------------------------------------------------------

const (
	zrangeAuto = iota
	zrangeRank
	zrangeScore
	zrangeLex
)

const (
	dirAuto = iota
	dirForward
	dirReverse
)

// zrangeGeneric is zrangeGenericCommand: the Z[REV]RANGE[BYSCORE|BYLEX]
// family and ZRANGESTORE (store: args[1] is the destination, argStart the
// source's index).
func zrangeGeneric(c *Client, args [][]byte, argStart int, store bool, rangetype, direction int) {
	key := args[argStart]
	minidx, maxidx := argStart+1, argStart+2
	withscores := false
	offset, limit := int64(0), int64(-1)
	for j := argStart + 3; j < len(args); j++ {
		left := len(args) - j - 1
		a := args[j]
		switch {
		case !store && eqFold(a, "withscores"):
			withscores = true
		case eqFold(a, "limit") && left >= 2:
			var ok bool
			if offset, ok = parseInt(args[j+1]); !ok {
				c.w.Error(ErrNotInteger)
				return
			}
			if limit, ok = parseInt(args[j+2]); !ok {
				c.w.Error(ErrNotInteger)
				return
			}
			j += 2
		case direction == dirAuto && eqFold(a, "rev"):
			direction = dirReverse
		case rangetype == zrangeAuto && eqFold(a, "bylex"):
			rangetype = zrangeLex
		case rangetype == zrangeAuto && eqFold(a, "byscore"):
			rangetype = zrangeScore
		default:
			c.w.Error(ErrSyntax)
			return
		}
	}
	if direction == dirAuto {
		direction = dirForward
	}
	if rangetype == zrangeAuto {
		rangetype = zrangeRank
	}
	if limit != -1 && rangetype == zrangeRank {
		c.w.Error(ErrZLimitRank)
		return
	}
	if withscores && rangetype == zrangeLex {
		c.w.Error(ErrZWithscoresLex)
		return
	}
	rev := direction == dirReverse
	if rev && rangetype != zrangeRank {
		minidx, maxidx = maxidx, minidx
	}
	var start, end int64
	var sr keyspace.ScoreRange
	var lr keyspace.LexRange
	switch rangetype {
	case zrangeRank:
		var ok bool
		if start, ok = parseInt(args[minidx]); !ok {
			c.w.Error(ErrNotInteger)
			return
		}
		if end, ok = parseInt(args[maxidx]); !ok {
			c.w.Error(ErrNotInteger)
			return
		}
	case zrangeScore:
		var ok bool
		if sr, ok = parseScoreRange(args[minidx], args[maxidx]); !ok {
			c.w.Error(ErrZMinMaxFloat)
			return
		}
	case zrangeLex:
		var ok bool
		if lr, ok = parseLexRange(args[minidx], args[maxidx]); !ok {
			c.w.Error(ErrZMinMaxLex)
			return
		}
	}
	z, ok := lookupRead[*keyspace.ZSet](c, key)
	if !ok {
		return
	}
	// Collect the result (members are stored strings: not aliased).
	type el struct {
		m string
		s float64
	}
	var res []el
	lengthHint := int64(-1)
	if z != nil {
		emit := func(m string, s float64) bool { res = append(res, el{m, s}); return true }
		switch rangetype {
		case zrangeRank:
			llen := int64(z.Len())
			if start < 0 {
				start += llen
			}
			if end < 0 {
				end += llen
			}
			if start < 0 {
				start = 0
			}
			if start > end || start >= llen {
				lengthHint = 0
				break
			}
			if end >= llen {
				end = llen - 1
			}
			lengthHint = end - start + 1
			res = make([]el, 0, lengthHint)
			z.ByRank(int(start), int(end), rev, emit)
		case zrangeScore, zrangeLex:
			if offset < 0 || (offset > 0 && offset >= int64(z.Len())) {
				break
			}
			lim := int(limit)
			if limit < 0 || limit > math.MaxInt32 {
				lim = -1
			}
			if rangetype == zrangeScore {
				z.RangeByScore(sr, rev, int(offset), lim, emit)
			} else {
				z.RangeByLex(lr, rev, int(offset), lim, emit)
			}
		}
	}
	if !store {
		if withscores && c.w.Proto < 3 {
			c.w.ArrayLen(2 * len(res))
		} else {
			c.w.ArrayLen(len(res))
		}
		for _, e := range res {
			if withscores && c.w.Proto >= 3 {
				c.w.ArrayLen(2)
			}
			c.w.BulkString(e.m)
			if withscores {
				c.w.Double(e.s)
			}
		}
		return
	}
	// ZRANGESTORE: zrangeResultBeginStore / FinalizeStore.
	dst := args[1]
	if len(res) == 0 {
		c.w.Int(0)
		c.selectedDB().LookupNoTouch(dst, c.srv.nowMs)
		if c.selectedDB().Delete(dst) {
			c.touch(dst)
			c.notify(configs.NotifyGeneric, "del", dst)
			c.srv.ks.Dirty++
		}
		return
	}
	cfg := &c.srv.ks.Encodings
	out := keyspace.NewZSet(lengthHint <= int64(cfg.ZSetMaxListpackEntries))
	for _, e := range res {
		c.zsetAddOne(out, []byte(e.m), e.s)
	}
	c.storeZSet(dst, out)
	c.w.Int(int64(len(res)))
	c.notify(configs.NotifyZset, "zrangestore", dst)
	c.srv.ks.Dirty++
}

// storeZSet is setKey(dst, z): the "new" event for a new key, the TTL
// removed, WATCH touched. z, just built, is handed over (DB.SetNew): the
// caller must not use it again.
func (c *Client) storeZSet(dst []byte, z *keyspace.ZSet) {
	if c.lookupKeyWrite(dst) == nil {
		c.notify(configs.NotifyNew, "new", dst)
	}
	c.selectedDB().SetNew(dst, z, c.srv.nowMs)
	c.touch(dst)
}

// --- ZREMRANGEBY* ---------------------------------------------------------------------

func zremrangeGeneric(c *Client, args [][]byte, rangetype int) {
	key := args[1]
	var start, end int64
	var sr keyspace.ScoreRange
	var lr keyspace.LexRange
	var ok bool
	switch rangetype {
	case zrangeRank:
		if start, ok = parseInt(args[2]); !ok {
			c.w.Error(ErrNotInteger)
			return
		}
		if end, ok = parseInt(args[3]); !ok {
			c.w.Error(ErrNotInteger)
			return
		}
	case zrangeScore:
		if sr, ok = parseScoreRange(args[2], args[3]); !ok {
			c.w.Error(ErrZMinMaxFloat)
			return
		}
	case zrangeLex:
		if lr, ok = parseLexRange(args[2], args[3]); !ok {
			c.w.Error(ErrZMinMaxLex)
			return
		}
	}
	z, e, ok := lookupWrite[*keyspace.ZSet](c, key)
	if !ok {
		return
	}
	if e == nil {
		c.w.Int(0)
		return
	}
	var deleted int
	switch rangetype {
	case zrangeRank:
		llen := int64(z.Len())
		if start < 0 {
			start += llen
		}
		if end < 0 {
			end += llen
		}
		if start < 0 {
			start = 0
		}
		if start > end || start >= llen {
			c.w.Int(0)
			return
		}
		if end >= llen {
			end = llen - 1
		}
		deleted = c.zsetMutable(key, e).RemoveRangeByRank(int(start), int(end))
	case zrangeScore:
		if z.CountByScore(sr) > 0 {
			deleted = c.zsetMutable(key, e).RemoveRangeByScore(sr)
		}
	case zrangeLex:
		if z.CountByLex(lr) > 0 {
			deleted = c.zsetMutable(key, e).RemoveRangeByLex(lr)
		}
	}
	if deleted > 0 {
		removed := c.zdeleteIfEmpty(key, e.Value().(*keyspace.ZSet))
		c.touch(key)
		ev := [...]string{zrangeRank: "zremrangebyrank", zrangeScore: "zremrangebyscore", zrangeLex: "zremrangebylex"}[rangetype]
		c.notify(configs.NotifyZset, ev, key)
		if removed {
			c.notify(configs.NotifyGeneric, "del", key)
		}
		c.srv.ks.Dirty += int64(deleted)
	}
	c.w.Int(int64(deleted))
}

// --- ZPOPMIN, ZPOPMAX, ZMPOP ------------------------------------------------------------

// zpopGeneric is genericZpopCommand: pops up to count (-1: one, flat reply)
// elements from the first non-empty key. emitKey prefixes the key (BZPOP*,
// ZMPOP); nested wraps each pair in an array. It reports whether it popped.
func zpopGeneric(c *Client, keys [][]byte, max, emitKey bool, count int64, nested, nilWhenEmpty bool) (popped bool, key []byte, n int64) {
	var z *keyspace.ZSet
	var e *keyspace.Entry
	for _, k := range keys {
		e = c.lookupKeyWrite(k)
		if e == nil {
			continue
		}
		var ok bool
		if z, ok = valueAs[*keyspace.ZSet](c, e); !ok {
			return false, nil, 0
		}
		key = k
		break
	}
	if z == nil {
		if nilWhenEmpty {
			c.w.NullArray()
		} else {
			c.w.ArrayLen(0)
		}
		return false, nil, 0
	}
	if count == 0 {
		c.w.ArrayLen(0)
		return false, nil, 0
	}
	if count == -1 {
		count = 1
	}
	rangelen := min(count, int64(z.Len()))
	switch {
	case !nested && !emitKey:
		c.w.ArrayLen(int(rangelen * 2))
	case nested && !emitKey:
		c.w.ArrayLen(int(rangelen))
	case !nested && emitKey:
		c.w.ArrayLen(int(rangelen*2 + 1))
		c.w.Bulk(key)
	default:
		c.w.ArrayLen(2)
		c.w.Bulk(key)
		c.w.ArrayLen(int(rangelen))
	}
	z = c.zsetMutable(key, e)
	for i := int64(0); i < rangelen; i++ {
		var m string
		var s float64
		z.ByRank(0, 0, max, func(mm string, ss float64) bool { m, s = mm, ss; return false })
		z.Remove([]byte(m))
		if nested {
			c.w.ArrayLen(2)
		}
		c.w.BulkString(m)
		c.w.Double(s)
	}
	ev := "zpopmin"
	if max {
		ev = "zpopmax"
	}
	c.notify(configs.NotifyZset, ev, key)
	if c.zdeleteIfEmpty(key, z) {
		c.notify(configs.NotifyGeneric, "del", key)
	}
	c.touch(key)
	c.srv.ks.Dirty += rangelen
	return true, key, rangelen
}

func zpopMinMax(c *Client, args [][]byte, max bool) {
	if len(args) > 3 {
		c.w.Error(ErrSyntax)
		return
	}
	count := int64(-1)
	if len(args) == 3 {
		n, ok := parseInt(args[2])
		if !ok || n < 0 {
			c.w.Error(ErrZMustBePositive)
			return
		}
		count = n
	}
	zpopGeneric(c, args[1:2], max, false, count, c.w.Proto > 2 && count != -1, false)
}

// parseZMPop parses [numkeys key... MIN|MAX [COUNT n]] from args[idx]:
// the keys, the side and the count.
func (c *Client) parseZMPop(args [][]byte, idx int) (keys [][]byte, max bool, count int64, ok bool) {
	numkeys, ok := parseInt(args[idx])
	if !ok || numkeys < 1 {
		c.w.Error(ErrZNumkeys)
		return nil, false, 0, false
	}
	whereIdx := int64(idx) + numkeys + 1
	if numkeys > int64(len(args)) || whereIdx >= int64(len(args)) {
		c.w.Error(ErrSyntax)
		return nil, false, 0, false
	}
	switch w := args[whereIdx]; {
	case eqFold(w, "min"):
	case eqFold(w, "max"):
		max = true
	default:
		c.w.Error(ErrSyntax)
		return nil, false, 0, false
	}
	count = -1
	for j := int(whereIdx) + 1; j < len(args); j++ {
		more := len(args) - 1 - j
		if count == -1 && eqFold(args[j], "count") && more > 0 {
			j++
			n, ok := parseInt(args[j])
			if !ok || n < 1 {
				c.w.Error(ErrZCount)
				return nil, false, 0, false
			}
			count = n
		} else {
			c.w.Error(ErrSyntax)
			return nil, false, 0, false
		}
	}
	if count == -1 {
		count = 1
	}
	return args[idx+1 : whereIdx], max, count, true
}

func cmdZMPop(c *Client, args [][]byte) {
	keys, max, count, ok := c.parseZMPop(args, 1)
	if !ok {
		return
	}
	popped, key, n := zpopGeneric(c, keys, max, true, count, true, true)
	if popped && c.srv.propagating() {
		c.rewriteArgv(zpopArgv(key, max, n)...)
	}
}

// zpopArgv is ZMPOP's propagated form: ZPOPMIN|ZPOPMAX key <popped count>.
func zpopArgv(key []byte, max bool, count int64) [][]byte {
	name := "ZPOPMIN"
	if max {
		name = "ZPOPMAX"
	}
	return [][]byte{[]byte(name), copyBytes(key), strconv.AppendInt(nil, count, 10)}
}

// --- BZPOPMIN, BZPOPMAX, BZMPOP ----------------------------------------------------------

// zpopServe returns the ServeFunc of a blocked BZPOP* (count -1) or BZMPOP
// (blockingGenericZpopCommand / serveClientBlockedOnSortedSet): it serves
// when key holds a sorted set, replies as the command and propagates
// ZPOPMIN|ZPOPMAX key [<popped count>] (count only for BZMPOP).
func zpopServe(max bool, count int64) ServeFunc {
	return func(c *Client, key []byte) bool {
		db := c.selectedDB()
		e := db.Peek(key)
		if e == nil || e.HasExpire() && c.srv.nowMs > db.ExpireAt(e) {
			return false
		}
		if z, ok := e.Value().(*keyspace.ZSet); !ok || z.Len() == 0 {
			return false
		}
		popped, k, n := zpopGeneric(c, [][]byte{key}, max, true, count, count != -1, true)
		if popped && c.srv.propagating() {
			argv := zpopArgv(k, max, n)
			if count == -1 {
				argv = argv[:2]
			}
			c.srv.alsoPropagate(c.db, TargetAll, argv...)
		}
		c.preventPropagation()
		return true
	}
}

// bzpopGeneric is bzpopminCommand / bzpopmaxCommand.
func bzpopGeneric(c *Client, args [][]byte, max bool) {
	s := c.srv
	deadline, ok := s.blockDeadline(c, args[len(args)-1], true)
	if !ok {
		return
	}
	keys := args[1 : len(args)-1]
	bzpopKeys(c, args, keys, deadline, max, -1)
}

// bzpopKeys serves from the first key holding a sorted set (WRONGTYPE on
// the first key of another type), else blocks.
func bzpopKeys(c *Client, args, keys [][]byte, deadline time.Time, max bool, count int64) {
	serve := zpopServe(max, count)
	for _, k := range keys {
		z, e, ok := lookupWrite[*keyspace.ZSet](c, k)
		if !ok {
			return
		}
		if e == nil {
			continue
		}
		if z.Len() > 0 && serve(c, k) {
			return
		}
	}
	c.blockOnKeys(c.srv.lookup(args[0]), keys, deadline, serve, nil)
}

// cmdBZMPop is bzmpopCommand: BZMPOP timeout numkeys key... MIN|MAX [COUNT n].
func cmdBZMPop(c *Client, args [][]byte) {
	deadline, ok := c.srv.blockDeadline(c, args[1], true)
	if !ok {
		return
	}
	keys, max, count, ok := c.parseZMPop(args, 2)
	if !ok {
		return
	}
	bzpopKeys(c, args, keys, deadline, max, count)
}

// --- ZUNION, ZINTER, ZDIFF and their STORE forms, ZINTERCARD ------------------------------

const (
	zopUnion = iota
	zopInter
	zopDiff
)

// setMembersForZ returns the members of a set value (score 1 in the zset
// operations, as zuiInitIterator over OBJ_SET).
var setMembersForZ = func(v keyspace.Value) (out []string) {
	v.(*keyspace.Set).Range(func(m keyspace.Member) bool { out = append(out, m.String()); return true })
	return out
}

type zsrc struct {
	z       *keyspace.ZSet
	set     []string // a set's members (setMembersForZ)
	setIdx  map[string]struct{}
	isSet   bool
	weight  float64
	present bool
}

func (s *zsrc) length() int {
	if s.isSet {
		return len(s.set)
	}
	if s.z == nil {
		return 0
	}
	return s.z.Len()
}

func (s *zsrc) forEach(fn func(m string, score float64)) {
	if s.isSet {
		for _, m := range s.set {
			fn(m, 1)
		}
		return
	}
	if s.z != nil {
		s.z.ForEach(func(m string, sc float64) bool { fn(m, sc); return true })
	}
}

func (s *zsrc) score(m string) (float64, bool) {
	if s.isSet {
		if s.setIdx == nil {
			s.setIdx = make(map[string]struct{}, len(s.set))
			for _, x := range s.set {
				s.setIdx[x] = struct{}{}
			}
		}
		_, ok := s.setIdx[m]
		return 1, ok
	}
	if s.z == nil {
		return 0, false
	}
	return s.z.Score([]byte(m))
}

const (
	aggSum = iota
	aggMin
	aggMax
)

func aggregate(target *float64, v float64, agg int) {
	switch agg {
	case aggSum:
		*target += v
		if math.IsNaN(*target) {
			*target = 0
		}
	case aggMin:
		if v < *target {
			*target = v
		}
	case aggMax:
		if v > *target {
			*target = v
		}
	}
}

// zsetOpGeneric is zunionInterDiffGenericCommand.
func zsetOpGeneric(c *Client, args [][]byte, dst []byte, numkeysIdx int, op int, cardOnly bool) {
	setnum, ok := parseInt(args[numkeysIdx])
	if !ok {
		c.w.Error(ErrNotInteger)
		return
	}
	if setnum < 1 {
		c.w.Error(sprintf1(ErrZAtLeastOneKey, c.cmdFullName(args)))
		return
	}
	if setnum > int64(len(args)-(numkeysIdx+1)) {
		c.w.Error(ErrSyntax)
		return
	}
	src := make([]zsrc, setnum)
	j := numkeysIdx + 1
	for i := range src {
		e := c.lookupKeyRead(args[j]) // a read even for the STORE forms (keymiss, stats)
		src[i].weight = 1
		if e != nil {
			switch v := e.Value().(type) {
			case *keyspace.ZSet:
				src[i].z = v
			default:
				if v.Type() == keyspace.TypeSet && setMembersForZ != nil {
					src[i].set = setMembersForZ(v)
					src[i].isSet = true
				} else {
					c.w.Error(ErrWrongType)
					return
				}
			}
		}
		j++
	}
	agg := aggSum
	withscores := false
	limit := int64(0)
	for j < len(args) {
		remaining := len(args) - j
		a := args[j]
		switch {
		case op != zopDiff && remaining >= int(setnum)+1 && eqFold(a, "weights"):
			j++
			for i := range src {
				w, ok := parseDouble(args[j])
				if !ok {
					c.w.Error(ErrZWeightFloat)
					return
				}
				src[i].weight = w
				j++
			}
		case op != zopDiff && remaining >= 2 && eqFold(a, "aggregate"):
			switch b := args[j+1]; {
			case eqFold(b, "sum"):
				agg = aggSum
			case eqFold(b, "min"):
				agg = aggMin
			case eqFold(b, "max"):
				agg = aggMax
			default:
				c.w.Error(ErrSyntax)
				return
			}
			j += 2
		case dst == nil && !cardOnly && eqFold(a, "withscores"):
			withscores = true
			j++
		case cardOnly && remaining >= 2 && eqFold(a, "limit"):
			// getPositiveLongFromObjectOrReply with its message: an
			// argument that is not an integer gets it too.
			n, ok := parseInt(args[j+1])
			if !ok || n < 0 {
				c.w.Error(ErrZLimitNegative)
				return
			}
			limit = n
			j += 2
		default:
			c.w.Error(ErrSyntax)
			return
		}
	}
	if op != zopDiff {
		sort.SliceStable(src, func(a, b int) bool { return src[a].length() < src[b].length() })
	}
	out := keyspace.NewZSet(false)
	// A listpack source's members are views of its buffer, which ZADD and
	// ZREM write in place (SetFound, RemoveArg): out, a skiplist that keeps
	// the strings it is given, gets copies of them when it is stored.
	keep := func(m string) string { return m }
	for i := range src {
		if dst != nil && src[i].z != nil && src[i].z.IsListpack() {
			keep = strings.Clone
			break
		}
	}
	var card int64
	switch op {
	case zopInter:
		if src[0].length() == 0 {
			break
		}
		src[0].forEach(func(m string, sc float64) {
			if cardOnly && limit > 0 && card >= limit {
				return
			}
			score := src[0].weight * sc
			if math.IsNaN(score) {
				score = 0
			}
			for k := 1; k < len(src); k++ {
				if src[k].z == nil && !src[k].isSet {
					return
				}
				// The same set twice: Redis iterates it once per source.
				v, ok := src[k].score(m)
				if !ok {
					return
				}
				// Unlike the first source's, a NaN product (0 * inf)
				// is not made 0 here, as in zunionInterDiffGenericCommand:
				// MIN and MAX then keep the score, SUM makes it 0.
				v *= src[k].weight
				aggregate(&score, v, agg)
			}
			if cardOnly {
				card++
				return
			}
			out.Set(keep(m), score)
		})
	case zopUnion:
		acc := map[string]float64{}
		var order []string
		for i := range src {
			src[i].forEach(func(m string, sc float64) {
				score := src[i].weight * sc
				if math.IsNaN(score) {
					score = 0
				}
				if cur, ok := acc[m]; ok {
					aggregate(&cur, score, agg)
					acc[m] = cur
				} else {
					acc[m] = score
					order = append(order, m)
				}
			})
		}
		for _, m := range order {
			out.Set(keep(m), acc[m])
		}
	case zopDiff:
		src[0].forEach(func(m string, sc float64) {
			for k := 1; k < len(src); k++ {
				if _, ok := src[k].score(m); ok {
					return
				}
			}
			out.Set(keep(m), sc)
		})
	}
	if cardOnly {
		c.w.Int(card)
		return
	}
	if dst != nil {
		if out.Len() > 0 {
			out.ConvertToListpackIfNeeded(c.srv.ks.Encodings)
			n := out.Len()
			c.storeZSet(dst, out) // out is the key's now: not used again
			c.w.Int(int64(n))
			ev := [...]string{zopUnion: "zunionstore", zopInter: "zinterstore", zopDiff: "zdiffstore"}[op]
			c.notify(configs.NotifyZset, ev, dst)
			c.srv.ks.Dirty++
		} else {
			c.w.Int(0)
			c.selectedDB().LookupNoTouch(dst, c.srv.nowMs)
			if c.selectedDB().Delete(dst) {
				c.touch(dst)
				c.notify(configs.NotifyGeneric, "del", dst)
				c.srv.ks.Dirty++
			}
		}
		return
	}
	n := out.Len()
	if withscores && c.w.Proto < 3 {
		c.w.ArrayLen(2 * n)
	} else {
		c.w.ArrayLen(n)
	}
	out.ForEach(func(m string, s float64) bool {
		if withscores && c.w.Proto >= 3 {
			c.w.ArrayLen(2)
		}
		c.w.BulkString(m)
		if withscores {
			c.w.Double(s)
		}
		return true
	})
}

// cmdFullName is the lower-case command name as Redis's c->cmd->fullname.
func (c *Client) cmdFullName(args [][]byte) string {
	b := make([]byte, len(args[0]))
	for i, x := range args[0] {
		if x >= 'A' && x <= 'Z' {
			x += 'a' - 'A'
		}
		b[i] = x
	}
	return string(b)
}

// sprintf1 replaces the single %s of format with s (no fmt on the error
// path's hot loop needed, but keeps the texts as Redis's formats).
func sprintf1(format, s string) string {
	for i := 0; i+1 < len(format); i++ {
		if format[i] == '%' && format[i+1] == 's' {
			return format[:i] + s + format[i+2:]
		}
	}
	return format
}

// --- ZRANDMEMBER, ZSCAN ---------------------------------------------------------------

func cmdZRandMember(c *Client, args [][]byte) {
	if len(args) >= 3 {
		l, ok := parseInt(args[2])
		if !ok {
			c.w.Error(ErrNotInteger)
			return
		}
		if l == math.MinInt64 {
			c.w.Error(ErrZRandRange)
			return
		}
		withscores := false
		if len(args) > 4 || (len(args) == 4 && !eqFold(args[3], "withscores")) {
			c.w.Error(ErrSyntax)
			return
		} else if len(args) == 4 {
			withscores = true
			if l < -math.MaxInt64/2 || l > math.MaxInt64/2 {
				c.w.Error(ErrZOutOfRange)
				return
			}
		}
		zrandWithCount(c, args[1], l, withscores)
		return
	}
	z, ok := lookupRead[*keyspace.ZSet](c, args[1])
	if !ok {
		return
	}
	if z == nil {
		c.w.Null()
		return
	}
	m, _ := z.Random(c.srv.rng)
	c.w.BulkString(m)
}

func zrandWithCount(c *Client, key []byte, l int64, withscores bool) {
	z, ok := lookupRead[*keyspace.ZSet](c, key)
	if !ok {
		return
	}
	if z == nil {
		c.w.ArrayLen(0)
		return
	}
	count, uniq := l, true
	if l < 0 {
		count, uniq = -l, false
	}
	if count == 0 {
		c.w.ArrayLen(0)
		return
	}
	reply := func(n int64, each func(fn func(m string, s float64))) {
		if withscores && c.w.Proto < 3 {
			c.w.ArrayLen(int(n * 2))
		} else {
			c.w.ArrayLen(int(n))
		}
		each(func(m string, s float64) {
			if withscores && c.w.Proto >= 3 {
				c.w.ArrayLen(2)
			}
			c.w.BulkString(m)
			if withscores {
				c.w.Double(s)
			}
		})
	}
	size := int64(z.Len())
	switch {
	case !uniq || count == 1:
		reply(count, func(fn func(string, float64)) {
			for i := int64(0); i < count; i++ {
				fn(z.Random(c.srv.rng))
				if (i+1)%hugeReplyCheckEvery == 0 && c.closeASAP() {
					break // closed for its output buffer (obuf.go)
				}
			}
		})
	case count >= size:
		// The whole set; Redis's listpack walk gives it from the tail (a
		// skiplist's order is its dict's: unordered).
		reply(size, func(fn func(string, float64)) {
			z.ByRank(0, int(size)-1, true, func(m string, s float64) bool { fn(m, s); return true })
		})
	default:
		// Distinct ranks: a partial Fisher-Yates over the rank space.
		picked := map[int]int{}
		ranks := make([]int, count)
		for i := 0; i < int(count); i++ {
			j := i + c.srv.rng.IntN(int(size)-i)
			vi, ok := picked[i]
			if !ok {
				vi = i
			}
			vj, ok := picked[j]
			if !ok {
				vj = j
			}
			picked[i], picked[j] = vj, vi
			ranks[i] = vj
		}
		reply(count, func(fn func(string, float64)) {
			for _, r := range ranks {
				z.ByRank(r, r, false, func(m string, s float64) bool { fn(m, s); return false })
			}
		})
	}
}

func cmdZScan(c *Client, args [][]byte) {
	cursor, ok := parseScanCursor(args[2])
	if !ok {
		c.w.Error(ErrInvalidCursor)
		return
	}
	z, ok := lookupRead[*keyspace.ZSet](c, args[1])
	if !ok {
		return
	}
	if z == nil {
		c.w.ArrayLen(2)
		c.w.BulkString("0")
		c.w.ArrayLen(0)
		return
	}
	count, pattern, usePattern, _, ok := c.parseScanOptions(args, 3, false)
	if !ok {
		return
	}
	if count > math.MaxInt32 {
		count = math.MaxInt32
	}
	var items []string
	next := z.Scan(cursor, int(count), func(m string, s float64) {
		if usePattern && !keyspace.GlobMatchString(pattern, m, false) {
			return
		}
		items = append(items, m, zscoreText(s))
	})
	c.w.ArrayLen(2)
	var tmp [20]byte
	c.w.Bulk(strconv.AppendUint(tmp[:0], next, 10))
	c.w.ArrayLen(len(items))
	for _, it := range items {
		c.w.BulkString(it)
	}
}

// zscoreText is a score as ZSCAN prints it (the listpack's d2string text;
// ld2string LD_STR_AUTO for a skiplist, identical for doubles).
func zscoreText(s float64) string { return keyspace.D2String(s) }
