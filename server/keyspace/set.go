package keyspace

import (
	"math"
	"math/rand/v2"
	"strconv"
	"unsafe"
)

// Set is a set value (OBJ_SET), as Redis 7.0's t_set.c: an intset (a
// sorted array of integers whose element width only grows: intset.c's
// INTSET_ENC_INT16/32/64, packed as intset.c lays it out: intset.go)
// while every member is an integer (string2ll)
// and there are at most set-max-intset-entries of them, else a hashtable
// (a fieldDict of the members with empty values, dict.c's layout, so SSCAN
// keeps SCAN's guarantee and random members are picked as
// dictGetFairRandomKey; a member is one allocation of 16 bytes and its
// bytes, 32 for a short one, where a Dict's refEntry and string took 48).
// The conversion is one-way, as setTypeConvert.
//
// Iteration order is setTypeNext's: ascending for an intset, the
// dict's bucket order for a hashtable.
//
// The header is one word, p: the intset's first byte (intset.go), or a
// setTable. The two are told apart by the first byte p points at: an
// intset's is its width, 2, 4 or 8; a setTable's is 0. One word, not two,
// is what lets a small intset and its key share a 96-byte key node
// (SetNew, valnode.go: an inline intset).
type Set struct {
	p unsafe.Pointer
}

// setTable is a hashtable set's dict behind its mark word.
type setTable struct {
	mark uint64 // always 0: an intset's first byte is its width
	d    fieldDict
}

// newTableSet is a hashtable set with an empty dict, and the dict.
func newTableSet() (*Set, *fieldDict) {
	t := &setTable{}
	return &Set{p: unsafe.Pointer(t)}, &t.d
}

// ht is the hashtable encoding (members with empty values), nil while an
// intset.
func (s *Set) ht() *fieldDict {
	if *(*byte)(s.p) != 0 {
		return nil
	}
	return &(*setTable)(s.p).d
}

// NewSetFor is setTypeCreate: an empty set that can hold first, an intset
// when first is an integer, else a hashtable. Add first afterwards.
func NewSetFor(first []byte) *Set {
	if _, ok := string2ll(first); ok {
		return NewIntSet()
	}
	s, _ := newTableSet()
	return s
}

// NewIntSet is createIntsetObject: an empty intset (the result set of
// SINTERSTORE, SUNIONSTORE and SDIFFSTORE starts as one).
//
// It starts on a shared empty header (emptyIntset), which is never
// written: the first member always moves the intset to an allocation of
// its own (16 bytes or more, where the header alone is 8), so a new key
// costs one allocation for its intset, not two.
func NewIntSet() *Set { return &Set{p: unsafe.Pointer(&emptyIntset[0])} }

// emptyIntset is an intset of width 2 and no elements (see NewIntSet).
var emptyIntset = [intsetHdr]byte{2}

// Type is TypeSet.
func (s *Set) Type() Type { return TypeSet }

// Encoding is intset or hashtable.
func (s *Set) Encoding() Encoding {
	if s.ht() != nil {
		return EncodingHashtable
	}
	return EncodingIntset
}

// IsIntset reports the intset encoding.
func (s *Set) IsIntset() bool { return s.ht() == nil }

// Len is setTypeSize.
func (s *Set) Len() int {
	if s.ht() != nil {
		return s.ht().Len()
	}
	return s.isLen()
}

// maxIntsetEntries caps set-max-intset-entries at 1G, as setTypeAdd.
func maxIntsetEntries(limit int) int { return min(limit, 1<<30) }

// Add is setTypeAdd: it adds member and reports whether it was new. An
// intset becomes a hashtable when member is not an integer or when it
// would hold more than maxIntset (set-max-intset-entries) members.
// member is copied.
func (s *Set) Add(member []byte, maxIntset int) bool {
	if s.ht() != nil {
		return s.ht().addMember(bytesString(member))
	}
	v, ok := string2ll(member)
	if !ok {
		s.convert()
		return s.ht().addMember(bytesString(member))
	}
	if !s.isAdd(v) {
		return false
	}
	if s.isLen() > maxIntsetEntries(maxIntset) {
		s.convert()
	}
	return true
}

// convert is setTypeConvert(OBJ_ENCODING_HT): a Dict presized to the
// intset's length, filled in ascending order.
func (s *Set) convert() {
	t := &setTable{}
	d := &t.d
	n, w, e := s.isLen(), s.isWidth(), s.isElems()
	d.expand(n)
	var buf [20]byte
	for i := range n {
		d.addMember(bytesString(strconv.AppendInt(buf[:0], intsetGet(e, w, i), 10)))
	}
	s.p = unsafe.Pointer(t)
}

// Remove is setTypeRemove: it removes member and reports whether it was
// there. A hashtable shrinks when it becomes too sparse (htNeedsResize).
func (s *Set) Remove(member []byte) bool {
	if s.ht() != nil {
		return s.ht().remove(member)
	}
	v, ok := string2ll(member)
	if !ok {
		return false
	}
	return s.isRemove(v)
}

// RemoveString is Remove for a string member.
func (s *Set) RemoveString(member string) bool {
	if s.ht() != nil {
		return s.ht().remove(stringBytes(member))
	}
	v, ok := string2ll([]byte(member))
	if !ok {
		return false
	}
	return s.isRemove(v)
}

// Contains is setTypeIsMember.
func (s *Set) Contains(member []byte) bool {
	if s.ht() != nil {
		return s.ht().find(hashBytes(member), member, false) != nil
	}
	v, ok := string2ll(member)
	if !ok {
		return false
	}
	_, found := s.isSearch(v)
	return found
}

// ContainsInt is setTypeIsMember of an integer member (an intset's
// element tested against another set).
func (s *Set) ContainsInt(v int64) bool {
	if s.ht() != nil {
		var buf [20]byte
		b := strconv.AppendInt(buf[:0], v, 10)
		return s.ht().find(hashBytes(b), b, false) != nil
	}
	_, found := s.isSearch(v)
	return found
}

// Member is one member as setTypeNext returns it: an integer of an intset
// (IsInt) or a string of a hashtable.
type Member struct {
	S     string
	N     int64
	IsInt bool
}

// AppendTo appends the member's bytes to b.
func (m Member) AppendTo(b []byte) []byte {
	if m.IsInt {
		return strconv.AppendInt(b, m.N, 10)
	}
	return append(b, m.S...)
}

// String is the member's text.
func (m Member) String() string {
	if m.IsInt {
		return strconv.FormatInt(m.N, 10)
	}
	return m.S
}

// Range calls fn for every member in setTypeNext's order until fn returns
// false. fn must not change the set.
func (s *Set) Range(fn func(m Member) bool) {
	if s.ht() != nil {
		s.ht().rangeEntries(func(de *fieldEntry) bool { return fn(Member{S: de.key()}) })
		return
	}
	n, w, e := s.isLen(), s.isWidth(), s.isElems()
	for i := range n {
		if !fn(Member{N: intsetGet(e, w, i), IsInt: true}) {
			return
		}
	}
}

// Random is setTypeRandomElement: a uniformly random element of an intset
// (intsetRandom), dictGetFairRandomKey of a hashtable, with its rehash
// steps (as the Dict sets had before). The set must not be empty.
func (s *Set) Random(rng *rand.Rand) Member { return s.random(rng, true) }

// RandomRead is Random for a reader (SRANDMEMBER): the same draw without
// the rehash steps, so that a value a running snapshot (BGSAVE) is
// iterating is never written by a read.
func (s *Set) RandomRead(rng *rand.Rand) Member { return s.random(rng, false) }

// Rehashing reports whether s is a hashtable being rehashed.
func (s *Set) Rehashing() bool {
	d := s.ht()
	return d != nil && d.isRehashing()
}

func (s *Set) random(rng *rand.Rand, step bool) Member {
	if s.ht() != nil {
		return Member{S: s.ht().fairRandomEntry(rng, step).key()}
	}
	return Member{N: s.isAt(rng.IntN(s.isLen())), IsInt: true}
}

// RemoveMember removes m, a member of s (as returned by Random or Range).
func (s *Set) RemoveMember(m Member) bool {
	if m.IsInt && s.ht() == nil {
		return s.isRemove(m.N)
	}
	if m.IsInt {
		var buf [20]byte
		return s.Remove(strconv.AppendInt(buf[:0], m.N, 10))
	}
	return s.RemoveString(m.S)
}

// Scan is dictScan over a hashtable set (SSCAN); an intset has no cursor:
// the caller returns all of it at once, as scanGenericCommand.
func (s *Set) Scan(cursor uint64, fn func(member string)) uint64 {
	if s.ht() == nil {
		return 0
	}
	return s.ht().scan(cursor, func(de *fieldEntry) { fn(de.key()) })
}

// Dup is setTypeDup: an intset is copied as is; a hashtable is rebuilt
// into a Dict presized to its length, in iteration order.
func (s *Set) Dup() Value {
	src := s.ht()
	if src == nil {
		return &Set{p: unsafe.Pointer(s.isDup())}
	}
	c, d := newTableSet()
	d.expand(src.Len())
	src.rangeEntries(func(de *fieldEntry) bool {
		d.addMember(de.key())
		return true
	})
	return c
}

// dictStructSize is sizeof(dict) in Redis 7.0; intsetHeaderSize is
// sizeof(intset).
const (
	dictStructSize   = 56
	intsetHeaderSize = 8
)

// Size is objectComputeSize of a set: robj + the intset's allocation
// (header + width*len, as jemalloc rounds it: what redis-server 7.0.15
// reports) for an intset; robj + dict + the bucket array + (dictEntry + member
// sds) per member for a hashtable, averaged over the first samples
// members in iteration order (0: all) and scaled to the set's size.
func (s *Set) Size(samples int) uint64 {
	if s.ht() == nil {
		return RobjSize + JemallocSize(intsetHeaderSize+uint64(s.isWidth())*uint64(s.isLen()))
	}
	size := uint64(RobjSize + dictStructSize + DictEntryPtrSize*s.ht().Buckets())
	if samples <= 0 {
		samples = math.MaxInt
	}
	var elesize uint64
	n := 0
	s.ht().rangeEntries(func(de *fieldEntry) bool {
		if n >= samples {
			return false
		}
		elesize += DictEntrySize + SdsNewSize(uint64(len(de.key())))
		n++
		return true
	})
	if n > 0 {
		// asize += (double)elesize/samples*dictSize(d): the sum is a
		// double, truncated once.
		return uint64(float64(size) + float64(elesize)/float64(n)*float64(s.ht().Len()))
	}
	return size
}

// ContainsString is Contains for a string member.
func (s *Set) ContainsString(member string) bool {
	if s.ht() != nil {
		return s.ht().find(hashString(member), stringBytes(member), false) != nil
	}
	v, ok := string2ll([]byte(member))
	if !ok {
		return false
	}
	_, found := s.isSearch(v)
	return found
}

// ContainsMember is setTypeIsMember of a member of another set.
func (s *Set) ContainsMember(m Member) bool {
	if m.IsInt {
		return s.ContainsInt(m.N)
	}
	return s.ContainsString(m.S)
}

// AddMember is Add of a member of another set (setTypeAdd of
// setTypeNextObject's sds): an integer goes into an intset without a
// round trip through its text.
func (s *Set) AddMember(m Member, maxIntset int) bool {
	if m.IsInt && s.ht() == nil {
		if !s.isAdd(m.N) {
			return false
		}
		if s.isLen() > maxIntsetEntries(maxIntset) {
			s.convert()
		}
		return true
	}
	if !m.IsInt && s.ht() != nil {
		return s.ht().addMember(m.S)
	}
	var buf [20]byte
	return s.Add(m.AppendTo(buf[:0]), maxIntset)
}

// addMember is dictAdd on a set's dict (a member with an empty value),
// with dictAddRaw's single rehash step and its expansion check before the
// search (_dictKeyIndex), so the tables (MEMORY USAGE, SSCAN cursors)
// evolve as Redis's: false if key is present. The key is copied only when
// it is added (it may be a view of a caller's bytes).
func (d *fieldDict) addMember(key string) bool {
	if d.isRehashing() {
		d.rehash(1)
	}
	d.expandIfNeeded()
	h := hashString(key)
	for t := 0; t < 2; t++ {
		tbl := d.ht[t]
		for de := tbl[h&uint64(len(tbl)-1)]; de != nil; de = de.next {
			if de.klen == uint32(len(key)) && de.key() == key || de.klen == fieldExt && de.key() == key {
				return false
			}
		}
		if !d.isRehashing() {
			break
		}
	}
	d.add(h, key, "")
	return true
}

// bytesString is b as a string without a copy: only for callees that
// copy what they keep.
func bytesString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// stringBytes is s as bytes without a copy: only for callees that neither
// write nor keep them.
func stringBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }
