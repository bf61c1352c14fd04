package hll

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"testing"
)

// Registers redis-server 7.0.15 set for "a", "b" and "c" (PFDEBUG DECODE
// after PFADD h a b c: "Z:8436 v:1,1 Z:4274 v:2,1 Z:3068 v:1,1 Z:603").
func TestPatLenMatchesRedis(t *testing.T) {
	got := map[int]uint8{}
	for _, e := range []string{"a", "b", "c"} {
		i, c := PatLen([]byte(e))
		got[i] = c
	}
	want := map[int]uint8{8436: 1, 12711: 2, 15780: 1}
	for i, c := range want {
		if got[i] != c {
			t.Fatalf("registers %v, want %v", got, want)
		}
	}
	b := New()
	for _, e := range []string{"a", "b", "c"} {
		b, _ = Add(b, []byte(e), 3000)
	}
	if d := string(Decode(b)); d != "Z:8436 v:1,1 Z:4274 v:2,1 Z:3068 v:1,1 Z:603" {
		t.Fatalf("DECODE %q", d)
	}
	if c, invalid := Count(b); c != 3 || invalid {
		t.Fatalf("count %d invalid %v", c, invalid)
	}
}

func TestNew(t *testing.T) {
	want := []byte("HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x7f\xff")
	if b := New(); !bytes.Equal(b, want) || !Valid(b) {
		t.Fatalf("New() = %q", b)
	}
	if c, ok := CachedCard(New()); c != 0 || !ok {
		t.Fatalf("cached card %d %v", c, ok)
	}
}

func TestValid(t *testing.T) {
	dense := make([]byte, DenseSize)
	copy(dense, "HYLL")
	for _, tc := range []struct {
		b    []byte
		want bool
	}{
		{New(), true},
		{dense, true},
		{dense[:DenseSize-1], false},
		{[]byte("HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"), false}, // 15 bytes
		{[]byte("HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"), true},
		{[]byte("HYLL\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"), false},
		{[]byte("HYLX\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"), false},
	} {
		if got := Valid(tc.b); got != tc.want {
			t.Errorf("Valid(%.20q) = %v", tc.b, got)
		}
	}
}

// A sparse and a dense HLL fed the same elements hold the same registers
// and count the same; the sparse one never grows past maxSparse and is
// promoted when it would.
func TestSparseAndDenseAgree(t *testing.T) {
	for _, maxSparse := range []int64{0, 30, 300, 3000} {
		rng := rand.New(rand.NewPCG(1, uint64(maxSparse)))
		s := New()
		d, _ := ToDense(New())
		promoted := false
		for n := 0; n < 5000; n++ {
			e := []byte(strconv.Itoa(rng.IntN(100000)))
			var rs, rd int
			s, rs = Add(s, e, maxSparse)
			d, rd = Add(d, e, maxSparse)
			if rs != rd {
				t.Fatalf("max %d: sparse changed %d, dense %d", maxSparse, rs, rd)
			}
			if Encoding(s) == EncSparse && int64(len(s)) > max(maxSparse, int64(len(New()))) {
				t.Fatalf("max %d: sparse of %d bytes", maxSparse, len(s))
			}
			if Encoding(s) == EncDense {
				promoted = true
			}
			if n%500 == 0 || n == 4999 {
				sd, ok := ToDense(s)
				if !ok || !bytes.Equal(sd[HdrSize:], d[HdrSize:]) {
					t.Fatalf("max %d after %d: registers differ", maxSparse, n)
				}
				cs, _ := Count(s)
				cd, _ := Count(d)
				if cs != cd {
					t.Fatalf("max %d: counts %d and %d", maxSparse, cs, cd)
				}
			}
		}
		if !promoted {
			t.Fatalf("max %d: never promoted", maxSparse)
		}
		var raw [Registers]uint8
		if !Merge(&raw, s) {
			t.Fatal("merge")
		}
		cd, _ := Count(d)
		if c := CountRaw(&raw); c != cd {
			t.Fatalf("raw count %d, dense %d", c, cd)
		}
	}
}

// Corrupt sparse bodies are reported, never a panic.
func TestCorruptSparse(t *testing.T) {
	hdr := "HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80"
	for _, body := range []string{"", "\x7f", "\x7f\xff\x80", "\x7f\xfe\x80\x80", "\x00", "\xff\xff\xff\xff\x7f\xff"} {
		b := []byte(hdr + body)
		if _, invalid := Count(b); !invalid {
			t.Errorf("%q: Count valid", body)
		}
		if _, ok := ToDense(b); ok {
			t.Errorf("%q: ToDense ok", body)
		}
		var raw [Registers]uint8
		if Merge(&raw, b) {
			t.Errorf("%q: Merge ok", body)
		}
		for i := 0; i < 50; i++ {
			Add(append([]byte(nil), b...), []byte(strconv.Itoa(i)), 3000)
		}
	}
}

// The estimator out of long long range answers what x86-64 Redis does.
func TestEstimateOutOfRange(t *testing.T) {
	var h [64]int
	h[50] = Registers
	if e := estimate(&h); e != 1<<63 {
		t.Fatalf("all registers 50: %d", e)
	}
	h = [64]int{}
	h[63] = Registers
	if e := estimate(&h); e != 1<<63 {
		t.Fatalf("all registers 63: %d", e)
	}
	h = [64]int{}
	h[0] = Registers
	if e := estimate(&h); e != 0 {
		t.Fatalf("empty: %d", e)
	}
}

func TestDenseRegisters(t *testing.T) {
	d, _ := ToDense(New())
	rng := rand.New(rand.NewPCG(3, 4))
	want := make([]uint8, Registers)
	for i := range want {
		want[i] = uint8(rng.IntN(64))
		SetRegister(d, i, want[i])
	}
	for i, w := range want {
		if got := DenseRegister(d, i); got != w {
			t.Fatalf("register %d = %d, want %d", i, got, w)
		}
	}
}
