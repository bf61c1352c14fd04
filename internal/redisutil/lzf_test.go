package redisutil

import (
	"bytes"
	"math/rand"
	"testing"
)

// TestLZFRoundTrip: whatever LZFCompress produces, LZFDecompress restores.
func TestLZFRoundTrip(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 3000; i++ {
		n := 1 + r.Intn(2000)
		alpha := 1 + r.Intn(6)
		b := make([]byte, n)
		for j := range b {
			b[j] = byte('a' + r.Intn(alpha))
		}
		out := make([]byte, n+n/16+64)
		k := LZFCompress(b, out)
		if k == 0 {
			t.Fatalf("case %d: no room in a buffer larger than the input", i)
		}
		got, err := LZFDecompress(out[:k], n)
		if err != nil || !bytes.Equal(got, b) {
			t.Fatalf("case %d (%d bytes): round trip failed: %v", i, n, err)
		}
	}
}

// TestLZFDecompressCorrupt: malformed streams are errors, never panics.
func TestLZFDecompressCorrupt(t *testing.T) {
	for _, in := range [][]byte{{5, 'a'}, {0xe0}, {0x20, 0}, {0x20, 5}, {0, 'a', 0x20, 0}} {
		if _, err := LZFDecompress(in, 10); err == nil {
			t.Errorf("%v: no error", in)
		}
	}
}

// FuzzLZFDecompress: LZF data comes from RDB files and masters; no input
// may panic, and whatever decodes has the announced length.
func FuzzLZFDecompress(f *testing.F) {
	out := make([]byte, 64)
	n := LZFCompress(bytes.Repeat([]byte("abc"), 30), out)
	f.Add(out[:n], 90)
	f.Add([]byte{0, 'a'}, 1)
	f.Add([]byte{0xe0, 0xff, 0}, 300)
	f.Fuzz(func(t *testing.T, in []byte, n int) {
		got, err := LZFDecompress(in, n)
		if err == nil && len(got) != n {
			t.Fatalf("decoded %d bytes, announced %d", len(got), n)
		}
	})
}
