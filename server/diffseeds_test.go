package server

import (
	"os"
	"strconv"
	"testing"
)

// forDiffSeeds runs a randomized differential test (f, a stream seeded by
// seed) over the seeds the environment asks for:
//
//   - by default, only def: the seed CI runs;
//   - VIGIL_DIFF_SEEDS=N: def and N-1 more, VIGIL_DIFF_SEED_BASE+1,
//     VIGIL_DIFF_SEED_BASE+2, ... (base 1000 by default), each a subtest
//     named seed=S (`just diff-nightly` sets these);
//   - VIGIL_DIFF_SEED=S: S only, to replay the stream of a failed subtest.
func forDiffSeeds(t *testing.T, def uint64, f func(t *testing.T, seed uint64)) {
	if v, err := strconv.ParseUint(os.Getenv("VIGIL_DIFF_SEED"), 10, 64); err == nil {
		f(t, v)
		return
	}
	n, err := strconv.Atoi(os.Getenv("VIGIL_DIFF_SEEDS"))
	if err != nil || n <= 1 {
		f(t, def)
		return
	}
	base := uint64(1000)
	if v, err := strconv.ParseUint(os.Getenv("VIGIL_DIFF_SEED_BASE"), 10, 64); err == nil {
		base = v
	}
	seeds := []uint64{def}
	for i := 1; i < n; i++ {
		seeds = append(seeds, base+uint64(i))
	}
	for _, seed := range seeds {
		t.Run("seed="+strconv.FormatUint(seed, 10), func(t *testing.T) { f(t, seed) })
	}
}
