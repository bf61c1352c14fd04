package server

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	vlua "github.com/vigil-kv/vigil/server/lua"
)

// TestScriptDifferentialRandom sends a seeded stream of scripts (random
// sequences of redis.call/pcall writes and reads, errors, set_repl, SELECT,
// EVAL_RO, EVALSHA, some inside MULTI) to Vigil and to redis-server 7.0.15
// with its AOF on, compares every reply byte for byte and, at the end, the
// propagated stream with Redis's AOF (scripts propagate their effects).
func TestScriptDifferentialRandom(t *testing.T) {
	forDiffSeeds(t, 11, testScriptDifferentialRandom) // diffharness_test.go
}

func testScriptDifferentialRandom(t *testing.T, seed uint64) {
	h := newDiffHarness(t, nil)
	h.keep = 20
	ts := h.ts
	ts.clk.Advance(time.Until(ts.clk.Now()) * -1) // absolute expire times near Redis's
	side := h.side(2)
	h.begin(side)
	rng := rand.New(rand.NewPCG(2026, seed))
	keys := []string{"k1", "k2", "h1", "n1"}
	key := func() string { return keys[rng.IntN(len(keys))] }
	call := func() string {
		fn := "redis.call"
		if rng.IntN(3) == 0 {
			fn = "redis.pcall"
		}
		k := "KEYS[" + strconv.Itoa(1+rng.IntN(2)) + "]"
		switch rng.IntN(14) {
		case 0, 1:
			return fn + "('set', " + k + ", ARGV[1])"
		case 2:
			return fn + "('incr', " + k + ")"
		case 3:
			return fn + "('incrbyfloat', " + k + ", '1.5')"
		case 4:
			return fn + "('del', " + k + ")"
		case 5:
			return fn + "('hset', " + k + ", 'f', ARGV[1])"
		case 6:
			return fn + "('hincrby', " + k + ", 'g', 2)"
		case 7:
			return fn + "('get', " + k + ")"
		case 8:
			return fn + "('hgetall', " + k + ")"
		case 9:
			return fn + "('expire', " + k + ", 100)"
		case 10:
			return fn + "('set', " + k + ", 'v', 'EX', 50)"
		case 11:
			return fn + "('append', " + k + ", 'x')"
		case 12:
			return "redis.set_repl(" + []string{"redis.REPL_NONE", "redis.REPL_ALL"}[rng.IntN(2)] + ")"
		}
		return fn + "('select', '" + strconv.Itoa(rng.IntN(2)) + "')"
	}
	script := func() string {
		n := 1 + rng.IntN(4)
		parts := make([]string, 0, n+1)
		for i := 0; i < n; i++ {
			parts = append(parts, "local r"+strconv.Itoa(i)+" = "+call())
		}
		ret := "r" + strconv.Itoa(rng.IntN(n))
		switch rng.IntN(4) {
		case 0:
			ret = "{" + ret + "}"
		case 1:
			ret = "type(" + ret + ")"
		}
		parts = append(parts, "return "+ret)
		return strings.Join(parts, "\n")
	}
	do := func(args ...string) {
		t.Helper()
		want, got := h.both(side, args...)
		if want != got {
			w, _ := render(want)
			g, _ := render(got)
			h.fatalf("%q:\n vigil: %s\n redis: %s", args, g, w)
		}
	}
	var loaded []string
	for i := 0; i < 1500; i++ {
		body := script()
		args := []string{"EVAL", body, "2", key(), key(), []string{"1", "x", "2.5"}[rng.IntN(3)]}
		switch r := rng.IntN(12); {
		case r == 0:
			args[0] = "EVAL_RO"
		case r == 1:
			do("SCRIPT", "LOAD", body)
			loaded = append(loaded, vlua.SHA1Hex([]byte(body)))
			args[0], args[1] = "EVALSHA", loaded[rng.IntN(len(loaded))]
		case r == 2:
			do("MULTI")
			do(args...)
			do("SET", key(), "m")
			args = []string{"EXEC"}
		case r == 3:
			args = []string{"SELECT", strconv.Itoa(rng.IntN(2))}
		}
		do(args...)
	}
	do("SELECT", "0")
	h.checkAOF()
}
