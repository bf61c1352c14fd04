package keyspace

import (
	"encoding/binary"
	"sync"

	"github.com/vigil-kv/vigil/internal/redisutil"
)

// list-compress-depth, as quicklist.c compresses: a list keeps the depth
// it was created with (quicklist->compress, set by quicklistSetOptions when
// LPUSH/RPUSH/LINSERT/LMOVE create the key or an RDB/RESTORE loads it; 0
// for SORT ... STORE's createQuicklistObject, as Redis), and its shadow
// nodes (List.nodes) record which of Redis's quicklist nodes are held
// LZF-compressed and at what size, changed where quicklist.c changes them:
// __quicklistCompress after a node is added or deleted (the nodes within
// depth of either end decompressed, the first node past the depth on each
// side compressed), and the node an edit touched compressed again when it
// lies outside the depth (quicklistCompress / quicklistRecompressOnly).
// A node is compressed only when its listpack has MIN_COMPRESS_BYTES (48)
// and LZF saves more than MIN_COMPRESS_IMPROVE (8) bytes
// (__quicklistCompressNode); the size comes from compressing the node's
// listpack bytes with liblzf's algorithm, so it is Redis's.
//
// The elements themselves live in Vigil's chunks (listchunk.go), which
// are compressed by their own rule (below); the shadow nodes' compression
// is what MEMORY USAGE, DEBUG OBJECT and the RDB/DUMP encoding (inner nodes
// written as the LZF blobs Redis holds) report. Only nodes near an edit are compressed or decompressed, so an
// operation costs at most a few LZF runs of one node (~8 KB) beside what
// it did before; with depth 0 (the default) nothing here runs.

const (
	minCompressBytes   = 48 // MIN_COMPRESS_BYTES
	minCompressImprove = 8  // MIN_COMPRESS_IMPROVE
	compressMax        = 1<<16 - 1
	quicklistLZFHdr    = 8 // sizeof(quicklistLZF): its size_t sz
	// lzfNo marks a raw node whose listpack (as it is now) does not
	// compress, so that the next quicklistCompressNode need not try
	// again: the result would be the same.
	lzfNo = -1
)

// SetCompressDepth sets list-compress-depth for a list being created
// (quicklistSetOptions; clamped to 0..65535 as quicklistSetCompressDepth).
func (l *List) SetCompressDepth(d int) {
	l.depth = uint16(min(max(d, 0), compressMax))
	if l.listBody == nil { // one node: never compressed
		return
	}
	l.qlCompressAll()
	l.zFix(0, len(l.ch)-1)
}

// CompressDepth is the depth the list was created with (DEBUG OBJECT's
// ql_compressed is CompressDepth() != 0).
func (l *List) CompressDepth() int { return int(l.depth) }

// NodeCompressed reports whether quicklist node k is held LZF-compressed,
// and its compressed bytes.
func (l *List) NodeCompressed(k int) (int, bool) {
	if l.listBody == nil {
		return 0, false
	}
	if k < 0 || k >= len(l.nodes) || l.nodes[k].lzf <= 0 {
		return 0, false
	}
	return l.nodes[k].lzf, true
}

// nodeStart is the index of node k's first element, summed from the
// nearer end of the list.
func (l *List) nodeStart(k int) int {
	if l.ghostN > 0 { // from the head, with the ghost's elements
		s := 0
		for _, nd := range l.nodes[:k] {
			s += nd.count
		}
		if l.ghostAt <= k {
			s += l.ghostN
		}
		return s
	}
	if k <= len(l.nodes)/2 {
		s := 0
		for _, nd := range l.nodes[:k] {
			s += nd.count
		}
		return s
	}
	s := l.n
	for _, nd := range l.nodes[k:] {
		s -= nd.count
	}
	return s
}

// AppendNodeListpack appends node k's listpack, byte for byte as Redis
// holds it (lpNew + lpAppend of its elements), to b.
func (l *List) AppendNodeListpack(b []byte, k int) []byte {
	if l.listBody == nil {
		return l.smallListpack(b)
	}
	nd := l.nodes[k]
	start := l.nodeStart(k)
	h := len(b)
	b = append(b, 0, 0, 0, 0, 0, 0)
	for i := start; i < start+nd.count; i++ {
		b = lpAppendEntry(b, l.Index(i))
	}
	b = append(b, 0xFF)
	binary.LittleEndian.PutUint32(b[h:], uint32(len(b)-h))
	binary.LittleEndian.PutUint16(b[h+4:], uint16(min(nd.count, 65535)))
	return b
}

// lzfScratch holds the buffers of qlCompressNode (a node's listpack and
// its LZF output).
var lzfScratch = sync.Pool{New: func() any { return new([2][]byte) }}

// qlCompressNode is quicklistCompressNode: a raw node is compressed when
// __quicklistCompressNode succeeds.
func (l *List) qlCompressNode(k int) {
	nd := &l.nodes[k]
	if nd.lzf != 0 || nd.dont { // dont_compress: LSET is at work on it
		return
	}
	if nd.sz < minCompressBytes {
		nd.lzf = lzfNo
		return
	}
	s := lzfScratch.Get().(*[2][]byte)
	defer lzfScratch.Put(s)
	var lp []byte
	if nd.plain { // the element itself
		lp = append(s[0][:0], l.Index(l.nodeStart(k))...)
	} else {
		lp = l.AppendNodeListpack(s[0][:0], k)
	}
	if cap(s[1]) < len(lp) {
		s[1] = make([]byte, len(lp))
	}
	out := s[1][:len(lp)]
	n := redisutil.LZFCompress(lp, out)
	s[0] = lp
	if n == 0 || n+minCompressImprove >= len(lp) {
		nd.lzf = lzfNo
		return
	}
	nd.lzf = n
}

// qlDecompress is quicklistDecompressNode.
func (l *List) qlDecompress(k int) {
	if l.nodes[k].lzf > 0 {
		l.nodes[k].lzf = 0
	}
}

// qlCompress is __quicklistCompress(ql, node k) (k < 0: NULL): with at
// least 2*depth nodes, the nodes within depth of either end are
// decompressed, then node k (when outside them) and the first node past
// the depth on each side are compressed.
func (l *List) qlCompress(k int) {
	n := len(l.nodes)
	if int(l.depth) == 0 || n == 0 || n < 2*int(l.depth) {
		return
	}
	f, r := 0, n-1
	in := false
	for d := 0; d < int(l.depth); d++ {
		l.qlDecompress(f)
		l.qlDecompress(r)
		if f == k || r == k {
			in = true
		}
		if f == r || f+1 == r {
			return
		}
		f++
		r--
	}
	if !in && k >= 0 && k < n {
		l.qlCompressNode(k)
	}
	l.qlCompressNode(f)
	l.qlCompressNode(r)
}

// qlTouched is quicklistCompress(ql, node k) after an edit changed node
// k's listpack: a node that was compressed (decompressed for the edit,
// its recompress flag set) is compressed again; another goes through
// __quicklistCompress.
func (l *List) qlTouched(k int, wasCompressed bool) {
	if int(l.depth) == 0 || k < 0 || k >= len(l.nodes) {
		return
	}
	if wasCompressed {
		l.qlCompressNode(k)
		return
	}
	l.qlCompress(k)
}

// qlRecompressOnly is quicklistRecompressOnly after an edit of node k:
// compressed again only when it was compressed before.
func (l *List) qlRecompressOnly(k int, wasCompressed bool) {
	if wasCompressed && k >= 0 && k < len(l.nodes) {
		l.qlCompressNode(k)
	}
}

// qlWalked is the compression LINSERT's iterator does on its way to the
// pivot in node k: each node it leaves goes through quicklistCompress,
// which compresses a raw node outside the depth (a node an earlier
// LINSERT grew while raw, say).
func (l *List) qlWalked(k int) {
	n := len(l.nodes)
	if int(l.depth) == 0 || n < 2*int(l.depth) {
		return
	}
	for j := int(l.depth); j < k && j < n-int(l.depth); j++ {
		l.qlCompressNode(j)
	}
}

// qlEdited marks node k's listpack changed: it is raw (Redis decompresses
// a node to change it) and its compressibility unknown. It reports whether
// the node was compressed.
func (l *List) qlEdited(k int) bool {
	was := l.nodes[k].lzf > 0
	l.nodes[k].lzf = 0
	return was
}

// qlCompressAll brings every node to the state __quicklistCompress leaves
// around nodes it has walked over (after an edit of many nodes: LREM,
// or a depth set on a list with nodes): the nodes within depth of either
// end raw, the others compressed where they compress.
func (l *List) qlCompressAll() {
	n := len(l.nodes)
	if int(l.depth) == 0 || n == 0 || n < 2*int(l.depth) {
		return
	}
	for k := range l.nodes {
		if k < int(l.depth) || k >= n-int(l.depth) {
			l.qlDecompress(k)
		} else {
			l.qlCompressNode(k)
		}
	}
}

// nodeAlloc is the allocation of node k's entry: its listpack, or the
// quicklistLZF that replaced it (zrealloc'd to 8 + the LZF bytes).
func (nd *qlNode) alloc() uint64 {
	if nd.lzf > 0 {
		return JemallocSize(uint64(quicklistLZFHdr + nd.lzf))
	}
	return JemallocSize(uint64(nd.sz))
}

// lpAppendEntry appends s as a listpack entry, as lpAppend (redisutil's,
// shared with the RDB encoder; lpEntrySizeB is its size).
func lpAppendEntry(b, s []byte) []byte { return redisutil.LPAppendEntry(b, s) }

// Vigil's own chunks (listchunk.go) are really held compressed under
// list-compress-depth, as quicklist.c holds its inner nodes: a chunk more
// than zEnds chunks from either end of the list has its entries replaced by
// their LZF bytes (b; lo 0 and hi the entries' raw length) when LZF saves
// more than MIN_COMPRESS_IMPROVE bytes of at least MIN_COMPRESS_BYTES, as
// __quicklistCompressNode. The chunks at the ends, where pushes and pops
// work, stay raw. A write in the middle (LINSERT, LSET) decompresses the
// chunk it edits and compresses it again after
// (quicklistDecompressNodeForUse / quicklistRecompressOnly); a read
// (LINDEX, LRANGE, LPOS, the RDB and AOF encoders) decompresses into a
// buffer the list keeps, one chunk at a time (zc), without changing the
// chunk, so that readers sharing the list (a snapshot's writer and the
// server) never write to it; the next write drops that buffer.
//
// Which chunks are compressed is Vigil's choice (its chunks are 4 KB
// where a quicklist node of the default fill is 8 KB: zEnds keeps 2*depth
// raw at each end, about the bytes Redis keeps raw); what MEMORY USAGE,
// DEBUG OBJECT and the RDB report follows Redis's nodes (the shadow nodes
// above), not the chunks.

// Chunk compression states (lchunk.z).
const (
	zRaw    = 0 // raw, not tried since it changed
	zPacked = 1 // b holds the LZF bytes of the entries
	zNo     = 2 // raw: LZF does not save enough as it is
)

// zcache is a compressed chunk decompressed by a read: chunk k's entries,
// raw (lo 0).
type zcache struct {
	k int
	b []byte
}

// zEnds is the number of chunks kept raw at each end.
func (l *List) zEnds() int { return 2 * int(l.depth) }

// bytesOf is chunk k's buffer as entries: c.b, or for a compressed chunk
// its decompressed bytes (from zc, or decompressed now and kept there).
func (l *List) bytesOf(k int) []byte {
	c := &l.ch[k]
	if c.z != zPacked {
		return c.b
	}
	if zc := l.zc.Load(); zc != nil && zc.k == k {
		return zc.b
	}
	raw, err := redisutil.LZFDecompress(c.b, c.hi)
	if err != nil || len(raw) != c.hi {
		panic("keyspace: list chunk does not decompress") // our own bytes: a bug
	}
	l.zc.Store(&zcache{k: k, b: raw})
	return raw
}

// zOwn makes chunk k raw for an edit (the caller owns the list).
func (l *List) zOwn(k int) {
	if k < 0 || k >= len(l.ch) {
		return
	}
	c := &l.ch[k]
	if c.z == zPacked {
		raw := l.bytesOf(k)
		c.b, c.lo, c.hi = raw[:len(raw):len(raw)], 0, len(raw)
		l.zc.Store(nil)
	}
	c.z = zRaw
}

// zPack compresses raw chunk k when LZF saves enough (__quicklistCompressNode).
func (l *List) zPack(k int) {
	c := &l.ch[k]
	if c.z != zRaw {
		return
	}
	used := c.used()
	if used < minCompressBytes {
		c.z = zNo
		return
	}
	s := lzfScratch.Get().(*[2][]byte)
	defer lzfScratch.Put(s)
	if cap(s[1]) < used {
		s[1] = make([]byte, used)
	}
	out := s[1][:used]
	n := redisutil.LZFCompress(c.b[c.lo:c.hi], out)
	if n == 0 || n+minCompressImprove >= used {
		c.z = zNo
		return
	}
	c.b = append(make([]byte, 0, n), out[:n]...)
	c.lo, c.hi, c.z = 0, used, zPacked
}

// zState brings chunk k to the state its place asks: compressed (where it
// compresses) when inner, raw near the ends.
func (l *List) zState(k int) {
	if k < 0 || k >= len(l.ch) {
		return
	}
	if e := l.zEnds(); int(l.depth) > 0 && k >= e && k < len(l.ch)-e {
		l.zPack(k)
	} else if l.ch[k].z == zPacked {
		l.zOwn(k)
	}
}

// zFixEnds fixes the chunks at the edges of the raw ends after a chunk was
// added or removed at an end.
func (l *List) zFixEnds() {
	if int(l.depth) == 0 {
		return
	}
	e, n := l.zEnds(), len(l.ch)
	l.zState(e - 1)
	l.zState(e)
	l.zState(n - 1 - e)
	l.zState(n - e)
}

// zFix fixes chunks a..b (an edit changed them) and the ends.
func (l *List) zFix(a, b int) {
	if int(l.depth) == 0 {
		return
	}
	for k := max(a, 0); k <= b && k < len(l.ch); k++ {
		l.zState(k)
	}
	l.zFixEnds()
}

// Walk is the compression a reading iterator (LRANGE, LINDEX, LPOS, a
// LINSERT whose pivot is missing) leaves on the nodes holding elements i
// through j (either order): each node it visits goes through
// quicklistCompress as the iterator leaves it (quicklistNext,
// quicklistReleaseIterator), which compresses a raw node outside the depth
// (one an earlier LINSERT grew while raw, say). WalkChanges reports whether
// Walk would change a node, so that a reader makes the value its own
// (DB.Mutable) only then.
func (l *List) Walk(i, j int) {
	a, b, ok := l.walkNodes(i, j)
	for k := a; ok && k <= b; k++ {
		l.qlCompress(k)
	}
}

// WalkChanges reports whether Walk(i, j) would change a node.
func (l *List) WalkChanges(i, j int) bool {
	a, b, ok := l.walkNodes(i, j)
	for k := a; ok && k <= b; k++ {
		if l.qlCompressChanges(k) {
			return true
		}
	}
	return false
}

// walkNodes is the node range of elements i..j; false when compression is
// off or cannot apply (fewer than 2*depth nodes: nothing to compress).
func (l *List) walkNodes(i, j int) (int, int, bool) {
	if l.listBody == nil || int(l.depth) == 0 || len(l.nodes) < 2*int(l.depth) || l.n == 0 {
		return 0, 0, false // a small list is one node, within the depth
	}
	i, j = min(max(i, 0), l.n-1), min(max(j, 0), l.n-1)
	if i > j {
		i, j = j, i
	}
	a, _ := l.nodeOf(i)
	b, _ := l.nodeOf(j)
	return a, b, a >= 0
}

// qlCompressChanges reports whether qlCompress(k) would change a node:
// a node within depth of an end compressed, or node k (outside them) or
// the first node past the depth on either side raw and not yet found
// incompressible.
func (l *List) qlCompressChanges(k int) bool {
	n := len(l.nodes)
	if int(l.depth) == 0 || n == 0 || n < 2*int(l.depth) {
		return false
	}
	f, r := 0, n-1
	in := false
	for d := 0; d < int(l.depth); d++ {
		if l.nodes[f].lzf > 0 || l.nodes[r].lzf > 0 {
			return true
		}
		if f == k || r == k {
			in = true
		}
		if f == r || f+1 == r {
			return false
		}
		f++
		r--
	}
	if !in && k >= 0 && k < n && l.nodes[k].lzf == 0 {
		return true
	}
	return l.nodes[f].lzf == 0 || l.nodes[r].lzf == 0
}
