package rdb

import (
	"encoding/binary"
	"math"
	"slices"
	"unsafe"

	"github.com/vigil-kv/vigil/internal/redisutil"
)

// Version is RDB_VERSION: the format version written, and the newest read.
const Version = 10

// Opcodes (rdb.h RDB_OPCODE_*).
const (
	opFunction2 = 0xF5
	opFunction  = 0xF6
	opModuleAux = 0xF7
	opIdle      = 0xF8
	opFreq      = 0xF9
	opAux       = 0xFA
	opResizeDB  = 0xFB
	opExpireMS  = 0xFC
	opExpire    = 0xFD
	opSelectDB  = 0xFE
	opEOF       = 0xFF
)

// Object types (rdb.h RDB_TYPE_*).
const (
	TypeString           = 0
	TypeList             = 1
	TypeSet              = 2
	TypeZSet             = 3
	TypeHash             = 4
	TypeZSet2            = 5
	TypeModule           = 6
	TypeModule2          = 7
	TypeHashZipmap       = 9
	TypeListZiplist      = 10
	TypeSetIntset        = 11
	TypeZSetZiplist      = 12
	TypeHashZiplist      = 13
	TypeListQuicklist    = 14
	TypeStreamListpacks  = 15
	TypeHashListpack     = 16
	TypeZSetListpack     = 17
	TypeListQuicklist2   = 18
	TypeStreamListpacks2 = 19
)

// isObjectType is rdbIsObjectType.
func isObjectType(t int) bool {
	return (t >= 0 && t <= 7) || (t >= 9 && t <= 19)
}

// Length encodings (rdb.h RDB_6BITLEN ... RDB_ENCVAL).
const (
	len6     = 0
	len14    = 1
	len32    = 0x80
	len64    = 0x81
	encVal   = 3
	encInt8  = 0
	encInt16 = 1
	encInt32 = 2
	encLZF   = 3
)

// quicklist node containers.
const (
	containerPlain  = 1
	containerPacked = 2
)

// appendLen is rdbSaveLen: the smallest of the 6-, 14-, 32- and 64-bit
// forms.
func appendLen(b []byte, n uint64) []byte {
	switch {
	case n < 1<<6:
		return append(b, byte(n))
	case n < 1<<14:
		return append(b, byte(n>>8)|0x40, byte(n))
	case n <= math.MaxUint32:
		b = append(b, len32)
		return binary.BigEndian.AppendUint32(b, uint32(n))
	}
	b = append(b, len64)
	return binary.BigEndian.AppendUint64(b, n)
}

// string2ll is util.c's string2ll (redisutil.String2ll).
func string2ll(b []byte) (int64, bool) { return redisutil.String2ll(b) }

// appendEncodedInt is rdbEncodeInteger: the 8-, 16- or 32-bit special
// string form, ok false when v needs more.
func appendEncodedInt(b []byte, v int64) ([]byte, bool) {
	switch {
	case v >= math.MinInt8 && v <= math.MaxInt8:
		return append(b, 0xC0|encInt8, byte(v)), true
	case v >= math.MinInt16 && v <= math.MaxInt16:
		return append(b, 0xC0|encInt16, byte(v), byte(v>>8)), true
	case v >= math.MinInt32 && v <= math.MaxInt32:
		return append(b, 0xC0|encInt32, byte(v), byte(v>>8), byte(v>>16), byte(v>>24)), true
	}
	return b, false
}

// appendString is rdbSaveRawString: an integer form for a canonical
// integer of at most 11 characters that fits 32 bits, LZF when compress
// and the string is longer than 20 bytes and shrinks by at least 4, else
// the length and the bytes.
func appendString(b, s []byte, compress bool) []byte {
	if len(s) <= 11 {
		if v, ok := string2ll(s); ok {
			if nb, ok := appendEncodedInt(b, v); ok {
				return nb
			}
		}
	}
	if compress && len(s) > 20 {
		// Compress into b's spare room, past the longest header, then
		// move the result down behind the real header: no allocation
		// once b has grown (the Encoder reuses its buffer).
		b = slices.Grow(b, lzfHeaderMax+len(s))
		at := len(b) + lzfHeaderMax
		if n := redisutil.LZFCompress(s, b[at:at+len(s)-4]); n > 0 {
			b = append(b, 0xC0|encLZF)
			b = appendLen(b, uint64(n))
			b = appendLen(b, uint64(len(s)))
			return append(b, b[at:at+n]...) // copy handles the overlap
		}
	}
	b = appendLen(b, uint64(len(s)))
	return append(b, s...)
}

// lzfHeaderMax is the longest header appendLZF writes: the marker and two
// 64-bit lengths.
const lzfHeaderMax = 1 + 9 + 9

// appendLZF is rdbSaveLzfBlob.
func appendLZF(b, c []byte, ulen int) []byte {
	b = append(b, 0xC0|encLZF)
	b = appendLen(b, uint64(len(c)))
	b = appendLen(b, uint64(ulen))
	return append(b, c...)
}

func appendStr(b []byte, s string, compress bool) []byte {
	// appendString only reads s.
	return appendString(b, unsafe.Slice(unsafe.StringData(s), len(s)), compress)
}

// --- listpack (listpack.c) ---------------------------------------------------

const lpHdrNumEleUnknown = 65535

// The listpack entry encoders are redisutil's (one copy, shared with the
// keyspace's quicklist nodes).
var (
	lpAppendBacklen = redisutil.LPAppendBacklen
	lpAppendInt     = redisutil.LPAppendInt
	lpAppendEntry   = redisutil.LPAppendEntry
)

// listpackBuilder builds a listpack blob.
type listpackBuilder struct {
	b     []byte
	count int
}

func newListpack() *listpackBuilder { return &listpackBuilder{b: make([]byte, 6, 64)} }

func (l *listpackBuilder) add(s []byte)    { l.b = lpAppendEntry(l.b, s); l.count++ }
func (l *listpackBuilder) addStr(s string) { l.add([]byte(s)) }
func (l *listpackBuilder) addInt(v int64)  { l.b = lpAppendInt(l.b, v); l.count++ }

func (l *listpackBuilder) finish() []byte {
	l.b = append(l.b, 0xFF)
	binary.LittleEndian.PutUint32(l.b, uint32(len(l.b)))
	n := l.count
	if n >= lpHdrNumEleUnknown {
		n = lpHdrNumEleUnknown
	}
	binary.LittleEndian.PutUint16(l.b[4:], uint16(n))
	return l.b
}

// double2ll is util.c's double2ll as zzlInsertAt uses it.
func double2ll(d float64) (int64, bool) {
	if d < -math.MaxInt64/2 || d > math.MaxInt64/2 {
		return 0, false
	}
	v := int64(d)
	return v, float64(v) == d
}
