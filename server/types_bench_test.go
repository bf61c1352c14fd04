package server

import "testing"

// BenchmarkTypesHotPath: redis-benchmark's data-type tests as it sends them
// (without -r, so every command hits one key and one member), 16 to a
// batch, parse + execute + reply without sockets.
func BenchmarkTypesHotPath(b *testing.B) {
	cases := []struct {
		name string
		args []string
	}{
		{"LPUSH", []string{"LPUSH", "mylist", "xxx"}},
		{"SADD", []string{"SADD", "myset", "element:__rand_int__"}},
		{"HSET", []string{"HSET", "myhash", "element:__rand_int__", "xxx"}},
		{"ZADD", []string{"ZADD", "myzset", "0", "element:__rand_int__"}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			c := hotClient(b)
			in := pipeline(16, tc.args...)
			b.ReportAllocs()
			for b.Loop() {
				runFed(c, in)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*16), "ns/cmd")
		})
	}
}
