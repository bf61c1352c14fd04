package redisutil

import (
	"encoding/binary"
	"math"
)

// The listpack entry encoding of Redis 7.0's listpack.c, shared by the RDB
// encoder (server/rdb: ziplist/listpack blobs) and the keyspace (the
// quicklist nodes list-compress-depth compresses, and the node sizes
// MEMORY USAGE sums), so that the bytes and the sizes cannot drift apart.

// LPAppendBacklen appends l's lpEncodeBacklen: the entry's length, 7 bits
// a byte, read from the end.
func LPAppendBacklen(b []byte, l int) []byte {
	switch {
	case l <= 127:
		return append(b, byte(l))
	case l < 16383:
		return append(b, byte(l>>7), byte(l&127)|128)
	case l < 2097151:
		return append(b, byte(l>>14), byte((l>>7)&127)|128, byte(l&127)|128)
	case l < 268435455:
		return append(b, byte(l>>21), byte((l>>14)&127)|128, byte((l>>7)&127)|128, byte(l&127)|128)
	}
	return append(b, byte(l>>28), byte((l>>21)&127)|128, byte((l>>14)&127)|128, byte((l>>7)&127)|128, byte(l&127)|128)
}

// LPBacklenSize is the bytes of l's backlen.
func LPBacklenSize(l int) int {
	switch {
	case l <= 127:
		return 1
	case l < 16383:
		return 2
	case l < 2097151:
		return 3
	case l < 268435455:
		return 4
	}
	return 5
}

// lpIntEncSize is the bytes of v's integer encoding (lpEncodeIntegerGetType).
func lpIntEncSize(v int64) int {
	switch {
	case v >= 0 && v <= 127:
		return 1
	case v >= -4096 && v <= 4095:
		return 2
	case v >= -32768 && v <= 32767:
		return 3
	case v >= -8388608 && v <= 8388607:
		return 4
	case v >= math.MinInt32 && v <= math.MaxInt32:
		return 5
	}
	return 9
}

// lpStrEncSize is the bytes of a string entry of n bytes without its backlen.
func lpStrEncSize(n int) int {
	switch {
	case n < 64:
		return 1 + n
	case n < 4096:
		return 2 + n
	}
	return 5 + n
}

// LPAppendInt appends v as an integer entry (lpEncodeIntegerGetType and its
// backlen).
func LPAppendInt(b []byte, v int64) []byte {
	start := len(b)
	switch lpIntEncSize(v) {
	case 1:
		b = append(b, byte(v))
	case 2:
		u := uint64(v) & (1<<13 - 1)
		b = append(b, byte(u>>8)|0xC0, byte(u))
	case 3:
		b = append(b, 0xF1, byte(v), byte(v>>8))
	case 4:
		b = append(b, 0xF2, byte(v), byte(v>>8), byte(v>>16))
	case 5:
		b = append(b, 0xF3, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
	default:
		b = append(b, 0xF4)
		b = binary.LittleEndian.AppendUint64(b, uint64(v))
	}
	return LPAppendBacklen(b, len(b)-start)
}

// LPIntSize is the bytes LPAppendInt(v) appends.
func LPIntSize(v int64) int {
	e := lpIntEncSize(v)
	return e + LPBacklenSize(e)
}

// LPAppendEntry appends s as lpAppend does: an integer entry when
// lpStringToInt64 (string2ll) accepts it, else a string entry with a 1, 2
// or 5 byte header.
func LPAppendEntry(b, s []byte) []byte {
	if v, ok := String2ll(s); ok {
		return LPAppendInt(b, v)
	}
	start := len(b)
	switch n := len(s); {
	case n < 64:
		b = append(b, 0x80|byte(n))
	case n < 4096:
		b = append(b, 0xE0|byte(n>>8), byte(n))
	default:
		b = append(b, 0xF0)
		b = binary.LittleEndian.AppendUint32(b, uint32(n))
	}
	b = append(b, s...)
	return LPAppendBacklen(b, len(b)-start)
}

// LPEntrySize is the bytes LPAppendEntry(b, s) appends.
func LPEntrySize(s []byte) int {
	var e int
	if v, ok := String2ll(s); ok {
		e = lpIntEncSize(v)
	} else {
		e = lpStrEncSize(len(s))
	}
	return e + LPBacklenSize(e)
}
