package keyspace

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

func setMembers(s *Set) []string {
	var out []string
	s.Range(func(m Member) bool {
		out = append(out, m.String())
		return true
	})
	return out
}

// TestSetIntsetToHashtable: an intset stays sorted, widens its elements
// and converts for good on a non-integer or past the limit (setTypeAdd).
func TestSetIntsetToHashtable(t *testing.T) {
	s := NewSetFor([]byte("3"))
	for _, m := range []string{"3", "-1", "2", "2"} {
		s.Add([]byte(m), 4)
	}
	if s.Encoding() != EncodingIntset || s.Len() != 3 {
		t.Fatalf("encoding %v len %d", s.Encoding(), s.Len())
	}
	if got := setMembers(s); !slices.Equal(got, []string{"-1", "2", "3"}) {
		t.Fatalf("order %q", got)
	}
	if got := s.Size(0); got != RobjSize+16 { // 8 + 2*3 rounded by jemalloc
		t.Errorf("Size %d", got)
	}
	s.Add([]byte("100000"), 4)
	if got := s.Size(0); got != RobjSize+JemallocSize(8+4*4) {
		t.Errorf("Size after widening %d", got)
	}
	if s.Add([]byte("01"), 4); s.Encoding() != EncodingHashtable {
		t.Fatal("a non-canonical integer must convert")
	}
	s.Remove([]byte("01"))
	if s.Encoding() != EncodingHashtable || !s.Contains([]byte("100000")) || s.Contains([]byte("01")) {
		t.Fatal("conversion is one-way and keeps the members")
	}
	over := NewIntSet()
	for i := 0; i < 5; i++ {
		over.Add([]byte(strconv.Itoa(i)), 4)
	}
	if over.Encoding() != EncodingHashtable || over.Len() != 5 {
		t.Fatalf("past the limit: %v %d", over.Encoding(), over.Len())
	}
	if NewSetFor([]byte("a")).Encoding() != EncodingHashtable {
		t.Fatal("setTypeCreate of a string")
	}
}

// TestSetDupIndependent: COPY's duplicate shares nothing.
func TestSetDupIndependent(t *testing.T) {
	for _, first := range []string{"1", "a"} {
		s := NewSetFor([]byte(first))
		s.Add([]byte(first), 512)
		s.Add([]byte("7"), 512)
		d := s.Dup().(*Set)
		d.Add([]byte("8"), 512)
		s.Remove([]byte("7"))
		if d.Encoding() != s.Encoding() || !d.Contains([]byte("7")) || s.Contains([]byte("8")) || d.Len() != 3 {
			t.Fatalf("%s: dup shares state: %q vs %q", first, setMembers(d), setMembers(s))
		}
	}
}

// TestSetRandomAndScan: random members are members; a full SSCAN of a
// hashtable sees every member.
func TestSetRandomAndScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	s := NewSetFor([]byte("m0"))
	want := map[string]bool{}
	for i := 0; i < 300; i++ {
		k := "m" + strconv.Itoa(i)
		s.Add([]byte(k), 512)
		want[k] = true
	}
	for i := 0; i < 100; i++ {
		m := s.Random(rng)
		if !want[m.String()] {
			t.Fatalf("random %q is not a member", m.String())
		}
		s.RemoveMember(m)
		delete(want, m.String())
	}
	seen := map[string]bool{}
	for cur := s.Scan(0, func(m string) { seen[m] = true }); cur != 0; {
		cur = s.Scan(cur, func(m string) { seen[m] = true })
	}
	if len(seen) != len(want) || s.Len() != len(want) {
		t.Fatalf("scan saw %d, set has %d, want %d", len(seen), s.Len(), len(want))
	}
	for k := range want {
		if !seen[k] {
			t.Fatalf("scan missed %q", k)
		}
	}
}
