package keyspace

import (
	"slices"
	"sync/atomic"
	"unsafe"

	"github.com/vigil-kv/vigil/internal/redisutil"
)

// List is a list value (OBJ_LIST). Redis 7.0 always encodes a list as a
// quicklist (a doubly linked list of listpack nodes; 7.2's small-list
// listpack encoding does not exist yet), so Encoding is always
// EncodingQuicklist.
//
// The elements are packed in chunks of a few KB, as a quicklist's
// listpacks (see listchunk.go): a deque of chunks, each a []byte of
// length-prefixed entries with a back-length, so that push and pop at both
// ends are amortized O(1) with no whole-list copy, and an element costs
// its bytes and two length bytes, no slice header, allocation or pointer.
// Inserting or replacing in the middle moves bytes within one chunk (or
// splits it). Index is O(1) when it follows the previous Index (a cursor),
// else O(log S) over the S chunks and a walk within one chunk.
//
// Slices that Index and Filter hand out are views into the chunks, valid
// until the list's next change; pops return bytes the caller owns; the
// bytes given to a push, Set or Insert are copied.
//
// A List reachable through an Entry is changed only through DB.Mutable.
// Reads (Index included, which moves the cursor atomically) may run
// concurrently with each other: a snapshot reads the value it holds while
// the server reads it too.
type List struct {
	*listBody // the chunks and nodes; nil while the list is small (list_small.go)

	sbp      *byte // small: the one chunk's buffer (sbuf), its entries sbuf()[slo:shi]
	n        int   // number of elements
	slo, shi int32
	ssz      int32  // small: the listpack bytes of its one quicklist node
	fill     int16  // list-max-listpack-size (quicklist fill, clamped to -5..32767 as quicklistSetFill)
	depth    uint16 // list-compress-depth the list was created with (list_compress.go)
	thr      uint32 // DEBUG QUICKLIST-PACKED-THRESHOLD (packed_threshold); 0: 1 GB
	scap     int32  // small: the buffer's length (its whole capacity)
}

// sbuf is a small list's buffer (a pointer and a length rather than a
// slice: 48 bytes of header, not 64, so that a list's key node with the
// header and a key of up to 16 bytes is 112 bytes; SetNew).
func (l *List) sbuf() []byte {
	if l.sbp == nil {
		return nil
	}
	return unsafe.Slice(l.sbp, l.scap)
}

// setSB makes b (its whole length) the small list's buffer.
func (l *List) setSB(b []byte) {
	l.sbp, l.scap = unsafe.SliceData(b), int32(len(b))
	if len(b) == 0 {
		l.sbp = nil
	}
}

// listBody is a List of more than one chunk or quicklist node.
type listBody struct {
	ch   []lchunk // the chunks, head to tail: ch is cbuf[c0:c0+len(ch)]
	cbuf []lchunk
	c0   int                    // free slots before ch, for O(1) chunk pushes at the head
	base int                    // coordinate of element 0: element i is at base+i, and chunk k's first element at ch[k].start
	cur  atomic.Uint64          // the cursor of seek (packCursor), noCursor when unset
	zc   atomic.Pointer[zcache] // the last compressed chunk a read decompressed (list_compress.go)

	// nodes shadows Redis's quicklist nodes (entries and listpack bytes
	// of each, head to tail) for Size, changed as quicklist.c changes
	// them: quicklistPush/Pop at the ends, _quicklistInsert's splits and
	// merges for LINSERT, an in-place lpReplace for LSET (7.0.15 lets the
	// node grow past its limit), deletions that drop emptied nodes
	// without merging (LREM, LTRIM, pops with a count).
	nodes []qlNode
	nbuf  []qlNode // nodes' array: nodes is nbuf[nh:nh+len(nodes)]
	nh    int      // free slots before nodes, for O(1) pushes at the head

	// While a node split for a PLAIN node is not in nodes yet (quicklist.c
	// inserts the PLAIN node, compresses, then inserts the split half),
	// ghostN of the list's elements, before node ghostAt, belong to it
	// (nodeStart).
	ghostAt, ghostN int
}

// nodePushFront adds a node at the head, amortized O(1) (pushFront).
func (l *List) nodePushFront(nd qlNode) { pushFront(&l.nodes, &l.nbuf, &l.nh, nd, 4) }

// nodePushBack adds a node at the tail (pushBack).
func (l *List) nodePushBack(nd qlNode) { pushBack(&l.nodes, &l.nbuf, &l.nh, nd) }

// pushFront adds x before the first element of *s, a slice of the array
// *buf starting at *h, amortized O(1): the array keeps room before the
// first element, re-made (as much room as elements, at least minRoom)
// when used up.
func pushFront[T any](s, buf *[]T, h *int, x T, minRoom int) {
	if *h == 0 {
		n := len(*s)
		room := max(minRoom, n)
		nb := make([]T, room+n, 2*room+n)
		copy(nb[room:], *s)
		*buf, *h = nb[:cap(nb)], room
		*s = nb[room : room+n]
	}
	*h--
	*s = (*buf)[*h : *h+len(*s)+1]
	(*s)[0] = x
}

// pushBack adds x after the last element of *s (append; a new array has
// no room before it).
func pushBack[T any](s, buf *[]T, h *int, x T) {
	old := cap(*s)
	*s = append(*s, x)
	if cap(*s) != old {
		*buf, *h = (*s)[:cap(*s)], 0
	}
}

// qlNode is one quicklist node: its entries and listpack size in bytes,
// and, under list-compress-depth, its LZF-compressed bytes when Redis
// holds it compressed (> 0; 0: raw; lzfNo: raw and incompressible as it
// is, see list_compress.go). A PLAIN node (plain: QUICKLIST_NODE_CONTAINER_PLAIN)
// holds one element as it is, no listpack: sz is the element's length.
// dont is the node's dont_compress while LSET replaces an element of it.
type qlNode struct {
	count int
	sz    int
	lzf   int
	plain bool
	dont  bool
}

// DefaultPackedThreshold is quicklist.c's packed_threshold by default.
const DefaultPackedThreshold = 1 << 30

// SetPackedThreshold sets quicklist.c's packed_threshold (DEBUG
// QUICKLIST-PACKED-THRESHOLD, already checked to be below 4 GB; 0: 1 GB)
// for the list's next changes: an element of at least that many bytes
// goes to a PLAIN node of its own (isLargeElement). Redis has one setting
// for the process; the server sets its own on each list it changes, as
// it does the fill (SetFill).
func (l *List) SetPackedThreshold(sz int64) {
	if sz <= 0 || sz == DefaultPackedThreshold || sz >= 1<<32 {
		l.thr = 0
		return
	}
	l.thr = uint32(sz)
}

// isLarge is isLargeElement: an element of n bytes goes to a PLAIN node.
func (l *List) isLarge(n int) bool {
	t := uint64(l.thr)
	if t == 0 {
		t = DefaultPackedThreshold
	}
	return uint64(n) >= t
}

// clampFill is quicklistSetFill's range.
func clampFill(fill int) int16 { return int16(min(max(fill, -5), 1<<15-1)) }

// plainNode is a new PLAIN node for b (__quicklistCreatePlainNode).
func plainNode(b []byte) qlNode { return qlNode{count: 1, sz: len(b), plain: true} }

// allowIn is _quicklistNodeAllowInsert of node k for an element of n
// bytes: never into a PLAIN node nor for a large element.
func (l *List) allowIn(k, n int) bool {
	if k < 0 || k >= len(l.nodes) || l.nodes[k].plain || l.isLarge(n) {
		return false
	}
	return allowInsert(l.nodes[k].sz, l.nodes[k].count, int(l.fill), n)
}

// NewList returns an empty list whose nodes are sized by fill
// (list-max-listpack-size), as quicklistCreate + quicklistSetOptions.
func NewList(fill int) *List { return &List{fill: clampFill(fill)} }

// Len is the number of elements (LLEN).
func (l *List) Len() int { return l.n }

// SetFill sets list-max-listpack-size for the size estimate (Redis reads
// the server's current setting on each insertion).
func (l *List) SetFill(fill int) { l.fill = clampFill(fill) }

// Index returns element i (0 <= i < Len): a view into the list, valid
// until its next change; do not modify it. O(1) after Index(i-1) or
// Index(i+1) (LRANGE, LPOS, the RDB and AOF encodings walk the list so).
func (l *List) Index(i int) []byte {
	if l.listBody == nil {
		return l.smallIndex(i)
	}
	k, _, p := l.seek(i)
	return view(l.bytesOf(k), p)
}

// Range calls fn with elements start..end in order (0 <= start, end < Len)
// until fn returns false: one seek, then a walk through the chunks, O(log S
// + end-start), where Index per element pays a cursor load and store each.
// The slices are views, as Index's.
func (l *List) Range(start, end int, fn func(b []byte) bool) {
	if start > end {
		return
	}
	if l.listBody == nil {
		sb := l.sbuf()
		p := int(l.slo)
		if start > 0 {
			p = walk(sb, 0, p, start)
		}
		for i := start; i <= end; i++ {
			if !fn(view(sb, p)) {
				return
			}
			p = next(sb, p)
		}
		return
	}
	k, j, p := l.seek(start)
	for i := start; i <= end; k++ {
		c := &l.ch[k]
		b := l.bytesOf(k)
		if j == 0 {
			p = c.lo
		}
		for ; j < c.cnt && i <= end; j, i = j+1, i+1 {
			if !fn(view(b, p)) {
				return
			}
			p = next(b, p)
		}
		j = 0
	}
}

// Set replaces element i with a copy of b, with the node changes of
// quicklistReplaceEntry: in place, unless the node is PLAIN or b is large
// (isLargeElement), when b is inserted after the element (_quicklistInsert)
// and the old element deleted.
func (l *List) Set(i int, b []byte) {
	l.grow()
	k, off := l.nodeOf(i)
	if k < 0 {
		l.dataSet(i, b)
		return
	}
	nd := l.nodes[k]
	large := l.isLarge(len(b))
	switch {
	case !nd.plain && !large: // lpReplace
		l.nodes[k].sz += lpEntrySizeB(b) - lpEntrySizeB(l.Index(i))
		l.dataSet(i, b)
		l.qlTouched(k, l.qlEdited(k))
	case nd.plain && large: // the node's element replaced
		l.nodes[k].sz = len(b)
		l.dataSet(i, b)
		l.qlTouched(k, l.qlEdited(k))
	case nd.plain:
		// quicklistInsertAfter the PLAIN node (full, at its tail): into
		// the next node when it has room, else a new node after it; then
		// __quicklistDelNode of the PLAIN node.
		// (The data follows each step: compression reads the nodes.)
		was := l.qlEdited(k)
		e := lpEntrySizeB(b)
		if l.allowIn(k+1, len(b)) {
			l.nodes[k+1].count++
			l.nodes[k+1].sz += e
			wasNext := l.qlEdited(k + 1)
			l.dataInsertAt(i+1, b)
			l.qlRecompressOnly(k+1, wasNext)
			l.qlRecompressOnly(k, was)
		} else {
			l.nodeInsertAt(k+1, qlNode{count: 1, sz: lpHdrSize + 1 + e})
			l.dataInsertAt(i+1, b)
			l.qlTouched(k, was)
			l.qlCompress(k + 1)
		}
		l.dataDelete(i)
		l.nodeDrop(k)
	default:
		// A large element into a packed node: dont_compress on the node,
		// quicklistInsertAfter (a PLAIN node after the node, splitting it
		// after the element unless the element is its last), then the
		// old element, now the node's last, deleted (the node with it
		// when it was alone).
		old := lpEntrySizeB(l.Index(i))
		l.nodes[k].dont = true
		was := l.qlEdited(k)
		if off == nd.count-1 {
			l.nodeInsertAt(k+1, plainNode(b))
			l.dataInsertAt(i+1, b)
			l.qlTouched(k, was)
			l.qlCompress(k + 1)
		} else {
			left, right := l.splitSizes(k, i-off, off+1)
			left.dont = true
			l.nodes[k] = left
			l.nodeInsertAt(k+1, plainNode(b))
			l.dataInsertAt(i+1, b)
			l.ghostAt, l.ghostN = k+2, right.count
			l.qlTouched(k, was)
			l.qlCompress(k + 1)
			l.ghostN = 0
			l.nodeInsertAt(k+2, right)
			l.qlCompress(k + 1)
			l.qlCompress(k + 2)
		}
		l.dataDelete(i)
		l.nodes[k].dont = false
		if l.nodes[k].count == 1 {
			l.nodeDrop(k)
		} else {
			l.nodes[k].count--
			l.nodes[k].sz -= old
			l.qlTouched(k, was)
			l.qlCompress(k + 1)
		}
	}
}

// splitSizes is _quicklistSplitNode's two halves of packed node k, whose
// first element is element start: the first cut elements and the rest.
func (l *List) splitSizes(k, start, cut int) (left, right qlNode) {
	nd := l.nodes[k]
	left = qlNode{count: cut, sz: lpHdrSize + 1}
	for j := 0; j < cut; j++ {
		left.sz += lpEntrySizeB(l.Index(start + j))
	}
	right = qlNode{count: nd.count - cut, sz: nd.sz - (left.sz - lpHdrSize - 1)}
	return left, right
}

// nodeDrop removes node k (__quicklistDelNode).
func (l *List) nodeDrop(k int) {
	if k == 0 { // O(1) at the head too
		l.nodes[0] = qlNode{}
		l.nodes = l.nodes[1:]
		l.nh++
	} else {
		l.nodes = slices.Delete(l.nodes, k, k+1)
	}
	l.qlCompress(-1)
}

// PushFront adds a copy of b at the head.
func (l *List) PushFront(b []byte) {
	if l.listBody == nil {
		if l.smallPush(b, true, false) {
			return
		}
		l.grow()
	}
	l.dataPushFront(b)
	switch {
	case l.isLarge(len(b)): // __quicklistInsertPlainNode before the head
		l.nodePushFront(plainNode(b))
	case l.allowIn(0, len(b)):
		l.nodes[0].count++
		l.nodes[0].sz += lpEntrySizeB(b)
		l.nodes[0].lzf = 0
		return
	default:
		l.nodePushFront(qlNode{count: 1, sz: lpHdrSize + 1 + lpEntrySizeB(b)})
	}
	if int(l.depth) != 0 { // __quicklistInsertNode: the old head, then the new one
		l.qlCompress(1)
		l.qlCompress(0)
	}
}

// PushBack adds a copy of b at the tail.
func (l *List) PushBack(b []byte) {
	if l.listBody == nil {
		if l.smallPush(b, false, false) {
			return
		}
		l.grow()
	}
	l.dataPushBack(b)
	switch k := len(l.nodes) - 1; {
	case l.isLarge(len(b)): // __quicklistInsertPlainNode after the tail
		l.nodePushBack(plainNode(b))
	case l.allowIn(k, len(b)):
		l.nodes[k].count++
		l.nodes[k].sz += lpEntrySizeB(b)
		l.nodes[k].lzf = 0
		return
	default:
		l.nodePushBack(qlNode{count: 1, sz: lpHdrSize + 1 + lpEntrySizeB(b)})
	}
	if int(l.depth) != 0 {
		l.qlCompress(len(l.nodes) - 2)
		l.qlCompress(len(l.nodes) - 1)
	}
}

// PopFront removes and returns the head element (the list is not empty),
// in bytes the caller owns.
func (l *List) PopFront() []byte { return append([]byte(nil), l.PopFrontView()...) }

// PopFrontView is PopFront for a caller done with the bytes before the
// list's next change (a reply written at once): a view, not a copy.
func (l *List) PopFrontView() []byte {
	if l.listBody == nil {
		return l.smallPop(true)
	}
	b := l.dataPopFront()
	l.nodeRemove(0, b)
	return b
}

// PopBack removes and returns the tail element (the list is not empty),
// in bytes the caller owns.
func (l *List) PopBack() []byte { return append([]byte(nil), l.PopBackView()...) }

// PopBackView is PopBack as a view (see PopFrontView).
func (l *List) PopBackView() []byte {
	if l.listBody == nil {
		return l.smallPop(false)
	}
	b := l.dataPopBack()
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
	nd.sz -= lpEntrySizeB(b)
	was := l.qlEdited(k)
	if nd.count <= 0 {
		l.nodeDrop(k)
	} else if k != 0 && k != len(l.nodes)-1 {
		l.qlTouched(k, was)
	}
}

// Insert inserts a copy of b before element pivot, or after it when after
// (LINSERT), with the node changes of _quicklistInsert.
func (l *List) Insert(pivot int, after bool, b []byte) {
	l.grow()
	i := pivot
	if after {
		i++
	}
	if int(l.depth) != 0 {
		k, _ := l.nodeOf(pivot)
		l.qlWalked(k)
	}
	if i == 0 {
		l.PushFront(b)
		return
	}
	if i == l.n {
		l.PushBack(b)
		return
	}
	post := l.nodeInsert(pivot, after, b)
	l.dataInsert(i, b)
	if post != nil { // (a split for a PLAIN node adds its second half here)
		post()
	}
}

// exceeds is _quicklistNodeExceedsLimit for a node of sz bytes and count
// entries.
func (l *List) exceeds(sz, count int) bool {
	if int(l.fill) < 0 {
		return sz > optimizationLevel[min(-int(l.fill)-1, len(optimizationLevel)-1)]
	}
	return sz > sizeSafetyLimit || count > max(int(l.fill), 1)
}

// nodeInsertAt inserts a node at index k of nodes.
func (l *List) nodeInsertAt(k int, nd qlNode) {
	if k == 0 {
		l.nodePushFront(nd)
		return
	}
	old := cap(l.nodes)
	l.nodes = slices.Insert(l.nodes, k, nd)
	if cap(l.nodes) != old {
		l.nbuf, l.nh = l.nodes[:cap(l.nodes)], 0
	}
}

// nodeInsert is _quicklistInsert's choice of node for an element b
// inserted before or after element pivot, which is not at either end of
// the list: the pivot's node when it has room; else the neighbour when the
// pivot is that node's edge and the neighbour has room; else a new node
// there; else the node is split at the pivot, b joins the new half, and
// the nodes around are merged where they fit (_quicklistSplitNode,
// _quicklistMergeNodes).
//
// It returns the compression of the nodes it changed (list_compress.go),
// to run once the element is in the list's data.
func (l *List) nodeInsert(pivot int, after bool, b []byte) (post func()) {
	k, off := l.nodeOf(pivot)
	if k < 0 {
		return nil
	}
	nd := l.nodes[k]
	e := lpEntrySizeB(b)
	allow := func(j int) bool { return l.allowIn(j, len(b)) }
	full := !allow(k)
	atTail := after && off == nd.count-1
	atHead := !after && off == 0
	if l.isLarge(len(b)) {
		return l.nodeInsertLarge(k, off, after, atTail || atHead, b)
	}
	switch {
	// (The node that takes the element is compressed again only when it
	// was compressed: quicklistRecompressOnly.)
	case !full:
		l.nodes[k].count++
		l.nodes[k].sz += e
		was := l.qlEdited(k)
		return func() { l.qlRecompressOnly(k, was) }
	case atTail && allow(k+1):
		l.nodes[k+1].count++
		l.nodes[k+1].sz += e
		was := l.qlEdited(k + 1)
		return func() { l.qlRecompressOnly(k+1, was) }
	case atHead && allow(k-1):
		l.nodes[k-1].count++
		l.nodes[k-1].sz += e
		was := l.qlEdited(k - 1)
		return func() { l.qlRecompressOnly(k-1, was) }
	case atTail:
		l.nodeInsertAt(k+1, qlNode{count: 1, sz: lpHdrSize + 1 + e})
		return func() { // __quicklistInsertNode: the old node, then the new
			l.qlCompress(k)
			l.qlCompress(k + 1)
		}
	case atHead:
		l.nodeInsertAt(k, qlNode{count: 1, sz: lpHdrSize + 1 + e})
		return func() {
			l.qlCompress(k + 1)
			l.qlCompress(k)
		}
	default:
		// Split: with after, the node keeps entries 0..off and the new
		// node (after it) gets the rest with b first; without, the node
		// keeps off.. and the new node (before it) gets 0..off-1 and b.
		cut := off
		if after {
			cut = off + 1
		}
		left, right := l.splitSizes(k, pivot-off, cut)
		center := k
		if after {
			right.count++
			right.sz += e
		} else {
			left.count++
			left.sz += e
			center = k + 1
		}
		l.nodes[k] = left
		l.nodeInsertAt(k+1, right)
		l.mergeAround(center)
		// The split halves and any node merged into them changed
		// (decompressed for the edit); compress them as
		// __quicklistInsertNode and _quicklistMergeNodes do.
		a, z := max(k-2, 0), min(k+2, len(l.nodes)-1)
		for j := a; j <= z; j++ {
			l.qlEdited(j)
		}
		return func() {
			l.qlCompress(-1)
			for j := a; j <= z; j++ {
				l.qlCompress(j)
			}
		}
	}
}

// nodeInsertLarge is _quicklistInsert of a large element b (a PLAIN node)
// next to element off of node k: beside the node when the node is PLAIN
// or the element is at the node's edge on that side, else between the two
// halves of the node split there (no merge). The iterator is not reset on
// this path: releasing it compresses the pivot's node once more.
func (l *List) nodeInsertLarge(k, off int, after, edge bool, b []byte) (post func()) {
	if l.nodes[k].plain || edge {
		at, node := k, k+1 // the new node's index, and the pivot's after
		if after {
			at, node = k+1, k
		}
		l.nodeInsertAt(at, plainNode(b))
		return func() { // __quicklistInsertNode, then the iterator's release
			l.qlCompress(node)
			l.qlCompress(at)
			l.qlCompress(node)
		}
	}
	// _quicklistSplitNode: with after, the node keeps 0..off and the new
	// node (after the PLAIN one) the rest; without, the new node (before
	// the PLAIN one) takes 0..off-1.
	cut := off
	if after {
		cut = off + 1
	}
	start := l.nodeStart(k)
	left, right := l.splitSizes(k, start, cut)
	was := l.qlEdited(k)
	// The PLAIN node goes in now; the split-off half (a ghost until then)
	// after the first compressions, which see the list without it.
	if after {
		l.nodes[k] = left
		l.nodeInsertAt(k+1, plainNode(b))
		l.ghostAt, l.ghostN = k+2, right.count
		return func() {
			l.qlTouched(k, was) // __quicklistInsertNode(node, plain)
			l.qlCompress(k + 1)
			l.ghostN = 0
			l.nodeInsertAt(k+2, right)
			l.qlCompress(k + 1) // __quicklistInsertNode(plain, new node)
			l.qlCompress(k + 2)
			l.qlCompress(k) // the iterator's release
		}
	}
	l.nodes[k] = right
	l.nodeInsertAt(k, plainNode(b))
	l.ghostAt, l.ghostN = k, left.count
	return func() {
		l.qlTouched(k+1, was)
		l.qlCompress(k)
		l.ghostN = 0
		l.nodeInsertAt(k, left)
		l.qlCompress(k + 1)
		l.qlCompress(k)
		l.qlCompress(k + 2)
	}
}

// canMerge is _quicklistNodeAllowMerge of nodes a and b: never a PLAIN
// node.
func (l *List) canMerge(a, b int) bool {
	if a < 0 || b < 0 || a >= len(l.nodes) || b >= len(l.nodes) || l.nodes[a].plain || l.nodes[b].plain {
		return false
	}
	// 7.0.15 estimates the merged size as a->sz + b->sz - 11 (the
	// ziplist header and end it had before listpacks; a listpack's are
	// 7 bytes): a merge may make a node up to 4 bytes over the limit, as
	// redis-server does.
	return !l.exceeds(l.nodes[a].sz+l.nodes[b].sz-11, l.nodes[a].count+l.nodes[b].count)
}

// mergeNodes merges node i+1 into node i (lpMerge: one header less).
func (l *List) mergeNodes(i int) {
	l.nodes[i].count += l.nodes[i+1].count
	l.nodes[i].sz += l.nodes[i+1].sz - lpHdrSize - 1
	l.nodes[i].lzf = 0
	l.nodes = slices.Delete(l.nodes, i+1, i+2)
}

// mergeAround is _quicklistMergeNodes around node c.
func (l *List) mergeAround(c int) {
	if l.canMerge(c-1, c-2) {
		l.mergeNodes(c - 2)
		c--
	}
	if l.canMerge(c+1, c+2) {
		l.mergeNodes(c + 1)
	}
	t := c
	if l.canMerge(c, c-1) {
		l.mergeNodes(c - 1)
		t = c - 1
	}
	if l.canMerge(t, t+1) {
		l.mergeNodes(t)
	}
}

// Filter keeps, in order, the elements for which keep returns true; keep
// sees every element once, head to tail (b a view, valid during the call).
// O(n): the kept elements are packed into new chunks.
func (l *List) Filter(keep func(i int, b []byte) bool) { l.FilterFrom(keep, false) }

// FilterFrom is Filter for LREM, whose iterator goes from the tail when
// fromTail (a negative count): the nodes it empties are deleted in that
// order (__quicklistDelNode, each compressing around the list's ends as
// it is then).
func (l *List) FilterFrom(keep func(i int, b []byte) bool, fromTail bool) {
	l.grow()
	defer l.shrink()
	k, left := 0, 0 // node of element r, and its elements after r
	if len(l.nodes) > 0 {
		left = l.nodes[0].count
	}
	nl := List{listBody: &listBody{}} // the kept elements' chunks
	r := 0
	for ci := range l.ch {
		c := &l.ch[ci]
		cb := l.bytesOf(ci)
		for p := c.lo; p < c.hi; p = next(cb, p) {
			for left == 0 && k+1 < len(l.nodes) {
				k++
				left = l.nodes[k].count
			}
			left--
			b := view(cb, p)
			if keep(r, b) {
				nl.dataPushBack(b)
			} else if k < len(l.nodes) {
				l.nodes[k].count--
				l.nodes[k].sz -= lpEntrySizeB(b)
				l.nodes[k].lzf = 0
			}
			r++
		}
	}
	l.ch, l.cbuf, l.c0, l.base, l.n = nl.ch, nl.cbuf, nl.c0, nl.base, nl.n
	l.changed()
	l.zFix(0, len(l.ch)-1)
	if int(l.depth) == 0 {
		l.nodes = slices.DeleteFunc(l.nodes, func(nd qlNode) bool { return nd.count <= 0 })
		return
	}
	// Every node LREM's iterator empties is deleted with
	// __quicklistCompress(NULL), which decompresses the nodes that come
	// within depth of an end as the list shrinks (the emptied nodes
	// still to go hold no elements here: the data is already final).
	if fromTail {
		for k := len(l.nodes) - 1; k >= 0; k-- {
			if l.nodes[k].count <= 0 {
				l.nodeDrop(k)
			}
		}
	} else {
		for k := 0; k < len(l.nodes); {
			if l.nodes[k].count <= 0 {
				l.nodeDrop(k)
				continue
			}
			k++
		}
	}
	// It decompresses the nodes it walks and compresses each again as
	// it leaves it (quicklistNext's quicklistCompress).
	l.qlCompressAll()
}

// Trim keeps elements start..end inclusive (0 <= start <= end < Len) and
// drops the rest (LTRIM).
func (l *List) Trim(start, end int) {
	l.grow()
	defer l.shrink()
	// As ltrimCommand: the head range first, then the tail's.
	for k := 0; k < start; k++ {
		l.nodeRemove(0, l.dataPopFront())
	}
	for l.n > end+1-start {
		l.nodeRemove(len(l.nodes)-1, l.dataPopBack())
	}
}

// Type is TypeList.
func (l *List) Type() Type { return TypeList }

// Encoding is always quicklist in Redis 7.0.
func (l *List) Encoding() Encoding { return EncodingQuicklist }

// Dup is listTypeDup: an independent list, its chunks copied (each to a
// buffer of its size).
func (l *List) Dup() Value {
	if l.listBody == nil {
		return l.smallDup()
	}
	c := &List{fill: l.fill, depth: l.depth, thr: l.thr, n: l.n, listBody: &listBody{base: l.base, nodes: slices.Clone(l.nodes)}}
	c.nbuf = c.nodes[:cap(c.nodes)]
	if len(l.ch) > 0 {
		c.ch = make([]lchunk, len(l.ch))
		c.cbuf = c.ch
		for k := range l.ch {
			o := &l.ch[k]
			if o.z == zPacked { // the LZF bytes as they are
				c.ch[k] = *o
				c.ch[k].b = make([]byte, len(o.b))
				copy(c.ch[k].b, o.b)
				continue
			}
			b := make([]byte, o.used())
			b = b[:cap(b)]
			c.ch[k] = lchunk{b: b, hi: copy(b, o.b[o.lo:o.hi]), cnt: o.cnt, start: o.start, z: o.z}
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
// count, over the shadow nodes (see List.nodes), which follow Redis's for
// every list command (checked against redis-server 7.0.15 after every
// command of a random stream). A node Redis holds LZF-compressed counts
// its quicklistLZF's allocation instead (list_compress.go).
func (l *List) Size(samples int) uint64 {
	if l.listBody == nil {
		if l.n == 0 {
			return RobjSize + quicklistSize
		}
		return RobjSize + quicklistSize + quicklistNodeSize + JemallocSize(uint64(l.ssz))
	}
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
		elesize += quicklistNodeSize + nd.alloc()
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
	l := List{fill: clampFill(fill)}
	return !l.exceeds(sz+n+8, count+1)
}

// lpEntrySizeB is the bytes b takes in a listpack: its encoding (an integer
// when lpStringToInt64 accepts it, else a string with a 1, 2 or 5 byte
// header) plus the backlen (redisutil.LPEntrySize).
func lpEntrySizeB(b []byte) int { return redisutil.LPEntrySize(b) }
