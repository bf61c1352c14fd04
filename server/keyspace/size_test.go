package keyspace

import (
	"strings"
	"testing"
)

func TestJemallocSize(t *testing.T) {
	for _, tc := range []struct{ n, want uint64 }{
		{0, 8}, {1, 8}, {8, 8}, {9, 16}, {16, 16}, {17, 32}, {32, 32}, {33, 48}, {49, 64},
		{113, 128}, {128, 128}, {129, 160}, {160, 160}, {161, 192}, {225, 256}, {256, 256},
		{257, 320}, {1024, 1024}, {1025, 1280}, {4097, 5120}, {5006, 5120}, {14337, 16384},
		{16385, 20480}, {32773, 40960}, {65536, 65536}, {65537, 81920},
		{1 << 20, 1 << 20}, {1<<20 + 1, 1310720}, {2000012, 2097152}, {4194305, 5242880},
	} {
		if got := JemallocSize(tc.n); got != tc.want {
			t.Errorf("JemallocSize(%d) = %d, want %d", tc.n, got, tc.want)
		}
	}
}

func TestSdsHdrSize(t *testing.T) {
	for _, tc := range []struct{ n, want uint64 }{
		{0, 1}, {31, 1}, {32, 3}, {255, 3}, {256, 5}, {65535, 5}, {65536, 9}, {1<<32 - 1, 9}, {1 << 32, 17},
	} {
		if got := sdsHdrSize(tc.n); got != tc.want {
			t.Errorf("sdsHdrSize(%d) = %d, want %d", tc.n, got, tc.want)
		}
	}
}

// The sds sizes below are MEMORY USAGE of key "k" on redis-server 7.0.15
// minus the robj (16), the key's sds (8) and the dictEntry (24).
func TestSdsArgSize(t *testing.T) {
	for _, tc := range []struct{ n, want uint64 }{
		{0, 8}, {45, 64}, {100, 112}, {1000, 1024}, {5000, 5120}, {20000, 20480},
		{32760, 32768}, {32767, 40960}, {32768, 40960}, {40954, 40960}, {40955, 49152},
		{49146, 49152}, {49147, 57344}, {65528, 65536},
		// The query buffer of a big argument keeps its block when the
		// sdshdr16 alloc cap hides the free space.
		{65529, 81920}, {65533, 81920}, {65534, 81920}, {65536, 81920},
		{81910, 81920}, {81911, 98304}, {100000, 114688}, {131067, 163840}, {200000, 229376},
		{1 << 20, 1310720}, {2000000, 2097152}, {4194293, 4194304}, {4194304, 5242880},
	} {
		if got := sdsArgSize(tc.n); got != tc.want {
			t.Errorf("sdsArgSize(%d) = %d, want %d", tc.n, got, tc.want)
		}
	}
}

func TestSdsGrownSize(t *testing.T) {
	for _, tc := range []struct{ n, want uint64 }{
		{0, 8},     // sdshdr8, room for nothing
		{2, 8},     // SET v, APPEND w: 3+4+1
		{3, 16},    // SET 12, APPEND 3: 3+6+1
		{7, 32},    // SET hello, SETRANGE 3 JJJJ: 3+14+1
		{45, 96},   // 3+90+1
		{128, 320}, // 256 needs an sdshdr16: 5+256+1
		{1<<20 - 1, 2621440},
		{1 << 20, 2621440}, // 1 MB more: 9+2 MB+1
	} {
		if got := sdsGrownSize(tc.n); got != tc.want {
			t.Errorf("sdsGrownSize(%d) = %d, want %d", tc.n, got, tc.want)
		}
	}
}

func TestStringSize(t *testing.T) {
	s := func(n int) []byte { return []byte(strings.Repeat("a", n)) }
	for _, tc := range []struct {
		val  []byte
		enc  StringKind
		want uint64
	}{
		{[]byte("12"), StringAuto, 16},
		{[]byte("-9223372036854775808"), StringAuto, 16},
		{[]byte("7"), StringIntUnshared, 16},
		{[]byte("012"), StringAuto, 32}, // not an int: embstr
		{[]byte("12"), StringEmbstr, 32},
		{s(0), StringAuto, 32},
		{s(12), StringAuto, 32},
		{s(13), StringAuto, 48},
		{s(44), StringAuto, 64},
		{s(45), StringAuto, 16 + 64},
		{s(45), StringEmbstr, 16 + 64},
		{s(65530), StringAuto, 16 + 81920},   // big argument
		{s(65530), StringEmbstr, 16 + 65536}, // not from an argument
		{[]byte("12"), StringRaw, 16 + 8},
		{s(100), StringRaw, 16 + 224},
	} {
		if got := NewString(tc.val, tc.enc).Size(0); got != tc.want {
			t.Errorf("String.Size(%d bytes %.10q, enc %d) = %d, want %d", len(tc.val), tc.val, tc.enc, got, tc.want)
		}
	}
}
