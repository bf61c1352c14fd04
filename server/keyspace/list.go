package keyspace

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
	fill int      // list-max-listpack-size when created (quicklist fill)
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
func (l *List) Set(i int, b []byte) { l.buf[l.slot(i)] = b }

// PushFront adds b (handed over) at the head.
func (l *List) PushFront(b []byte) {
	if l.n == len(l.buf) {
		l.grow()
	}
	l.head = (l.head - 1) & (len(l.buf) - 1)
	l.buf[l.head] = b
	l.n++
}

// PushBack adds b (handed over) at the tail.
func (l *List) PushBack(b []byte) {
	if l.n == len(l.buf) {
		l.grow()
	}
	l.buf[l.slot(l.n)] = b
	l.n++
}

// PopFront removes and returns the head element (the list is not empty).
func (l *List) PopFront() []byte {
	s := l.head
	b := l.buf[s]
	l.buf[s] = nil
	l.head = (l.head + 1) & (len(l.buf) - 1)
	l.n--
	l.shrink()
	return b
}

// PopBack removes and returns the tail element (the list is not empty).
func (l *List) PopBack() []byte {
	s := l.slot(l.n - 1)
	b := l.buf[s]
	l.buf[s] = nil
	l.n--
	l.shrink()
	return b
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
	l.PushBack(nil)
	for j := l.n - 1; j > i; j-- {
		l.buf[l.slot(j)] = l.buf[l.slot(j-1)]
	}
	l.buf[l.slot(i)] = b
}

// Filter keeps, in order, the elements for which keep returns true; keep
// sees every element once, head to tail. O(n).
func (l *List) Filter(keep func(i int, b []byte) bool) {
	w := 0
	for r := 0; r < l.n; r++ {
		b := l.buf[l.slot(r)]
		if keep(r, b) {
			l.buf[l.slot(w)] = b
			w++
		}
	}
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
	c := &List{fill: l.fill, n: l.n}
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
// count. The nodes are those the elements would fill when pushed one by one
// from head to tail (_quicklistNodeAllowInsert under list-max-listpack-size);
// a list shaped by LPUSH, LINSERT or deletions in the middle can be split
// differently in Redis, so its size is close rather than exact.
func (l *List) Size(samples int) uint64 {
	if l.n == 0 {
		return RobjSize + quicklistSize
	}
	var nodes, sampled int
	var elesize uint64
	curSz, curCount := 0, 0
	flush := func() {
		if curCount == 0 {
			return
		}
		nodes++
		if samples <= 0 || sampled < samples {
			sampled++
			elesize += quicklistNodeSize + JemallocSize(uint64(curSz))
		}
	}
	for i := 0; i < l.n; i++ {
		b := l.buf[l.slot(i)]
		if curCount > 0 && allowInsert(curSz, curCount, l.fill, len(b)) {
			curSz += lpEntrySize(b)
			curCount++
			continue
		}
		flush()
		curSz, curCount = lpHdrSize+1+lpEntrySize(b), 1
	}
	flush()
	asize := float64(RobjSize+quicklistSize) + float64(elesize)/float64(sampled)*float64(nodes)
	return uint64(asize)
}

// allowInsert is _quicklistNodeAllowInsert for a node of sz listpack bytes
// and count entries, adding an element of n bytes.
func allowInsert(sz, count, fill, n int) bool {
	overhead := 1
	if n >= 254 {
		overhead = 5
	}
	switch {
	case n < 64:
		overhead++
	case n < 16384:
		overhead += 2
	default:
		overhead += 5
	}
	newSz := sz + n + overhead
	if fill < 0 {
		off := -fill - 1
		if off < len(optimizationLevel) && newSz <= optimizationLevel[off] {
			return true
		}
	}
	if newSz > sizeSafetyLimit {
		return false
	}
	return count < fill
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
