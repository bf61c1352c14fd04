package keyspace

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestPlainListModel: with a packed threshold of 100 bytes, random
// operations at both ends and in the middle (LSET and LINSERT of large
// elements into packed nodes, of small ones over and next to PLAIN nodes,
// LREM, LTRIM) on lists at depths 0 to 2 keep the elements of a plain
// slice, and an element is in a PLAIN node of its own exactly when it is
// large; a packed node's size is its listpack's (where the nodes split
// and merge is compared with redis-server's by TestListPlainDifferential).
// A Dup, and a list rebuilt from the nodes as the RDB loader does, have
// the same nodes and size.
func TestPlainListModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	elem := func() []byte {
		switch rng.IntN(5) {
		case 0:
			return []byte(strings.Repeat("L", 99+rng.IntN(300)))
		case 1:
			return []byte(strings.Repeat("s", rng.IntN(100)))
		}
		return []byte("e" + strings.Repeat("x", rng.IntN(20)))
	}
	ops := []listOpWeight{{opPushFront, 3}, {opPushBack, 3}, {opPopFront, 1}, {opPopBack, 1},
		{opSet, 3}, {opInsert, 3}, {opFilter, 1}, {opTrim, 1}}
	for depth := 0; depth <= 2; depth++ {
		for _, fill := range []int{-1, 2} {
			l, ref := NewList(fill), NewList(fill)
			l.SetCompressDepth(depth)
			l.SetPackedThreshold(100)
			ref.SetPackedThreshold(100)
			tw := &listTwin{l: l, ref: ref}
			for step := 0; step < 3000; step++ {
				if err := tw.step(rng, 16, ops, 3, elem); err != nil {
					t.Fatalf("depth %d fill %d step %d: %v", depth, fill, step, err)
				}
				m := tw.m
				if l.Len() != len(m) {
					t.Fatalf("depth %d fill %d step %d: len %d, want %d", depth, fill, step, l.Len(), len(m))
				}
				if len(m) == 0 {
					continue
				}
				if err := checkList(l); err != nil {
					t.Fatalf("depth %d fill %d step %d: %v", depth, fill, step, err)
				}
				i := 0
				for k, nd := range nodesOf(l) {
					if nd.plain != (nd.count == 1 && l.isLarge(len(m[i]))) {
						t.Fatalf("depth %d fill %d step %d: node %d %+v holds element %d of %d bytes", depth, fill, step, k, nd, i, len(m[i]))
					}
					if !nd.plain && nd.sz != ListpackSizeOf(m[i:i+nd.count]) {
						t.Fatalf("depth %d fill %d step %d: node %d size %d, its listpack %d", depth, fill, step, k, nd.sz, ListpackSizeOf(m[i:i+nd.count]))
					}
					i += nd.count
				}
				if step%100 == 0 {
					for i := range m {
						if !bytes.Equal(l.Index(i), m[i]) {
							t.Fatalf("depth %d fill %d step %d: [%d] = %q, want %q", depth, fill, step, i, l.Index(i), m[i])
						}
					}
					// The same nodes loaded back (as rdb's loader does).
					ld := NewList(fill)
					i := 0
					l.NodeCounts(func(c int, plain bool) bool {
						if plain {
							ld.AppendPlainNode(m[i])
						} else {
							ld.AppendNode(m[i:i+c], ListpackSizeOf(m[i:i+c]))
						}
						i += c
						return true
					})
					d := l.Dup().(*List)
					for j, x := range []*List{ld, d} {
						want := []*List{ref, l}[j] // uncompressed, or as l
						if len(nodesOf(x)) != len(nodesOf(l)) || x.Size(0) != want.Size(0) {
							t.Fatalf("depth %d fill %d step %d: %d nodes, size %d; want %d, %d", depth, fill, step, len(nodesOf(x)), x.Size(0), len(nodesOf(l)), want.Size(0))
						}
						for k := range nodesOf(x) {
							if a, b := nodesOf(x)[k], nodesOf(l)[k]; a.plain != b.plain || a.count != b.count || a.sz != b.sz {
								t.Fatalf("depth %d fill %d step %d: node %d %+v, want %+v", depth, fill, step, k, a, b)
							}
						}
					}
				}
			}
		}
	}
}

// TestQuicklistRepr: quicklistRepr's text of a list with a PLAIN node.
func TestQuicklistRepr(t *testing.T) {
	l := NewList(-2)
	l.SetPackedThreshold(5)
	for _, s := range []string{"a", "bb", "cccccc", "12"} {
		l.PushBack([]byte(s))
	}
	want := "{count : 4}\n{len : 3}\n{fill : -2}\n{compress : 0}\n{bookmark_count : 0}\n" +
		"{quicklist node(0)\n{container : PACKED, encoding: RAW, size: 14, count: 2, recompress: 0, attempted_compress: 0}\n" +
		"{quicklist node(1)\n{container : PLAIN, encoding: RAW, size: 6, count: 1, recompress: 0, attempted_compress: 0}\n" +
		"{quicklist node(2)\n{container : PACKED, encoding: RAW, size: 9, count: 1, recompress: 0, attempted_compress: 0}\n"
	if got := l.QuicklistRepr(false); got != want {
		t.Errorf("QuicklistRepr:\n%s\nwant\n%s", got, want)
	}
	if got := l.QuicklistRepr(true); !strings.Contains(got, "{ entry : cccccc }\n}\n") || !strings.Contains(got, "{ listpack:\n\ta\n\tbb\n}\n}\n") {
		t.Errorf("QuicklistRepr(full):\n%s", got)
	}
}
