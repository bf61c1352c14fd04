package keyspace

import (
	"encoding/binary"
	"math"
	"math/bits"
	"unsafe"
)

// The intset encoding of a Set is intset.c's layout in one allocation of
// no pointers: a header of encoding (the element width in bytes, 2, 4 or
// 8: INTSET_ENC_INT16/32/64) and length, both uint32 little-endian, then
// length elements of that width, little-endian, ascending and distinct.
// It is byte for byte the blob an RDB SET_INTSET holds. The width only
// grows (intsetUpgradeAndAdd); a search is a binary search
// (intsetSearch).
//
// The Set keeps only a pointer to the first byte, so that its header is
// one word (8 bytes, shared with the hashtable: Set.p) where a slice and a
// width took 40 (48 with Go's size class). The capacity is not stored: the allocation is always
// intsetAlloc(the bytes in use), the size class Go rounds that up to (see
// intsetAlloc), so a resize that stays within the class writes in place
// and one that crosses a class boundary reallocates, as intsetResize's
// zrealloc does under jemalloc.
//
// An inline intset (SetNew of a new key: valnode.go's newIntsetNode) lives
// in the room of its key node instead, before the key's bytes; the high
// byte of its width word (intsetCapByte, 0 in intset.c's layout, which
// allows only widths 2, 4 and 8) holds the room it has, in bytes. It is
// written in place while it fits there and moves to an allocation of its
// own (a clean header) when it does not, or when its width grows.

const intsetHdr = 8

// intsetCapByte is the header byte holding an inline intset's room.
const intsetCapByte = 3

// goSizeClasses are the Go runtime's small-object size classes
// (internal/runtime/gc/sizeclasses.go, unchanged since Go 1.17): make of
// n bytes takes the first class at least n.
var goSizeClasses = [...]uint16{8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256, 288, 320, 352, 384, 416, 448, 480, 512, 576, 640, 704, 768, 896, 1024, 1152, 1280, 1408, 1536, 1792, 2048, 2304, 2688, 3072, 3200, 3456, 4096, 4864, 5376, 6144, 6528, 6784, 6912, 8192, 9472, 9728, 10240, 10880, 12288, 13568, 14336, 16384, 18432, 19072, 20480, 21760, 24576, 27264, 28672, 32768}

// intsetAlloc is the allocation an intset of used bytes has: the Go size
// class for a small one; above 32 KiB used rounded up to an eighth of
// the power of two below it (so that growing one element at a time
// reallocates about eight times per doubling, not every time). It is
// monotone, so an intset that shrank within its allocation still fits
// in intsetAlloc(used).
func intsetAlloc(used int) int {
	if used <= 32768 {
		lo, hi := 0, len(goSizeClasses)-1
		for lo < hi {
			m := (lo + hi) / 2
			if int(goSizeClasses[m]) >= used {
				hi = m
			} else {
				lo = m + 1
			}
		}
		return int(goSizeClasses[lo])
	}
	step := 1 << (bits.Len(uint(used)) - 4)
	return (used + step - 1) &^ (step - 1)
}

// newIntsetBuf allocates an intset of width and n elements (the header
// written, the elements zero).
func newIntsetBuf(width, n int) *byte {
	used := intsetHdr + width*n
	b := make([]byte, intsetAlloc(used))
	binary.LittleEndian.PutUint32(b, uint32(width))
	binary.LittleEndian.PutUint32(b[4:], uint32(n))
	return &b[0]
}

// isp is the intset's first byte (the set must be an intset).
func (s *Set) isp() *byte { return (*byte)(s.p) }

func (s *Set) isWidth() int { return int(*s.isp()) } // the width word's low byte: 2, 4 or 8
func (s *Set) isLen() int {
	return int(binary.LittleEndian.Uint32(unsafe.Slice(s.isp(), intsetHdr)[4:]))
}

// isInlineCap is the room of an inline intset in bytes, header included;
// 0 for one in an allocation of its own.
func (s *Set) isInlineCap() int { return int(unsafe.Slice(s.isp(), intsetHdr)[intsetCapByte]) }

// isBytes is the intset's bytes in use: header and elements.
func (s *Set) isBytes() []byte {
	return unsafe.Slice(s.isp(), intsetHdr+s.isWidth()*s.isLen())
}

// isElems is the element part of the intset's bytes.
func (s *Set) isElems() []byte { return s.isBytes()[intsetHdr:] }

// intsetGet is _intsetGetEncoded.
func intsetGet(e []byte, w, i int) int64 {
	switch w {
	case 2:
		return int64(int16(binary.LittleEndian.Uint16(e[2*i:])))
	case 4:
		return int64(int32(binary.LittleEndian.Uint32(e[4*i:])))
	}
	return int64(binary.LittleEndian.Uint64(e[8*i:]))
}

// intsetPut is _intsetSet.
func intsetPut(e []byte, w, i int, v int64) {
	switch w {
	case 2:
		binary.LittleEndian.PutUint16(e[2*i:], uint16(v))
	case 4:
		binary.LittleEndian.PutUint32(e[4*i:], uint32(v))
	default:
		binary.LittleEndian.PutUint64(e[8*i:], uint64(v))
	}
}

// isAt is the intset's i-th element.
func (s *Set) isAt(i int) int64 { return intsetGet(s.isElems(), s.isWidth(), i) }

// isSearch is intsetSearch: the position of v and whether it is there
// (where it would be inserted when not).
func (s *Set) isSearch(v int64) (int, bool) {
	w, n := s.isWidth(), s.isLen()
	if intWidth(v) > uint8(w) {
		if v < 0 {
			return 0, false
		}
		return n, false
	}
	e := s.isElems()
	lo, hi := 0, n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		x := intsetGet(e, w, m)
		switch {
		case x == v:
			return m, true
		case x < v:
			lo = m + 1
		default:
			hi = m
		}
	}
	return lo, false
}

// isResize is intsetResize: the intset holds n elements of its width
// (the header's length set, the elements kept up to the smaller count),
// reallocated when its size class changes, or, for an inline intset, when
// it outgrows its room.
func (s *Set) isResize(n int) {
	w, old := s.isWidth(), s.isLen()
	oldUsed, newUsed := intsetHdr+w*old, intsetHdr+w*n
	var move bool
	if c := s.isInlineCap(); c != 0 {
		move = newUsed > c
	} else {
		move = intsetAlloc(newUsed) != intsetAlloc(oldUsed)
	}
	if move {
		p := newIntsetBuf(w, n)
		copy(unsafe.Slice(p, newUsed)[intsetHdr:], unsafe.Slice(s.isp(), min(oldUsed, newUsed))[intsetHdr:])
		s.p = unsafe.Pointer(p)
	}
	binary.LittleEndian.PutUint32(unsafe.Slice(s.isp(), intsetHdr)[4:], uint32(n))
}

// isAdd is intsetAdd: it reports whether v was new.
func (s *Set) isAdd(v int64) bool {
	w, n := s.isWidth(), s.isLen()
	if vw := int(intWidth(v)); vw > w {
		// intsetUpgradeAndAdd: v is below or above every element.
		prepend := 0
		if v < 0 {
			prepend = 1
		}
		if c := s.isInlineCap(); c >= intsetHdr+vw*(n+1) {
			// In place, as intsetUpgradeAndAdd after its resize: from
			// the last element down, each one's new place is at or
			// after its old one.
			b := unsafe.Slice(s.isp(), c)
			e := b[intsetHdr:]
			for i := n - 1; i >= 0; i-- {
				intsetPut(e, vw, i+prepend, intsetGet(e, w, i))
			}
			intsetPut(e, vw, (1-prepend)*n, v)
			b[0] = byte(vw)
			binary.LittleEndian.PutUint32(b[4:], uint32(n+1))
			return true
		}
		p := newIntsetBuf(vw, n+1)
		ne := unsafe.Slice(p, intsetHdr+vw*(n+1))[intsetHdr:]
		oe := s.isElems()
		for i := 0; i < n; i++ {
			intsetPut(ne, vw, i+prepend, intsetGet(oe, w, i))
		}
		if prepend == 1 {
			intsetPut(ne, vw, 0, v)
		} else {
			intsetPut(ne, vw, n, v)
		}
		s.p = unsafe.Pointer(p)
		return true
	}
	i, found := s.isSearch(v)
	if found {
		return false
	}
	s.isResize(n + 1)
	e := s.isElems()
	copy(e[(i+1)*w:], e[i*w:n*w])
	intsetPut(e, w, i, v)
	return true
}

// isRemove is intsetRemove (the width stays): it reports whether v was
// there.
func (s *Set) isRemove(v int64) bool {
	i, found := s.isSearch(v)
	if !found {
		return false
	}
	w, n := s.isWidth(), s.isLen()
	e := s.isElems()
	copy(e[i*w:], e[(i+1)*w:n*w])
	s.isResize(n - 1)
	return true
}

// isDup is a copy of the intset in an allocation of its own.
func (s *Set) isDup() *byte {
	b := s.isBytes()
	p := newIntsetBuf(s.isWidth(), s.isLen())
	copy(unsafe.Slice(p, len(b))[intsetHdr:], b[intsetHdr:]) // a clean header (not an inline one's)
	return p
}

// newIntsetFromInts is an intset of width holding ints as given (the
// caller guarantees the width fits them; checks and tests may hand it
// anything).
func newIntsetFromInts(ints []int64, width int) *byte {
	p := newIntsetBuf(width, len(ints))
	e := unsafe.Slice(p, intsetHdr+width*len(ints))[intsetHdr:]
	for i, v := range ints {
		intsetPut(e, width, i, v)
	}
	return p
}

// intWidth is _intsetValueEncoding.
func intWidth(v int64) uint8 {
	switch {
	case v < math.MinInt32 || v > math.MaxInt32:
		return 8
	case v < math.MinInt16 || v > math.MaxInt16:
		return 4
	}
	return 2
}
