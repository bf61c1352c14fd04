package lua

import (
	"strconv"
	"testing"

	"github.com/vigil-kv/vigil/internal/resp"
)

// benchHost answers redis.call's SET, INCR and GET without keeping
// anything, for the scripts' benchmarks.
type benchHost struct{}

func (benchHost) Call(argv [][]byte, proto int, repl Repl) (resp.Value, string, string, bool) {
	switch string(argv[0]) {
	case "INCR":
		return resp.Value{Kind: resp.KindInt, Int: 1}, "", "", false
	case "GET":
		return resp.Value{Kind: resp.KindBulk, Str: "1"}, "", "", false
	}
	return resp.Value{Kind: resp.KindSimple, Str: "OK"}, "", "", false
}
func (benchHost) CountError(string)                 {}
func (benchHost) Log(int, string)                   {}
func (benchHost) ACLCheckCmd([][]byte) (bool, bool) { return true, true }

// benchScripts are the tight loops docs/benchmarks.md times against
// redis-server (2026-11-30, fourth session), with n iterations a run.
var benchScripts = []struct{ name, body string }{
	{"emptyfor", "local n=tonumber(ARGV[1]) for i=1,n do end return 1"},
	{"arith", "local n=tonumber(ARGV[1]) local x=0 for i=1,n do x=x+i end return x"},
	{"table", "local n=tonumber(ARGV[1]) local t={} for i=1,n do t[#t+1]=i end local s=0 for i=1,#t do s=s+t[i] end return s"},
	{"string", "local n=tonumber(ARGV[1]) local p={} for i=1,n do p[#p+1]=string.format('%d:%s', i, 'x'..i) end local s=table.concat(p,',') local q='' for i=1,2000 do q=q..'ab' end return #s+#q"},
	{"rcall", "local n=tonumber(ARGV[1]) for i=1,n do redis.call('SET','k'..(i%4),i) redis.call('INCR','c') redis.call('GET','k1') end return 1"},
	{"cjson", "local n=tonumber(ARGV[1]) local t={} for i=1,100 do t[i]={id=i,name='n'..i,ok=true} end local s for j=1,n do s=cjson.encode(t) local d=cjson.decode(s) end return #s"},
	{"pairs", "local n=tonumber(ARGV[1]) local t={} local a={} for i=1,1000 do t['k'..i]=i a[i]=i end local s=0 for j=1,n do for k,v in pairs(t) do s=s+v end for i,v in ipairs(a) do s=s+v end end return s"},
}

// BenchmarkScripts runs each script with b.N iterations (scaled down for
// the scripts whose iteration is a larger unit of work), armed as an
// interruptible script is (busy-reply-threshold on).
func BenchmarkScripts(b *testing.B) {
	for _, s := range benchScripts {
		b.Run(s.name, func(b *testing.B) {
			e := New(benchHost{})
			defer e.Close()
			cancel := e.Arm(true)
			defer cancel()
			sha := SHA1Hex([]byte(s.body))
			if msg := e.Compile(sha, []byte(s.body), 0, false); msg != "" {
				b.Fatal(msg)
			}
			e.SetArgs(nil, [][]byte{[]byte(strconv.Itoa(b.N))})
			e.ResetArenas(false)
			e.Prepare(sha)
			b.ResetTimer()
			var w resp.Writer
			w.Proto = 2
			e.WriteResult(&w, e.RunScript(e.Script(sha)), false)
			if len(w.B) == 0 || w.B[0] == '-' {
				b.Fatalf("%s: %q", s.name, w.B)
			}
		})
	}
}
