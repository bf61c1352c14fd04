package server

import (
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestHLLDifferentialRandom sends a seeded random stream of HyperLogLog
// commands (valid and invalid, on a few keys, with hll-sparse-max-bytes
// changing so values are promoted to dense at different sizes, with
// corrupted copies of real HLLs and hand-made dense values, sometimes in
// MULTI) to Vigil's test server and to redis-server 7.0.15, and compares
// every reply and, after every command, the exact bytes of the keys it
// names (GET): the representation must be Redis's, byte for byte. At the
// end both propagated the same stream (PFCOUNT included when it refreshed
// the cached cardinality).
func TestHLLDifferentialRandom(t *testing.T) {
	forDiffSeeds(t, 14, testHLLDifferentialRandom) // diffharness_test.go
}

func testHLLDifferentialRandom(t *testing.T, seed uint64) {
	h := newDiffHarness(t, nil)
	h.keep = 40
	ts := h.ts
	side := h.side(2)
	rc, rbr, c := side.rc, side.rbr, side.vc
	if v, err := strconv.ParseUint(os.Getenv("VIGIL_HLL_SEED"), 10, 64); err == nil {
		seed = v // to explore other streams
	}
	rng := rand.New(rand.NewPCG(2026, seed))
	keys := []string{"h1", "h2", "h3", "h4", "s"}
	key := func() string { return keys[rng.IntN(len(keys))] }
	ele := func() string {
		if rng.IntN(50) == 0 {
			return ""
		}
		return "e" + strconv.Itoa(rng.IntN(6000))
	}
	// redisGet is the value of k on Redis (nil reply: "").
	redisGet := func(k string) []byte {
		v := readReply(t, rawDo(t, rc, rbr, "GET", k))
		return []byte(v.Str)
	}
	corrupt := func(b []byte) []byte {
		b = append([]byte(nil), b...)
		switch rng.IntN(6) {
		case 0:
			if len(b) > 16 {
				b = b[:16+rng.IntN(len(b)-16)]
			}
		case 1:
			b = append(b, byte(rng.IntN(256)))
		case 2:
			b = b[:min(len(b), rng.IntN(20))]
		default:
			for n := 1 + rng.IntN(3); n > 0 && len(b) > 0; n-- {
				i := rng.IntN(len(b))
				if len(b) > 16 && rng.IntN(4) > 0 {
					i = 16 + rng.IntN(len(b)-16)
				}
				b[i] = byte(rng.IntN(256))
			}
		}
		return b
	}
	dense := func() []byte {
		b := make([]byte, 16+12288)
		copy(b, "HYLL")
		b[15] = 0x80
		switch rng.IntN(4) {
		case 0: // every register 50 or 63: the estimator out of range
			fill := []byte{0xb2, 0x2c, 0xcb, 0xff}[rng.IntN(4)]
			if fill != 0xff {
				for i := 16; i < len(b); i += 3 {
					b[i], b[i+1], b[i+2] = 0xb2, 0x2c, 0xcb // 50,50,50,50
				}
			} else {
				for i := 16; i < len(b); i++ {
					b[i] = 0xff
				}
			}
		case 1:
			for i := 16; i < len(b); i++ {
				b[i] = byte(rng.IntN(256))
			}
		default:
			for n := rng.IntN(200); n > 0; n-- {
				b[16+rng.IntN(12288)] = byte(rng.IntN(256))
			}
		}
		return b
	}
	inMulti := false
	gen := func() (args []string, touched []string) {
		switch rng.IntN(20) {
		case 0, 1, 2, 3, 4, 5:
			k := key()
			args = []string{"PFADD", k}
			n := rng.IntN(12)
			if rng.IntN(20) == 0 {
				n = rng.IntN(400)
			}
			for ; n > 0; n-- {
				args = append(args, ele())
			}
			return args, []string{k}
		case 6, 7, 8:
			args = []string{"PFCOUNT", key()}
			for n := rng.IntN(3); n > 0 && rng.IntN(2) == 0; n-- {
				args = append(args, key())
			}
			return args, args[1:]
		case 9, 10:
			args = []string{"PFMERGE", key()}
			for n := rng.IntN(4); n > 0; n-- {
				args = append(args, key())
			}
			return args, args[1:2]
		case 11, 12:
			sub := []string{"ENCODING", "DECODE", "TODENSE", "encoding", "decode", "GETREG", "bad"}[rng.IntN(7)]
			if sub == "GETREG" && rng.IntN(3) > 0 {
				sub = "ENCODING"
			}
			k := key()
			return []string{"PFDEBUG", sub, k}, []string{k}
		case 13:
			return []string{"CONFIG", "SET", "hll-sparse-max-bytes", []string{"0", "20", "100", "300", "1000", "3000", "3000", "3000"}[rng.IntN(8)]}, nil
		case 14:
			// A corrupted copy of a real HLL.
			src, k := key(), key()
			var b []byte
			if !inMulti {
				b = redisGet(src)
			}
			if len(b) == 0 {
				b = []byte("HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f\xff")
			}
			return []string{"SET", k, string(corrupt(b))}, []string{k}
		case 15:
			k := key()
			return []string{"SET", k, string(dense())}, []string{k}
		case 16:
			k := key()
			if rng.IntN(4) > 0 {
				return []string{"DEL", k}, []string{k}
			}
			return []string{"SET", k, "plain"}, []string{k}
		case 17:
			return []string{"PFADD", key()}, nil
		case 18:
			// Arity errors (PFSELFTEST itself, seconds long on Redis, is
			// run once at the end).
			return [][]string{{"PFADD"}, {"PFCOUNT"}, {"PFMERGE"}, {"PFDEBUG", "ENCODING"}, {"PFSELFTEST", "x"}}[rng.IntN(5)], nil
		}
		k := key()
		return []string{"OBJECT", "ENCODING", k}, nil
	}
	h.begin(side)
	seen := map[string]int{}
	compare := func(i int, args []string) {
		t.Helper()
		want, err := render(rawDo(t, rc, rbr, args...))
		if err != nil {
			t.Fatal(err)
		}
		got := ts.doR(t, c, args...)
		if got != want {
			h.fatalf("command %d %q:\n vigil: %.300s\n redis: %.300s", i, args, got, want)
		}
		for _, s := range []string{"INVALIDOBJ", "WRONGTYPE", "+dense", "+sparse", "-9223372036854775808"} {
			if strings.Contains(got, s) {
				seen[s]++
			}
		}
	}
	compared := 0
	for i := 0; i < 1500; i++ {
		if rng.IntN(25) == 0 {
			compare(i, []string{"MULTI"})
			inMulti = true
			var touched []string
			for n := 1 + rng.IntN(4); n > 0; n-- {
				args, tk := gen()
				if args[0] == "SET" && len(args) == 3 && len(args[2]) > 0 && rng.IntN(2) == 0 {
					args = []string{"PFADD", args[1], "m"}
				}
				compare(i, args)
				touched = append(touched, tk...)
				h.record("  " + fmtArgs(args))
			}
			compare(i, []string{"EXEC"})
			inMulti = false
			for _, k := range touched {
				compare(i, []string{"GET", k})
				compare(i, []string{"MEMORY", "USAGE", k})
			}
			compared++
			continue
		}
		args, touched := gen()
		h.record(fmtArgs(args))
		compare(i, args)
		for _, k := range touched {
			compare(i, []string{"GET", k})
			compare(i, []string{"MEMORY", "USAGE", k})
		}
		compared++
	}
	h.checkAOF()
	for _, k := range keys {
		for _, cmd := range [][]string{{"GET", k}, {"OBJECT", "ENCODING", k}, {"STRLEN", k}, {"MEMORY", "USAGE", k}} {
			compare(-1, cmd)
		}
	}
	// PFSELFTEST checks that 10^k random elements (a random seed on each
	// side) stay sparse while 10^k < hll-sparse-max-bytes/2. Below the
	// default its outcome can be chance on both servers: at 20, one
	// element stays sparse (20 bytes) only when its register is among the
	// first or last 64 of 16384, else it takes 21 and goes dense (seed
	// 1001 saw redis-server pass by that chance); at 300, 100 elements
	// take about 280-320 bytes. At the default 3000 it passes.
	compare(-1, []string{"CONFIG", "SET", "hll-sparse-max-bytes", "3000"})
	compare(-1, []string{"PFSELFTEST"})
	t.Logf("%d random HyperLogLog commands answered as redis-server does, values byte-identical; replies seen: %v", compared, seen)
}

func fmtArgs(args []string) string {
	s := ""
	for i, a := range args {
		if i > 0 {
			s += " "
		}
		if len(a) > 40 {
			a = a[:40] + "..."
		}
		s += strconv.Quote(a)
	}
	return s
}
