package lua

import (
	"math"
	"unsafe"
)

// iface is an internal representation of the go-interface.
type iface struct {
	itab unsafe.Pointer
	word unsafe.Pointer
}

const preloadLimit LNumber = 128

var preloads [int(preloadLimit)]LValue

// numberItab is the itab of an LNumber held in an LValue (Vigil: the
// allocator makes its interfaces on the stack from it).
var numberItab unsafe.Pointer

// stringItab is the itab of an LString held in an LValue (BoxStrings).
var stringItab unsafe.Pointer

func init() {
	for i := 0; i < int(preloadLimit); i++ {
		preloads[i] = LNumber(i)
	}
	var v LValue = LNumber(0)
	numberItab = (*iface)(unsafe.Pointer(&v)).itab
	var sv LValue = LString("")
	stringItab = (*iface)(unsafe.Pointer(&sv)).itab
}

// BoxStrings (Vigil) sets vals[idx[i]] to LString(ss[i]), the strings
// held in one block where a conversion each makes a heap object per
// string (the elements of a reply converted for a script).
func BoxStrings(vals []LValue, idx []int32, ss []string) {
	block := make([]LString, len(ss))
	for i, s := range ss {
		block[i] = LString(s)
		vals[idx[i]] = ifaceAt(stringItab, unsafe.Pointer(&block[i]))
	}
}

// allocChunk is how many numbers an allocator's block holds (Vigil:
// upstream's 32 made a block allocation every 32 boxed numbers).
const allocChunk = 256

// allocator is a fast bulk memory allocator for the LValue.
type allocator struct {
	fptrs []float64
}

func newAllocator(size int) *allocator {
	return &allocator{}
}

// LNumber2I takes a number value and returns an interface LValue representing the same number.
// Converting an LNumber to a LValue naively, by doing:
// `var val LValue = myLNumber`
// will result in an individual heap alloc of 8 bytes for the float value. LNumber2I amortizes the cost and memory
// overhead of these allocs by allocating blocks of floats instead.
// The downside of this is that all of the floats on a given block have to become eligible for gc before the block
// as a whole can be gc-ed.
//
// Vigil: the interface is assembled in a local (upstream wrote the
// pointer into a scratch interface on the heap, a write barrier per
// number while the collector runs), blocks hold allocChunk numbers.
func (al *allocator) LNumber2I(v LNumber) LValue {
	// first check for shared preloaded numbers (Vigil: not for -0, which
	// upstream gave the preloaded +0: Lua 5.1 keeps -0's sign, "-0")
	if v >= 0 && v < preloadLimit {
		if r, ok := preloaded(v); ok {
			return r
		}
	}

	// check if we need a new alloc page
	n := len(al.fptrs)
	if n == cap(al.fptrs) {
		al.newBlock()
		n = 0
	}
	al.fptrs = al.fptrs[:n+1]
	fptr := &al.fptrs[n]
	*fptr = float64(v)
	return boxAt(fptr)
}

// preloaded is the preloaded box of v, an integer from 0 to 127 (not -0).
func preloaded(v LNumber) (LValue, bool) {
	if i := int64(v); LNumber(i) == v && math.Float64bits(float64(v))>>63 == 0 {
		return preloads[i], true
	}
	return nil, false
}

func (al *allocator) newBlock() {
	al.fptrs = make([]float64, 0, allocChunk)
}
