package keyspace

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// TestListRange checks Range against Index on every (start, end) sample of
// small lists, chunked lists and compressed ones, with pushes at both ends
// and a middle insert, and that a false return stops the walk.
func TestListRange(t *testing.T) {
	rng := rand.New(rand.NewPCG(24, 1))
	for _, depth := range []int{0, 1} {
		for _, n := range []int{0, 1, 3, 20, 700, 5000} {
			l := NewList(-2)
			l.SetCompressDepth(depth)
			for i := 0; i < n; i++ {
				v := []byte("e" + strconv.Itoa(i) + strings.Repeat("x", rng.IntN(40)))
				if rng.IntN(2) == 0 {
					l.PushFront(v)
				} else {
					l.PushBack(v)
				}
			}
			if n > 2 {
				l.Insert(n/2, true, []byte("middle"))
			}
			want := make([][]byte, l.Len())
			for i := range want {
				want[i] = bytes.Clone(l.Index(i))
			}
			for trial := 0; trial < 50 && l.Len() > 0; trial++ {
				s := rng.IntN(l.Len())
				e := s + rng.IntN(l.Len()-s)
				if trial == 0 {
					s, e = 0, l.Len()-1
				}
				i := s
				l.Range(s, e, func(b []byte) bool {
					if !bytes.Equal(b, want[i]) {
						t.Fatalf("depth %d n %d: Range(%d, %d) element %d = %q, want %q", depth, n, s, e, i, b, want[i])
					}
					i++
					return true
				})
				if i != e+1 {
					t.Fatalf("depth %d n %d: Range(%d, %d) stopped at %d", depth, n, s, e, i)
				}
				stop := s + (e-s)/2
				i = s
				l.Range(s, e, func([]byte) bool { i++; return i <= stop })
				if i != stop+1 {
					t.Fatalf("depth %d n %d: Range(%d, %d) did not stop after %d: %d", depth, n, s, e, stop, i)
				}
			}
		}
	}
}
