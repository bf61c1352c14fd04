package server

import (
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/vigil-kv/vigil/server/keyspace"
)

// TestListDifferentialRandom (interop) sends a seeded random stream of list
// commands (valid and invalid arguments, a few keys, a string key for
// WRONGTYPE, elements of sizes that split quicklist nodes, MULTI/EXEC
// blocks, the blocking commands where they serve at once or, inside MULTI,
// time out at once) to Vigil's test server and to redis-server 7.0.15, on a
// RESP2 and a RESP3 connection, comparing every reply byte for byte; then
// the propagated streams (aof.check), and each key's LRANGE, OBJECT
// ENCODING and MEMORY USAGE.
func TestListDifferentialRandom(t *testing.T) {
	forDiffSeeds(t, 1125, testListDifferentialRandom) // diffharness_test.go
}

func testListDifferentialRandom(t *testing.T, seed uint64) {
	h := newDiffHarness(t, nil)
	ts := h.ts
	sides := map[int]*diffSide{2: h.side(2), 3: h.side(3)}
	if v, err := strconv.ParseUint(os.Getenv("VIGIL_LIST_SEED"), 10, 64); err == nil {
		seed = v // explore other streams locally
	}
	rng := rand.New(rand.NewPCG(2026, seed))
	keys := []string{"a", "b", "c", "s"}
	key := func() string { return keys[rng.IntN(len(keys))] }
	elem := func() string {
		switch rng.IntN(14) {
		case 0:
			return strings.Repeat("x", 60+rng.IntN(10))
		case 1:
			return strings.Repeat("y", 250+rng.IntN(10))
		case 2:
			return strings.Repeat("z", 3000+rng.IntN(2000))
		case 3:
			return strconv.FormatInt(rng.Int64()-rng.Int64(), 10)
		case 4:
			return strconv.Itoa(rng.IntN(70000) - 35000)
		case 5:
			return ""
		}
		return []string{"e0", "e1", "e2", "e3", "1", "2", "-1", "007"}[rng.IntN(8)]
	}
	num := func() string {
		switch rng.IntN(15) {
		case 0:
			return []string{"x", "", "-0", "1.5", "9223372036854775807", "-9223372036854775808"}[rng.IntN(6)]
		case 1, 2:
			return strconv.Itoa(-rng.IntN(12))
		}
		return strconv.Itoa(rng.IntN(12))
	}
	side := func() string {
		if rng.IntN(30) == 0 {
			return "up"
		}
		return []string{"LEFT", "RIGHT", "left", "right"}[rng.IntN(4)]
	}
	timeout := func() string {
		if rng.IntN(30) == 0 {
			return []string{"-1", "x"}[rng.IntN(2)]
		}
		return []string{"0", "0.01", "1", "0.5"}[rng.IntN(4)]
	}
	mpop := func(name string) []string {
		args := []string{name}
		if name == "BLMPOP" {
			args = append(args, timeout())
		}
		n := 1 + rng.IntN(3)
		if rng.IntN(25) == 0 {
			args = append(args, []string{"0", "x", "9"}[rng.IntN(3)])
		} else {
			args = append(args, strconv.Itoa(n))
		}
		for i := 0; i < n; i++ {
			args = append(args, key())
		}
		args = append(args, side())
		if rng.IntN(2) == 0 {
			args = append(args, "COUNT", num())
		}
		return args
	}
	gen := func() []string {
		switch rng.IntN(22) {
		case 0, 1, 2:
			args := []string{[]string{"LPUSH", "RPUSH", "LPUSHX", "RPUSHX"}[rng.IntN(4)], key()}
			for n := 1 + rng.IntN(6); n > 0; n-- {
				args = append(args, elem())
			}
			return args
		case 3:
			args := []string{[]string{"LPOP", "RPOP"}[rng.IntN(2)], key()}
			if rng.IntN(2) == 0 {
				args = append(args, num())
			}
			return args
		case 4:
			return []string{"LRANGE", key(), num(), num()}
		case 5:
			return []string{"LINDEX", key(), num()}
		case 6:
			return []string{"LSET", key(), num(), elem()}
		case 7:
			return []string{"LINSERT", key(), []string{"BEFORE", "after", "middle"}[rng.IntN(3)], elem(), elem()}
		case 8:
			return []string{"LLEN", key()}
		case 9:
			return []string{"LREM", key(), num(), elem()}
		case 10:
			return []string{"LTRIM", key(), num(), num()}
		case 11:
			args := []string{"LPOS", key(), elem()}
			for n := rng.IntN(3); n > 0; n-- {
				args = append(args, []string{"RANK", "COUNT", "MAXLEN", "bogus"}[rng.IntN(4)], num())
			}
			return args
		case 12:
			return []string{"LMOVE", key(), key(), side(), side()}
		case 13:
			return []string{"RPOPLPUSH", key(), key()}
		case 14:
			return mpop("LMPOP")
		case 15:
			return mpop("BLMPOP")
		case 16:
			args := []string{[]string{"BLPOP", "BRPOP"}[rng.IntN(2)]}
			for n := 1 + rng.IntN(3); n > 0; n-- {
				args = append(args, key())
			}
			return append(args, timeout())
		case 17:
			return []string{"BLMOVE", key(), key(), side(), side(), timeout()}
		case 18:
			return []string{"BRPOPLPUSH", key(), key(), timeout()}
		case 19:
			return []string{"SET", "s", elem()}
		case 20:
			return []string{"DEL", key()}
		}
		return []string{"EXISTS", key()}
	}
	// wouldBlock reports whether a blocking command would block on Vigil
	// (and so on Redis): every key it would serve from is missing.
	wouldBlock := func(args []string) bool {
		var from []string
		switch strings.ToUpper(args[0]) {
		case "BLPOP", "BRPOP":
			from = args[1 : len(args)-1]
		case "BLMOVE", "BRPOPLPUSH":
			from = args[1:2]
		case "BLMPOP":
			n, err := strconv.Atoi(args[2])
			if err != nil || n < 1 || 3+n > len(args) {
				return false
			}
			from = args[3 : 3+n]
		default:
			return false
		}
		ts.s.mu.Lock()
		defer ts.s.mu.Unlock()
		for _, k := range from {
			if ts.s.ks.DBs[0].Peek([]byte(k)) != nil {
				return false
			}
		}
		return true
	}
	h.begin(sides[2])
	compared := 0
	send := func(proto int, args ...string) {
		t.Helper()
		line := strings.Join(args, " ")
		if len(line) > 120 {
			line = line[:120] + "..."
		}
		h.record(line)
		want := h.redis(sides[proto], args...)
		got := h.vigil(sides[proto], args...)
		if got != want {
			h.fatalf("command %d (RESP%d) %q:\n vigil: %q\n redis: %q", compared, proto, args, got, want)
		}
		compared++
	}
	for i := 0; i < 4000; i++ {
		proto := 2 + rng.IntN(2)
		if rng.IntN(25) == 0 {
			send(proto, "MULTI")
			for n := 1 + rng.IntN(4); n > 0; n-- {
				send(proto, gen()...)
			}
			send(proto, "EXEC")
			continue
		}
		args := gen()
		if wouldBlock(args) {
			send(proto, "MULTI")
			send(proto, args...)
			send(proto, "EXEC")
			continue
		}
		send(proto, args...)
	}
	h.checkAOF()
	for _, k := range keys {
		for _, cmd := range [][]string{{"LRANGE", k, "0", "-1"}, {"OBJECT", "ENCODING", k}, {"TYPE", k}} {
			send(2, cmd...)
		}
	}
	// MEMORY USAGE: the shadow quicklist nodes followed every command.
	for _, k := range keys[:3] {
		send(2, "MEMORY", "USAGE", k)
		send(2, "MEMORY", "USAGE", k, "SAMPLES", "0")
		send(2, "MEMORY", "USAGE", k, "SAMPLES", "2")
	}
	t.Logf("%d random list commands answered as redis-server does", compared)
}

// TestListMemoryDifferential (interop): MEMORY USAGE of lists (LPUSH,
// RPUSH, LPOP, RPOP with counts, LTRIM, LMOVE, LINSERT with node splits and
// merges, LSET, LREM), whose quicklist nodes Vigil models, equals
// redis-server 7.0.15's after every command, for several fills.
func TestListMemoryDifferential(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server")
	}
	dial, _ := startRedisAOF(t)
	rc, rbr := dial(2)
	ts := newTestServer(t)
	c := ts.client()
	rng := rand.New(rand.NewPCG(7, 7))
	var history []string
	do := func(args ...string) {
		t.Helper()
		want := rawDo(t, rc, rbr, args...)
		history = append(history, shortCommand(args))
		if got := ts.do(c, args...); got != want {
			t.Fatalf("%.80q: vigil %q, redis %q\nlast commands:\n%s", args, got, want, strings.Join(history[max(0, len(history)-12):], "\n"))
		}
	}
	elem := func() string {
		switch rng.IntN(6) {
		case 0:
			return strings.Repeat("v", rng.IntN(3000))
		case 1:
			return strconv.Itoa(rng.IntN(100000) - 50000)
		}
		return strings.Repeat("e", 1+rng.IntN(80))
	}
	mix := listMix{push: 3, pop: 2, trim: 1, move: 1, edit: 3, maxPush: 8, maxPop: 6, maxTrim: 3, maxIndex: 20}
	for _, fill := range []string{"-2", "-1", "5", "0", "-7"} {
		do("CONFIG", "SET", "list-max-listpack-size", fill)
		do("FLUSHALL")
		for i := 0; i < 700; i++ {
			k := []string{"p", "q"}[rng.IntN(2)]
			do(mix.command(ts, rng, k, elem)...)
			do("MEMORY", "USAGE", k, "SAMPLES", "0")
			do("MEMORY", "USAGE", k)
		}
	}
	do("CONFIG", "SET", "list-max-listpack-size", "-2")
}

// shortCommand is a command for a failure's history of the last commands,
// each argument longer than 12 bytes cut to its first 4 and its length.
func shortCommand(args []string) string {
	h := make([]string, len(args))
	for i, a := range args {
		if len(a) > 12 {
			a = a[:4] + "<" + strconv.Itoa(len(a)) + ">"
		}
		h[i] = a
	}
	return strings.Join(h, " ")
}

// listMix is a random mix of list commands on the keys p, q (and r): the
// weights of pushes (of 1 to maxPush elements), pops (with a count below
// maxPop), LTRIMs (below maxTrim from each end), LMOVE p q, the extra
// commands and the edits next to an element that exists (LINSERT, LSET at
// an index within ±maxIndex, LREM).
type listMix struct {
	push, pop, trim, move, edit        int
	extra                              []func(k string) []string
	maxPush, maxPop, maxTrim, maxIndex int
}

// command draws the next command on k from rng.
func (m listMix) command(ts *testServer, rng *rand.Rand, k string, elem func() string) []string {
	lr := []string{"LEFT", "RIGHT"}
	n := rng.IntN(m.push + m.pop + m.trim + m.move + len(m.extra) + m.edit)
	switch {
	case n < m.push:
		args := []string{[]string{"LPUSH", "RPUSH"}[rng.IntN(2)], k}
		for n := 1 + rng.IntN(m.maxPush); n > 0; n-- {
			args = append(args, elem())
		}
		return args
	case n < m.push+m.pop:
		return []string{[]string{"LPOP", "RPOP"}[rng.IntN(2)], k, strconv.Itoa(rng.IntN(m.maxPop))}
	case n < m.push+m.pop+m.trim:
		return []string{"LTRIM", k, strconv.Itoa(rng.IntN(m.maxTrim)), strconv.Itoa(-1 - rng.IntN(m.maxTrim))}
	case n < m.push+m.pop+m.trim+m.move:
		return []string{"LMOVE", "p", "q", lr[rng.IntN(2)], lr[rng.IntN(2)]}
	case n < m.push+m.pop+m.trim+m.move+len(m.extra):
		return m.extra[n-m.push-m.pop-m.trim-m.move](k)
	}
	// Next to an element that exists, when there is one.
	ts.s.mu.Lock()
	var pivot string
	if e := ts.s.ks.DBs[0].Peek([]byte(k)); e != nil {
		if l, ok := e.Value().(*keyspace.List); ok {
			pivot = string(l.Index(rng.IntN(l.Len())))
		}
	}
	ts.s.mu.Unlock()
	switch rng.IntN(3) {
	case 0:
		return []string{"LINSERT", k, []string{"BEFORE", "AFTER"}[rng.IntN(2)], pivot, elem()}
	case 1:
		return []string{"LSET", k, strconv.Itoa(rng.IntN(2*m.maxIndex) - m.maxIndex), elem()}
	}
	return []string{"LREM", k, strconv.Itoa(rng.IntN(5) - 2), pivot}
}
