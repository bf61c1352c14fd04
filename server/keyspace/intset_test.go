package keyspace

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// refIntsetBlob is intset.c's layout of ints (ascending) at width.
func refIntsetBlob(ints []int64, width int) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(width))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(ints)))
	for _, v := range ints {
		switch width {
		case 2:
			b = binary.LittleEndian.AppendUint16(b, uint16(v))
		case 4:
			b = binary.LittleEndian.AppendUint32(b, uint32(v))
		default:
			b = binary.LittleEndian.AppendUint64(b, uint64(v))
		}
	}
	return b
}

// TestIntsetAgainstMap is a property test of the packed intset: random
// adds, removes and lookups of values of every width (and their
// boundaries) against a map; after each step the set holds the map's
// members ascending, its width is the widest value ever added (it never
// narrows), its bytes are intset.c's layout of them, and a Dup taken
// earlier is not changed by later writes. Seeds from 40 start as an inline
// intset in a key node (newIntsetNode, keys of 0 to 60 bytes), half of them
// with few distinct values so that the set stays inline for long; the
// node's key bytes must never change.
func TestIntsetAgainstMap(t *testing.T) {
	edges := []int64{0, 1, -1, math.MaxInt16, math.MinInt16, math.MaxInt16 + 1, math.MinInt16 - 1,
		math.MaxInt32, math.MinInt32, math.MaxInt32 + 1, math.MinInt32 - 1, math.MaxInt64, math.MinInt64}
	for seed := range uint64(80) {
		rng := rand.New(rand.NewPCG(seed, 7))
		s := NewIntSet()
		var node *keyNode
		var key string
		inline, few := seed >= 40, seed >= 60
		if inline {
			key = strings.Repeat("k", int(seed%4)*20+int(seed%7))
			node, s = newIntsetNode([]byte(key), NewIntSet().isBytes())
			if s.isInlineCap() < minInlineIntset || node.key() != key {
				t.Fatalf("seed %d: inline room %d, key %q", seed, s.isInlineCap(), node.key())
			}
		}
		ref := map[int64]bool{}
		width := 2
		value := func() int64 {
			switch rng.IntN(10) {
			case 0:
				return edges[rng.IntN(len(edges))]
			case 1:
				if seed%4 == 0 {
					return int64(rng.Uint64())
				}
			case 2:
				if seed%2 == 0 {
					return rng.Int64N(1<<32) - 1<<31
				}
			}
			if few {
				return rng.Int64N(8) - 4
			}
			return rng.Int64N(200) - 100
		}
		var dup *Set
		var dupWant []byte
		for step := range 3000 {
			v := value()
			b := []byte(strconv.FormatInt(v, 10))
			switch op := rng.IntN(10); {
			case op < 5:
				if got := s.Add(b, 1<<20); got != !ref[v] {
					t.Fatalf("seed %d step %d: Add(%d) = %v", seed, step, v, got)
				}
				ref[v] = true
				width = max(width, int(intWidth(v)))
			case op < 8:
				if got := s.Remove(b); got != ref[v] {
					t.Fatalf("seed %d step %d: Remove(%d) = %v", seed, step, v, got)
				}
				delete(ref, v)
			default:
				if s.Contains(b) != ref[v] || s.ContainsInt(v) != ref[v] || s.ContainsString(string(b)) != ref[v] {
					t.Fatalf("seed %d step %d: Contains(%d) != %v", seed, step, v, ref[v])
				}
			}
			if step%97 == 0 {
				if dup != nil && !slices.Equal(dup.IntsetBlob(), dupWant) {
					t.Fatalf("seed %d step %d: a Dup changed with its original", seed, step)
				}
				dup = s.Dup().(*Set)
				dupWant = slices.Clone(s.IntsetBlob())
			}
			want := make([]int64, 0, len(ref))
			for k := range ref {
				want = append(want, k)
			}
			slices.Sort(want)
			var got []int64
			s.Range(func(m Member) bool {
				if !m.IsInt {
					t.Fatalf("non-integer member %q", m.S)
				}
				got = append(got, m.N)
				return true
			})
			if !slices.Equal(got, want) || s.Len() != len(want) {
				t.Fatalf("seed %d step %d: members %v, want %v", seed, step, got, want)
			}
			if s.Encoding() != EncodingIntset || s.IntsetWidth() != width {
				t.Fatalf("seed %d step %d: encoding %v width %d, want intset %d", seed, step, s.Encoding(), s.IntsetWidth(), width)
			}
			if blob := s.IntsetBlob(); !slices.Equal(blob, refIntsetBlob(want, width)) {
				t.Fatalf("seed %d step %d: bytes %x, want %x", seed, step, blob, refIntsetBlob(want, width))
			}
			if inline {
				if node.key() != key {
					t.Fatalf("seed %d step %d: node key %q, want %q", seed, step, node.key(), key)
				}
				if c := s.isInlineCap(); c != 0 && (c < len(s.isBytes()) || s.p != unsafe.Pointer(&(*setNode[[96 - setNodeSize]byte])(unsafe.Pointer(node)).room)) {
					t.Fatalf("seed %d step %d: inline intset of %d bytes, room %d", seed, step, len(s.isBytes()), c)
				}
			}
			if len(want) > 0 {
				if err := checkSet(s, EncodingConfig{SetMaxIntsetEntries: 1 << 20}); err != nil {
					t.Fatalf("seed %d step %d: %v", seed, step, err)
				}
				if m := s.RandomRead(rng); !ref[m.N] {
					t.Fatalf("seed %d step %d: random member %d not in the set", seed, step, m.N)
				}
			}
		}
	}
}

// TestIntsetAllocation: the intset is one allocation of Go's size class
// for its bytes in use, so a Set of 5 small integers is an 8-byte header
// and a 24-byte intset; growth past 32 KiB reallocates by eighths.
func TestIntsetAllocation(t *testing.T) {
	if sz := unsafe.Sizeof(Set{}); sz != 8 {
		t.Errorf("Set header %d bytes, want 8", sz)
	}
	for _, c := range [][2]int{{8, 8}, {9, 16}, {18, 24}, {25, 32}, {33, 48}, {32768, 32768}, {32769, 36864}, {65536, 65536}, {65537, 73728}} {
		if got := intsetAlloc(c[0]); got != c[1] {
			t.Errorf("intsetAlloc(%d) = %d, want %d", c[0], got, c[1])
		}
	}
	for used := 1; used < 1<<20; used += 1 + used/64 {
		if a, b := intsetAlloc(used), intsetAlloc(used+1); a < used || b < a {
			t.Fatalf("intsetAlloc not monotone at %d: %d, %d", used, a, b)
		}
	}
	s := NewIntSet()
	for i := range 5 {
		s.Add([]byte(strconv.Itoa(i)), 512)
	}
	if n := testing.AllocsPerRun(100, func() { _ = s.Dup() }); n != 2 {
		t.Errorf("Dup of a small intset: %v allocations, want 2", n)
	}
}

// TestNewIntSetBlob: a loaded SET_INTSET blob is kept as is, including a
// width wider than its members need.
func TestNewIntSetBlob(t *testing.T) {
	blob := refIntsetBlob([]int64{-3, 7, 9}, 8)
	s := NewIntSetBlob(blob)
	if s.IntsetWidth() != 8 || s.Len() != 3 || !slices.Equal(s.IntsetBlob(), blob) || !s.ContainsInt(7) {
		t.Fatalf("width %d len %d bytes %x", s.IntsetWidth(), s.Len(), s.IntsetBlob())
	}
	s.Add([]byte("8"), 512)
	if !slices.Equal(s.IntsetBlob(), refIntsetBlob([]int64{-3, 7, 8, 9}, 8)) || !slices.Equal(blob, refIntsetBlob([]int64{-3, 7, 9}, 8)) {
		t.Fatalf("after add: %x (source %x)", s.IntsetBlob(), blob)
	}
	f := NewIntSetFrom([]int64{1, 2}, 4)
	if !slices.Equal(f.IntsetBlob(), refIntsetBlob([]int64{1, 2}, 4)) {
		t.Fatalf("NewIntSetFrom: %x", f.IntsetBlob())
	}
}
