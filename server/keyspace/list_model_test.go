package keyspace

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
)

// listOp is one kind of operation of the random list model tests.
type listOp int

const (
	opPushFront listOp = iota
	opPushBack
	opPopFront
	opPopBack
	opSet
	opInsert
	opFilter
	opTrim
)

// listOpWeight is how many of the draws pick op.
type listOpWeight struct {
	op listOp
	w  int
}

// listTwin holds two lists that go through the same random operations and
// the slice of elements both must hold (the model).
type listTwin struct {
	l, ref *List
	m      [][]byte
}

// step draws n := rng.IntN(draws) and applies the operation whose share of
// the weights (in order) holds n, if any, to l, ref and the model: pops,
// LSET, LINSERT and LREM only on a non-empty list, LTRIM of up to trim-1
// elements from each end only on more than two. It reports a pop that does
// not return the model's element.
func (w *listTwin) step(rng *rand.Rand, draws int, ops []listOpWeight, trim int, elem func() []byte) error {
	n := rng.IntN(draws)
	op := listOp(-1)
	for _, o := range ops {
		if n < o.w {
			op = o.op
			break
		}
		n -= o.w
	}
	m := w.m
	switch {
	case op == opPushFront:
		b := elem()
		w.l.PushFront(b)
		w.ref.PushFront(b)
		w.m = append([][]byte{b}, m...)
	case op == opPushBack:
		b := elem()
		w.l.PushBack(b)
		w.ref.PushBack(b)
		w.m = append(m, b)
	case op == opPopFront && len(m) > 0:
		if !bytes.Equal(w.l.PopFront(), m[0]) || !bytes.Equal(w.ref.PopFront(), m[0]) {
			return fmt.Errorf("PopFront")
		}
		w.m = m[1:]
	case op == opPopBack && len(m) > 0:
		if !bytes.Equal(w.l.PopBack(), m[len(m)-1]) || !bytes.Equal(w.ref.PopBack(), m[len(m)-1]) {
			return fmt.Errorf("PopBack")
		}
		w.m = m[:len(m)-1]
	case op == opSet && len(m) > 0:
		i, b := rng.IntN(len(m)), elem()
		w.l.Set(i, b)
		w.ref.Set(i, b)
		m[i] = b
	case op == opInsert && len(m) > 0:
		p, after, b := rng.IntN(len(m)), rng.IntN(2) == 0, elem()
		w.l.Insert(p, after, b)
		w.ref.Insert(p, after, b)
		if after {
			p++
		}
		w.m = slices.Insert(m, p, b)
	case op == opFilter && len(m) > 0:
		x := m[rng.IntN(len(m))]
		keep := func(_ int, b []byte) bool { return !bytes.Equal(b, x) }
		w.l.Filter(keep)
		w.ref.Filter(keep)
		w.m = slices.DeleteFunc(m, func(b []byte) bool { return bytes.Equal(b, x) })
	case op == opTrim && len(m) > 2:
		a := rng.IntN(trim)
		z := len(m) - 1 - rng.IntN(trim)
		if a <= z {
			w.l.Trim(a, z)
			w.ref.Trim(a, z)
			w.m = m[a : z+1]
		}
	}
	return nil
}
