package keyspace

import (
	"hash/maphash"
	"math/bits"
	"math/rand/v2"
	"unsafe"
)

// Sizing constants, as Redis 7.0's dict.h / server.h.
const (
	// dictInitialSize is DICT_HT_INITIAL_SIZE: the smallest table.
	dictInitialSize = 4
	// dictMinFill is HASHTABLE_MIN_FILL: a table more than dictInitialSize
	// buckets large and less than this percentage full is shrunk.
	dictMinFill = 10
	// fairRandomSample is GETFAIR_NUM_ENTRIES.
	fairRandomSample = 15
)

// seed is the process-wide hash seed (dict.c's dict_hash_function_seed).
var seed = maphash.MakeSeed()

func hashBytes(b []byte) uint64  { return maphash.Bytes(seed, b) }
func hashString(s string) uint64 { return maphash.String(seed, s) }

// dictEntry is one element of a Dict: a chain link of a bucket. It is the
// first field of the element's node, which holds the key and the value: a
// keyNode (the Entry itself) in a database's main dict (Dict.nodes), an
// expireEntry (the expire time and the key's node) in a database's expires
// index (Dict.expires), a refEntry (the key and a pointer to the Entry) in
// any other Dict; Dict.keyOf reads the key of each. A removed entry is not
// live (Dict.live); its next pointer is left intact so that an iteration
// standing on it (with rehashing paused) can carry on down the chain.
type dictEntry struct {
	next *dictEntry
}

// refEntry is the element of a Dict that is neither a main dict nor an
// expires index: Dicts built with Set.
type refEntry struct {
	dictEntry
	key string
	val *Entry
}

// ref is de's refEntry; de must belong to a Dict without nodes.
func ref(de *dictEntry) *refEntry { return (*refEntry)(unsafe.Pointer(de)) }

// newRef returns a refEntry for key and val, as its dictEntry.
func newRef(key string, val *Entry) *dictEntry {
	return &(&refEntry{key: key, val: val}).dictEntry
}

// expireEntry is the element of a database's expires index (db->expires):
// the key's node in the main dict, whose key it is, and the key's absolute
// expire time in unix milliseconds, as Redis keeps the time in the expires
// dictEntry's value and shares the key's sds with the main dict. 24 bytes,
// the size of Redis's dictEntry.
type expireEntry struct {
	dictEntry
	node *keyNode
	at   int64 // > 0; 0 once removed
}

// expEnt is de's expireEntry; de must belong to an expires index.
func expEnt(de *dictEntry) *expireEntry { return (*expireEntry)(unsafe.Pointer(de)) }

// nodeKey is the key of de, an element of a main dict (Dict.nodes).
func nodeKey(de *dictEntry) string { return (*keyNode)(unsafe.Pointer(de)).key() }

// keyOf is de's key.
func (d *Dict) keyOf(de *dictEntry) string {
	if d.nodes {
		return nodeKey(de)
	}
	if d.expires {
		return expEnt(de).node.key()
	}
	return ref(de).key
}

// nodeEntry is the Entry of the keyNode de, nil if it was removed; de must
// belong to a main dict (Dict.nodes).
func nodeEntry(de *dictEntry) *Entry {
	e := &(*keyNode)(unsafe.Pointer(de)).ent
	if e.flags&removedFlag != 0 {
		return nil
	}
	return e
}

// val is de's value, nil once it was removed; always nil in an expires
// index, whose elements hold no Entry.
func (d *Dict) val(de *dictEntry) *Entry {
	if d.nodes {
		return nodeEntry(de)
	}
	if d.expires {
		return nil
	}
	return ref(de).val
}

// live reports whether de was not removed.
func (d *Dict) live(de *dictEntry) bool {
	if d.expires {
		return expEnt(de).at != 0
	}
	return d.val(de) != nil
}

// markRemoved marks de removed (live reads false).
func (d *Dict) markRemoved(de *dictEntry) {
	switch {
	case d.nodes:
		(*keyNode)(unsafe.Pointer(de)).ent.flags |= removedFlag
	case d.expires:
		expEnt(de).at = 0
	default:
		ref(de).val = nil
	}
}

// Dict is a hash table from string keys to *Entry, a port of Redis 7.0's
// dict.c: a power-of-two array of buckets with chaining, and two tables so a
// resize is done incrementally (rehashing moves one bucket per lookup, insert
// or delete, as _dictRehashStep). That layout is what lets Scan give Redis's
// SCAN guarantee, which a Go map cannot.
//
// Invariants: ht[1] != nil exactly while rehashing (dict.c's rehashidx != -1);
// while rehashing, buckets of ht[0] below rehashIdx are empty and new entries
// go to ht[1]; used[i] counts the entries of ht[i].
//
// The zero Dict is empty and ready to use. A Dict is not safe for concurrent
// use.
type Dict struct {
	// nodes: the elements are keyNodes (a database's main dict; DB sets
	// it), not refEntries. It survives Clear.
	nodes bool
	// expires: the elements are expireEntries (a database's expires
	// index; DB sets it). It survives Clear.
	expires bool
	// allowExpand is dictType.expandAllowed (nil: always allowed): a
	// database's key and expires dicts ask their Keyspace's ExpandAllowed
	// (New sets it). It survives Clear.
	allowExpand func(moreMem uint64, usedRatio float64) bool
	ht          [2][]*dictEntry
	used        [2]int
	rehashIdx   int // next bucket of ht[0] to move; meaningful while rehashing
	pauseRehash int // > 0 while an iteration needs entries to stay put (dictPauseRehashing)
}

// Len is the number of entries (dictSize).
func (d *Dict) Len() int { return d.used[0] + d.used[1] }

// Buckets is the number of buckets of both tables (dictSlots).
func (d *Dict) Buckets() int { return len(d.ht[0]) + len(d.ht[1]) }

// IsRehashing reports whether an incremental resize is in progress.
func (d *Dict) IsRehashing() bool { return d.ht[1] != nil }

// Clear empties the dict and frees its tables (dictEmpty).
func (d *Dict) Clear() {
	d.ht = [2][]*dictEntry{}
	d.used = [2]int{}
	d.rehashIdx = 0
}

// nextPow is _dictNextExp: the smallest power of two >= size, at least
// dictInitialSize.
func nextPow(size int) int {
	if size <= dictInitialSize {
		return dictInitialSize
	}
	return 1 << bits.Len(uint(size-1))
}

// Expand is dictExpand: it creates a table of the smallest power of two >=
// size (and >= Len) and, if the dict already had one, starts rehashing into
// it. It does nothing while rehashing or if the size would not change.
func (d *Dict) Expand(size int) bool {
	if d.IsRehashing() || d.used[0] > size {
		return false
	}
	n := nextPow(size)
	if n == len(d.ht[0]) {
		return false
	}
	if d.ht[0] == nil {
		d.ht[0] = make([]*dictEntry, n)
		return true
	}
	d.ht[1] = make([]*dictEntry, n)
	d.rehashIdx = 0
	return true
}

// expandIfNeeded is _dictExpandIfNeeded: grow when the table is as full as
// it has buckets (load factor 1).
func (d *Dict) expandIfNeeded() {
	if d.IsRehashing() {
		return
	}
	if len(d.ht[0]) == 0 {
		d.Expand(dictInitialSize)
		return
	}
	if d.used[0] >= len(d.ht[0]) && expandAllowed(d.used[0], len(d.ht[0])) && d.typeExpandAllowed() {
		d.Expand(d.used[0] + 1)
	}
}

// typeExpandAllowed is dictTypeExpandAllowed: the type's expandAllowed is
// asked with the bytes of the table the expansion would allocate and the
// current load factor.
func (d *Dict) typeExpandAllowed() bool {
	if d.allowExpand == nil {
		return true
	}
	return d.allowExpand(uint64(nextPow(d.used[0]+1))*DictEntryPtrSize, float64(d.used[0])/float64(len(d.ht[0])))
}

// NeedsShrink is server.c's htNeedsResize: more than dictInitialSize
// buckets and less than dictMinFill percent full.
func (d *Dict) NeedsShrink() bool {
	size := d.Buckets()
	return size > dictInitialSize && d.Len()*100/size < dictMinFill
}

// Shrink is dictResize: start rehashing into the smallest table that holds
// the current entries. Delete calls it when NeedsShrink (Redis does so from
// serverCron's tryResizeHashTables; doing it here keeps the dict pure).
func (d *Dict) Shrink() bool {
	if !canResize() || d.IsRehashing() {
		return false
	}
	return d.Expand(max(d.used[0], dictInitialSize))
}

// Rehash is dictRehash: move up to n non-empty buckets of ht[0] to ht[1],
// visiting at most 10*n empty ones. It reports whether rehashing is still in
// progress. It moves entries even while rehashing is paused, so only call it
// outside iterations.
func (d *Dict) Rehash(n int) bool {
	if !d.IsRehashing() || !rehashAllowed(len(d.ht[0]), len(d.ht[1])) {
		return false
	}
	emptyVisits := n * 10
	for ; n > 0 && d.used[0] != 0; n-- {
		for d.ht[0][d.rehashIdx] == nil {
			d.rehashIdx++
			emptyVisits--
			if emptyVisits == 0 {
				return true
			}
		}
		mask := uint64(len(d.ht[1]) - 1)
		for de := d.ht[0][d.rehashIdx]; de != nil; {
			next := de.next
			i := hashString(d.keyOf(de)) & mask
			de.next = d.ht[1][i]
			d.ht[1][i] = de
			d.used[0]--
			d.used[1]++
			de = next
		}
		d.ht[0][d.rehashIdx] = nil
		d.rehashIdx++
	}
	if d.used[0] == 0 {
		d.ht[0], d.ht[1] = d.ht[1], nil
		d.used[0], d.used[1] = d.used[1], 0
		d.rehashIdx = 0
		return false
	}
	return true
}

// RehashFor is dictRehashMilliseconds: rehash in steps of 100 buckets until
// elapsed() (microseconds since the caller's start) exceeds budgetMicros or
// the rehash is done. It returns the number of steps times 100.
func (d *Dict) RehashFor(budgetMicros int64, elapsed func() int64) int {
	if d.pauseRehash > 0 {
		return 0
	}
	n := 0
	for d.Rehash(100) {
		n += 100
		if elapsed() > budgetMicros {
			break
		}
	}
	return n
}

// rehashStep is _dictRehashStep: one bucket, unless an iteration paused it.
func (d *Dict) rehashStep() {
	if d.pauseRehash == 0 {
		d.Rehash(1)
	}
}

// findB is dictFind for a []byte key with its hash h: peekB after one
// rehash step; it does not allocate.
func (d *Dict) findB(h uint64, key []byte) *dictEntry {
	if d.Len() != 0 && d.IsRehashing() {
		d.rehashStep()
	}
	return d.peekB(h, key)
}

// findS is findB for a string key.
func (d *Dict) findS(h uint64, key string) *dictEntry {
	if d.Len() == 0 {
		return nil
	}
	if d.IsRehashing() {
		d.rehashStep()
	}
	for t := 0; t < 2; t++ {
		tbl := d.ht[t]
		for de := tbl[h&uint64(len(tbl)-1)]; de != nil; de = de.next {
			if d.keyOf(de) == key {
				return de
			}
		}
		if !d.IsRehashing() {
			break
		}
	}
	return nil
}

// findNode is findS in an expires index for the key whose main-dict node
// is n (hash h): it compares nodes, not keys.
func (d *Dict) findNode(h uint64, n *keyNode) *dictEntry {
	if d.Len() == 0 {
		return nil
	}
	if d.IsRehashing() {
		d.rehashStep()
	}
	for t := 0; t < 2; t++ {
		tbl := d.ht[t]
		for de := tbl[h&uint64(len(tbl)-1)]; de != nil; de = de.next {
			if expEnt(de).node == n {
				return de
			}
		}
		if !d.IsRehashing() {
			break
		}
	}
	return nil
}

// insert links de, whose key has hash h and is not in the dict, at the head
// of its bucket (dictAddRaw): in ht[1] while rehashing, else in ht[0].
func (d *Dict) insert(h uint64, de *dictEntry) {
	if d.IsRehashing() {
		d.rehashStep()
	}
	d.expandIfNeeded()
	t := 0
	if d.IsRehashing() {
		t = 1
	}
	i := h & uint64(len(d.ht[t])-1)
	if d.nodes {
		(*keyNode)(unsafe.Pointer(de)).ent.flags &^= removedFlag
	}
	de.next = d.ht[t][i]
	d.ht[t][i] = de
	d.used[t]++
}

// remove unlinks the entry de (key hash h) and marks it removed (val = nil),
// as dictGenericDelete. It reports whether de was found. Afterwards it starts
// a shrink if the table became less than dictMinFill percent full.
func (d *Dict) remove(h uint64, de *dictEntry) bool {
	if d.Len() == 0 {
		return false
	}
	if d.IsRehashing() {
		d.rehashStep()
	}
	for t := 0; t < 2; t++ {
		tbl := d.ht[t]
		i := h & uint64(len(tbl)-1)
		var prev *dictEntry
		for cur := tbl[i]; cur != nil; prev, cur = cur, cur.next {
			if cur != de {
				continue
			}
			if prev == nil {
				tbl[i] = cur.next
			} else {
				prev.next = cur.next
			}
			d.used[t]--
			d.markRemoved(de)
			if d.NeedsShrink() {
				d.Shrink()
			}
			return true
		}
		if !d.IsRehashing() {
			break
		}
	}
	return false
}

// Find returns the value of key, or nil (dictFetchValue). It does not
// allocate.
func (d *Dict) Find(key []byte) *Entry {
	if de := d.findB(hashBytes(key), key); de != nil {
		return d.val(de)
	}
	return nil
}

// FindString is Find for a string key.
func (d *Dict) FindString(key string) *Entry {
	if de := d.findS(hashString(key), key); de != nil {
		return d.val(de)
	}
	return nil
}

// Set inserts or replaces key's value and returns the previous one (nil if
// key was new), as dictReplace. val must not be nil. Not for a main dict
// (Dict.nodes), whose nodes DB makes.
func (d *Dict) Set(key string, val *Entry) (prev *Entry) {
	if d.nodes || d.expires {
		panic("keyspace: Dict.Set on a main dict or an expires index")
	}
	h := hashString(key)
	if de := d.findS(h, key); de != nil {
		prev, ref(de).val = ref(de).val, val
		return prev
	}
	d.insert(h, newRef(key, val))
	return nil
}

// Delete removes key and returns its value, or nil if it was absent
// (dictDelete).
func (d *Dict) Delete(key []byte) *Entry {
	h := hashBytes(key)
	de := d.findB(h, key)
	if de == nil {
		return nil
	}
	val := d.val(de)
	d.remove(h, de)
	return val
}

// DeleteString is Delete for a string key.
func (d *Dict) DeleteString(key string) *Entry {
	h := hashString(key)
	de := d.findS(h, key)
	if de == nil {
		return nil
	}
	val := d.val(de)
	d.remove(h, de)
	return val
}

// Scan is dictScan: it calls fn for the entries of the bucket(s) at cursor
// and returns the next cursor, 0 when the scan is complete. Start with 0.
//
// The cursor is incremented in reverse-binary order (high bits first), so an
// entry present from the first to the last call of a full scan is returned at
// least once even if the table grows, shrinks or is being rehashed between
// calls; some may be returned more than once. While rehashing, the bucket of
// the smaller table and all its expansions in the larger one are emitted in
// the same call.
//
// Rehashing is paused while fn runs: fn may look keys up and delete the
// entry it was given, but must not insert.
func (d *Dict) Scan(cursor uint64, fn func(key string, val *Entry)) uint64 {
	return d.scan(cursor, func(de *dictEntry) {
		if v := d.val(de); v != nil {
			fn(d.keyOf(de), v)
		}
	})
}

// scan is dictScan over entries.
func (d *Dict) scan(v uint64, fn func(de *dictEntry)) uint64 {
	if d.Len() == 0 {
		return 0
	}
	d.pauseRehash++
	defer func() { d.pauseRehash-- }()

	emit := func(tbl []*dictEntry, i uint64) {
		for de := tbl[i]; de != nil; {
			next := de.next
			fn(de)
			de = next
		}
	}
	if !d.IsRehashing() {
		t0 := d.ht[0]
		m0 := uint64(len(t0) - 1)
		emit(t0, v&m0)
		// Set the unmasked bits so incrementing the reversed cursor
		// operates on the masked bits only.
		v |= ^m0
		v = bits.Reverse64(bits.Reverse64(v) + 1)
		return v
	}
	t0, t1 := d.ht[0], d.ht[1]
	if len(t0) > len(t1) {
		t0, t1 = t1, t0 // t0 is the smaller table
	}
	m0, m1 := uint64(len(t0)-1), uint64(len(t1)-1)
	emit(t0, v&m0)
	// Iterate over the indices of the larger table that are expansions of
	// the index of the smaller table the cursor points at.
	for {
		emit(t1, v&m1)
		v |= ^m1
		v = bits.Reverse64(bits.Reverse64(v) + 1)
		if v&(m0^m1) == 0 {
			break
		}
	}
	return v
}

// Range calls fn for every entry until fn returns false, as a dict.c safe
// iterator: rehashing is paused, so fn may delete any key (deleted entries
// not yet reached are skipped) and insert (new entries may or may not be
// visited).
func (d *Dict) Range(fn func(key string, val *Entry) bool) {
	d.rangeEntries(func(de *dictEntry) bool { return fn(d.keyOf(de), d.val(de)) })
}

func (d *Dict) rangeEntries(fn func(de *dictEntry) bool) {
	d.pauseRehash++
	defer func() { d.pauseRehash-- }()
	for t := 0; t < 2; t++ {
		tbl := d.ht[t]
		if t == 0 && d.IsRehashing() {
			// Buckets below rehashIdx are empty: skipping them visits
			// the same entries in the same order, and keeps a walk
			// that stops early (Size's samples) O(samples) instead of
			// O(rehashIdx).
			tbl = tbl[d.rehashIdx:]
		}
		for i := range tbl {
			for de := tbl[i]; de != nil; {
				next := de.next
				if d.live(de) && !fn(de) {
					return
				}
				de = next
			}
		}
		if !d.IsRehashing() {
			break
		}
	}
}

// randomEntry is dictGetRandomKey: a random non-empty bucket, then a random
// entry of its chain. Entries in long chains are less likely to be chosen.
func (d *Dict) randomEntry(rng *rand.Rand) *dictEntry {
	if d.Len() == 0 {
		return nil
	}
	if d.IsRehashing() {
		d.rehashStep()
	}
	var he *dictEntry
	if d.IsRehashing() {
		// No entries below rehashIdx in ht[0].
		s0 := uint64(len(d.ht[0]))
		span := uint64(d.Buckets() - d.rehashIdx)
		for he == nil {
			h := uint64(d.rehashIdx) + rng.Uint64N(span)
			if h >= s0 {
				he = d.ht[1][h-s0]
			} else {
				he = d.ht[0][h]
			}
		}
	} else {
		m := uint64(len(d.ht[0]) - 1)
		for he == nil {
			he = d.ht[0][rng.Uint64()&m]
		}
	}
	n := 0
	for de := he; de != nil; de = de.next {
		n++
	}
	for i := rng.IntN(n); i > 0; i-- {
		he = he.next
	}
	return he
}

// someEntries is dictGetSomeKeys: it fills dst with up to len(dst) entries
// from a random point of the table, collecting whole buckets as it walks and
// jumping elsewhere after runs of empty buckets. Returned entries are
// distinct but not uniformly distributed. It returns how many it stored.
func (d *Dict) someEntries(rng *rand.Rand, dst []*dictEntry) int {
	count := min(len(dst), d.Len())
	if count == 0 {
		return 0
	}
	maxSteps := count * 10
	// Do rehashing work proportional to count.
	for j := 0; j < count && d.IsRehashing(); j++ {
		d.rehashStep()
	}
	tables := 1
	maxMask := uint64(len(d.ht[0]) - 1)
	if d.IsRehashing() {
		tables = 2
		maxMask = max(maxMask, uint64(len(d.ht[1])-1))
	}
	i := rng.Uint64() & maxMask
	emptyLen := 0
	stored := 0
	for ; stored < count && maxSteps > 0; maxSteps-- {
		for t := 0; t < tables; t++ {
			// Below rehashIdx ht[0] is empty; if i is also out of
			// range of ht[1] (shrinking), jump to rehashIdx.
			if tables == 2 && t == 0 && i < uint64(d.rehashIdx) {
				if i >= uint64(len(d.ht[1])) {
					i = uint64(d.rehashIdx)
				} else {
					continue
				}
			}
			if i >= uint64(len(d.ht[t])) {
				continue
			}
			he := d.ht[t][i]
			if he == nil {
				emptyLen++
				if emptyLen >= 5 && emptyLen > count {
					i = rng.Uint64() & maxMask
					emptyLen = 0
				}
				continue
			}
			emptyLen = 0
			// The whole chain is sampled, by reservoir sampling once dst
			// is full, so that the end of a long chain can be drawn too
			// (Redis 7.0.15's dictGetSomeKeys).
			for ; he != nil; he = he.next {
				if stored < count {
					dst[stored] = he
				} else if r := rng.Uint64N(uint64(stored) + 1); r < uint64(count) {
					dst[r] = he
				}
				stored++
			}
			if stored >= count {
				return count
			}
		}
		i = (i + 1) & maxMask
	}
	return min(stored, count)
}

// RandomKey returns a random entry (dictGetRandomKey), false if empty.
func (d *Dict) RandomKey(rng *rand.Rand) (string, *Entry, bool) {
	de := d.randomEntry(rng)
	if de == nil {
		return "", nil, false
	}
	return d.keyOf(de), d.val(de), true
}

// fairRandomEntry is dictGetFairRandomKey: sample a few buckets' entries
// with someEntries and pick one of them, which is fairer than randomEntry
// when chains differ in length.
func (d *Dict) fairRandomEntry(rng *rand.Rand) *dictEntry {
	var buf [fairRandomSample]*dictEntry
	n := d.someEntries(rng, buf[:])
	if n == 0 {
		return d.randomEntry(rng)
	}
	return buf[rng.IntN(n)]
}

// FairRandomKey is dictGetFairRandomKey; false if the dict is empty.
func (d *Dict) FairRandomKey(rng *rand.Rand) (string, *Entry, bool) {
	de := d.fairRandomEntry(rng)
	if de == nil {
		return "", nil, false
	}
	return d.keyOf(de), d.val(de), true
}

// SomeKeys is dictGetSomeKeys: it calls fn for up to count sampled entries
// (distinct, not uniformly distributed) and returns how many, for
// eviction-pool style sampling. fn must not modify the dict.
func (d *Dict) SomeKeys(rng *rand.Rand, count int, fn func(key string, val *Entry)) int {
	if count <= 0 {
		return 0
	}
	var small [16]*dictEntry
	buf := small[:]
	if count > len(small) {
		buf = make([]*dictEntry, count)
	}
	n := d.someEntries(rng, buf[:count])
	for _, de := range buf[:n] {
		fn(d.keyOf(de), d.val(de))
	}
	return n
}

// Prefetch loads, changing nothing, what looking up each of keys will read
// first (its bucket, the chain's first entry and that entry's key bytes),
// in three passes, so that the cache misses of a pipelined batch's keys
// overlap instead of coming one lookup after another. At most 32 keys.
func (db *DB) Prefetch(keys [][]byte) {
	tbl := db.dict.ht[0]
	if len(tbl) == 0 || len(keys) == 0 {
		return
	}
	var des [32]*dictEntry
	n := min(len(keys), len(des))
	mask := uint64(len(tbl) - 1)
	for i := 0; i < n; i++ {
		des[i] = tbl[hashBytes(keys[i])&mask]
	}
	var lens [32]int
	for i := 0; i < n; i++ {
		if de := des[i]; de != nil {
			lens[i] = len(nodeKey(de))
		}
	}
	var sink byte
	for i := 0; i < n; i++ {
		if lens[i] > 0 {
			sink += nodeKey(des[i])[0]
		}
	}
	prefetchSink.Store(uint32(sink)) // snapshot.go
}

// PrefetchMembers is Prefetch for a batch on one key: when key holds a
// hash or a set in the hashtable encoding, it loads, changing nothing, the
// buckets of members (the fields or members of the batch's commands; nil
// ones are passed over) and their chains' first entries (fieldDict.prefetch).
// It does no rehash step and no expiry check: a logically expired key only
// costs the loads.
func (db *DB) PrefetchMembers(key []byte, members [][]byte) {
	if d := db.memberTable(key); d != nil {
		d.prefetch(members)
	}
}

// HasMemberTable reports whether key holds a hash or a set in the
// hashtable encoding, whose members PrefetchMembers would load. It changes
// nothing.
func (db *DB) HasMemberTable(key []byte) bool { return db.memberTable(key) != nil }

// memberTable is the dict of the hashtable hash or set at key, nil if
// there is none, found without a rehash step or an expiry check.
func (db *DB) memberTable(key []byte) *fieldDict {
	de := db.dict.peekB(hashBytes(key), key)
	if de == nil {
		return nil
	}
	e := nodeEntry(de)
	if e == nil {
		return nil
	}
	switch e.vt {
	case vtHash:
		return (*Hash)(e.ptr()).ht()
	case vtSet:
		if s := (*Set)(e.ptr()); s.p != nil {
			return s.ht()
		}
	}
	return nil
}

// peekB is findB without the rehash step: it changes nothing.
func (d *Dict) peekB(h uint64, key []byte) *dictEntry {
	if d.Len() == 0 {
		return nil
	}
	for t := 0; t < 2; t++ {
		tbl := d.ht[t]
		for de := tbl[h&uint64(len(tbl)-1)]; de != nil; de = de.next {
			if d.keyOf(de) == string(key) {
				return de
			}
		}
		if !d.IsRehashing() {
			break
		}
	}
	return nil
}
