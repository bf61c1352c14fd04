package lua

import (
	"math"
	"math/bits"
	"unsafe"
)

type lValueArraySorter struct {
	L      *LState
	Fn     *LFunction
	Values []LValue
}

func (lv lValueArraySorter) Len() int {
	return len(lv.Values)
}

func (lv lValueArraySorter) Swap(i, j int) {
	lv.Values[i], lv.Values[j] = lv.Values[j], lv.Values[i]
}

func (lv lValueArraySorter) Less(i, j int) bool {
	if lv.Fn != nil {
		lv.L.Push(lv.Fn)
		lv.L.Push(lv.Values[i])
		lv.L.Push(lv.Values[j])
		lv.L.Call(2, 1)
		return LVAsBool(lv.L.reg.Pop())
	}
	return lessThan(lv.L, lv.Values[i], lv.Values[j])
}

// The table below is a port of Lua 5.1.5's ltable.c (MIT License,
// Copyright (C) 1994-2012 Lua.org, PUC-Rio) in place of gopher-lua's
// insertion-ordered maps: an array part sized by computesizes and a node
// part of chained scatter with Brent's variation (mainposition, the free
// pointer searching downward), so that `#t` (luaH_getn) and the order of
// next()/pairs() are those of Lua 5.1 for string, number and boolean keys.
// Keys that Lua hashes by address (tables, functions, userdata, threads)
// hash by their Go address here: a stable order, not a reproducible one,
// as in Lua.

// isNil reports whether v is LNil (a comparison of the type only, where
// v == LNil compares two interfaces).
func isNil(v LValue) bool {
	_, ok := v.(*LNilType)
	return ok
}

// maxBits is ltable.c's MAXBITS: array parts have at most 2^maxBits slots.
const maxBits = 26

type lNode struct {
	key  LValue // Go nil: a free node
	val  LValue
	next int32 // index of the next node of the chain, -1 at its end
}

func newLTable(acap int, hcap int) *LTable {
	if acap < 0 {
		acap = 0
	}
	if hcap < 0 {
		hcap = 0
	}
	tb := &LTable{}
	tb.Metatable = LNil
	if acap != 0 {
		tb.setArrayVector(acap)
	}
	tb.setNodeVector(hcap)
	return tb
}

// luaSHash is the string hash of luaS_newlstr as Redis's deps/lua has it
// (redis-server links its own Lua): every byte is hashed (step 1), where
// Lua 5.1.5 hashes at most 32 of a long string's.
func luaSHash(s string) uint32 {
	h := uint32(len(s))
	for i := len(s) - 1; i >= 0; i-- {
		h ^= (h << 5) + (h >> 2) + uint32(s[i])
	}
	return h
}

// ceilLog2 is ltable.c's ceillog2: ceil(log2(x)) for x >= 1.
func ceilLog2(x int) int {
	return bits.Len(uint(x - 1))
}

// arrayIndex is ltable.c's arrayindex: the integer value of a number key,
// or -1.
func arrayIndex(key LValue) int {
	if n, ok := key.(LNumber); ok {
		f := float64(n)
		if f >= math.MinInt32 && f <= math.MaxInt32 {
			k := int(f)
			if float64(k) == f {
				return k
			}
		}
	}
	return -1
}

func (tb *LTable) sizeNode() int {
	if len(tb.node) == 0 {
		return 1
	}
	return len(tb.node)
}

func hashNumIndex(n float64, size int) int {
	if n == 0 {
		return 0
	}
	b := math.Float64bits(n)
	a := uint32(b) + uint32(b>>32)
	return int(a % uint32((size-1)|1))
}

func hashPointerIndex(p uintptr, size int) int {
	return int(uint32(p) % uint32((size-1)|1))
}

// mainPosition is ltable.c's mainposition, for a table whose node part is
// not empty.
func (tb *LTable) mainPosition(key LValue) int {
	size := len(tb.node)
	switch k := key.(type) {
	case LString:
		return int(luaSHash(string(k)) & uint32(size-1))
	case LNumber:
		return hashNumIndex(float64(k), size)
	case LBool:
		if k {
			return 1 & (size - 1)
		}
		return 0
	case *LTable:
		return hashPointerIndex(uintptr(unsafe.Pointer(k)), size)
	case *LFunction:
		return hashPointerIndex(uintptr(unsafe.Pointer(k)), size)
	case *LUserData:
		return hashPointerIndex(uintptr(unsafe.Pointer(k)), size)
	case *LState:
		return hashPointerIndex(uintptr(unsafe.Pointer(k)), size)
	case LChannel:
		// A channel value is a pointer (no reflect, which would make
		// every key escape).
		return hashPointerIndex(uintptr(*(*unsafe.Pointer)(unsafe.Pointer(&k))), size)
	}
	return 0
}

// findNode returns the index of key's node, or -1.
func (tb *LTable) findNode(key LValue) int {
	if len(tb.node) == 0 {
		return -1
	}
	switch k := key.(type) {
	case LString:
		return tb.findStr(string(k))
	case LNumber:
		return tb.findNum(float64(k))
	}
	for i := int32(tb.mainPosition(key)); i >= 0; i = tb.node[i].next {
		if tb.node[i].key == key {
			return int(i)
		}
	}
	return -1
}

func (tb *LTable) findStr(s string) int {
	if len(tb.node) == 0 {
		return -1
	}
	for i := int32(luaSHash(s) & uint32(len(tb.node)-1)); i >= 0; i = tb.node[i].next {
		if ks, ok := tb.node[i].key.(LString); ok && string(ks) == s {
			return int(i)
		}
	}
	return -1
}

func (tb *LTable) findNum(n float64) int {
	if len(tb.node) == 0 {
		return -1
	}
	for i := int32(hashNumIndex(n, len(tb.node))); i >= 0; i = tb.node[i].next {
		if kn, ok := tb.node[i].key.(LNumber); ok && float64(kn) == n {
			return int(i)
		}
	}
	return -1
}

// setArrayVector is ltable.c's setarrayvector.
func (tb *LTable) setArrayVector(size int) {
	old := len(tb.array)
	if size <= cap(tb.array) {
		tb.array = tb.array[:size]
	} else {
		a := make([]LValue, size)
		copy(a, tb.array)
		tb.array = a
	}
	for i := old; i < size; i++ {
		tb.array[i] = LNil
	}
}

// setNodeVector is ltable.c's setnodevector.
func (tb *LTable) setNodeVector(size int) {
	if size == 0 {
		tb.node = nil
		tb.lastFree = 0
		return
	}
	lsize := ceilLog2(size)
	if lsize > maxBits {
		panic(newApiErrorS(ApiErrorRun, "table overflow"))
	}
	size = 1 << lsize
	tb.node = make([]lNode, size)
	for i := range tb.node {
		tb.node[i].val = LNil
		tb.node[i].next = -1
	}
	tb.lastFree = size
}

// resize is ltable.c's resize.
func (tb *LTable) resize(nasize, nhsize int) {
	oldasize := len(tb.array)
	nold := tb.node
	if nasize > oldasize {
		tb.setArrayVector(nasize)
	}
	tb.setNodeVector(nhsize)
	if nasize < oldasize {
		vanishing := tb.array[nasize:oldasize]
		tb.array = tb.array[:nasize:nasize]
		if tb.border > nasize {
			tb.border = nasize
		}
		for i, v := range vanishing {
			if !isNil(v) {
				tb.setNum(nasize+i+1, v)
			}
		}
		tb.array = append([]LValue(nil), tb.array...)
	}
	for i := len(nold) - 1; i >= 0; i-- {
		if old := &nold[i]; !isNil(old.val) {
			tb.set(old.key, old.val)
		}
	}
	if tb.border < 0 {
		tb.border = tb.findBorder()
	}
}

// findBorder is border for the array part as it is: the length of its
// run of non-nil values, or -1 when a non-nil value follows the run.
func (tb *LTable) findBorder() int {
	b := 0
	for b < len(tb.array) && !isNil(tb.array[b]) {
		b++
	}
	for _, v := range tb.array[b:] {
		if !isNil(v) {
			return -1
		}
	}
	return b
}

// resizeArray is luaH_resizearray.
func (tb *LTable) resizeArray(nasize int) {
	nsize := 0
	if len(tb.node) != 0 {
		nsize = len(tb.node)
	}
	tb.resize(nasize, nsize)
}

// countInt is ltable.c's countint.
func countInt(key LValue, nums *[maxBits + 1]int) int {
	k := arrayIndex(key)
	if 0 < k && k <= 1<<maxBits {
		nums[ceilLog2(k)]++
		return 1
	}
	return 0
}

// numUseArray is ltable.c's numusearray.
func (tb *LTable) numUseArray(nums *[maxBits + 1]int) int {
	ause := 0
	i := 1
	for lg, ttlg := 0, 1; lg <= maxBits; lg, ttlg = lg+1, ttlg*2 {
		lc := 0
		lim := ttlg
		if lim > len(tb.array) {
			lim = len(tb.array)
			if i > lim {
				break
			}
		}
		for ; i <= lim; i++ {
			if !isNil(tb.array[i-1]) {
				lc++
			}
		}
		nums[lg] += lc
		ause += lc
	}
	return ause
}

// computeSizes is ltable.c's computesizes.
func computeSizes(nums *[maxBits + 1]int, narray *int) int {
	a, na, n := 0, 0, 0
	for i, twotoi := 0, 1; twotoi/2 < *narray; i, twotoi = i+1, twotoi*2 {
		if nums[i] > 0 {
			a += nums[i]
			if a > twotoi/2 {
				n = twotoi
				na = a
			}
		}
		if a == *narray {
			break
		}
	}
	*narray = n
	return na
}

// rehash is ltable.c's rehash, ek being the key about to be inserted.
func (tb *LTable) rehash(ek LValue) {
	var nums [maxBits + 1]int
	nasize := tb.numUseArray(&nums)
	totaluse := nasize
	for i := len(tb.node) - 1; i >= 0; i-- {
		if n := &tb.node[i]; !isNil(n.val) {
			nasize += countInt(n.key, &nums)
			totaluse++
		}
	}
	nasize += countInt(ek, &nums)
	totaluse++
	na := computeSizes(&nums, &nasize)
	tb.resize(nasize, totaluse-na)
}

// getFreePos is ltable.c's getfreepos.
func (tb *LTable) getFreePos() int {
	for tb.lastFree > 0 {
		tb.lastFree--
		if tb.node[tb.lastFree].key == nil {
			return tb.lastFree
		}
	}
	return -1
}

// newKey is ltable.c's newkey, and the store into the slot it returns: it
// inserts key, which the table does not hold, with value v.
func (tb *LTable) newKey(key, v LValue) {
	if len(tb.node) == 0 || !tb.place(key, v) {
		tb.rehash(key)
		tb.set(key, v)
	}
}

// place is newkey's insertion into a node part that is not empty: false,
// with nothing changed, when key's main position is taken and no node is
// free (then newkey rehashes).
func (tb *LTable) place(key, v LValue) bool {
	mp := tb.mainPosition(key)
	if !isNil(tb.node[mp].val) {
		n := tb.getFreePos()
		if n < 0 {
			return false
		}
		othern := tb.mainPosition(tb.node[mp].key)
		if othern != mp {
			for int(tb.node[othern].next) != mp {
				othern = int(tb.node[othern].next)
			}
			tb.node[othern].next = int32(n)
			tb.node[n] = tb.node[mp]
			tb.node[mp].next = -1
			tb.node[mp].val = LNil
		} else {
			tb.node[n].next = tb.node[mp].next
			tb.node[mp].next = int32(n)
			mp = n
		}
	}
	tb.node[mp].key = key
	tb.node[mp].val = v
	return true
}

// set is luaH_set and the store of v into the slot (the caller has
// excluded nil and NaN keys).
func (tb *LTable) set(key, v LValue) {
	switch k := key.(type) {
	case LString:
		// key, not k: k would be boxed again (an allocation per key
		// each time rehash moves the nodes)
		tb.setStr(string(k), key, v)
		return
	case LNumber:
		f := float64(k)
		if f >= 1 && f <= float64(len(tb.array)) && f == math.Trunc(f) {
			tb.storeArray(int(f)-1, v)
			return
		}
		if i := tb.findNum(f); i >= 0 {
			tb.node[i].val = v
			return
		}
		tb.newKey(key, v)
		return
	}
	if i := tb.findNode(key); i >= 0 {
		tb.node[i].val = v
		return
	}
	tb.newKey(key, v)
}

// setStr is luaH_setstr and the store (key: s as an LValue, or nil).
func (tb *LTable) setStr(s string, key, v LValue) {
	if i := tb.findStr(s); i >= 0 {
		tb.node[i].val = v
		return
	}
	if key == nil {
		key = LString(s)
	}
	tb.newKey(key, v)
}

// setNum is luaH_setnum and the store.
func (tb *LTable) setNum(k int, v LValue) {
	if uint(k-1) < uint(len(tb.array)) {
		tb.storeArray(k-1, v)
		return
	}
	if i := tb.findNum(float64(k)); i >= 0 {
		tb.node[i].val = v
		return
	}
	tb.newKey(LNumber(k), v)
}

// storeArray stores v in the array part's slot i, keeping border: while
// the array part is a run of non-nil values then only nils, border is
// the run's length (what luaH_getn's binary search answers then, without
// the search); -1 once a store breaks that shape.
func (tb *LTable) storeArray(i int, v LValue) {
	tb.array[i] = v
	if b := tb.border; b >= 0 {
		if isNil(v) {
			if i == b-1 {
				tb.border = b - 1
			} else if i < b-1 {
				tb.border = -1
			}
		} else if i == b {
			tb.border = b + 1
		} else if i > b {
			tb.border = -1
		}
	}
}

// getNum is luaH_getnum.
func (tb *LTable) getNum(k int) LValue {
	if uint(k-1) < uint(len(tb.array)) {
		return tb.array[k-1]
	}
	if i := tb.findNum(float64(k)); i >= 0 {
		return tb.node[i].val
	}
	return LNil
}

// Len returns length of this LTable without using __len: luaH_getn, a
// border of the table as Lua 5.1 finds it.
func (tb *LTable) Len() int {
	j := len(tb.array)
	if j > 0 && isNil(tb.array[j-1]) {
		if tb.border >= 0 {
			return tb.border // the only border of the array part
		}
		i := 0
		for j-i > 1 {
			m := (i + j) / 2
			if isNil(tb.array[m-1]) {
				j = m
			} else {
				i = m
			}
		}
		return i
	}
	if len(tb.node) == 0 {
		return j
	}
	return tb.unboundSearch(j)
}

// unboundSearch is ltable.c's unbound_search.
func (tb *LTable) unboundSearch(j int) int {
	i := j
	j++
	for !isNil(tb.getNum(j)) {
		i = j
		j *= 2
		if j > math.MaxInt32 {
			i = 1
			for !isNil(tb.getNum(i)) {
				i++
			}
			return i - 1
		}
	}
	for j-i > 1 {
		m := (i + j) / 2
		if isNil(tb.getNum(m)) {
			j = m
		} else {
			i = m
		}
	}
	return i
}

// Append appends a given LValue to this LTable (t[#t+1] = value).
func (tb *LTable) Append(value LValue) {
	if isNil(value) {
		return
	}
	tb.setNum(tb.Len()+1, value)
}

// Insert inserts a given LValue at position `i` in this table, as
// table.insert does.
func (tb *LTable) Insert(i int, value LValue) {
	e := tb.Len() + 1
	if i > e {
		e = i
	}
	for j := e; j > i; j-- {
		tb.setNum(j, tb.getNum(j-1))
	}
	tb.setNum(i, value)
}

// MaxN returns the largest positive numerical index of the table.
func (tb *LTable) MaxN() int {
	max := 0
	tb.ForEach(func(k, _ LValue) {
		if n, ok := k.(LNumber); ok && float64(n) > float64(max) {
			max = int(n)
		}
	})
	return max
}

// Remove removes from this table the element at a given position, as
// table.remove does (pos < 0: the last element).
func (tb *LTable) Remove(pos int) LValue {
	e := tb.Len()
	if pos < 0 {
		pos = e
	}
	if e == 0 || pos < 1 || pos > e {
		return LNil
	}
	v := tb.getNum(pos)
	for ; pos < e; pos++ {
		tb.setNum(pos, tb.getNum(pos+1))
	}
	tb.setNum(e, LNil)
	return v
}

func (tb *LTable) rawSetValid(key LValue) bool {
	switch k := key.(type) {
	case *LNilType:
		return false
	case LNumber:
		return !math.IsNaN(float64(k))
	}
	return key != nil
}

// RawSet sets a given LValue to a given index without the __newindex metamethod.
// It is recommended to use `RawSetString` or `RawSetInt` for performance
// if you already know the given LValue is a string or number.
func (tb *LTable) RawSet(key LValue, value LValue) {
	if !tb.rawSetValid(key) {
		return
	}
	tb.set(key, value)
}

// RawSetInt sets a given LValue at a position `key` without the __newindex metamethod.
func (tb *LTable) RawSetInt(key int, value LValue) {
	tb.setNum(key, value)
}

// RawSetString sets a given LValue to a given string index without the __newindex metamethod.
func (tb *LTable) RawSetString(key string, value LValue) {
	tb.setStr(key, nil, value)
}

// RawSetH sets a given LValue to a given index without the __newindex metamethod.
func (tb *LTable) RawSetH(key LValue, value LValue) {
	tb.RawSet(key, value)
}

// RawGet returns an LValue associated with a given key without __index metamethod.
func (tb *LTable) RawGet(key LValue) LValue {
	switch k := key.(type) {
	case LString:
		return tb.RawGetString(string(k))
	case LNumber:
		f := float64(k)
		if f >= 1 && f <= float64(len(tb.array)) && f == math.Trunc(f) {
			return tb.array[int(f)-1]
		}
		if i := tb.findNum(f); i >= 0 {
			return tb.node[i].val
		}
		return LNil
	case *LNilType:
		return LNil
	}
	if i := tb.findNode(key); i >= 0 {
		return tb.node[i].val
	}
	return LNil
}

// RawGetInt returns an LValue at position `key` without __index metamethod.
func (tb *LTable) RawGetInt(key int) LValue {
	return tb.getNum(key)
}

// RawGetH returns an LValue associated with a given key without __index metamethod.
func (tb *LTable) RawGetH(key LValue) LValue {
	return tb.RawGet(key)
}

// RawGetString returns an LValue associated with a given key without __index metamethod.
func (tb *LTable) RawGetString(key string) LValue {
	if i := tb.findStr(key); i >= 0 {
		return tb.node[i].val
	}
	return LNil
}

// ForEach iterates over this table of elements, yielding each in turn to
// a given function, in the order of next().
func (tb *LTable) ForEach(cb func(LValue, LValue)) {
	for i := 0; i < len(tb.array); i++ {
		if v := tb.array[i]; !isNil(v) {
			cb(LNumber(i+1), v)
		}
	}
	for i := 0; i < len(tb.node); i++ {
		if n := tb.node[i]; !isNil(n.val) {
			cb(n.key, n.val)
		}
	}
}

// findIndex is ltable.c's findindex: the traversal position of key (-1
// for nil), false if the table does not hold key.
func (tb *LTable) findIndex(key LValue) (int, bool) {
	if isNil(key) {
		return -1, true
	}
	if i := arrayIndex(key); 0 < i && i <= len(tb.array) {
		return i - 1, true
	}
	if i := tb.findNode(key); i >= 0 {
		return i + len(tb.array), true
	}
	return 0, false
}

// This function is equivalent to lua_next ( http://www.lua.org/manual/5.1/manual.html#lua_next ).
// It returns LNil, LNil at the end of the table and for a key the table
// does not hold (see NextKey).
func (tb *LTable) Next(key LValue) (LValue, LValue) {
	k, v, _ := tb.NextKey(key)
	return k, v
}

// nextAt is NextKey for pairs' iterator (Vigil): at is where the step
// before found key (its traversal index, from the at nextAt returned),
// taken when the node there still holds key, so that a traversal does not
// look every key up again; the returned at is the new key's.
func (tb *LTable) nextAt(key LValue, at int) (LValue, LValue, int) {
	var i int
	if j := at - len(tb.array); j >= 0 && j < len(tb.node) && !isNil(key) && tb.node[j].key == key {
		i = at
	} else {
		var ok bool
		if i, ok = tb.findIndex(key); !ok {
			return LNil, LNil, 0
		}
	}
	for i++; i < len(tb.array); i++ {
		if v := tb.array[i]; !isNil(v) {
			return LNumber(i + 1), v, i
		}
	}
	for j := i - len(tb.array); j < len(tb.node); j++ {
		if n := &tb.node[j]; !isNil(n.val) {
			return n.key, n.val, j + len(tb.array)
		}
	}
	return LNil, LNil, 0
}

// NextKey is luaH_next: the key and value after key in the traversal
// order (LNil, LNil at the end); ok is false when the table does not hold
// key ("invalid key to 'next'").
func (tb *LTable) NextKey(key LValue) (LValue, LValue, bool) {
	i, ok := tb.findIndex(key)
	if !ok {
		return LNil, LNil, false
	}
	for i++; i < len(tb.array); i++ {
		if v := tb.array[i]; !isNil(v) {
			return LNumber(i + 1), v, true
		}
	}
	for i -= len(tb.array); i < len(tb.node); i++ {
		if n := &tb.node[i]; !isNil(n.val) {
			return n.key, n.val, true
		}
	}
	return LNil, LNil, true
}

// SetList stores vals at keys offset+1.. as OP_SETLIST does: the array
// part first grows to hold them all at once.
func (tb *LTable) setList(offset int, vals []LValue) {
	last := offset + len(vals)
	if last > len(tb.array) {
		tb.resizeArray(last)
	}
	for n := len(vals); n > 0; n-- {
		tb.setNum(last, vals[n-1])
		last--
	}
}

// Sizes returns the sizes of the array part and of the node part (0 for
// none).
func (tb *LTable) Sizes() (array, node int) {
	return len(tb.array), len(tb.node)
}

// NewArrayTable (Vigil) is the table lua_newtable then lua_rawseti(t, i,
// vals[i-1]) for i = 1..n build, the values not nil: each rehash on the
// way (at 1, 2, 3, 5, 9... elements) sizes the array part to the next
// power of two and leaves no node part, so the array part is the power
// of two at or above n. Only that table is allocated.
func NewArrayTable(vals []LValue) *LTable {
	tb := &LTable{Metatable: LNil}
	n := len(vals)
	if n > 1<<maxBits {
		// past MAXBITS keys go to the node part: set them one by one
		for i, v := range vals {
			tb.setNum(i+1, v)
		}
		return tb
	}
	if n > 0 {
		tb.array = make([]LValue, 1<<ceilLog2(n))
		copy(tb.array, vals)
		for i := n; i < len(tb.array); i++ {
			tb.array[i] = LNil
		}
		tb.border = n
	}
	return tb
}

// StringTableBuilder (Vigil) builds the table lua_newtable then
// lua_rawset(t, keys[i], vals[i]) in order build, the keys strings and the
// values not nil: the same rehashes (the node part 1, 2, 4... nodes long,
// the old nodes reinserted from the last one down, then the new key), so
// the same layout and traversal order, but in two scratch node vectors it
// keeps between builds, so that only the final table is allocated.
type StringTableBuilder struct {
	tb   LTable
	bufs [2][]lNode
	cur  int
	// the layouts of the key sequences seen lately (a JSON array of
	// objects of the same keys builds the same layout again and again)
	shapes [16]tableShape
}

// tableShape is the layout the keys build: for each slot of the node
// part, which key's string and which (the last) value it holds, and its
// chain. slots is nil until the keys have been built twice.
type tableShape struct {
	keys     []string
	slots    []shapeSlot
	lastFree int
}

type shapeSlot struct {
	key, val, next int32 // key -1: a free slot
}

const (
	shapeMaxKeys   = 32
	shapeMaxKeyLen = 64
)

// shape is the cache entry for keys: nil when it is not theirs (and then
// it is made theirs, to be recorded next time).
func (b *StringTableBuilder) shape(keys []LValue) *tableShape {
	first := string(keys[0].(LString))
	h := len(keys)*7 + len(first)
	if len(first) > 0 {
		h += int(first[0])
	}
	sh := &b.shapes[h%len(b.shapes)]
	if len(sh.keys) == len(keys) {
		same := true
		for i, k := range keys {
			if string(k.(LString)) != sh.keys[i] {
				same = false
				break
			}
		}
		if same {
			return sh
		}
	}
	sh.keys, sh.slots = sh.keys[:0], nil
	for _, k := range keys {
		if len(k.(LString)) > shapeMaxKeyLen {
			sh.keys = sh.keys[:0]
			return nil
		}
		sh.keys = append(sh.keys, string(k.(LString)))
	}
	return nil
}

// Build returns the table (see StringTableBuilder).
func (b *StringTableBuilder) Build(keys, vals []LValue) *LTable {
	var sh *tableShape
	if len(keys) > 0 && len(keys) <= shapeMaxKeys {
		if sh = b.shape(keys); sh != nil && sh.slots != nil {
			t := &LTable{Metatable: LNil, node: make([]lNode, len(sh.slots)), lastFree: sh.lastFree}
			for j, s := range sh.slots {
				if s.key < 0 {
					t.node[j] = lNode{val: LNil, next: -1}
				} else {
					t.node[j] = lNode{key: keys[s.key], val: vals[s.val], next: s.next}
				}
			}
			return t
		}
	}
	tb := &b.tb
	tb.node, tb.lastFree = nil, 0
	for i, k := range keys {
		if j := tb.findStr(string(k.(LString))); j >= 0 {
			tb.node[j].val = vals[i]
			continue
		}
		if len(tb.node) == 0 || !tb.place(k, vals[i]) {
			b.grow()
			tb.place(k, vals[i])
		}
	}
	t := &LTable{Metatable: LNil}
	if len(tb.node) > 0 {
		t.node = make([]lNode, len(tb.node))
		copy(t.node, tb.node)
		t.lastFree = tb.lastFree
	}
	if sh != nil {
		// seen twice: record the layout
		sh.slots = make([]shapeSlot, len(tb.node))
		for j := range sh.slots {
			sh.slots[j] = shapeSlot{key: -1, val: -1, next: tb.node[j].next}
		}
		for i, k := range keys {
			s := &sh.slots[tb.findStr(string(k.(LString)))]
			if s.key < 0 {
				s.key = int32(i)
			}
			s.val = int32(i)
		}
		sh.lastFree = tb.lastFree
	}
	// drop the scratch's references (this build used at most the final
	// size of each vector)
	for i := range b.bufs {
		clear(b.bufs[i][:min(len(tb.node), cap(b.bufs[i]))])
	}
	tb.node = nil
	return t
}

// grow is rehash and resize for a table of string keys only (no array
// part): a node part for the keys and the one about to be inserted,
// taken from the scratch vector not in use.
func (b *StringTableBuilder) grow() {
	tb := &b.tb
	old := tb.node
	used := 1
	for i := range old {
		if !isNil(old[i].val) {
			used++
		}
	}
	lsize := ceilLog2(used)
	if lsize > maxBits {
		panic(newApiErrorS(ApiErrorRun, "table overflow"))
	}
	size := 1 << lsize
	b.cur ^= 1
	if cap(b.bufs[b.cur]) < size {
		b.bufs[b.cur] = make([]lNode, size)
	}
	buf := b.bufs[b.cur][:size]
	for i := range buf {
		buf[i] = lNode{val: LNil, next: -1}
	}
	tb.node, tb.lastFree = buf, size
	for i := len(old) - 1; i >= 0; i-- {
		if n := &old[i]; !isNil(n.val) {
			tb.place(n.key, n.val)
		}
	}
}

// Node (Vigil) is the key and value in slot i of the node part (0 <= i <
// the node size Sizes answers); the value is LNil for a free slot. With
// Sizes and RawGetInt, Go code walks a table in next()'s order without
// boxing the array part's keys or looking each key up again.
func (tb *LTable) Node(i int) (LValue, LValue) {
	n := &tb.node[i]
	return n.key, n.val
}
