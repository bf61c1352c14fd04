package keyspace

import "math/bits"

// A List's elements are packed in chunks, as Redis packs a quicklist's in
// listpacks: each chunk is one []byte holding a run of consecutive
// elements as entries
//
//	uvarint(len) | bytes | backlen
//
// where backlen is the same uvarint with its bytes reversed, so that the
// entry before a position is found by reading backwards (as listpack's
// lpEncodeBacklen). A chunk's entries are c.b[c.lo:c.hi]; the room before
// lo and after hi lets pushes at either end write in place. A chunk of
// more than one entry holds at most chunkMax bytes; a bigger element gets
// a chunk of its own. No element is a separate allocation and the chunks
// hold no pointers for the GC to scan but their own.
//
// The chunks' layout is Vigil's own: the shadow nodes (List.nodes) model
// Redis's quicklist for MEMORY USAGE and the RDB, whatever the chunks are.

const (
	chunkMax = 4096 // bytes of a chunk of more than one entry
	chunkMin = 16   // smallest chunk allocation
	// relocMax: a chunk at an end of the list whose free room is on the
	// wrong side is moved (or grown) only while its bytes stay below
	// this, so that a move buys room for many pushes; past it the push
	// starts a new chunk.
	relocMax = chunkMax - chunkMax/8
)

// lchunk is one chunk: its buffer (len(b) == cap(b)), the entries'
// bounds in it, their count, and the coordinate of its first element (see
// List.base).
type lchunk struct {
	b      []byte
	lo, hi int
	cnt    int
	start  int
	z      int8 // zRaw, zPacked (b holds the entries LZF-compressed) or zNo (list_compress.go)
}

func (c *lchunk) used() int { return c.hi - c.lo }

// uvarintLen is the bytes of x as a uvarint.
func uvarintLen(x int) int { return (bits.Len64(uint64(x)|1) + 6) / 7 }

// entrySize is the bytes of an entry of an element of n bytes.
func entrySize(n int) int { return n + 2*uvarintLen(n) }

// putEntry writes v's entry at b[p:] (entrySize(len(v)) bytes) and
// returns its end.
func putEntry(b []byte, p int, v []byte) int {
	n := len(v)
	h := uvarintLen(n)
	x := n
	for i := 0; i < h-1; i++ {
		b[p+i] = byte(x) | 0x80
		x >>= 7
	}
	b[p+h-1] = byte(x)
	copy(b[p+h:], v)
	e := p + h + n + h
	x = n
	for i := 1; i < h; i++ {
		b[e-i] = byte(x) | 0x80
		x >>= 7
	}
	b[e-h] = byte(x)
	return e
}

// readFwd reads the header of the entry at b[p:]: the element's length and
// the header's bytes.
func readFwd(b []byte, p int) (n, h int) {
	x := b[p]
	if x < 0x80 {
		return int(x), 1
	}
	n, h = int(x&0x7f), 1
	for s := 7; ; s += 7 {
		x = b[p+h]
		h++
		n |= int(x&0x7f) << s
		if x < 0x80 {
			return n, h
		}
	}
}

// readBack reads the backlen of the entry ending at e: the element's
// length and the backlen's bytes.
func readBack(b []byte, e int) (n, h int) {
	x := b[e-1]
	if x < 0x80 {
		return int(x), 1
	}
	n, h = int(x&0x7f), 1
	for s := 7; ; s += 7 {
		h++
		x = b[e-h]
		n |= int(x&0x7f) << s
		if x < 0x80 {
			return n, h
		}
	}
}

// view is the element of the entry at b[p:], capped so that an append to
// it cannot write into the chunk.
func view(b []byte, p int) []byte {
	n, h := readFwd(b, p)
	return b[p+h : p+h+n : p+h+n]
}

// next is the position after the entry at p; prev the start of the entry
// ending at p.
func next(b []byte, p int) int {
	n, h := readFwd(b, p)
	return p + n + 2*h
}

func prev(b []byte, p int) int {
	n, h := readBack(b, p)
	return p - n - 2*h
}

// walk moves from entry j0 at position p0 (j0 may be cnt, at hi) to entry
// j and returns its position.
func walk(b []byte, j0, p0, j int) int {
	for ; j0 < j; j0++ {
		p0 = next(b, p0)
	}
	for ; j0 > j; j0-- {
		p0 = prev(b, p0)
	}
	return p0
}

// pow2 is the smallest power of two >= max(n, chunkMin).
func pow2(n int) int {
	if n <= chunkMin {
		return chunkMin
	}
	return 1 << bits.Len(uint(n-1))
}

// newChunk returns an empty chunk for an entry of d bytes, with room for
// room bytes (at least d): the entries will be written from its end when
// front (pushes at the head), from its start otherwise.
func newChunk(d, room int, front bool) lchunk {
	c := room
	if d <= chunkMax {
		c = pow2(room)
	}
	b := make([]byte, c)
	b = b[:cap(b)]
	if front {
		return lchunk{b: b, lo: len(b), hi: len(b)}
	}
	return lchunk{b: b}
}

// endRoom makes room for d bytes before lo (front) or after hi in a chunk
// at an end of the list (both: at both ends), moving its entries inside
// its buffer or into a bigger one with as much room again as they take.
// It reports false when the chunk should not grow: a new chunk is due.
func (c *lchunk) endRoom(d int, front, both bool) bool {
	if front && c.lo >= d || !front && len(c.b)-c.hi >= d {
		return true
	}
	used := c.used()
	need := used + d
	if need > relocMax || c.cnt > 0 && d > chunkMax {
		return false
	}
	ncap := min(pow2(2*need), chunkMax)
	if ncap < len(c.b) {
		ncap = len(c.b)
	}
	slack := ncap - used
	var nlo int
	switch {
	case both && front:
		nlo = max(slack/2, d)
	case both:
		nlo = min(slack/2, slack-d)
	case front:
		nlo = slack
	}
	if ncap == len(c.b) {
		copy(c.b[nlo:], c.b[c.lo:c.hi])
	} else {
		nb := make([]byte, ncap)
		copy(nb[nlo:], c.b[c.lo:c.hi])
		c.b = nb
	}
	c.lo, c.hi = nlo, nlo+used
	return true
}

// splice turns the chunk's bytes [p, q) into d bytes (the entries around
// them kept in order), moving the shorter side into the free room or,
// without room, copying the chunk into a new buffer, and returns where
// the d bytes now start.
func (c *lchunk) splice(p, q, d int) int {
	delta := d - (q - p)
	front, back := p-c.lo, c.hi-q // bytes on each side
	switch {
	case delta <= 0:
		if front <= back {
			copy(c.b[c.lo-delta:], c.b[c.lo:p])
			c.lo -= delta
			return p - delta
		}
		copy(c.b[q+delta:], c.b[q:c.hi])
		c.hi += delta
		return p
	case c.lo >= delta && (front <= back || len(c.b)-c.hi < delta):
		copy(c.b[c.lo-delta:], c.b[c.lo:p])
		c.lo -= delta
		return p - delta
	case len(c.b)-c.hi >= delta:
		copy(c.b[q+delta:], c.b[q:c.hi])
		c.hi += delta
		return p
	}
	used := c.used() + delta
	ncap := used
	if used <= chunkMax {
		ncap = min(pow2(used+used/4), chunkMax)
	}
	nb := make([]byte, ncap)
	nb = nb[:cap(nb)]
	nlo := (len(nb) - used) / 2
	copy(nb[nlo:], c.b[c.lo:p])
	at := nlo + front
	copy(nb[at+d:], c.b[q:c.hi])
	c.b, c.lo, c.hi = nb, nlo, nlo+used
	return at
}

// The cursor (List.cur) caches the last element Index found: its chunk k,
// its entry j in the chunk and its offset from the chunk's lo, packed in
// one word so that readers sharing a list (a snapshot's writer and the
// server) may each move it with an atomic store. Any change of the list
// resets it to 0, which is always true: entry 0 of chunk 0 is at its lo.
const noCursor = 0

func packCursor(k, j, off int) uint64 {
	if uint64(k) >= 1<<32-1 || j >= 1<<16 || off >= 1<<16 {
		return noCursor
	}
	return uint64(k)<<32 | uint64(j)<<16 | uint64(off)
}

// seek finds element i (0 <= i < n): its chunk, entry and position, from
// the cursor when i is next to it, else by a binary search of the chunks'
// coordinates and a walk from the nearer of the chunk's ends and the
// cursor.
func (l *List) seek(i int) (k, j, p int) {
	cur := l.cur.Load()
	x := l.base + i
	k, cj, cp := -1, 0, 0
	{
		ck := int(cur >> 32)
		if ck < len(l.ch) {
			c := &l.ch[ck]
			switch {
			case x >= c.start && x < c.start+c.cnt:
				k, cj, cp = ck, int(cur>>16&0xffff), c.lo+int(cur&0xffff)
			case x == c.start+c.cnt && ck+1 < len(l.ch):
				k = ck + 1
				cj, cp = 0, l.ch[k].lo
			case x == c.start-1 && ck > 0:
				k = ck - 1
				cj, cp = l.ch[k].cnt, l.ch[k].hi
			}
		}
	}
	if k < 0 {
		lo, hi := 0, len(l.ch) // the last chunk starting at or before x
		for hi-lo > 1 {
			m := int(uint(lo+hi) >> 1)
			if l.ch[m].start <= x {
				lo = m
			} else {
				hi = m
			}
		}
		k = lo
		cj, cp = 0, l.ch[k].lo
	}
	c := &l.ch[k]
	b := l.bytesOf(k)
	j = x - c.start
	// Walk from the cursor, or from an end when nearer.
	d := j - cj
	if d < 0 {
		d = -d
	}
	switch {
	case j <= d && j <= c.cnt-j:
		p = walk(b, 0, c.lo, j)
	case c.cnt-j < d:
		p = walk(b, c.cnt, c.hi, j)
	default:
		p = walk(b, cj, cp, j)
	}
	if nc := packCursor(k, j, p-c.lo); nc != cur {
		l.cur.Store(nc)
	}
	return k, j, p
}

// changed clears the cursor and the decompressed chunk (a write owns the
// list: no reader shares it).
func (l *List) changed() {
	if l.cur.Load() != noCursor {
		l.cur.Store(noCursor)
	}
	if l.zc.Load() != nil {
		l.zc.Store(nil)
	}
}

// chunkPushFront adds a chunk at the head, amortized O(1) (pushFront).
func (l *List) chunkPushFront(c lchunk) { pushFront(&l.ch, &l.cbuf, &l.c0, c, 1) }

// chunkPushBack adds a chunk at the tail (pushBack).
func (l *List) chunkPushBack(c lchunk) { pushBack(&l.ch, &l.cbuf, &l.c0, c) }

// chunkInsert inserts c at index k of the chunks.
func (l *List) chunkInsert(k int, c lchunk) {
	if k == 0 {
		l.chunkPushFront(c)
		return
	}
	old := cap(l.ch)
	l.ch = append(l.ch, lchunk{})
	copy(l.ch[k+1:], l.ch[k:])
	l.ch[k] = c
	if cap(l.ch) != old {
		l.cbuf, l.c0 = l.ch[:cap(l.ch)], 0
	}
}

// chunkDelete removes chunk k.
func (l *List) chunkDelete(k int) {
	switch {
	case k == 0:
		l.ch[0] = lchunk{}
		l.ch = l.ch[1:]
		l.c0++
	default:
		copy(l.ch[k:], l.ch[k+1:])
		l.ch[len(l.ch)-1] = lchunk{}
		l.ch = l.ch[:len(l.ch)-1]
	}
	if len(l.ch) == 0 {
		l.ch, l.cbuf, l.c0 = nil, nil, 0
	} else if len(l.cbuf) > 64 && len(l.ch) < len(l.cbuf)/4 {
		n := len(l.ch)
		room := n / 2
		nb := make([]lchunk, room+n+room)
		copy(nb[room:], l.ch)
		l.cbuf, l.c0, l.ch = nb, room, nb[room:room+n]
	}
}

// reindex recomputes the chunks' coordinates after chunks a..b (indexes
// after the change) changed their counts, from the nearer end: the
// chunks on the far side keep theirs. end is base+n before the change.
func (l *List) reindex(a, b, end int) {
	if a < len(l.ch)-1-b {
		nx := end
		if b+1 < len(l.ch) {
			nx = l.ch[b+1].start
		}
		for k := b; k >= 0; k-- {
			nx -= l.ch[k].cnt
			l.ch[k].start = nx
		}
		l.base = nx
		return
	}
	s := l.base
	if a > 0 {
		s = l.ch[a-1].start + l.ch[a-1].cnt
	}
	for k := a; k < len(l.ch); k++ {
		l.ch[k].start = s
		s += l.ch[k].cnt
	}
}

// dataPushFront stores v's bytes as the new first element.
func (l *List) dataPushFront(v []byte) {
	d := entrySize(len(v))
	if len(l.ch) == 0 || !l.ch[0].endRoom(d, true, len(l.ch) == 1) {
		room := d
		if len(l.ch) > 0 {
			room = max(d, chunkMax)
		}
		c := newChunk(d, room, true)
		c.start = l.base
		l.chunkPushFront(c)
		l.zFixEnds()
	}
	c := &l.ch[0]
	c.z = zRaw
	c.lo -= d
	putEntry(c.b, c.lo, v)
	c.cnt++
	c.start--
	l.base--
	l.n++
	l.changed()
}

// dataPushBack stores v's bytes as the new last element.
func (l *List) dataPushBack(v []byte) {
	d := entrySize(len(v))
	k := len(l.ch) - 1
	if k < 0 || !l.ch[k].endRoom(d, false, k == 0) {
		room := d
		if k >= 0 {
			room = max(d, chunkMax)
		}
		c := newChunk(d, room, false)
		c.start = l.base + l.n
		l.chunkPushBack(c)
		l.zFixEnds()
		k++
	}
	c := &l.ch[k]
	c.z = zRaw
	c.hi = putEntry(c.b, c.hi, v)
	c.cnt++
	l.n++
	l.changed()
}

// dataPopFront removes the first element and returns a view of it, valid
// until the next change.
func (l *List) dataPopFront() []byte {
	c := &l.ch[0]
	v := view(c.b, c.lo)
	c.lo = next(c.b, c.lo)
	c.cnt--
	c.start++
	l.base++
	l.n--
	if c.cnt == 0 {
		l.chunkDelete(0)
		l.zFixEnds()
	}
	l.changed()
	return v
}

// dataPopBack removes the last element and returns a view of it, valid
// until the next change.
func (l *List) dataPopBack() []byte {
	k := len(l.ch) - 1
	c := &l.ch[k]
	c.hi = prev(c.b, c.hi)
	v := view(c.b, c.hi)
	c.cnt--
	l.n--
	if c.cnt == 0 {
		l.chunkDelete(k)
		l.zFixEnds()
	}
	l.changed()
	return v
}

// splitChunk splits chunk k before its entry j at position p (0 < j <
// cnt): the entries from j on move to a new chunk k+1.
func (l *List) splitChunk(k, j, p int) {
	c := &l.ch[k]
	r := newChunk(c.hi-p, c.hi-p, false)
	r.hi = copy(r.b, c.b[p:c.hi])
	r.cnt = c.cnt - j
	r.start = c.start + j
	c.hi, c.cnt = p, j
	l.chunkInsert(k+1, r)
}

// dataInsert stores v's bytes as element i (0 < i < n).
func (l *List) dataInsert(i int, v []byte) {
	end := l.base + l.n
	k, j, p := l.seek(i)
	l.zOwn(k)
	d := entrySize(len(v))
	c := &l.ch[k]
	if c.used()+d <= chunkMax {
		putEntry(c.b, c.splice(p, p, d), v)
		c.cnt++
		l.n++
		l.reindex(k, k, end)
		l.zFix(k, k)
		l.changed()
		return
	}
	a := k
	if j > 0 {
		l.splitChunk(k, j, p)
		k++
	} else if k > 0 {
		a = k - 1
	}
	// v goes between chunks k-1 and k: at the end of k-1, at the start
	// of k, or in a chunk of its own.
	l.insertBetween(k, v, d)
	l.n++
	l.reindex(a, min(k+1, len(l.ch)-1), end)
	l.zFix(a-1, k+1)
	l.changed()
}

// dataInsertAt stores v's bytes as element i (0 <= i <= n).
func (l *List) dataInsertAt(i int, v []byte) {
	switch i {
	case 0:
		l.dataPushFront(v)
	case l.n:
		l.dataPushBack(v)
	default:
		l.dataInsert(i, v)
	}
}

// dataDelete removes element i (0 <= i < n).
func (l *List) dataDelete(i int) {
	switch i {
	case 0:
		l.dataPopFront()
		return
	case l.n - 1:
		l.dataPopBack()
		return
	}
	end := l.base + l.n
	k, _, p := l.seek(i)
	l.zOwn(k)
	c := &l.ch[k]
	c.splice(p, next(c.b, p), 0)
	c.cnt--
	l.n--
	if c.cnt == 0 { // not the first chunk nor the last: i is neither end
		l.chunkDelete(k)
	}
	l.reindex(k, k, end)
	l.zFix(k-1, k)
	l.changed()
}

// insertBetween puts an entry of d bytes for v between chunks k-1 and k.
func (l *List) insertBetween(k int, v []byte, d int) {
	switch {
	case k > 0 && l.ch[k-1].used()+d <= chunkMax:
		l.zOwn(k - 1)
		c := &l.ch[k-1]
		putEntry(c.b, c.splice(c.hi, c.hi, d), v)
		c.cnt++
	case k < len(l.ch) && l.ch[k].used()+d <= chunkMax:
		l.zOwn(k)
		c := &l.ch[k]
		putEntry(c.b, c.splice(c.lo, c.lo, d), v)
		c.cnt++
	default:
		c := newChunk(d, d, false)
		c.hi = putEntry(c.b, 0, v)
		c.cnt = 1
		l.chunkInsert(k, c)
	}
}

// dataSet replaces element i's bytes with v's.
func (l *List) dataSet(i int, v []byte) {
	k, j, p := l.seek(i)
	l.zOwn(k)
	c := &l.ch[k]
	old := next(c.b, p) - p
	d := entrySize(len(v))
	switch {
	case c.used()-old+d <= chunkMax && len(c.b) <= chunkMax:
		putEntry(c.b, c.splice(p, p+old, d), v)
		l.zFix(k, k)
		l.changed()
		return
	case c.cnt == 1: // a big element or one replacing it: a new buffer
		nc := newChunk(d, d, false)
		c.b, c.lo, c.hi = nc.b, 0, putEntry(nc.b, 0, v)
		l.zFix(k, k)
		l.changed()
		return
	}
	// Too big for the chunk: v gets a chunk of its own, or joins the
	// entries before or after it where they fit.
	end := l.base + l.n
	a := k
	if j > 0 {
		l.splitChunk(k, j, p)
		k++
	} else if k > 0 {
		a = k - 1
	}
	c = &l.ch[k] // starts with the old entry
	c.lo += old
	c.cnt--
	if c.cnt == 0 {
		l.chunkDelete(k)
	}
	l.insertBetween(k, v, d)
	l.reindex(a, min(k+1, len(l.ch)-1), end)
	l.zFix(a-1, k+1)
	l.changed()
}
