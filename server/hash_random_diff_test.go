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

// TestHashDifferentialRandom (interop) sends the same seeded random stream
// of hash commands (valid and invalid arguments, a few keys, a string key
// for WRONGTYPE, fields and values around hash-max-listpack-entries/-value
// so that conversions happen, RESP2 and RESP3, some inside MULTI) to Vigil
// and to a live redis-server, and compares every reply. Replies whose order
// is a hashtable's (HKEYS, HVALS, HGETALL, HSCAN) are compared
// order-insensitively when the key is a hashtable, HRANDFIELD by shape
// (length, distinctness, membership). After every write the key's OBJECT
// ENCODING, and for a listpack its MEMORY USAGE, must agree; at the end the
// propagated stream must equal Redis's AOF.
func TestHashDifferentialRandom(t *testing.T) {
	forDiffSeeds(t, 4, testHashDifferentialRandom) // diffharness_test.go
}

func testHashDifferentialRandom(t *testing.T, seed uint64) {
	h := newDiffHarness(t, nil)
	ts := h.ts
	conns := []*diffSide{h.side(2), h.side(3)}
	rng := rand.New(rand.NewPCG(2026, seed))

	h.begin(conns[0])
	both := h.both
	h.configBoth(conns[0], "hash-max-listpack-entries", "12", "hash-max-listpack-value", "10")

	keys := []string{"h1", "h2", "h3", "s"}
	key := func() string { return keys[rng.IntN(len(keys))] }
	hkey := func() string { return keys[rng.IntN(3)] }
	field := func() string {
		switch rng.IntN(25) {
		case 0:
			return strings.Repeat("F", 9+rng.IntN(4)) // around hash-max-listpack-value
		case 1:
			return ""
		case 2:
			return strconv.Itoa(rng.IntN(200) - 100) // integer-encoded in a listpack
		}
		return "f" + strconv.Itoa(rng.IntN(18))
	}
	value := func() string {
		switch rng.IntN(12) {
		case 0:
			return strings.Repeat("v", 8+rng.IntN(5))
		case 1:
			return []string{"", "abc", "-0", "007", "1e3", " 1", "3.25", "-2.5", "0x10", "inf"}[rng.IntN(10)]
		case 2:
			return []string{"9223372036854775807", "-9223372036854775808", "2147483648", "8388608", "-32769", "4096"}[rng.IntN(6)]
		}
		return strconv.Itoa(rng.IntN(2000) - 1000)
	}
	incr := func() string {
		switch rng.IntN(10) {
		case 0:
			return []string{"x", "1.5", "", "-0", "9223372036854775807", "-9223372036854775808"}[rng.IntN(6)]
		}
		return strconv.Itoa(rng.IntN(200) - 100)
	}
	fincr := func() string {
		switch rng.IntN(10) {
		case 0:
			return []string{"x", "nan", "inf", "-inf", "", "1e400", "0x1p3", " 1", "1e4932"}[rng.IntN(9)]
		case 1:
			return strconv.Itoa(rng.IntN(100))
		}
		return strconv.FormatFloat(rng.Float64()*200-100, 'f', rng.IntN(4), 64)
	}
	fields := func(n int) []string {
		var out []string
		for i := 0; i < n; i++ {
			out = append(out, field())
		}
		return out
	}
	// gen returns a command and whether it may write.
	gen := func() ([]string, bool) {
		switch rng.IntN(24) {
		case 0, 1, 2, 3:
			args := []string{"HSET", key()}
			if rng.IntN(4) == 0 {
				args[0] = "HMSET"
			}
			for n := 1 + rng.IntN(4); n > 0; n-- {
				args = append(args, field(), value())
			}
			if rng.IntN(30) == 0 {
				args = args[:len(args)-1] // odd: arity error
			}
			return args, true
		case 4:
			return []string{"HSETNX", key(), field(), value()}, true
		case 5, 6:
			return append([]string{"HDEL", key()}, fields(1+rng.IntN(4))...), true
		case 7, 8:
			return []string{"HINCRBY", key(), field(), incr()}, true
		case 9, 10:
			return []string{"HINCRBYFLOAT", key(), field(), fincr()}, true
		case 11:
			return []string{"HGET", key(), field()}, false
		case 12:
			return append([]string{"HMGET", key()}, fields(1+rng.IntN(3))...), false
		case 13:
			return []string{[]string{"HEXISTS", "HSTRLEN"}[rng.IntN(2)], key(), field()}, false
		case 14:
			return []string{[]string{"HLEN", "TYPE", "EXISTS"}[rng.IntN(3)], key()}, false
		case 15, 16:
			return []string{[]string{"HKEYS", "HVALS", "HGETALL"}[rng.IntN(3)], key()}, false
		case 17:
			args := []string{"HSCAN", key(), "0"}
			if rng.IntN(3) == 0 {
				args = append(args, "MATCH", []string{"f1*", "*", "F*", "[a-f]?"}[rng.IntN(4)])
			}
			if rng.IntN(3) == 0 {
				args = append(args, "COUNT", []string{"1", "5", "100", "0", "x"}[rng.IntN(5)])
			}
			return args, false
		case 18, 19:
			args := []string{"HRANDFIELD", key()}
			if rng.IntN(5) > 0 {
				args = append(args, strconv.Itoa(rng.IntN(41)-20))
				if rng.IntN(2) == 0 {
					args = append(args, "WITHVALUES")
				}
			}
			if rng.IntN(40) == 0 {
				args = append(args, "x")
			}
			return args, false
		case 20:
			switch rng.IntN(4) {
			case 0:
				return []string{"DEL", hkey()}, true
			case 1:
				return []string{"SET", "s", value()}, true
			case 2:
				return []string{"COPY", hkey(), hkey(), "REPLACE"}, true
			}
			return []string{"GET", key()}, false
		}
		return []string{"HSET", hkey(), field(), value()}, true
	}

	// hashOrder reports whether key's order is a hashtable's on Vigil.
	hashtable := func(p *diffSide, key string) bool {
		return ts.do(p.vc, "OBJECT", "ENCODING", key) == "$9\r\nhashtable\r\n"
	}
	parse := func(raw string) resp.Value {
		br := bufio.NewReader(strings.NewReader(raw))
		v, err := resp.ReadValue(br, resp.DefaultReplyLimits)
		if err != nil {
			t.Fatalf("reply %q: %v", raw, err)
		}
		return v
	}
	flat := func(v resp.Value) []string {
		var out []string
		for _, e := range v.Elems {
			if len(e.Elems) > 0 {
				for _, x := range e.Elems {
					out = append(out, x.Str)
				}
			} else {
				out = append(out, e.Str)
			}
		}
		return out
	}
	// sortedPairs renders a flat field/value list as sorted "f=v" items.
	sortedPairs := func(xs []string) string {
		var ps []string
		for i := 0; i+1 < len(xs); i += 2 {
			ps = append(ps, xs[i]+"="+xs[i+1])
		}
		slices.Sort(ps)
		return strings.Join(ps, ",")
	}
	// fullScan runs HSCAN key <cursor> opts... from 0 to the end and
	// returns the set of pairs it saw.
	fullScan := func(p *diffSide, key string, opts []string, vigil bool) string {
		cursor := "0"
		seen := map[string]bool{}
		for i := 0; i < 10000; i++ {
			args := append([]string{"HSCAN", key, cursor}, opts...)
			var raw string
			if vigil {
				raw = ts.do(p.vc, args...)
			} else {
				raw = h.redis(p, args...)
			}
			v := parse(raw)
			if v.IsError() || len(v.Elems) != 2 {
				return raw
			}
			xs := flat(v.Elems[1])
			for j := 0; j+1 < len(xs); j += 2 {
				seen[xs[j]+"="+xs[j+1]] = true
			}
			cursor = v.Elems[0].Str
			if cursor == "0" {
				break
			}
		}
		var ps []string
		for k := range seen {
			ps = append(ps, k)
		}
		slices.Sort(ps)
		return strings.Join(ps, ",")
	}
	compare := func(p *diffSide, args []string, r, v string, i int) {
		if r == v {
			return
		}
		fail := func() {
			h.fatalf("command %d %q (RESP%d):\n vigil: %q\n redis: %q", i, args, p.proto, v, r)
		}
		rv, vv := parse(r), parse(v)
		if rv.IsError() || vv.IsError() || rv.Kind != vv.Kind {
			fail()
		}
		name := strings.ToUpper(args[0])
		switch name {
		case "HKEYS", "HVALS", "HGETALL":
			if !hashtable(p, args[1]) {
				fail()
			}
			a, b := flat(rv), flat(vv)
			if name == "HGETALL" {
				if sortedPairs(a) != sortedPairs(b) {
					fail()
				}
				return
			}
			slices.Sort(a)
			slices.Sort(b)
			if !slices.Equal(a, b) {
				fail()
			}
		case "HSCAN":
			if !hashtable(p, args[1]) {
				fail()
			}
			if fullScan(p, args[1], args[3:], false) != fullScan(p, args[1], args[3:], true) {
				fail()
			}
		case "HRANDFIELD":
			if len(rv.Elems) != len(vv.Elems) || len(args) == 2 {
				if len(args) == 2 && rv.Kind == resp.KindBulk && vv.Kind == resp.KindBulk {
					// One random field: it must exist.
					if ts.do(p.vc, "HEXISTS", args[1], vv.Str) == ":1\r\n" {
						return
					}
				}
				fail()
			}
			withValues := len(args) == 4
			all := map[string]string{}
			xs := flat(parse(ts.do(p.vc, "HGETALL", args[1])))
			for j := 0; j+1 < len(xs); j += 2 {
				all[xs[j]] = xs[j+1]
			}
			got := flat(vv)
			step := 1
			if withValues {
				step = 2
			}
			distinct := map[string]bool{}
			for j := 0; j < len(got); j += step {
				val, ok := all[got[j]]
				if !ok || (withValues && got[j+1] != val) {
					fail()
				}
				distinct[got[j]] = true
			}
			if n, _ := strconv.Atoi(args[2]); n > 0 && len(distinct) != len(got)/step {
				fail() // a positive count returns distinct fields
			}
			if withValues && p.proto == 3 {
				for _, e := range vv.Elems {
					if e.Kind != resp.KindArray || len(e.Elems) != 2 {
						fail()
					}
				}
			}
		default:
			fail()
		}
	}
	checkKey := func(p *diffSide, key string, i int) {
		for _, cmd := range [][]string{{"OBJECT", "ENCODING", key}, {"MEMORY", "USAGE", key}} {
			if cmd[0] == "MEMORY" && hashtable(p, key) {
				continue // the sampled entries and rehash progress follow Redis's hash seed
			}
			r, v := both(p, cmd...)
			if r != v {
				h.fatalf("after command %d, %v: vigil %q, redis %q", i, cmd, v, r)
			}
		}
	}

	compared := h.run(2500, diffRun{conns: conns, rng: rng, gen: gen, compare: compare,
		// A transaction of writes and order-independent reads.
		queued: func(args []string) []string {
			switch strings.ToUpper(args[0]) {
			case "HKEYS", "HVALS", "HGETALL", "HSCAN", "HRANDFIELD":
				return []string{"HLEN", args[1]}
			}
			return args
		},
		written: func(p *diffSide, args []string, i int) {
			checkKey(p, args[1], i)
			if strings.ToUpper(args[0]) == "COPY" {
				checkKey(p, args[2], i)
			}
		}})
	h.checkAOF()
	for _, k := range keys {
		for _, cmd := range [][]string{{"HLEN", k}, {"TYPE", k}} {
			r, v := both(conns[0], cmd...)
			if r != v {
				t.Errorf("%v: vigil %q, redis %q", cmd, v, r)
			}
		}
		checkKey(conns[0], k, -1)
	}
	t.Logf("%d random hash commands answered as redis-server does", compared)
}
