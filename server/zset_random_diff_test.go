package server

import (
	"bufio"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/vigil-kv/vigil/internal/resp"
)

// TestZSetDifferentialRandom sends a seeded random stream of sorted set
// commands (valid and invalid arguments, a few keys and a string for
// WRONGTYPE, sets near zset-max-listpack-entries/-value so conversions
// happen, some inside MULTI) to Vigil and to a live redis-server, compares
// every reply, then the propagated streams (Redis's AOF) and each key's
// OBJECT ENCODING. Replies whose order depends on Redis's dict or its
// random generator (ZRANDMEMBER, ZSCAN of a skiplist) are compared as
// multisets or by length.
func TestZSetDifferentialRandom(t *testing.T) {
	forDiffSeeds(t, 0, testZSetDifferentialRandom) // diffharness_test.go
}

func testZSetDifferentialRandom(t *testing.T, seed uint64) {
	if testing.Short() {
		t.Skip("starts redis-server")
	}
	dial, aof := startRedisAOF(t)
	for _, proto := range []int{2, 3} {
		t.Run("RESP"+strconv.Itoa(proto), func(t *testing.T) {
			h := newDiffHarnessOn(t, dial, aof, nil)
			ts := h.ts
			side := h.side(proto)
			rc, rbr, c := side.rc, side.rbr, side.vc
			rng := rand.New(rand.NewPCG(2026+seed, uint64(proto)))
			keys := []string{"z1", "z2", "z3", "s"}
			key := func() string { return keys[rng.IntN(len(keys))] }
			member := func() string {
				switch rng.IntN(40) {
				case 0:
					return strings.Repeat("m", 60+rng.IntN(10)) // around zset-max-listpack-value
				case 1:
					return ""
				}
				return "m" + strconv.Itoa(rng.IntN(160))
			}
			score := func() string {
				switch rng.IntN(25) {
				case 0:
					return []string{"x", "nan", "inf", "-inf", "+inf", "1e400", "", " 1", "0x10", "1.5e-7", "-0", "1e20"}[rng.IntN(12)]
				case 1, 2:
					return strconv.FormatFloat(rng.Float64()*10, 'g', -1, 64)
				}
				return strconv.Itoa(rng.IntN(50) - 10)
			}
			bound := func() string {
				switch rng.IntN(12) {
				case 0:
					return []string{"-inf", "+inf", "x", "(", "(x", "inf", ""}[rng.IntN(7)]
				case 1, 2:
					return "(" + strconv.Itoa(rng.IntN(50)-10)
				}
				return strconv.Itoa(rng.IntN(50) - 10)
			}
			lex := func() string {
				switch rng.IntN(8) {
				case 0:
					return []string{"-", "+", "x", "", "-a"}[rng.IntN(5)]
				case 1, 2:
					return "(" + member()
				}
				return "[" + member()
			}
			idx := func() string {
				if rng.IntN(20) == 0 {
					return []string{"x", "1.5", "9223372036854775807", "-9223372036854775808"}[rng.IntN(4)]
				}
				return strconv.Itoa(rng.IntN(200) - 60)
			}
			gen := func() []string {
				switch rng.IntN(24) {
				case 0, 1, 2, 3, 4:
					args := []string{"ZADD", key()}
					for _, f := range []string{"NX", "XX", "GT", "LT", "CH", "INCR"} {
						if rng.IntN(10) == 0 {
							args = append(args, f)
						}
					}
					for n := 1 + rng.IntN(4); n > 0; n-- {
						args = append(args, score(), member())
					}
					if rng.IntN(30) == 0 {
						args = args[:len(args)-1]
					}
					return args
				case 5:
					return []string{"ZINCRBY", key(), score(), member()}
				case 6:
					args := []string{"ZREM", key()}
					for n := 1 + rng.IntN(3); n > 0; n-- {
						args = append(args, member())
					}
					return args
				case 7:
					return []string{[]string{"ZSCORE", "ZRANK", "ZREVRANK"}[rng.IntN(3)], key(), member()}
				case 8:
					return []string{"ZMSCORE", key(), member(), member()}
				case 9:
					return []string{[]string{"ZCARD", "TYPE"}[rng.IntN(2)], key()}
				case 10:
					return []string{"ZCOUNT", key(), bound(), bound()}
				case 11:
					// Lex ranges on "lx" only, whose scores are all 0 (with mixed
					// scores Redis's answer depends on its skiplist's random levels).
					switch rng.IntN(4) {
					case 0:
						return []string{"ZLEXCOUNT", "lx", lex(), lex()}
					case 1:
						return []string{"ZREMRANGEBYLEX", "lx", lex(), lex()}
					}
					args := []string{"ZADD", "lx"}
					for n := 1 + rng.IntN(6); n > 0; n-- {
						args = append(args, "0", member())
					}
					return args
				case 12, 13:
					var args []string
					switch rng.IntN(4) {
					case 0:
						args = []string{"ZRANGE", key(), idx(), idx()}
					case 1:
						args = []string{"ZRANGE", key(), bound(), bound(), "BYSCORE"}
					case 2:
						args = []string{"ZRANGE", "lx", lex(), lex(), "BYLEX"}
					default:
						args = []string{"ZRANGESTORE", key(), key(), idx(), idx()}
					}
					if rng.IntN(3) == 0 {
						args = append(args, "REV")
					}
					if rng.IntN(3) == 0 {
						args = append(args, "WITHSCORES")
					}
					if rng.IntN(3) == 0 {
						args = append(args, "LIMIT", strconv.Itoa(rng.IntN(5)-1), strconv.Itoa(rng.IntN(10)-2))
					}
					return args
				case 14:
					switch rng.IntN(5) {
					case 0:
						return []string{"ZREVRANGE", key(), idx(), idx(), "WITHSCORES"}
					case 1:
						return []string{"ZRANGEBYSCORE", key(), bound(), bound(), "WITHSCORES"}
					case 2:
						return []string{"ZREVRANGEBYSCORE", key(), bound(), bound(), "LIMIT", "1", "3"}
					case 3:
						return []string{"ZRANGEBYLEX", "lx", lex(), lex()}
					}
					return []string{"ZREVRANGEBYLEX", "lx", lex(), lex(), "LIMIT", "0", "5"}
				case 15:
					switch rng.IntN(3) {
					case 0:
						return []string{"ZREMRANGEBYRANK", key(), idx(), idx()}
					case 1:
						return []string{"ZREMRANGEBYSCORE", key(), bound(), bound()}
					}
					return []string{"ZREMRANGEBYLEX", "lx", lex(), lex()}
				case 16:
					args := []string{[]string{"ZPOPMIN", "ZPOPMAX"}[rng.IntN(2)], key()}
					if rng.IntN(2) == 0 {
						args = append(args, strconv.Itoa(rng.IntN(6)-1))
					}
					return args
				case 17:
					args := []string{"ZMPOP", "2", key(), key(), []string{"MIN", "MAX", "bad"}[rng.IntN(3)]}
					if rng.IntN(2) == 0 {
						args = append(args, "COUNT", strconv.Itoa(rng.IntN(5)))
					}
					return args
				case 18, 19:
					op := []string{"ZUNION", "ZINTER", "ZDIFF", "ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE", "ZINTERCARD"}[rng.IntN(7)]
					args := []string{op}
					if strings.HasSuffix(op, "STORE") {
						args = append(args, key())
					}
					args = append(args, "2", key(), key())
					if op != "ZDIFF" && op != "ZDIFFSTORE" && op != "ZINTERCARD" {
						if rng.IntN(2) == 0 {
							args = append(args, "WEIGHTS", score(), score())
						}
						if rng.IntN(2) == 0 {
							args = append(args, "AGGREGATE", []string{"SUM", "MIN", "MAX"}[rng.IntN(3)])
						}
					}
					if op == "ZINTERCARD" && rng.IntN(2) == 0 {
						args = append(args, "LIMIT", strconv.Itoa(rng.IntN(4)))
					}
					if !strings.HasSuffix(op, "STORE") && op != "ZINTERCARD" && rng.IntN(2) == 0 {
						args = append(args, "WITHSCORES")
					}
					return args
				case 20:
					args := []string{"ZRANDMEMBER", key()}
					if rng.IntN(4) > 0 {
						args = append(args, strconv.Itoa(rng.IntN(400)-200))
						if rng.IntN(2) == 0 {
							args = append(args, "WITHSCORES")
						}
					}
					return args
				case 21:
					return []string{"ZSCAN", key(), "0", "COUNT", "1000"}
				case 22:
					return []string{"OBJECT", "ENCODING", key()}
				}
				return []string{"ZREMRANGEBYSCORE", key(), "(20", "+inf"}
			}
			h.begin(side)
			rawDo(t, rc, rbr, "SET", "s", "str")
			ts.do(c, "SET", "s", "str")
			inMulti := false
			var queued [][]string
			for i := 0; i < 4000; i++ {
				args := gen()
				switch {
				case !inMulti && rng.IntN(60) == 0:
					args = []string{"MULTI"}
					inMulti = true
					queued = nil
				case inMulti && rng.IntN(5) == 0:
					args = []string{"EXEC"}
					inMulti = false
				case inMulti:
					// Blocking pops never block inside MULTI: served or nil.
					switch rng.IntN(12) {
					case 0:
						args = []string{[]string{"BZPOPMIN", "BZPOPMAX"}[rng.IntN(2)], key(), key(), "0"}
					case 1:
						args = []string{"BZMPOP", "0", "2", key(), key(), []string{"MIN", "MAX"}[rng.IntN(2)], "COUNT", strconv.Itoa(1 + rng.IntN(4))}
					}
					queued = append(queued, args)
				}
				wantRaw, gotRaw := h.both(side, args...)
				if !zsetRepliesMatch(args, queued, wantRaw, gotRaw) {
					h.fatalf("command %d %q:\n vigil: %q\n redis: %q", i, args, gotRaw, wantRaw)
				}
			}
			if inMulti {
				rawDo(t, rc, rbr, "EXEC")
				ts.do(c, "EXEC")
			}
			h.checkAOF()
			for _, k := range append(keys, "lx") {
				for _, cmd := range [][]string{{"OBJECT", "ENCODING", k}, {"ZCARD", k}, {"ZRANGE", k, "0", "-1", "WITHSCORES"}} {
					want, _ := render(rawDo(t, rc, rbr, cmd...))
					if got := ts.doR(t, c, cmd...); got != want {
						t.Errorf("%v: vigil %s, redis %s", cmd, got, want)
					}
				}
				// MEMORY USAGE is exact for a listpack (a skiplist's node sizes
				// depend on Redis's random levels).
				if enc, _ := render(rawDo(t, rc, rbr, "OBJECT", "ENCODING", k)); enc == `"listpack"` {
					want, _ := render(rawDo(t, rc, rbr, "MEMORY", "USAGE", k))
					if got := ts.doR(t, c, "MEMORY", "USAGE", k); got != want {
						t.Errorf("MEMORY USAGE %s: vigil %s, redis %s", k, got, want)
					}
				}
			}
		})
	}
}

// zsetRepliesMatch compares two raw replies of args (queued: the commands
// an EXEC runs), order-insensitively where Redis's order is its dict's or
// its random generator's.
func zsetRepliesMatch(args []string, queued [][]string, want, got string) bool {
	if want == got {
		return true
	}
	wv, err1 := resp.ReadValue(bufio.NewReader(strings.NewReader(want)), resp.DefaultReplyLimits)
	gv, err2 := resp.ReadValue(bufio.NewReader(strings.NewReader(got)), resp.DefaultReplyLimits)
	if err1 != nil || err2 != nil {
		return false
	}
	if strings.EqualFold(args[0], "EXEC") {
		if wv.Kind != resp.KindArray || gv.Kind != resp.KindArray || len(wv.Elems) != len(gv.Elems) || len(queued) != len(wv.Elems) {
			return false
		}
		for i := range wv.Elems {
			if !zsetValuesMatch(queued[i], wv.Elems[i], gv.Elems[i]) {
				return false
			}
		}
		return true
	}
	return zsetValuesMatch(args, wv, gv)
}

func zsetValuesMatch(args []string, wv, gv resp.Value) bool {
	if renderValue(wv) == renderValue(gv) {
		return true
	}
	name := strings.ToUpper(args[0])
	if wv.Kind != gv.Kind || (name != "ZRANDMEMBER" && name != "ZSCAN") {
		return false
	}
	if name == "ZSCAN" {
		if len(wv.Elems) != 2 || len(gv.Elems) != 2 || wv.Elems[0].Str != "0" || gv.Elems[0].Str != "0" {
			return false
		}
		return slices.Equal(pairs(wv.Elems[1].Elems), pairs(gv.Elems[1].Elems))
	}
	// ZRANDMEMBER: with a count at least the set's size, the whole set;
	// otherwise (random picks) only the length.
	if wv.Kind != resp.KindArray {
		return wv.Kind == resp.KindBulk // a single random member
	}
	if len(wv.Elems) != len(gv.Elems) {
		return false
	}
	if n, _ := strconv.Atoi(args[2]); n > 0 {
		step := 1
		if len(args) > 3 && wv.Elems[0].Kind != resp.KindArray { // RESP2 flat pairs
			step = 2
		}
		w, g := pairsN(wv.Elems, step), pairsN(gv.Elems, step)
		if len(w) > 0 && n > len(w) { // (n == len: random picks or the whole set)
			return slices.Equal(w, g)
		}
	}
	return true
}

func pairs(e []resp.Value) []string { return pairsN(e, 2) }

// pairsN groups a flat reply by n and sorts the groups.
func pairsN(e []resp.Value, n int) []string {
	var out []string
	for i := 0; i+n <= len(e); i += n {
		var parts []string
		for _, v := range e[i : i+n] {
			parts = append(parts, renderValue(v))
		}
		out = append(out, strings.Join(parts, " "))
	}
	slices.Sort(out)
	return out
}
