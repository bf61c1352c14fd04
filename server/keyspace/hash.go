package keyspace

import (
	"encoding/binary"
	"math/rand/v2"
	"slices"
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
// The listpack is packed into one byte buffer (lp, lpLen bytes used of
// lpCap): each pair is a uvarint length and the field's bytes, then a
// uvarint length and the value's bytes, so a small hash costs its bytes and
// a 32-byte header, not a string header and an allocation per field and
// value (a hash of 5 small fields took about 430 bytes, now about 150).
// The bytes below lpLen are never written again: an update or a delete
// builds a new buffer, a new field is appended in the spare capacity or
// in a new buffer, so the strings Get, Range and Scan return (views into
// the buffer) stay intact, and Dup shares the buffer (with no spare
// capacity, so that neither copy appends into the other's bytes).
type Hash struct {
	lp      *byte      // the listpack's buffer, while ht == nil
	lpLen   uint32     // bytes used
	lpCap   uint32     // bytes allocated
	lpN     uint32     // fields
	lpBytes uint32     // lpBytes of that listpack as Redis lays it out
	ht      *fieldDict // hashtable encoding
}

// Listpack layout (listpack.c): a 6-byte header and a 1-byte terminator.
const (
	lpHeaderSize = 6
	lpEmptySize  = lpHeaderSize + 1
)

// NewHash returns an empty listpack hash (createHashObject).
func NewHash() *Hash { return &Hash{lpBytes: lpEmptySize} }

// Type is TypeHash.
func (h *Hash) Type() Type { return TypeHash }

// Encoding is listpack or hashtable.
func (h *Hash) Encoding() Encoding {
	if h.ht != nil {
		return EncodingHashtable
	}
	return EncodingListpack
}

// Len is hashTypeLength.
func (h *Hash) Len() int {
	if h.ht != nil {
		return h.ht.Len()
	}
	return int(h.lpN)
}

// lpBuf is the listpack's used bytes.
func (h *Hash) lpBuf() []byte {
	if h.lp == nil {
		return nil
	}
	return unsafe.Slice(h.lp, h.lpCap)[:h.lpLen]
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

// lpSetBuf makes b the buffer (b's bytes below len(b) are not written
// again).
func (h *Hash) lpSetBuf(b []byte) {
	h.lp, h.lpLen, h.lpCap = unsafe.SliceData(b), uint32(len(b)), uint32(cap(b))
	if cap(b) == 0 {
		h.lp = nil
	}
}

// lpAppend appends field=value to the listpack: in place when the spare
// capacity holds it (bytes nobody has seen), else in a new buffer with a
// quarter of room to grow, rounded up to its allocation's size class.
func lpAppend[F, V ~string | ~[]byte](h *Hash, field F, value V) {
	b := h.lpBuf()
	need := lpPairLen(len(field), len(value))
	if len(b)+need > int(h.lpCap) {
		total := len(b) + need
		nb := slices.Grow([]byte(nil), total+total/4)
		b = append(nb, b...)
	}
	h.lpSetBuf(appendPair(b, field, value))
	h.lpN++
}

// lpFind returns the offsets of field's pair in the listpack (its start,
// where its value's length starts, its end) and its value, or start -1.
func (h *Hash) lpFind(field []byte) (start, vat, end int, value string) {
	b := h.lpBuf()
	for off := 0; off < len(b); {
		f, next := lpStr(b, off)
		v, e := lpStr(b, next)
		if f == string(field) {
			return off, next, e, v
		}
		off = e
	}
	return -1, 0, 0, ""
}

// lpSplice replaces the buffer's bytes [start, end) by the pair
// field=value (none when del), in a new buffer of the exact size.
func (h *Hash) lpSplice(start, end int, field []byte, value string, del bool) {
	b := h.lpBuf()
	n := len(b) - (end - start)
	if !del {
		n += lpPairLen(len(field), len(value))
	}
	if n == 0 {
		h.lpSetBuf(nil)
		return
	}
	nb := make([]byte, 0, n)
	nb = append(nb, b[:start]...)
	if !del {
		nb = appendPair(nb, field, value)
	}
	h.lpSetBuf(append(nb, b[end:]...))
}

// Get is hashTypeGetValue. With step, a hashtable in the middle of a
// resize does one rehash step first, as dictFind; pass false when the
// value may be shared with a running snapshot (DB.InPlace is false).
func (h *Hash) Get(field []byte, step bool) (string, bool) {
	if h.ht != nil {
		if de := h.ht.find(hashBytes(field), field, step); de != nil {
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
	if h.ht != nil {
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
	if h.ht == nil && (len(field) > cfg.HashMaxListpackValue || len(value) > cfg.HashMaxListpackValue) {
		h.convert()
	}
	if h.ht != nil {
		return h.ht.set(field, value)
	}
	if start, _, end, old := h.lpFind(field); start >= 0 {
		h.lpBytes += uint32(lpEntrySize(value) - lpEntrySize(old))
		h.lpSplice(start, end, field, value, false)
		return false
	}
	lpAppend(h, field, value)
	h.lpBytes += uint32(lpEntrySize(unsafe.String(unsafe.SliceData(field), len(field))) + lpEntrySize(value))
	if int(h.lpN) > cfg.HashMaxListpackEntries {
		h.convert()
	}
	return true
}

// SetB is Set with the value as bytes, copied: a hashtable field copies
// them into its entry, so no string is made for the value on the way.
func (h *Hash) SetB(field, value []byte, cfg EncodingConfig) bool {
	if h.ht == nil && (len(field) > cfg.HashMaxListpackValue || len(value) > cfg.HashMaxListpackValue) {
		h.convert()
	}
	if h.ht != nil {
		return h.ht.set(field, unsafe.String(unsafe.SliceData(value), len(value))) // copied: fieldDict.set keeps no reference
	}
	return h.Set(field, string(value), cfg)
}

// Delete is hashTypeDelete: it removes field and reports whether it was
// there. A hashtable shrinks when less than 10% full, as Redis's.
func (h *Hash) Delete(field []byte) bool {
	if h.ht != nil {
		return h.ht.remove(field)
	}
	start, _, end, v := h.lpFind(field)
	if start < 0 {
		return false
	}
	h.lpBytes -= uint32(lpEntrySize(unsafe.String(unsafe.SliceData(field), len(field))) + lpEntrySize(v))
	h.lpSplice(start, end, nil, "", true)
	h.lpN--
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
	h.ht, h.lpBytes, h.lpN = d, 0, 0
	h.lpSetBuf(nil)
}

// lpRange calls fn for each pair of the listpack, in order, until it
// returns false.
func (h *Hash) lpRange(fn func(field, value string) bool) {
	b := h.lpBuf()
	for off := 0; off < len(b); {
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
	if h.ht != nil {
		h.ht.rangeEntries(func(de *fieldEntry) bool { return fn(de.key(), de.val()) })
		return
	}
	h.lpRange(fn)
}

// Scan is the hashtable part of scanGenericCommand: one dictScan step from
// cursor, calling fn for each entry of the visited buckets; it returns the
// next cursor (0: done). A listpack hash is returned whole with cursor 0,
// as Redis does. fn must not modify h.
func (h *Hash) Scan(cursor uint64, fn func(field, value string)) uint64 {
	if h.ht == nil {
		h.lpRange(func(f, v string) bool { fn(f, v); return true })
		return 0
	}
	return h.ht.scan(cursor, func(de *fieldEntry) { fn(de.key(), de.val()) })
}

// RandomField returns a random field and value, false if h is empty: a
// uniform pick in a listpack (lpRandomPair), dictGetFairRandomKey in a
// hashtable (step as in Get).
func (h *Hash) RandomField(rng *rand.Rand, step bool) (field, value string, ok bool) {
	if h.ht != nil {
		de := h.ht.fairRandomEntry(rng, step)
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
	if h.ht == nil {
		return RobjSize + JemallocSize(uint64(h.lpBytes))
	}
	asize := uint64(RobjSize + dictStructSize + DictEntryPtrSize*h.ht.Buckets())
	var elesize, n uint64
	h.ht.rangeEntries(func(de *fieldEntry) bool {
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
	return uint64(float64(asize) + float64(elesize)/float64(n)*float64(h.ht.Len()))
}

// (dictStructSize, sizeof(dict), is declared with the set type.)

// Dup is dupHashObject: a listpack is copied as is; a hashtable is rebuilt
// in a dict presized to its number of fields.
func (h *Hash) Dup() Value {
	if h.ht == nil {
		// The bytes are never written again: share them, with no spare
		// capacity so that neither hash appends into the other's.
		return &Hash{lp: h.lp, lpLen: h.lpLen, lpCap: h.lpLen, lpN: h.lpN, lpBytes: h.lpBytes}
	}
	d := &fieldDict{}
	d.expand(h.ht.Len())
	h.ht.rangeEntries(func(de *fieldEntry) bool {
		d.add(hashString(de.key()), de.key(), de.val())
		return true
	})
	return &Hash{ht: d}
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
