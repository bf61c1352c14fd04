package keyspace

import (
	"math"
	"unsafe"

	"github.com/vigil-kv/vigil/internal/redisutil"
)

// Type is a value's Redis type, numbered as server.h's OBJ_STRING ..
// OBJ_STREAM (the numbers RDB and the module API use).
type Type uint8

// The Redis 7.0 object types. OBJ_MODULE (5) is not supported.
const (
	TypeString Type = 0 // OBJ_STRING
	TypeList   Type = 1 // OBJ_LIST
	TypeSet    Type = 2 // OBJ_SET
	TypeZSet   Type = 3 // OBJ_ZSET
	TypeHash   Type = 4 // OBJ_HASH
	TypeStream Type = 6 // OBJ_STREAM
)

// String is the type's name as TYPE and SCAN TYPE print it
// (getObjectTypeName).
func (t Type) String() string {
	switch t {
	case TypeString:
		return "string"
	case TypeList:
		return "list"
	case TypeSet:
		return "set"
	case TypeZSet:
		return "zset"
	case TypeHash:
		return "hash"
	case TypeStream:
		return "stream"
	}
	return "unknown"
}

// Encoding is a value's internal representation, numbered as server.h's
// OBJ_ENCODING_* (the retired zipmap, linkedlist and ziplist keep their
// numbers but are never produced by Redis 7.0, nor here).
type Encoding uint8

// The Redis 7.0 encodings.
const (
	EncodingRaw       Encoding = 0  // OBJ_ENCODING_RAW
	EncodingInt       Encoding = 1  // OBJ_ENCODING_INT
	EncodingHashtable Encoding = 2  // OBJ_ENCODING_HT
	EncodingIntset    Encoding = 6  // OBJ_ENCODING_INTSET
	EncodingSkiplist  Encoding = 7  // OBJ_ENCODING_SKIPLIST
	EncodingEmbstr    Encoding = 8  // OBJ_ENCODING_EMBSTR
	EncodingQuicklist Encoding = 9  // OBJ_ENCODING_QUICKLIST
	EncodingStream    Encoding = 10 // OBJ_ENCODING_STREAM
	EncodingListpack  Encoding = 11 // OBJ_ENCODING_LISTPACK
)

// String is the encoding's name as OBJECT ENCODING and DEBUG OBJECT print
// it (strEncoding).
func (e Encoding) String() string {
	switch e {
	case EncodingRaw:
		return "raw"
	case EncodingInt:
		return "int"
	case EncodingHashtable:
		return "hashtable"
	case EncodingIntset:
		return "intset"
	case EncodingSkiplist:
		return "skiplist"
	case EncodingEmbstr:
		return "embstr"
	case EncodingQuicklist:
		return "quicklist"
	case EncodingStream:
		return "stream"
	case EncodingListpack:
		return "listpack"
	}
	return "unknown"
}

// Value is a stored value: Redis's robj minus the LRU and refcount, which
// live in Entry and the server. Every type implements it, and the
// type-independent commands (TYPE, SCAN TYPE, OBJECT ENCODING, MEMORY
// USAGE, DEBUG OBJECT, COPY) and snapshots use nothing else, so adding a
// type is implementing Value (plus its own commands and its RDB encoding).
//
// A Value reachable through an Entry is read-only for everyone but the
// writer that got it from DB.Mutable: a running Snapshot may share it (see
// the package documentation, "Snapshots").
type Value interface {
	// Type is the Redis type (OBJ_*).
	Type() Type
	// Encoding is the representation Redis 7.0 would use for this value,
	// given its content and the thresholds of EncodingConfig it was
	// built under.
	Encoding() Encoding
	// Size is objectComputeSize: the bytes Redis 7.0 (jemalloc, x86_64)
	// would allocate for the value, the robj included. samples bounds how
	// many elements of an aggregate are measured to estimate the rest
	// (MEMORY USAGE SAMPLES: 0 means all); scalars ignore it.
	Size(samples int) uint64
	// Dup returns an independent deep copy, as Redis's dup*Object for COPY
	// (a string's copy gets an object of its own: an integer is no
	// longer shared). Snapshots use it to copy a value before a write
	// mutates it in place.
	Dup() Value
}

// EncodingConfig holds the thresholds at which Redis 7.0 converts an
// aggregate from its compact encoding to the general one, named after
// their config directives. Strings use no configurable threshold
// (OBJ_ENCODING_EMBSTR_SIZE_LIMIT is fixed at 44 bytes).
type EncodingConfig struct {
	HashMaxListpackEntries int // hash-max-listpack-entries
	HashMaxListpackValue   int // hash-max-listpack-value
	SetMaxIntsetEntries    int // set-max-intset-entries
	ZSetMaxListpackEntries int // zset-max-listpack-entries
	ZSetMaxListpackValue   int // zset-max-listpack-value
	ListMaxListpackSize    int // list-max-listpack-size (negative: a size class in KB)
	ListCompressDepth      int // list-compress-depth
	StreamNodeMaxBytes     int // stream-node-max-bytes
	StreamNodeMaxEntries   int // stream-node-max-entries
}

// DefaultEncodingConfig is Redis 7.0's defaults of the directives.
func DefaultEncodingConfig() EncodingConfig {
	return EncodingConfig{
		HashMaxListpackEntries: 512,
		HashMaxListpackValue:   64,
		SetMaxIntsetEntries:    512,
		ZSetMaxListpackEntries: 128,
		ZSetMaxListpackValue:   64,
		ListMaxListpackSize:    -2,
		ListCompressDepth:      0,
		StreamNodeMaxBytes:     4096,
		StreamNodeMaxEntries:   100,
	}
}

// --- strings --------------------------------------------------------------

// StringKind records how Redis 7.0 created a string object, which with the
// bytes decides its encoding (OBJECT ENCODING, REFCOUNT and MEMORY USAGE
// depend on the command that wrote the value, not only on its content).
type StringKind uint8

const (
	// StringAuto is tryObjectEncoding of the bytes (SET, MSET, INCR...):
	// int (shared when 0..9999), else embstr up to 44 bytes, else raw.
	StringAuto StringKind = iota
	// StringRaw is a string modified in place (APPEND, SETRANGE, SETBIT:
	// dbUnshareStringValue / getDecodedObject), always raw.
	StringRaw
	// StringEmbstr is createStringObject without tryObjectEncoding
	// (INCRBYFLOAT): embstr up to 44 bytes, else raw, never int.
	StringEmbstr
	// StringIntUnshared is an int-encoded object of its own, refcount 1
	// (COPY of an integer: dupStringObject).
	StringIntUnshared
	// StringSized is a raw string whose sds allocation is recorded: its
	// alloc is cap(b)-1 (the extra byte is the sds terminator's). The
	// HyperLogLog commands write it, growing it as sdsMakeRoomFor does.
	StringSized
)

// EmbstrSizeLimit is OBJ_ENCODING_EMBSTR_SIZE_LIMIT.
const EmbstrSizeLimit = 44

// String is a string value (OBJ_STRING; bitmaps are strings too).
//
// Its bytes belong to the keyspace: a writer changes them only on a String
// returned by DB.Mutable (or DB.OverwriteString), and the only spare
// capacity it may write past len is its own (Dup and NewString never share
// an array).
//
// It is an 8-byte header, like an sds header, because a small string key's
// node, Entry, String and the key's and value's bytes share one allocation
// (DB.SetString) and every byte of the header counts there: n is the length,
// ck holds the kind in its top 3 bits, the inline flag and the spare
// capacity (cap - len, clamped to spareMax: a larger spare is simply not
// offered to appends) in the others. The bytes are either inline, right
// after the header in the same allocation (inlineFlag: a key node's value,
// newStringCopy), or elsewhere, the header then being the first field of an
// extString whose pointer follows it (NewString). A string is at most 4 GiB
// - 1 bytes long (proto-max-bulk-len is 512 MB by default).
type String struct {
	n  uint32
	ck uint32
}

// extString is a String whose bytes are in an array of their own.
type extString struct {
	String
	p *byte
}

const (
	kindShift  = 29
	inlineFlag = 1 << 28
	spareMax   = inlineFlag - 1
)

// strHdrSize is the String header's size: inline bytes start there.
const strHdrSize = unsafe.Sizeof(String{})

// NewString returns a string value holding b, which the caller hands over
// (it must not touch b again), created as kind.
func NewString(b []byte, kind StringKind) *String {
	s := &extString{}
	s.setExt(b, kind)
	return &s.String
}

// inlineStr is a String with room A (a byte array) for its bytes.
type inlineStr[A any] struct {
	String
	data A
}

func newInlineStr[A any](n int) *String {
	s := &inlineStr[A]{}
	s.ck = inlineFlag | uint32(int(unsafe.Sizeof(s.data))-n)
	s.n = uint32(n)
	return &s.String
}

// newStringCopy returns a string value holding a copy of b, created as
// kind: the header and the bytes in one allocation when they fit in 256
// bytes (the array fills the size class; the slack is spare capacity), else
// NewString of a copy.
func newStringCopy(b []byte, kind StringKind) *String {
	var s *String
	switch n := len(b); {
	case n <= 16-int(strHdrSize):
		s = newInlineStr[[16 - strHdrSize]byte](n)
	case n <= 24-int(strHdrSize):
		s = newInlineStr[[24 - strHdrSize]byte](n)
	case n <= 32-int(strHdrSize):
		s = newInlineStr[[32 - strHdrSize]byte](n)
	case n <= 48-int(strHdrSize):
		s = newInlineStr[[48 - strHdrSize]byte](n)
	case n <= 64-int(strHdrSize):
		s = newInlineStr[[64 - strHdrSize]byte](n)
	case n <= 80-int(strHdrSize):
		s = newInlineStr[[80 - strHdrSize]byte](n)
	case n <= 96-int(strHdrSize):
		s = newInlineStr[[96 - strHdrSize]byte](n)
	case n <= 128-int(strHdrSize):
		s = newInlineStr[[128 - strHdrSize]byte](n)
	case n <= 160-int(strHdrSize):
		s = newInlineStr[[160 - strHdrSize]byte](n)
	case n <= 192-int(strHdrSize):
		s = newInlineStr[[192 - strHdrSize]byte](n)
	case n <= 256-int(strHdrSize):
		s = newInlineStr[[256 - strHdrSize]byte](n)
	default:
		return NewString(append(make([]byte, 0, len(b)), b...), kind)
	}
	copy(s.Bytes(), b)
	s.SetKind(kind)
	return s
}

// inline reports whether the bytes follow the header.
func (s *String) inline() bool { return s.ck&inlineFlag != 0 }

// data is the address of the bytes.
func (s *String) data() *byte {
	if s.ck&inlineFlag != 0 {
		return (*byte)(unsafe.Add(unsafe.Pointer(s), strHdrSize))
	}
	return (*extString)(unsafe.Pointer(s)).p
}

// Bytes returns the string's bytes. Do not modify them unless s came from
// DB.Mutable.
func (s *String) Bytes() []byte {
	return unsafe.Slice(s.data(), uint64(s.n)+uint64(s.ck&spareMax))[:s.n]
}

// Kind is how the string was created.
func (s *String) Kind() StringKind { return StringKind(s.ck >> kindShift) }

// Set replaces the bytes (handed over, as NewString) and the kind. Only on
// a String returned by DB.Mutable, which never returns an inline string: an
// inline one (whose header has no room for a pointer) only takes a b within
// its own bytes (Bytes()[:k] or an append within their capacity).
func (s *String) Set(b []byte, kind StringKind) {
	if s.ck&inlineFlag != 0 {
		room := uint64(s.n) + uint64(s.ck&spareMax)
		if unsafe.SliceData(b) != s.data() || uint64(cap(b)) > room {
			panic("keyspace: String.Set of a new array on an inline string")
		}
		s.n = uint32(len(b))
		s.ck = uint32(kind)<<kindShift | inlineFlag | uint32(room-uint64(len(b)))
		return
	}
	(*extString)(unsafe.Pointer(s)).setExt(b, kind)
}

func (s *extString) setExt(b []byte, kind StringKind) {
	if uint64(len(b)) > math.MaxUint32 {
		panic("keyspace: string longer than 4 GiB - 1")
	}
	s.p, s.n = unsafe.SliceData(b), uint32(len(b))
	s.ck = uint32(kind)<<kindShift | uint32(min(cap(b)-len(b), spareMax))
}

// external returns s as a string with its own header and a pointer to s's
// bytes, so that Set may hand it a new array: s itself when it is not
// inline, else a new extString on the same bytes (and spare capacity).
func (s *String) external() *String {
	if s.ck&inlineFlag == 0 {
		return s
	}
	x := &extString{String: String{n: s.n, ck: s.ck &^ inlineFlag}, p: s.data()}
	return &x.String
}

// SetKind changes the kind, after an in-place change of the bytes. Only on
// a String returned by DB.Mutable.
func (s *String) SetKind(kind StringKind) {
	s.ck = s.ck&(spareMax|inlineFlag) | uint32(kind)<<kindShift
}

// Type is TypeString.
func (s *String) Type() Type { return TypeString }

// Int reports the value as an integer when Redis would encode it as one
// (string2ll succeeds, so it prints back identically), whatever its kind.
func (s *String) Int() (int64, bool) { return string2ll(s.Bytes()) }

// Encoding is int, embstr or raw, as Redis would have chosen when the
// string was created (see StringKind).
func (s *String) Encoding() Encoding {
	switch s.Kind() {
	case StringRaw, StringSized:
		return EncodingRaw
	case StringIntUnshared:
		return EncodingInt
	case StringAuto:
		if _, ok := string2ll(s.Bytes()); ok {
			return EncodingInt
		}
	}
	if s.n <= EmbstrSizeLimit {
		return EncodingEmbstr
	}
	return EncodingRaw
}

// Size is objectComputeSize of the string: sizeof(robj) for an int, the
// robj+sds block of an embstr, sizeof(robj) plus the sds block of a raw
// string.
//
// The raw sds block is exact for strings created from a command argument
// (StringAuto: SET, MSET, APPEND of a missing key, ...) and from a number
// (StringEmbstr: INCRBYFLOAT). A string modified in place (StringRaw)
// depends on its history, which is not recorded: it is computed as one
// greedy growth to its current length (exact for one APPEND or growing
// SETRANGE on a string that was not raw yet). A SETRANGE that creates the
// key or stays within the length allocates exactly, and successive APPENDs
// grow by steps, so Redis can report less than this.
func (s *String) Size(int) uint64 {
	n := uint64(s.n)
	switch s.Encoding() {
	case EncodingInt:
		return RobjSize
	case EncodingEmbstr:
		return JemallocSize(RobjSize + sdshdr8Size + n + 1)
	}
	switch b := s.Bytes(); s.Kind() {
	case StringRaw:
		return RobjSize + sdsGrownSize(n)
	case StringSized:
		return RobjSize + SdsAllocSize(uint64(max(cap(b)-1, len(b))))
	case StringAuto:
		return RobjSize + sdsArgSize(n)
	}
	return RobjSize + SdsNewSize(n) // createRawStringObject
}

// Dup is dupStringObject: a copy of the bytes of the same encoding, except
// that an integer becomes an object of its own (StringIntUnshared).
func (s *String) Dup() Value {
	kind := s.Kind()
	if s.Encoding() == EncodingInt {
		kind = StringIntUnshared
	}
	b := s.Bytes()
	if kind == StringSized { // keep the recorded allocation and terminator
		return NewString(append(make([]byte, 0, cap(b)), b[:cap(b)]...)[:len(b)], kind)
	}
	return NewString(append(make([]byte, 0, len(b)), b...), kind)
}

// string2ll is util.c's string2ll (redisutil.String2ll).
func string2ll(b []byte) (int64, bool) { return redisutil.String2ll(b) }
