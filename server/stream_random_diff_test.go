package server

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// TestStreamDifferentialRandom sends a seeded random stream of stream
// commands (XADD with explicit and <ms>-* IDs, NOMKSTREAM, MAXLEN/MINID
// with = and ~ and LIMIT; XDEL, XTRIM, XSETID, XRANGE/XREVRANGE with
// exclusive bounds and COUNT, XLEN, XREAD without BLOCK; valid and invalid
// arguments) mixed with DEL, SET and COPY on the same keys, some inside
// MULTI, to Vigil and to a live redis-server, with small
// stream-node-max-entries and -bytes so that nodes fill, split and empty.
// Every reply must be the same bytes; after each write the key's DUMP
// payload must be too (the same nodes, deleted entries, master fields and
// metadata: RDB type 19 byte for byte) and keyspace.Check must pass; at
// the end the propagated streams (Redis's AOF) are compared. Seeds as
// diffharness_test.go (VIGIL_DIFF_SEEDS, VIGIL_DIFF_SEED).
//
// "*" IDs are left out: Vigil's test server runs on a fake clock (the
// golden script covers them).
func TestStreamDifferentialRandom(t *testing.T) {
	forDiffSeeds(t, 7, testStreamDifferentialRandom) // diffharness_test.go
}

func testStreamDifferentialRandom(t *testing.T, seed uint64) {
	h := newDiffHarness(t, nil)
	ts := h.ts
	conns := []*diffSide{h.side(2), h.side(3)}
	rng := rand.New(rand.NewPCG(2027, seed))

	h.begin(conns[0])
	both := h.both
	h.configBoth(conns[0], "stream-node-max-entries", strconv.Itoa(3+rng.IntN(6)), "stream-node-max-bytes", strconv.Itoa(60+rng.IntN(200)))

	keys := []string{"x1", "x2", "x3", "s"}
	key := func() string { return keys[rng.IntN(len(keys))] }
	xkey := func() string { return keys[rng.IntN(3)] }
	ms := func() int { return rng.IntN(40) }
	id := func() string {
		switch rng.IntN(30) {
		case 0:
			return []string{"x", "-", "+", "1-x", "-1", "18446744073709551615-18446744073709551615", "0-0", " 3", "3-", "0"}[rng.IntN(10)]
		case 1:
			return strconv.Itoa(ms())
		}
		return strconv.Itoa(ms()) + "-" + strconv.Itoa(rng.IntN(4))
	}
	bound := func(lo bool) string {
		switch rng.IntN(8) {
		case 0:
			if lo {
				return "-"
			}
			return "+"
		case 1:
			return "(" + id()
		case 2:
			return strconv.Itoa(ms())
		}
		return id()
	}
	field := func() string {
		switch rng.IntN(20) {
		case 0:
			return strings.Repeat("F", 1+rng.IntN(70))
		case 1:
			return strconv.Itoa(rng.IntN(300) - 100)
		}
		return "f" + strconv.Itoa(rng.IntN(3))
	}
	value := func() string {
		switch rng.IntN(10) {
		case 0:
			return strings.Repeat("v", rng.IntN(90))
		case 1:
			return []string{"", "-0", "007", "9223372036854775807", "-9223372036854775808", "4096", "-32769", "1.5"}[rng.IntN(8)]
		}
		return strconv.Itoa(rng.IntN(2000) - 1000)
	}
	trimArgs := func(xadd bool) []string {
		var a []string
		switch rng.IntN(2) {
		case 0:
			a = append(a, "MAXLEN")
		default:
			a = append(a, "MINID")
		}
		switch rng.IntN(3) {
		case 0:
			a = append(a, "~")
		case 1:
			a = append(a, "=")
		}
		if a[0] == "MAXLEN" {
			a = append(a, strconv.Itoa(rng.IntN(12)-1))
		} else {
			a = append(a, id())
		}
		if rng.IntN(3) == 0 {
			a = append(a, "LIMIT", strconv.Itoa(rng.IntN(12)-1))
		}
		if rng.IntN(3) == 0 {
			a[0] = strings.ToLower(a[0])
		}
		return a
	}
	gen := func() ([]string, bool) {
		switch rng.IntN(20) {
		case 0, 1, 2, 3, 4, 5:
			args := []string{"XADD", key()}
			if rng.IntN(10) == 0 {
				args = append(args, "NOMKSTREAM")
			}
			if rng.IntN(4) == 0 {
				args = append(args, trimArgs(true)...)
			}
			if rng.IntN(3) == 0 {
				args = append(args, strconv.Itoa(ms())+"-*")
			} else {
				args = append(args, id())
			}
			if rng.IntN(2) == 0 {
				args = append(args, "f0", value())
			} else {
				for n := 1 + rng.IntN(3); n > 0; n-- {
					args = append(args, field(), value())
				}
			}
			if rng.IntN(40) == 0 {
				args = args[:len(args)-1]
			}
			return args, true
		case 6, 7:
			args := []string{"XDEL", key()}
			for n := 1 + rng.IntN(4); n > 0; n-- {
				args = append(args, id())
			}
			return args, true
		case 8:
			return append([]string{"XTRIM", key()}, trimArgs(false)...), true
		case 9:
			args := []string{"XSETID", key(), id()}
			if rng.IntN(3) == 0 {
				args = append(args, "ENTRIESADDED", strconv.Itoa(rng.IntN(30)-2))
			}
			if rng.IntN(3) == 0 {
				args = append(args, "MAXDELETEDID", id())
			}
			return args, true
		case 10, 11, 12:
			cmd := "XRANGE"
			lo, hi := bound(true), bound(false)
			if rng.IntN(2) == 0 {
				cmd, lo, hi = "XREVRANGE", hi, lo
			}
			args := []string{cmd, key(), lo, hi}
			if rng.IntN(3) == 0 {
				args = append(args, "COUNT", strconv.Itoa(rng.IntN(8)-1))
			}
			return args, false
		case 13:
			return []string{[]string{"XLEN", "TYPE", "EXISTS"}[rng.IntN(3)], key()}, false
		case 14, 15:
			args := []string{"XREAD"}
			if rng.IntN(3) == 0 {
				args = append(args, "COUNT", strconv.Itoa(rng.IntN(5)))
			}
			n := 1 + rng.IntN(3)
			args = append(args, "STREAMS")
			for i := 0; i < n; i++ {
				args = append(args, key())
			}
			for i := 0; i < n; i++ {
				if rng.IntN(5) == 0 {
					args = append(args, "$")
				} else {
					args = append(args, id())
				}
			}
			return args, false
		case 16:
			switch rng.IntN(4) {
			case 0:
				return []string{"DEL", xkey()}, true
			case 1:
				return []string{"SET", "s", value()}, true
			case 2:
				return []string{"COPY", xkey(), xkey(), "REPLACE"}, true
			}
			return []string{"DEL", "s"}, true
		}
		return []string{"XADD", xkey(), strconv.Itoa(ms()) + "-*", field(), value()}, true
	}

	compare := func(p *diffSide, args []string, r, v string, i int) {
		if r != v {
			h.fatalf("command %d %q (RESP%d):\n vigil: %q\n redis: %q", i, args, p.proto, v, r)
		}
	}
	checkKey := func(p *diffSide, key string, i int) {
		for _, cmd := range [][]string{{"DUMP", key}, {"OBJECT", "ENCODING", key}, {"XLEN", key}} {
			r, v := both(p, cmd...)
			if r != v {
				h.fatalf("after command %d, %v: vigil %q, redis %q", i, cmd, v, r)
			}
		}
		if err := ts.s.ks.Check(); err != nil {
			h.fatalf("after command %d: keyspace.Check: %v", i, err)
		}
	}

	compared := h.run(3000, diffRun{conns: conns, rng: rng, gen: gen, compare: compare,
		written: func(p *diffSide, args []string, i int) {
			checkKey(p, args[1], i)
			if args[0] == "COPY" {
				checkKey(p, args[2], i)
			}
		}})
	h.checkAOF()
	for _, k := range keys {
		checkKey(conns[0], k, -1)
	}
	t.Logf("%d random stream commands answered as redis-server does", compared)
}
