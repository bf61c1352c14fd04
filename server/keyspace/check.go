package keyspace

import (
	"fmt"
	"math"
	"unsafe"
)

// Check verifies the invariants of every database of ks (see DB.Check)
// and returns the first violation found, nil if none. It reads only; the
// caller holds the server's execution lock. Tests and fuzzers call it
// after each command.
func (ks *Keyspace) Check() error {
	for i, db := range ks.DBs {
		if db.id != i || db.ks != ks {
			return fmt.Errorf("db %d: id %d or keyspace link wrong", i, db.id)
		}
		if err := db.Check(); err != nil {
			return fmt.Errorf("db %d: %w", i, err)
		}
	}
	return nil
}

// Check verifies the database's invariants, those Redis 7.0 keeps too:
//
//   - the main dict's count equals its entries, and each key's value is
//     set; an aggregate (list, set, sorted set, hash) is never empty
//     (Redis deletes a key whose collection became empty);
//   - the expires index names exactly the keys whose Entry has the expire
//     flag (HasExpire), each with a time > 0, under the main dict's key
//     string;
//   - each value's encoding agrees with its content and the keyspace's
//     thresholds where Redis guarantees it: an intset holds only
//     integers, sorted and distinct, at most set-max-intset-entries; a
//     listpack sorted set has at most zset-max-listpack-entries members
//     of at most zset-max-listpack-value bytes; a listpack hash at most
//     hash-max-listpack-entries fields, fields and values of at most
//     hash-max-listpack-value bytes (the compact encodings convert one
//     way, so the general ones may be small);
//   - the internal counts agree: a sorted set's member map and skiplist
//     (order, spans, backward links, tail) and its listpack bytes, a
//     hash's or set's size and its elements, a list's length and its
//     elements.
//
// The thresholds are those of ks.Encodings now: after a CONFIG SET that
// lowers one, older values may legitimately exceed it.
func (db *DB) Check() error {
	cfg := db.ks.Encodings
	n := 0
	var err error
	db.dict.rangeEntries(func(de *dictEntry) bool {
		n++
		e := nodeEntry(de)
		if e == nil || e.Value() == nil {
			err = fmt.Errorf("key %q: no value", nodeKey(de))
			return false
		}
		if x := db.expires.findS(hashString(nodeKey(de)), nodeKey(de)); (x != nil) != e.HasExpire() {
			err = fmt.Errorf("key %q: expire flag %v but in the expires index: %v", nodeKey(de), e.HasExpire(), x != nil)
			return false
		}
		if verr := checkValue(e.Value(), cfg); verr != nil {
			err = fmt.Errorf("key %q (%s, %s): %w", nodeKey(de), e.Value().Type(), e.Value().Encoding(), verr)
			return false
		}
		return true
	})
	if err != nil {
		return err
	}
	if n != db.dict.Len() {
		return fmt.Errorf("dict counts %d keys, holds %d", db.dict.Len(), n)
	}
	nexp := 0
	db.expires.rangeEntries(func(de *dictEntry) bool {
		nexp++
		key := expEnt(de).node.key()
		if m := db.dict.findS(hashString(key), key); m == nil {
			err = fmt.Errorf("expires names %q, which is not a key", key)
			return false
		} else if !nodeEntry(m).HasExpire() || expEnt(de).at <= 0 || m != &expEnt(de).node.dictEntry {
			err = fmt.Errorf("expires entry of %q (at %d) is not the key's with a TTL", key, expEnt(de).at)
			return false
		}
		return true
	})
	if err != nil {
		return err
	}
	if nexp != db.expires.Len() {
		return fmt.Errorf("expires counts %d keys, holds %d", db.expires.Len(), nexp)
	}
	return nil
}

// checkValue checks one value's invariants (see DB.Check).
func checkValue(v Value, cfg EncodingConfig) error {
	switch v := v.(type) {
	case *String:
		return nil
	case *List:
		return checkList(v)
	case *Set:
		return checkSet(v, cfg)
	case *ZSet:
		return checkZSet(v, cfg)
	case *Hash:
		return checkHash(v, cfg)
	case *Stream:
		return checkStream(v)
	}
	return fmt.Errorf("unknown value type %T", v)
}

func checkList(l *List) error {
	if l.n <= 0 {
		return fmt.Errorf("empty list (length %d)", l.n)
	}
	if l.listBody == nil {
		return checkSmallList(l)
	}
	if err := checkChunks(l); err != nil {
		return err
	}
	entries := 0
	for _, nd := range l.nodes {
		entries += nd.count
	}
	if len(l.nodes) > 0 && entries != l.n {
		return fmt.Errorf("quicklist nodes count %d entries, the list holds %d", entries, l.n)
	}
	// A PLAIN node holds one element, its size the element's.
	i := 0
	for k, nd := range l.nodes {
		if nd.plain && (nd.count != 1 || nd.sz != len(l.Index(i))) {
			return fmt.Errorf("PLAIN node %d: %d entries of %d bytes, element %d of %d bytes", k, nd.count, nd.sz, i, len(l.Index(i)))
		}
		if nd.dont {
			return fmt.Errorf("node %d left dont_compress", k)
		}
		i += nd.count
	}
	return nil
}

// checkSmallList verifies a small list: its entries walk from slo to shi
// in n steps, within smallMax bytes, and their listpack sizes add up to its
// node's.
func checkSmallList(l *List) error {
	lo, hi := int(l.slo), int(l.shi)
	if lo < 0 || lo > hi || hi > len(l.sbuf()) || hi-lo > smallMax {
		return fmt.Errorf("small list: entries [%d, %d) of %d bytes", lo, hi, len(l.sbuf()))
	}
	sz, j := lpHdrSize+1, 0
	for p := lo; p < hi; j++ {
		n, h := readFwd(l.sbuf(), p)
		e := p + n + 2*h
		if e > hi {
			return fmt.Errorf("small list: entry %d at %d overruns %d", j, p, hi)
		}
		sz += lpEntrySizeB(l.sbuf()[p+h : p+h+n])
		p = e
	}
	if j != l.n || sz != int(l.ssz) {
		return fmt.Errorf("small list: %d entries of %d listpack bytes, recorded %d and %d", j, sz, l.n, l.ssz)
	}
	return nil
}

// checkChunks verifies a list's chunks: they lie in their array, none is
// empty, their counts add up to the length and their coordinates follow
// each other from base; each chunk's entries, walked forwards, end at hi
// after cnt entries whose back-lengths agree with their headers (so the
// backward walk is the same); a chunk of more than one entry holds at most
// chunkMax bytes; the cursor points at an entry.
func checkChunks(l *List) error {
	if len(l.ch) > 0 && (l.c0+len(l.ch) > len(l.cbuf) || &l.cbuf[l.c0] != &l.ch[0]) {
		return fmt.Errorf("chunks are not cbuf[c0:]")
	}
	total, x := 0, l.base
	for k := range l.ch {
		c := &l.ch[k]
		if c.cnt <= 0 || c.lo < 0 || c.lo > c.hi || c.z != zPacked && c.hi > len(c.b) || len(c.b) != cap(c.b) {
			return fmt.Errorf("chunk %d: %d entries in [%d, %d) of %d bytes (cap %d)", k, c.cnt, c.lo, c.hi, len(c.b), cap(c.b))
		}
		if c.start != x {
			return fmt.Errorf("chunk %d starts at coordinate %d, want %d", k, c.start, x)
		}
		if c.cnt > 1 && c.used() > chunkMax {
			return fmt.Errorf("chunk %d: %d entries in %d bytes, over %d", k, c.cnt, c.used(), chunkMax)
		}
		if e := l.zEnds(); c.z == zPacked && (k < e || k >= len(l.ch)-e) {
			return fmt.Errorf("chunk %d of %d is compressed within %d of an end", k, len(l.ch), e)
		} else if int(l.depth) > 0 && c.z == zRaw && k >= e && k < len(l.ch)-e {
			return fmt.Errorf("inner chunk %d of %d is raw and untried (list-compress-depth %d)", k, len(l.ch), int(l.depth))
		}
		cb := l.bytesOf(k)
		p, j := c.lo, 0
		for ; p < c.hi; j++ {
			n, h := readFwd(cb, p)
			e := p + n + 2*h
			if e > c.hi {
				return fmt.Errorf("chunk %d: entry %d at %d overruns hi %d", k, j, p, c.hi)
			}
			if bn, bh := readBack(cb, e); bn != n || bh != h || h != uvarintLen(n) {
				return fmt.Errorf("chunk %d: entry %d has length %d (%d bytes), backlen %d (%d bytes)", k, j, n, h, bn, bh)
			}
			p = e
		}
		if j != c.cnt {
			return fmt.Errorf("chunk %d holds %d entries, counted %d", k, j, c.cnt)
		}
		total += c.cnt
		x += c.cnt
	}
	if total != l.n {
		return fmt.Errorf("chunks hold %d elements, the list %d", total, l.n)
	}
	if cur := l.cur.Load(); cur != noCursor {
		k, j, off := int(cur>>32), int(cur>>16&0xffff), int(cur&0xffff)
		if k >= len(l.ch) || j >= l.ch[k].cnt || walk(l.bytesOf(k), 0, l.ch[k].lo, j) != l.ch[k].lo+off {
			return fmt.Errorf("cursor (%d, %d, %d) is not at an entry", k, j, off)
		}
	}
	return nil
}

func checkSet(s *Set, cfg EncodingConfig) error {
	if s.Len() == 0 {
		return fmt.Errorf("empty set")
	}
	if s.ht() != nil {
		n := 0
		s.ht().rangeEntries(func(*fieldEntry) bool { n++; return true })
		if n != s.ht().Len() {
			return fmt.Errorf("hashtable counts %d members, holds %d", s.ht().Len(), n)
		}
		return nil
	}
	n, w, e := s.isLen(), s.isWidth(), s.isElems()
	if w != 2 && w != 4 && w != 8 {
		return fmt.Errorf("intset encoding %d", w)
	}
	if hdr := unsafe.Slice(s.isp(), intsetHdr); hdr[1] != 0 || hdr[2] != 0 {
		return fmt.Errorf("intset width word % x", hdr[:4])
	}
	if c := s.isInlineCap(); c != 0 && c < intsetHdr+w*n {
		return fmt.Errorf("inline intset of %d bytes in a room of %d", intsetHdr+w*n, c)
	}
	if n > maxIntsetEntries(cfg.SetMaxIntsetEntries) {
		return fmt.Errorf("intset of %d members, set-max-intset-entries is %d", n, cfg.SetMaxIntsetEntries)
	}
	for i := 1; i < n; i++ {
		if a, b := intsetGet(e, w, i-1), intsetGet(e, w, i); a >= b {
			return fmt.Errorf("intset not ascending at %d: %d, %d", i, a, b)
		}
	}
	return nil
}

func checkZSet(z *ZSet, cfg EncodingConfig) error {
	if z.Len() == 0 {
		return fmt.Errorf("empty sorted set")
	}
	sl := z.sl()
	if sl == nil {
		return checkZSetListpack(z, cfg)
	}
	l := &sl.zsl
	if sl.dict.len() != l.length {
		return fmt.Errorf("member map holds %d, skiplist %d", sl.dict.len(), l.length)
	}
	// Level 0: order, backward links, the map, the tail.
	var prev *zslNode
	n := 0
	for x := l.header.lv(0).forward; x != nil; x = x.lv(0).forward {
		n++
		if n > l.length {
			return fmt.Errorf("skiplist longer than its length %d", l.length)
		}
		if math.IsNaN(x.score) {
			return fmt.Errorf("member %q has a NaN score", x.member)
		}
		if sl.dict.getS(x.member) != x {
			return fmt.Errorf("member %q: the map does not point at its node", x.member)
		}
		if x.backward != prev {
			return fmt.Errorf("member %q: wrong backward link", x.member)
		}
		if prev != nil && !zless(prev.score, prev.member, x.score, x.member) {
			return fmt.Errorf("skiplist out of order: (%v %q) before (%v %q)", prev.score, prev.member, x.score, x.member)
		}
		prev = x
	}
	if n != l.length || l.tail != prev {
		return fmt.Errorf("skiplist walks %d nodes (length %d) or the tail is wrong", n, l.length)
	}
	// Spans: at every level, the ranks they add up to are level 0's.
	rank := map[*zslNode]int{}
	r := 0
	for x := l.header.lv(0).forward; x != nil; x = x.lv(0).forward {
		r++
		rank[x] = r
	}
	for i := 0; i < l.level; i++ {
		at, x := 0, l.header
		for x.lv(i).forward != nil {
			if f := x.lv(i).forward; x.lv(i).fscore != float32(f.score) {
				return fmt.Errorf("level %d: the link to %q caches score %v, the node has %v", i, f.member, x.lv(i).fscore, f.score)
			}
			at += int(x.lv(i).span)
			x = x.lv(i).forward
			if rank[x] != at {
				return fmt.Errorf("level %d: span sum %d reaches %q of rank %d", i, at, x.member, rank[x])
			}
		}
	}
	return nil
}

// checkZSetListpack checks a packed sorted set: the buffer parses to its
// length, the elements are in (score, member) order with distinct members
// and no NaN, each entry is in its canonical form (zpAppend's), the count
// and Redis's listpack size kept are the elements', and the encoding's
// limits hold.
func checkZSetListpack(z *ZSet, cfg EncodingConfig) error {
	if int(z.lpN) > cfg.ZSetMaxListpackEntries {
		return fmt.Errorf("listpack of %d members, zset-max-listpack-entries is %d", z.lpN, cfg.ZSetMaxListpackEntries)
	}
	b := z.lpBuf()
	kept, eo := zpHead(b)
	var lpBytes uint64
	seen := make(map[string]bool, z.lpN)
	var pm string
	var ps float64
	n := 0
	for off := eo; off < len(b); n++ {
		m, s, next := zpNext(b, off)
		if next > len(b) {
			return fmt.Errorf("listpack entry %d runs past the buffer", n)
		}
		if math.IsNaN(s) {
			return fmt.Errorf("member %q has a NaN score", m)
		}
		if seen[m] {
			return fmt.Errorf("member %q twice", m)
		}
		seen[m] = true
		if n > 0 && !zless(ps, pm, s, m) {
			return fmt.Errorf("listpack out of order: (%v %q) before (%v %q)", ps, pm, s, m)
		}
		if w := zpEntrySize(len(m), s); w != next-off {
			return fmt.Errorf("member %q: entry of %d bytes, its canonical form %d", m, next-off, w)
		}
		if len(m) > cfg.ZSetMaxListpackValue {
			return fmt.Errorf("listpack member of %d bytes, zset-max-listpack-value is %d", len(m), cfg.ZSetMaxListpackValue)
		}
		lpBytes += zlpElemSize(m, s)
		pm, ps, off = m, s, next
	}
	if n != int(z.lpN) {
		return fmt.Errorf("listpack counts %d members, holds %d", z.lpN, n)
	}
	if kept != lpBytes {
		return fmt.Errorf("listpack bytes kept as %d, the elements make %d", kept, lpBytes)
	}
	return nil
}

func checkHash(h *Hash, cfg EncodingConfig) error {
	if h.Len() == 0 {
		return fmt.Errorf("empty hash")
	}
	if d := h.ht(); d != nil {
		n := 0
		h.Range(func(string, string) bool { n++; return true })
		if n != d.Len() {
			return fmt.Errorf("hashtable counts %d fields, holds %d", d.Len(), n)
		}
		return nil
	}
	if int(h.lpN) > cfg.HashMaxListpackEntries {
		return fmt.Errorf("listpack of %d fields, hash-max-listpack-entries is %d", h.lpN, cfg.HashMaxListpackEntries)
	}
	if (h.p == nil) != (h.lpLen == 0) || (h.p == nil) != (h.lpN == 0) {
		return fmt.Errorf("listpack buffer of %d bytes for %d fields", h.lpLen, h.lpN)
	}
	seen := make(map[string]bool, h.lpN)
	var err error
	n, bytes := 0, lpEmptySize
	h.lpRange(func(f, v string) bool {
		n++
		bytes += lpEntrySize(f) + lpEntrySize(v)
		if seen[f] {
			err = fmt.Errorf("listpack holds field %q twice", f)
			return false
		}
		seen[f] = true
		if len(f) > cfg.HashMaxListpackValue || len(v) > cfg.HashMaxListpackValue {
			err = fmt.Errorf("listpack field %q or its value longer than hash-max-listpack-value %d", f, cfg.HashMaxListpackValue)
			return false
		}
		return true
	})
	if err != nil {
		return err
	}
	if n != int(h.lpN) {
		return fmt.Errorf("listpack counts %d fields, holds %d", h.lpN, n)
	}
	if bytes != int(h.lpBytes()) {
		return fmt.Errorf("listpack size %d, its fields make %d", h.lpBytes(), bytes)
	}
	return nil
}
