package keyspace

import (
	"slices"
	"unsafe"
)

// Accessors and constructors for server/rdb: what rdbSaveObject reads of a
// value's representation and what rdbLoadObject builds directly.

// IntsetWidth is the intset's element width in bytes (2, 4 or 8:
// INTSET_ENC_INT16/32/64), 0 for a hashtable set.
func (s *Set) IntsetWidth() int {
	if s.ht() != nil {
		return 0
	}
	return s.isWidth()
}

// IntsetBlob is the intset as intset.c lays it out (the RDB SET_INTSET
// blob: encoding and length, uint32 little-endian, then the elements), nil
// for a hashtable set. It is the set's own memory (a copy for an inline
// intset, whose header differs: isInlineCap): do not modify it.
func (s *Set) IntsetBlob() []byte {
	if s.ht() != nil {
		return nil
	}
	if s.isInlineCap() != 0 {
		// An inline intset's header carries its room (isInlineCap):
		// the blob has intset.c's header.
		b := slices.Clone(s.isBytes())
		b[intsetCapByte] = 0
		return b
	}
	return s.isBytes()
}

// NewIntSetBlob is an intset holding a copy of b, an intset as
// IntsetBlob returns it that the caller validated (intsetValidateIntegrity:
// a known encoding, the length matching, elements strictly ascending).
func NewIntSetBlob(b []byte) *Set {
	p := &make([]byte, intsetAlloc(max(len(b), intsetHdr)))[0]
	copy(unsafe.Slice(p, len(b)), b)
	return &Set{p: unsafe.Pointer(p)}
}

// NewIntSetFrom is an intset of width (2, 4 or 8 bytes, at least what the
// members need) holding ints, which must be strictly ascending (an RDB
// SET_INTSET blob, whose width may exceed what its members need).
func NewIntSetFrom(ints []int64, width int) *Set {
	w := uint8(2)
	for _, v := range ints {
		w = max(w, intWidth(v))
	}
	return &Set{p: unsafe.Pointer(newIntsetFromInts(ints, int(max(w, uint8(width)))))}
}

// NewHashtableSet is createSetObject followed by dictExpand(sizeHint) when
// sizeHint > 4 (DICT_HT_INITIAL_SIZE), as rdbLoadObject for a large set.
func NewHashtableSet(sizeHint int) *Set {
	s, d := newTableSet()
	if sizeHint > 4 {
		d.expand(sizeHint)
	}
	return s
}

// ExpandHashtable is dictExpand(size) on a hashtable set (no-op on an
// intset).
func (s *Set) ExpandHashtable(size int) {
	if s.ht() != nil {
		s.ht().expand(size)
	}
}

// ConvertToHashtable is setTypeConvert(OBJ_ENCODING_HT) (no-op if it
// already is one).
func (s *Set) ConvertToHashtable() {
	if s.ht() == nil {
		s.convert()
	}
}

// NewHashtableHash is a hashtable-encoded hash whose dict is expanded to
// sizeHint (rdbLoadObject for a HASH longer than
// hash-max-listpack-entries).
func NewHashtableHash(sizeHint int) *Hash {
	d := &fieldDict{}
	d.expand(max(sizeHint, 1))
	h := &Hash{}
	h.setHT(d)
	return h
}

// AppendListpack appends field=value to a listpack hash without the
// conversion checks of Set (a hashtable hash gets it set). The caller
// guarantees field is not in h (RDB loading checks duplicates itself),
// then calls ConvertToHashtable when Redis would.
func (h *Hash) AppendListpack(field, value string) {
	if d := h.ht(); d != nil {
		d.set([]byte(field), value)
		return
	}
	h.lpAppend(field, value)
}

// ConvertToHashtable is hashTypeConvert(OBJ_ENCODING_HT) (no-op if it
// already is one).
func (h *Hash) ConvertToHashtable() {
	if h.lpN != hashHT {
		h.convert()
	}
}

// NodeCounts calls fn with the element count of each quicklist node, head
// to tail, as Redis would have laid the list out (see List.nodes), and
// whether the node is PLAIN (QUICKLIST_NODE_CONTAINER_PLAIN: one element,
// no listpack).
func (l *List) NodeCounts(fn func(count int, plain bool) bool) {
	if l.listBody == nil {
		if l.n > 0 {
			fn(l.n, false)
		}
		return
	}
	for _, nd := range l.nodes {
		if !fn(nd.count, nd.plain) {
			return
		}
	}
}

// AppendPlainNode appends a copy of b as a PLAIN node, as
// quicklistAppendPlainNode when loading an RDB LIST_QUICKLIST_2 node of
// container PLAIN (whatever b's size).
func (l *List) AppendPlainNode(b []byte) {
	l.grow()
	l.dataPushBack(b)
	l.nodePushBack(plainNode(b))
	if int(l.depth) != 0 { // _quicklistInsertNodeAfter(tail)
		l.qlCompress(len(l.nodes) - 2)
		l.qlCompress(len(l.nodes) - 1)
	}
}

// AppendNode appends (copies of) elems as one quicklist node of sz
// listpack bytes, as quicklistAppendListpack when loading an RDB
// LIST_QUICKLIST_2 node: the node boundaries come from the file.
func (l *List) AppendNode(elems [][]byte, sz int) {
	if len(elems) == 0 {
		return
	}
	if l.listBody == nil && l.n == 0 && l.smallFits(elems) {
		for _, b := range elems {
			l.smallPush(b, false, true)
		}
		l.ssz = int32(sz)
		return
	}
	l.grow()
	for _, b := range elems {
		l.dataPushBack(b)
	}
	l.nodePushBack(qlNode{count: len(elems), sz: sz})
	if int(l.depth) != 0 { // _quicklistInsertNodeAfter(tail)
		l.qlCompress(len(l.nodes) - 2)
		l.qlCompress(len(l.nodes) - 1)
	}
}

// ListpackSizeOf is the bytes a listpack of elems takes (header, entries,
// terminator), as lpNew + lpAppend would lay it out.
func ListpackSizeOf(elems [][]byte) int {
	n := lpHdrSize + 1
	for _, b := range elems {
		n += lpEntrySizeB(b)
	}
	return n
}

// loadExpandMax bounds the table a RESIZEDB hint may allocate up front
// (the hint comes from the stream: a hostile one must not make a small
// file allocate gigabytes).
const loadExpandMax = 1 << 22

// ExpandForLoad is rdbLoad's dictExpand(db->dict, db_size) and
// dictExpand(db->expires, expires_size) on a RESIZEDB hint, so that
// loading does not grow the tables step by step. Hints above a bound
// (4M) expand to the bound.
func (db *DB) ExpandForLoad(keys, expires uint64) {
	if keys > 0 {
		db.dict.Expand(int(min(keys, loadExpandMax)))
	}
	if expires > 0 {
		db.expires.Expand(int(min(expires, loadExpandMax)))
	}
}

// LoadAdd is dbAddRDBLoad followed by setExpire when expireAt != 0: it
// inserts key (absent: ok false, and nothing changes, when it exists) with
// val, as SetNew does a new key (val is handed over: an aggregate's header
// goes into the key node, so the caller must not use val again), hashing
// and looking the key up once. It returns the new entry.
func (db *DB) LoadAdd(key []byte, val Value, expireAt, now int64) (*Entry, bool) {
	h := hashBytes(key)
	if db.dict.findB(h, key) != nil {
		return nil, false
	}
	var e *Entry
	if s, ok := val.(*String); ok && s.Kind() != StringSized {
		// The node SET would make: one allocation for the key and a
		// small string (the decoded value is dropped).
		if n, str := newInlineStringNode(key, s.Bytes(), s.Kind()); n != nil {
			e = db.insertNode(h, n, str, now)
		}
	}
	if e == nil {
		if n, nv := embedNew(key, val); n != nil {
			e = db.insertNode(h, n, nv, now)
		}
	}
	if e == nil {
		e = db.insertNode(h, newKeyStrNode(string(key)), val, now)
	}
	if expireAt != 0 {
		db.expires.insert(h, &(&expireEntry{node: entryNode(e), at: max(expireAt, 1)}).dictEntry)
		e.flags |= expireFlag
	}
	return e, true
}
