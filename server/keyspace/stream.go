package keyspace

// Stream is a stream value (OBJ_STREAM) that Vigil holds as its RDB
// serialization only: it is loaded from an RDB file or a RESTORE payload
// (server/rdb parses and validates it in full) and written back byte for
// byte. TYPE says "stream" and OBJECT ENCODING "stream"; there are no
// stream commands yet.
type Stream struct {
	rdbType byte
	payload []byte
	length  uint64
}

// NewOpaqueStream is a stream of RDB type rdbType (15 or 19) whose value
// encoding (what follows the key in an RDB file) is payload, handed over,
// holding length entries (XLEN).
func NewOpaqueStream(rdbType byte, payload []byte, length uint64) *Stream {
	return &Stream{rdbType: rdbType, payload: payload, length: length}
}

// Type is TypeStream.
func (s *Stream) Type() Type { return TypeStream }

// Encoding is stream.
func (s *Stream) Encoding() Encoding { return EncodingStream }

// Size estimates the memory as the robj, the stream struct and the
// serialized bytes (Redis's rax of listpacks is close to them).
func (s *Stream) Size(int) uint64 { return RobjSize + 64 + uint64(len(s.payload)) }

// Dup shares the payload, which is never modified.
func (s *Stream) Dup() Value { c := *s; return &c }

// Len is the number of entries (XLEN).
func (s *Stream) Len() uint64 { return s.length }

// RDBType is the RDB object type the payload was read as.
func (s *Stream) RDBType() byte { return s.rdbType }

// RDBPayload is the value's RDB encoding. Do not modify it.
func (s *Stream) RDBPayload() []byte { return s.payload }
