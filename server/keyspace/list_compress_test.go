package keyspace

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/vigil-kv/vigil/internal/redisutil"
)

// TestNodeListpackBytes: a node's listpack, as compressed, has the size
// the node records (node->sz) and Redis's header.
func TestNodeListpackBytes(t *testing.T) {
	l := NewList(5)
	for _, s := range []string{"a", "1", "-70000", "9999999999", strings.Repeat("z", 5000), "", "127", "128", strings.Repeat("y", 70)} {
		l.PushBack([]byte(s))
	}
	for k, nd := range nodesOf(l) {
		lp := l.AppendNodeListpack(nil, k)
		if len(lp) != nd.sz || int(lp[0])|int(lp[1])<<8 != nd.sz || int(lp[4]) != nd.count || lp[len(lp)-1] != 0xFF {
			t.Errorf("node %d: %d bytes %x, node %+v", k, len(lp), lp[:6], nd)
		}
	}
}

// TestCompressThresholds: __quicklistCompressNode's rules. A node under
// MIN_COMPRESS_BYTES (48) stays raw however well it would compress, so
// does one LZF cannot shrink by more than MIN_COMPRESS_IMPROVE (8), and
// the head and tail (within depth 1) are never compressed.
func TestCompressThresholds(t *testing.T) {
	mk := func(fill int, elems ...string) *List {
		l := NewList(fill)
		l.SetCompressDepth(1)
		for _, e := range elems {
			l.PushBack([]byte(e))
		}
		return l
	}
	// fill 1: one element a node, three nodes; the middle one is the
	// only candidate.
	small := strings.Repeat("a", 38) // 38+1+1 + 7 = 47 bytes: under 48
	l := mk(1, "h", small, "t")
	if nodesOf(l)[1].sz != 47 {
		t.Fatalf("node size %d", nodesOf(l)[1].sz)
	}
	if _, ok := l.NodeCompressed(1); ok {
		t.Errorf("a 47-byte node is compressed")
	}
	l = mk(1, "h", small+"a", "t") // 48 bytes: compressed
	if n, ok := l.NodeCompressed(1); !ok || n >= 48-8 {
		t.Errorf("a compressible 48-byte node: %d %v", n, ok)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	noise := make([]byte, 300)
	for i := range noise {
		noise[i] = byte(rng.IntN(256))
	}
	l = mk(1, "h", string(noise), "t")
	if _, ok := l.NodeCompressed(1); ok {
		t.Errorf("random bytes compressed")
	}
	for k := range nodesOf(l) {
		if nodesOf(l)[k].lzf > 0 && (k == 0 || k == len(nodesOf(l))-1) {
			t.Errorf("end node %d compressed", k)
		}
	}
	// The improvement rule at its edge: find inputs whose LZF saves 8
	// bytes (raw) and 9 (compressed).
	seen := map[bool]int{}
	for n := 60; n < 400; n++ {
		b := make([]byte, n)
		copy(b, noise)
		copy(b[n-20:], b[:20]) // one 20-byte back reference
		l := mk(1, "h", string(b), "t")
		lp := l.AppendNodeListpack(nil, 1)
		out := make([]byte, len(lp))
		c := redisutil.LZFCompress(lp, out)
		want := c > 0 && c+minCompressImprove < len(lp)
		if c > 0 && c+minCompressImprove >= len(lp)-1 && c+minCompressImprove <= len(lp) {
			seen[want]++ // saves 8 (raw) or 9 (compressed) bytes
		}
		if _, ok := l.NodeCompressed(1); ok != want {
			t.Errorf("%d bytes, LZF %d: compressed %v", len(lp), c, ok)
		}
	}
	if seen[true] == 0 || seen[false] == 0 {
		t.Errorf("the inputs did not reach the edge of the rule: %v", seen)
	}
}

// compressedListOps: pushes at both ends, pops, LSET, LINSERT, LREM, LTRIM.
var compressedListOps = []listOpWeight{{opPushFront, 6}, {opPushBack, 6}, {opPopFront, 2}, {opPopBack, 2},
	{opSet, 1}, {opInsert, 1}, {opFilter, 1}, {opTrim, 1}}

// TestCompressedListModel: random operations at both ends and in the
// middle on lists created at depths 0 to 3 against a plain slice: the
// elements and the node layout do not depend on the depth, the nodes
// within depth of either end are raw, and every compressed node's size is
// its listpack's LZF size. With 2*depth+1 nodes or more every other node
// is compressed unless too small or incompressible (the state Redis
// reaches with these operations).
func TestCompressedListModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	letters := "abcdefghijklmnopqrstuvwxyz"
	elem := func() []byte {
		switch rng.IntN(6) {
		case 0:
			return []byte(strconv.Itoa(rng.IntN(100000) - 50000))
		case 1:
			b := make([]byte, rng.IntN(200))
			for i := range b {
				b[i] = letters[rng.IntN(len(letters))]
			}
			return b
		}
		return []byte("element-" + strings.Repeat("e", rng.IntN(60)))
	}
	for depth := 0; depth <= 3; depth++ {
		plain := NewList(-1)
		l := NewList(-1)
		l.SetCompressDepth(depth)
		tw := &listTwin{l: l, ref: plain}
		for step := 0; step < 4000; step++ {
			if err := tw.step(rng, 20, compressedListOps, 3, elem); err != nil {
				t.Fatalf("depth %d step %d: %v", depth, step, err)
			}
			m := tw.m
			if l.Len() != len(m) || len(nodesOf(l)) != len(nodesOf(plain)) {
				t.Fatalf("depth %d step %d: %d elements %d nodes, want %d and %d", depth, step, l.Len(), len(nodesOf(l)), len(m), len(nodesOf(plain)))
			}
			for k := range nodesOf(l) {
				if nodesOf(l)[k].count != nodesOf(plain)[k].count || nodesOf(l)[k].sz != nodesOf(plain)[k].sz {
					t.Fatalf("depth %d step %d: node %d %+v, uncompressed %+v", depth, step, k, nodesOf(l)[k], nodesOf(plain)[k])
				}
			}
			if step%50 == 0 || step > 3950 {
				for i := range m {
					if !bytes.Equal(l.Index(i), m[i]) {
						t.Fatalf("depth %d step %d: [%d] = %q, want %q", depth, step, i, l.Index(i), m[i])
					}
				}
				checkCompressed(t, l, depth, step)
			}
		}
		if depth > 0 && len(nodesOf(l)) > 2*depth+2 && l.Size(0) >= plain.Size(0) {
			t.Errorf("depth %d: size %d, uncompressed %d", depth, l.Size(0), plain.Size(0))
		}
		d := l.Dup().(*List)
		if d.CompressDepth() != depth || d.Size(0) != l.Size(0) {
			t.Errorf("Dup: depth %d size %d, want %d %d", d.CompressDepth(), d.Size(0), depth, l.Size(0))
		}
		if err := checkList(d); err != nil {
			t.Errorf("Dup: %v", err)
		}
		for i := range tw.m {
			if !bytes.Equal(d.Index(i), tw.m[i]) {
				t.Fatalf("Dup: [%d] = %q, want %q", i, d.Index(i), tw.m[i])
			}
		}
		packed := 0
		for k := range l.ch {
			if l.ch[k].z == zPacked {
				packed++
			}
		}
		if e := l.zEnds(); depth > 0 && len(l.ch) > 2*e+2 && packed == 0 {
			t.Errorf("depth %d: none of %d chunks is compressed", depth, len(l.ch))
		} else if depth == 0 && packed > 0 {
			t.Errorf("depth 0: %d chunks compressed", packed)
		}
		t.Logf("depth %d: %d elements, %d chunks, %d compressed", depth, l.Len(), len(l.ch), packed)
	}
}

// nodesOf is a list's shadow quicklist nodes, a small list's one included.
func nodesOf(l *List) []qlNode {
	if l.listBody != nil {
		return l.nodes
	}
	if l.n == 0 {
		return nil
	}
	return []qlNode{{count: l.n, sz: int(l.ssz)}}
}

func checkCompressed(t *testing.T, l *List, depth, step int) {
	t.Helper()
	if err := checkList(l); err != nil && l.Len() > 0 {
		t.Fatalf("depth %d step %d: %v", depth, step, err)
	}
	n := len(nodesOf(l))
	for k, nd := range nodesOf(l) {
		lp := l.AppendNodeListpack(nil, k)
		if len(lp) != nd.sz {
			t.Fatalf("depth %d step %d: node %d listpack %d bytes, sz %d", depth, step, k, len(lp), nd.sz)
		}
		if depth == 0 || n < 2*depth {
			if nd.lzf > 0 {
				t.Fatalf("depth %d step %d: node %d of %d compressed", depth, step, k, n)
			}
			continue
		}
		out := make([]byte, len(lp))
		c := redisutil.LZFCompress(lp, out)
		compressible := len(lp) >= minCompressBytes && c > 0 && c+minCompressImprove < len(lp)
		inZone := k < depth || k >= n-depth
		switch {
		case inZone && nd.lzf > 0:
			t.Fatalf("depth %d step %d: node %d of %d (within depth) compressed", depth, step, k, n)
		case nd.lzf > 0 && nd.lzf != c:
			t.Fatalf("depth %d step %d: node %d LZF %d bytes, recorded %d", depth, step, k, c, nd.lzf)
		case nd.lzf == lzfNo && compressible:
			t.Fatalf("depth %d step %d: node %d marked incompressible", depth, step, k)
		}
	}
}

// TestCompressedChunksBig: a long list under list-compress-depth holds its
// inner chunks compressed (fewer bytes than at depth 0), reads every
// element back, and keeps doing so through edits in the middle and pops
// that bring compressed chunks to the ends.
func TestCompressedChunksBig(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for depth := 1; depth <= 3; depth++ {
		l, plain := NewList(-2), NewList(-2)
		l.SetCompressDepth(depth)
		var m [][]byte
		for i := 0; i < 20000; i++ {
			b := []byte("element-" + strconv.Itoa(i))
			l.PushBack(b)
			plain.PushBack(b)
			m = append(m, b)
		}
		bytesOf := func(l *List) (n int) {
			for k := range l.ch {
				n += len(l.ch[k].b)
			}
			return n
		}
		if got, raw := bytesOf(l), bytesOf(plain); got*2 > raw {
			t.Errorf("depth %d: chunks hold %d bytes, %d raw", depth, got, raw)
		}
		for step := 0; step < 3000; step++ {
			i := rng.IntN(len(m))
			switch rng.IntN(4) {
			case 0:
				b := []byte("set-" + strconv.Itoa(step))
				l.Set(i, b)
				m[i] = b
			case 1:
				b := []byte("ins-" + strconv.Itoa(step))
				l.Insert(i, false, b)
				m = append(m[:i], append([][]byte{b}, m[i:]...)...)
			case 2:
				for range 20 {
					if !bytes.Equal(l.PopFront(), m[0]) {
						t.Fatalf("depth %d step %d: PopFront", depth, step)
					}
					m = m[1:]
				}
			default:
				if !bytes.Equal(l.Index(i), m[i]) {
					t.Fatalf("depth %d step %d: [%d] = %q, want %q", depth, step, i, l.Index(i), m[i])
				}
			}
			if step%500 == 0 {
				if err := checkList(l); err != nil {
					t.Fatalf("depth %d step %d: %v", depth, step, err)
				}
			}
		}
		for i := range m {
			if !bytes.Equal(l.Index(i), m[i]) {
				t.Fatalf("depth %d: [%d] = %q, want %q", depth, i, l.Index(i), m[i])
			}
		}
		for len(m) > 0 {
			if !bytes.Equal(l.PopBack(), m[len(m)-1]) {
				t.Fatalf("depth %d: PopBack at %d", depth, len(m))
			}
			m = m[:len(m)-1]
		}
	}
}
