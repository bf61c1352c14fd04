package keyspace

import "sort"

// ordMap is an ordered map (Redis's rax where it is used as one: a stream's
// consumer groups, a group's consumers, the pending entries lists): keys
// kept sorted by cmp in chunks of at most ordChunkMax. A lookup is a
// binary search over the chunks' first keys and then within one chunk,
// O(log N); an insert or delete moves at most ordChunkMax entries, plus a
// chunk pointer per chunk when a chunk splits or empties; an insert past
// the greatest key (a PEL's usual case: IDs are delivered in order)
// appends. Ascend from a key is O(log N + M).
type ordMap[K any, V any] struct {
	cmp    func(a, b K) int
	chunks []*ordChunk[K, V]
	n      int
}

type ordChunk[K any, V any] struct {
	keys []K
	vals []V
}

const ordChunkMax = 128

func newOrdMap[K any, V any](cmp func(a, b K) int) *ordMap[K, V] {
	return &ordMap[K, V]{cmp: cmp}
}

// Len is the number of keys.
func (m *ordMap[K, V]) Len() int { return m.n }

// chunkFor is the index of the chunk that holds k or would: the last whose
// first key is <= k (0 when k precedes every key).
func (m *ordMap[K, V]) chunkFor(k K) int {
	i := sort.Search(len(m.chunks), func(i int) bool { return m.cmp(m.chunks[i].keys[0], k) > 0 })
	if i > 0 {
		i--
	}
	return i
}

// find is (chunk, position of the first key >= k in it, found).
func (m *ordMap[K, V]) find(k K) (int, int, bool) {
	if len(m.chunks) == 0 {
		return 0, 0, false
	}
	ci := m.chunkFor(k)
	c := m.chunks[ci]
	j := sort.Search(len(c.keys), func(j int) bool { return m.cmp(c.keys[j], k) >= 0 })
	return ci, j, j < len(c.keys) && m.cmp(c.keys[j], k) == 0
}

// Get is the value of k.
func (m *ordMap[K, V]) Get(k K) (V, bool) {
	ci, j, ok := m.find(k)
	if !ok {
		var zero V
		return zero, false
	}
	return m.chunks[ci].vals[j], true
}

// Set sets k to v and reports whether k was new.
func (m *ordMap[K, V]) Set(k K, v V) bool {
	if len(m.chunks) == 0 {
		m.chunks = append(m.chunks, &ordChunk[K, V]{keys: []K{k}, vals: []V{v}})
		m.n++
		return true
	}
	ci, j, ok := m.find(k)
	c := m.chunks[ci]
	if ok {
		c.vals[j] = v
		return false
	}
	c.keys = insertAt(c.keys, j, k)
	c.vals = insertAt(c.vals, j, v)
	m.n++
	if len(c.keys) > ordChunkMax {
		h := len(c.keys) / 2
		if j == len(c.keys)-1 && ci == len(m.chunks)-1 {
			h = len(c.keys) - 1 // appending: leave a full chunk behind
		}
		nc := &ordChunk[K, V]{keys: append([]K(nil), c.keys[h:]...), vals: append([]V(nil), c.vals[h:]...)}
		clear(c.keys[h:])
		clear(c.vals[h:])
		c.keys, c.vals = c.keys[:h:h], c.vals[:h:h]
		m.chunks = insertAt(m.chunks, ci+1, nc)
	}
	return true
}

// Delete removes k and reports whether it was there.
func (m *ordMap[K, V]) Delete(k K) bool {
	ci, j, ok := m.find(k)
	if !ok {
		return false
	}
	c := m.chunks[ci]
	c.keys = removeAt(c.keys, j)
	c.vals = removeAt(c.vals, j)
	m.n--
	if len(c.keys) == 0 {
		m.chunks = removeAt(m.chunks, ci)
	}
	return true
}

// Ascend calls fn on the keys >= from in order while it returns true.
// fn must not change the map.
func (m *ordMap[K, V]) Ascend(from K, fn func(k K, v V) bool) {
	if len(m.chunks) == 0 {
		return
	}
	ci, j, _ := m.find(from)
	m.ascendAt(ci, j, fn)
}

// AscendAll calls fn on every key in order while it returns true.
func (m *ordMap[K, V]) AscendAll(fn func(k K, v V) bool) { m.ascendAt(0, 0, fn) }

func (m *ordMap[K, V]) ascendAt(ci, j int, fn func(k K, v V) bool) {
	for ; ci < len(m.chunks); ci, j = ci+1, 0 {
		c := m.chunks[ci]
		for ; j < len(c.keys); j++ {
			if !fn(c.keys[j], c.vals[j]) {
				return
			}
		}
	}
}

// First is the smallest key.
func (m *ordMap[K, V]) First() (K, V, bool) {
	if m.n == 0 {
		var k K
		var v V
		return k, v, false
	}
	c := m.chunks[0]
	return c.keys[0], c.vals[0], true
}

// Last is the greatest key.
func (m *ordMap[K, V]) Last() (K, V, bool) {
	if m.n == 0 {
		var k K
		var v V
		return k, v, false
	}
	c := m.chunks[len(m.chunks)-1]
	return c.keys[len(c.keys)-1], c.vals[len(c.vals)-1], true
}

func insertAt[T any](s []T, i int, v T) []T {
	var zero T
	s = append(s, zero)
	copy(s[i+1:], s[i:])
	s[i] = v
	return s
}

func removeAt[T any](s []T, i int) []T {
	copy(s[i:], s[i+1:])
	var zero T
	s[len(s)-1] = zero
	return s[:len(s)-1]
}
