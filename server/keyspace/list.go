package keyspace

import "slices"

// List is a list value (OBJ_LIST). Redis 7.0 always encodes a list as a
// quicklist (a doubly linked list of listpack nodes; 7.2's small-list
// listpack encoding does not exist yet), so Encoding is always
// EncodingQuicklist.
//
// The elements are kept in a ring buffer (a deque): push and pop at both
// ends are amortized O(1) and indexing is O(1); inserting or removing in
// the middle moves elements, O(n) as Redis's listpack memmoves. Element
// bytes are never changed in place once stored (LSET replaces the slice),
// so Dup shares them.
//
// A List reachable through an Entry is changed only through DB.Mutable.
type List struct {
	buf  [][]byte // ring; len(buf) is 0 or a power of two
	head int      // index in buf of the first element
	n    int      // number of elements
	fill int      // list-max-listpack-size (quicklist fill)

	// nodes shadows Redis's quicklist nodes (entries and listpack bytes
	// of each, head to tail) for Size: pushes and pops at the ends split
	// the list into nodes exactly as quicklistPush and quicklistPop do;
	// changes in the middle adjust the node holding the element without
	// Redis's splits and merges.
	nodes []qlNode
	nbuf  []qlNode // nodes' array: nodes is nbuf[nh:nh+len(nodes)]
	nh    int      // free slots before nodes, for O(1) pushes at the head
}

// nodePushFront adds a node at the head, amortized O(1): the array keeps
// room before the first node, re-made (as much room as nodes) when used up.
func (l *List) nodePushFront(nd qlNode) {
	if l.nh == 0 {
		n := len(l.nodes)
		room := max(4, n)
		nb := make([]qlNode, room+n, 2*room+n)
		copy(nb[room:], l.nodes)
		l.nbuf, l.nh = nb[:cap(nb)], room
		l.nodes = nb[room : room+n]
	}
	l.nh--
	l.nodes = l.nbuf[l.nh : l.nh+len(l.nodes)+1]
	l.nodes[0] = nd
}

// nodePushBack adds a node at the tail (append; a new array has no room
// before it).
func (l *List) nodePushBack(nd qlNode) {
	old := cap(l.nodes)
	l.nodes = append(l.nodes, nd)
	if cap(l.nodes) != old {
		l.nbuf, l.nh = l.nodes[:cap(l.nodes)], 0
	}
}

// qlNode is one quicklist node: its entries and listpack size in bytes.
type qlNode struct {
	count int
	sz    int
}

// NewList returns an empty list whose nodes are sized by fill
// (list-max-listpack-size), as quicklistCreate + quicklistSetOptions.
func NewList(fill int) *List { return &List{fill: fill} }

// Len is the number of elements (LLEN).
func (l *List) Len() int { return l.n }

// SetFill sets list-max-listpack-size for the size estimate (Redis reads
// the server's current setting on each insertion).
func (l *List) SetFill(fill int) { l.fill = fill }

func (l *List) grow() {
	c := len(l.buf) * 2
	if c == 0 {
		c = 4
	}
	nb := make([][]byte, c)
	for i := 0; i < l.n; i++ {
		nb[i] = l.buf[(l.head+i)&(len(l.buf)-1)]
	}
	l.buf, l.head = nb, 0
}

func (l *List) slot(i int) int { return (l.head + i) & (len(l.buf) - 1) }

// Index returns element i (0 <= i < Len). Do not modify it.
func (l *List) Index(i int) []byte { return l.buf[l.slot(i)] }

// Set replaces element i (handed over).
func (l *List) Set(i int, b []byte) {
	s := l.slot(i)
	if k, _ := l.nodeOf(i); k >= 0 {
		l.nodes[k].sz += lpEntrySize(b) - lpEntrySize(l.buf[s])
	}
	l.buf[s] = b
}

// PushFront adds b (handed over) at the head.
func (l *List) PushFront(b []byte) {
	if l.n == len(l.buf) {
		l.grow()
	}
	l.head = (l.head - 1) & (len(l.buf) - 1)
	l.buf[l.head] = b
	l.n++
	if len(l.nodes) > 0 && allowInsert(l.nodes[0].sz, l.nodes[0].count, l.fill, len(b)) {
		l.nodes[0].count++
		l.nodes[0].sz += lpEntrySize(b)
		return
	}
	l.nodePushFront(qlNode{1, lpHdrSize + 1 + lpEntrySize(b)})
}

// PushBack adds b (handed over) at the tail.
func (l *List) PushBack(b []byte) {
	if l.n == len(l.buf) {
		l.grow()
	}
	l.buf[l.slot(l.n)] = b
	l.n++
	if k := len(l.nodes) - 1; k >= 0 && allowInsert(l.nodes[k].sz, l.nodes[k].count, l.fill, len(b)) {
		l.nodes[k].count++
		l.nodes[k].sz += lpEntrySize(b)
		return
	}
	l.nodePushBack(qlNode{1, lpHdrSize + 1 + lpEntrySize(b)})
}

// PopFront removes and returns the head element (the list is not empty).
func (l *List) PopFront() []byte {
	s := l.head
	b := l.buf[s]
	l.buf[s] = nil
	l.head = (l.head + 1) & (len(l.buf) - 1)
	l.n--
	l.shrink()
	l.nodeRemove(0, b)
	return b
}

// PopBack removes and returns the tail element (the list is not empty).
func (l *List) PopBack() []byte {
	s := l.slot(l.n - 1)
	b := l.buf[s]
	l.buf[s] = nil
	l.n--
	l.shrink()
	l.nodeRemove(len(l.nodes)-1, b)
	return b
}

// nodeOf returns the node holding element i and i's offset in it.
func (l *List) nodeOf(i int) (int, int) {
	if len(l.nodes) == 0 {
		return -1, 0
	}
	for k, nd := range l.nodes {
		if i < nd.count {
			return k, i
		}
		i -= nd.count
	}
	return len(l.nodes) - 1, l.nodes[len(l.nodes)-1].count
}

// nodeRemove takes element b out of node k, dropping the node when it
// empties (__quicklistDelNode).
func (l *List) nodeRemove(k int, b []byte) {
	if k < 0 || k >= len(l.nodes) {
		return
	}
	nd := &l.nodes[k]
	nd.count--
	nd.sz -= lpEntrySize(b)
	if nd.count <= 0 {
		if k == 0 { // O(1) at the head too
			l.nodes[0] = qlNode{}
			l.nodes = l.nodes[1:]
			l.nh++
		} else {
			l.nodes = slices.Delete(l.nodes, k, k+1)
		}
	}
}

// shrink gives memory back when the ring is mostly empty.
func (l *List) shrink() {
	if len(l.buf) > 64 && l.n < len(l.buf)/4 {
		nb := make([][]byte, len(l.buf)/2)
		for i := 0; i < l.n; i++ {
			nb[i] = l.buf[l.slot(i)]
		}
		l.buf, l.head = nb, 0
	}
}

// Insert inserts b (handed over) before element i (0 <= i <= Len).
func (l *List) Insert(i int, b []byte) {
	if i == 0 {
		l.PushFront(b)
		return
	}
	if i == l.n {
		l.PushBack(b)
		return
	}
	if l.n == len(l.buf) {
		l.grow()
	}
	l.n++
	for j := l.n - 1; j > i; j-- {
		l.buf[l.slot(j)] = l.buf[l.slot(j-1)]
	}
	l.buf[l.slot(i)] = b
	if k, _ := l.nodeOf(i); k >= 0 {
		l.nodes[k].count++
		l.nodes[k].sz += lpEntrySize(b)
	}
}

// Filter keeps, in order, the elements for which keep returns true; keep
// sees every element once, head to tail. O(n).
func (l *List) Filter(keep func(i int, b []byte) bool) {
	w := 0
	k, left := 0, 0 // node of element r, and its elements after r
	if len(l.nodes) > 0 {
		left = l.nodes[0].count
	}
	for r := 0; r < l.n; r++ {
		for left == 0 && k+1 < len(l.nodes) {
			k++
			left = l.nodes[k].count
		}
		left--
		b := l.buf[l.slot(r)]
		if keep(r, b) {
			l.buf[l.slot(w)] = b
			w++
		} else if k < len(l.nodes) {
			l.nodes[k].count--
			l.nodes[k].sz -= lpEntrySize(b)
		}
	}
	l.nodes = slices.DeleteFunc(l.nodes, func(nd qlNode) bool { return nd.count <= 0 })
	for j := w; j < l.n; j++ {
		l.buf[l.slot(j)] = nil
	}
	l.n = w
	l.shrink()
}

// Trim keeps elements start..end inclusive (0 <= start <= end < Len) and
// drops the rest (LTRIM).
func (l *List) Trim(start, end int) {
	for l.n > end+1 {
		l.PopBack()
	}
	for k := 0; k < start; k++ {
		l.PopFront()
	}
}

// Type is TypeList.
func (l *List) Type() Type { return TypeList }

// Encoding is always quicklist in Redis 7.0.
func (l *List) Encoding() Encoding { return EncodingQuicklist }

// Dup is listTypeDup: an independent list (the elements' bytes, never
// changed in place, are shared).
func (l *List) Dup() Value {
	c := &List{fill: l.fill, n: l.n, nodes: slices.Clone(l.nodes)}
	c.nbuf = c.nodes[:cap(c.nodes)]
	if l.n > 0 {
		size := 4
		for size < l.n {
			size *= 2
		}
		c.buf = make([][]byte, size)
		for i := 0; i < l.n; i++ {
			c.buf[i] = l.buf[l.slot(i)]
		}
	}
	return c
}

// Sizes of Redis 7.0's quicklist structures on x86_64.
const (
	quicklistSize     = 40 // sizeof(quicklist)
	quicklistNodeSize = 40 // sizeof(quicklistNode)
	lpHdrSize         = 6  // LP_HDR_SIZE
	sizeSafetyLimit   = 8192
)

// quicklist's optimization_level: the byte limit of a node for fill -1..-5.
var optimizationLevel = [...]int{4096, 8192, 16384, 32768, 65536}

// Size is objectComputeSize of a quicklist: sizeof(robj) + sizeof(quicklist)
// plus, per node, sizeof(quicklistNode) and its listpack's allocation,
// averaged over the first samples nodes (0: all) and multiplied by the node
// count. The nodes are exactly Redis's for a list changed only at its ends
// (pushes, pops, LTRIM, LMOVE); LINSERT, LSET and LREM in the middle of a
// full node make Redis split or merge nodes, which is not modelled, so
// their sizes are close rather than exact. list-compress-depth is ignored.
func (l *List) Size(samples int) uint64 {
	if len(l.nodes) == 0 {
		return RobjSize + quicklistSize
	}
	var sampled int
	var elesize uint64
	for _, nd := range l.nodes {
		if samples > 0 && sampled >= samples {
			break
		}
		sampled++
		elesize += quicklistNodeSize + JemallocSize(uint64(nd.sz))
	}
	asize := float64(RobjSize+quicklistSize) + float64(elesize)/float64(sampled)*float64(len(l.nodes))
	return uint64(asize)
}

// allowInsert is 7.0.15's _quicklistNodeAllowInsert for a node of sz
// listpack bytes and count entries, adding an element of n bytes: the
// estimate sz + n + SIZE_ESTIMATE_OVERHEAD (8) must stay within the
// fill's byte limit (negative fill: optimization_level, -6 and below as
// -5), or, for a count limit (fill >= 0; 0 counts as 1), within
// SIZE_SAFETY_LIMIT with count+1 entries at most fill
// (_quicklistNodeExceedsLimit, quicklistNodeLimit).
func allowInsert(sz, count, fill, n int) bool {
	newSz := sz + n + 8
	if fill < 0 {
		off := min(-fill-1, len(optimizationLevel)-1)
		return newSz <= optimizationLevel[off]
	}
	if newSz > sizeSafetyLimit {
		return false
	}
	return count+1 <= max(fill, 1)
}

// lpEntrySize is the bytes b takes in a listpack: its encoding (an integer
// when lpStringToInt64 accepts it, else a string with a 1, 2 or 5 byte
// header) plus the backlen.
func lpEntrySize(b []byte) int {
	var enc int
	if v, ok := string2ll(b); ok {
		switch {
		case v >= 0 && v <= 127:
			enc = 1
		case v >= -4096 && v <= 4095:
			enc = 2
		case v >= -32768 && v <= 32767:
			enc = 3
		case v >= -8388608 && v <= 8388607:
			enc = 4
		case v >= -2147483648 && v <= 2147483647:
			enc = 5
		default:
			enc = 9
		}
	} else {
		switch n := len(b); {
		case n < 64:
			enc = 1 + n
		case n < 4096:
			enc = 2 + n
		default:
			enc = 5 + n
		}
	}
	switch {
	case enc < 128:
		return enc + 1
	case enc < 16384:
		return enc + 2
	case enc < 2097152:
		return enc + 3
	case enc < 268435456:
		return enc + 4
	}
	return enc + 5
}
