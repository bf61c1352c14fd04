package rdb

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/vigil-kv/vigil/internal/redisutil"
	"github.com/vigil-kv/vigil/server/keyspace"
)

// Error is a load failure: the reason, worded as Redis's rdb.c reports it,
// and the byte offset in the stream where it was detected.
type Error struct {
	Offset int64
	Reason string
	// Line is the line of Redis's rdb.c that reports the failure
	// (rdbReportError), 0 when Redis fails there without a report.
	Line int
	// Cause is the reported failure that made a read fail (a stream's
	// part whose LZF string is invalid...), logged before this one.
	Cause *Error
}

func (e *Error) Error() string {
	return fmt.Sprintf("rdb: %s (offset %d)", e.Reason, e.Offset)
}

// ShortRead is the reason of a stream that ends early (rdbReportReadError).
const ShortRead = "Short read or OOM loading DB. Unrecoverable error, aborting now."

// LoadOptions configures Load.
type LoadOptions struct {
	// VerifyChecksum is rdbchecksum yes: a non-zero trailer must match.
	VerifyChecksum bool
	// Databases is the number of databases: SELECTDB >= Databases is an
	// error. 0 means 16.
	Databases int
	// Enc are the thresholds that choose the encodings of loaded values.
	Enc keyspace.EncodingConfig
	// OnAux, if set, is called for every AUX field as it is read.
	OnAux func(AuxField) error
	// OnOp, if set, is called after each AUX field (OpAux), SELECTDB
	// (OpSelectDB, arg the db), key (arg its object type) and the
	// checksum (OpEOF, arg the stored checksum) with the offset just
	// after it: the trace and progress of a checker (redis-check-rdb).
	OnOp func(op byte, off int64, arg uint64)
	// OnResizeDB, if set, is called with each RESIZEDB hint (the keys
	// and keys with a TTL of the database selected last), for the
	// loader to size its tables as rdbLoad's dictExpand does.
	OnResizeDB func(db int, keys, expires uint64)
	// OnEmptyKey, if set, is called with the key of each empty
	// collection skipped (rdbLoadObject's RDB_LOAD_ERR_EMPTY_KEY).
	OnEmptyKey func(key []byte)
}

// Opcodes reported to LoadOptions.OnOp (besides object types).
const (
	OpAux      = opAux
	OpSelectDB = opSelectDB
	OpEOF      = opEOF
)

// Record is one loaded key.
type Record struct {
	DB int
	// Key is valid only during the call: the loader reuses its buffer.
	Key      []byte
	Value    keyspace.Value
	ExpireAt int64 // unix ms, 0 for none
	Idle     int64 // IDLE seconds, -1 when absent
	Freq     int   // FREQ counter, -1 when absent
}

// Info describes a loaded stream.
type Info struct {
	Version   int
	Aux       []AuxField
	Functions []string
	Keys      int // records handed to fn
	Expires   int // of which with a TTL
	Skipped   int // empty keys skipped
	Checksum  uint64
	Bytes     int64 // bytes read, the checksum included
}

// maxChunk bounds how much is allocated ahead of the data that fills it.
const maxChunk = 1 << 16

type reader struct {
	r   *bufio.Reader
	off int64
	crc uint64
	sum bool
	tmp [16]byte
	// key and lzf are reused buffers: the key being loaded, and the
	// compressed bytes of an LZF string.
	key, lzf []byte
}

func newReader(r io.Reader, sum bool) *reader {
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(r, 64<<10)
	}
	return &reader{r: br, sum: sum}
}

func (r *reader) errorf(format string, args ...any) error {
	return &Error{Offset: r.off, Reason: fmt.Sprintf(format, args...), Line: redisLines[format]}
}

// fail is errorf for a reason without arguments.
func (r *reader) fail(reason string) error {
	return &Error{Offset: r.off, Reason: reason, Line: redisLines[reason]}
}

func (r *reader) short() error { return &Error{Offset: r.off, Reason: ShortRead} }

func (r *reader) full(p []byte) error {
	n, err := io.ReadFull(r.r, p)
	if r.sum {
		r.crc = CRC64(r.crc, p[:n])
	}
	r.off += int64(n)
	if err != nil {
		return r.short()
	}
	return nil
}

func (r *reader) byte() (byte, error) {
	c, err := r.r.ReadByte()
	if err != nil {
		return 0, r.short()
	}
	if r.sum {
		r.tmp[0] = c
		r.crc = CRC64(r.crc, r.tmp[:1])
	}
	r.off++
	return c, nil
}

// bytes reads n bytes, allocating no more than the data read justifies.
func (r *reader) bytes(n uint64) ([]byte, error) {
	if n > 1<<40 { // ztrymalloc fails (taken as failing above 1 TiB)
		return nil, r.errorf("rdbGenericLoadStringObject failed allocating %d bytes", n)
	}
	if n <= maxChunk {
		b := make([]byte, n)
		return b, r.full(b)
	}
	b := make([]byte, 0, maxChunk)
	for uint64(len(b)) < n {
		k := min(n-uint64(len(b)), uint64(max(cap(b)-len(b), maxChunk)))
		start := len(b)
		b = append(b, make([]byte, k)...)
		if err := r.full(b[start:]); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// length is rdbLoadLenByRef: a length, or (encoded) a special string
// encoding number.
func (r *reader) length() (uint64, bool, error) {
	c, err := r.byte()
	if err != nil {
		return 0, false, err
	}
	switch c >> 6 {
	case len6:
		return uint64(c & 0x3F), false, nil
	case len14:
		d, err := r.byte()
		return uint64(c&0x3F)<<8 | uint64(d), false, err
	case encVal:
		return uint64(c & 0x3F), true, nil
	}
	switch c {
	case len32:
		if err := r.full(r.tmp[:4]); err != nil {
			return 0, false, err
		}
		return uint64(binary.BigEndian.Uint32(r.tmp[:4])), false, nil
	case len64:
		if err := r.full(r.tmp[:8]); err != nil {
			return 0, false, err
		}
		return binary.BigEndian.Uint64(r.tmp[:8]), false, nil
	}
	return 0, false, r.errorf("Unknown length encoding %d in rdbLoadLen()", c>>6)
}

// len reads a plain length: rdbLoadLen, which reads an encoded string
// marker (0xC0-0xFF) as the length in its low 6 bits.
func (r *reader) len() (uint64, error) {
	n, _, err := r.length()
	return n, err
}

// count reads a collection length, which must fit an int.
func (r *reader) count() (int, error) {
	n, err := r.len()
	if err != nil {
		return 0, err
	}
	if n > math.MaxInt32*4 {
		return 0, r.errorf("Invalid length %d", n)
	}
	return int(n), nil
}

// str is rdbGenericLoadStringObject: any of the five string forms, as
// bytes.
func (r *reader) str() ([]byte, error) {
	n, enc, err := r.length()
	if err != nil {
		return nil, err
	}
	return r.strRest(n, enc)
}

// strRest is str after the length (or encoding) n.
func (r *reader) strRest(n uint64, enc bool) ([]byte, error) {
	if !enc {
		return r.bytes(n)
	}
	switch n {
	case encInt8:
		c, err := r.byte()
		return strconv.AppendInt(nil, int64(int8(c)), 10), err
	case encInt16:
		if err := r.full(r.tmp[:2]); err != nil {
			return nil, err
		}
		return strconv.AppendInt(nil, int64(int16(binary.LittleEndian.Uint16(r.tmp[:2]))), 10), nil
	case encInt32:
		if err := r.full(r.tmp[:4]); err != nil {
			return nil, err
		}
		return strconv.AppendInt(nil, int64(int32(binary.LittleEndian.Uint32(r.tmp[:4]))), 10), nil
	case encLZF:
		clen, err := r.len()
		if err != nil {
			return nil, err
		}
		ulen, err := r.len()
		if err != nil {
			return nil, err
		}
		var c []byte
		if clen <= maxChunk {
			if uint64(cap(r.lzf)) < clen {
				r.lzf = make([]byte, clen, max(clen, 256))
			}
			c = r.lzf[:clen]
			err = r.full(c)
		} else {
			c, err = r.bytes(clen)
		}
		if err != nil {
			return nil, err
		}
		if ulen == 0 || ulen > 88*clen {
			return nil, r.errorf("Invalid LZF compressed string")
		}
		out, err := redisutil.LZFDecompress(c, int(ulen))
		if err != nil || len(out) != int(ulen) {
			return nil, r.errorf("Invalid LZF compressed string")
		}
		return out, nil
	}
	return nil, r.errorf("Unknown RDB string encoding type %d", n)
}

// keyStr is str for a key: a plain string is read into the reader's key
// buffer, valid until the next key.
func (r *reader) keyStr() ([]byte, error) {
	n, enc, err := r.length()
	if err != nil {
		return nil, err
	}
	if enc || n > maxChunk {
		return r.strRest(n, enc)
	}
	if uint64(cap(r.key)) < n {
		r.key = make([]byte, n, max(n, 64))
	}
	b := r.key[:n]
	return b, r.full(b)
}

// errEmpty is rdbLoadObject's RDB_LOAD_ERR_EMPTY_KEY.
var errEmpty = errors.New("empty key")

// Load reads a whole RDB stream (rdbLoadRioWithLoadingCtx), calling fn for
// every key in file order. Expired keys are returned too (a master drops
// them, a replica keeps them: the caller decides). Empty collections are
// skipped, as Redis does. The error is an *Error unless fn or OnAux
// failed (their error is returned as is). Duplicate keys are not detected
// here (Redis aborts on one): the caller's keyspace sees them.
//
// Load reads ahead through a bufio.Reader: to read an RDB embedded in a
// longer stream (a replication transfer) and keep what follows it, pass a
// *bufio.Reader, which is used as is and left just after the checksum.
func Load(r io.Reader, opts LoadOptions, fn func(Record) error) (Info, error) {
	rd := newReader(r, true)
	info, err := load(rd, opts, fn)
	info.Bytes = rd.off
	return info, err
}

func load(rd *reader, opts LoadOptions, fn func(Record) error) (Info, error) {
	var info Info
	if opts.Databases <= 0 {
		opts.Databases = 16
	}
	var hdr [9]byte
	if err := rd.full(hdr[:]); err != nil {
		return info, err
	}
	if string(hdr[:5]) != "REDIS" {
		return info, &Error{Offset: 0, Reason: "Wrong signature trying to load DB from file"}
	}
	ver := 0
	for _, c := range hdr[5:] {
		if c < '0' || c > '9' {
			ver = -1
			break
		}
		ver = ver*10 + int(c-'0')
	}
	if ver < 1 || ver > Version {
		return info, &Error{Offset: 5, Reason: fmt.Sprintf("Can't handle RDB format version %d", ver)}
	}
	info.Version = ver
	db := 0
	var expireAt, idle int64 = 0, -1
	freq := -1
	for {
		t, err := rd.byte()
		if err != nil {
			return info, err
		}
		switch t {
		case opExpire:
			if err := rd.full(rd.tmp[:4]); err != nil {
				return info, err
			}
			expireAt = int64(int32(binary.LittleEndian.Uint32(rd.tmp[:4]))) * 1000
			continue
		case opExpireMS:
			if err := rd.full(rd.tmp[:8]); err != nil {
				return info, err
			}
			expireAt = int64(binary.LittleEndian.Uint64(rd.tmp[:8]))
			continue
		case opFreq:
			c, err := rd.byte()
			if err != nil {
				return info, err
			}
			freq = int(c)
			continue
		case opIdle:
			n, err := rd.len()
			if err != nil {
				return info, err
			}
			idle = int64(min(n, math.MaxInt64))
			continue
		case opEOF:
			goto eof
		case opSelectDB:
			n, err := rd.len()
			if err != nil {
				return info, err
			}
			if n >= uint64(opts.Databases) {
				return info, rd.errorf("FATAL: Data file was created with a Redis server configured to handle more than %d databases. Exiting", opts.Databases)
			}
			db = int(n)
			if opts.OnOp != nil {
				opts.OnOp(OpSelectDB, rd.off, n)
			}
			continue
		case opResizeDB:
			keys, err := rd.len()
			if err != nil {
				return info, err
			}
			expires, err := rd.len()
			if err != nil {
				return info, err
			}
			if opts.OnResizeDB != nil {
				opts.OnResizeDB(db, keys, expires)
			}
			continue
		case opAux:
			k, err := rd.str()
			if err != nil {
				return info, err
			}
			v, err := rd.str()
			if err != nil {
				return info, err
			}
			a := AuxField{Key: string(k), Value: string(v)}
			info.Aux = append(info.Aux, a)
			if opts.OnAux != nil {
				if err := opts.OnAux(a); err != nil {
					return info, err
				}
			}
			if opts.OnOp != nil {
				opts.OnOp(OpAux, rd.off, 0)
			}
			continue
		case opModuleAux:
			id, err := rd.len()
			if err != nil {
				return info, err
			}
			return info, rd.errorf("The RDB file contains AUX module data I can't load: no matching module '%s' (module type %s not supported)", moduleName(id), moduleName(id))
		case opFunction:
			return info, rd.errorf("Pre-release function format not supported.")
		case opFunction2:
			code, err := rd.str()
			if err != nil {
				return info, err
			}
			info.Functions = append(info.Functions, string(code))
			continue
		}
		if !isObjectType(int(t)) {
			return info, rd.errorf("Unknown RDB encoding type %d", t)
		}
		key, err := rd.keyStr()
		if err != nil {
			return info, err
		}
		val, err := loadObject(rd, int(t), opts.Enc)
		if err == errEmpty {
			if opts.OnEmptyKey != nil {
				opts.OnEmptyKey(key)
			}
			info.Skipped++
		} else if err != nil {
			return info, err
		} else {
			info.Keys++
			if expireAt != 0 {
				info.Expires++
			}
			if err := fn(Record{DB: db, Key: key, Value: val, ExpireAt: expireAt, Idle: idle, Freq: freq}); err != nil {
				return info, err
			}
		}
		if opts.OnOp != nil {
			opts.OnOp(t, rd.off, uint64(t))
		}
		expireAt, idle, freq = 0, -1, -1
	}
eof:
	if ver < 5 {
		return info, nil
	}
	expected := rd.crc
	rd.sum = false
	if err := rd.full(rd.tmp[:8]); err != nil {
		return info, err
	}
	got := binary.LittleEndian.Uint64(rd.tmp[:8])
	info.Checksum = got
	if opts.VerifyChecksum && got != 0 && got != expected {
		// rdb.c's words: expected is the checksum computed, got the
		// file's.
		return info, rd.errorf("Wrong RDB checksum expected: (%x) but got (%x). Aborting now.", expected, got)
	}
	if opts.OnOp != nil {
		opts.OnOp(OpEOF, rd.off, got)
	}
	return info, nil
}

// moduleName is moduleTypeNameByID: the 9-character name in the top 54
// bits of a module type id.
func moduleName(id uint64) string {
	const set = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	var b [9]byte
	id >>= 10
	for i := 8; i >= 0; i-- {
		b[i] = set[id&63]
		id >>= 6
	}
	return string(b[:])
}

// ParsePayload is RESTORE's verifyDumpPayload + rdbLoadObject: it checks
// the footer (RDB version <= 10, CRC-64 unless it is all zero... as Redis:
// always) and decodes the value.
func ParsePayload(p []byte, enc keyspace.EncodingConfig) (keyspace.Value, error) {
	return ParsePayloadOpts(p, enc, false)
}

// ParsePayloadOpts is ParsePayload; skipCRC leaves the CRC-64 unchecked
// (server.skip_checksum_validation: the version is still checked).
func ParsePayloadOpts(p []byte, enc keyspace.EncodingConfig, skipCRC bool) (keyspace.Value, error) {
	v, _, err := ParsePayloadCause(p, enc, skipCRC)
	return v, err
}

// ParsePayloadCause is ParsePayloadOpts; when the value is refused
// (ErrBadData), cause is the failure rdbLoadObject reports
// (rdbReportCorruptRDB: RESTORE logs it in verbose), nil for those Redis
// refuses silently (a short read, an empty collection, a bad type).
func ParsePayloadCause(p []byte, enc keyspace.EncodingConfig, skipCRC bool) (_ keyspace.Value, cause *Error, err error) {
	if len(p) < 10 {
		return nil, nil, ErrPayload
	}
	footer := p[len(p)-10:]
	if binary.LittleEndian.Uint16(footer) > Version {
		return nil, nil, ErrPayload
	}
	if !skipCRC && CRC64(0, p[:len(p)-8]) != binary.LittleEndian.Uint64(footer[2:]) {
		return nil, nil, ErrPayload
	}
	// The whole payload, footer included, as restoreCommand's rio: a
	// value that reads into the footer reads its bytes.
	rd := newReader(&byteReader{b: p}, false)
	t, err := rd.byte()
	if err != nil || !isObjectType(int(t)) {
		return nil, nil, ErrBadData
	}
	v, err := loadObject(rd, int(t), enc)
	if err != nil {
		if e, ok := err.(*Error); ok && e.Line != 0 {
			cause = e
		}
		return nil, cause, ErrBadData
	}
	return v, nil, nil
}

// RESTORE's errors (without the "ERR " prefix).
var (
	ErrPayload = errors.New("DUMP payload version or checksum are wrong")
	ErrBadData = errors.New("Bad data format")
)

type byteReader struct{ b []byte }

func (b *byteReader) Read(p []byte) (int, error) {
	if len(b.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, b.b)
	b.b = b.b[n:]
	return n, nil
}
