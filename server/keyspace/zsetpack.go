package keyspace

import (
	"encoding/binary"
	"math"
	"unsafe"
)

// The packed encoding of a small sorted set (Redis's listpack zset, the
// zzl* functions of t_zset.c).
//
// The buffer is uvarint(lpBytes), the size the listpack's entries would
// take in Redis (for MEMORY USAGE), then the elements in (score, member)
// order, each
//
//	uvarint(len(member)<<2 | form)  member  score
//
// where the score is a uvarint when form is zpUint (an integer >= 0) or
// zpNeg (the absolute value of a negative integer), else the float64's 8
// bytes, little-endian (zpFloat). Integers are those of magnitude below
// 2^48, -0 included (stored as 0: a listpack stores -0 as the integer 0, as
// zzlInsertAt's double2ll does). A set of 5 members of 8 bytes with scores
// below 2^21 takes 61 bytes.
//
// A buffer's entries are never written once made, but by ZADD and ZREM: a
// change builds a new buffer, so the member strings handed out (views into
// the buffer) stay valid. ZADD and ZREM (SetFound, RemoveArg), whose
// members are their arguments and which hold no view, move the tail within
// the allocation as Redis's lpInsert/lpDelete do (lpSplice); whatever keeps
// a member string beyond the command that read it (a stored result) copies
// it. The other exception writes no byte anyone has seen but the lpBytes
// prefix: an entry
// going last is appended in place when the buffer's allocation, always its
// size class (zpCap), has room and lpBytes keeps its width (lpInsert's
// realloc within a jemalloc size class). A load that adds members in score
// order then drops no buffer per ZADD (those dead buffers, interleaved with
// live objects, were most of the RSS above Redis's for many small sorted
// sets). Dup copies the buffer, since the copy's owner may append in place.
const (
	zpUint  = 0
	zpNeg   = 1
	zpFloat = 2

	zpIntLimit = 1 << 48
)

// zpForm is how score is stored: its form and the uvarint (or the
// float64's bits).
func zpForm(score float64) (form, u uint64) {
	if score > -zpIntLimit && score < zpIntLimit && score == math.Trunc(score) {
		if score >= 0 {
			return zpUint, uint64(score)
		}
		return zpNeg, uint64(-score)
	}
	return zpFloat, math.Float64bits(score)
}

// zpEntrySize is the bytes of the entry of a member of mlen bytes at score.
func zpEntrySize(mlen int, score float64) int {
	form, u := zpForm(score)
	n := uvarintLen(mlen<<2|int(form)) + mlen
	if form == zpFloat {
		return n + 8
	}
	return n + uvarintLen(int(u))
}

// zpAppend appends the entry of member at score to b.
func zpAppend[M ~string | ~[]byte](b []byte, member M, score float64) []byte {
	form, u := zpForm(score)
	b = binary.AppendUvarint(b, uint64(len(member))<<2|form)
	b = append(b, member...)
	if form == zpFloat {
		return binary.LittleEndian.AppendUint64(b, u)
	}
	return binary.AppendUvarint(b, u)
}

// zpUvarint reads the uvarint at off and returns it and the offset past it.
func zpUvarint(b []byte, off int) (uint64, int) {
	if c := b[off]; c < 0x80 {
		return uint64(c), off + 1
	}
	return zpUvarintLong(b, off)
}

// zpUvarintLong is zpUvarint of a uvarint of two bytes or more: the hot
// loops (zpFind, zpInsertPos) read a one-byte header inline and call this
// for a longer one.
func zpUvarintLong(b []byte, off int) (uint64, int) {
	v, k := binary.Uvarint(b[off:])
	return v, off + k
}

// zpScore reads the score of the given form at off.
func zpScore(b []byte, off int, form uint64) (float64, int) {
	if form == zpFloat {
		return math.Float64frombits(binary.LittleEndian.Uint64(b[off:])), off + 8
	}
	u, next := zpUvarint(b, off)
	if form == zpNeg {
		return -float64(u), next
	}
	return float64(u), next
}

// zpSkipScore returns the offset past the score of the given form at off.
func zpSkipScore(b []byte, off int, form uint64) int {
	if form == zpFloat {
		return off + 8
	}
	for b[off] >= 0x80 {
		off++
	}
	return off + 1
}

// zpMember reads the header and member of the entry at off: the member (a
// view into b), the score's form and its offset.
func zpMember(b []byte, off int) (member string, form uint64, at int) {
	h, off := zpUvarint(b, off)
	ml := int(h >> 2)
	if ml > 0 {
		member = unsafe.String(&b[off], ml)
	}
	return member, h & 3, off + ml
}

// zpNext reads the entry at off: its member (a view into b), its score and
// the offset of the next entry.
func zpNext(b []byte, off int) (member string, score float64, next int) {
	member, form, at := zpMember(b, off)
	score, next = zpScore(b, at, form)
	return member, score, next
}

// zpHead is the buffer's lpBytes and the offset of its first entry.
func zpHead(b []byte) (lpBytes uint64, eo int) {
	if len(b) == 0 {
		return 0, 0
	}
	return zpUvarint(b, 0)
}

// zpFind returns the offsets [start, end) of member's entry in b (entries
// from off) and its score, or start -1 (zzlFind).
//
// It is the hot loop of ZADD and ZREM on a listpack: a member of the right
// length is compared first on its last byte, where members that share a
// prefix ("element:1234") differ, before all of it.
func zpFind(b []byte, off int, member string) (start, end int, score float64) {
	ml := len(member)
	var last byte
	if ml > 0 {
		last = member[ml-1]
	}
	for off < len(b) {
		start := off
		h, o := uint64(b[off]), off+1
		if h >= 0x80 {
			h, o = zpUvarintLong(b, off)
		}
		l := int(h >> 2)
		if l == ml && (ml == 0 || b[o+ml-1] == last && string(b[o:o+ml]) == member) {
			s, next := zpScore(b, o+ml, h&3)
			return start, next, s
		}
		off = zpSkipScore(b, o+l, h&3)
	}
	return -1, 0, 0
}

// zpInsertPos is where (score, member) goes among b's entries from off:
// before the first that sorts after it (zzlInsert), the entry at skip (the
// member's own, being moved) aside.
func zpInsertPos(b []byte, off int, member string, score float64, skip int) int {
	for off < len(b) {
		h, o := uint64(b[off]), off+1
		if h >= 0x80 {
			h, o = zpUvarintLong(b, off)
		}
		at := o + int(h>>2)
		s, next := zpScore(b, at, h&3)
		if off != skip && (s > score || s == score && string(b[o:at]) > member) {
			return off
		}
		off = next
	}
	return len(b)
}

// zpOffsets appends the offset of each entry of b from eo to offs.
func zpOffsets(b []byte, eo int, offs []int) []int {
	for off := eo; off < len(b); {
		offs = append(offs, off)
		_, form, at := zpMember(b, off)
		off = zpSkipScore(b, at, form)
	}
	return offs
}

// zpCap is the capacity a buffer of size bytes is allocated with: its Go
// size class, so that the capacity need not be stored (it is
// zpCap(lpLen)). Buffers above 32 KiB (possible only with a raised
// zset-max-listpack-entries) are allocated exactly and never appended to
// in place.
func zpCap(size int) int {
	if size > zpMaxInPlace {
		return size
	}
	return intsetAlloc(size)
}

// zpMaxInPlace is the largest buffer appended to in place: the largest Go
// size class, where zpCap is intsetAlloc.
const zpMaxInPlace = 32768

// zpMake returns an empty buffer with zpCap(size) capacity.
func zpMake(size int) []byte { return make([]byte, 0, zpCap(size)) }

// lpAppendInPlace appends the entry of member at score to the buffer b
// (entries from eo) in its spare capacity, the lpBytes prefix rewritten
// to nlp, and reports whether it could (room in the allocation, nlp as
// wide as the old lpBytes).
func (z *ZSet) lpAppendInPlace(b []byte, eo int, nlp uint64, member string, score float64) bool {
	need := len(b) + zpEntrySize(len(member), score)
	if len(b) == 0 || need > zpMaxInPlace || need > zpCap(len(b)) || uvarintLen(int(nlp)) != eo {
		return false
	}
	nb := unsafe.Slice((*byte)(z.p), zpCap(len(b)))[:len(b)]
	binary.PutUvarint(nb, nlp)
	z.lpSetBuf(zpAppend(nb, member, score), int(z.lpN)+1)
	return true
}

// lpBuf is the packed buffer (nil when empty).
func (z *ZSet) lpBuf() []byte {
	if z.p == nil {
		return nil
	}
	return unsafe.Slice((*byte)(z.p), z.lpLen)
}

// lpSetBuf makes b, holding n elements, the buffer.
func (z *ZSet) lpSetBuf(b []byte, n int) {
	if n == 0 {
		z.p, z.lpLen, z.lpN = nil, 0, 0
		return
	}
	z.p, z.lpLen, z.lpN = unsafe.Pointer(unsafe.SliceData(b)), uint32(len(b)), uint32(n)
}

// lpRebuild replaces the buffer b (entries from eo) by a new one without
// the entries [ds, de) and, when ins, with the entry of member at score
// inserted at ia (ia <= ds or ia >= de), of lpBytes and n elements.
func (z *ZSet) lpRebuild(b []byte, eo, ds, de, ia int, ins bool, member string, score float64, lpBytes uint64, n int) {
	if n == 0 {
		z.lpSetBuf(nil, 0)
		return
	}
	size := uvarintLen(int(lpBytes)) + len(b) - eo - (de - ds)
	if ins {
		size += zpEntrySize(len(member), score)
	} else {
		ia = ds
	}
	nb := zpMake(size)
	nb = binary.AppendUvarint(nb, lpBytes)
	if ia <= ds {
		nb = append(nb, b[eo:ia]...)
		if ins {
			nb = zpAppend(nb, member, score)
		}
		nb = append(nb, b[ia:ds]...)
		nb = append(nb, b[de:]...)
	} else {
		nb = append(nb, b[eo:ds]...)
		nb = append(nb, b[de:ia]...)
		nb = zpAppend(nb, member, score)
		nb = append(nb, b[ia:]...)
	}
	z.lpSetBuf(nb, n)
}

// lpSet is Set on the packed encoding (zzlDelete and zzlInsert when the
// score of a member changes).
func (z *ZSet) lpSet(member string, score float64) bool {
	b := z.lpBuf()
	_, eo := zpHead(b)
	start, end, cur := zpFind(b, eo, member)
	return z.lpSetAt(start, end, cur, member, score, false)
}

// lpSetAt is lpSet once member's entry is known to be [start, end) of the
// buffer, at score cur, or absent (start -1). inPlace lets it write the
// buffer in place (lpSplice).
func (z *ZSet) lpSetAt(start, end int, cur float64, member string, score float64, inPlace bool) bool {
	b := z.lpBuf()
	lpBytes, eo := zpHead(b)
	if start >= 0 {
		if cur != score {
			lpBytes = lpBytes - zlpElemSize(member, cur) + zlpElemSize(member, score)
			ia := zpInsertPos(b, eo, member, score, start)
			z.lpWrite(inPlace, b, eo, start, end, ia, true, member, score, lpBytes, int(z.lpN))
		}
		return false
	}
	ia := zpInsertPos(b, eo, member, score, -1)
	nlp := lpBytes + zlpElemSize(member, score)
	if !inPlace && ia == len(b) && z.lpAppendInPlace(b, eo, nlp, member, score) {
		return true
	}
	z.lpWrite(inPlace, b, eo, ia, ia, ia, true, member, score, nlp, int(z.lpN)+1)
	return true
}

// lpWrite is lpSplice when inPlace and it can, else lpRebuild (same
// arguments).
func (z *ZSet) lpWrite(inPlace bool, b []byte, eo, ds, de, ia int, ins bool, member string, score float64, lpBytes uint64, n int) {
	if !inPlace || !z.lpSplice(b, eo, ds, de, ia, ins, member, score, lpBytes, n) {
		z.lpRebuild(b, eo, ds, de, ia, ins, member, score, lpBytes, n)
	}
}

// lpSplice is lpRebuild done in the buffer itself, as lpInsert and
// lpDelete memmove a listpack's tail within its allocation: the entries
// [ds, de) are removed and, when ins, the entry of member at score is
// written at ia (ia <= ds or ia >= de), the lpBytes prefix rewritten. It
// reports false, having written nothing, when it cannot: the result would
// not fit the allocation (zpCap(len(b)): always at most the allocation, as
// the buffer's length only moves within it), lpBytes changes width, or the
// set becomes empty.
//
// Unlike every other write of a listpack it overwrites bytes that member
// strings handed out by the set may view (zpNext, the range walks): only
// ZADD and ZREM call it (SetFound, RemoveArg), whose members are their
// arguments, with no view of the set held (replies, propagated commands
// and stored results copy what they keep). A snapshot's value is never
// the one written: Mutable copies it first.
func (z *ZSet) lpSplice(b []byte, eo, ds, de, ia int, ins bool, member string, score float64, lpBytes uint64, n int) bool {
	if n == 0 || len(b) == 0 || uvarintLen(int(lpBytes)) != eo {
		return false
	}
	es := 0
	if ins {
		es = zpEntrySize(len(member), score)
	} else {
		ia = ds
	}
	del := de - ds
	size := len(b) - del + es
	capacity := zpCap(len(b))
	if size > capacity {
		return false
	}
	nb := unsafe.Slice((*byte)(z.p), capacity)[:max(len(b), size)]
	at := ia
	if ia <= ds {
		// [eo, ia) stays; [ia, ds) moves up by es; [de, end) moves to ds+es.
		// The tail first: it writes at ds+es or above, clear of [ia, ds).
		copy(nb[ds+es:], b[de:])
		copy(nb[ia+es:ds+es], b[ia:ds])
	} else {
		// [eo, ds) stays; [de, ia) moves down to ds; [ia, end) moves to
		// ia-del+es. Whichever moves away from the other goes first.
		at = ia - del
		if es >= del {
			copy(nb[at+es:], b[ia:])
			copy(nb[ds:at], b[de:ia])
		} else {
			copy(nb[ds:at], b[de:ia])
			copy(nb[at+es:], b[ia:])
		}
	}
	if ins {
		zpAppend(nb[at:at], member, score)
	}
	binary.PutUvarint(nb, lpBytes)
	z.lpSetBuf(nb[:size], n)
	return true
}

// lpDelete removes the entries [ds, de) of b (count of them), in place
// when inPlace and it can (lpSplice).
func (z *ZSet) lpDelete(b []byte, eo, ds, de, count int, inPlace bool) int {
	if count == 0 {
		return 0
	}
	lpBytes, _ := zpHead(b)
	for off := ds; off < de; {
		m, s, next := zpNext(b, off)
		lpBytes -= zlpElemSize(m, s)
		off = next
	}
	z.lpWrite(inPlace, b, eo, ds, de, 0, false, "", 0, lpBytes, int(z.lpN)-count)
	return count
}

func (z *ZSet) lpRemove(member []byte, inPlace bool) bool {
	b := z.lpBuf()
	_, eo := zpHead(b)
	start, end, _ := zpFind(b, eo, unsafe.String(unsafe.SliceData(member), len(member)))
	if start < 0 {
		return false
	}
	z.lpDelete(b, eo, start, end, 1, inPlace)
	return true
}

func (z *ZSet) lpRank(member []byte, rev bool) (int, bool) {
	b := z.lpBuf()
	_, eo := zpHead(b)
	r := 0
	for off := eo; off < len(b); r++ {
		m, form, at := zpMember(b, off)
		if m == string(member) {
			if rev {
				r = int(z.lpN) - 1 - r
			}
			return r, true
		}
		off = zpSkipScore(b, at, form)
	}
	return 0, false
}

func (z *ZSet) lpByRank(start, end int, rev bool, fn func(member string, score float64) bool) {
	b := z.lpBuf()
	_, eo := zpHead(b)
	if rev {
		var a [128]int
		offs := zpOffsets(b, eo, a[:0])
		for r := start; r <= end && r < len(offs); r++ {
			m, s, _ := zpNext(b, offs[len(offs)-1-r])
			if !fn(m, s) {
				return
			}
		}
		return
	}
	i := 0
	for off := eo; off < len(b) && i <= end; i++ {
		m, s, next := zpNext(b, off)
		if i >= start && !fn(m, s) {
			return
		}
		off = next
	}
}

// lpRangeByScore is zzlFirstInRange / zzlLastInRange and the walk from
// there (genericZrangebyscoreCommand).
func (z *ZSet) lpRangeByScore(r *ScoreRange, rev bool, offset, limit int, fn func(member string, score float64) bool) {
	if r.Empty() || z.lpN == 0 {
		return
	}
	b := z.lpBuf()
	_, eo := zpHead(b)
	emit := func(m string, s float64) bool {
		if offset > 0 {
			offset--
			return true
		}
		if limit == 0 || !fn(m, s) {
			return false
		}
		if limit > 0 {
			limit--
		}
		return limit != 0
	}
	if rev {
		var a [128]int
		offs := zpOffsets(b, eo, a[:0])
		for i := len(offs) - 1; i >= 0; i-- {
			m, s, _ := zpNext(b, offs[i])
			if !r.lteMax(s) {
				continue
			}
			if !r.gteMin(s) || !emit(m, s) {
				return
			}
		}
		return
	}
	for off := eo; off < len(b); {
		m, s, next := zpNext(b, off)
		off = next
		if !r.gteMin(s) {
			continue
		}
		if !r.lteMax(s) || !emit(m, s) {
			return
		}
	}
}

// lpScoreSpan is the entries in r: their offsets [ds, de) and count.
func (z *ZSet) lpScoreSpan(b []byte, eo int, r *ScoreRange) (ds, de, count int) {
	ds, de = -1, -1
	if r.Empty() {
		return 0, 0, 0
	}
	for off := eo; off < len(b); {
		_, s, next := zpNext(b, off)
		if r.gteMin(s) {
			if !r.lteMax(s) {
				break
			}
			if ds < 0 {
				ds = off
			}
			de = next
			count++
		}
		off = next
	}
	if count == 0 {
		return 0, 0, 0
	}
	return ds, de, count
}

// lpLexInRange is zzlIsInLexRange: r may hold elements of the set whose
// entries start at offs.
func lpLexInRange(b []byte, offs []int, r *LexRange) bool {
	if r.Empty() || len(offs) == 0 {
		return false
	}
	last, _, _ := zpMember(b, offs[len(offs)-1])
	first, _, _ := zpMember(b, offs[0])
	return r.gteMin(last) && r.lteMax(first)
}

// lpLexFirst is zzlFirstInLexRange: the index (in offs) of the first
// element >= min, walking from the head, if it is <= max; -1 if none.
// Lex ranges assume equal scores; with mixed scores this linear walk is
// what decides Redis's answer for a listpack, and it is reproduced.
func lpLexFirst(b []byte, offs []int, r *LexRange) int {
	if !lpLexInRange(b, offs, r) {
		return -1
	}
	for i, off := range offs {
		if m, _, _ := zpMember(b, off); r.gteMin(m) {
			if !r.lteMax(m) {
				return -1
			}
			return i
		}
	}
	return -1
}

// lpLexLast is zzlLastInLexRange: lpLexFirst walking from the tail.
func lpLexLast(b []byte, offs []int, r *LexRange) int {
	if !lpLexInRange(b, offs, r) {
		return -1
	}
	for i := len(offs) - 1; i >= 0; i-- {
		if m, _, _ := zpMember(b, offs[i]); r.lteMax(m) {
			if !r.gteMin(m) {
				return -1
			}
			return i
		}
	}
	return -1
}

func (z *ZSet) lpRangeByLex(r *LexRange, rev bool, offset, limit int, fn func(member string, score float64) bool) {
	b := z.lpBuf()
	_, eo := zpHead(b)
	var a [128]int
	offs := zpOffsets(b, eo, a[:0])
	step, i := 1, lpLexFirst(b, offs, r)
	if rev {
		step, i = -1, lpLexLast(b, offs, r)
	}
	if i < 0 {
		return
	}
	for ; i >= 0 && i < len(offs) && offset > 0; i += step {
		offset--
	}
	for ; i >= 0 && i < len(offs) && limit != 0; i += step {
		m, s, _ := zpNext(b, offs[i])
		if rev && !r.gteMin(m) || !rev && !r.lteMax(m) {
			return
		}
		if !fn(m, s) {
			return
		}
		if limit > 0 {
			limit--
		}
	}
}

// lpLexSpan is the entries from the first in r while <= max (zzlLexCount,
// zzlDeleteRangeByLex): their offsets [ds, de) and count.
func (z *ZSet) lpLexSpan(b []byte, eo int, r *LexRange) (ds, de, count int) {
	var a [128]int
	offs := zpOffsets(b, eo, a[:0])
	i := lpLexFirst(b, offs, r)
	if i < 0 {
		return 0, 0, 0
	}
	ds = offs[i]
	for ; i < len(offs); i++ {
		m, form, at := zpMember(b, offs[i])
		if !r.lteMax(m) {
			break
		}
		de = zpSkipScore(b, at, form)
		count++
	}
	return ds, de, count
}

func (z *ZSet) lpRemoveRangeByRank(start, end int) int {
	b := z.lpBuf()
	_, eo := zpHead(b)
	ds, de := -1, -1
	i := 0
	for off := eo; off < len(b) && i <= end; i++ {
		_, form, at := zpMember(b, off)
		next := zpSkipScore(b, at, form)
		if i == start {
			ds = off
		}
		de = next
		off = next
	}
	if ds < 0 {
		return 0
	}
	return z.lpDelete(b, eo, ds, de, min(end, i-1)-start+1, false)
}

func (z *ZSet) lpForEach(fn func(member string, score float64) bool) {
	b := z.lpBuf()
	_, eo := zpHead(b)
	for off := eo; off < len(b); {
		m, s, next := zpNext(b, off)
		if !fn(m, s) {
			return
		}
		off = next
	}
}

// lpAt returns the element of index i (0 <= i < Len).
func (z *ZSet) lpAt(i int) (string, float64) {
	b := z.lpBuf()
	_, off := zpHead(b)
	for ; i > 0; i-- {
		_, form, at := zpMember(b, off)
		off = zpSkipScore(b, at, form)
	}
	m, s, _ := zpNext(b, off)
	return m, s
}
