package server

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestFunctionsDifferentialRandom sends a seeded stream of FUNCTION LOAD
// [REPLACE] (libraries whose functions write, read, fail, set_repl...),
// FUNCTION DELETE / FLUSH / RESTORE, FCALL and FCALL_RO (some inside MULTI)
// to Vigil and to redis-server 7.0.15 with its AOF on, compares every
// reply byte for byte and, at the end, the propagated stream with Redis's
// AOF: FUNCTION's write subcommands propagate verbatim, FCALL its effects.
func TestFunctionsDifferentialRandom(t *testing.T) {
	forDiffSeeds(t, 12, testFunctionsDifferentialRandom) // diffharness_test.go
}

func testFunctionsDifferentialRandom(t *testing.T, seed uint64) {
	h := newDiffHarness(t, nil)
	h.keep = 20
	ts := h.ts
	ts.clk.Advance(time.Until(ts.clk.Now()) * -1)
	side := h.side(2)
	rc, rbr, c := side.rc, side.rbr, side.vc
	h.begin(side)
	rng := rand.New(rand.NewPCG(2026, seed))
	libs := []string{"la", "lb", "lc"}
	fnames := []string{"fa", "fb", "fc", "fd", "shared"}
	body := func() string {
		k := "keys[" + strconv.Itoa(1+rng.IntN(2)) + "]"
		switch rng.IntN(10) {
		case 0:
			return "return redis.call('set', " + k + ", args[1])"
		case 1:
			return "redis.call('incr', " + k + ") return redis.call('incr', " + k + ")"
		case 2:
			return "return redis.call('get', " + k + ")"
		case 3:
			return "return redis.pcall('hset', " + k + ", 'f', args[1])"
		case 4:
			return "redis.call('del', " + k + ") return {1, 'x', {2}}"
		case 5:
			return "redis.set_repl(redis.REPL_NONE) redis.call('set', " + k + ", 'hidden') redis.set_repl(redis.REPL_ALL) return redis.call('append', " + k + ", 'y')"
		case 6:
			return "return redis.call('expire', " + k + ", 100)"
		case 7:
			return "return redis.call('nosuch')"
		case 8:
			return "return #keys + #args"
		}
		return "redis.call('select', '1') redis.call('set', " + k + ", 'db1') return redis.call('lpush', " + k + ", 'v')"
	}
	library := func(name string) string {
		var b strings.Builder
		b.WriteString("#!lua name=" + name + "\n")
		n := 1 + rng.IntN(3)
		used := map[string]bool{}
		for i := 0; i < n; i++ {
			fn := fnames[rng.IntN(len(fnames))]
			if fn != "shared" {
				fn = name + "_" + fn
			}
			if used[fn] && rng.IntN(4) != 0 {
				continue
			}
			used[fn] = true
			if rng.IntN(2) == 0 {
				b.WriteString("redis.register_function('" + fn + "', function(keys, args) " + body() + " end)\n")
			} else {
				flags := []string{"{}", "{'no-writes'}", "{'allow-oom'}", "{'no-writes','allow-stale'}"}[rng.IntN(4)]
				b.WriteString("redis.register_function{function_name='" + fn + "', callback=function(keys, args) " + body() + " end, flags=" + flags + "}\n")
			}
		}
		return b.String()
	}
	do := func(args ...string) (string, string) {
		t.Helper()
		want, got := h.both(side, args...)
		if want != got {
			w, _ := render(want)
			g, _ := render(got)
			h.fatalf("%q:\n vigil: %s\n redis: %s", args, g, w)
		}
		return want, got
	}
	keys := []string{"k1", "k2", "k3"}
	key := func() string { return keys[rng.IntN(len(keys))] }
	var dumps [2]string // redis's, vigil's
	restored, called := 0, 0
	// 800 steps, longer for a seed whose stream has called too few
	// existing functions by then (the same first 800 steps either way).
	for i := 0; i < 800 || (called < 100 && i < 4000); i++ {
		lib := libs[rng.IntN(len(libs))]
		switch r := rng.IntN(20); {
		case r < 4:
			args := []string{"FUNCTION", "LOAD", library(lib)}
			if rng.IntN(2) == 0 {
				args = []string{"FUNCTION", "LOAD", "REPLACE", args[2]}
			}
			do(args...)
		case r == 4:
			do("FUNCTION", "DELETE", lib)
		case r == 5 && rng.IntN(4) == 0:
			do("FUNCTION", "FLUSH", []string{"SYNC", "ASYNC"}[rng.IntN(2)])
		case r == 6 && vigilLibCount(ts) <= 1:
			// Each side dumps its own libraries and restores that later;
			// with one library at most, so that the propagated RESTOREs
			// are the same bytes (Redis orders several as its dict).
			h.record("FUNCTION DUMP")
			dumps[0] = bulkOf(t, rawDo(t, rc, rbr, "FUNCTION", "DUMP"))
			dumps[1] = bulkOf(t, ts.do(c, "FUNCTION", "DUMP"))
		case r == 7 && dumps[0] != "":
			policy := []string{"APPEND", "REPLACE", "FLUSH"}[rng.IntN(3)]
			h.record("FUNCTION RESTORE <dump> " + policy)
			want := rawDo(t, rc, rbr, "FUNCTION", "RESTORE", dumps[0], policy)
			got := ts.do(c, "FUNCTION", "RESTORE", dumps[1], policy)
			if want == "+OK\r\n" {
				restored++
			}
			if want != got && !(strings.HasPrefix(want, "-ERR Library") && strings.HasPrefix(got, "-ERR Library")) &&
				!(strings.HasPrefix(want, "-ERR Function") && strings.HasPrefix(got, "-ERR Function")) {
				h.fatalf("FUNCTION RESTORE %s: redis %q, vigil %q", policy, want, got)
			}
		case r == 8:
			do("MULTI")
			fn := lib + "_" + fnames[rng.IntN(len(fnames)-1)]
			do("FCALL", fn, "2", key(), key(), "v")
			do("SET", key(), "m")
			do("EXEC")
		case r == 9:
			do("SELECT", strconv.Itoa(rng.IntN(2)))
		default:
			fn := fnames[rng.IntN(len(fnames))]
			if fn != "shared" {
				fn = lib + "_" + fn
			}
			cmd := "FCALL"
			if rng.IntN(4) == 0 {
				cmd = "FCALL_RO"
			}
			if want, _ := do(cmd, fn, "2", key(), key(), []string{"1", "x", "2.5"}[rng.IntN(3)]); !strings.HasPrefix(want, "-ERR Function not found") {
				called++
			}
		}
	}
	do("SELECT", "0")
	if restored == 0 || called < 100 {
		t.Fatalf("the stream ran %d successful RESTOREs and %d FCALLs of existing functions: too few to compare", restored, called)
	}
	h.checkAOF()
}

func vigilLibCount(ts *testServer) int {
	ts.s.mu.Lock()
	defer ts.s.mu.Unlock()
	_, n := ts.s.functionCounts()
	return n
}
