package keyspace

import "unsafe"

// zindex is a sorted set's member index (Redis's zset dict): a chained hash
// table whose chains run through the skiplist nodes themselves
// (zslNode.hnext), so a member costs one bucket pointer and no entry of its
// own, where a Go map costs a slot of key and value plus its load-factor
// slack (about 40 bytes a member). It grows and shrinks by powers of two
// with incremental rehashing, as dict.c: while a resize runs, every write
// moves a few buckets of the old table to the new one, so no single write
// pays for the whole table.
//
// Reads (get, getB) never change the table: a value a running snapshot
// holds is read concurrently by the snapshot's goroutine, and only a writer
// that got the value from DB.Mutable calls add and del.
type zindex struct {
	ht        [2][]*zslNode
	used      [2]int
	rehashIdx int
}

// zindexStep is the number of old buckets each write moves while a resize
// runs.
const zindexStep = 4

func (x *zindex) len() int          { return x.used[0] + x.used[1] }
func (x *zindex) isRehashing() bool { return x.ht[1] != nil }

// zindexHash is a member's hash in the index (kept in its node as
// zslNode.hash). 32 bits index tables of up to 4 G buckets, more than any
// set reaches.
func zindexHash(member string) uint32 { return uint32(hashString(member)) }

// find returns the node of member, whose zindexHash is h, or nil. Chain
// nodes are compared by hash first, so a walk reads no other member's
// bytes (a cache miss each at a million members).
func (x *zindex) find(h uint32, member string) *zslNode {
	if x.len() == 0 {
		return nil
	}
	for t := 0; t < 2; t++ {
		tbl := x.ht[t]
		if len(tbl) == 0 {
			break
		}
		for n := tbl[uint64(h)&uint64(len(tbl)-1)]; n != nil; n = n.hnext {
			if n.hash == h && n.member == member {
				return n
			}
		}
		if !x.isRehashing() {
			break
		}
	}
	return nil
}

// getS returns the node of member, or nil.
func (x *zindex) getS(member string) *zslNode {
	if x.len() == 0 {
		return nil
	}
	return x.find(zindexHash(member), member)
}

// getB is getS for a []byte member; it does not allocate.
func (x *zindex) getB(member []byte) *zslNode {
	if x.len() == 0 {
		return nil
	}
	return x.find(uint32(hashBytes(member)), unsafe.String(unsafe.SliceData(member), len(member)))
}

// resize starts rehashing into a table of the smallest power of two >=
// size (at least dictInitialSize).
func (x *zindex) resize(size int) {
	n := nextPow(size)
	if x.ht[0] == nil {
		x.ht[0] = make([]*zslNode, n)
		return
	}
	if n == len(x.ht[0]) {
		return
	}
	x.ht[1] = make([]*zslNode, n)
	x.rehashIdx = 0
}

// rehash moves up to n non-empty buckets of the old table to the new one.
func (x *zindex) rehash(n int) {
	if !x.isRehashing() || !rehashAllowed(len(x.ht[0]), len(x.ht[1])) {
		return
	}
	mask := uint64(len(x.ht[1]) - 1)
	for ; n > 0 && x.used[0] != 0; n-- {
		for x.ht[0][x.rehashIdx] == nil {
			x.rehashIdx++
		}
		for e := x.ht[0][x.rehashIdx]; e != nil; {
			next := e.hnext
			i := uint64(e.hash) & mask
			e.hnext = x.ht[1][i]
			x.ht[1][i] = e
			x.used[0]--
			x.used[1]++
			e = next
		}
		x.ht[0][x.rehashIdx] = nil
		x.rehashIdx++
	}
	if x.used[0] == 0 {
		x.ht[0], x.ht[1] = x.ht[1], nil
		x.used[0], x.used[1] = x.used[1], 0
		x.rehashIdx = 0
	}
}

// add links n, whose member is not in the index.
func (x *zindex) add(n *zslNode) {
	x.rehash(zindexStep)
	if !x.isRehashing() && x.used[0] >= len(x.ht[0]) && (len(x.ht[0]) == 0 || expandAllowed(x.used[0], len(x.ht[0]))) {
		x.resize(x.used[0] + 1)
	}
	t := 0
	if x.isRehashing() {
		t = 1
	}
	tbl := x.ht[t]
	i := uint64(n.hash) & uint64(len(tbl)-1)
	n.hnext = tbl[i]
	tbl[i] = n
	x.used[t]++
}

// del unlinks n, which is in the index, and shrinks the table once it is
// less than dictMinFill percent full.
func (x *zindex) del(n *zslNode) {
	x.rehash(zindexStep)
	h := uint64(n.hash)
	for t := 0; t < 2; t++ {
		tbl := x.ht[t]
		if len(tbl) == 0 {
			break
		}
		p := &tbl[h&uint64(len(tbl)-1)]
		for *p != nil && *p != n {
			p = &(*p).hnext
		}
		if *p == n {
			*p = n.hnext
			n.hnext = nil
			x.used[t]--
			break
		}
		if !x.isRehashing() {
			break
		}
	}
	if !x.isRehashing() {
		if x.used[0] == 0 {
			*x = zindex{}
		} else if size := len(x.ht[0]); size > dictInitialSize && x.used[0]*100/size < dictMinFill && canResize() {
			x.resize(max(x.used[0], dictInitialSize))
		}
	}
}
