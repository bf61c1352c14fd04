package keyspace

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// TestOrdMapRandom checks the ordered map against a sorted slice model
// over random inserts, replacements and deletes (chunks split and empty).
func TestOrdMapRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	m := newOrdMap[StreamID, int](cmpID)
	model := map[StreamID]int{}
	for i := 0; i < 20000; i++ {
		id := StreamID{uint64(rng.IntN(300)), uint64(rng.IntN(3))}
		switch rng.IntN(3) {
		case 0, 1:
			_, had := model[id]
			if m.Set(id, i) == had {
				t.Fatalf("Set(%v) new=%v, model had it: %v", id, !had, had)
			}
			model[id] = i
		case 2:
			_, had := model[id]
			if m.Delete(id) != had {
				t.Fatalf("Delete(%v) != %v", id, had)
			}
			delete(model, id)
		}
		if m.Len() != len(model) {
			t.Fatalf("Len %d, model %d", m.Len(), len(model))
		}
		if i%500 == 0 {
			var keys []StreamID
			for k := range model {
				keys = append(keys, k)
			}
			slices.SortFunc(keys, cmpID)
			from := StreamID{uint64(rng.IntN(300)), 0}
			var got, want []StreamID
			m.Ascend(from, func(k StreamID, v int) bool {
				if model[k] != v {
					t.Fatalf("value of %v: %d, model %d", k, v, model[k])
				}
				got = append(got, k)
				return true
			})
			for _, k := range keys {
				if k.Cmp(from) >= 0 {
					want = append(want, k)
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("Ascend(%v): %v, want %v", from, got, want)
			}
			for _, c := range m.chunks {
				if len(c.keys) == 0 || len(c.keys) > ordChunkMax {
					t.Fatalf("chunk of %d keys", len(c.keys))
				}
			}
		}
	}
}

// TestStreamNodes: entries fill nodes up to stream-node-max-entries and
// -bytes (counting deleted entries), a node goes with its last live entry,
// node byte sizes stay what lpBytes would say (checkStream), and ranges
// skip deleted entries.
func TestStreamNodes(t *testing.T) {
	cfg := DefaultEncodingConfig()
	cfg.StreamNodeMaxEntries = 3
	s := NewStream()
	for i := 1; i <= 10; i++ {
		fv := [][]byte{[]byte("f"), []byte(strconv.Itoa(i))}
		if i%4 == 0 {
			fv = [][]byte{[]byte("other"), []byte("x"), []byte("f"), []byte("y")}
		}
		if _, err := s.Add(fv, &StreamID{uint64(i), 0}, true, 0, cfg); err != nil {
			t.Fatal(err)
		}
		if err := checkStream(s); err != nil {
			t.Fatal(err)
		}
	}
	if s.NumNodes() != 4 || s.Len() != 10 {
		t.Fatalf("%d nodes, %d entries; want 4, 10", s.NumNodes(), s.Len())
	}
	if _, err := s.Add(nil, &StreamID{10, 0}, true, 0, cfg); err != ErrStreamID {
		t.Fatalf("an ID not after the top: %v", err)
	}
	if n := s.Delete([]StreamID{{1, 0}, {2, 0}, {3, 0}, {5, 0}, {99, 0}}); n != 4 {
		t.Fatalf("deleted %d, want 4", n)
	}
	if s.NumNodes() != 3 || s.FirstID() != (StreamID{4, 0}) || s.MaxDeletedID() != (StreamID{5, 0}) {
		t.Fatalf("after XDEL: %d nodes, first %v, max deleted %v", s.NumNodes(), s.FirstID(), s.MaxDeletedID())
	}
	var ids []uint64
	s.Range(StreamID{}, MaxStreamID, false, func(_ *StreamNode, e *StreamEntry) bool { ids = append(ids, e.ID.Ms); return true })
	if !slices.Equal(ids, []uint64{4, 6, 7, 8, 9, 10}) {
		t.Fatalf("range %v", ids)
	}
	// ~ removes whole nodes only: [4 6] goes, [7 8 9] would leave 1 < 2.
	if n := s.Trim(StreamTrim{Strategy: TrimMaxLen, MaxLen: 2, Approx: true}); n != 2 || s.NumNodes() != 2 {
		t.Fatalf("approximate trim removed %d, %d nodes left", n, s.NumNodes())
	}
	if err := checkStream(s); err != nil {
		t.Fatal(err)
	}
	d := s.Dup().(*Stream)
	d.Delete([]StreamID{{10, 0}})
	if s.Len() != 4 || d.Len() != 3 || checkStream(s) != nil || checkStream(d) != nil {
		t.Fatalf("a copy's change shows in the original: %d %d", s.Len(), d.Len())
	}
}
