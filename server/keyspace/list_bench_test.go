package keyspace

import (
	"math/rand/v2"
	"runtime"
	"strconv"
	"testing"
)

// The list benchmarks at 1 k and 1 M elements of "value:N": building by
// LPUSH and RPUSH, draining by LPOP, LINDEX at random, LRANGE of the whole
// list. Each reports ns per element; the RPUSH build also the heap bytes
// per element it leaves.

var listBenchSizes = []struct {
	name string
	n    int
}{{"1k", 1000}, {"1M", 1000000}}

func listBenchElems(n int) [][]byte {
	v := make([][]byte, n)
	for i := range v {
		v[i] = []byte("value:" + strconv.Itoa(i))
	}
	return v
}

func listBenchBuild(elems [][]byte) *List {
	l := NewList(-2)
	for _, e := range elems {
		l.PushBack(e)
	}
	return l
}

func BenchmarkListPush(b *testing.B) {
	for _, sz := range listBenchSizes {
		elems := listBenchElems(sz.n)
		b.Run("RPUSH/"+sz.name, func(b *testing.B) {
			var l *List
			for range b.N {
				l = listBenchBuild(elems)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*sz.n), "ns/elem")
			var m0, m1 runtime.MemStats
			l = nil
			runtime.GC()
			runtime.ReadMemStats(&m0)
			l = listBenchBuild(elems)
			runtime.GC()
			runtime.ReadMemStats(&m1)
			b.ReportMetric(float64(m1.HeapAlloc-m0.HeapAlloc)/float64(sz.n), "heapB/elem")
			runtime.KeepAlive(l)
		})
		b.Run("LPUSH/"+sz.name, func(b *testing.B) {
			for range b.N {
				l := NewList(-2)
				for _, e := range elems {
					l.PushFront(e)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*sz.n), "ns/elem")
		})
	}
}

func BenchmarkListPop(b *testing.B) {
	for _, sz := range listBenchSizes {
		elems := listBenchElems(sz.n)
		b.Run("LPOP/"+sz.name, func(b *testing.B) {
			var popped int64
			for range b.N {
				b.StopTimer()
				l := listBenchBuild(elems)
				b.StartTimer()
				for l.Len() > 0 {
					popped += int64(len(l.PopFront()))
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*sz.n), "ns/elem")
		})
	}
}

func BenchmarkListIndex(b *testing.B) {
	for _, sz := range listBenchSizes {
		l := listBenchBuild(listBenchElems(sz.n))
		rng := rand.New(rand.NewPCG(1, 2))
		idx := make([]int, 4096)
		for i := range idx {
			idx[i] = rng.IntN(sz.n)
		}
		b.Run("LINDEX/"+sz.name, func(b *testing.B) {
			s := 0
			for i := range b.N {
				s += len(l.Index(idx[i&4095]))
			}
			_ = s
		})
		b.Run("LRANGE/"+sz.name, func(b *testing.B) {
			s := 0
			for range b.N {
				for i := range sz.n {
					s += len(l.Index(i))
				}
			}
			_ = s
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*sz.n), "ns/elem")
		})
	}
}
