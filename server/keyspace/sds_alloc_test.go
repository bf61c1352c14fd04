package keyspace

import "testing"

// The sds allocations behind redis-server 7.0.15's MEMORY USAGE of
// HyperLogLog values (StringSized).
func TestSdsAllocHLL(t *testing.T) {
	// createHLLObject: sdsnewlen(18), an sdshdr5 (no spare room): 32 bytes.
	if a := SdsNewAlloc(18); a != 18 || SdsAllocSize(a) != 32 {
		t.Fatalf("sdsnewlen(18): alloc %d, size %d", a, SdsAllocSize(a))
	}
	// The first PFADD: sdsMakeRoomFor(3) -> (18+3)*2 = 42 bytes asked,
	// sdshdr8, a 48-byte block (MEMORY USAGE 96 with the key).
	a := SdsMakeRoomFor(18, 18, 3)
	if a != 44 || SdsAllocSize(a) != 48 {
		t.Fatalf("first growth: alloc %d, size %d", a, SdsAllocSize(a))
	}
	if SdsMakeRoomFor(41, 44, 3) != 44 || SdsMakeRoomFor(42, 44, 3) == 44 {
		t.Fatal("growth only when fewer than 3 bytes are free")
	}
	// The dense form: sdsnewlen(12304), sdshdr16, a 14336-byte block.
	if a := SdsNewAlloc(12304); SdsAllocSize(a) != 14336 {
		t.Fatalf("dense: alloc %d, size %d", a, SdsAllocSize(a))
	}
	s := NewString(make([]byte, 21, 45), StringSized)
	if s.Size(0) != RobjSize+48 || s.Encoding() != EncodingRaw {
		t.Fatalf("StringSized: size %d, encoding %v", s.Size(0), s.Encoding())
	}
	d := s.Dup().(*String)
	if cap(d.Bytes()) != 45 || d.Size(0) != s.Size(0) {
		t.Fatalf("Dup: cap %d", cap(d.Bytes()))
	}
}
