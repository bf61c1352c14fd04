package keyspace

import (
	"math/rand/v2"
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
// Fields and values are Go strings: immutable, so Dup shares them, and
// converting an argument to a string copies it.
type Hash struct {
	lp      []hashPair // listpack encoding, while ht == nil
	lpBytes int        // lpBytes of that listpack
	ht      *fieldDict // hashtable encoding
}

type hashPair struct{ field, value string }

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
	return len(h.lp)
}

// lpFind returns the index of field in the listpack, -1 if absent.
func (h *Hash) lpFind(field []byte) int {
	for i := range h.lp {
		if h.lp[i].field == string(field) {
			return i
		}
	}
	return -1
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
	if i := h.lpFind(field); i >= 0 {
		return h.lp[i].value, true
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
	if i := h.lpFind(field); i >= 0 {
		h.lpBytes += lpEntrySize(value) - lpEntrySize(h.lp[i].value)
		h.lp[i].value = value
		return false
	}
	f := string(field)
	h.lp = append(h.lp, hashPair{f, value})
	h.lpBytes += lpEntrySize(f) + lpEntrySize(value)
	if len(h.lp) > cfg.HashMaxListpackEntries {
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
	i := h.lpFind(field)
	if i < 0 {
		return false
	}
	h.lpBytes -= lpEntrySize(h.lp[i].field) + lpEntrySize(h.lp[i].value)
	copy(h.lp[i:], h.lp[i+1:])
	h.lp[len(h.lp)-1] = hashPair{}
	h.lp = h.lp[:len(h.lp)-1]
	return true
}

// convert is hashTypeConvertListpack: a dict presized to the number of
// fields, filled in listpack order.
func (h *Hash) convert() {
	d := &fieldDict{}
	d.expand(len(h.lp))
	for _, p := range h.lp {
		d.add(hashString(p.field), p.field, p.value)
	}
	h.ht, h.lp, h.lpBytes = d, nil, 0
}

// Range calls fn for every field in hashTypeNext's order (listpack order,
// or the dict's iteration order) until fn returns false. fn must not
// modify h.
func (h *Hash) Range(fn func(field, value string) bool) {
	if h.ht != nil {
		h.ht.rangeEntries(func(de *fieldEntry) bool { return fn(de.key(), de.val()) })
		return
	}
	for _, p := range h.lp {
		if !fn(p.field, p.value) {
			return
		}
	}
}

// Scan is the hashtable part of scanGenericCommand: one dictScan step from
// cursor, calling fn for each entry of the visited buckets; it returns the
// next cursor (0: done). A listpack hash is returned whole with cursor 0,
// as Redis does. fn must not modify h.
func (h *Hash) Scan(cursor uint64, fn func(field, value string)) uint64 {
	if h.ht == nil {
		for _, p := range h.lp {
			fn(p.field, p.value)
		}
		return 0
	}
	return h.ht.scan(cursor, func(de *fieldEntry) { fn(de.key(), de.val()) })
}

// At returns the i-th pair of a listpack hash (0 <= i < Len).
func (h *Hash) At(i int) (field, value string) { return h.lp[i].field, h.lp[i].value }

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
	if len(h.lp) == 0 {
		return "", "", false
	}
	p := h.lp[rng.IntN(len(h.lp))]
	return p.field, p.value, true
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
		return &Hash{lp: append([]hashPair(nil), h.lp...), lpBytes: h.lpBytes}
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
