package server

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// TestListCompressBigDifferential: lists long enough that Vigil holds
// their inner chunks compressed (tens of 4 KB chunks), created at
// list-compress-depth 0, 1 and 2, go through edits in the middle (LSET,
// LREM, LTRIM), pops and pushes at the ends and reads (LINDEX, LRANGE,
// LPOS) beside redis-server 7.0: every reply, MEMORY USAGE ... SAMPLES 0,
// DEBUG OBJECT's quicklist fields and the DUMP bytes are Redis's.
func TestListCompressBigDifferential(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server")
	}
	d := newListDiff(t)
	rng := rand.New(rand.NewPCG(31, 32))
	do := func(args ...string) {
		t.Helper()
		if got, want := d.run(args...); got != want {
			t.Fatalf("after:\n%s\nvigil: %.300q\nredis: %.300q", d.last(5), got, want)
		}
	}
	elem := func() string {
		if rng.IntN(4) == 0 {
			return strconv.Itoa(rng.IntN(100000))
		}
		return "element-" + strconv.Itoa(rng.IntN(5000)) + strings.Repeat("x", rng.IntN(30))
	}
	do("CONFIG", "SET", "rdbcompression", "no")
	for _, depth := range []string{"0", "1", "2"} {
		do("FLUSHALL")
		do("CONFIG", "SET", "list-compress-depth", depth)
		for i := 0; i < 3000; i += 100 {
			args := []string{"RPUSH", "big"}
			for j := 0; j < 100; j++ {
				args = append(args, elem())
			}
			do(args...)
		}
		for step := 0; step < 300; step++ {
			n := 2000
			switch rng.IntN(10) {
			case 0:
				do("LSET", "big", strconv.Itoa(rng.IntN(n)), elem())
			case 1:
				do("LREM", "big", strconv.Itoa(rng.IntN(3)-1), "element-"+strconv.Itoa(rng.IntN(5000)))
			case 2:
				do("LTRIM", "big", strconv.Itoa(rng.IntN(3)), strconv.Itoa(-1-rng.IntN(3)))
			case 3:
				do([]string{"LPOP", "RPOP"}[rng.IntN(2)], "big", strconv.Itoa(1+rng.IntN(40)))
			case 4:
				args := []string{[]string{"LPUSH", "RPUSH"}[rng.IntN(2)], "big"}
				for j := rng.IntN(60); j >= 0; j-- {
					args = append(args, elem())
				}
				do(args...)
			case 5:
				do("LINDEX", "big", strconv.Itoa(rng.IntN(n)))
			case 6:
				a := rng.IntN(n)
				do("LRANGE", "big", strconv.Itoa(a), strconv.Itoa(a+rng.IntN(200)))
			case 7:
				do("LPOS", "big", "element-"+strconv.Itoa(rng.IntN(5000)), "COUNT", "0")
			case 8:
				do("MEMORY", "USAGE", "big", "SAMPLES", "0")
			default:
				do("DEBUG", "OBJECT", "big")
			}
		}
		do("MEMORY", "USAGE", "big", "SAMPLES", "0")
		do("LRANGE", "big", "0", "-1")
		do("DUMP", "big")
	}
}
