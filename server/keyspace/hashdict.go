package keyspace

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"strings"
	"unsafe"
)

// fieldDict is the hashtable encoding of a hash (OBJ_ENCODING_HT): a
// dict.c table from field to value with the layout of Dict (dict.go) —
// power-of-two chained tables, incremental rehashing of one bucket per
// operation (_dictRehashStep), dictScan's reverse-binary cursor,
// dictGetFairRandomKey — so that HSCAN keeps SCAN's guarantee and MEMORY
// USAGE sees Redis's dictSlots. It is a copy of Dict's algorithms for
// string values rather than a generalisation of Dict, which the keyspace's
// hot paths use.
//
// Unlike Dict it has no rehash pause: its iterations (Range, scan) never
// move entries and their callbacks must not modify the table, so a value
// shared with a snapshot can be iterated while the server reads it. The
// operations that take step=false do no rehashing work either (a read of a
// value a running snapshot holds must not write it).
type fieldDict struct {
	ht        [2][]*fieldEntry
	used      [2]int
	rehashIdx int
}

// fieldEntry is one field of a fieldDict, a chain link of a bucket: 16
// bytes followed, in the same allocation (fieldEntryN), by the field's and
// the value's bytes, so that a field costs one allocation rounded to one
// size class, where a Go string each (two more allocations, each rounded
// up, and two 16-byte headers) made a 1 M-field hash 1.22x Redis's RSS.
// Longer fields and values (fieldEntryExt, klen == fieldExt) keep them as
// strings. A value change writes the new value over the old one when it
// keeps the entry in its size class (overwrite), else makes a new entry: the
// field's bytes are never written, but the string val returns is valid only
// until the next change to the dict. Nothing keeps one longer: replies copy
// it into the reply buffer during the command, and a snapshot (BGSAVE, full
// sync, AOF rewrite) that holds the hash gets a dict of its own first, as
// DB.Mutable duplicates a shared value before any change.
type fieldEntry struct {
	next       *fieldEntry
	klen, vlen uint32
}

// fieldExt marks a fieldEntryExt in klen.
const fieldExt = math.MaxUint32

// fieldEntryExt is a fieldEntry whose bytes are too long to be inlined.
type fieldEntryExt struct {
	fieldEntry
	k, v string
}

// fieldEntryN is a fieldEntry with room A (a byte array) for its bytes.
type fieldEntryN[A any] struct {
	fieldEntry
	data A
}

const fieldEntrySize = unsafe.Sizeof(fieldEntry{})

func newFieldN[A any]() (*fieldEntry, []byte) {
	e := new(fieldEntryN[A])
	return &e.fieldEntry, unsafe.Slice((*byte)(unsafe.Pointer(&e.data)), unsafe.Sizeof(e.data))
}

// fieldRoom is the bytes an inline entry for n bytes of field and value
// has room for: its allocation's size class (24 to 256 bytes) less the
// header; 0 for n == 0 (a bare fieldEntry); false when n is too long to be
// inlined (a fieldEntryExt).
func fieldRoom(n uintptr) (uintptr, bool) {
	for _, c := range fieldClasses {
		if n <= c-fieldEntrySize {
			if n == 0 {
				return 0, true
			}
			return c - fieldEntrySize, true
		}
	}
	return 0, false
}

// fieldClasses are the Go size classes an inline entry is made in.
var fieldClasses = [...]uintptr{24, 32, 48, 64, 80, 96, 112, 128, 160, 192, 256}

// newFieldEntry returns an entry holding copies of key and val (which it
// does not keep).
func newFieldEntry(key, val string) *fieldEntry {
	var e *fieldEntry
	var buf []byte
	switch n, _ := fieldRoom(uintptr(len(key) + len(val))); n {
	case 0:
		if len(key)+len(val) == 0 {
			return &fieldEntry{}
		}
		x := &fieldEntryExt{fieldEntry: fieldEntry{klen: fieldExt}, k: strings.Clone(key), v: strings.Clone(val)}
		return &x.fieldEntry
	case 24 - fieldEntrySize:
		e, buf = newFieldN[[24 - fieldEntrySize]byte]()
	case 32 - fieldEntrySize:
		e, buf = newFieldN[[32 - fieldEntrySize]byte]()
	case 48 - fieldEntrySize:
		e, buf = newFieldN[[48 - fieldEntrySize]byte]()
	case 64 - fieldEntrySize:
		e, buf = newFieldN[[64 - fieldEntrySize]byte]()
	case 80 - fieldEntrySize:
		e, buf = newFieldN[[80 - fieldEntrySize]byte]()
	case 96 - fieldEntrySize:
		e, buf = newFieldN[[96 - fieldEntrySize]byte]()
	case 112 - fieldEntrySize:
		e, buf = newFieldN[[112 - fieldEntrySize]byte]()
	case 128 - fieldEntrySize:
		e, buf = newFieldN[[128 - fieldEntrySize]byte]()
	case 160 - fieldEntrySize:
		e, buf = newFieldN[[160 - fieldEntrySize]byte]()
	case 192 - fieldEntrySize:
		e, buf = newFieldN[[192 - fieldEntrySize]byte]()
	default:
		e, buf = newFieldN[[256 - fieldEntrySize]byte]()
	}
	copy(buf, key)
	copy(buf[len(key):], val)
	e.klen, e.vlen = uint32(len(key)), uint32(len(val))
	return e
}

// overwrite replaces the value of e in its own bytes when e is inline and
// val keeps it in the same size class (so that fieldRoom of its lengths
// is still its room), and reports whether it did.
func (e *fieldEntry) overwrite(val string) bool {
	if e.klen == fieldExt {
		return false
	}
	old, _ := fieldRoom(uintptr(e.klen) + uintptr(e.vlen))
	room, ok := fieldRoom(uintptr(e.klen) + uintptr(len(val)))
	if !ok || room != old {
		return false
	}
	if room == 0 {
		return true // an empty field and value, with no room: nothing to write
	}
	buf := unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(e), fieldEntrySize)), room)
	copy(buf[e.klen:], val)
	e.vlen = uint32(len(val))
	return true
}

// key is the field.
func (e *fieldEntry) key() string {
	if e.klen == fieldExt {
		return (*fieldEntryExt)(unsafe.Pointer(e)).k
	}
	if e.klen == 0 {
		return ""
	}
	return unsafe.String((*byte)(unsafe.Add(unsafe.Pointer(e), fieldEntrySize)), e.klen)
}

// val is the value.
func (e *fieldEntry) val() string {
	if e.klen == fieldExt {
		return (*fieldEntryExt)(unsafe.Pointer(e)).v
	}
	if e.vlen == 0 {
		return ""
	}
	return unsafe.String((*byte)(unsafe.Add(unsafe.Pointer(e), fieldEntrySize+uintptr(e.klen))), e.vlen)
}

// keyIs reports whether the field is key.
func (e *fieldEntry) keyIs(key []byte) bool {
	return (e.klen == uint32(len(key)) || e.klen == fieldExt) && e.key() == string(key)
}

func (d *fieldDict) Len() int          { return d.used[0] + d.used[1] }
func (d *fieldDict) Buckets() int      { return len(d.ht[0]) + len(d.ht[1]) }
func (d *fieldDict) isRehashing() bool { return d.ht[1] != nil }

// expand is dictExpand (see Dict.Expand).
func (d *fieldDict) expand(size int) bool {
	if d.isRehashing() || d.used[0] > size {
		return false
	}
	n := nextPow(size)
	if n == len(d.ht[0]) {
		return false
	}
	if d.ht[0] == nil {
		d.ht[0] = make([]*fieldEntry, n)
		return true
	}
	d.ht[1] = make([]*fieldEntry, n)
	d.rehashIdx = 0
	return true
}

// expandIfNeeded is _dictExpandIfNeeded: load factor 1.
func (d *fieldDict) expandIfNeeded() {
	if d.isRehashing() {
		return
	}
	if len(d.ht[0]) == 0 {
		d.expand(dictInitialSize)
		return
	}
	if d.used[0] >= len(d.ht[0]) && expandAllowed(d.used[0], len(d.ht[0])) {
		d.expand(d.used[0] + 1)
	}
}

// needsShrink is htNeedsResize.
func (d *fieldDict) needsShrink() bool {
	size := d.Buckets()
	return size > dictInitialSize && d.Len()*100/size < dictMinFill
}

// rehash is dictRehash (see Dict.Rehash).
func (d *fieldDict) rehash(n int) bool {
	if !d.isRehashing() || !rehashAllowed(len(d.ht[0]), len(d.ht[1])) {
		return false
	}
	emptyVisits := n * 10
	for ; n > 0 && d.used[0] != 0; n-- {
		for d.ht[0][d.rehashIdx] == nil {
			d.rehashIdx++
			emptyVisits--
			if emptyVisits == 0 {
				return true
			}
		}
		mask := uint64(len(d.ht[1]) - 1)
		for de := d.ht[0][d.rehashIdx]; de != nil; {
			next := de.next
			i := hashString(de.key()) & mask
			de.next = d.ht[1][i]
			d.ht[1][i] = de
			d.used[0]--
			d.used[1]++
			de = next
		}
		d.ht[0][d.rehashIdx] = nil
		d.rehashIdx++
	}
	if d.used[0] == 0 {
		d.ht[0], d.ht[1] = d.ht[1], nil
		d.used[0], d.used[1] = d.used[1], 0
		d.rehashIdx = 0
		return false
	}
	return true
}

// find is dictFind; with step it first does a rehash step, as Redis.
func (d *fieldDict) find(h uint64, key []byte, step bool) *fieldEntry {
	if d.Len() == 0 {
		return nil
	}
	if step && d.isRehashing() {
		d.rehash(1)
	}
	for t := 0; t < 2; t++ {
		tbl := d.ht[t]
		if len(tbl) == 0 {
			break
		}
		for de := tbl[h&uint64(len(tbl)-1)]; de != nil; de = de.next {
			if de.keyIs(key) {
				return de
			}
		}
		if !d.isRehashing() {
			break
		}
	}
	return nil
}

// set is dictAddRaw plus dictSetVal: it replaces the value of an existing
// field, else inserts it (in ht[1] while rehashing). It reports whether
// the field was new.
func (d *fieldDict) set(key []byte, val string) bool {
	h := hashBytes(key)
	if d.isRehashing() {
		d.rehash(1)
	}
	for t := 0; t < 2; t++ {
		tbl := d.ht[t]
		if len(tbl) == 0 {
			break
		}
		for p := &tbl[h&uint64(len(tbl)-1)]; *p != nil; p = &(*p).next {
			if de := *p; de.keyIs(key) {
				// In place when the value fits the entry's size class
				// (see fieldEntry), else a new entry.
				if de.overwrite(val) {
					return false
				}
				ne := newFieldEntry(de.key(), val)
				ne.next = de.next
				*p = ne
				return false
			}
		}
		if !d.isRehashing() {
			break
		}
	}
	d.add(h, unsafe.String(unsafe.SliceData(key), len(key)), val)
	return true
}

// prefetch loads, changing nothing, what looking up each of keys (at most
// 32; nil ones are passed over) reads first: its bucket, then the chain's
// first entry, then that entry's last inline byte (a 48-byte entry may
// straddle two cache lines), each pass for all keys before the next, so
// that a pipelined batch's misses overlap instead of coming one lookup
// after another. A table being rehashed is left alone.
func (d *fieldDict) prefetch(keys [][]byte) {
	tbl := d.ht[0]
	if d.Len() == 0 || d.isRehashing() {
		return
	}
	var des [32]*fieldEntry
	n := min(len(keys), len(des))
	mask := uint64(len(tbl) - 1)
	for i := 0; i < n; i++ {
		if keys[i] != nil {
			des[i] = tbl[hashBytes(keys[i])&mask]
		}
	}
	var ends [32]uint32
	for i := 0; i < n; i++ {
		if de := des[i]; de != nil && de.klen != fieldExt {
			ends[i] = de.klen + de.vlen
		}
	}
	var sink byte
	for i := 0; i < n; i++ {
		if ends[i] > 0 {
			sink += *(*byte)(unsafe.Add(unsafe.Pointer(des[i]), fieldEntrySize+uintptr(ends[i])-1))
		}
	}
	prefetchSink.Store(uint32(sink)) // snapshot.go
}

// add links a new entry for copies of key and val (key absent) at the
// head of its bucket.
func (d *fieldDict) add(h uint64, key, val string) {
	d.expandIfNeeded()
	t := 0
	if d.isRehashing() {
		t = 1
	}
	i := h & uint64(len(d.ht[t])-1)
	e := newFieldEntry(key, val)
	e.next = d.ht[t][i]
	d.ht[t][i] = e
	d.used[t]++
}

// remove is dictDelete followed by t_hash.c's hashTypeDelete resize check
// (htNeedsResize, dictResize). It reports whether key was present.
func (d *fieldDict) remove(key []byte) bool {
	if d.Len() == 0 {
		return false
	}
	h := hashBytes(key)
	if d.isRehashing() {
		d.rehash(1)
	}
	for t := 0; t < 2; t++ {
		tbl := d.ht[t]
		i := h & uint64(len(tbl)-1)
		var prev *fieldEntry
		for cur := tbl[i]; cur != nil; prev, cur = cur, cur.next {
			if !cur.keyIs(key) {
				continue
			}
			if prev == nil {
				tbl[i] = cur.next
			} else {
				prev.next = cur.next
			}
			d.used[t]--
			if d.needsShrink() && !d.isRehashing() && canResize() { // dictResize
				d.expand(max(d.used[0], dictInitialSize))
			}
			return true
		}
		if !d.isRehashing() {
			break
		}
	}
	return false
}

// rangeEntries visits every entry in dictNext's order (ht[0]'s buckets,
// then ht[1]'s; each chain from its head) until fn returns false.
func (d *fieldDict) rangeEntries(fn func(de *fieldEntry) bool) {
	for t := 0; t < 2; t++ {
		tbl := d.ht[t]
		if t == 0 && d.isRehashing() {
			tbl = tbl[d.rehashIdx:] // buckets below are empty (see Dict.rangeEntries)
		}
		for _, de := range tbl {
			for ; de != nil; de = de.next {
				if !fn(de) {
					return
				}
			}
		}
	}
}

// scan is dictScan (see Dict.Scan); fn must not modify the table.
func (d *fieldDict) scan(v uint64, fn func(de *fieldEntry)) uint64 {
	if d.Len() == 0 {
		return 0
	}
	emit := func(tbl []*fieldEntry, i uint64) {
		for de := tbl[i]; de != nil; de = de.next {
			fn(de)
		}
	}
	if !d.isRehashing() {
		t0 := d.ht[0]
		m0 := uint64(len(t0) - 1)
		emit(t0, v&m0)
		v |= ^m0
		return bits.Reverse64(bits.Reverse64(v) + 1)
	}
	t0, t1 := d.ht[0], d.ht[1]
	if len(t0) > len(t1) {
		t0, t1 = t1, t0
	}
	m0, m1 := uint64(len(t0)-1), uint64(len(t1)-1)
	emit(t0, v&m0)
	for {
		emit(t1, v&m1)
		v |= ^m1
		v = bits.Reverse64(bits.Reverse64(v) + 1)
		if v&(m0^m1) == 0 {
			break
		}
	}
	return v
}

// randomEntry is dictGetRandomKey (see Dict.randomEntry).
func (d *fieldDict) randomEntry(rng *rand.Rand, step bool) *fieldEntry {
	if d.Len() == 0 {
		return nil
	}
	if step && d.isRehashing() {
		d.rehash(1)
	}
	var he *fieldEntry
	if d.isRehashing() {
		s0 := uint64(len(d.ht[0]))
		span := uint64(d.Buckets() - d.rehashIdx)
		for he == nil {
			h := uint64(d.rehashIdx) + rng.Uint64N(span)
			if h >= s0 {
				he = d.ht[1][h-s0]
			} else {
				he = d.ht[0][h]
			}
		}
	} else {
		m := uint64(len(d.ht[0]) - 1)
		for he == nil {
			he = d.ht[0][rng.Uint64()&m]
		}
	}
	n := 0
	for de := he; de != nil; de = de.next {
		n++
	}
	for i := rng.IntN(n); i > 0; i-- {
		he = he.next
	}
	return he
}

// someEntries is dictGetSomeKeys (see Dict.someEntries), written again for
// fieldEntry: one generic version for both entry types made SRANDMEMBER's
// draw from a 100 k set 15-30% slower (measured 2026-11-29).
func (d *fieldDict) someEntries(rng *rand.Rand, dst []*fieldEntry, step bool) int {
	count := min(len(dst), d.Len())
	if count == 0 {
		return 0
	}
	maxSteps := count * 10
	for j := 0; step && j < count && d.isRehashing(); j++ {
		d.rehash(1)
	}
	tables := 1
	maxMask := uint64(len(d.ht[0]) - 1)
	if d.isRehashing() {
		tables = 2
		maxMask = max(maxMask, uint64(len(d.ht[1])-1))
	}
	i := rng.Uint64() & maxMask
	emptyLen := 0
	stored := 0
	for ; stored < count && maxSteps > 0; maxSteps-- {
		for t := 0; t < tables; t++ {
			if tables == 2 && t == 0 && i < uint64(d.rehashIdx) {
				if i >= uint64(len(d.ht[1])) {
					i = uint64(d.rehashIdx)
				} else {
					continue
				}
			}
			if i >= uint64(len(d.ht[t])) {
				continue
			}
			he := d.ht[t][i]
			if he == nil {
				emptyLen++
				if emptyLen >= 5 && emptyLen > count {
					i = rng.Uint64() & maxMask
					emptyLen = 0
				}
				continue
			}
			emptyLen = 0
			// The whole chain is sampled, by reservoir sampling once dst
			// is full, so that the end of a long chain can be drawn too
			// (Redis 7.0.15's dictGetSomeKeys).
			for ; he != nil; he = he.next {
				if stored < count {
					dst[stored] = he
				} else if r := rng.Uint64N(uint64(stored) + 1); r < uint64(count) {
					dst[r] = he
				}
				stored++
			}
			if stored >= count {
				return count
			}
		}
		i = (i + 1) & maxMask
	}
	return min(stored, count)
}

// fairRandomEntry is dictGetFairRandomKey.
func (d *fieldDict) fairRandomEntry(rng *rand.Rand, step bool) *fieldEntry {
	var buf [fairRandomSample]*fieldEntry
	n := d.someEntries(rng, buf[:], step)
	if n == 0 {
		return d.randomEntry(rng, step)
	}
	return buf[rng.IntN(n)]
}
