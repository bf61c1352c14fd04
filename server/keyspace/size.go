package keyspace

import "math/bits"

// Allocation sizes of Redis 7.0 on x86_64 built with jemalloc (as Debian's
// redis-server), for Value.Size (object.c's objectComputeSize) and MEMORY
// USAGE.

// Sizes of Redis 7.0's structures and the limits that decide how an sds
// string is allocated.
const (
	// RobjSize is sizeof(robj).
	RobjSize = 16
	// DictEntrySize is sizeof(dictEntry).
	DictEntrySize = 24
	// DictEntryPtrSize is sizeof(dictEntry*), one hash-table slot.
	DictEntryPtrSize = 8

	sdshdr8Size      = 3        // sizeof(struct sdshdr8)
	protoMbulkBigArg = 32 << 10 // PROTO_MBULK_BIG_ARG
	sdsMaxPrealloc   = 1 << 20  // SDS_MAX_PREALLOC
)

// JemallocSize is je_nallocx(n, 0) of jemalloc 5.3 on x86_64 (16-byte
// quantum): the size of the block malloc(n) returns, which is what
// zmalloc_size reports. Classes are 8 and 16, then multiples of 16 up to
// 128, then four per doubling (160, 192, 224, 256, 320, ..., 5120, ...).
func JemallocSize(n uint64) uint64 {
	switch {
	case n <= 8:
		return 8
	case n <= 128:
		return (n + 15) &^ 15
	}
	// For n in (2^k, 2^(k+1)] the spacing is 2^(k-2).
	step := uint64(1) << (bits.Len64(n-1) - 3)
	return (n + step - 1) &^ (step - 1)
}

// sdsHdrSize is the header size of sdsReqType(n): sdshdr5 below 32 bytes,
// then sdshdr8, 16, 32 and 64 (1, 3, 5, 9 and 17 bytes).
func sdsHdrSize(n uint64) uint64 {
	switch {
	case n < 1<<5:
		return 1
	case n < 1<<8:
		return 3
	case n < 1<<16:
		return 5
	case n < 1<<32:
		return 9
	}
	return 17
}

// sdsTypeMaxSize is sdsTypeMaxSize of the type whose header is hdr: the
// largest alloc the header can record.
func sdsTypeMaxSize(hdr uint64) uint64 {
	switch hdr {
	case 1:
		return 1<<5 - 1
	case 3:
		return 1<<8 - 1
	case 5:
		return 1<<16 - 1
	case 9:
		return 1<<32 - 1
	}
	return 1<<64 - 1
}

// SdsNewSize is sdsZmallocSize of sdsnewlen(n): an exact-fit sds (an
// empty one gets an sdshdr8, as sdsnewlen does). A key's allocation.
func SdsNewSize(n uint64) uint64 {
	hdr := sdsHdrSize(n)
	if n == 0 {
		hdr = sdshdr8Size
	}
	return JemallocSize(hdr + n + 1)
}

// sdsArgSize is sdsZmallocSize of a string argument of n bytes as a value
// after tryObjectEncoding (n > 44, so it stays raw). Below
// PROTO_MBULK_BIG_ARG the argument is a createStringObject copy, exact fit.
// A bigger one is the query buffer itself (processMultibulkBuffer's
// big-arg path): n bytes plus the CRLF, sized with
// sdsMakeRoomForNonGreedy, which trimStringObjectIfNeeded shrinks back
// (sdsRemoveFreeSpace, reallocating with the old header) when more than a
// tenth of it is free. Only the alloc field's cap keeps it from shrinking,
// so a value of 65529..65533 bytes keeps its 80 KB block.
func sdsArgSize(n uint64) uint64 {
	if n < protoMbulkBigArg {
		return SdsNewSize(n)
	}
	hdr := sdsHdrSize(n + 2)
	size := JemallocSize(hdr + n + 3)
	alloc := min(size-hdr-1, sdsTypeMaxSize(hdr))
	if alloc-n > n/10 {
		return JemallocSize(hdr + n + 1)
	}
	return size
}

// ArgObjectSize is getStringObjectSdsUsedMemory of a client's string
// argument of n bytes as the command sees it (no tryObjectEncoding, no
// trimming): an embstr up to 44 bytes (its block less the robj), an exact
// sds below PROTO_MBULK_BIG_ARG, else the query buffer it was read into,
// as if sized for it (sdsMakeRoomForNonGreedy of the bytes and the CRLF;
// Redis's may be larger, when the connection's buffer had grown before).
// EVAL and SCRIPT LOAD keep such an object as the cached script's body.
func ArgObjectSize(n uint64) uint64 {
	switch {
	case n <= 44:
		return JemallocSize(RobjSize+sdshdr8Size+n+1) - RobjSize
	case n < protoMbulkBigArg:
		return SdsNewSize(n)
	}
	return JemallocSize(sdsHdrSize(n+2) + n + 3)
}

// sdsGrownSize is sdsZmallocSize of an sds that reached n bytes by one
// greedy sdsMakeRoomFor (APPEND or SETRANGE past the end of a value that
// dbUnshareStringValue had just copied): room for twice the new length
// below SDS_MAX_PREALLOC, 1 MB more above it, never an sdshdr5.
func sdsGrownSize(n uint64) uint64 {
	alloc := n + sdsMaxPrealloc
	if n < sdsMaxPrealloc {
		alloc = 2 * n
	}
	hdr := max(sdsHdrSize(alloc), sdshdr8Size)
	return JemallocSize(hdr + alloc + 1)
}

// SdsAllocSize is sdsZmallocSize of an sds whose alloc field is alloc:
// the block holds the header of sdsReqType(alloc) (an sdshdr5, which has
// no alloc field, below 32 bytes), alloc bytes and the NUL. (An sdshdr8
// with less than 32 bytes, which only a string shorter than 13 bytes
// grown by sdsMakeRoomFor has, is not represented.)
func SdsAllocSize(alloc uint64) uint64 {
	return JemallocSize(sdsHdrSize(alloc) + alloc + 1)
}

// SdsNewAlloc is the alloc field sdsnewlen(n) records: all the usable
// bytes of its block past the header and the NUL (capped by the header
// type), or n for an sdshdr5, which records none.
func SdsNewAlloc(n uint64) uint64 {
	hdr := sdsHdrSize(n)
	if hdr == 1 {
		return n
	}
	return min(JemallocSize(hdr+n+1)-hdr-1, sdsTypeMaxSize(hdr))
}

// SdsMakeRoomFor is the alloc field after sdsMakeRoomFor(s, add) of an
// sds of length n and alloc alloc (greedy: twice the needed length below
// SDS_MAX_PREALLOC, else that much more).
func SdsMakeRoomFor(n, alloc, add uint64) uint64 {
	if alloc-n >= add && alloc >= n {
		return alloc
	}
	need := n + add
	if need < sdsMaxPrealloc {
		need *= 2
	} else {
		need += sdsMaxPrealloc
	}
	hdr := max(sdsHdrSize(need), sdshdr8Size)
	return min(JemallocSize(hdr+need+1)-hdr-1, sdsTypeMaxSize(hdr))
}

// SdsInfo is what DEBUG SDSLEN reports of a key or a string value: the
// sds length, its free bytes (alloc - len) and its zmalloc size.
type SdsInfo struct{ Len, Avail, Zmalloc uint64 }

// KeySdsInfo is DEBUG SDSLEN's key part: dbAdd stores sdsdup(key), an
// sdsnewlen copy.
func KeySdsInfo(n uint64) SdsInfo {
	return SdsInfo{Len: n, Avail: SdsNewAlloc(n) - n, Zmalloc: SdsNewSize(n)}
}

// SdsInfo is DEBUG SDSLEN's value part (val_sds_len, val_sds_avail and
// getStringObjectSdsUsedMemory), as Size models the string's allocation;
// false for an int-encoded string ("Not an sds encoded string.").
func (s *String) SdsInfo() (SdsInfo, bool) {
	n := uint64(s.n)
	switch s.Encoding() {
	case EncodingInt:
		return SdsInfo{}, false
	case EncodingEmbstr: // createEmbeddedStringObject: alloc = len
		return SdsInfo{Len: n, Zmalloc: JemallocSize(RobjSize+sdshdr8Size+n+1) - RobjSize}, true
	}
	size := s.Size(0) - RobjSize
	alloc, hdr := n, uint64(0)
	switch s.Kind() {
	case StringSized:
		alloc = uint64(max(cap(s.Bytes())-1, int(n)))
		hdr = sdsHdrSize(alloc)
	case StringRaw: // one greedy sdsMakeRoomFor (see Size): never an sdshdr5
		need := n + sdsMaxPrealloc
		if n < sdsMaxPrealloc {
			need = 2 * n
		}
		hdr = max(sdsHdrSize(need), sdshdr8Size)
		alloc = min(size-hdr-1, sdsTypeMaxSize(hdr))
	case StringAuto:
		if n < protoMbulkBigArg {
			alloc, hdr = SdsNewAlloc(n), sdsHdrSize(n)
			if alloc-n > n/10 { // trimStringObjectIfNeeded
				alloc = n
			}
			break
		}
		hdr = sdsHdrSize(n + 2) // the query buffer (see sdsArgSize)
		alloc = min(JemallocSize(hdr+n+3)-hdr-1, sdsTypeMaxSize(hdr))
		if alloc-n > n/10 {
			alloc = n // sdsRemoveFreeSpace
		}
	default:
		alloc, hdr = SdsNewAlloc(n), sdsHdrSize(n)
	}
	if hdr == 1 { // an sdshdr5 records no alloc: sdsavail is 0
		alloc = n
	}
	return SdsInfo{Len: n, Avail: alloc - n, Zmalloc: size}, true
}
