package keyspace

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

type zel struct {
	m string
	s float64
}

func zmodelSort(m map[string]float64) []zel {
	var out []zel
	for k, v := range m {
		out = append(out, zel{k, v})
	}
	slices.SortFunc(out, func(a, b zel) int {
		switch {
		case a.s < b.s:
			return -1
		case a.s > b.s:
			return 1
		case a.m < b.m:
			return -1
		case a.m > b.m:
			return 1
		}
		return 0
	})
	return out
}

// checkSpans verifies the skiplist's invariants: order, backward links,
// tail, and that every span equals the ranks it skips.
func checkSpans(t *testing.T, z *ZSet) {
	t.Helper()
	sl := z.sl()
	if sl == nil {
		return // a listpack
	}
	l := &sl.zsl
	rank := map[*zslNode]int{l.header: 0}
	i := 0
	var prev *zslNode
	for n := l.header.lv(0).forward; n != nil; n = n.lv(0).forward {
		i++
		rank[n] = i
		if n.backward != prev {
			t.Fatalf("backward link of %q broken", n.member)
		}
		if prev != nil && !zless(prev.score, prev.member, n.score, n.member) {
			t.Fatalf("order broken at %q", n.member)
		}
		prev = n
	}
	if l.tail != prev || i != l.length || sl.dict.len() != i {
		t.Fatalf("tail/length broken: length %d, walked %d, dict %d", l.length, i, sl.dict.len())
	}
	for n := range rank {
		for lv := 0; lv < int(n.nlevel) && (n != l.header || lv < l.level); lv++ {
			f := n.lv(lv).forward
			want := l.length - rank[n]
			if f != nil {
				want = rank[f] - rank[n]
			}
			if f == nil && n.lv(lv).span == 0 {
				continue
			}
			if int(n.lv(lv).span) != want {
				t.Fatalf("span of %q level %d = %d, want %d", n.member, lv, n.lv(lv).span, want)
			}
		}
	}
}

// TestZSetModel runs random operations on a ZSet and a map model and
// compares ranks, ranges, counts and removals.
func TestZSetModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	z := NewZSet(true)
	model := map[string]float64{}
	for i := 0; i < 5000; i++ {
		m := "m" + strconv.Itoa(rng.IntN(300))
		s := float64(rng.IntN(50))
		switch rng.IntN(6) {
		case 0, 1, 2:
			_, had := model[m]
			if isNew := z.Set(m, s); isNew == had {
				t.Fatalf("Set(%q) new = %v, model had it: %v", m, isNew, had)
			}
			model[m] = s
		case 3:
			_, had := model[m]
			if z.Remove([]byte(m)) != had {
				t.Fatalf("Remove(%q) disagrees", m)
			}
			delete(model, m)
		case 4:
			r := ScoreRange{Min: float64(rng.IntN(50)), Max: float64(rng.IntN(50)), MinEx: rng.IntN(2) == 0}
			want := 0
			for _, v := range model {
				if r.gteMin(v) && r.lteMax(v) {
					want++
				}
			}
			if r.Empty() {
				want = 0
			}
			if got := z.CountByScore(r); got != want {
				t.Fatalf("CountByScore(%+v) = %d, want %d", r, got, want)
			}
			if i%7 == 0 {
				if got := z.RemoveRangeByScore(r); got != want {
					t.Fatalf("RemoveRangeByScore = %d, want %d", got, want)
				}
				for k, v := range model {
					if !r.Empty() && r.gteMin(v) && r.lteMax(v) {
						delete(model, k)
					}
				}
			}
		case 5:
			if len(model) > 0 && i%11 == 0 {
				a, b := rng.IntN(len(model)), rng.IntN(len(model))
				a, b = min(a, b), max(a, b)
				sorted := zmodelSort(model)
				if got := z.RemoveRangeByRank(a, b); got != b-a+1 {
					t.Fatalf("RemoveRangeByRank(%d, %d) = %d", a, b, got)
				}
				for _, e := range sorted[a : b+1] {
					delete(model, e.m)
				}
			}
		}
		if i%97 == 0 {
			checkSpans(t, z)
			sorted := zmodelSort(model)
			for r, e := range sorted {
				if got, ok := z.Rank([]byte(e.m), false); !ok || got != r {
					t.Fatalf("Rank(%q) = %d, %v; want %d", e.m, got, ok, r)
				}
				if got, _ := z.Rank([]byte(e.m), true); got != len(sorted)-1-r {
					t.Fatalf("reverse Rank(%q) = %d", e.m, got)
				}
			}
			var got []zel
			if len(sorted) > 0 {
				z.ByRank(0, len(sorted)-1, false, func(m string, s float64) bool { got = append(got, zel{m, s}); return true })
			}
			if !slices.Equal(got, sorted) {
				t.Fatalf("ByRank walk differs from the model")
			}
		}
	}
	if z.Len() != len(model) {
		t.Fatalf("Len %d, model %d", z.Len(), len(model))
	}
}

// TestZSetLexAndDup: lex ranges over equal scores, and Dup's independence.
func TestZSetLexAndDup(t *testing.T) {
	z := NewZSet(true)
	for _, m := range []string{"a", "b", "c", "d", "e"} {
		z.Set(m, 0)
	}
	r := LexRange{Min: "b", Max: "d", MaxEx: true}
	if n := z.CountByLex(r); n != 2 {
		t.Fatalf("CountByLex [b (d = %d", n)
	}
	var got []string
	z.RangeByLex(LexRange{MinInf: true, MaxInf: true}, true, 1, 2, func(m string, _ float64) bool { got = append(got, m); return true })
	if !slices.Equal(got, []string{"d", "c"}) {
		t.Fatalf("RangeByLex - + REV LIMIT 1 2 = %v", got)
	}
	d := z.Dup().(*ZSet)
	d.Remove([]byte("a"))
	d.Set("z", 1)
	if z.Len() != 5 || d.Len() != 5 {
		t.Fatalf("lens %d %d", z.Len(), d.Len())
	}
	if _, ok := z.Score([]byte("z")); ok {
		t.Fatal("Dup shares state")
	}
	checkSpans(t, d)
	// -0 is stored as 0 in a listpack, kept in a skiplist.
	z.Set("neg", negZero())
	if s, _ := z.Score([]byte("neg")); D2String(s) != "0" {
		t.Fatalf("listpack -0 = %s", D2String(s))
	}
	z.ConvertToSkiplist()
	z.Set("neg2", negZero())
	if s, _ := z.Score([]byte("neg2")); D2String(s) != "-0" {
		t.Fatalf("skiplist -0 = %s", D2String(s))
	}
}

func negZero() float64 {
	z := 0.0
	return -z
}

// TestZSetScanGuarantee: a skiplist ZSCAN returns every element present for
// the whole iteration exactly once, while others are added and removed.
func TestZSetScanGuarantee(t *testing.T) {
	z := NewZSet(false)
	for i := 0; i < 500; i++ {
		z.Set("k"+strconv.Itoa(i), float64(i))
	}
	seen := map[string]int{}
	var cursor uint64
	n := 0
	for {
		cursor = z.Scan(cursor, 7, func(m string, _ float64) { seen[m]++ })
		z.Set("new"+strconv.Itoa(n), 1)
		z.Remove([]byte("new" + strconv.Itoa(n-3)))
		n++
		if cursor == 0 {
			break
		}
	}
	for i := 0; i < 500; i++ {
		if c := seen["k"+strconv.Itoa(i)]; c != 1 {
			t.Fatalf("k%d seen %d times", i, c)
		}
	}
}

// TestZSetListpackSize: objectComputeSize of a listpack; redis-server
// 7.0.15 reports MEMORY USAGE 176 for it under the key "mu" (the key's sds
// and dictEntry add 32: testdata/scripts/zset.txt checks it live).
func TestZSetListpackSize(t *testing.T) {
	z := NewZSet(true)
	for _, e := range []zel{{"a", 1}, {"b", 2}, {"c", 3.5}, {"d", 0}, {"e", 100000}, {"ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff", 0.1}} {
		z.Set(e.m, e.s)
	}
	if got := z.Size(0); got != 144 {
		t.Fatalf("Size = %d, want 144", got)
	}
}

// TestZSetUpdateScore: a score change keeps the member's node
// (zslUpdateScore), in place when its neighbours allow it and relinked
// otherwise, with the spans, order and index intact either way.
func TestZSetUpdateScore(t *testing.T) {
	z := NewZSet(false)
	for i := 0; i < 200; i++ {
		z.Set("m"+strconv.Itoa(i), float64(i*10))
	}
	sl := z.sl()
	node := sl.dict.getS("m50")
	cases := []struct {
		score float64
		rank  int
	}{
		{505, 50},   // between m49 (490) and m51 (510): in place
		{491, 50},   // in place again
		{510, 50},   // ties m51's score ("m50" < "m51"): relinked at the same rank
		{-1, 0},     // to the head
		{5000, 199}, // to the tail
		{1995, 199}, // the tail, in place
		{0, 1},      // ties m0 ("m0" < "m50")
		{0.5, 1},    // between m0 and m1 (10), in place
	}
	for _, c := range cases {
		before := sl.zsl.length
		z.Set("m50", c.score)
		if sl.dict.getS("m50") != node {
			t.Fatalf("score %v: the member's node changed", c.score)
		}
		if s, _ := z.Score([]byte("m50")); s != c.score || sl.zsl.length != before {
			t.Fatalf("score %v: Score = %v, length %d", c.score, s, sl.zsl.length)
		}
		if r, _ := z.Rank([]byte("m50"), false); r != c.rank {
			t.Fatalf("score %v: rank %d, want %d", c.score, r, c.rank)
		}
		checkSpans(t, z)
		if err := checkZSet(z, DefaultEncodingConfig()); err != nil {
			t.Fatalf("score %v: %v", c.score, err)
		}
	}
}

// TestZslRandomLevel: level k+1 comes with probability 1/4^k * 3/4
// (ZSKIPLIST_P), capped at 32.
func TestZslRandomLevel(t *testing.T) {
	const n = 1 << 20
	var count [zslMaxLevel + 1]int
	for i := 0; i < n; i++ {
		l := zslRandomLevel()
		if l < 1 || l > zslMaxLevel {
			t.Fatalf("level %d", l)
		}
		count[l]++
	}
	// Within 6 standard deviations: the test does not flake.
	for l, want := 1, 0.75; l <= 4; l, want = l+1, want/4 {
		got := float64(count[l]) / n
		if sd := math.Sqrt(want * (1 - want) / n); math.Abs(got-want) > 6*sd {
			t.Errorf("level %d: frequency %.5f, want %.5f", l, got, want)
		}
	}
}

// TestZSetScoresTiedInFloat32: the walks decide from each level's cached
// float32 score and read the node only on a tie of the rounded scores;
// scores that differ but round to the same float32 (2^30 + k, k < 64),
// beyond float32's range (rounded to infinity), infinities and -0 must
// still order as float64s. Random adds, score changes and removals against
// a model, with keyspace.Check's invariants (cached scores included).
func TestZSetScoresTiedInFloat32(t *testing.T) {
	scores := []float64{math.Inf(-1), -1e300, -1e39, math.Copysign(0, -1), 0, 1, 1.0000001, 1.00000011920929,
		1 << 30, 1<<30 + 1, 1<<30 + 2, 1<<30 + 63, 1<<30 + 64, 1e39, 1e300, math.MaxFloat64, math.Inf(1)}
	rng := rand.New(rand.NewPCG(3, 4))
	z := NewZSet(false)
	model := map[string]float64{}
	for i := 0; i < 20000; i++ {
		m := "m" + strconv.Itoa(rng.IntN(400))
		if rng.IntN(4) == 0 {
			z.Remove([]byte(m))
			delete(model, m)
		} else {
			s := scores[rng.IntN(len(scores))]
			z.Set(m, s)
			model[m] = s
		}
		if i%500 == 0 || i == 19999 {
			checkZSetModel(t, z, model, i)
		}
	}
}

// TestZSetFindSetFoundModel: ZADD's path (Find, then SetFound with its
// ref, a conversion to skiplist possibly in between) against a model, with
// score changes in both directions, onto ties and in place, so that
// updateScore's single interleaved walk (updateWalk) moves nodes of every
// level over each other; the skiplist's invariants (spans, cached scores,
// backward links, the index) are checked as it goes.
func TestZSetFindSetFoundModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	z := NewZSet(true)
	model := map[string]float64{}
	for i := 0; i < 60000; i++ {
		m := []byte("m" + strconv.Itoa(rng.IntN(3000)))
		s := float64(rng.IntN(2000)) / 4
		if rng.IntN(10) == 0 {
			if z.Remove(m) != (func() bool { _, ok := model[string(m)]; return ok })() {
				t.Fatalf("op %d: Remove(%q) disagrees", i, m)
			}
			delete(model, string(m))
			continue
		}
		cur, ref, ok := z.Find(m)
		want, had := model[string(m)]
		if ok != had || ok && cur != want {
			t.Fatalf("op %d: Find(%q) = %v, %v; model %v, %v", i, m, cur, ok, want, had)
		}
		if !ok && z.IsListpack() && z.Len()+1 > 128 {
			z.ConvertToSkiplist() // as zsetAddFound: ref is then stale
		}
		if isNew := z.SetFound(ref, m, s); isNew == had {
			t.Fatalf("op %d: SetFound(%q) new = %v, model had it: %v", i, m, isNew, had)
		}
		model[string(m)] = s
		if i%2000 == 0 || i == 59999 {
			checkZSetModel(t, z, model, i)
		}
	}
	if z.IsListpack() {
		t.Fatal("the set never converted to a skiplist")
	}
}

// checkZSetModel checks z after op i: its invariants (checkZSet, when not
// empty), its spans, and every member's rank against the model's order.
func checkZSetModel(t *testing.T, z *ZSet, model map[string]float64, i int) {
	t.Helper()
	if len(model) > 0 {
		if err := checkZSet(z, DefaultEncodingConfig()); err != nil {
			t.Fatalf("op %d: %v", i, err)
		}
	}
	checkSpans(t, z)
	for r, e := range zmodelSort(model) {
		if got, ok := z.Rank([]byte(e.m), false); !ok || got != r {
			t.Fatalf("op %d: Rank(%q) = %d, %v; want %d", i, e.m, got, ok, r)
		}
	}
}

// TestZSetListpackInPlaceModel: ZADD's and ZREM's in-place writes of a
// listpack (SetFound, RemoveArg: lpSplice) against a model, on a set that
// stays a listpack: new members at every position, score changes that
// move a member up and down (onto ties, and from an integer score to a
// float and back, so that the entry changes size), removals, members of
// 0 to 43 bytes (a header of one or two bytes) and sizes that cross
// lpBytes's one-byte width and the buffer's size classes. After every op
// the buffer must be byte for byte the one NewZSetListpack builds from the
// model (the packed form is canonical), and member strings read before a
// plain write (SetB, Remove) must still read the same after it.
func TestZSetListpackInPlaceModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	scores := []float64{math.Inf(-1), -3.5, -1, math.Copysign(0, -1), 0, 1, 2, 2.25, 1 << 40, 1e300, math.Inf(1)}
	for round := 0; round < 4; round++ {
		z := NewZSet(true)
		model := map[string]float64{}
		maxMembers := []int{3, 12, 60, 120}[round]
		for i := 0; i < 30000; i++ {
			k := rng.IntN(maxMembers)
			m := []byte("m" + strconv.Itoa(k) + strings.Repeat("x", k*7%41))
			if k == 0 {
				m = nil
			}
			s := scores[rng.IntN(len(scores))]
			if rng.IntN(3) == 0 {
				s = float64(rng.IntN(1<<20)) - 1<<19
			}
			switch op := rng.IntN(10); {
			case op < 4:
				_, had := model[string(m)]
				if z.RemoveArg(m) != had {
					t.Fatalf("round %d op %d: RemoveArg(%q) disagrees with the model (%v)", round, i, m, had)
				}
				delete(model, string(m))
			case op < 5:
				// A plain write keeps the views handed out before it.
				var views, want []string
				z.ForEach(func(m string, _ float64) bool {
					views = append(views, m)
					want = append(want, strings.Clone(m))
					return true
				})
				if rng.IntN(2) == 0 {
					z.SetB(m, s)
					model[string(m)] = s
				} else {
					z.Remove(m)
					delete(model, string(m))
				}
				for j := range views {
					if views[j] != want[j] {
						t.Fatalf("round %d op %d: a view read %q, now %q", round, i, want[j], views[j])
					}
				}
			default:
				cur, ref, ok := z.Find(m)
				want, had := model[string(m)]
				if ok != had || ok && cur != want {
					t.Fatalf("round %d op %d: Find(%q) = %v, %v; model %v, %v", round, i, m, cur, ok, want, had)
				}
				if isNew := z.SetFound(ref, m, s); isNew == had {
					t.Fatalf("round %d op %d: SetFound(%q) new = %v, model had it: %v", round, i, m, isNew, had)
				}
				model[string(m)] = s
			}
			if !z.IsListpack() {
				t.Fatal("converted")
			}
			if z.Len() != len(model) {
				t.Fatalf("round %d op %d: %d members, model %d", round, i, z.Len(), len(model))
			}
			var members [][]byte
			var ss []float64
			for m, s := range model {
				members = append(members, []byte(m))
				ss = append(ss, s)
			}
			w, _ := NewZSetListpack(members, ss)
			if got, want := z.lpBuf(), w.lpBuf(); string(got) != string(want) {
				t.Fatalf("round %d op %d: buffer\n%q\nwant\n%q", round, i, got, want)
			}
			if i%1000 == 0 {
				checkZSetModel(t, z, model, i)
			}
		}
	}
}

// TestZSetUpdateScoreRoundedTiesModel: score changes in a skiplist set
// whose scores differ below float32's precision (1 + k*1e-9, which round
// to the same float32) as well as by more, so that updateScore's check of
// whether a node keeps its place decides both from the cached rounded
// score of the next node and, on a rounded tie, from its exact score;
// ranks and invariants against a model.
func TestZSetUpdateScoreRoundedTiesModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	z := NewZSet(false)
	model := map[string]float64{}
	for i := 0; i < 40000; i++ {
		m := []byte("m" + strconv.Itoa(rng.IntN(400)))
		s := 1 + float64(rng.IntN(64))*1e-9
		if rng.IntN(4) == 0 {
			s = float64(rng.IntN(8))
		}
		_, ref, _ := z.Find(m)
		z.SetFound(ref, m, s)
		model[string(m)] = s
		if i%1000 == 0 || i == 39999 {
			checkZSetModel(t, z, model, i)
		}
	}
}
