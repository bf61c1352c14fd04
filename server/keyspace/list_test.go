package keyspace

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// listModel checks a List against a plain slice through a random sequence
// of operations at both ends and in the middle.
func TestListOpsModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	l := NewList(-1) // 4 KB nodes: many of them
	var m [][]byte
	check := func(step int) {
		t.Helper()
		if l.Len() != len(m) {
			t.Fatalf("step %d: len %d, want %d", step, l.Len(), len(m))
		}
		// The shadow quicklist nodes account for every element.
		total := 0
		for _, nd := range nodesOf(l) {
			if nd.count <= 0 || nd.sz <= lpHdrSize+1 {
				t.Fatalf("step %d: node %+v", step, nd)
			}
			total += nd.count
		}
		if l.listBody != nil && len(l.nodes) > 0 && (l.nh+len(nodesOf(l)) > len(l.nbuf) || &l.nbuf[l.nh] != &nodesOf(l)[0]) {
			t.Fatalf("step %d: nodes are not nbuf[nh:]", step)
		}
		bytes := 0
		for _, nd := range nodesOf(l) {
			bytes += nd.sz - lpHdrSize - 1
		}
		want := 0
		for _, b := range m {
			want += lpEntrySizeB(b)
		}
		if bytes != want {
			t.Fatalf("step %d: nodes hold %d entry bytes, want %d", step, bytes, want)
		}
		if total != len(m) {
			t.Fatalf("step %d: nodes hold %d elements, want %d", step, total, len(m))
		}
		for i := range m {
			if string(l.Index(i)) != string(m[i]) {
				t.Fatalf("step %d: [%d] = %q, want %q", step, i, l.Index(i), m[i])
			}
		}
		if len(m) > 0 {
			if err := checkList(l); err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
		}
		// Backwards (the cursor steps back) and at random.
		for i := len(m) - 1; i >= 0; i -= 1 + rng.IntN(3) {
			if string(l.Index(i)) != string(m[i]) {
				t.Fatalf("step %d: backwards [%d] = %q, want %q", step, i, l.Index(i), m[i])
			}
		}
		for range min(len(m), 20) {
			i := rng.IntN(len(m))
			if string(l.Index(i)) != string(m[i]) {
				t.Fatalf("step %d: random [%d] = %q, want %q", step, i, l.Index(i), m[i])
			}
		}
	}
	for step := 0; step < 20000; step++ {
		v := []byte(strconv.Itoa(step))
		switch rng.IntN(40) {
		case 0, 1, 2, 3:
			v = make([]byte, rng.IntN(3000))
		case 4: // bigger than a chunk
			v = make([]byte, chunkMax+rng.IntN(3000))
		}
		if len(v) > 20 {
			for j := range v {
				v[j] = byte(rng.IntN(256))
			}
		}
		switch op := rng.IntN(9); {
		case op < 2:
			l.PushFront(v)
			m = append([][]byte{v}, m...)
		case op < 4:
			l.PushBack(v)
			m = append(m, v)
		case op == 4 && len(m) > 0:
			if got := l.PopFront(); string(got) != string(m[0]) {
				t.Fatalf("PopFront %q, want %q", got, m[0])
			}
			m = m[1:]
		case op == 5 && len(m) > 0:
			if got := l.PopBack(); string(got) != string(m[len(m)-1]) {
				t.Fatalf("PopBack %q, want %q", got, m[len(m)-1])
			}
			m = m[:len(m)-1]
		case op == 6:
			if len(m) == 0 {
				break
			}
			p, after := rng.IntN(len(m)), rng.IntN(2) == 0
			l.Insert(p, after, v)
			i := p
			if after {
				i++
			}
			m = append(m[:i], append([][]byte{v}, m[i:]...)...)
		case op == 7 && len(m) > 0:
			i := rng.IntN(len(m))
			l.Set(i, v)
			m[i] = v
		case op == 8 && len(m) > 0 && rng.IntN(20) == 0:
			s := rng.IntN(len(m))
			e := s + rng.IntN(len(m)-s)
			l.Trim(s, e)
			m = append([][]byte(nil), m[s:e+1]...)
		case op == 8 && rng.IntN(10) == 0:
			var keep [][]byte
			l.Filter(func(i int, b []byte) bool {
				ok := len(b)%2 == 0
				if ok {
					keep = append(keep, b)
				}
				return ok
			})
			m = keep
		}
		check(step)
	}
	// Dup is independent.
	d := l.Dup().(*List)
	if d.Len() > 0 {
		d.PushFront([]byte("dup"))
		d.Set(1, []byte("changed"))
		check(-1)
	}
}

// TestListSize: objectComputeSize of quicklists recorded from redis-server
// 7.0.15 (MEMORY USAGE minus the key's sds and dictEntry), lists built by
// RPUSH.
func TestListSize(t *testing.T) {
	build := func(fill int, elems ...string) *List {
		l := NewList(fill)
		for _, e := range elems {
			l.PushBack([]byte(e))
		}
		return l
	}
	rep := func(n int, s string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = s
		}
		return out
	}
	for _, tc := range []struct {
		name string
		l    *List
		want uint64
	}{
		// MEMORY USAGE one -> 144 for RPUSH one a: 144 - 8 (sds "one") - 24.
		{"one element", build(-2, "a"), 112},
		// RPUSH big 1 2 3 -> 144: 144 - 8 - 24.
		{"three integers", build(-2, "1", "2", "3"), 112},
		{"empty", NewList(-2), RobjSize + quicklistSize},
	} {
		if got := tc.l.Size(0); got != tc.want {
			t.Errorf("%s: Size %d, want %d", tc.name, got, tc.want)
		}
	}
	// Node packing: 8 KB listpacks for fill -2; 200 elements of 100 bytes
	// (103 bytes each in a listpack, 79 per node) make 3 nodes. Redis:
	// MEMORY USAGE big2 SAMPLES 0 = 21712, minus 8 + 24 for the key.
	l := build(-2, rep(200, string(make([]byte, 100)))...)
	if got := l.Size(0); got != 21680 {
		t.Errorf("200 x 100 bytes: Size %d, want 21680", got)
	}
	// A positive fill limits the entries per node (Redis, with
	// list-max-listpack-size 2: MEMORY USAGE f2 SAMPLES 0 = 200).
	l = build(2, "a", "b", "c")
	if got, want := l.Size(0), uint64(200-8-24); got != want {
		t.Errorf("fill 2: Size %d, want %d", got, want)
	}
	if lpEntrySizeB([]byte("127")) != 2 || lpEntrySizeB([]byte("-4096")) != 3 || lpEntrySizeB([]byte("007")) != 5 || lpEntrySizeB(make([]byte, 64)) != 67 {
		t.Error("lpEntrySize")
	}
}

// TestListChunks: the packed layout at scale: pushes fill chunks to
// chunkMax, a rotation on one list (LMOVE l l) pops into bytes the caller
// owns, Dup copies, and concurrent readers share the cursor.
func TestListChunks(t *testing.T) {
	l := NewList(-2)
	const n = 100000
	for i := range n {
		if i%2 == 0 {
			l.PushBack([]byte("value:" + strconv.Itoa(i)))
		} else {
			l.PushFront([]byte("value:" + strconv.Itoa(i)))
		}
	}
	want := func(i int) string { // element i of the list built above
		h := n / 2 // elements pushed at the front: odd values, last first
		if i < h {
			return "value:" + strconv.Itoa(n-1-2*i)
		}
		return "value:" + strconv.Itoa(2*(i-h))
	}
	if err := checkList(l); err != nil {
		t.Fatal(err)
	}
	bytes := 0
	for k := range l.ch {
		bytes += len(l.ch[k].b)
	}
	if data := n * entrySize(len("value:12345")); bytes > data+data/8 || len(l.ch) > bytes/chunkMax+2 {
		t.Errorf("%d elements of about %d bytes take %d bytes in %d chunks", n, data, bytes, len(l.ch))
	}
	for i := range n {
		if got := string(l.Index(i)); got != want(i) {
			t.Fatalf("[%d] = %q, want %q", i, got, want(i))
		}
	}
	// LMOVE l l RIGHT LEFT, n times: back where it started.
	for range n {
		v := l.PopBack()
		l.PushFront(v)
		if string(v) != string(l.Index(0)) {
			t.Fatalf("moved %q, the head is %q", v, l.Index(0))
		}
	}
	if err := checkList(l); err != nil {
		t.Fatal(err)
	}
	d := l.Dup().(*List)
	for i := range n {
		d.Set(i, []byte("x"))
	}
	if err := checkList(d); err != nil {
		t.Fatal(err)
	}
	// Concurrent sequential readers (a snapshot and the server).
	done := make(chan string, 2)
	for g := range 2 {
		go func() {
			for i := range n {
				j := i
				if g == 1 {
					j = n - 1 - i
				}
				if got := string(l.Index(j)); got != want(j) {
					done <- "[" + strconv.Itoa(j) + "] = " + got + ", want " + want(j)
					return
				}
			}
			done <- ""
		}()
	}
	for range 2 {
		if msg := <-done; msg != "" {
			t.Fatal(msg)
		}
	}
	if string(d.Index(n/2)) != "x" || l.Len() != n {
		t.Fatal("Dup is not independent")
	}
	// Draining gives the chunk array back.
	for i := range n - 10 {
		if got := string(l.PopFront()); got != want(i) {
			t.Fatalf("pop %d: %q, want %q", i, got, want(i))
		}
	}
	if err := checkList(l); err != nil || len(l.cbuf) > 64 {
		t.Fatalf("%v; %d chunks in an array of %d", err, len(l.ch), len(l.cbuf))
	}
}
