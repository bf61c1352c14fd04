package rdb

// Redis's crc64 (crc64.c over crcspeed.c): CRC-64/Jones, reflected, init
// 0, no final xor, computed with slicing-by-8 tables as crcspeed does.
// hash/crc64 only slices its own ECMA and ISO tables (others byte by byte
// below 2 KB, and rebuild the slicing tables on every call above), so the
// tables are built here once.

import "encoding/binary"

// jonesPoly is the reflected CRC-64/Jones polynomial (crc64.c POLY
// 0xad93d23594c935a9, bit-reversed).
const jonesPoly = 0x95AC9329AC4BC9B5

var crcTab = makeCRCTables()

func makeCRCTables() *[8][256]uint64 {
	t := new([8][256]uint64)
	for i := 0; i < 256; i++ {
		c := uint64(i)
		for k := 0; k < 8; k++ {
			if c&1 == 1 {
				c = c>>1 ^ jonesPoly
			} else {
				c >>= 1
			}
		}
		t[0][i] = c
	}
	for i := 0; i < 256; i++ {
		c := t[0][i]
		for k := 1; k < 8; k++ {
			c = t[0][c&0xff] ^ c>>8
			t[k][i] = c
		}
	}
	return t
}

// CRC64 is Redis's crc64 (CRC-64/Jones, reflected, init 0, no final xor)
// of p continuing prev: the RDB trailer and the DUMP payload checksum.
func CRC64(prev uint64, p []byte) uint64 {
	crc := prev
	t := crcTab
	for len(p) >= 8 {
		crc ^= binary.LittleEndian.Uint64(p)
		crc = t[7][crc&0xff] ^
			t[6][crc>>8&0xff] ^
			t[5][crc>>16&0xff] ^
			t[4][crc>>24&0xff] ^
			t[3][crc>>32&0xff] ^
			t[2][crc>>40&0xff] ^
			t[1][crc>>48&0xff] ^
			t[0][crc>>56]
		p = p[8:]
	}
	for _, c := range p {
		crc = t[0][byte(crc)^c] ^ crc>>8
	}
	return crc
}
