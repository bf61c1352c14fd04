package hll

import (
	"encoding/binary"
	"math"
	"strconv"

	"github.com/vigil-kv/vigil/server/keyspace"
)

// Parameters of hyperloglog.c (HLL_P, HLL_Q, ...).
const (
	P           = 14
	Q           = 64 - P
	Registers   = 1 << P
	pMask       = Registers - 1
	bits        = 6
	RegisterMax = 1<<bits - 1
	HdrSize     = 16
	DenseSize   = HdrSize + (Registers*bits+7)/8

	EncDense  = 0 // HLL_DENSE
	EncSparse = 1 // HLL_SPARSE
	maxEnc    = 1 // HLL_MAX_ENCODING

	sparseValMaxValue = 32
	sparseValMaxLen   = 4
	sparseZeroMaxLen  = 64
	sparseXZeroMaxLen = 16384

	alphaInf = 0.721347520444481703680 // 0.5/ln(2)

	// Seed is the MurmurHash64A seed hllPatLen uses.
	Seed = 0xadc83b19
)

// Valid is isHLLObjectOrReply's test of a string: at least a header, the
// "HYLL" magic, a known encoding, and exactly DenseSize bytes when dense.
func Valid(b []byte) bool {
	if len(b) < HdrSize || b[0] != 'H' || b[1] != 'Y' || b[2] != 'L' || b[3] != 'L' {
		return false
	}
	if b[4] > maxEnc {
		return false
	}
	return b[4] != EncDense || len(b) == DenseSize
}

// Encoding is the header's encoding byte (EncDense or EncSparse) of a
// Valid value.
func Encoding(b []byte) byte { return b[4] }

// New is createHLLObject: an empty sparse HLL (XZERO:16384), 18 bytes.
func New() []byte {
	n := (Registers + sparseXZeroMaxLen - 1) / sparseXZeroMaxLen
	b := NewSds(HdrSize + 2*n)
	copy(b, "HYLL")
	b[4] = EncSparse
	p := HdrSize
	for aux := Registers; aux > 0; {
		x := min(aux, sparseXZeroMaxLen)
		setXZero(b[p:], x)
		p += 2
		aux -= x
	}
	return b
}

// NewSds is sdsnewlen(NULL, n): n zero bytes, with the capacity recording
// the sds alloc (cap-1, see keyspace.StringSized) and the terminator.
func NewSds(n int) []byte {
	return make([]byte, n, keyspace.SdsNewAlloc(uint64(n))+1)
}

// makeRoom is sdsMakeRoomFor(s, add): b with at least add spare bytes
// past its length, reallocated (terminator kept) with Redis's greedy
// growth when it has fewer.
func makeRoom(b []byte, add int) []byte {
	alloc := uint64(max(cap(b)-1, len(b)))
	na := keyspace.SdsMakeRoomFor(uint64(len(b)), alloc, uint64(add))
	if na == alloc {
		return b
	}
	nb := make([]byte, len(b), na+1)
	copy(nb, b)
	nb[:len(b)+1][len(b)] = at(b, len(b))
	return nb
}

// MurmurHash64A is Redis's endian-neutral MurmurHash2 64-bit.
func MurmurHash64A(key []byte, seed uint32) uint64 {
	const m = 0xc6a4a7935bd1e995
	const r = 47
	h := uint64(seed) ^ (uint64(len(key)) * m)
	for len(key) >= 8 {
		k := binary.LittleEndian.Uint64(key)
		k *= m
		k ^= k >> r
		k *= m
		h ^= k
		h *= m
		key = key[8:]
	}
	if n := len(key); n > 0 {
		for i := n - 1; i >= 0; i-- {
			h ^= uint64(key[i]) << (8 * uint(i))
		}
		h *= m
	}
	h ^= h >> r
	h *= m
	h ^= h >> r
	return h
}

// PatLen is hllPatLen: the register an element hashes to and the length of
// the 000..1 pattern of the rest of its hash (1..Q+1).
func PatLen(ele []byte) (index int, count uint8) {
	hash := MurmurHash64A(ele, Seed)
	index = int(hash & pMask)
	hash >>= P
	hash |= 1 << Q
	count = 1
	for bit := uint64(1); hash&bit == 0; bit <<= 1 {
		count++
	}
	return index, count
}

// --- header -------------------------------------------------------------------

// CachedCard returns the cached cardinality and whether it is valid
// (HLL_VALID_CACHE).
func CachedCard(b []byte) (uint64, bool) {
	return binary.LittleEndian.Uint64(b[8:16]), b[15]&0x80 == 0
}

// SetCard stores card as the cached cardinality.
func SetCard(b []byte, card uint64) { binary.LittleEndian.PutUint64(b[8:16], card) }

// Invalidate marks the cached cardinality stale (HLL_INVALIDATE_CACHE).
func Invalidate(b []byte) { b[15] |= 0x80 }

// --- dense --------------------------------------------------------------------

// at is b[i], where b[len(b)] is the byte after the string: Redis's sds
// NUL terminator, which an XZERO opcode cut by the end of a corrupt value
// reads. It is kept in b's spare capacity (0 when there is none): an
// insertion that splits such a cut opcode leaves its last byte there, as
// hllSparseSet's memcpy does past the new length, and later reads see it.
func at(b []byte, i int) byte {
	if i < len(b) {
		return b[i]
	}
	if i == len(b) && cap(b) > i {
		return b[:i+1][i]
	}
	return 0
}

// setTerm sets the byte after b (see at) to v.
func setTerm(b []byte, v byte) []byte {
	if cap(b) > len(b) {
		b[:len(b)+1][len(b)] = v
		return b
	}
	if v == 0 {
		return b
	}
	return append(b, v)[:len(b)]
}

// denseGet is HLL_DENSE_GET_REGISTER on the registers r.
func denseGet(r []byte, i int) uint8 {
	byt := i * bits / 8
	fb := uint(i * bits & 7)
	b0, b1 := uint(r[byt]), uint(at(r, byt+1))
	return uint8((b0>>fb | b1<<(8-fb)) & RegisterMax)
}

// denseSet is HLL_DENSE_SET_REGISTER.
func denseSet(r []byte, i int, val uint8) {
	byt := i * bits / 8
	fb := uint(i * bits & 7)
	fb8 := 8 - fb
	v := uint(val)
	r[byt] &^= byte(RegisterMax << fb)
	r[byt] |= byte(v << fb)
	if byt+1 < len(r) {
		r[byt+1] &^= byte(RegisterMax >> fb8)
		r[byt+1] |= byte(v >> fb8)
	}
}

// DenseRegister returns register i of a dense HLL.
func DenseRegister(b []byte, i int) uint8 { return denseGet(b[HdrSize:], i) }

// denseSetMax is hllDenseSet: raises register i to count; true if changed.
func denseSetMax(r []byte, i int, count uint8) bool {
	if count > denseGet(r, i) {
		denseSet(r, i, count)
		return true
	}
	return false
}

// --- sparse -------------------------------------------------------------------

func isZero(op byte) bool  { return op&0xc0 == 0 }
func isXZero(op byte) bool { return op&0xc0 == 0x40 }
func isVal(op byte) bool   { return op&0x80 != 0 }
func zeroLen(op byte) int  { return int(op&0x3f) + 1 }
func valValue(op byte) int { return int(op>>2&0x1f) + 1 }
func valLen(op byte) int   { return int(op&3) + 1 }
func xzeroLen(b []byte, p int) int {
	return (int(b[p]&0x3f)<<8 | int(at(b, p+1))) + 1
}
func valOp(val, n int) byte { return byte((val-1)<<2|(n-1)) | 0x80 }
func setXZero(b []byte, n int) {
	n--
	b[0] = byte(n>>8) | 0x40
	b[1] = byte(n)
}

// ToDense is hllSparseToDense: the dense form of a sparse HLL (a dense one
// is returned as is). The header, cached cardinality included, is kept.
// ok is false when the sparse form does not cover exactly Registers.
func ToDense(b []byte) (out []byte, ok bool) {
	if b[4] == EncDense {
		return b, true
	}
	d := NewSds(DenseSize)
	copy(d, b[:HdrSize])
	d[4] = EncDense
	regs := d[HdrSize:]
	idx := 0
	for p := HdrSize; p < len(b); {
		op := b[p]
		switch {
		case isZero(op):
			idx += zeroLen(op)
			p++
		case isXZero(op):
			idx += xzeroLen(b, p)
			p += 2
		default:
			n, v := valLen(op), valValue(op)
			if n+idx > Registers {
				return nil, false
			}
			for ; n > 0; n-- {
				denseSet(regs, idx, uint8(v))
				idx++
			}
			p++
		}
		if idx > Registers {
			// Redis goes on (a later VAL stops it, or the final check):
			// the result is the same failure.
			return nil, false
		}
	}
	return d, idx == Registers
}

// Set is hllSparseSet / hllDenseSet: raises register index to count.
// maxSparse is hll-sparse-max-bytes: a sparse value that would grow past
// it, or needs a value above 32, is promoted to dense. It returns the new
// bytes and 1 if the register changed (the cache is then invalidated for
// a sparse value, as Redis), 0 if not, -1 for a corrupt sparse value
// (the bytes may have been left changed, as Redis leaves them).
func Set(b []byte, index int, count uint8, maxSparse int64) ([]byte, int) {
	if b[4] == EncDense {
		if denseSetMax(b[HdrSize:], index, count) {
			return b, 1
		}
		return b, 0
	}
	if count > sparseValMaxValue {
		return promote(b, index, count)
	}
	// Room for the worst case (an XZERO split into XZERO-VAL-XZERO),
	// taken before anything else as Redis does: it shows in MEMORY USAGE.
	b = makeRoom(b, 3)
	// Step 1: the opcode covering index.
	end := len(b)
	first, span := 0, 0
	prev := -1
	p := HdrSize
	for p < end {
		oplen := 1
		op := b[p]
		switch {
		case isZero(op):
			span = zeroLen(op)
		case isVal(op):
			span = valLen(op)
		default:
			span = xzeroLen(b, p)
			oplen = 2
		}
		if index <= first+span-1 {
			break
		}
		prev = p
		p += oplen
		first += span
	}
	if span == 0 || p >= end {
		return b, -1
	}
	op := b[p]
	oldlen := 1
	next := p + 1
	if isXZero(op) {
		next = p + 2
		oldlen = 2
	}
	if next >= end {
		next = -1
	}
	var runlen int
	zero, xzero, val := false, false, false
	switch {
	case isZero(op):
		zero, runlen = true, zeroLen(op)
	case isXZero(op):
		xzero, runlen = true, xzeroLen(b, p)
	default:
		val, runlen = true, valLen(op)
	}
	// Step 2: the trivial cases A, B and C, else the split (D).
	if val {
		if valValue(op) >= int(count) {
			return b, 0
		}
		if runlen == 1 {
			b[p] = valOp(int(count), 1)
			return mergeAdjacent(b, prev, p), 1
		}
	}
	if zero && runlen == 1 {
		b[p] = valOp(int(count), 1)
		return mergeAdjacent(b, prev, p), 1
	}
	var seq [5]byte
	n := 0
	last := first + span - 1
	if zero || xzero {
		if index != first {
			l := index - first
			if l > sparseZeroMaxLen {
				setXZero(seq[n:], l)
				n += 2
			} else {
				seq[n] = byte(l - 1)
				n++
			}
		}
		seq[n] = valOp(int(count), 1)
		n++
		if index != last {
			l := last - index
			if l > sparseZeroMaxLen {
				setXZero(seq[n:], l)
				n += 2
			} else {
				seq[n] = byte(l - 1)
				n++
			}
		}
	} else {
		cur := valValue(op)
		if index != first {
			seq[n] = valOp(cur, index-first)
			n++
		}
		seq[n] = valOp(int(count), 1)
		n++
		if index != last {
			seq[n] = valOp(cur, last-index)
			n++
		}
	}
	// Step 3: substitute the sequence for the old opcode.
	delta := n - oldlen
	if delta > 0 && int64(len(b)+delta) > maxSparse {
		return promote(b, index, count)
	}
	newLen := len(b) + delta
	if next >= 0 {
		tail := len(b) - next
		if delta > 0 {
			b = append(b, seq[:delta]...)
		}
		copy(b[next+delta:], b[next:next+tail])
		b = setTerm(b[:newLen], 0)
		copy(b[p:], seq[:n])
	} else {
		// The last opcode: when it was an XZERO cut by the end, the
		// new sequence's last byte lands past the new length.
		b = append(b[:p], seq[:n]...)
		cut := newLen < len(b)
		b = b[:newLen]
		if !cut {
			b = setTerm(b, 0)
		}
	}
	return mergeAdjacent(b, prev, p), 1
}

// mergeAdjacent is hllSparseSet's step 4: merges up to 5 opcodes from prev
// (or the first one) where two adjacent VALs of the same value fit in one,
// then invalidates the cached cardinality.
func mergeAdjacent(b []byte, prev, _ int) []byte {
	p := prev
	if p < 0 {
		p = HdrSize
	}
	end := len(b)
	for scan := 5; p < end && scan > 0; {
		scan--
		op := b[p]
		if isXZero(op) {
			p += 2
			continue
		}
		if isZero(op) {
			p++
			continue
		}
		if p+1 < end && isVal(b[p+1]) {
			v1, v2 := valValue(op), valValue(b[p+1])
			if v1 == v2 {
				if l := valLen(op) + valLen(b[p+1]); l <= sparseValMaxLen {
					b[p+1] = valOp(v1, l)
					copy(b[p:], b[p+1:end])
					end--
					b = setTerm(b[:end], 0)
					continue
				}
			}
		}
		p++
	}
	Invalidate(b)
	return b
}

// promote converts to dense and sets the register (hllSparseSet's promote).
func promote(b []byte, index int, count uint8) ([]byte, int) {
	d, ok := ToDense(b)
	if !ok {
		return b, -1
	}
	denseSetMax(d[HdrSize:], index, count)
	return d, 1
}

// Add is hllAdd: adds an element; see Set for the results.
func Add(b, ele []byte, maxSparse int64) ([]byte, int) {
	i, c := PatLen(ele)
	return Set(b, i, c, maxSparse)
}

// --- counting -----------------------------------------------------------------

// sigma and tau are hllSigma and hllTau (Ertl, arXiv:1702.01284).
func sigma(x float64) float64 {
	if x == 1 {
		return math.Inf(1)
	}
	y, z := 1.0, x
	for {
		x *= x
		zp := z
		z += x * y
		y += y
		if zp == z {
			return z
		}
	}
}

func tau(x float64) float64 {
	if x == 0 || x == 1 {
		return 0
	}
	y, z := 1.0, 1-x
	for {
		x = math.Sqrt(x)
		zp := z
		y *= 0.5
		d := 1 - x
		z -= d * d * y
		if zp == z {
			return z / 3
		}
	}
}

// estimate is hllCount's estimator over the register histogram.
func estimate(h *[64]int) uint64 {
	m := float64(Registers)
	z := m * tau((m-float64(h[Q+1]))/m)
	for j := Q; j >= 1; j-- {
		z += float64(h[j])
		z *= 0.5
	}
	z += m * sigma(float64(h[0])/m)
	e := alphaInf * m * m / z
	// llroundl, then the double converted to uint64_t.
	// Out of long long range (or infinite), x86-64's llroundl gives
	// LLONG_MIN, whose conversion to uint64_t is 1<<63.
	if !(e < 1<<63) {
		return 1 << 63
	}
	return uint64(math.Round(e))
}

// Count is hllCount of a Valid dense or sparse value; invalid is true for
// a sparse value that does not cover exactly Registers registers.
func Count(b []byte) (card uint64, invalid bool) {
	var h [64]int
	r := b[HdrSize:]
	if b[4] == EncDense {
		for i := 0; i < Registers; i++ {
			h[denseGet(r, i)]++
		}
	} else {
		idx := 0
		for p := 0; p < len(r); {
			op := r[p]
			switch {
			case isZero(op):
				n := zeroLen(op)
				idx += n
				h[0] += n
				p++
			case isXZero(op):
				n := xzeroLen(r, p)
				idx += n
				h[0] += n
				p += 2
			default:
				n := valLen(op)
				idx += n
				h[valValue(op)] += n
				p++
			}
		}
		if idx != Registers {
			invalid = true
		}
	}
	return estimate(&h), invalid
}

// CountRaw is hllCount of the internal HLL_RAW form: one byte per register.
func CountRaw(regs *[Registers]uint8) uint64 {
	var h [64]int
	for _, v := range regs {
		h[v&63]++
	}
	return estimate(&h)
}

// Merge is hllMerge: max[i] = MAX(max[i], register i) over a Valid value;
// false for a corrupt sparse value.
func Merge(max *[Registers]uint8, b []byte) bool {
	r := b[HdrSize:]
	if b[4] == EncDense {
		for i := range max {
			if v := denseGet(r, i); v > max[i] {
				max[i] = v
			}
		}
		return true
	}
	i := 0
	for p := 0; p < len(r); {
		op := r[p]
		switch {
		case isZero(op):
			i += zeroLen(op)
			p++
		case isXZero(op):
			i += xzeroLen(r, p)
			p += 2
		default:
			n, v := valLen(op), uint8(valValue(op))
			if n+i > Registers {
				return false
			}
			for ; n > 0; n-- {
				if v > max[i] {
					max[i] = v
				}
				i++
			}
			p++
		}
	}
	return i == Registers
}

// Decode is PFDEBUG DECODE of a sparse value: "z:N", "Z:N" and "v:V,N"
// for each opcode, separated by spaces.
func Decode(b []byte) []byte {
	var out []byte
	for p := HdrSize; p < len(b); {
		op := b[p]
		switch {
		case isZero(op):
			out = append(out, "z:"...)
			out = strconv.AppendInt(out, int64(zeroLen(op)), 10)
			p++
		case isXZero(op):
			out = append(out, "Z:"...)
			out = strconv.AppendInt(out, int64(xzeroLen(b, p)), 10)
			p += 2
		default:
			out = append(out, "v:"...)
			out = strconv.AppendInt(out, int64(valValue(op)), 10)
			out = append(out, ',')
			out = strconv.AppendInt(out, int64(valLen(op)), 10)
			p++
		}
		out = append(out, ' ')
	}
	if len(out) > 0 {
		out = out[:len(out)-1]
	}
	return out
}

// SetRegister sets register i of a dense HLL to v (HLL_DENSE_SET_REGISTER;
// PFSELFTEST's accessor check).
func SetRegister(b []byte, i int, v uint8) { denseSet(b[HdrSize:], i, v&RegisterMax) }
