package rdb

import (
	"hash/crc64"
	"math/rand/v2"
	"testing"
)

// CRC64Ref is the byte-at-a-time reference (hash/crc64 with the Jones
// table, whose convention inverts before and after).
func CRC64Ref(prev uint64, p []byte) uint64 {
	return ^crc64.Update(^prev, crc64.MakeTable(jonesPoly), p)
}

// TestCRC64Sliced: the slicing-by-8 CRC matches the reference for every
// length and alignment, and continues across splits.
func TestCRC64Sliced(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 5000)
	for i := range buf {
		buf[i] = byte(r.Uint32())
	}
	for n := 0; n < 200; n++ {
		for off := 0; off < 9; off++ {
			p := buf[off : off+n]
			if got, want := CRC64(0, p), CRC64Ref(0, p); got != want {
				t.Fatalf("len %d off %d: %#x, want %#x", n, off, got, want)
			}
		}
	}
	want := CRC64Ref(0, buf)
	for k := 0; k < 100; k++ {
		i := r.IntN(len(buf))
		if got := CRC64(CRC64(0, buf[:i]), buf[i:]); got != want {
			t.Fatalf("split %d: %#x, want %#x", i, got, want)
		}
	}
	c := uint64(0)
	for _, b := range buf {
		c = crc64Byte(c, b)
	}
	if c != want {
		t.Fatalf("crc64Byte: %#x, want %#x", c, want)
	}
}

// crc64Byte is CRC64 of one byte.
func crc64Byte(crc uint64, c byte) uint64 { return crcTab[0][byte(crc)^c] ^ crc>>8 }
