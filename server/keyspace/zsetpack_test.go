package keyspace

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// zsetElems is the set's elements in order.
func zsetElems(z *ZSet) []zel {
	var out []zel
	z.ForEach(func(m string, s float64) bool { out = append(out, zel{m, s}); return true })
	return out
}

// zelsEqual compares element lists, scores as float64s (a listpack's 0 and
// a skiplist's -0 are equal).
func zelsEqual(a, b []zel) bool {
	return slices.EqualFunc(a, b, func(x, y zel) bool { return x.m == y.m && x.s == y.s })
}

// TestZSetListpackAgainstSkiplist is a property test of the packed encoding:
// random ZADD-like sets, removals, range removals and reads on a listpack
// and on a skiplist, which must agree on every answer; keyspace's check
// holds for both throughout, a Dup taken along the way keeps its elements,
// and the listpack equals, byte for byte, the one a conversion of the
// skiplist builds.
func TestZSetListpackAgainstSkiplist(t *testing.T) {
	scores := []float64{math.Inf(-1), -1e300, -(1 << 50), -(1 << 48), -(1<<48 - 1), -1000, -1.5, -1,
		math.Copysign(0, -1), 0, 0.25, 1, 2, 3, 127, 128, 1 << 21, 1<<48 - 1, 1 << 48, 1e20, math.MaxFloat64, math.Inf(1)}
	cfg := DefaultEncodingConfig()
	cfg.ZSetMaxListpackEntries, cfg.ZSetMaxListpackValue = 1<<20, 1<<20
	for seed := uint64(0); seed < 40; seed++ {
		rng := rand.New(rand.NewPCG(seed, 99))
		lp, sk := NewZSet(true), NewZSet(false)
		nm := 5 + rng.IntN(60)
		lexOnly := seed%4 == 0 // every score 0: lex ranges are well defined on both
		member := func() string {
			switch rng.IntN(20) {
			case 0:
				return ""
			case 1:
				return strings.Repeat("x", rng.IntN(200))
			case 2:
				return strconv.Itoa(rng.IntN(300) - 100) // an integer member
			}
			return "m" + strconv.Itoa(rng.IntN(nm))
		}
		top := 1000.0
		score := func() float64 {
			if lexOnly {
				return 0
			}
			if rng.IntN(4) == 0 { // increasing: mostly last, appended in place
				top += float64(rng.IntN(3))
				return top
			}
			if rng.IntN(3) == 0 {
				return float64(rng.IntN(20) - 5)
			}
			return scores[rng.IntN(len(scores))]
		}
		lexBound := func() (string, bool, bool, bool) { // value, exclusive, inf, other end's inf
			switch rng.IntN(8) {
			case 0:
				return "", false, true, false
			case 1:
				return "", false, false, true
			}
			return member(), rng.IntN(2) == 0, false, false
		}
		var dups []*ZSet
		var dupElems [][]zel
		for op := 0; op < 600; op++ {
			switch k := rng.IntN(14); {
			case k < 6:
				m, s := member(), score()
				set := (*ZSet).Set
				if op%2 == 0 {
					set = func(z *ZSet, m string, s float64) bool { return z.SetB([]byte(m), s) }
				}
				if a, b := set(lp, m, s), set(sk, m, s); a != b {
					t.Fatalf("seed %d op %d: Set(%q, %v) new %v / %v", seed, op, m, s, a, b)
				}
			case k < 8:
				m := member()
				if a, b := lp.Remove([]byte(m)), sk.Remove([]byte(m)); a != b {
					t.Fatalf("seed %d op %d: Remove(%q) %v / %v", seed, op, m, a, b)
				}
			case k == 8:
				r := ScoreRange{Min: score(), Max: score(), MinEx: rng.IntN(2) == 0, MaxEx: rng.IntN(2) == 0}
				if rng.IntN(3) > 0 {
					if a, b := lp.CountByScore(r), sk.CountByScore(r); a != b {
						t.Fatalf("seed %d op %d: CountByScore(%+v) %d / %d", seed, op, r, a, b)
					}
					break
				}
				if a, b := lp.RemoveRangeByScore(r), sk.RemoveRangeByScore(r); a != b {
					t.Fatalf("seed %d op %d: RemoveRangeByScore(%+v) %d / %d", seed, op, r, a, b)
				}
			case k == 9 && lexOnly:
				var r LexRange
				r.Min, r.MinEx, r.MinInf, r.MinPlus = lexBound()
				r.Max, r.MaxEx, r.MaxInf, r.MaxMinus = lexBound()
				if rng.IntN(3) > 0 {
					if a, b := lp.CountByLex(r), sk.CountByLex(r); a != b {
						t.Fatalf("seed %d op %d: CountByLex(%+v) %d / %d", seed, op, r, a, b)
					}
					for _, rev := range []bool{false, true} {
						off, lim := rng.IntN(4), rng.IntN(6)-1
						var a, b []zel
						lp.RangeByLex(r, rev, off, lim, func(m string, s float64) bool { a = append(a, zel{m, s}); return true })
						sk.RangeByLex(r, rev, off, lim, func(m string, s float64) bool { b = append(b, zel{m, s}); return true })
						if !zelsEqual(a, b) {
							t.Fatalf("seed %d op %d: RangeByLex(%+v, rev %v, %d, %d)\n %v\n %v", seed, op, r, rev, off, lim, a, b)
						}
					}
					break
				}
				if a, b := lp.RemoveRangeByLex(r), sk.RemoveRangeByLex(r); a != b {
					t.Fatalf("seed %d op %d: RemoveRangeByLex(%+v) %d / %d", seed, op, r, a, b)
				}
			case k == 10 && lp.Len() > 0:
				a, b := rng.IntN(lp.Len()), rng.IntN(lp.Len())
				a, b = min(a, b), max(a, b)
				if rng.IntN(4) == 0 {
					if x, y := lp.RemoveRangeByRank(a, b), sk.RemoveRangeByRank(a, b); x != y || x != b-a+1 {
						t.Fatalf("seed %d op %d: RemoveRangeByRank(%d, %d) %d / %d", seed, op, a, b, x, y)
					}
					break
				}
				for _, rev := range []bool{false, true} {
					var x, y []zel
					lp.ByRank(a, b, rev, func(m string, s float64) bool { x = append(x, zel{m, s}); return len(x) < 7 })
					sk.ByRank(a, b, rev, func(m string, s float64) bool { y = append(y, zel{m, s}); return len(y) < 7 })
					if !zelsEqual(x, y) {
						t.Fatalf("seed %d op %d: ByRank(%d, %d, %v)\n %v\n %v", seed, op, a, b, rev, x, y)
					}
				}
			case k == 11:
				r := ScoreRange{Min: score(), Max: score(), MinEx: rng.IntN(2) == 0, MaxEx: rng.IntN(2) == 0}
				for _, rev := range []bool{false, true} {
					off, lim := rng.IntN(4), rng.IntN(6)-1
					var a, b []zel
					lp.RangeByScore(r, rev, off, lim, func(m string, s float64) bool { a = append(a, zel{m, s}); return true })
					sk.RangeByScore(r, rev, off, lim, func(m string, s float64) bool { b = append(b, zel{m, s}); return true })
					if !zelsEqual(a, b) {
						t.Fatalf("seed %d op %d: RangeByScore(%+v, rev %v, %d, %d)\n %v\n %v", seed, op, r, rev, off, lim, a, b)
					}
				}
			case k == 12:
				dups = append(dups, lp.Dup().(*ZSet))
				dupElems = append(dupElems, zsetElems(lp))
			default:
				m := member()
				s1, ok1 := lp.Score([]byte(m))
				s2, ok2 := sk.Score([]byte(m))
				r1, rok1 := lp.Rank([]byte(m), op%2 == 0)
				r2, rok2 := sk.Rank([]byte(m), op%2 == 0)
				if ok1 != ok2 || s1 != s2 || rok1 != rok2 || r1 != r2 {
					t.Fatalf("seed %d op %d: Score/Rank(%q) %v %v %d %v / %v %v %d %v", seed, op, m, s1, ok1, r1, rok1, s2, ok2, r2, rok2)
				}
				if lp.Len() > 0 {
					// Both draw one index: the same element.
					m1, s1 := lp.Random(rand.New(rand.NewPCG(seed, uint64(op))))
					m2, s2 := sk.Random(rand.New(rand.NewPCG(seed, uint64(op))))
					if m1 != m2 || s1 != s2 {
						t.Fatalf("seed %d op %d: Random %q %v / %q %v", seed, op, m1, s1, m2, s2)
					}
				}
				var scanned []zel
				if c := lp.Scan(0, 1, func(m string, s float64) { scanned = append(scanned, zel{m, s}) }); c != 0 || !slices.Equal(scanned, zsetElems(lp)) {
					t.Fatalf("seed %d op %d: a listpack's Scan is not the whole set in one call", seed, op)
				}
			}
			if lp.Len() != sk.Len() {
				t.Fatalf("seed %d op %d: Len %d / %d", seed, op, lp.Len(), sk.Len())
			}
			if op%25 == 0 || op == 599 {
				if a, b := zsetElems(lp), zsetElems(sk); !zelsEqual(a, b) {
					t.Fatalf("seed %d op %d: elements differ\n %v\n %v", seed, op, a, b)
				}
				if lp.Len() > 0 {
					if err := checkZSet(lp, cfg); err != nil {
						t.Fatalf("seed %d op %d: listpack: %v", seed, op, err)
					}
					if err := checkZSet(sk, cfg); err != nil {
						t.Fatalf("seed %d op %d: skiplist: %v", seed, op, err)
					}
				}
				// The skiplist converted back is the same buffer.
				c := sk.Dup().(*ZSet)
				c.ConvertToListpackIfNeeded(cfg)
				if c.IsListpack() != true || string(c.lpBuf()) != string(lp.lpBuf()) || c.Len() != lp.Len() {
					t.Fatalf("seed %d op %d: converted skiplist's buffer differs", seed, op)
				}
				if c.Size(0) != lp.Size(0) {
					t.Fatalf("seed %d op %d: Size %d / %d", seed, op, c.Size(0), lp.Size(0))
				}
				// And the listpack converted is the skiplist.
				d := lp.Dup().(*ZSet)
				d.ConvertToSkiplist()
				if d.IsListpack() || !zelsEqual(zsetElems(d), zsetElems(sk)) {
					t.Fatalf("seed %d op %d: converted listpack differs", seed, op)
				}
			}
		}
		for i, d := range dups {
			if !slices.Equal(zsetElems(d), dupElems[i]) {
				t.Fatalf("seed %d: Dup %d changed with the original", seed, i)
			}
		}
	}
}

// TestZSetListpackStringsStayValid: the members a listpack hands out are
// views into its buffer, whose entries are never written again: they keep
// their bytes through the set's later changes (ZPOPMIN replies with a
// member it has removed) and appends in place, and a Dup (a copy of the
// buffer) is unaffected.
func TestZSetListpackStringsStayValid(t *testing.T) {
	z := NewZSet(true)
	for i := 0; i < 10; i++ {
		z.Set("member-"+strconv.Itoa(i), float64(i))
	}
	var held []string
	z.ByRank(0, 9, false, func(m string, _ float64) bool { held = append(held, m); return true })
	d := z.Dup().(*ZSet)
	if d.p == z.p {
		t.Fatal("Dup shares the buffer")
	}
	for i := 10; i < 20; i++ { // last: in place while the size class has room
		z.Set("m"+strconv.Itoa(i), float64(i))
	}
	for i := 0; i < 10; i++ {
		z.Remove([]byte("member-" + strconv.Itoa(i)))
		z.Set("other-"+strconv.Itoa(i), float64(-i))
		z.Set("other-0", float64(i*3))
	}
	for i, m := range held {
		if m != "member-"+strconv.Itoa(i) {
			t.Fatalf("held member %d is now %q", i, m)
		}
	}
	if d.Len() != 10 || len(zsetElems(d)) != 10 {
		t.Fatal("the Dup changed")
	}
	if err := checkZSet(d, DefaultEncodingConfig()); err != nil {
		t.Fatal(err)
	}
}

// TestZSetListpackLayout: the buffer of 5 members of 8 bytes with integer
// scores below 2^21 is 61 bytes (a 64-byte allocation) behind a 16-byte
// header, and the score forms round-trip exactly.
func TestZSetListpackLayout(t *testing.T) {
	if s := unsafe.Sizeof(ZSet{}); s != 16 {
		t.Fatalf("ZSet header %d bytes, want 16", s)
	}
	z := NewZSet(true)
	for j := 0; j < 5; j++ {
		z.Set("member-"+strconv.Itoa(j), float64(999995+j))
	}
	if n := len(z.lpBuf()); n != 61 {
		t.Fatalf("buffer %d bytes, want 61", n)
	}
	for _, s := range []float64{0, 1, -1, 127, 128, -(1 << 47), 1<<48 - 1, 1 << 48, -(1 << 48), 0.1, -2.5, 1e300,
		math.Inf(1), math.Inf(-1), math.SmallestNonzeroFloat64, math.MaxFloat64} {
		b := zpAppend(nil, "m", s)
		if len(b) != zpEntrySize(1, s) {
			t.Fatalf("%v: entry %d bytes, zpEntrySize %d", s, len(b), zpEntrySize(1, s))
		}
		m, got, next := zpNext(b, 0)
		if m != "m" || got != s || math.Signbit(got) != math.Signbit(s) || next != len(b) {
			t.Fatalf("%v read back as %q %v (%d of %d bytes)", s, m, got, next, len(b))
		}
	}
	// -0 is stored as the integer 0.
	if _, got, _ := zpNext(zpAppend(nil, "m", math.Copysign(0, -1)), 0); math.Signbit(got) {
		t.Fatal("-0 kept its sign")
	}
}

// TestZSetListpackAppendInPlace: a member going last is written into the
// buffer's size class in place (no new allocation) while it fits and
// lpBytes keeps its width, and the buffer is byte for byte the one a
// rebuild makes.
func TestZSetListpackAppendInPlace(t *testing.T) {
	z := NewZSet(true)
	z.Set("member-0", 100)
	moves := 0
	classes := map[int]bool{}
	for j := 1; j < 100; j++ {
		p := z.p
		before := len(z.lpBuf())
		z.SetB([]byte("member-"+strconv.Itoa(j)), float64(100+j))
		n := len(z.lpBuf())
		classes[zpCap(n)] = true
		if z.p != p {
			moves++
		} else if n > zpCap(before) {
			t.Fatalf("member %d: %d bytes in place in a buffer of %d", j, n, zpCap(before))
		}
		var ms [][]byte
		var ss []float64
		z.ForEach(func(m string, s float64) bool { ms, ss = append(ms, []byte(m)), append(ss, s); return true })
		w, _ := NewZSetListpack(ms, ss)
		if string(w.lpBuf()) != string(z.lpBuf()) {
			t.Fatalf("member %d: buffer differs from a rebuild", j)
		}
	}
	// A new buffer only per size class reached (and once as lpBytes gets a
	// second byte): 32 for 99 appends up to 1.4 KB, not 99.
	if moves > len(classes)+1 {
		t.Fatalf("%d new buffers for 99 appends through %d size classes", moves, len(classes))
	}
	if err := checkZSet(z, DefaultEncodingConfig()); err != nil {
		t.Fatal(err)
	}
}

// TestNewZSetListpack: the RDB loader's bulk build sorts the elements,
// refuses a repeated member, and equals the set built one Set at a time.
func TestNewZSetListpack(t *testing.T) {
	ms := [][]byte{[]byte("c"), []byte("a"), []byte("b"), []byte("d")}
	ss := []float64{1, 2, 1, 0.5}
	z, ok := NewZSetListpack(ms, ss)
	if !ok {
		t.Fatal("refused distinct members")
	}
	w := NewZSet(true)
	for i := range ms {
		w.Set(string(ms[i]), ss[i])
	}
	if string(z.lpBuf()) != string(w.lpBuf()) || z.Len() != 4 {
		t.Fatalf("bulk build %v, one by one %v", zsetElems(z), zsetElems(w))
	}
	if _, ok := NewZSetListpack([][]byte{[]byte("a"), []byte("b"), []byte("a")}, []float64{1, 2, 3}); ok {
		t.Fatal("accepted a repeated member")
	}
}
