package server

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// TestLuaTableDifferentialRandom sends a seeded stream of scripts that
// build a table (a constructor, then sets and deletions of string,
// integer, float and boolean keys, table.insert/remove, appends, deletions
// during a traversal) and answer its pairs() order and #t, or its
// cjson.encode, to Vigil and to redis-server 7.0.15, comparing the replies
// byte for byte: the layout of Vigil's tables (the vendored gopher-lua's
// port of Lua 5.1's ltable.c) must stay Lua 5.1's.
func TestLuaTableDifferentialRandom(t *testing.T) {
	forDiffSeeds(t, 22, testLuaTableDifferentialRandom) // diffharness_test.go
}

func testLuaTableDifferentialRandom(t *testing.T, seed uint64) {
	h := newDiffHarness(t, nil)
	h.keep = 5
	side := h.side(2)
	rng := rand.New(rand.NewPCG(22, seed))
	itoa := strconv.Itoa
	key := func() string {
		switch r := rng.IntN(20); {
		case r < 7:
			names := []string{"a", "b", "c", "k1", "k2", "name", "id", "x" + itoa(rng.IntN(41)), "longerkeyname" + itoa(rng.IntN(10))}
			return "'" + names[rng.IntN(len(names))] + "'"
		case r < 14:
			return itoa(rng.IntN(44) - 3)
		case r < 16:
			return []string{"0.5", "-2.25", "1e10", "2^33", "3.75"}[rng.IntN(5)]
		case r < 17:
			return []string{"true", "false"}[rng.IntN(2)]
		}
		return "#t + 1"
	}
	stmt := func() string {
		switch r := rng.IntN(100); {
		case r < 50:
			return "t[" + key() + "] = " + itoa(1+rng.IntN(99))
		case r < 70:
			return "t[" + key() + "] = nil"
		case r < 78:
			return "table.insert(t, " + itoa(1+rng.IntN(9)) + ")"
		case r < 83:
			return "table.insert(t, " + itoa(1+rng.IntN(12)) + ", " + itoa(1+rng.IntN(9)) + ")"
		case r < 88:
			return "table.remove(t)"
		case r < 91:
			return "table.remove(t, 1)"
		case r < 95:
			return "for k in pairs(t) do if type(k) == 'number' and k % " + itoa(2+rng.IntN(3)) + " == 0 then t[k] = nil end end"
		}
		return "for i = 1, " + itoa(1+rng.IntN(20)) + " do t[#t + 1] = i end"
	}
	ctor := func() string {
		if rng.IntN(5) < 2 {
			return "{}"
		}
		var items []string
		for n := rng.IntN(9); n > 0; n-- {
			if rng.IntN(2) == 0 {
				items = append(items, itoa(1+rng.IntN(9)))
			} else {
				items = append(items, "["+strings.ReplaceAll(key(), "#t + 1", "7")+"] = "+itoa(1+rng.IntN(9)))
			}
		}
		return "{" + strings.Join(items, ", ") + "}"
	}
	const show = "local function p(t) local o = {} for k, v in pairs(t) do o[#o + 1] = tostring(k) .. '=' .. tostring(v) end return table.concat(o, ' ') end\n"
	for i := 0; i < 400; i++ {
		body := []string{"local t = " + ctor()}
		for n := 1 + rng.IntN(40); n > 0; n-- {
			body = append(body, stmt())
		}
		if rng.IntN(10) < 3 {
			body = append(body, "return cjson.encode(t)")
		} else {
			body = append(body, "return {p(t), #t}")
		}
		args := []string{"EVAL", show + strings.Join(body, "\n"), "0"}
		want, got := h.both(side, args...)
		if want != got {
			w, _ := render(want)
			g, _ := render(got)
			h.fatalf("%q:\n vigil: %s\n redis: %s", args, g, w)
		}
	}
}
