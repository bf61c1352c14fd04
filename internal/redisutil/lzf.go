package redisutil

import (
	"encoding/binary"
	"errors"
	"math/bits"
	"sync"
)

// lzfTable is LZFCompress's hash table, reused across calls: a slot holds
// the generation of the call that wrote it in its high 32 bits, so a slot
// of an earlier call reads as empty without clearing 512 KB per call.
type lzfTable struct {
	gen   uint32
	slots [lzfHSize]uint64
}

var lzfTables = sync.Pool{New: func() any { return new(lzfTable) }}

// LZF compression as Redis 7.0 ships it (liblzf 3.6, lzf_c.c/lzf_d.c with
// Redis's lzfP.h: HLOG 16, VERY_FAST, 64-bit offsets in the hash table).
// Redis leaves the hash table uninitialised (INIT_HTAB 0); a stale slot can
// only ever propose a match that is then verified byte by byte, so this
// port starts from an empty table: the output is a valid LZF stream, and
// identical to Redis's whenever Redis's stale slots propose nothing (in
// practice, always for data that compresses at all).

const (
	lzfHLog   = 16
	lzfHSize  = 1 << lzfHLog
	lzfMaxLit = 1 << 5
	lzfMaxOff = 1 << 13
	lzfMaxRef = (1 << 8) + (1 << 3)
)

func lzfIdx(h uint32) uint32 {
	return ((h >> (3*8 - lzfHLog)) - h*5) & (lzfHSize - 1)
}

// LZFCompress is lzf_compress: it compresses in into out and returns the
// compressed length, or 0 when the result would not fit in len(out) (the
// caller then stores the data verbatim).
func LZFCompress(in, out []byte) int {
	inLen, outLen := len(in), len(out)
	if inLen == 0 || outLen == 0 {
		return 0
	}
	// Slots hold position+1 of the last occurrence of a 3-byte hash; 0 is
	// "empty" (Redis's bias makes an empty slot point at in[0], which its
	// "ref > in_data" test rejects).
	t := lzfTables.Get().(*lzfTable)
	defer lzfTables.Put(t)
	t.gen++
	if t.gen == 0 { // wrapped: really clear
		clear(t.slots[:])
		t.gen = 1
	}
	gen := uint64(t.gen) << 32
	htab := &t.slots
	ip, op := 0, 0
	lit := 0
	op++ // start run
	frst := func(p int) uint32 { return uint32(in[p])<<8 | uint32(in[p+1]) }
	next := func(v uint32, p int) uint32 { return v<<8 | uint32(in[p+2]) }
	var hval uint32
	if inLen >= 2 {
		hval = frst(ip)
	}
	for ip < inLen-2 {
		hval = next(hval, ip)
		slot := lzfIdx(hval)
		ref := -1
		if e := htab[slot]; e&^(1<<32-1) == gen {
			ref = int(uint32(e)) - 1
		}
		htab[slot] = gen | uint64(ip+1)
		if ref > 0 && ip-ref-1 < lzfMaxOff &&
			in[ref+2] == in[ip+2] && in[ref] == in[ip] && in[ref+1] == in[ip+1] {
			off := ip - ref - 1
			length := 2
			maxlen := inLen - ip - length
			if maxlen > lzfMaxRef {
				maxlen = lzfMaxRef
			}
			if op+3+1 >= outLen {
				notLit := 0
				if lit == 0 {
					notLit = 1
				}
				if op-notLit+3+1 >= outLen {
					return 0
				}
			}
			out[op-lit-1] = byte(lit - 1) // stop run
			if lit == 0 {
				op-- // undo run if length is zero
			}
			length = lzfMatchLen(in, ref, ip, maxlen)
			length -= 2 // length is now #octets - 1
			ip++
			if length < 7 {
				out[op] = byte(off>>8) + byte(length<<5)
				op++
			} else {
				out[op] = byte(off>>8) + 7<<5
				out[op+1] = byte(length - 7)
				op += 2
			}
			out[op] = byte(off)
			op++
			lit = 0
			op++ // start run
			ip += length + 1
			if ip >= inLen-2 {
				break
			}
			// VERY_FAST: hash the last two positions of the match.
			ip -= 2
			hval = frst(ip)
			hval = next(hval, ip)
			htab[lzfIdx(hval)] = gen | uint64(ip+1)
			ip++
			hval = next(hval, ip)
			htab[lzfIdx(hval)] = gen | uint64(ip+1)
			ip++
			continue
		}
		// One more literal byte.
		if op >= outLen {
			return 0
		}
		lit++
		out[op] = in[ip]
		op++
		ip++
		if lit == lzfMaxLit {
			out[op-lit-1] = byte(lit - 1) // stop run
			lit = 0
			op++ // start run
		}
	}
	if op+3 > outLen { // at most 3 bytes can be missing here
		return 0
	}
	for ip < inLen {
		lit++
		out[op] = in[ip]
		op++
		ip++
		if lit == lzfMaxLit {
			out[op-lit-1] = byte(lit - 1)
			lit = 0
			op++
		}
	}
	out[op-lit-1] = byte(lit - 1) // end run
	if lit == 0 {
		op-- // undo run if length is zero
	}
	return op
}

// lzfMatchLen is the length lzf_c.c's loop finds for a match of in[ip:]
// against in[ref:] (ref < ip) whose first three bytes are equal, capped at
// maxlen: with maxlen > 16, sixteen unrolled steps that do not check
// maxlen (so a match may end up to two bytes past it), then a do-while
// that does. It compares eight bytes at a time up to the first mismatch m
// and derives the loop's result from m.
func lzfMatchLen(in []byte, ref, ip, maxlen int) int {
	// The loop reads up to index 18 (when maxlen > 16, which means
	// in[ip+18] exists) or below maxlen.
	limit := maxlen
	if maxlen > 16 {
		limit = max(maxlen, 19)
	}
	m := 3
	for m+8 <= limit {
		x := binary.LittleEndian.Uint64(in[ref+m:]) ^ binary.LittleEndian.Uint64(in[ip+m:])
		if x != 0 {
			m += bits.TrailingZeros64(x) >> 3
			goto found
		}
		m += 8
	}
	for m < limit && in[ref+m] == in[ip+m] {
		m++
	}
found:
	if maxlen > 16 {
		if m <= 18 {
			return m // a mismatch within the unrolled steps
		}
		return max(19, min(m, maxlen))
	}
	return max(3, min(m, maxlen))
}

// ErrLZFCorrupt is returned by LZFDecompress for a malformed stream.
var ErrLZFCorrupt = errors.New("corrupt LZF data")

// LZFDecompress is lzf_decompress: it expands in, which must decompress to
// exactly n bytes.
func LZFDecompress(in []byte, n int) ([]byte, error) {
	// n comes from the peer: it sizes the buffer only as far as in can
	// expand (a 3-byte back reference yields at most 264 bytes).
	if n < 0 || n > 88*len(in) {
		return nil, ErrLZFCorrupt
	}
	out := make([]byte, 0, n)
	for ip := 0; ip < len(in); {
		ctrl := int(in[ip])
		ip++
		if ctrl < 1<<5 { // literal run of ctrl+1 bytes
			ctrl++
			if ip+ctrl > len(in) || len(out)+ctrl > n {
				return nil, ErrLZFCorrupt
			}
			out = append(out, in[ip:ip+ctrl]...)
			ip += ctrl
			continue
		}
		length := ctrl >> 5
		if length == 7 {
			if ip >= len(in) {
				return nil, ErrLZFCorrupt
			}
			length += int(in[ip])
			ip++
		}
		if ip >= len(in) {
			return nil, ErrLZFCorrupt
		}
		ref := len(out) - ((ctrl&0x1f)<<8 | int(in[ip])) - 1
		ip++
		length += 2
		if ref < 0 || len(out)+length > n {
			return nil, ErrLZFCorrupt
		}
		for i := 0; i < length; i++ { // may overlap: byte by byte
			out = append(out, out[ref+i])
		}
	}
	if len(out) != n {
		return nil, ErrLZFCorrupt
	}
	return out, nil
}
