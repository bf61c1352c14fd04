package keyspace

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"unsafe"
)

// smallListOps: pushes at both ends, pops, LSET, LINSERT, LREM, LTRIM, and
// nothing in one draw of 16.
var smallListOps = []listOpWeight{{opPushBack, 5}, {opPushFront, 3}, {opPopFront, 2}, {opPopBack, 1},
	{opSet, 1}, {opInsert, 1}, {opFilter, 1}, {opTrim, 1}}

// TestSmallListModel: lists that start small (and move to a listBody and
// back) against a plain slice and against the same operations on a list
// always held in a listBody: same elements, quicklist nodes, MEMORY USAGE,
// DEBUG OBJECT figures and node listpacks, at fills by count and by bytes.
func TestSmallListModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	elem := func() []byte {
		switch rng.IntN(5) {
		case 0:
			return []byte(strconv.Itoa(rng.IntN(1000) - 500))
		case 1:
			return bytes.Repeat([]byte("x"), rng.IntN(120))
		}
		return []byte("element-" + strconv.Itoa(rng.IntN(100)))
	}
	for _, fill := range []int{-2, -1, 1, 3, 8, 128} {
		smallSeen, bigSeen := false, false
		for round := 0; round < 200; round++ {
			l, ref := NewList(fill), NewList(fill)
			tw := &listTwin{l: l, ref: ref}
			for step := 0; step < 40; step++ {
				ref.grow()
				if err := tw.step(rng, 16, smallListOps, 2, elem); err != nil {
					t.Fatalf("fill %d step %d: %v", fill, step, err)
				}
				m := tw.m
				if l.listBody == nil {
					smallSeen = true
				} else {
					bigSeen = true
				}
				if l.Len() != len(m) {
					t.Fatalf("fill %d step %d: len %d, want %d", fill, step, l.Len(), len(m))
				}
				for i := range m {
					if !bytes.Equal(l.Index(i), m[i]) {
						t.Fatalf("fill %d step %d: [%d] = %q, want %q", fill, step, i, l.Index(i), m[i])
					}
				}
				if len(m) == 0 {
					continue
				}
				if err := checkList(l); err != nil {
					t.Fatalf("fill %d step %d: %v", fill, step, err)
				}
				if !slices.Equal(nodesOf(l), nodesOf(ref)) || l.Size(0) != ref.Size(0) {
					t.Fatalf("fill %d step %d: nodes %v size %d, in a listBody %v %d", fill, step, nodesOf(l), l.Size(0), nodesOf(ref), ref.Size(0))
				}
				a1, b1, c1, d1 := l.QuicklistStats()
				a2, b2, c2, d2 := ref.QuicklistStats()
				if a1 != a2 || b1 != b2 || c1 != c2 || d1 != d2 {
					t.Fatalf("fill %d step %d: QuicklistStats differ", fill, step)
				}
				if !bytes.Equal(l.AppendNodeListpack(nil, 0), ref.AppendNodeListpack(nil, 0)) {
					t.Fatalf("fill %d step %d: node 0's listpack differs", fill, step)
				}
				d := l.Dup().(*List)
				if err := checkList(d); err != nil || d.Size(0) != l.Size(0) || !bytes.Equal(d.Index(len(m)-1), m[len(m)-1]) {
					t.Fatalf("fill %d step %d: Dup: %v", fill, step, err)
				}
			}
		}
		if !smallSeen || !bigSeen {
			t.Errorf("fill %d: small form seen %v, listBody seen %v", fill, smallSeen, bigSeen)
		}
	}
}

// TestSmallListHeader: the header of a small list is one 48-byte
// allocation.
func TestSmallListHeader(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() {
		l := NewList(-2)
		for i := 0; i < 5; i++ {
			l.PushBack([]byte("element-" + strconv.Itoa(i%10)))
		}
	}); n > 6 {
		t.Errorf("%v allocations for a list of 5", n)
	}
	if s := unsafeSizeofList(); s > 48 {
		t.Errorf("List is %d bytes", s)
	}
}

func unsafeSizeofList() uintptr { return unsafe.Sizeof(List{}) }
