package server

import (
	"encoding/binary"
	"sort"
	"strings"
	"testing"

	"github.com/vigil-kv/vigil/internal/resp"
	"github.com/vigil-kv/vigil/server/rdb"
)

// fnLib builds a library's code.
func fnLibCode(name string, body ...string) string {
	return "#!lua name=" + name + "\n" + strings.Join(body, "\n")
}

// functionsTable is a sequence of commands whose replies must be byte for
// byte redis-server 7.0.15's, in RESP2 and RESP3. One library per
// FUNCTION LIST (Redis's order of several is its dict's, random).
var functionsTable = [][]string{
	{"FLUSHALL"},
	{"FUNCTION", "FLUSH"},
	{"FUNCTION", "LIST"},
	{"FUNCTION", "STATS"},
	{"FUNCTION", "DUMP"},
	{"FUNCTION", "LOAD", "return 1"},
	{"FUNCTION", "LOAD", "#!lua"},
	{"FUNCTION", "LOAD", "#!lua name=a"},
	{"FUNCTION", "LOAD", "#!lua name=a foo=b\nreturn 1"},
	{"FUNCTION", "LOAD", "#!lua name=a name=b\nreturn 1"},
	{"FUNCTION", "LOAD", "#!lua\nreturn 1"},
	{"FUNCTION", "LOAD", "#!lua name=\nreturn 1"},
	{"FUNCTION", "LOAD", "#!lua name=a.b\nreturn 1"},
	{"FUNCTION", "LOAD", "#!js name=a\nreturn 1"},
	{"FUNCTION", "LOAD", "#!lua name=\"a b\n"},
	{"FUNCTION", "LOAD", "#!lua name=a\nreturn 1"},
	{"FUNCTION", "LOAD", "#!lua name=a\nreturn +"},
	{"FUNCTION", "LOAD", "#!lua name=a\nredis.call('set','x','y')"},
	{"FUNCTION", "LOAD", "#!lua name=a\nerror('boom')"},
	{"FUNCTION", "LOAD", "#!lua name=a\nlocal x = string"},
	{"FUNCTION", "LOAD", "#!lua name=a\nfoo = 1"},
	{"FUNCTION", "LOAD", "#!lua name=a\nredis.foo = 1"},
	{"FUNCTION", "LOAD", "#!lua name=a\nredis.register_function('g')"},
	{"FUNCTION", "LOAD", "#!lua name=a\nredis.register_function()"},
	{"FUNCTION", "LOAD", "#!lua name=a\nredis.register_function(1, 2, 3)"},
	{"FUNCTION", "LOAD", "#!lua name=a\nredis.register_function({}, function() end)"},
	{"FUNCTION", "LOAD", "#!lua name=a\nredis.register_function('g', 'h')"},
	{"FUNCTION", "LOAD", "#!lua name=a\nredis.register_function('g-h', function() end)"},
	{"FUNCTION", "LOAD", "#!lua name=a\nredis.register_function('', function() end)"},
	{"FUNCTION", "LOAD", "#!lua name=a\nredis.register_function('g', function() end)\nredis.register_function('g', function() end)"},
	{"FUNCTION", "LOAD", "#!lua name=a\nredis.register_function{function_name='h', callback=function() return 1 end, flags={'no-writes','bad'}}"},
	{"FUNCTION", "LOAD", "#!lua name=a\nredis.register_function{function_name='h', callback=function() return 1 end, flags='no-writes'}"},
	{"FUNCTION", "LOAD", "#!lua name=a\nredis.register_function{function_name='h', callback='x'}"},
	{"FUNCTION", "LOAD", "#!lua name=a\nredis.register_function{function_name={}, callback=function() end}"},
	{"FUNCTION", "LOAD", "#!lua name=a\nredis.register_function{callback=function() end}"},
	{"FUNCTION", "LOAD", "#!lua name=a\nredis.register_function{function_name='h'}"},
	{"FUNCTION", "LOAD", "#!lua name=a\nredis.register_function{function_name='h', callback=function() end, foo=1}"},
	{"FUNCTION", "LOAD", "#!lua name=a\nredis.register_function{function_name='h', callback=function() end, description={}}"},
	{"FUNCTION", "LOAD", "#!lua name=a\nredis.log(redis.LOG_WARNING, 'loading')\nlocal v = redis.REDIS_VERSION\nredis.register_function('ver', function() return v end)"},
	{"FCALL", "ver", "0"},
	{"FUNCTION", "LIST"},
	{"FUNCTION", "LIST", "WITHCODE"},
	{"FUNCTION", "LOAD", "#!lua name=a\nredis.register_function('ver', function() return 1 end)"},
	{"FUNCTION", "LOAD", "#!lua name=b\nredis.register_function('ver', function() return 1 end)"},
	{"FUNCTION", "LOAD", "REPLACE", "#!lua name=a\nredis.register_function('ver', function() return 2 end)"},
	{"FCALL", "ver", "0"},
	{"FUNCTION", "LOAD", "FOO", "#!lua name=a\nredis.register_function('ver', function() return 2 end)"},
	{"FUNCTION", "LOAD", "REPLACE"},
	{"FUNCTION", "DELETE", "a"},
	{"FUNCTION", "DELETE", "a"},
	{"FCALL", "ver", "0"},
	{"FUNCTION", "LOAD", fnLibCode("e",
		"local function boom() error('bad') end",
		"redis.register_function('f1', function(keys, args) return redis.call('nosuch') end)",
		"redis.register_function('f2', function(keys, args) boom() end)",
		"redis.register_function('f3', function(keys, args) return KEYS end)",
		"redis.register_function{function_name='f4', callback=function(keys, args) return redis.call('set', keys[1], args[1]) end, flags={'no-writes'}}",
		"redis.register_function('f5', function(keys, args) return redis.register_function end)",
		"redis.register_function('f6', function(keys, args) local x = 1 + {} end)",
		"redis.register_function{function_name='f7', callback=function(keys, args) return {keys[1], args[1], #keys, #args} end, flags={'no-writes', 'allow-oom', 'allow-stale', 'no-cluster', 'allow-cross-slot-keys'}, description='desc'}",
		"redis.register_function('f8', function(keys, args) return redis.call('set', keys[1], args[1]) end)",
		"redis.register_function('f9', function(keys, args) redis.setresp(3); return redis.call('hgetall', keys[1]) end)",
		"redis.register_function('f10', function(keys, args) return redis.pcall('incr', keys[1]) end)",
		"redis.register_function('f11', function(keys, args) return {err='MYERR custom'} end)",
		"redis.register_function('f12', function(keys, args) return redis.call('get', keys[1]) end)",
		"redis.register_function('f13', function(keys, args) return redis.register_function('x', function() end) end)",
	)},
	{"FCALL", "f1", "1", "k", "v"},
	{"FCALL", "f2", "1", "k", "v"},
	{"FCALL", "f3", "1", "k", "v"},
	{"FCALL", "f4", "1", "k", "v"},
	{"FCALL", "f5", "1", "k", "v"},
	{"FCALL", "f6", "1", "k", "v"},
	{"FCALL", "f7", "1", "k", "v"},
	{"FCALL", "f8", "1", "k", "v"},
	{"FCALL", "f12", "1", "k"},
	{"FCALL_RO", "f12", "1", "k"},
	{"FCALL_RO", "f8", "1", "k", "v"},
	{"FCALL_RO", "f7", "1", "a", "b"},
	{"HSET", "h", "a", "1"},
	{"FCALL", "f9", "1", "h"},
	{"FCALL", "f10", "1", "h"},
	{"FCALL", "f11", "0"},
	{"FCALL", "f13", "0"},
	{"FCALL", "nosuch", "0"},
	{"FCALL", "f7", "x"},
	{"FCALL", "f7", "3", "a"},
	{"FCALL", "f7", "-1"},
	{"FCALL", "f7"},
	{"FUNCTION", "LIST", "LIBRARYNAME", "e"},
	{"FUNCTION", "LIST", "LIBRARYNAME", "E*", "WITHCODE"},
	{"FUNCTION", "LIST", "LIBRARYNAME", "x*"},
	{"FUNCTION", "LIST", "LIBRARYNAME"},
	{"FUNCTION", "LIST", "WITHCODE", "WITHCODE"},
	{"FUNCTION", "LIST", "FOO"},
	{"FUNCTION", "STATS"},
	{"FUNCTION", "KILL"},
	{"SCRIPT", "KILL"},
	{"FUNCTION", "DUMP"},
	{"FUNCTION", "RESTORE", "xx"},
	{"FUNCTION", "RESTORE", "xx", "foo"},
	{"FUNCTION", "RESTORE", "xx", "append", "x"},
	{"FUNCTION", "RESTORE", fnPayload([]byte{0x00, 0x01, 'x'})},
	{"FUNCTION", "RESTORE", fnPayload([]byte{0xf5, 0x05, 'x'})},
	{"FUNCTION", "RESTORE", fnPayload(append([]byte{0xf5, 0x0b}, "#!lua name=r"...))},
	{"FUNCTION", "RESTORE", fnPayload(append(append([]byte{0xf5, 58}, "#!lua name=r\nredis.register_function('ff', function() end)"...), append([]byte{0xf5, 58}, "#!lua name=r\nredis.register_function('ff', function() end)"...)...))},
	{"FUNCTION", "RESTORE", fnPayload(nil)},
	{"FUNCTION", "RESTORE", fnPayload(append([]byte{0xf5, 58}, "#!lua name=r\nredis.register_function('ff', function() end)"...)), "APPEND"},
	{"FCALL", "ff", "0"},
	{"FUNCTION", "RESTORE", fnPayload(append([]byte{0xf5, 58}, "#!lua name=r\nredis.register_function('ff', function() end)"...)), "append"},
	{"FUNCTION", "RESTORE", fnPayload(append([]byte{0xf5, 58}, "#!lua name=r\nredis.register_function('ff', function() end)"...)), "REPLACE"},
	{"FUNCTION", "RESTORE", fnPayload(append([]byte{0xf5, 58}, "#!lua name=q\nredis.register_function('ff', function() end)"...)), "REPLACE"},
	{"FUNCTION", "DELETE", "r"},
	{"FUNCTION", "FLUSH", "foo"},
	{"FUNCTION", "FLUSH", "sync", "x"},
	{"FUNCTION", "FLUSH", "ASYNC"},
	{"FUNCTION", "FOO"},
	{"FUNCTION", "HELP"},
	{"FUNCTION"},
	{"FCALL", "f1", "0"},
	{"EVAL", "return redis.call('function', 'list')", "0"},
	{"EVAL", "return redis.call('fcall', 'x', '0')", "0"},
	{"MULTI"},
	{"FUNCTION", "LOAD", "#!lua name=m\nredis.register_function('m1', function(keys) return redis.call('incr', keys[1]) end)"},
	{"FCALL", "m1", "1", "cnt"},
	{"EXEC"},
	{"FUNCTION", "DELETE", "e"},
	{"FUNCTION", "DUMP"},
	{"FUNCTION", "STATS"},
}

// TestFunctionsGolden runs functionsTable against redis-server and Vigil,
// in RESP2 then RESP3, and compares every reply byte for byte.
func TestFunctionsGolden(t *testing.T) {
	dial := startRedis(t)
	for _, proto := range []int{2, 3} {
		rc, rbr := dial(proto)
		ts := newTestServer(t)
		c := ts.client()
		for _, args := range functionsTable {
			want := rawDo(t, rc, rbr, args...)
			got := ts.doProto(c, proto, args...)
			if luaMessageDiffers(args) {
				// gopher-lua's own compile and runtime messages differ
				// from Lua 5.1's: the frame around them must not.
				want, got = fnMessageFrame(want), fnMessageFrame(got)
			}
			if len(args) >= 2 && strings.EqualFold(args[0], "function") && strings.EqualFold(args[1], "list") {
				want, got = fnListCanonical(t, want), fnListCanonical(t, got)
			}
			if want != got {
				t.Errorf("RESP%d %q:\n redis: %q\n vigil: %q", proto, args, want, got)
			}
		}
	}
}

// fnPayload frames records as a FUNCTION DUMP payload: RDB version 10
// and the CRC-64.
func fnPayload(records []byte) string {
	b := append(append([]byte(nil), records...), 10, 0)
	return string(binary.LittleEndian.AppendUint64(b, rdb.CRC64(0, b)))
}

// luaMessageDiffers marks the table's commands whose error embeds a
// runtime message of the Lua implementation itself (compile errors are
// Lua 5.1's, server/lua/syntax.go).
func luaMessageDiffers(args []string) bool {
	return len(args) >= 2 && args[0] == "FCALL" && (args[1] == "f6" || args[1] == "f13")
}

// fnMessageFrame keeps an error's frame: its start up to the Lua position
// and its " script: ..." suffix.
func fnMessageFrame(reply string) string {
	head := reply
	if i := strings.Index(reply, "user_function"); i >= 0 {
		head = reply[:i]
	}
	tail := ""
	if i := strings.Index(reply, " script: "); i >= 0 {
		tail = reply[i:]
	}
	return head + "..." + tail
}

// fnListCanonical renders a FUNCTION LIST reply with each library's
// functions sorted (Redis lists them in its dict's order).
func fnListCanonical(t *testing.T, raw string) string {
	t.Helper()
	if strings.HasPrefix(raw, "-") {
		return raw
	}
	return renderValue(parseReply(t, fnListCanonicalRaw(t, raw)))
}

// fnListCanonicalRaw is a FUNCTION LIST reply, RESP-encoded again with
// each library's functions sorted.
func fnListCanonicalRaw(t *testing.T, raw string) string {
	t.Helper()
	v := parseReply(t, raw)
	for li := range v.Elems {
		lib := &v.Elems[li]
		for i := 0; i+1 < len(lib.Elems); i += 2 {
			if lib.Elems[i].Str == "functions" {
				fs := lib.Elems[i+1].Elems
				sort.Slice(fs, func(a, b int) bool { return renderValue(fs[a]) < renderValue(fs[b]) })
			}
		}
	}
	var w resp.Writer
	w.Proto = 3
	w.Value(v)
	return string(w.B)
}

func sortStrings(s []string) { sort.Strings(s) }
