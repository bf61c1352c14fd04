package redisutil

import (
	"bytes"
	"math/rand"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// refTable and lzfCompressRef are LZFCompress as it was before
// lzfMatchLen (a port of lzf_c.c's byte-by-byte match loop): the
// reference TestLZFSameAsByteLoop holds it to.
type refTable struct {
	gen   uint32
	slots [lzfHSize]uint64
}

var refTables = sync.Pool{New: func() any { return new(refTable) }}

func lzfCompressRef(in, out []byte) int {
	inLen, outLen := len(in), len(out)
	if inLen == 0 || outLen == 0 {
		return 0
	}
	// Slots hold position+1 of the last occurrence of a 3-byte hash; 0 is
	// "empty" (Redis's bias makes an empty slot point at in[0], which its
	// "ref > in_data" test rejects).
	t := refTables.Get().(*refTable)
	defer refTables.Put(t)
	t.gen++
	if t.gen == 0 { // wrapped: really clear
		clear(t.slots[:])
		t.gen = 1
	}
	gen := uint64(t.gen) << 32
	htab := &t.slots
	ip, op := 0, 0
	lit := 0
	op++ // start run
	frst := func(p int) uint32 { return uint32(in[p])<<8 | uint32(in[p+1]) }
	next := func(v uint32, p int) uint32 { return v<<8 | uint32(in[p+2]) }
	var hval uint32
	if inLen >= 2 {
		hval = frst(ip)
	}
	for ip < inLen-2 {
		hval = next(hval, ip)
		slot := lzfIdx(hval)
		ref := -1
		if e := htab[slot]; e&^(1<<32-1) == gen {
			ref = int(uint32(e)) - 1
		}
		htab[slot] = gen | uint64(ip+1)
		if ref > 0 && ip-ref-1 < lzfMaxOff &&
			in[ref+2] == in[ip+2] && in[ref] == in[ip] && in[ref+1] == in[ip+1] {
			off := ip - ref - 1
			length := 2
			maxlen := inLen - ip - length
			if maxlen > lzfMaxRef {
				maxlen = lzfMaxRef
			}
			if op+3+1 >= outLen {
				notLit := 0
				if lit == 0 {
					notLit = 1
				}
				if op-notLit+3+1 >= outLen {
					return 0
				}
			}
			out[op-lit-1] = byte(lit - 1) // stop run
			if lit == 0 {
				op-- // undo run if length is zero
			}
			// lzf_c.c's loop: with maxlen > 16, sixteen unrolled steps that do
			// not check maxlen (so a match may end up to two bytes past
			// it), then a do-while that does.
			stopped := false
			if maxlen > 16 {
				for k := 0; k < 16; k++ {
					length++
					if in[ref+length] != in[ip+length] {
						stopped = true
						break
					}
				}
			}
			if !stopped {
				for {
					length++
					if length >= maxlen || in[ref+length] != in[ip+length] {
						break
					}
				}
			}
			length -= 2 // length is now #octets - 1
			ip++
			if length < 7 {
				out[op] = byte(off>>8) + byte(length<<5)
				op++
			} else {
				out[op] = byte(off>>8) + 7<<5
				out[op+1] = byte(length - 7)
				op += 2
			}
			out[op] = byte(off)
			op++
			lit = 0
			op++ // start run
			ip += length + 1
			if ip >= inLen-2 {
				break
			}
			// VERY_FAST: hash the last two positions of the match.
			ip -= 2
			hval = frst(ip)
			hval = next(hval, ip)
			htab[lzfIdx(hval)] = gen | uint64(ip+1)
			ip++
			hval = next(hval, ip)
			htab[lzfIdx(hval)] = gen | uint64(ip+1)
			ip++
			continue
		}
		// One more literal byte.
		if op >= outLen {
			return 0
		}
		lit++
		out[op] = in[ip]
		op++
		ip++
		if lit == lzfMaxLit {
			out[op-lit-1] = byte(lit - 1) // stop run
			lit = 0
			op++ // start run
		}
	}
	if op+3 > outLen { // at most 3 bytes can be missing here
		return 0
	}
	for ip < inLen {
		lit++
		out[op] = in[ip]
		op++
		ip++
		if lit == lzfMaxLit {
			out[op-lit-1] = byte(lit - 1)
			lit = 0
			op++
		}
	}
	out[op-lit-1] = byte(lit - 1) // end run
	if lit == 0 {
		op-- // undo run if length is zero
	}
	return op
}

// TestLZFSameAsByteLoop: lzfMatchLen changes nothing in the output, for
// inputs of every shape, with matches ending around the unrolled steps'
// 16 bytes and at the end of the input.
func TestLZFSameAsByteLoop(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	alphabets := []int{1, 2, 3, 4, 16, 256}
	for _, n := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 31, 32, 33, 49, 63, 64, 65, 100, 127, 128, 129, 255, 256, 1000, 4095, 4096, 4097, 16383, 16384, 16385, 32767, 32768, 70000} {
		for _, alpha := range alphabets {
			for rep := 0; rep < 3; rep++ {
				in := make([]byte, n)
				for i := range in {
					switch {
					case rep == 1 && i >= 8 && r.Intn(4) > 0:
						in[i] = in[i-1-r.Intn(8)] // runs and near repeats
					case rep == 2 && i >= 300 && r.Intn(8) > 0:
						in[i] = in[i-300] // repeats far apart
					default:
						in[i] = byte(r.Intn(alpha))
					}
				}
				for _, outLen := range []int{n - 4, n, n + n/16 + 64} {
					if outLen <= 0 {
						continue
					}
					got, want := make([]byte, outLen), make([]byte, outLen)
					gn := LZFCompress(in, got)
					wn := lzfCompressRef(in, want)
					if gn != wn || !bytes.Equal(got[:gn], want[:wn]) {
						t.Fatalf("n %d alphabet %d rep %d out %d: %d bytes, reference %d (or different bytes)", n, alpha, rep, outLen, gn, wn)
					}
				}
			}
		}
	}
	// The benchmark's values.
	for i := 0; i < 200000; i++ {
		in := benchValue(i)
		got, want := make([]byte, len(in)), make([]byte, len(in))
		gn, wn := LZFCompress(in, got), lzfCompressRef(in, want)
		if gn != wn || !bytes.Equal(got[:gn], want[:wn]) {
			t.Fatalf("value %d differs", i)
		}
	}
}

// benchValue is one value of integration/benchsave's dataset (as
// server/rdb's benchmarks build them).
func benchValue(i int) []byte {
	return []byte("value-" + strings.Repeat("0", 10-len(strconv.Itoa(i))) + strconv.Itoa(i) + "-" + strings.Repeat("x", 32))
}
