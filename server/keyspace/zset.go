package keyspace

import (
	"cmp"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"unsafe"
)

// ZSet is a sorted set (OBJ_ZSET), as Redis 7.0's t_zset.c, in one of two
// encodings. A listpack (zset-max-listpack-entries elements of at most
// zset-max-listpack-value bytes) is one packed buffer of (score, member)
// entries in order (zsetpack.go): operations walk it linearly, as Redis's
// zzl* functions do. A skiplist is a skiplist with spans plus a member index
// (zsetSL, zskiplist.go). The conversion to skiplist is one-way, as
// zsetConvert; the STORE commands build a skiplist and convert it back when
// small (ConvertToListpackIfNeeded).
//
// The header is 16 bytes: a set of 5 short members costs it and a 64-byte
// buffer (it was a 144-byte header, a skiplist and an index, 850 bytes).
type ZSet struct {
	// p is the packed buffer's first byte (nil when empty), or the
	// *zsetSL when lpN is zsetSkiplist.
	p     unsafe.Pointer
	lpLen uint32 // packed: the buffer's bytes
	lpN   uint32 // packed: the number of elements; zsetSkiplist for a skiplist
}

// zsetSkiplist in ZSet.lpN marks the skiplist encoding.
const zsetSkiplist = math.MaxUint32

// NewZSet returns an empty sorted set, listpack-encoded when listpack is
// true (createZsetListpackObject) else skiplist (createZsetObject).
func NewZSet(listpack bool) *ZSet {
	if listpack {
		return &ZSet{}
	}
	return &ZSet{p: unsafe.Pointer(newZsetSL()), lpN: zsetSkiplist}
}

// NewZSetListpack returns a listpack sorted set of the elements
// (members[i], scores[i]), given in any order (an RDB's listpack), or false
// if a member repeats. The members' bytes are copied.
func NewZSetListpack(members [][]byte, scores []float64) (*ZSet, bool) {
	n := len(members)
	idx := make([]int32, n)
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortFunc(idx, func(a, b int32) int { return strings.Compare(string(members[a]), string(members[b])) })
	for i := 1; i < n; i++ {
		if string(members[idx[i-1]]) == string(members[idx[i]]) {
			return nil, false
		}
	}
	slices.SortFunc(idx, func(a, b int32) int {
		if c := cmp.Compare(scores[a], scores[b]); c != 0 {
			return c
		}
		return strings.Compare(string(members[a]), string(members[b]))
	})
	var lpBytes uint64
	size := 0
	for i, m := range members {
		lpBytes += zlpElemSize(unsafe.String(unsafe.SliceData(m), len(m)), scores[i])
		size += zpEntrySize(len(m), scores[i])
	}
	b := zpMake(uvarintLen(int(lpBytes)) + size)
	b = binary.AppendUvarint(b, lpBytes)
	for _, i := range idx {
		b = zpAppend(b, members[i], scores[i])
	}
	z := &ZSet{}
	z.lpSetBuf(b, n)
	return z, true
}

// sl is the skiplist encoding, nil for a listpack.
func (z *ZSet) sl() *zsetSL {
	if z.lpN == zsetSkiplist {
		return (*zsetSL)(z.p)
	}
	return nil
}

// Type is TypeZSet.
func (z *ZSet) Type() Type { return TypeZSet }

// Encoding is listpack or skiplist.
func (z *ZSet) Encoding() Encoding {
	if z.lpN == zsetSkiplist {
		return EncodingSkiplist
	}
	return EncodingListpack
}

// IsListpack reports the compact encoding.
func (z *ZSet) IsListpack() bool { return z.lpN != zsetSkiplist }

// ConvertToSkiplist is zsetConvert(zobj, OBJ_ENCODING_SKIPLIST): the
// elements are inserted in order, their members copied out of the buffer.
func (z *ZSet) ConvertToSkiplist() {
	if z.lpN == zsetSkiplist {
		return
	}
	sl := newZsetSL()
	z.lpForEach(func(m string, s float64) bool {
		sl.add(strings.Clone(m), s)
		return true
	})
	z.p, z.lpLen, z.lpN = unsafe.Pointer(sl), 0, zsetSkiplist
}

// ConvertToListpackIfNeeded is zsetConvertToListpackIfNeeded, used by the
// STORE commands on the skiplist they built.
func (z *ZSet) ConvertToListpackIfNeeded(cfg EncodingConfig) {
	sl := z.sl()
	if sl == nil || sl.zsl.length > cfg.ZSetMaxListpackEntries {
		return
	}
	var lpBytes uint64
	size := 0
	for n := sl.zsl.header.lv(0).forward; n != nil; n = n.lv(0).forward {
		if len(n.member) > cfg.ZSetMaxListpackValue {
			return
		}
		// -0 becomes the integer 0 (zzlInsertAt), in both sizes.
		lpBytes += zlpElemSize(n.member, n.score)
		size += zpEntrySize(len(n.member), n.score)
	}
	b := zpMake(uvarintLen(int(lpBytes)) + size)
	b = binary.AppendUvarint(b, lpBytes)
	for n := sl.zsl.header.lv(0).forward; n != nil; n = n.lv(0).forward {
		b = zpAppend(b, n.member, n.score)
	}
	z.lpSetBuf(b, sl.zsl.length)
}

// Len is the number of elements (zsetLength).
func (z *ZSet) Len() int {
	if sl := z.sl(); sl != nil {
		return sl.zsl.length
	}
	return int(z.lpN)
}

// Score returns member's score.
func (z *ZSet) Score(member []byte) (float64, bool) {
	if sl := z.sl(); sl != nil {
		return sl.score(member)
	}
	b := z.lpBuf()
	_, eo := zpHead(b)
	start, _, s := zpFind(b, eo, unsafe.String(unsafe.SliceData(member), len(member)))
	return s, start >= 0
}

// Set adds member with score or moves it to score (the caller has applied
// ZADD's rules and the conversion to skiplist). It reports whether the
// member is new. A listpack copies member's bytes, a skiplist keeps the
// string; a listpack stores -0 as 0.
func (z *ZSet) Set(member string, score float64) bool {
	if sl := z.sl(); sl != nil {
		return sl.set(member, score)
	}
	return z.lpSet(member, score)
}

// SetB is Set with member as bytes, copied only where the set keeps them
// (a listpack's buffer, a new member's skiplist node).
func (z *ZSet) SetB(member []byte, score float64) bool {
	if sl := z.sl(); sl != nil {
		if n := sl.dict.getB(member); n != nil {
			if n.score != score {
				sl.zsl.updateScore(n, score)
			}
			return false
		}
		sl.add(string(member), score)
		return true
	}
	return z.lpSet(unsafe.String(unsafe.SliceData(member), len(member)), score)
}

// ZRef is what Find learnt about a member: in a skiplist set, its node (nil
// when absent) and its hash, so that SetFound neither hashes nor looks it
// up again (zsetAdd's single dictFind); in a listpack set, the buffer it
// searched and the member's entry [lpStart, lpEnd) in it (lpStart -1 when
// absent) with its score, so that SetFound walks the buffer only for the
// insertion point (zsetAdd's single zzlFind before zzlInsert).
type ZRef struct {
	sl *zsetSL
	n  *zslNode
	h  uint32

	lp             unsafe.Pointer // the listpack buffer searched; nil: no listpack ref
	lpLen          uint32
	lpStart, lpEnd int32
	lpCur          float64
}

// Find is Score that also returns a ZRef for SetFound.
func (z *ZSet) Find(member []byte) (float64, ZRef, bool) {
	if sl := z.sl(); sl != nil {
		ref := ZRef{sl: sl, h: uint32(hashBytes(member))} // zindexHash of the same bytes
		if sl.dict.len() > 0 {
			ref.n = sl.dict.find(ref.h, unsafe.String(unsafe.SliceData(member), len(member)))
		}
		if ref.n == nil {
			return 0, ref, false
		}
		return ref.n.score, ref, true
	}
	b := z.lpBuf()
	_, eo := zpHead(b)
	start, end, s := zpFind(b, eo, unsafe.String(unsafe.SliceData(member), len(member)))
	ref := ZRef{lp: z.p, lpLen: z.lpLen, lpStart: int32(start), lpEnd: int32(end), lpCur: s}
	return s, ref, start >= 0
}

// SetFound is SetB for the member ref was found for by Find, with no write
// to z in between but a conversion to skiplist (after which, as for a
// listpack, it is SetB). It is ZADD's: member is an argument, not a view
// of z, and the caller holds no member string z handed out, so a listpack
// is written in place (lpSplice, as Redis's zzlInsert moves the tail).
func (z *ZSet) SetFound(ref ZRef, member []byte, score float64) bool {
	sl := z.sl()
	if sl == nil {
		if ref.lp == nil || ref.lp != z.p || ref.lpLen != z.lpLen {
			return z.SetB(member, score)
		}
		return z.lpSetAt(int(ref.lpStart), int(ref.lpEnd), ref.lpCur, unsafe.String(unsafe.SliceData(member), len(member)), score, true)
	}
	if ref.sl != sl {
		return z.SetB(member, score)
	}
	if ref.n != nil {
		if ref.n.score != score {
			sl.zsl.updateScore(ref.n, score)
		}
		return false
	}
	sl.dict.add(sl.zsl.insert(score, string(member), ref.h))
	sl.scanOrder = nil
	return true
}

// Remove deletes member.
func (z *ZSet) Remove(member []byte) bool {
	if sl := z.sl(); sl != nil {
		return sl.remove(member)
	}
	return z.lpRemove(member, false)
}

// RemoveArg is Remove for ZREM: member is an argument, not a view of z,
// and the caller holds no member string z handed out, so a listpack is
// written in place (lpSplice, as Redis's zzlDelete moves the tail).
func (z *ZSet) RemoveArg(member []byte) bool {
	if sl := z.sl(); sl != nil {
		return sl.remove(member)
	}
	return z.lpRemove(member, true)
}

// Rank is member's 0-based rank, from the lowest score (or the highest when
// rev).
func (z *ZSet) Rank(member []byte, rev bool) (int, bool) {
	if sl := z.sl(); sl != nil {
		return sl.rank(member, rev)
	}
	return z.lpRank(member, rev)
}

// ByRank calls fn for the elements of 0-based ranks start..end (both
// included, 0 <= start <= end < Len), in order, or reverse order when rev
// (ranks counted from the highest), until fn returns false.
func (z *ZSet) ByRank(start, end int, rev bool, fn func(member string, score float64) bool) {
	if sl := z.sl(); sl != nil {
		sl.rankRange(start, end, rev, fn)
		return
	}
	z.lpByRank(start, end, rev, fn)
}

// ScoreRange is zrangespec.
type ScoreRange struct {
	Min, Max     float64
	MinEx, MaxEx bool
}

func (r *ScoreRange) gteMin(v float64) bool {
	if r.MinEx {
		return v > r.Min
	}
	return v >= r.Min
}

func (r *ScoreRange) lteMax(v float64) bool {
	if r.MaxEx {
		return v < r.Max
	}
	return v <= r.Max
}

// Empty reports a range that can hold nothing (zslIsInRange's first test).
func (r *ScoreRange) Empty() bool {
	return r.Min > r.Max || (r.Min == r.Max && (r.MinEx || r.MaxEx))
}

// LexRange is zlexrangespec; Min/Max "-" and "+" are MinInf/MaxInf.
type LexRange struct {
	Min, Max       string
	MinEx, MaxEx   bool
	MinInf, MaxInf bool // "-" as min / "+" as max (also "+" as min, "-" as max, below)
	MinPlus        bool // min is "+": nothing is >= it
	MaxMinus       bool // max is "-": nothing is <= it
}

func (r *LexRange) gteMin(v string) bool {
	switch {
	case r.MinInf:
		return true
	case r.MinPlus:
		return false
	case r.MinEx:
		return v > r.Min
	}
	return v >= r.Min
}

func (r *LexRange) lteMax(v string) bool {
	switch {
	case r.MaxInf:
		return true
	case r.MaxMinus:
		return false
	case r.MaxEx:
		return v < r.Max
	}
	return v <= r.Max
}

// Empty is zslIsInLexRange's first test.
func (r *LexRange) Empty() bool {
	if r.MinPlus || r.MaxMinus {
		return true
	}
	if r.MinInf || r.MaxInf {
		return false
	}
	return r.Min > r.Max || (r.Min == r.Max && (r.MinEx || r.MaxEx))
}

// RangeByScore calls fn for the elements in r, ascending (descending when
// rev), skipping offset of them and giving at most limit (negative: all).
func (z *ZSet) RangeByScore(r ScoreRange, rev bool, offset, limit int, fn func(member string, score float64) bool) {
	if sl := z.sl(); sl != nil {
		sl.rangeByScore(r, rev, offset, limit, fn)
		return
	}
	z.lpRangeByScore(&r, rev, offset, limit, fn)
}

// RangeByLex is RangeByScore over a lexicographic range: forward from the
// first element in range while <= max, backward from the last while >= min
// (genericZrangebylexCommand). Lex ranges assume equal scores; with mixed
// scores Redis's answers depend on the walk, which is reproduced: a
// listpack is walked linearly, a skiplist searched.
func (z *ZSet) RangeByLex(r LexRange, rev bool, offset, limit int, fn func(member string, score float64) bool) {
	if sl := z.sl(); sl != nil {
		sl.rangeByLex(r, rev, offset, limit, fn)
		return
	}
	z.lpRangeByLex(&r, rev, offset, limit, fn)
}

// CountByScore is ZCOUNT: a skiplist subtracts ranks (O(log n)), a
// listpack counts.
func (z *ZSet) CountByScore(r ScoreRange) int {
	if sl := z.sl(); sl != nil {
		return sl.countByScore(r)
	}
	b := z.lpBuf()
	_, eo := zpHead(b)
	_, _, n := z.lpScoreSpan(b, eo, &r)
	return n
}

// CountByLex is ZLEXCOUNT: a listpack counts from the first element in
// range while <= max, a skiplist subtracts ranks.
func (z *ZSet) CountByLex(r LexRange) int {
	if sl := z.sl(); sl != nil {
		return sl.countByLex(r)
	}
	b := z.lpBuf()
	_, eo := zpHead(b)
	_, _, n := z.lpLexSpan(b, eo, &r)
	return n
}

// RemoveRangeByScore is ZREMRANGEBYSCORE; it returns the number removed.
func (z *ZSet) RemoveRangeByScore(r ScoreRange) int {
	if sl := z.sl(); sl != nil {
		return sl.removeRangeByScore(r)
	}
	b := z.lpBuf()
	_, eo := zpHead(b)
	ds, de, n := z.lpScoreSpan(b, eo, &r)
	return z.lpDelete(b, eo, ds, de, n, false)
}

// RemoveRangeByLex is ZREMRANGEBYLEX.
func (z *ZSet) RemoveRangeByLex(r LexRange) int {
	if sl := z.sl(); sl != nil {
		return sl.removeRangeByLex(r)
	}
	b := z.lpBuf()
	_, eo := zpHead(b)
	ds, de, n := z.lpLexSpan(b, eo, &r)
	return z.lpDelete(b, eo, ds, de, n, false)
}

// RemoveRangeByRank is ZREMRANGEBYRANK over 0-based start..end (valid).
func (z *ZSet) RemoveRangeByRank(start, end int) int {
	if sl := z.sl(); sl != nil {
		return sl.removeRangeByRank(start, end)
	}
	return z.lpRemoveRangeByRank(start, end)
}

// ForEach calls fn for every element in order until it returns false.
func (z *ZSet) ForEach(fn func(member string, score float64) bool) {
	if sl := z.sl(); sl != nil {
		sl.forEach(fn)
		return
	}
	z.lpForEach(fn)
}

// Random returns a uniformly chosen element (the set is not empty).
func (z *ZSet) Random(rng *rand.Rand) (string, float64) {
	if sl := z.sl(); sl != nil {
		return sl.random(rng)
	}
	return z.lpAt(rng.IntN(int(z.lpN)))
}

// Scan is ZSCAN's iteration. A listpack set returns every element and
// cursor 0 in one call, as Redis. A skiplist set is walked in the order of
// its members' hashes (zsetSL.scan).
func (z *ZSet) Scan(cursor uint64, count int, fn func(member string, score float64)) uint64 {
	if sl := z.sl(); sl != nil {
		return sl.scan(cursor, count, fn)
	}
	z.lpForEach(func(m string, s float64) bool { fn(m, s); return true })
	return 0
}

// Dup is zsetDup. A listpack shares its buffer, which is never written
// again; a skiplist is rebuilt.
func (z *ZSet) Dup() Value {
	sl := z.sl()
	if sl == nil {
		d := *z
		if b := z.lpBuf(); len(b) > 0 {
			d.p = unsafe.Pointer(unsafe.SliceData(append(zpMake(len(b)), b...)))
		}
		return &d
	}
	d := NewZSet(false)
	dsl := d.sl()
	sl.forEach(func(m string, s float64) bool { dsl.add(m, s); return true })
	return d
}

// Size is objectComputeSize: the listpack's exact bytes, or for a skiplist
// the structures plus the average element (zsetSL.size).
func (z *ZSet) Size(samples int) uint64 {
	if sl := z.sl(); sl != nil {
		return sl.size(samples)
	}
	lpBytes, _ := zpHead(z.lpBuf())
	return RobjSize + JemallocSize(7+lpBytes) // header + entries + end
}

// zlpElemSize is the bytes of one element's two listpack entries: the
// member, and the score as zzlInsertAt stores it (an integer when
// double2ll takes it, else D2String's text).
func zlpElemSize(member string, score float64) uint64 {
	n := zlpEntrySize(member)
	if score >= -math.MaxInt64/2 && score <= math.MaxInt64/2 && score == math.Trunc(score) {
		return n + zlpBacklen(zlpIntSize(int64(score)))
	}
	return n + zlpEntrySize(D2String(score))
}

// zlpEntrySize is the bytes of one listpack entry holding s (lpInsert:
// integers in their smallest encoding, else a string, plus the backlen).
func zlpEntrySize(s string) uint64 {
	if v, ok := string2llString(s); ok {
		return zlpBacklen(zlpIntSize(v))
	}
	var l uint64
	n := uint64(len(s))
	switch {
	case n < 64:
		l = 1 + n
	case n < 4096:
		l = 2 + n
	default:
		l = 5 + n
	}
	return zlpBacklen(l)
}

// zlpIntSize is the bytes of the encoding of the integer v in a listpack.
func zlpIntSize(v int64) uint64 {
	switch {
	case v >= 0 && v <= 127:
		return 1
	case v >= -4096 && v <= 4095:
		return 2
	case v >= math.MinInt16 && v <= math.MaxInt16:
		return 3
	case v >= -1<<23 && v < 1<<23:
		return 4
	case v >= math.MinInt32 && v <= math.MaxInt32:
		return 5
	}
	return 9
}

// zlpBacklen is an entry of l encoded bytes with its backlen.
func zlpBacklen(l uint64) uint64 {
	switch {
	case l <= 127:
		return l + 1
	case l < 16383:
		return l + 2
	case l < 2097151:
		return l + 3
	case l < 268435455:
		return l + 4
	}
	return l + 5
}

// D2String is util.c's D2String as 7.0 uses it for listpack scores.
func D2String(v float64) string {
	switch {
	case math.IsNaN(v):
		return "nan"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	case v == 0:
		if math.Signbit(v) {
			return "-0"
		}
		return "0"
	case v > -4503599627370495 && v < 4503599627370496 && v == math.Trunc(v):
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'g', 17, 64)
}
