package redisutil

import (
	"encoding/hex"
	"strings"
	"testing"
)

// Entries as redis-server 7.0's listpack.c writes them (lpAppend).
func TestLPAppendEntry(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"0", "0001"},
		{"127", "7f01"},
		{"128", "c08002"},
		{"-1", "dfff02"},
		{"-4096", "d00002"},
		{"4096", "f1001003"},
		{"-32769", "f2ff7fff04"},
		{"8388608", "f30000800005"},
		{"2147483648", "f4000000800000000009"},
		{"007", "83303037" + "04"},
		{"a", "816102"},
	} {
		got := LPAppendEntry(nil, []byte(c.in))
		if hex.EncodeToString(got) != c.want {
			t.Errorf("%q: %x, want %s", c.in, got, c.want)
		}
		if LPEntrySize([]byte(c.in)) != len(got) {
			t.Errorf("%q: size %d, want %d", c.in, LPEntrySize([]byte(c.in)), len(got))
		}
	}
	for _, n := range []int{63, 64, 4095, 4096, 20000} {
		s := []byte(strings.Repeat("x", n))
		got := LPAppendEntry(nil, s)
		if LPEntrySize(s) != len(got) {
			t.Errorf("len %d: size %d, want %d", n, LPEntrySize(s), len(got))
		}
	}
	// A 64-byte string: a 2-byte header, 66 bytes, backlen 1.
	if got := LPAppendEntry(nil, []byte(strings.Repeat("x", 64))); hex.EncodeToString(got[:2]) != "e040" || got[len(got)-1] != 66 {
		t.Errorf("64-byte string: %x...%x", got[:2], got[len(got)-1])
	}
	// A 200-byte string: 202 bytes, a 2-byte backlen (lpEncodeBacklen).
	if got := LPAppendEntry(nil, []byte(strings.Repeat("x", 200))); hex.EncodeToString(got[len(got)-2:]) != "01ca" {
		t.Errorf("200-byte string backlen: %x", got[len(got)-2:])
	}
	for _, v := range []int64{0, 127, 128, -4096, 4095, 40000, -8388608, 1 << 31, -1 << 62} {
		if LPIntSize(v) != len(LPAppendInt(nil, v)) {
			t.Errorf("%d: LPIntSize %d, appended %d", v, LPIntSize(v), len(LPAppendInt(nil, v)))
		}
	}
}
