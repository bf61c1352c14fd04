package redisutil

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"os"
	"strconv"
	"strings"
	"testing"
)

// testdata/lzf-redis.txt holds the LZF bytes redis-server 7.0.15 wrote
// (DUMP of a string, rdbSaveLzfStringObject) for inputs lzfInput builds:
// one line "n alphabet shape hex", "-" where Redis found no saving (its
// lzf_compress into len-4 bytes gave 0, and it stored the string raw).
// Shapes: 0 random, 1 runs and near repeats, 2 repeats 300 bytes apart.

// lzfInput is the input of a vector: a 64-bit LCG (PCG's multiplier),
// the same in the generator script.
func lzfInput(n, alpha, shape int, seed uint64) []byte {
	x := seed
	r := func(k int) int {
		x = x*6364136223846793005 + 1442695040888963407
		return int((x >> 33) % uint64(k))
	}
	b := make([]byte, n)
	for i := range b {
		switch {
		case shape == 1 && i >= 8 && r(4) > 0:
			b[i] = b[i-1-r(8)]
		case shape == 2 && i >= 300 && r(8) > 0:
			b[i] = b[i-300]
		default:
			b[i] = byte(r(alpha))
		}
	}
	return b
}

// TestLZFSameAsRedis: LZFCompress writes redis-server's bytes, and they
// decompress to the input.
func TestLZFSameAsRedis(t *testing.T) {
	f, err := os.Open("testdata/lzf-redis.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	cases := 0
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		n, _ := strconv.Atoi(fs[0])
		alpha, _ := strconv.Atoi(fs[1])
		shape, _ := strconv.Atoi(fs[2])
		in := lzfInput(n, alpha, shape, uint64(n*1000+alpha*10+shape))
		out := make([]byte, n-4)
		got := LZFCompress(in, out)
		if fs[3] == "-" {
			if got != 0 {
				t.Errorf("%s: %d bytes where Redis found no room", sc.Text(), got)
			}
			continue
		}
		want, _ := hex.DecodeString(fs[3])
		if !bytes.Equal(out[:got], want) {
			t.Errorf("n %d alphabet %d shape %d: %d bytes %.40x..., Redis %d bytes %.40x...", n, alpha, shape, got, out[:got], len(want), want)
		}
		back, err := LZFDecompress(want, n)
		if err != nil || !bytes.Equal(back, in) {
			t.Errorf("n %d alphabet %d shape %d: Redis's bytes do not decompress to the input: %v", n, alpha, shape, err)
		}
		cases++
	}
	if cases < 20 {
		t.Fatalf("only %d vectors", cases)
	}
}
