package keyspace

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"strings"
	"unsafe"

	"github.com/vigil-kv/vigil/internal/redisutil"
)

// Hash is the hash type (OBJ_HASH), as Redis 7.0's t_hash.c. It starts in
// the listpack encoding, a sequence of field/value pairs in insertion order
// (new fields are appended, an update keeps its place, a delete closes the
// gap), and converts for good to a hashtable (fieldDict) when a field or
// value longer than hash-max-listpack-value is written or the number of
// fields exceeds hash-max-listpack-entries. The listpack's byte size is
// tracked as Redis would lay it out, for MEMORY USAGE.
//
// The listpack is packed into one byte buffer (p, lpLen bytes): the
// uvarint lpBytes of that listpack as Redis lays it out (for MEMORY USAGE),
// then each pair, a uvarint length and the field's bytes, then a uvarint
// length and the value's bytes, so a small hash costs its bytes and a
// 16-byte header, not a string header and an allocation per field and
// value (a hash of 5 small fields took about 430 bytes, now about 130).
// The buffer's capacity is not stored: it is its Go size class,
// zpCap(lpLen), as the small sorted sets' (zsetpack.go). The entries below
// lpLen are never written again: an update or a delete builds a new
// buffer, a new field is appended in the spare capacity (the lpBytes
// prefix rewritten, when its width stays) or in a new buffer, so the
// strings Get, Range and Scan return (views into the buffer) stay intact.
// The one exception is HDEL (DeleteArg), which holds none of them and
// closes the gap in place (lpCut), as Redis's lpDelete moves the tail.
// Dup copies the buffer, since either copy may append in place.
type Hash struct {
	// p is the listpack's buffer (nil when empty), or the *fieldDict when
	// lpN is hashHT.
	p     unsafe.Pointer
	lpLen uint32 // listpack: the buffer's bytes
	lpN   uint32 // listpack: the number of fields; hashHT for a hashtable
}

// hashHT in Hash.lpN marks the hashtable encoding.
const hashHT = math.MaxUint32

// ht is the hashtable encoding's dict, nil for a listpack.
func (h *Hash) ht() *fieldDict {
	if h.lpN == hashHT {
		return (*fieldDict)(h.p)
	}
	return nil
}

// setHT makes d the hash's hashtable.
func (h *Hash) setHT(d *fieldDict) { h.p, h.lpLen, h.lpN = unsafe.Pointer(d), 0, hashHT }

// Listpack layout (listpack.c): a 6-byte header and a 1-byte terminator.
const (
	lpHeaderSize = 6
	lpEmptySize  = lpHeaderSize + 1
)

// NewHash returns an empty listpack hash (createHashObject).
func NewHash() *Hash { return &Hash{} }

// Type is TypeHash.
func (h *Hash) Type() Type { return TypeHash }

// Encoding is listpack or hashtable.
func (h *Hash) Encoding() Encoding {
	if h.lpN == hashHT {
		return EncodingHashtable
	}
	return EncodingListpack
}

// Len is hashTypeLength.
func (h *Hash) Len() int {
	if d := h.ht(); d != nil {
		return d.Len()
	}
	return int(h.lpN)
}

// lpBuf is the listpack's buffer, lpBytes prefix included (nil when
// empty).
func (h *Hash) lpBuf() []byte {
	if h.p == nil || h.lpN == hashHT {
		return nil
	}
	return unsafe.Slice((*byte)(h.p), h.lpLen)
}

// lpHead is the listpack's buffer, its lpBytes and the offset of its first
// pair.
func (h *Hash) lpHead() (b []byte, lpBytes uint32, eo int) {
	b = h.lpBuf()
	if len(b) == 0 {
		return nil, lpEmptySize, 0
	}
	v, eo := zpUvarint(b, 0)
	return b, uint32(v), eo
}

// lpBytes is lpBytes of the listpack as Redis lays it out.
func (h *Hash) lpBytes() uint32 {
	_, n, _ := h.lpHead()
	return n
}

// lpStr reads a uvarint length at off in b and returns the string of that
// many bytes after it (a view into b) and the offset past them.
func lpStr(b []byte, off int) (string, int) {
	n, k := binary.Uvarint(b[off:])
	off += k
	if n == 0 {
		return "", off
	}
	return unsafe.String(&b[off], int(n)), off + int(n)
}

// lpPairLen is the bytes the pair field=value takes in the buffer.
func lpPairLen(field, value int) int {
	return uvarintLen(field) + field + uvarintLen(value) + value
}

// appendPair appends field=value to b in the buffer's layout.
func appendPair[F, V ~string | ~[]byte](b []byte, field F, value V) []byte {
	b = binary.AppendUvarint(b, uint64(len(field)))
	b = append(b, field...)
	b = binary.AppendUvarint(b, uint64(len(value)))
	return append(b, value...)
}

// lpSetBuf makes b, holding n fields, the buffer (b's entries are not
// written again; its capacity is zpCap(len(b))).
func (h *Hash) lpSetBuf(b []byte, n int) {
	if n == 0 {
		h.p, h.lpLen, h.lpN = nil, 0, 0
		return
	}
	h.p, h.lpLen, h.lpN = unsafe.Pointer(unsafe.SliceData(b)), uint32(len(b)), uint32(n)
}

// lpAppend appends field=value to the listpack, lpBytes grown by their
// entries: in place when the buffer's allocation has room (bytes nobody
// has seen) and lpBytes keeps its width, else in a new buffer of its size
// class (as lpInsert's realloc).
func (h *Hash) lpAppend(field, value string) {
	b, lpBytes, eo := h.lpHead()
	nlp := uint64(lpBytes) + uint64(lpEntrySize(field)+lpEntrySize(value))
	need := len(b) + lpPairLen(len(field), len(value))
	if len(b) > 0 && need <= zpMaxInPlace && need <= zpCap(len(b)) && uvarintLen(int(nlp)) == eo {
		nb := unsafe.Slice((*byte)(h.p), zpCap(len(b)))[:len(b)]
		binary.PutUvarint(nb, nlp)
		h.lpSetBuf(appendPair(nb, field, value), int(h.lpN)+1)
		return
	}
	nb := zpMake(uvarintLen(int(nlp)) + need - eo)
	nb = binary.AppendUvarint(nb, nlp)
	nb = append(nb, b[eo:]...)
	h.lpSetBuf(appendPair(nb, field, value), int(h.lpN)+1)
}

// lpFind returns the offsets of field's pair in the listpack (its start,
// where its value's length starts, its end) and its value, or start -1.
//
// It is HSET's and HDEL's hot loop (lpFind with a skip of 1): the
// one-byte lengths (strings below 128 bytes) are read inline, a value is
// skipped without being read, and a field of the right length is compared
// first on its last byte, where fields that share a prefix differ.
func (h *Hash) lpFind(field []byte) (start, vat, end int, value string) {
	b, _, off := h.lpHead()
	fl := len(field)
	for off < len(b) {
		n, o := uint64(b[off]), off+1
		if n >= 0x80 {
			n, o = zpUvarintLong(b, off)
		}
		next := o + int(n)
		vn, vo := uint64(b[next]), next+1
		if vn >= 0x80 {
			vn, vo = zpUvarintLong(b, next)
		}
		e := vo + int(vn)
		if int(n) == fl && (fl == 0 || b[next-1] == field[fl-1] && string(b[o:next]) == string(field)) {
			if vn > 0 {
				value = unsafe.String(&b[vo], int(vn))
			}
			return off, next, e, value
		}
		off = e
	}
	return -1, 0, 0, ""
}

// lpCut removes the buffer's bytes [start, end) in place, as lpDelete
// memmoves a listpack's tail, leaving lpBytes nlp and n fields, and
// reports whether it could (lpBytes keeps its width, a field is left).
// It overwrites bytes the strings Get, Range and Scan returned may view:
// only HDEL calls it (DeleteArg), whose fields are its arguments, with no
// such string held.
func (h *Hash) lpCut(start, end int, nlp uint32, n int) bool {
	b, _, eo := h.lpHead()
	if n == 0 || uvarintLen(int(nlp)) != eo {
		return false
	}
	copy(b[start:], b[end:])
	binary.PutUvarint(b, uint64(nlp))
	h.lpSetBuf(b[:len(b)-(end-start)], n)
	return true
}

// lpSplice replaces the buffer's bytes [start, end) by the pair
// field=value (none when del), in a new buffer of lpBytes nlp and n fields.
func (h *Hash) lpSplice(start, end int, field []byte, value string, del bool, nlp uint32, n int) {
	if n == 0 {
		h.lpSetBuf(nil, 0)
		return
	}
	b, _, eo := h.lpHead()
	size := uvarintLen(int(nlp)) + len(b) - eo - (end - start)
	if !del {
		size += lpPairLen(len(field), len(value))
	}
	nb := zpMake(size)
	nb = binary.AppendUvarint(nb, uint64(nlp))
	nb = append(nb, b[eo:start]...)
	if !del {
		nb = appendPair(nb, field, value)
	}
	h.lpSetBuf(append(nb, b[end:]...), n)
}

// Get is hashTypeGetValue. With step, a hashtable in the middle of a
// resize does one rehash step first, as dictFind; pass false when the
// value may be shared with a running snapshot (DB.InPlace is false). The
// value returned (as the strings of Range, Scan and RandomField) is valid
// until h is next changed: a hashtable overwrites a value in place when
// it can (fieldEntry).
func (h *Hash) Get(field []byte, step bool) (string, bool) {
	if d := h.ht(); d != nil {
		if de := d.find(hashBytes(field), field, step); de != nil {
			return de.val(), true
		}
		return "", false
	}
	if start, _, _, v := h.lpFind(field); start >= 0 {
		return v, true
	}
	return "", false
}

// TryConversion is hashTypeTryConversion: a listpack hash converts to a
// hashtable before any of args (the fields and values about to be
// written) longer than cfg.HashMaxListpackValue is added.
func (h *Hash) TryConversion(args [][]byte, cfg EncodingConfig) {
	if h.lpN == hashHT {
		return
	}
	for _, a := range args {
		if len(a) > cfg.HashMaxListpackValue {
			h.convert()
			return
		}
	}
}

// Set is hashTypeSet: it writes field (copied) = value and reports whether
// the field is new. A listpack converts first if field or value is longer
// than cfg.HashMaxListpackValue, and after the insertion if it holds more
// than cfg.HashMaxListpackEntries fields.
func (h *Hash) Set(field []byte, value string, cfg EncodingConfig) bool {
	if h.lpN != hashHT && (len(field) > cfg.HashMaxListpackValue || len(value) > cfg.HashMaxListpackValue) {
		h.convert()
	}
	if d := h.ht(); d != nil {
		return d.set(field, value)
	}
	if start, _, end, old := h.lpFind(field); start >= 0 {
		nlp := h.lpBytes() + uint32(lpEntrySize(value)-lpEntrySize(old))
		h.lpSplice(start, end, field, value, false, nlp, int(h.lpN))
		return false
	}
	h.lpAppend(unsafe.String(unsafe.SliceData(field), len(field)), value) // copied into the buffer
	if int(h.lpN) > cfg.HashMaxListpackEntries {
		h.convert()
	}
	return true
}

// SetB is Set with the value as bytes, copied: a hashtable field copies
// them into its entry, so no string is made for the value on the way.
func (h *Hash) SetB(field, value []byte, cfg EncodingConfig) bool {
	if h.lpN != hashHT && (len(field) > cfg.HashMaxListpackValue || len(value) > cfg.HashMaxListpackValue) {
		h.convert()
	}
	if d := h.ht(); d != nil {
		return d.set(field, unsafe.String(unsafe.SliceData(value), len(value))) // copied: fieldDict.set keeps no reference
	}
	return h.Set(field, string(value), cfg)
}

// Delete is hashTypeDelete: it removes field and reports whether it was
// there. A hashtable shrinks when less than 10% full, as Redis's.
func (h *Hash) Delete(field []byte) bool { return h.delete(field, false) }

// DeleteArg is Delete for HDEL: field is an argument, not a view of h,
// and the caller holds no string h returned, so a listpack closes the gap
// in place (lpCut) rather than in a new buffer.
func (h *Hash) DeleteArg(field []byte) bool { return h.delete(field, true) }

func (h *Hash) delete(field []byte, inPlace bool) bool {
	if d := h.ht(); d != nil {
		return d.remove(field)
	}
	start, _, end, v := h.lpFind(field)
	if start < 0 {
		return false
	}
	nlp := h.lpBytes() - uint32(lpEntrySize(unsafe.String(unsafe.SliceData(field), len(field)))+lpEntrySize(v))
	if !inPlace || !h.lpCut(start, end, nlp, int(h.lpN)-1) {
		h.lpSplice(start, end, nil, "", true, nlp, int(h.lpN)-1)
	}
	return true
}

// convert is hashTypeConvertListpack: a dict presized to the number of
// fields, filled in listpack order.
func (h *Hash) convert() {
	d := &fieldDict{}
	d.expand(int(h.lpN))
	h.lpRange(func(f, v string) bool {
		// newFieldEntry copies short pairs; a long one keeps its strings,
		// which must not pin the buffer.
		d.add(hashString(f), strings.Clone(f), strings.Clone(v))
		return true
	})
	h.setHT(d)
}

// lpRange calls fn for each pair of the listpack, in order, until it
// returns false.
func (h *Hash) lpRange(fn func(field, value string) bool) {
	b, _, off := h.lpHead()
	for off < len(b) {
		f, next := lpStr(b, off)
		v, e := lpStr(b, next)
		if !fn(f, v) {
			return
		}
		off = e
	}
}

// Range calls fn for every field in hashTypeNext's order (listpack order,
// or the dict's iteration order) until fn returns false. fn must not
// modify h.
func (h *Hash) Range(fn func(field, value string) bool) {
	if d := h.ht(); d != nil {
		d.rangeEntries(func(de *fieldEntry) bool { return fn(de.key(), de.val()) })
		return
	}
	h.lpRange(fn)
}

// Scan is the hashtable part of scanGenericCommand: one dictScan step from
// cursor, calling fn for each entry of the visited buckets; it returns the
// next cursor (0: done). A listpack hash is returned whole with cursor 0,
// as Redis does. fn must not modify h.
func (h *Hash) Scan(cursor uint64, fn func(field, value string)) uint64 {
	d := h.ht()
	if d == nil {
		h.lpRange(func(f, v string) bool { fn(f, v); return true })
		return 0
	}
	return d.scan(cursor, func(de *fieldEntry) { fn(de.key(), de.val()) })
}

// RandomField returns a random field and value, false if h is empty: a
// uniform pick in a listpack (lpRandomPair), dictGetFairRandomKey in a
// hashtable (step as in Get).
func (h *Hash) RandomField(rng *rand.Rand, step bool) (field, value string, ok bool) {
	if d := h.ht(); d != nil {
		de := d.fairRandomEntry(rng, step)
		if de == nil {
			return "", "", false
		}
		return de.key(), de.val(), true
	}
	if h.lpN == 0 {
		return "", "", false
	}
	i := rng.IntN(int(h.lpN))
	h.lpRange(func(f, v string) bool {
		if i == 0 {
			field, value, ok = f, v, true
			return false
		}
		i--
		return true
	})
	return field, value, ok
}

// Size is objectComputeSize of a hash: the robj and the listpack's
// allocation, or the robj, the dict, its bucket arrays (both tables while
// rehashing) and the average of the first samples entries (field and value
// sds and the dictEntry) times the number of fields (samples 0: all).
func (h *Hash) Size(samples int) uint64 {
	ht := h.ht()
	if ht == nil {
		return RobjSize + JemallocSize(uint64(h.lpBytes()))
	}
	asize := uint64(RobjSize + dictStructSize + DictEntryPtrSize*ht.Buckets())
	var elesize, n uint64
	ht.rangeEntries(func(de *fieldEntry) bool {
		if samples > 0 && n >= uint64(samples) {
			return false
		}
		elesize += SdsNewSize(uint64(len(de.key()))) + SdsNewSize(uint64(len(de.val()))) + DictEntrySize
		n++
		return true
	})
	if n == 0 {
		return asize
	}
	return uint64(float64(asize) + float64(elesize)/float64(n)*float64(ht.Len()))
}

// (dictStructSize, sizeof(dict), is declared with the set type.)

// Dup is dupHashObject: a listpack is copied as is (into a buffer of its
// own, since either copy may append in place); a hashtable is rebuilt in a
// dict presized to its number of fields.
func (h *Hash) Dup() Value {
	ht := h.ht()
	if ht == nil {
		d := *h
		if b := h.lpBuf(); len(b) > 0 {
			d.p = unsafe.Pointer(unsafe.SliceData(append(zpMake(len(b)), b...)))
		}
		return &d
	}
	d := &fieldDict{}
	d.expand(ht.Len())
	ht.rangeEntries(func(de *fieldEntry) bool {
		d.add(hashString(de.key()), de.key(), de.val())
		return true
	})
	r := &Hash{}
	r.setHT(d)
	return r
}

// lpEntrySize is the bytes a listpack entry holding s takes (listpack.c's
// lpEncodeGetType and lpEncodeBacklen): a string that string2ll accepts is
// stored as an integer of 1, 2, 3, 4, 5 or 9 bytes, another string with a
// 1, 2 or 5 byte header; then the entry's length again, in 1 to 5 bytes.
func lpEntrySize(s string) int {
	var n int
	if v, ok := string2llString(s); ok {
		switch {
		case v >= 0 && v <= 127:
			n = 1
		case v >= -4096 && v <= 4095:
			n = 2
		case v >= -32768 && v <= 32767:
			n = 3
		case v >= -8388608 && v <= 8388607:
			n = 4
		case v >= -2147483648 && v <= 2147483647:
			n = 5
		default:
			n = 9
		}
	} else {
		switch l := len(s); {
		case l < 64:
			n = 1 + l
		case l < 4096:
			n = 2 + l
		default:
			n = 5 + l
		}
	}
	switch {
	case n <= 127:
		return n + 1
	case n < 16383:
		return n + 2
	case n < 2097151:
		return n + 3
	case n < 268435455:
		return n + 4
	}
	return n + 5
}

// string2llString is string2ll for a string, without copying it.
func string2llString(s string) (int64, bool) { return redisutil.String2ll(s) }
