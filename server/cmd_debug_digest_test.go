package server

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// TestDebugDigestDifferential (interop) loads the same seeded random
// dataset into Vigil and a live redis-server 7.0.15, every type in each of
// its encodings (embstr/int/raw strings, lists, intset and hashtable
// sets, listpack and hashtable hashes, listpack and skiplist sorted sets
// with integral, fractional, huge, tiny and infinite scores, streams
// copied from Redis with DUMP/RESTORE), some keys with a TTL, in several
// databases, and checks that DEBUG DIGEST and DEBUG DIGEST-VALUE of every
// key give the same hex on both, after each round of writes.
func TestDebugDigestDifferential(t *testing.T) {
	forDiffSeeds(t, 7, testDebugDigestDifferential)
}

func testDebugDigestDifferential(t *testing.T, seed uint64) {
	h := newDiffHarness(t, newTestServer(t, "--enable-debug-command", "yes"))
	s := h.side(2)
	rng := rand.New(rand.NewPCG(22, seed))
	h.begin(s)
	mustSame := func(args ...string) string {
		t.Helper()
		r, v := h.both(s, args...)
		if r != v {
			h.fatalf("%v: redis %q vigil %q", args, r, v)
		}
		return r
	}
	elem := func() string {
		switch rng.IntN(6) {
		case 0:
			return strconv.Itoa(rng.IntN(2000) - 1000)
		case 1:
			return strings.Repeat("x", 60+rng.IntN(20))
		case 2:
			return ""
		}
		return "e" + strconv.Itoa(rng.IntN(300))
	}
	score := func() string {
		switch rng.IntN(8) {
		case 0:
			return []string{"inf", "-inf", "0", "-0", "1e300", "1e-300", "0.1", "3.0000000000000004"}[rng.IntN(8)]
		case 1:
			return strconv.FormatFloat(rng.NormFloat64()*1e6, 'g', -1, 64)
		}
		return strconv.Itoa(rng.IntN(100))
	}
	var keys []string
	for round := 0; round < 4; round++ {
		for db := 0; db < 3; db++ {
			mustSame("SELECT", strconv.Itoa(db))
			for i := 0; i < 25; i++ {
				k := "k" + strconv.Itoa(rng.IntN(40))
				n := 1 + rng.IntN(3)
				if rng.IntN(5) == 0 {
					n = 100 + rng.IntN(200) // past every listpack/intset limit
				}
				var args []string
				switch rng.IntN(7) {
				case 0:
					args = []string{"SET", k, elem()}
				case 1:
					args = []string{"RPUSH", k}
					for j := 0; j < n; j++ {
						args = append(args, elem())
					}
				case 2:
					args = []string{"SADD", k}
					for j := 0; j < n; j++ {
						if rng.IntN(2) == 0 {
							args = append(args, strconv.Itoa(rng.IntN(100000)))
						} else {
							args = append(args, elem())
						}
					}
				case 3:
					args = []string{"HSET", k}
					for j := 0; j < n; j++ {
						args = append(args, elem(), elem())
					}
				case 4:
					args = []string{"ZADD", k}
					for j := 0; j < n; j++ {
						args = append(args, score(), elem())
					}
				case 5:
					args = []string{"PEXPIRE", k, strconv.Itoa(100000 + rng.IntN(100000))}
				case 6:
					args = []string{"DEL", k}
				}
				mustSame(args...)
				keys = append(keys, k)
			}
			// A stream, built on Redis and restored into Vigil.
			sk := "x" + strconv.Itoa(round)
			for j := 0; j < 5+rng.IntN(150); j++ {
				args := []string{"XADD", sk, "*"}
				for f := 0; f <= rng.IntN(3); f++ {
					args = append(args, "f"+strconv.Itoa(f+rng.IntN(2)), elem())
				}
				h.redis(s, args...)
			}
			if rng.IntN(2) == 0 {
				h.redis(s, "XTRIM", sk, "MAXLEN", strconv.Itoa(rng.IntN(100)))
			}
			dump := h.redis(s, "DUMP", sk)
			payload := dump[strings.Index(dump, "\r\n")+2 : len(dump)-2]
			h.vigil(s, "DEL", sk)
			if got := h.vigil(s, "RESTORE", sk, "0", payload); got != "+OK\r\n" {
				h.fatalf("RESTORE %s: %q", sk, got)
			}
			keys = append(keys, sk)
			mustSame(append([]string{"DEBUG", "DIGEST-VALUE"}, keys...)...)
		}
		if d := mustSame("DEBUG", "DIGEST"); d == "+0000000000000000000000000000000000000000\r\n" {
			h.fatalf("empty digest")
		}
	}
	mustSame("DEBUG", "DIGEST-VALUE")
	mustSame("FLUSHALL")
	mustSame("DEBUG", "DIGEST")
}
