package rdb

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/vigil-kv/vigil/internal/redisutil"
)

// rdbLen is the size of rdbSaveLen's encoding of l.
func rdbLen(l int) int {
	switch {
	case l < 1<<6:
		return 1
	case l < 1<<14:
		return 2
	}
	return 5
}

// savedLen is what rdbSaveRawString writes for a string over 20 bytes
// that is not an integer (DEBUG OBJECT's serializedlength).
func savedLen(b []byte) int {
	out := make([]byte, len(b)-4)
	if n := redisutil.LZFCompress(b, out); n > 0 {
		return 1 + rdbLen(n) + rdbLen(len(b)) + n
	}
	return rdbLen(len(b)) + len(b)
}

// TestLZFMatchesRedis: serializedlength of DEBUG OBJECT on redis-server
// 7.0.15 for these values (rdbcompression yes).
func TestLZFMatchesRedis(t *testing.T) {
	var digits strings.Builder
	for i := 0; i < 200; i++ {
		digits.WriteString(strconv.Itoa(i))
	}
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	tests := []struct {
		name string
		in   []byte
		want int
	}{
		{"a*21", bytes.Repeat([]byte("a"), 21), 9},
		{"a*30", bytes.Repeat([]byte("a"), 30), 12},
		{"a*100", bytes.Repeat([]byte("a"), 100), 13},
		{"a*300", bytes.Repeat([]byte("a"), 300), 16},
		{"a*70000", bytes.Repeat([]byte("a"), 70000), 812},
		{"ab*50", bytes.Repeat([]byte("ab"), 50), 14},
		{"abc*100", bytes.Repeat([]byte("abc"), 100), 18},
		{"0-9*10", bytes.Repeat([]byte("0123456789"), 10), 22},
		{"digits", []byte(digits.String()), 469},
		{"text", []byte("the quick brown fox jumps over the lazy dog; the quick brown fox jumps over the lazy dog again and again"), 71},
		{"incompressible", all, 258},
		{"bytes*3", bytes.Repeat(all, 3), 280},
		{"match to the end", []byte("xyzxyzxyzxyzxyzxyQQQQ"), 15},
		{"long match near the end", []byte("abcdefghabcdefghabcdefghababcdefghabcdefghab"), 22},
	}
	for _, tc := range tests {
		if got := savedLen(tc.in); got != tc.want {
			t.Errorf("%s: serialized length %d, Redis %d", tc.name, got, tc.want)
		}
	}
}

// BenchmarkLZFCompressSmall: one value of integration/benchsave's dataset
// (49 bytes), as a BGSAVE compresses each.
func BenchmarkLZFCompressSmall(b *testing.B) {
	in := benchValue(123456)
	out := make([]byte, len(in))
	b.SetBytes(int64(len(in)))
	for i := 0; i < b.N; i++ {
		if redisutil.LZFCompress(in, out) == 0 {
			b.Fatal("incompressible")
		}
	}
}
