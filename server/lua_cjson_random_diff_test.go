package server

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// TestLuaCjsonDifferentialRandom sends seeded random JSON texts (objects
// of 0 to 40 keys, repeated keys, escapes, long strings, arrays of 0 to
// 300 values, numbers of every syntax, nesting, now and then a truncated
// text) to cjson.decode on Vigil and on redis-server 7.0.15 and compares
// what a script sees byte for byte: each table's #t and pairs() order,
// the order after more keys are set in the decoded tables (their array
// and node sizes, the free pointer), cjson.encode of the result, and the
// errors. Vigil's decoder builds its tables at once (StringTableBuilder,
// NewArrayTable) rather than by lua_rawset: their layout must be the one
// Lua 5.1's rehashes make.
func TestLuaCjsonDifferentialRandom(t *testing.T) {
	forDiffSeeds(t, 23, testLuaCjsonDifferentialRandom) // diffharness_test.go
}

const cjsonDiffScript = `
local function d(v)
  if type(v) ~= 'table' then
    if v == cjson.null then return 'null' end
    return type(v) .. ':' .. tostring(v)
  end
  local o = {}
  for k, x in pairs(v) do o[#o + 1] = type(k) .. ':' .. tostring(k) .. '=' .. d(x) end
  return '{#' .. #v .. '|' .. table.concat(o, ',') .. '}'
end
local function grow(t, n)
  if type(t) ~= 'table' then return end
  for _, x in pairs(t) do grow(x, n + 1) end
  t['zz' .. n] = 1 t[#t + 1] = 2 t.k1 = 3 t[#t + 1] = 4 t.name = 5 t[100] = 6 t.zzz = 7
end
local ok, t = pcall(cjson.decode, ARGV[1])
if not ok then return {'error', t} end
local r = {d(t)}
local eok, e = pcall(cjson.encode, t)
r[#r + 1] = tostring(e)
grow(t, 0)
r[#r + 1] = d(t)
return r
`

func testLuaCjsonDifferentialRandom(t *testing.T, seed uint64) {
	h := newDiffHarness(t, nil)
	h.keep = 3
	side := h.side(2)
	rng := rand.New(rand.NewPCG(23, seed))
	itoa := strconv.Itoa
	str := func() string {
		switch r := rng.IntN(20); {
		case r < 8:
			names := []string{"a", "b", "c", "id", "name", "ok", "k1", "k2", "", "1", "2", "10"}
			return names[rng.IntN(len(names))]
		case r < 14:
			return "x" + itoa(rng.IntN(300))
		case r < 16:
			return "longerkeyname_" + strings.Repeat("abc", rng.IntN(15)) + itoa(rng.IntN(5))
		case r < 18:
			return []string{`a\nb`, `\u00e9t\u00e9`, `q\"q`, `s\/l`, `\ud83d\ude00`, `tab\there`}[rng.IntN(6)]
		}
		return "n" + itoa(rng.IntN(10))
	}
	num := func() string {
		switch r := rng.IntN(16); {
		case r < 6:
			return itoa(rng.IntN(300))
		case r < 8:
			return itoa(-rng.IntN(1000))
		case r < 9:
			return []string{"123456789012345", "1234567890123456", "-999999999999999", "9007199254740993", "00012"}[rng.IntN(5)]
		case r < 10:
			return []string{"-0", "0", "-0.0", "0e0"}[rng.IntN(4)]
		case r < 13:
			return itoa(rng.IntN(1000)) + "." + itoa(rng.IntN(1000))
		case r < 15:
			return itoa(rng.IntN(100)) + []string{"e3", "E-2", "e+10", ".5e300", "e400"}[rng.IntN(5)]
		}
		return []string{"0x10", "+5", "1.", ".5", "inf", "-nan", "1e", "12abc"}[rng.IntN(8)]
	}
	ws := func() string {
		if rng.IntN(6) == 0 {
			return []string{" ", "\n", "\t ", "\r\n"}[rng.IntN(4)]
		}
		return ""
	}
	var value func(depth int) string
	value = func(depth int) string {
		r := rng.IntN(20)
		if depth >= 3 && r >= 12 {
			r = rng.IntN(12) // no more nesting
		}
		switch {
		case r < 5:
			return num()
		case r < 10:
			return `"` + str() + `"`
		case r < 11:
			return []string{"true", "false"}[rng.IntN(2)]
		case r < 12:
			return "null"
		case r < 13 && depth == 0:
			return `"` + strings.Repeat("z", rng.IntN(80)) + `"`
		case r < 17:
			n := rng.IntN(41)
			if depth == 0 && rng.IntN(4) == 0 {
				n = rng.IntN(300)
			}
			items := make([]string, n)
			for i := range items {
				items[i] = ws() + `"` + str() + `"` + ws() + ":" + ws() + value(depth+1)
			}
			return "{" + strings.Join(items, ",") + ws() + "}"
		}
		n := rng.IntN(20)
		if depth == 0 && rng.IntN(4) == 0 {
			n = rng.IntN(300)
		}
		items := make([]string, n)
		for i := range items {
			items[i] = ws() + value(depth+1)
		}
		return "[" + strings.Join(items, ",") + ws() + "]"
	}
	for i := 0; i < 500; i++ {
		text := ws() + value(0) + ws()
		if rng.IntN(15) == 0 {
			text = text[:rng.IntN(len(text)+1)]
		}
		args := []string{"EVAL", cjsonDiffScript, "0", text}
		want, got := h.both(side, args...)
		if want != got {
			w, _ := render(want)
			g, _ := render(got)
			h.fatalf("%q:\n vigil: %s\n redis: %s", text, g, w)
		}
	}
}
