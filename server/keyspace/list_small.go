package keyspace

import "slices"

// A small list (the many short lists of a typical keyspace) is held in the
// List header itself: its elements in one buffer of entries (listchunk.go's
// format) and its one quicklist node's listpack size, with no chunk array,
// node array or cursor (listBody is nil). That is two allocations, the
// header (48 bytes) and the buffer, where a listBody costs four more. A
// list stays small while it has one quicklist node (Redis's node limits,
// allowInsert) and its entries fit in smallMax bytes; the first push past
// that, and any edit in the middle (LSET, LINSERT, LREM, LTRIM), moves it to
// a listBody (grow). LREM and LTRIM, and an RDB node that fits, give a list
// that fits back its small form (shrink).
//
// In Redis 7.0 such a list is a quicklist of one node; only the memory
// layout differs: MEMORY USAGE, DEBUG OBJECT and the RDB are the same.

// smallMax is the most bytes of entries a small list holds: an element is
// found by walking from the nearer end, so this bounds that walk.
const smallMax = 256

// grow moves a small list into a listBody of one chunk and one node.
func (l *List) grow() {
	if l.listBody != nil {
		return
	}
	b := &listBody{}
	if l.n > 0 {
		b.ch = []lchunk{{b: l.sbuf(), lo: int(l.slo), hi: int(l.shi), cnt: l.n}}
		b.cbuf = b.ch
		b.nodes = []qlNode{{count: l.n, sz: int(l.ssz)}}
		b.nbuf = b.nodes
	}
	l.listBody = b
	l.setSB(nil)
	l.slo, l.shi, l.ssz = 0, 0, 0
}

// shrink gives a list of one raw chunk and one node that fits in smallMax
// bytes its small form (or an empty list, an empty one).
func (l *List) shrink() {
	if l.listBody == nil {
		return
	}
	switch {
	case l.n == 0:
		l.listBody = nil
		l.setSB(nil)
		l.slo, l.shi, l.ssz = 0, 0, 0
	case len(l.ch) == 1 && len(l.nodes) == 1 && !l.nodes[0].plain && l.ch[0].z != zPacked && l.ch[0].used() <= smallMax:
		c := &l.ch[0]
		b := slices.Grow([]byte(nil), c.used())
		b = b[:cap(b)]
		l.setSB(b)
		l.slo, l.shi, l.ssz = 0, int32(copy(b, c.b[c.lo:c.hi])), int32(l.nodes[0].sz)
		l.listBody = nil
	}
}

// smallFits reports whether elems fit a small list.
func (l *List) smallFits(elems [][]byte) bool {
	n := 0
	for _, b := range elems {
		n += entrySize(len(b))
	}
	return n <= smallMax
}

// smallPush adds b at the head (front) or the tail of a small list, or
// reports false when the list would outgrow its small form (with force,
// as an RDB node loads: whatever the node limits).
func (l *List) smallPush(b []byte, front, force bool) bool {
	if !force && l.isLarge(len(b)) { // a PLAIN node of its own
		return false
	}
	e := lpEntrySizeB(b)
	if !force && l.n > 0 && !allowInsert(int(l.ssz), l.n, int(l.fill), len(b)) {
		return false
	}
	d := entrySize(len(b))
	lo, hi := int(l.slo), int(l.shi)
	used := hi - lo
	if used+d > smallMax {
		return false
	}
	sb := l.sbuf()
	if front && lo < d || !front && len(sb)-hi < d {
		nb := sb
		if len(sb)-used < d { // no room: a bigger buffer (its size class)
			nb = slices.Grow([]byte(nil), max(used+d+(used+d)/4, chunkMin))
			nb = nb[:cap(nb)]
		}
		nlo := 0
		if front {
			nlo = len(nb) - used
		}
		copy(nb[nlo:], sb[lo:hi])
		sb, lo, hi = nb, nlo, nlo+used
		l.setSB(sb)
	}
	if front {
		lo -= d
		putEntry(sb, lo, b)
	} else {
		hi = putEntry(sb, hi, b)
	}
	l.slo, l.shi = int32(lo), int32(hi)
	if l.n == 0 {
		l.ssz = lpHdrSize + 1
	}
	l.ssz += int32(e)
	l.n++
	return true
}

// smallPop removes the head (front) or tail element of a small list (not
// empty) and returns a view of it, valid until the next change.
func (l *List) smallPop(front bool) []byte {
	var v []byte
	sb := l.sbuf()
	if front {
		v = view(sb, int(l.slo))
		l.slo = int32(next(sb, int(l.slo)))
	} else {
		l.shi = int32(prev(sb, int(l.shi)))
		v = view(sb, int(l.shi))
	}
	l.n--
	l.ssz -= int32(lpEntrySizeB(v))
	if l.n == 0 {
		l.ssz = 0
	}
	return v
}

// smallIndex is Index on a small list: a walk from the nearer end.
func (l *List) smallIndex(i int) []byte {
	sb := l.sbuf()
	if i <= l.n/2 {
		return view(sb, walk(sb, 0, int(l.slo), i))
	}
	return view(sb, walk(sb, l.n, int(l.shi), i))
}

// smallDup is Dup of a small list.
func (l *List) smallDup() *List {
	c := &List{n: l.n, ssz: l.ssz, fill: l.fill, depth: l.depth, thr: l.thr}
	if l.n > 0 {
		used := int(l.shi - l.slo)
		b := slices.Grow([]byte(nil), used)
		b = b[:cap(b)]
		c.setSB(b)
		c.shi = int32(copy(b, l.sbuf()[l.slo:l.shi]))
	}
	return c
}

// smallListpack appends the small list's one node as a listpack
// (AppendNodeListpack).
func (l *List) smallListpack(b []byte) []byte {
	g := *l
	g.grow()
	return g.AppendNodeListpack(b, 0)
}
