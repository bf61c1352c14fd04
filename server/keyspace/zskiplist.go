package keyspace

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"sort"
	"unsafe"
)

// zsetSL is the skiplist encoding of a sorted set (OBJ_ENCODING_SKIPLIST),
// as Redis 7.0's t_zset.c: a skiplist ordered by (score, member) with
// spans, for O(log n) ranks, plus an index from member to node (Redis's
// zset dict).
type zsetSL struct {
	dict zindex
	zsl  zskiplist
	// scanOrder is the members in ZSCAN's (hash) order, built by scan
	// and dropped by any membership change, so that an iteration with no
	// writes in between costs O(log n + count) per call.
	scanOrder []scanItem
}

func newZsetSL() *zsetSL {
	sl := &zsetSL{}
	// The header grows with the highest level in use (insertNode), where
	// Redis's has all 32 levels: 64 bytes instead of 560 in a small set.
	sl.zsl.header = zslCreateNode(1, 0, "", 0)
	sl.zsl.level = 1
	return sl
}

func (sl *zsetSL) score(member []byte) (float64, bool) {
	n := sl.dict.getB(member)
	if n == nil {
		return 0, false
	}
	return n.score, true
}

// set adds member with score or moves it to score; it reports whether the
// member is new. The skiplist keeps member (no copy).
func (sl *zsetSL) set(member string, score float64) bool {
	h := zindexHash(member)
	if n := sl.dict.find(h, member); n != nil {
		if n.score != score {
			// The node stays the member's (zslUpdateScore): the index and
			// ZSCAN's order, which hold nodes, are unchanged.
			sl.zsl.updateScore(n, score)
		}
		return false
	}
	sl.dict.add(sl.zsl.insert(score, member, h))
	sl.scanOrder = nil
	return true
}

// add links member, which is not in the set (a conversion from a
// listpack, whose members are distinct).
func (sl *zsetSL) add(member string, score float64) {
	sl.dict.add(sl.zsl.insert(score, member, zindexHash(member)))
	sl.scanOrder = nil
}

func (sl *zsetSL) remove(member []byte) bool {
	n := sl.dict.getB(member)
	if n == nil {
		return false
	}
	sl.zsl.delete(n.score, n.member)
	sl.dict.del(n)
	sl.scanOrder = nil
	return true
}

func (sl *zsetSL) rank(member []byte, rev bool) (int, bool) {
	n := sl.dict.getB(member)
	if n == nil {
		return 0, false
	}
	r := sl.zsl.rank(n.score, n.member) - 1
	if rev {
		r = sl.zsl.length - 1 - r
	}
	return r, true
}

// byRank returns the node of 1-based rank r.
func (l *zskiplist) byRank(r int) *zslNode {
	x := l.header
	traversed := 0
	for i := l.level - 1; i >= 0; i-- {
		for x.lv(i).forward != nil && traversed+int(x.lv(i).span) <= r {
			traversed += int(x.lv(i).span)
			x = x.lv(i).forward
		}
		if traversed == r {
			return x
		}
	}
	return nil
}

func (sl *zsetSL) rankRange(start, end int, rev bool, fn func(member string, score float64) bool) {
	var n *zslNode
	if rev {
		n = sl.zsl.byRank(sl.zsl.length - start)
	} else {
		n = sl.zsl.byRank(start + 1)
	}
	for i := start; i <= end && n != nil; i++ {
		if !fn(n.member, n.score) {
			return
		}
		n = zstep(n, rev)
	}
}

// firstWhere returns the first node for which ge is true (ge must be
// monotonic over the list order), or nil.
func (l *zskiplist) firstWhere(ge func(n *zslNode) bool) *zslNode {
	x := l.header
	for i := l.level - 1; i >= 0; i-- {
		for x.lv(i).forward != nil && !ge(x.lv(i).forward) {
			x = x.lv(i).forward
		}
	}
	return x.lv(0).forward
}

// lastWhere returns the last node for which le is true (le true on a
// prefix of the list), or nil.
func (l *zskiplist) lastWhere(le func(n *zslNode) bool) *zslNode {
	x := l.header
	for i := l.level - 1; i >= 0; i-- {
		for x.lv(i).forward != nil && le(x.lv(i).forward) {
			x = x.lv(i).forward
		}
	}
	if x == l.header {
		return nil
	}
	return x
}

// scoreBounds returns the first and last nodes in r, or nils.
func (sl *zsetSL) scoreBounds(r *ScoreRange) (first, last *zslNode) {
	if r.Empty() || sl.zsl.length == 0 {
		return nil, nil
	}
	first = sl.zsl.firstWhere(func(n *zslNode) bool { return r.gteMin(n.score) })
	if first == nil || !r.lteMax(first.score) {
		return nil, nil
	}
	last = sl.zsl.lastWhere(func(n *zslNode) bool { return r.lteMax(n.score) })
	return first, last
}

// lexFirst is zslFirstInLexRange and lexLast zslLastInLexRange. Lex ranges
// assume equal scores; with mixed scores the skiplist is searched, and its
// answer then depends on the random levels, in Redis too.
func (sl *zsetSL) lexInRange(r *LexRange) bool {
	if r.Empty() || sl.zsl.length == 0 {
		return false
	}
	return r.gteMin(sl.zsl.tail.member) && r.lteMax(sl.zsl.header.lv(0).forward.member)
}

func (sl *zsetSL) lexFirst(r *LexRange) *zslNode {
	if !sl.lexInRange(r) {
		return nil
	}
	n := sl.zsl.firstWhere(func(n *zslNode) bool { return r.gteMin(n.member) })
	if n == nil || !r.lteMax(n.member) {
		return nil
	}
	return n
}

func (sl *zsetSL) lexLast(r *LexRange) *zslNode {
	if !sl.lexInRange(r) {
		return nil
	}
	n := sl.zsl.lastWhere(func(n *zslNode) bool { return r.lteMax(n.member) })
	if n == nil || !r.gteMin(n.member) {
		return nil
	}
	return n
}

func rangeNodes(first, last *zslNode, rev bool, offset, limit int, fn func(member string, score float64) bool) {
	if first == nil {
		return
	}
	n, stop := first, last
	if rev {
		n, stop = last, first
	}
	for n != nil && offset > 0 {
		if n == stop {
			return
		}
		offset--
		n = zstep(n, rev)
	}
	for n != nil && limit != 0 {
		if !fn(n.member, n.score) {
			return
		}
		if limit > 0 {
			limit--
		}
		if n == stop {
			return
		}
		n = zstep(n, rev)
	}
}

func zstep(n *zslNode, rev bool) *zslNode {
	if rev {
		return n.backward
	}
	return n.lv(0).forward
}

func (sl *zsetSL) rangeByScore(r ScoreRange, rev bool, offset, limit int, fn func(member string, score float64) bool) {
	first, last := sl.scoreBounds(&r)
	rangeNodes(first, last, rev, offset, limit, fn)
}

func (sl *zsetSL) rangeByLex(r LexRange, rev bool, offset, limit int, fn func(member string, score float64) bool) {
	var n *zslNode
	if rev {
		n = sl.lexLast(&r)
	} else {
		n = sl.lexFirst(&r)
	}
	for n != nil && offset > 0 {
		offset--
		n = zstep(n, rev)
	}
	for n != nil && limit != 0 {
		if rev && !r.gteMin(n.member) || !rev && !r.lteMax(n.member) {
			return
		}
		if !fn(n.member, n.score) {
			return
		}
		if limit > 0 {
			limit--
		}
		n = zstep(n, rev)
	}
}

func (sl *zsetSL) countByScore(r ScoreRange) int {
	first, last := sl.scoreBounds(&r)
	if first == nil {
		return 0
	}
	return sl.zsl.rank(last.score, last.member) - sl.zsl.rank(first.score, first.member) + 1
}

// countByLex subtracts ranks (zzlLexCount's skiplist branch).
func (sl *zsetSL) countByLex(r LexRange) int {
	first := sl.lexFirst(&r)
	if first == nil {
		return 0
	}
	count := sl.zsl.length - (sl.zsl.rank(first.score, first.member) - 1)
	if last := sl.lexLast(&r); last != nil {
		count -= sl.zsl.length - sl.zsl.rank(last.score, last.member)
	}
	return count
}

// zcollect returns the members from first to last.
func zcollect(first, last *zslNode) []string {
	var out []string
	for n := first; n != nil; n = n.lv(0).forward {
		out = append(out, n.member)
		if n == last {
			break
		}
	}
	return out
}

func (sl *zsetSL) removeAll(members []string) int {
	for _, m := range members {
		sl.remove(unsafe.Slice(unsafe.StringData(m), len(m)))
	}
	return len(members)
}

func (sl *zsetSL) removeRangeByScore(r ScoreRange) int {
	return sl.removeAll(zcollect(sl.scoreBounds(&r)))
}

func (sl *zsetSL) removeRangeByLex(r LexRange) int {
	var members []string
	for x := sl.lexFirst(&r); x != nil && r.lteMax(x.member); x = x.lv(0).forward {
		members = append(members, x.member)
	}
	return sl.removeAll(members)
}

func (sl *zsetSL) removeRangeByRank(start, end int) int {
	return sl.removeAll(zcollect(sl.zsl.byRank(start+1), sl.zsl.byRank(end+1)))
}

func (sl *zsetSL) forEach(fn func(member string, score float64) bool) {
	for n := sl.zsl.header.lv(0).forward; n != nil; n = n.lv(0).forward {
		if !fn(n.member, n.score) {
			return
		}
	}
}

func (sl *zsetSL) random(rng *rand.Rand) (string, float64) {
	n := sl.zsl.byRank(rng.IntN(sl.zsl.length) + 1)
	return n.member, n.score
}

// scanHash orders a skiplist-encoded set for ZSCAN.
func scanHash(m string) uint64 { return hashString(m) }

// scan walks the set in the order of its members' hashes, the cursor being
// the next hash to visit, which gives SCAN's guarantee (an element present
// for the whole iteration is returned, once) without Redis's table layout:
// cursors differ from Redis's.
func (sl *zsetSL) scan(cursor uint64, count int, fn func(member string, score float64)) uint64 {
	if sl.scanOrder == nil {
		// Rebuilt after a write: O(n log n), as rarely as the set changes
		// during an iteration.
		order := make([]scanItem, 0, sl.zsl.length)
		for n := sl.zsl.header.lv(0).forward; n != nil; n = n.lv(0).forward {
			order = append(order, scanItem{scanHash(n.member), n})
		}
		sort.Slice(order, func(i, j int) bool { return order[i].h < order[j].h })
		sl.scanOrder = order
	}
	c := sl.scanOrder
	i := sort.Search(len(c), func(i int) bool { return c[i].h >= cursor })
	if count < 1 {
		count = 1
	}
	for k := 0; i < len(c) && (k < count || c[i].h == c[i-1].h); k++ {
		fn(c[i].n.member, c[i].n.score)
		i++
	}
	if i == len(c) {
		return 0
	}
	return c[i].h
}

// size is objectComputeSize of a skiplist: the structures plus the average
// element (node sizes depend on random levels in Redis, so they are
// estimated with the expected level).
func (sl *zsetSL) size(samples int) uint64 {
	const zsetStruct, zslStruct, dictStruct = 16, 32, 56
	slots := uint64(0)
	if l := sl.zsl.length; l > 0 {
		slots = 4
		for slots < uint64(l) {
			slots <<= 1
		}
	}
	header := JemallocSize(24 + 16*zslMaxLevel)
	asize := uint64(RobjSize+zsetStruct+zslStruct+dictStruct) + DictEntryPtrSize*slots + header
	if sl.zsl.length == 0 {
		return asize
	}
	var elesize uint64
	cnt := 0
	for n := sl.zsl.header.lv(0).forward; n != nil && (samples == 0 || cnt < samples); n = n.lv(0).forward {
		elesize += SdsNewSize(uint64(len(n.member)))
		elesize += DictEntrySize + JemallocSize(24+16*uint64(n.nlevel))
		cnt++
	}
	return asize + uint64(float64(elesize)/float64(cnt)*float64(sl.zsl.length))
}

type scanItem struct {
	h uint64
	n *zslNode
}

const (
	zslMaxLevel = 32   // ZSKIPLIST_MAXLEVEL
	zslP        = 0.25 // ZSKIPLIST_P
)

// zslLevel is one level of a node: the next node on it, the ranks it
// skips, and the next node's score rounded to float32. Rounding is
// monotonic, so a walk decides from fscore alone whether the next node
// is before or after its target, except when the rounded scores tie, and
// does not read the next node when it stops (a cache miss saved on about
// one step in five at a million members). span is 32 bits so that a level
// stays 16 bytes: a sorted set holds fewer than 4 G members (each takes
// 64 bytes or more).
type zslLevel struct {
	forward *zslNode
	span    uint32
	fscore  float32 // float32(forward.score) while forward != nil
}

// zslNode is a skiplist node. Its levels follow it in the same allocation
// (zslNodeN), as zskiplistNode's flexible level[] array: a walk that moves
// to a node reads its score and the level it continues on from one or two
// adjacent cache lines, where a separate level slice cost a second cache
// miss per step (at a million members the walk is some 36 steps of cache
// misses, which is what a ZADD or ZREM costs). A node of level 1 (3 in 4)
// is 64 bytes, one size class and one cache line.
type zslNode struct {
	score    float64
	member   string
	backward *zslNode
	hnext    *zslNode // the next node of its zindex bucket
	hash     uint32   // zindexHash(member): bucket and rehash without hashing again, and chain walks compare strings only on a hash match
	nlevel   uint32   // the number of levels that follow
}

// zslNodeN is a node with its levels; L is [n]zslLevel.
type zslNodeN[L any] struct {
	zslNode
	l L
}

const (
	zslNodeSize  = unsafe.Sizeof(zslNode{})
	zslLevelSize = unsafe.Sizeof(zslLevel{})
)

// lv is the node's level i (0 <= i < nlevel, which the callers' walks
// guarantee: a walk at level i only reaches nodes of more than i levels).
func (x *zslNode) lv(i int) *zslLevel {
	return (*zslLevel)(unsafe.Add(unsafe.Pointer(x), zslNodeSize+uintptr(i)*zslLevelSize))
}

func newNodeN[L any]() *zslNode { return &new(zslNodeN[L]).zslNode }

// zslNewNode[n] allocates a node of n levels (or the next size provided).
var zslNewNode = [zslMaxLevel + 1]func() *zslNode{
	1: newNodeN[[1]zslLevel], 2: newNodeN[[2]zslLevel], 3: newNodeN[[3]zslLevel], 4: newNodeN[[4]zslLevel],
	5: newNodeN[[5]zslLevel], 6: newNodeN[[6]zslLevel], 7: newNodeN[[7]zslLevel], 8: newNodeN[[8]zslLevel],
	9: newNodeN[[9]zslLevel], 10: newNodeN[[10]zslLevel], 11: newNodeN[[11]zslLevel], 12: newNodeN[[12]zslLevel],
	13: newNodeN[[13]zslLevel], 14: newNodeN[[14]zslLevel], 15: newNodeN[[15]zslLevel], 16: newNodeN[[16]zslLevel],
	17: newNodeN[[32]zslLevel], 18: newNodeN[[32]zslLevel], 19: newNodeN[[32]zslLevel], 20: newNodeN[[32]zslLevel],
	21: newNodeN[[32]zslLevel], 22: newNodeN[[32]zslLevel], 23: newNodeN[[32]zslLevel], 24: newNodeN[[32]zslLevel],
	25: newNodeN[[32]zslLevel], 26: newNodeN[[32]zslLevel], 27: newNodeN[[32]zslLevel], 28: newNodeN[[32]zslLevel],
	29: newNodeN[[32]zslLevel], 30: newNodeN[[32]zslLevel], 31: newNodeN[[32]zslLevel], 32: newNodeN[[32]zslLevel],
}

// zslCreateNode is zslCreateNode: a node of level levels holding member
// (whose zindexHash is h) at score.
func zslCreateNode(level int, score float64, member string, h uint32) *zslNode {
	x := zslNewNode[level]()
	x.score, x.member, x.hash, x.nlevel = score, member, h, uint32(level)
	return x
}

type zskiplist struct {
	header *zslNode
	tail   *zslNode
	length int
	level  int
}

// --- skiplist (t_zset.c zsl*) ------------------------------------------------------

// zslRandomLevel is zslRandomLevel: level k+1 with probability
// zslP^k (1-zslP), from one random word: each pair of low zero bits is one
// more level (zslP = 1/4).
func zslRandomLevel() int {
	return min(1+bits.TrailingZeros64(rand.Uint64())/2, zslMaxLevel)
}

// zless orders (score, member) pairs: the score first, the member only on
// a tie (zslInsert's test).
func zless(s1 float64, m1 string, s2 float64, m2 string) bool {
	return s1 < s2 || (s1 == s2 && m1 < m2)
}

// insert is zslInsert: a new node of a random level for member, whose
// zindexHash is h.
func (l *zskiplist) insert(score float64, member string, h uint32) *zslNode {
	x := zslCreateNode(zslRandomLevel(), score, member, h)
	l.insertNode(x)
	return x
}

// insertNode links x (unlinked, with its score, member and levels set)
// at its place.
func (l *zskiplist) insertNode(x *zslNode) {
	var update [zslMaxLevel]*zslNode
	var rank [zslMaxLevel]int
	score, member := x.score, x.member
	s32 := float32(score)
	p := l.header
	for i := l.level - 1; i >= 0; i-- {
		if i != l.level-1 {
			rank[i] = rank[i+1]
		}
		for {
			pl := p.lv(i)
			f := pl.forward
			if f == nil || pl.fscore > s32 || pl.fscore == s32 && !zless(f.score, f.member, score, member) {
				break
			}
			rank[i] += int(pl.span)
			p = f
		}
		update[i] = p
	}
	l.link(x, &update, &rank)
}

// link links x (unlinked, with its score, member and levels set) after
// update[i] on each level i below l.level, rank[i] being update[i]'s rank
// (the header's 0), as the end of zslInsert.
func (l *zskiplist) link(x *zslNode, update *[zslMaxLevel]*zslNode, rank *[zslMaxLevel]int) {
	s32 := float32(x.score)
	if x.nlevel > l.header.nlevel {
		old := l.header
		l.growHeader(int(x.nlevel))
		for i := 0; i < l.level; i++ {
			if update[i] == old {
				update[i] = l.header
			}
		}
	}
	level := int(x.nlevel)
	if level > l.level {
		for i := l.level; i < level; i++ {
			rank[i] = 0
			update[i] = l.header
			update[i].lv(i).span = uint32(l.length)
		}
		l.level = level
	}
	for i := 0; i < level; i++ {
		xl, ul := x.lv(i), update[i].lv(i)
		xl.forward, xl.fscore = ul.forward, ul.fscore
		ul.forward, ul.fscore = x, s32
		xl.span = ul.span - uint32(rank[0]-rank[i])
		ul.span = uint32(rank[0]-rank[i]) + 1
	}
	for i := level; i < l.level; i++ {
		update[i].lv(i).span++
	}
	x.backward = nil
	if update[0] != l.header {
		x.backward = update[0]
	}
	if f := x.lv(0).forward; f != nil {
		f.backward = x
	} else {
		l.tail = x
	}
	l.length++
}

// growHeader replaces the header by one of at least level levels, with
// the same levels below (no node points back at the header: the first
// node's backward is nil).
func (l *zskiplist) growHeader(level int) {
	h := zslCreateNode(level, 0, "", 0)
	for i := 0; i < int(l.header.nlevel); i++ {
		*h.lv(i) = *l.header.lv(i)
	}
	l.header = h
}

// find fills update with the last node before (score, member) at each
// level (zslDelete's walk) and returns the node after it at level 0.
func (l *zskiplist) find(score float64, member string, update *[zslMaxLevel]*zslNode) *zslNode {
	s32 := float32(score)
	x := l.header
	for i := l.level - 1; i >= 0; i-- {
		for {
			xl := x.lv(i)
			f := xl.forward
			if f == nil || xl.fscore > s32 || xl.fscore == s32 && !zless(f.score, f.member, score, member) {
				break
			}
			x = f
		}
		update[i] = x
	}
	return x.lv(0).forward
}

// deleteNode is zslDeleteNode: unlinks x, update being find's.
func (l *zskiplist) deleteNode(x *zslNode, update *[zslMaxLevel]*zslNode) {
	for i := 0; i < l.level; i++ {
		ul := update[i].lv(i)
		if ul.forward == x {
			ul.span += x.lv(i).span - 1
			ul.forward, ul.fscore = x.lv(i).forward, x.lv(i).fscore
		} else {
			ul.span--
		}
	}
	if f := x.lv(0).forward; f != nil {
		f.backward = x.backward
	} else {
		l.tail = x.backward
	}
	for l.level > 1 && l.header.lv(l.level-1).forward == nil {
		l.level--
	}
	l.length--
}

// delete is zslDelete: unlinks the node of (score, member) if present.
func (l *zskiplist) delete(score float64, member string) bool {
	var update [zslMaxLevel]*zslNode
	x := l.find(score, member, &update)
	if x == nil || x.score != score || x.member != member {
		return false
	}
	l.deleteNode(x, &update)
	return true
}

// updateScore is zslUpdateScore: moves x, which is in the list, to
// newscore. The node keeps its place when the order allows (only the
// score changes), else it is unlinked and linked again at its new place
// (the same node, so the member index is untouched).
//
// Redis walks the list twice to move a node, once to unlink it and once,
// in zslInsert, to find its new place; at 100 k members each step of
// either walk is a cache miss. Here the two walks run interleaved in one
// loop (updateWalk), so the two chains of misses overlap instead of
// adding up, and a node of one level that keeps its place needs no walk
// at all (its only predecessor is its backward node).
//
// Whether x keeps its place reads one neighbour at most: a higher score
// cannot pass the node before x (its score is at most x's), a lower one
// the node after it; and the node after is compared through x's own
// rounded copy of its score (fscore) unless the rounded scores tie.
func (l *zskiplist) updateScore(x *zslNode, newscore float64) {
	prev, x0 := x.backward, x.lv(0)
	next := x0.forward
	var stays bool
	if newscore > x.score {
		n32 := float32(newscore)
		stays = next == nil || x0.fscore > n32 || x0.fscore == n32 && next.score > newscore
	} else {
		stays = prev == nil || prev.score < newscore
	}
	if stays {
		if x.nlevel == 1 {
			if prev == nil {
				prev = l.header
			}
			x.score = newscore
			prev.lv(0).fscore = float32(newscore)
			return
		}
		var update [zslMaxLevel]*zslNode
		l.find(x.score, x.member, &update)
		x.score = newscore
		for i := 0; i < int(x.nlevel); i++ {
			update[i].lv(i).fscore = float32(newscore) // update[i] links to x on every level of x
		}
		return
	}
	var del, ins [zslMaxLevel]*zslNode
	var rank [zslMaxLevel]int
	l.updateWalk(x, newscore, &del, &ins, &rank)
	x.score = newscore
	l.deleteNode(x, &del)
	l.link(x, &ins, &rank)
}

// updateWalk is find's walk to x (del: the last node before x on each
// level) and insertNode's walk to (newscore, x.member) in the list without
// x (ins and rank: the last node before that place on each level and its
// rank once x is unlinked), run step by step side by side: the two walks
// are independent, so the CPU overlaps their cache misses.
func (l *zskiplist) updateWalk(x *zslNode, newscore float64, del, ins *[zslMaxLevel]*zslNode, rank *[zslMaxLevel]int) {
	oscore, member := x.score, x.member
	o32, n32 := float32(oscore), float32(newscore)
	a, b := l.header, l.header
	r := 0
	inf := float32(math.Inf(1))
	for i := l.level - 1; i >= 0; i-- {
		for {
			// One step of each walk, decided without a branch where the
			// rounded scores decide (a mispredicted branch would discard
			// the other walk's load in flight).
			al := a.lv(i)
			af, as := al.forward, al.fscore
			if af == nil {
				as = inf
			}
			advA := as < o32
			if as == o32 && af != nil {
				advA = zless(af.score, af.member, oscore, member) // af == x: false
			}
			bl := b.lv(i)
			bf, bs, span := bl.forward, bl.fscore, bl.span
			if bf == x { // skip x, as if unlinked (its rank still counted)
				xl := x.lv(i)
				bf, bs, span = xl.forward, xl.fscore, span+xl.span
			}
			if bf == nil {
				bs = inf
			}
			advB := bs < n32
			if bs == n32 && bf != nil {
				advB = zless(bf.score, bf.member, newscore, member)
			}
			if !advA && !advB {
				break
			}
			if advA {
				a = af
			}
			if advB {
				r += int(span)
				b = bf
			}
		}
		del[i], ins[i], rank[i] = a, b, r
	}
	// Ranks were counted with x in the list: a node after x loses one.
	for i := 0; i < l.level; i++ {
		if n := ins[i]; n != l.header && zless(oscore, member, n.score, n.member) {
			rank[i]--
		}
	}
}

// rank is zslGetRank: the 1-based rank of (score, member), 0 if absent.
func (l *zskiplist) rank(score float64, member string) int {
	r := 0
	x := l.header
	for i := l.level - 1; i >= 0; i-- {
		for x.lv(i).forward != nil && (zless(x.lv(i).forward.score, x.lv(i).forward.member, score, member) ||
			(x.lv(i).forward.score == score && x.lv(i).forward.member == member)) {
			r += int(x.lv(i).span)
			x = x.lv(i).forward
		}
		if x != l.header && x.member == member && x.score == score {
			return r
		}
	}
	return 0
}
