package rdb

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"github.com/vigil-kv/vigil/internal/redisutil"
	"github.com/vigil-kv/vigil/server/keyspace"
)

// AuxField is one RDB_OPCODE_AUX record.
type AuxField struct{ Key, Value string }

// EncodeOptions configures an Encoder.
type EncodeOptions struct {
	// Compress is rdbcompression: LZF for strings longer than 20 bytes
	// when it saves at least 4 bytes.
	Compress bool
	// Checksum is rdbchecksum: the CRC-64 trailer, else 0.
	Checksum bool
	// Aux are written after the header, in order.
	Aux []AuxField
	// Functions are FUNCTION2 library sources, written after Aux.
	Functions []string
	// LRU writes IDLE (seconds since Item.LastAccess, as of Now) before
	// each key, LFU writes FREQ (Item.Freq decayed as of Now by
	// LFUDecayTime, as LFUDecrAndReturn, Item.LastAccess being its last
	// decrement): Redis does so under an allkeys-/volatile-lru or -lfu
	// maxmemory-policy.
	LRU, LFU bool
	// Now is the current unix time in ms, for IDLE and FREQ.
	Now int64
	// LFUDecayTime is lfu-decay-time (minutes; 0: no decay).
	LFUDecayTime int
}

// Encoder writes an RDB stream (rdbSaveRio).
type Encoder struct {
	w     io.Writer
	opts  EncodeOptions
	crc   uint64
	db    int // last SELECTDB written, -1 none
	sizes map[int][2]int
	// buf is the output not yet written to w: items are encoded straight
	// into it, and the checksum is computed over it in one run when it
	// is flushed.
	buf    []byte
	err    error
	closed bool
}

// encoderFlushAt is the size at which the Encoder writes its buffer out.
const encoderFlushAt = 64 << 10

// NewEncoder writes the header ("REDIS0010"), the aux fields and the
// function libraries to w.
func NewEncoder(w io.Writer, opts EncodeOptions) (*Encoder, error) {
	e := &Encoder{w: w, opts: opts, db: -1, buf: make([]byte, 0, encoderFlushAt+4<<10)}
	b := fmt.Appendf(e.buf, "REDIS%04d", Version)
	for _, a := range opts.Aux {
		b = append(b, opAux)
		b = appendStr(b, a.Key, false)
		b = appendStr(b, a.Value, false)
	}
	for _, f := range opts.Functions {
		b = append(b, opFunction2)
		b = appendStr(b, f, opts.Compress)
	}
	e.buf = b
	e.maybeFlush()
	return e, e.err
}

// maybeFlush writes the buffer out once it holds encoderFlushAt bytes.
func (e *Encoder) maybeFlush() {
	if len(e.buf) >= encoderFlushAt {
		e.flush()
	}
}

// flush checksums and writes out the buffer.
func (e *Encoder) flush() {
	if e.err != nil || len(e.buf) == 0 {
		return
	}
	if e.opts.Checksum {
		e.crc = CRC64(e.crc, e.buf)
	}
	_, e.err = e.w.Write(e.buf)
	if cap(e.buf) > 4*encoderFlushAt {
		e.buf = make([]byte, 0, encoderFlushAt+4<<10) // after a huge value
	} else {
		e.buf = e.buf[:0]
	}
}

// SetDBSizes records the RESIZEDB hint written with the next SELECTDB of
// db: its number of keys and of keys with a TTL.
func (e *Encoder) SetDBSizes(db int, keys, expires int) {
	if e.sizes == nil {
		e.sizes = map[int][2]int{}
	}
	e.sizes[db] = [2]int{keys, expires}
}

// WriteItem writes one key (rdbSaveKeyValuePair), preceded by SELECTDB
// (and RESIZEDB when known) when its database differs from the previous
// item's. Empty aggregates are not written (Redis never holds one).
func (e *Encoder) WriteItem(it keyspace.Item) error {
	if e.err != nil {
		return e.err
	}
	if e.closed {
		return fmt.Errorf("rdb: WriteItem after Finish")
	}
	if isEmpty(it.Value) {
		return nil
	}
	b := e.buf
	start, prevDB := len(b), e.db
	if it.DB != e.db {
		b = append(b, opSelectDB)
		b = appendLen(b, uint64(it.DB))
		if sz, ok := e.sizes[it.DB]; ok {
			b = append(b, opResizeDB)
			b = appendLen(b, uint64(sz[0]))
			b = appendLen(b, uint64(sz[1]))
		}
		e.db = it.DB
	}
	if it.ExpireAt != 0 {
		b = append(b, opExpireMS)
		b = binary.LittleEndian.AppendUint64(b, uint64(it.ExpireAt))
	}
	if e.opts.LRU {
		idle := (e.opts.Now - it.LastAccess) / 1000
		if idle < 0 {
			idle = 0
		}
		b = append(b, opIdle)
		b = appendLen(b, uint64(idle))
	}
	if e.opts.LFU {
		b = append(b, opFreq, lfuDecayed(it.Freq, it.LastAccess, e.opts.Now, e.opts.LFUDecayTime))
	}
	typePos := len(b)
	b = append(b, 0)
	b = appendStr(b, it.Key, e.opts.Compress)
	var t byte
	var err error
	b, t, err = appendObject(b, it.Value, e.opts.Compress)
	if err != nil {
		e.buf, e.db = b[:start], prevDB
		return err
	}
	b[typePos] = t
	e.buf = b
	e.maybeFlush()
	return e.err
}

// Finish writes EOF and the checksum (0 without Checksum) and flushes. It
// does not close the writer.
func (e *Encoder) Finish() error {
	if e.closed {
		return e.err
	}
	e.closed = true
	e.buf = append(e.buf, opEOF)
	if e.opts.Checksum {
		e.crc = CRC64(e.crc, e.buf)
	}
	e.buf = binary.LittleEndian.AppendUint64(e.buf, e.crc)
	if e.err == nil {
		_, e.err = e.w.Write(e.buf)
	}
	e.buf = nil
	return e.err
}

// isEmpty reports an aggregate without elements (Redis deletes the key
// instead, and its loader skips one).
func isEmpty(v keyspace.Value) bool {
	switch x := v.(type) {
	case *keyspace.List:
		return x.Len() == 0
	case *keyspace.Set:
		return x.Len() == 0
	case *keyspace.Hash:
		return x.Len() == 0
	case *keyspace.ZSet:
		return x.Len() == 0
	}
	return false
}

// ObjectType is rdbSaveObjectType: the RDB type byte Redis 7.0 writes for
// v.
func ObjectType(v keyspace.Value) (byte, error) {
	switch x := v.(type) {
	case *keyspace.String:
		return TypeString, nil
	case *keyspace.List:
		return TypeListQuicklist2, nil
	case *keyspace.Set:
		if x.IsIntset() {
			return TypeSetIntset, nil
		}
		return TypeSet, nil
	case *keyspace.Hash:
		if x.Encoding() == keyspace.EncodingListpack {
			return TypeHashListpack, nil
		}
		return TypeHash, nil
	case *keyspace.ZSet:
		if x.IsListpack() {
			return TypeZSetListpack, nil
		}
		return TypeZSet2, nil
	case *keyspace.Stream:
		return TypeStreamListpacks2, nil
	}
	return 0, fmt.Errorf("rdb: cannot encode a value of type %v", v.Type())
}

// appendObject is rdbSaveObject: it appends v's encoding and returns its
// type byte.
func appendObject(b []byte, v keyspace.Value, compress bool) ([]byte, byte, error) {
	t, err := ObjectType(v)
	if err != nil {
		return b, 0, err
	}
	switch x := v.(type) {
	case *keyspace.String:
		b = appendString(b, x.Bytes(), compress)
	case *keyspace.List:
		b = appendQuicklist(b, x, compress)
	case *keyspace.Set:
		if x.IsIntset() {
			b = appendString(b, intsetBlob(x), compress)
		} else {
			b = appendLen(b, uint64(x.Len()))
			var tmp []byte
			x.Range(func(m keyspace.Member) bool {
				tmp = m.AppendTo(tmp[:0])
				b = appendString(b, tmp, compress)
				return true
			})
		}
	case *keyspace.Hash:
		if t == TypeHashListpack {
			lp := newListpack()
			x.Range(func(f, v string) bool {
				lp.addStr(f)
				lp.addStr(v)
				return true
			})
			b = appendString(b, lp.finish(), compress)
		} else {
			b = appendLen(b, uint64(x.Len()))
			x.Range(func(f, v string) bool {
				b = appendStr(b, f, compress)
				b = appendStr(b, v, compress)
				return true
			})
		}
	case *keyspace.ZSet:
		if t == TypeZSetListpack {
			lp := newListpack()
			x.ForEach(func(m string, s float64) bool {
				lp.addStr(m)
				if v, ok := double2ll(s); ok {
					lp.addInt(v)
				} else {
					lp.addStr(keyspace.D2String(s))
				}
				return true
			})
			b = appendString(b, lp.finish(), compress)
		} else {
			b = appendLen(b, uint64(x.Len()))
			if x.Len() > 0 {
				x.ByRank(0, x.Len()-1, true, func(m string, s float64) bool {
					b = appendStr(b, m, compress)
					b = binary.LittleEndian.AppendUint64(b, math.Float64bits(s))
					return true
				})
			}
		}
	case *keyspace.Stream:
		b = appendStream(b, x, compress)
	}
	return b, t, nil
}

// lfuDecayed is LFUDecrAndReturn of a counter last decremented at
// lastMs, as of nowMs: one less per decayTime minutes elapsed (minutes
// of the clock, as LFUTimeElapsed), floored at 0.
func lfuDecayed(freq uint8, lastMs, nowMs int64, decayTime int) uint8 {
	if decayTime <= 0 {
		return freq
	}
	elapsed := nowMs/60000 - lastMs/60000
	if elapsed <= 0 {
		return freq
	}
	periods := elapsed / int64(decayTime)
	if periods >= int64(freq) {
		return 0
	}
	return freq - uint8(periods)
}

// intsetBlob is the intset as intset.c lays it out, which is how the Set
// holds it.
func intsetBlob(s *keyspace.Set) []byte { return s.IntsetBlob() }

// appendQuicklist is rdbSaveObject's RDB_TYPE_LIST_QUICKLIST_2: the node
// count, then per node its container and its listpack, or the element of
// a PLAIN node (an element of at least DEBUG QUICKLIST-PACKED-THRESHOLD's
// bytes, 1 GB by default); a node the list holds LZF-compressed
// (list-compress-depth) is written as the LZF blob, as rdbSaveLzfBlob
// writes quicklistGetLzf's.
func appendQuicklist(b []byte, l *keyspace.List, compress bool) []byte {
	type node struct {
		count int
		plain bool
	}
	var nodes []node
	total := 0
	l.NodeCounts(func(c int, plain bool) bool {
		nodes = append(nodes, node{c, plain})
		total += c
		return true
	})
	src := l
	if total != l.Len() || (l.Len() > 0 && len(nodes) == 0) {
		// Should not happen; lay the elements out afresh.
		src = keyspace.NewList(-2)
		for i := 0; i < l.Len(); i++ {
			src.PushBack(l.Index(i))
		}
		nodes = nodes[:0]
		src.NodeCounts(func(c int, plain bool) bool { nodes = append(nodes, node{c, plain}); return true })
	}
	b = appendLen(b, uint64(len(nodes)))
	i := 0
	for k, nd := range nodes {
		var data []byte
		container := containerPacked
		if nd.plain {
			container = containerPlain
			data = src.Index(i)
		} else {
			lp := newListpack()
			for j := i; j < i+nd.count; j++ {
				lp.add(src.Index(j))
			}
			data = lp.finish()
		}
		i += nd.count
		b = appendLen(b, uint64(container))
		if clen, ok := src.NodeCompressed(k); ok {
			out := make([]byte, len(data))
			if n := redisutil.LZFCompress(data, out); n == clen {
				b = appendLZF(b, out[:n], len(data))
				continue
			}
		}
		b = appendString(b, data, compress)
	}
	return b
}

// DumpPayload is createDumpPayload: the type byte, the value as
// rdbSaveObject writes it, the RDB version (2 bytes LE) and the CRC-64 of
// all that (8 bytes LE).
func DumpPayload(v keyspace.Value, compress bool) []byte {
	b, t, err := appendObject([]byte{0}, v, compress)
	if err != nil {
		return nil
	}
	b[0] = t
	b = binary.LittleEndian.AppendUint16(b, Version)
	return binary.LittleEndian.AppendUint64(b, CRC64(0, b))
}
