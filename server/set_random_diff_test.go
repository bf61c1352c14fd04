package server

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/vigil-kv/vigil/internal/resp"
)

// TestSetDifferentialRandom sends a seeded random stream of set commands
// (valid and invalid arguments, members around the intset limits and
// set-max-intset-entries so that conversions happen, a string key for
// WRONGTYPE, MULTI blocks) to Vigil and to redis-server 7.0.15 and
// compares every reply: exactly where Redis's order is deterministic
// (intsets), as sets where it follows Redis's hash seed. SPOP and
// SRANDMEMBER pick different members on each server: their replies are
// checked for shape, size, membership and duplicates, and after an SPOP
// both servers are resynchronised on Redis's set (DEL + SADD sent to
// both). At the end the propagated streams are compared (the members of
// SPOP's SREMs aside) and so are every key's encoding, members and
// MEMORY USAGE (of intsets: a hashtable's depends on the hash seed).
func TestSetDifferentialRandom(t *testing.T) {
	forDiffSeeds(t, 6, testSetDifferentialRandom) // diffharness_test.go
}

func testSetDifferentialRandom(t *testing.T, seed uint64) {
	h := newDiffHarness(t, nil)
	ts := h.ts
	side := h.side(2)
	rc, rbr, c := side.rc, side.rbr, side.vc
	rng := rand.New(rand.NewPCG(2026, seed))
	const limit = 20
	for _, cmd := range [][]string{{"CONFIG", "SET", "set-max-intset-entries", strconv.Itoa(limit)}} {
		rawDo(t, rc, rbr, cmd...)
		ts.do(c, cmd...)
	}
	h.begin(side)
	keys := []string{"s1", "s2", "s3", "s4", "str", "nokey"}
	setKeys := keys[:4]
	key := func() string { return keys[rng.IntN(len(keys))] }
	setKey := func() string { return setKeys[rng.IntN(len(setKeys))] }
	member := func() string {
		switch rng.IntN(12) {
		case 0:
			return []string{"a", "b", "c", "d", "e", "", "x y"}[rng.IntN(7)]
		case 1:
			return []string{"01", "-0", "+1", " 1", "1.0", "9223372036854775808"}[rng.IntN(6)]
		case 2:
			return []string{"32767", "32768", "-32768", "-32769", "2147483647", "2147483648", "-2147483649",
				"9223372036854775807", "-9223372036854775808"}[rng.IntN(9)]
		}
		return strconv.Itoa(rng.IntN(40) - 5)
	}
	members := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = member()
		}
		return out
	}
	count := func() string {
		switch rng.IntN(15) {
		case 0:
			return []string{"x", "", "-0", "1.5", "9223372036854775807"}[rng.IntN(5)]
		case 1:
			return "-" + strconv.Itoa(1+rng.IntN(30))
		}
		return strconv.Itoa(rng.IntN(30))
	}
	keyList := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = key()
		}
		return out
	}
	// det generates a command whose reply is deterministic up to the
	// order of a hashtable's members.
	det := func() []string {
		switch rng.IntN(20) {
		case 0, 1, 2, 3:
			return append([]string{"SADD", setKey()}, members(1+rng.IntN(6))...)
		case 4:
			// Enough integers to cross set-max-intset-entries.
			args := []string{"SADD", setKey()}
			for n := 10 + rng.IntN(15); n > 0; n-- {
				args = append(args, strconv.Itoa(rng.IntN(60)))
			}
			return args
		case 5, 6:
			return append([]string{"SREM", key()}, members(1+rng.IntN(4))...)
		case 7:
			return []string{"SMOVE", key(), key(), member()}
		case 8:
			return []string{"SISMEMBER", key(), member()}
		case 9:
			return append([]string{"SMISMEMBER", key()}, members(1+rng.IntN(3))...)
		case 10:
			return []string{"SCARD", key()}
		case 11:
			return []string{"SMEMBERS", key()}
		case 12:
			return append([]string{[]string{"SINTER", "SUNION", "SDIFF"}[rng.IntN(3)]}, keyList(1+rng.IntN(3))...)
		case 13, 14:
			name := []string{"SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE"}[rng.IntN(3)]
			return append([]string{name, key()}, keyList(1+rng.IntN(3))...)
		case 15:
			n := 1 + rng.IntN(3)
			args := append([]string{"SINTERCARD", strconv.Itoa(n)}, keyList(n)...)
			switch rng.IntN(5) {
			case 0:
				args = append(args, "LIMIT", count())
			case 1:
				args[1] = []string{"0", "x", "9"}[rng.IntN(3)]
			}
			return args
		case 16:
			return []string{"OBJECT", "ENCODING", key()}
		case 17:
			return []string{[]string{"DEL", "TYPE", "EXPIRETIME"}[rng.IntN(3)], key()}
		case 18:
			return []string{"PEXPIREAT", key(), "4102444800000"}
		}
		return []string{"COPY", key(), key(), "REPLACE"}
	}
	do := func(args ...string) (redis, vigil string) { return h.both(side, args...) }
	fail := func(i int, args []string, format string, a ...any) {
		t.Helper()
		h.fatalf("command %d %q: "+format, append([]any{i, args}, a...)...)
	}
	encoding := func(k string) string { return ts.do(c, "OBJECT", "ENCODING", k) }
	// ordered reports whether Redis's reply to args has a deterministic
	// order: every existing source set is an intset (and a union or
	// difference small enough to stay one).
	ordered := func(args []string) bool {
		var srcs []string
		switch strings.ToUpper(args[0]) {
		case "SMEMBERS", "SINTER", "SUNION", "SDIFF":
			srcs = args[1:]
		default:
			return true
		}
		for _, k := range srcs {
			if enc := encoding(k); strings.Contains(enc, "hashtable") {
				return false
			}
		}
		return true
	}
	compare := func(i int, args []string, exact bool, want, got string) {
		if exact {
			if got != want {
				w, _ := render(want)
				g, _ := render(got)
				fail(i, args, "\n vigil: %s\n redis: %s", g, w)
			}
			return
		}
		if w, g := sortedRender(t, want), sortedRender(t, got); w != g {
			fail(i, args, "(as sets)\n vigil: %s\n redis: %s", g, w)
		}
	}
	smembers := func() (string, []string) {
		k := setKey()
		_, got := do("SMEMBERS", k)
		v := parseReply(t, got)
		var ms []string
		for _, e := range v.Elems {
			ms = append(ms, e.Str)
		}
		return k, ms
	}
	compared := 0
	for i := 0; i < 2500; i++ {
		switch r := rng.IntN(20); {
		case r < 2: // SPOP
			k, before := smembers()
			args := []string{"SPOP", k}
			if rng.IntN(3) > 0 {
				args = append(args, count())
			}
			want, got := do(args...)
			checkRandomReply(t, i, args, want, got, before, false, fail)
			// Resynchronise on Redis's set when the pops differed.
			wantM, gotM := do("SMEMBERS", k)
			if sortedRender(t, wantM) != sortedRender(t, gotM) {
				resync := []string{"SADD", k}
				for _, e := range parseReply(t, wantM).Elems {
					resync = append(resync, e.Str)
				}
				do("DEL", k)
				if len(resync) > 2 {
					do(resync...)
				}
			}
		case r < 4: // SRANDMEMBER
			k, before := smembers()
			args := []string{"SRANDMEMBER", k}
			if rng.IntN(4) > 0 {
				args = append(args, count())
			}
			want, got := do(args...)
			checkRandomReply(t, i, args, want, got, before, true, fail)
		case r < 5: // SSCAN
			k := key()
			opts := []string{}
			if rng.IntN(2) == 0 {
				opts = append(opts, "COUNT", []string{"1", "3", "100", "0", "x"}[rng.IntN(5)])
			}
			if rng.IntN(3) == 0 {
				opts = append(opts, "MATCH", []string{"1*", "*", "[a-c]", "?"}[rng.IntN(4)])
			}
			if strings.Contains(encoding(k), "hashtable") {
				want := scanAll(t, func(cur string) string { return rawDo(t, rc, rbr, append([]string{"SSCAN", k, cur}, opts...)...) })
				got := scanAll(t, func(cur string) string { return ts.do(c, append([]string{"SSCAN", k, cur}, opts...)...) })
				if want != got {
					fail(i, append([]string{"SSCAN", k}, opts...), "full scan\n vigil: %s\n redis: %s", got, want)
				}
				continue
			}
			args := append([]string{"SSCAN", k, "0"}, opts...)
			want, got := do(args...)
			compare(i, args, true, want, got)
		case r < 6: // MULTI with deterministic-reply commands
			do("MULTI")
			for n := 1 + rng.IntN(3); n > 0; n-- {
				args := det()
				switch strings.ToUpper(args[0]) {
				case "SMEMBERS", "SINTER", "SUNION", "SDIFF":
					args = []string{"SCARD", args[1]}
				}
				do(args...)
			}
			want, got := do("EXEC")
			compare(i, []string{"EXEC"}, true, want, got)
		default:
			args := det()
			exact := ordered(args)
			want, got := do(args...)
			if op := strings.ToUpper(args[0]); (op == "SUNION" || op == "SDIFF") && len(parseReply(t, want).Elems) > limit {
				exact = false // the result set became a hashtable
			}
			compare(i, args, exact, want, got)
		}
		compared++
		if i%200 == 199 {
			do("SET", "str", "v") // keep a WRONGTYPE key around
		}
	}
	checkSetAOF(t, h.aof, ts, h.mark, h.history)
	for _, k := range keys {
		for _, cmd := range [][]string{{"OBJECT", "ENCODING", k}, {"SCARD", k}, {"TYPE", k}} {
			want, got := do(cmd...)
			compare(-1, cmd, true, want, got)
		}
		want, got := do("SMEMBERS", k)
		compare(-1, []string{"SMEMBERS", k}, !strings.Contains(encoding(k), "hashtable"), want, got)
		// A hashtable's size counts the buckets of both tables while it
		// rehashes, and how many incremental steps a rehash takes depends
		// on how the hash seed spreads the members: only intsets are
		// deterministic.
		if strings.Contains(encoding(k), "intset") {
			want, got := do("MEMORY", "USAGE", k)
			compare(-1, []string{"MEMORY", "USAGE", k}, true, want, got)
		}
	}
	t.Logf("%d random set commands answered as redis-server does", compared)
}

// sortedRender renders a reply with the elements of an aggregate sorted.
func sortedRender(t *testing.T, raw string) string {
	t.Helper()
	v := parseReply(t, raw)
	if v.Kind == resp.KindArray || v.Kind == resp.KindSet {
		slices.SortFunc(v.Elems, func(a, b resp.Value) int { return strings.Compare(renderValue(a), renderValue(b)) })
	}
	return renderValue(v)
}

// scanAll runs an SSCAN to its end and returns the sorted distinct
// members, or the first error reply.
func scanAll(t *testing.T, do func(cursor string) string) string {
	t.Helper()
	seen := map[string]bool{}
	cur := "0"
	for n := 0; ; n++ {
		v := parseReply(t, do(cur))
		if v.Kind != resp.KindArray || len(v.Elems) != 2 {
			return renderValue(v)
		}
		for _, e := range v.Elems[1].Elems {
			seen[e.Str] = true
		}
		cur = v.Elems[0].Str
		if cur == "0" || n > 10000 {
			break
		}
	}
	out := make([]string, 0, len(seen))
	for m := range seen {
		out = append(out, m)
	}
	slices.Sort(out)
	return strings.Join(out, ",")
}

// checkRandomReply compares replies of SPOP/SRANDMEMBER, whose members are
// random: same error or kind and size, members of the set as it was
// before (before), distinct unless SRANDMEMBER's count is negative.
func checkRandomReply(t *testing.T, i int, args []string, want, got string, before []string, srand bool, fail func(int, []string, string, ...any)) {
	t.Helper()
	w, g := parseReply(t, want), parseReply(t, got)
	if w.Kind != g.Kind || len(w.Elems) != len(g.Elems) || (w.Kind == resp.KindError && w.Str != g.Str) {
		wr, gr := renderValue(w), renderValue(g)
		fail(i, args, "\n vigil: %s\n redis: %s", gr, wr)
	}
	if w.Kind == resp.KindError || w.Kind == resp.KindNull {
		return
	}
	elems := g.Elems
	if g.Kind == resp.KindBulk {
		elems = []resp.Value{g}
	}
	distinct := !(srand && len(args) == 3 && strings.HasPrefix(args[2], "-"))
	seen := map[string]bool{}
	for _, e := range elems {
		if !slices.Contains(before, e.Str) {
			fail(i, args, "vigil replied %q, not a member of %q", e.Str, before)
		}
		if distinct && seen[e.Str] {
			fail(i, args, "vigil replied %q twice", e.Str)
		}
		seen[e.Str] = true
	}
}

// checkSetAOF is aofOracle.check with the members of SREM commands left
// out: SPOP propagates the members it picked at random, which differ
// between the servers (the resynchronisation after it is compared in
// full).
func checkSetAOF(t *testing.T, o *aofOracle, ts *testServer, m aofMark, history []string) {
	t.Helper()
	want := parseAOF(t, o.incr(t)[m.redis:])
	ts.s.mu.Lock()
	got := parseAOF(t, m.rec.Bytes()[m.vigil:])
	ts.s.mu.Unlock()
	if len(want) == 0 {
		t.Fatal("the oracle's AOF recorded nothing")
	}
	eq := func(a, b [][]byte) bool {
		if len(a) == 3 && len(b) == 3 && string(a[0]) == "SREM" && string(b[0]) == "SREM" {
			return string(a[1]) == string(b[1])
		}
		return aofCommandEqual(a, b)
	}
	for i := 0; i < min(len(want), len(got)); i++ {
		if !eq(want[i], got[i]) {
			t.Fatalf("propagated stream differs at command %d:\n redis: %s\n vigil: %s\nredis:\n%s\nvigil:\n%s\nlast commands:\n%s",
				i, fmtCmd(want[i]), fmtCmd(got[i]), around(want, i), around(got, i), strings.Join(history, "\n"))
		}
	}
	if len(want) != len(got) {
		t.Fatalf("propagated stream: redis has %d commands, vigil %d", len(want), len(got))
	}
}
