package server

import (
	"strconv"
	"strings"
	"testing"

	vlua "github.com/vigil-kv/vigil/server/lua"
)

// EVALSHA through the dispatch (process under the batch's lock), as
// redis-benchmark's `EVALSHA <sha> 1 k` of `return redis.call('incr', KEYS[1])`.

const evalshaBenchScript = "return redis.call('incr', KEYS[1])"

func evalshaClient(tb testing.TB) (*Client, string) {
	tb.Helper()
	c := hotClient(tb)
	runFed(c, pipeline(1, "SCRIPT", "LOAD", evalshaBenchScript))
	sha := vlua.SHA1Hex([]byte(evalshaBenchScript))
	if !strings.Contains(string(c.w.B), sha) {
		tb.Fatalf("SCRIPT LOAD: %q", c.w.B)
	}
	return c, sha
}

// TestEvalshaHotPath: the benchmark's batch replies with the counter.
func TestEvalshaHotPath(t *testing.T) {
	c, sha := evalshaClient(t)
	in := pipeline(16, "EVALSHA", sha, "1", "evalsha:counter")
	if n := runFed(c, in); n != 16 {
		t.Fatalf("ran %d commands, want 16", n)
	}
	var want strings.Builder
	for i := 1; i <= 16; i++ {
		want.WriteString(":" + strconv.Itoa(i) + "\r\n")
	}
	if string(c.w.B) != want.String() {
		t.Fatalf("replies %q", c.w.B)
	}
}

// TestEvalshaAllocs: an EVALSHA whose script calls INCR through
// redis.call costs at most 2 allocations (the engine's arenas hold
// redis.call's argv, KEYS keeps an unchanged key's string).
func TestEvalshaAllocs(t *testing.T) {
	c, sha := evalshaClient(t)
	in := pipeline(16, "EVALSHA", sha, "1", "evalsha:counter")
	runFed(c, in)
	if allocs := testing.AllocsPerRun(100, func() { runFed(c, in) }) / 16; allocs > 2 {
		t.Fatalf("%.2f allocations per EVALSHA, want at most 2", allocs)
	}
}

func BenchmarkEvalsha(b *testing.B) {
	for _, p := range []int{1, 16} {
		b.Run("P"+strconv.Itoa(p), func(b *testing.B) {
			c, sha := evalshaClient(b)
			in := pipeline(p, "EVALSHA", sha, "1", "evalsha:counter")
			b.ReportAllocs()
			for b.Loop() {
				runFed(c, in)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*p), "ns/cmd")
		})
	}
}

// BenchmarkEvalCost splits EVALSHA's cost: a script that does nothing,
// one that reads KEYS, the benchmark's INCR through redis.call, a
// status reply (a table) through redis.call, and INCR itself.
func BenchmarkEvalCost(b *testing.B) {
	for _, sc := range []string{"return 1", "return KEYS[1]", "return redis.call('incr', KEYS[1])", "return redis.call('ping')"} {
		b.Run(strings.ReplaceAll(sc, " ", "_"), func(b *testing.B) {
			c := hotClient(b)
			runFed(c, pipeline(1, "SCRIPT", "LOAD", sc))
			sha := vlua.SHA1Hex([]byte(sc))
			in := pipeline(16, "EVALSHA", sha, "1", "evalsha:counter")
			b.ReportAllocs()
			for b.Loop() {
				runFed(c, in)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*16), "ns/cmd")
		})
	}
	b.Run("INCR", func(b *testing.B) {
		c := hotClient(b)
		in := pipeline(16, "INCR", "evalsha:counter")
		b.ReportAllocs()
		for b.Loop() {
			runFed(c, in)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*16), "ns/cmd")
	})
}

// BenchmarkEvalTables: EVALSHA of table-heavy scripts (an array grown by
// t[#t+1], a string-keyed table filled then walked by pairs, a
// constructor read by ipairs, cjson.encode of an object), to compare
// table implementations.
func BenchmarkEvalTables(b *testing.B) {
	for _, sc := range []struct{ name, src string }{
		{"append100", "local t = {} for i = 1, 100 do t[#t + 1] = i end return #t"},
		{"strkeys50_pairs", "local t = {} for i = 1, 50 do t['f' .. i] = i end local n = 0 for k, v in pairs(t) do n = n + v end return n"},
		{"fields", "local p = {x = 1, y = 2, z = 3} local s = 0 for i = 1, 100 do s = s + p.x + p.y + p.z p.x = p.x + 1 end return s"},
		{"ctor_ipairs", "local s = 0 for i = 1, 20 do local t = {1, 2, 3, 4, 5, 6, 7, 8} for _, v in ipairs(t) do s = s + v end end return s"},
		{"cjson_object", "return cjson.encode({a = 1, b = 'two', c = {1, 2, 3}, d = {e = true}})"},
	} {
		b.Run(sc.name, func(b *testing.B) {
			c := hotClient(b)
			in := loadedEvalsha(b, c, sc.src, 16, "")
			b.ReportAllocs()
			for b.Loop() {
				runFed(c, in)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*16), "ns/cmd")
		})
	}
}

// BenchmarkEvalCallLoop: a script calling SET, INCR and GET through
// redis.call 100 times each (the "redis.call loop" of docs/benchmarks.md's
// Lua tight loops), per redis.call.
func BenchmarkEvalCallLoop(b *testing.B) {
	sc := "for i=1,100 do redis.call('SET','k'..(i%4),i) redis.call('INCR','c') redis.call('GET','k1') end return 1"
	c := hotClient(b)
	in := loadedEvalsha(b, c, sc, 1, ":1\r\n")
	b.ReportAllocs()
	for b.Loop() {
		runFed(c, in)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*300), "ns/call")
}

// BenchmarkEvalBigReply: scripts reading a collection of 1000 elements
// through redis.call (LRANGE, HGETALL, SMEMBERS), per call.
func BenchmarkEvalBigReply(b *testing.B) {
	for _, sc := range []struct{ name, src, want string }{
		{"lrange", "local r = redis.call('LRANGE', 'l', 0, -1) return #r", ":1000\r\n"},
		{"hgetall", "local r = redis.call('HGETALL', 'h') return #r", ":2000\r\n"},
		{"smembers", "local r = redis.call('SMEMBERS', 's') return #r", ":1000\r\n"},
	} {
		b.Run(sc.name, func(b *testing.B) {
			c := hotClient(b)
			runFed(c, pipeline(1, "EVAL", "for i=1,1000 do redis.call('HSET','h','f'..i,i) redis.call('RPUSH','l',i) redis.call('SADD','s','m'..i) end return 1", "0"))
			in := loadedEvalsha(b, c, sc.src, 1, sc.want)
			b.ReportAllocs()
			for b.Loop() {
				runFed(c, in)
			}
		})
	}
}

// loadedEvalsha loads src with SCRIPT LOAD and returns a pipeline of p
// EVALSHAs of it without keys, after running that pipeline once: its
// replies must be want ("": anything but an error).
func loadedEvalsha(b *testing.B, c *Client, src string, p int, want string) []byte {
	b.Helper()
	runFed(c, pipeline(1, "SCRIPT", "LOAD", src))
	in := pipeline(p, "EVALSHA", vlua.SHA1Hex([]byte(src)), "0")
	runFed(c, in)
	if got := string(c.w.B); want == "" && strings.HasPrefix(got, "-") || want != "" && got != want {
		b.Fatalf("%s: %q", src, got)
	}
	return in
}
