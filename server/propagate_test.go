package server

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/resp"
)

// propagateCases are golden cases of the write path, one per rewrite rule
// of Redis 7.0.15's call()/propagate (captured from its appendonly file
// with appendfsync always). In want, "<t>" stands for an absolute
// millisecond time; the tests check it is the right one for Vigil's fake
// clock and equal to Redis's within a minute. Every case starts on a fresh
// connection in db 0 after FLUSHALL, with the stream's database at 0.
// dumpV is redis-server 7.0.15's DUMP of the string "v".
const dumpV = "\x00\x01v\n\x00\x91\x08\xce\xb2\x198\x8a\xce"

var propagateCases = []struct {
	name       string
	directives []string // CONFIG SET pairs applied first (and reset after)
	cmds       [][]string
	want       [][]string
}{
	{name: "SET EX becomes SET PXAT",
		cmds: [][]string{{"SET", "a", "1", "EX", "100"}, {"set", "b", "2", "px", "5000", "get", "nx"}, {"SET", "c", "3", "PXAT", "4102444800000", "XX"}, {"SET", "c", "3", "PXAT", "4102444800000"}},
		want: [][]string{{"SET", "a", "1", "PXAT", "<t>"}, {"SET", "b", "2", "PXAT", "<t>"}, {"SET", "c", "3", "PXAT", "4102444800000"}}},
	// persist: RESTORE propagates a relative TTL as absolute with ABSTTL,
	// an already expired one with REPLACE as DEL, nothing without REPLACE.
	{name: "RESTORE",
		cmds: [][]string{{"RESTORE", "r1", "0", dumpV}, {"RESTORE", "r2", "100000", dumpV}, {"RESTORE", "r2", "0", dumpV, "REPLACE"},
			{"RESTORE", "r3", "4102444800000", dumpV, "ABSTTL"}, {"RESTORE", "r3", "1", dumpV, "ABSTTL", "REPLACE"},
			{"RESTORE", "r4", "1", dumpV, "ABSTTL"}, {"RESTORE", "r5", "0", dumpV, "IDLETIME", "10"}},
		want: [][]string{{"RESTORE", "r1", "0", dumpV}, {"RESTORE", "r2", "<t>", dumpV, "ABSTTL"}, {"RESTORE", "r2", "0", dumpV, "REPLACE"},
			{"RESTORE", "r3", "4102444800000", dumpV, "ABSTTL"}, {"DEL", "r3"}, {"RESTORE", "r5", "0", dumpV, "IDLETIME", "10"}}},
	{name: "SET GET without expire drops GET",
		cmds: [][]string{{"set", "a", "1"}, {"set", "a", "2", "get", "keepttl", "GET"}},
		want: [][]string{{"set", "a", "1"}, {"set", "a", "2", "keepttl"}}},
	{name: "SETEX and PSETEX",
		cmds: [][]string{{"SETEX", "a", "100", "v"}, {"psetex", "b", "100000", "w"}},
		want: [][]string{{"SET", "a", "v", "PXAT", "<t>"}, {"SET", "b", "w", "PXAT", "<t>"}}},
	{name: "EXPIRE family becomes PEXPIREAT",
		cmds: [][]string{{"SET", "a", "1"}, {"EXPIRE", "a", "50"}, {"pexpire", "a", "100000", "xx"}, {"EXPIREAT", "a", "4102444800", "GT"},
			{"pexpireat", "a", "4102444801000"}, {"EXPIRE", "missing", "10"}, {"EXPIRE", "a", "10", "NX"}},
		want: [][]string{{"SET", "a", "1"}, {"PEXPIREAT", "a", "<t>"}, {"PEXPIREAT", "a", "<t>", "xx"}, {"PEXPIREAT", "a", "4102444800000", "GT"},
			{"pexpireat", "a", "4102444801000"}}},
	{name: "EXPIRE in the past deletes",
		cmds: [][]string{{"SET", "a", "1"}, {"EXPIRE", "a", "0"}, {"SET", "b", "1"}, {"PEXPIREAT", "b", "1"}},
		want: [][]string{{"SET", "a", "1"}, {"DEL", "a"}, {"SET", "b", "1"}, {"DEL", "b"}}},
	{name: "EXPIRE in the past with lazyfree-lazy-expire unlinks",
		directives: []string{"lazyfree-lazy-expire", "yes"},
		cmds:       [][]string{{"SET", "a", "1"}, {"EXPIRE", "a", "-5"}, {"SET", "b", "1"}, {"GETEX", "b", "PXAT", "1"}},
		want:       [][]string{{"SET", "a", "1"}, {"UNLINK", "a"}, {"SET", "b", "1"}, {"UNLINK", "b"}}},
	{name: "INCRBYFLOAT becomes SET KEEPTTL",
		cmds: [][]string{{"INCRBYFLOAT", "f", "1.5"}, {"incrbyfloat", "f", "10.8"}},
		want: [][]string{{"SET", "f", "1.5", "KEEPTTL"}, {"SET", "f", "12.3", "KEEPTTL"}}},
	{name: "GETEX",
		cmds: [][]string{{"SET", "a", "1"}, {"GETEX", "a", "EX", "10"}, {"GETEX", "a", "PERSIST"}, {"GETEX", "a", "PERSIST"}, {"GETEX", "a"},
			{"GETEX", "a", "PXAT", "1"}, {"GETEX", "a", "EX", "10"}},
		want: [][]string{{"SET", "a", "1"}, {"PEXPIREAT", "a", "<t>"}, {"PERSIST", "a"}, {"DEL", "a"}}},
	{name: "GETSET and GETDEL",
		cmds: [][]string{{"getset", "a", "1"}, {"GETDEL", "a"}, {"GETDEL", "a"}},
		want: [][]string{{"SET", "a", "1"}, {"DEL", "a"}}},
	{name: "GETDEL with lazyfree-lazy-user-del unlinks",
		directives: []string{"lazyfree-lazy-user-del", "yes"},
		cmds:       [][]string{{"SET", "a", "1"}, {"GETDEL", "a"}},
		want:       [][]string{{"SET", "a", "1"}, {"UNLINK", "a"}}},
	{name: "commands that write nothing propagate nothing",
		cmds: [][]string{{"DEL", "nope"}, {"SET", "a", "1"}, {"SETNX", "a", "2"}, {"SET", "a", "3", "NX"}, {"SET", "b", "1", "XX"}, {"GET", "a"},
			{"PERSIST", "a"}, {"RENAME", "nope", "x"}, {"MSETNX", "a", "1", "z", "2"}, {"COPY", "nope", "x"}, {"BITFIELD", "a", "GET", "u8", "0"}},
		want: [][]string{{"SET", "a", "1"}}},
	{name: "other writes propagate as sent",
		cmds: [][]string{{"mset", "a", "1", "b", "2"}, {"del", "a", "nope"}, {"INCR", "b"}, {"APPEND", "b", "x"}, {"SETRANGE", "b", "0", "y"},
			{"SETBIT", "c", "7", "1"}, {"RENAME", "b", "d"}, {"COPY", "d", "e"}, {"MOVE", "e", "3"}, {"UNLINK", "c"}},
		want: [][]string{{"mset", "a", "1", "b", "2"}, {"del", "a", "nope"}, {"INCR", "b"}, {"APPEND", "b", "x"}, {"SETRANGE", "b", "0", "y"},
			{"SETBIT", "c", "7", "1"}, {"RENAME", "b", "d"}, {"COPY", "d", "e"}, {"MOVE", "e", "3"}, {"UNLINK", "c"}}},
	{name: "FLUSHALL and FLUSHDB propagate even on empty databases",
		cmds: [][]string{{"flushall"}, {"FLUSHDB", "ASYNC"}, {"SWAPDB", "0", "0"}},
		want: [][]string{{"flushall"}, {"FLUSHDB", "ASYNC"}, {"SWAPDB", "0", "0"}}},
	{name: "a change of db emits SELECT",
		cmds: [][]string{{"SET", "a", "1"}, {"SELECT", "2"}, {"SET", "b", "1"}, {"SET", "c", "1"}, {"SELECT", "0"}, {"DEL", "a"}},
		want: [][]string{{"SET", "a", "1"}, {"SELECT", "2"}, {"SET", "b", "1"}, {"SET", "c", "1"}, {"SELECT", "0"}, {"DEL", "a"}}},
	{name: "MULTI/EXEC is one block; a single write is not wrapped",
		cmds: [][]string{{"MULTI"}, {"SET", "a", "1"}, {"GET", "a"}, {"SET", "b", "2", "EX", "100"}, {"EXEC"},
			{"MULTI"}, {"SET", "c", "1"}, {"GET", "c"}, {"EXEC"}, {"MULTI"}, {"GET", "c"}, {"EXEC"}},
		want: [][]string{{"MULTI"}, {"SET", "a", "1"}, {"SET", "b", "2", "PXAT", "<t>"}, {"EXEC"}, {"SET", "c", "1"}}},
	{name: "SELECT inside MULTI",
		cmds: [][]string{{"MULTI"}, {"SET", "a", "1"}, {"SELECT", "2"}, {"SET", "b", "1"}, {"EXEC"}, {"SET", "c", "1"}, {"SELECT", "0"}, {"SET", "d", "1"}},
		want: [][]string{{"MULTI"}, {"SET", "a", "1"}, {"SELECT", "2"}, {"SET", "b", "1"}, {"EXEC"}, {"SET", "c", "1"}, {"SELECT", "0"}, {"SET", "d", "1"}}},
	{name: "lazy expiry propagates DEL before the command, in one unit",
		cmds: [][]string{{"SET", "k1", "v", "PXAT", "1"}, {"GET", "k1"}, {"SET", "k2", "v", "PXAT", "1"}, {"SET", "k2", "new"},
			{"SET", "k3", "v", "PXAT", "1"}, {"EXPIRE", "k3", "100"}, {"SET", "k4", "v", "PXAT", "1"},
			{"MULTI"}, {"SET", "q", "1"}, {"GET", "k4"}, {"EXEC"}},
		want: [][]string{{"SET", "k1", "v", "PXAT", "1"}, {"DEL", "k1"}, {"SET", "k2", "v", "PXAT", "1"}, {"MULTI"}, {"DEL", "k2"}, {"SET", "k2", "new"}, {"EXEC"},
			{"SET", "k3", "v", "PXAT", "1"}, {"DEL", "k3"}, {"SET", "k4", "v", "PXAT", "1"}, {"MULTI"}, {"SET", "q", "1"}, {"DEL", "k4"}, {"EXEC"}}},
	{name: "lazy expiry with lazyfree-lazy-expire unlinks",
		directives: []string{"lazyfree-lazy-expire", "yes"},
		cmds:       [][]string{{"SET", "k1", "v", "PXAT", "1"}, {"EXISTS", "k1"}},
		want:       [][]string{{"SET", "k1", "v", "PXAT", "1"}, {"UNLINK", "k1"}}},
	{name: "PUBLISH goes to replicas only",
		cmds: [][]string{{"PUBLISH", "ch", "hello"}, {"SET", "a", "1"}},
		want: [][]string{{"SET", "a", "1"}}},
	{name: "HINCRBYFLOAT becomes HSET with the new value",
		cmds: [][]string{{"hincrbyfloat", "h", "f", "10.5"}, {"HINCRBYFLOAT", "h", "f", "1e3"}, {"HINCRBYFLOAT", "h", "f", "x"},
			{"HINCRBYFLOAT", "h", "f", "inf"}, {"hincrbyfloat", "h", "g", "0x10"}, {"MULTI"}, {"HINCRBYFLOAT", "h", "f", "0.1"}, {"HSET", "h", "f", "1"}, {"EXEC"}},
		want: [][]string{{"HSET", "h", "f", "10.5"}, {"HSET", "h", "f", "1010.5"}, {"HSET", "h", "g", "16"},
			{"MULTI"}, {"HSET", "h", "f", "1010.59999999999999998"}, {"HSET", "h", "f", "1"}, {"EXEC"}}},
	{name: "hash writes propagate as sent, only when they change something",
		cmds: [][]string{{"hset", "h", "a", "1", "b", "2"}, {"HMSET", "h", "a", "3"}, {"HSETNX", "h", "a", "9"}, {"HSETNX", "h", "c", "9"},
			{"HINCRBY", "h", "c", "1"}, {"HINCRBY", "h", "c", "x"}, {"HDEL", "h", "nope"}, {"HDEL", "h", "a", "nope"}, {"HDEL", "nokey", "a"},
			{"HDEL", "h", "b", "c"}, {"HGET", "h", "a"}},
		want: [][]string{{"hset", "h", "a", "1", "b", "2"}, {"HMSET", "h", "a", "3"}, {"HSETNX", "h", "c", "9"},
			{"HINCRBY", "h", "c", "1"}, {"HDEL", "h", "a", "nope"}, {"HDEL", "h", "b", "c"}}},
	{name: "SPOP becomes SREM, with a count covering the set DEL",
		cmds: [][]string{{"SADD", "s", "a"}, {"SPOP", "s"}, {"SADD", "n", "5"}, {"spop", "n"}, {"SPOP", "n"},
			{"SADD", "s", "1", "2", "3"}, {"SPOP", "s", "3"}, {"SADD", "t", "a", "b"}, {"SPOP", "t", "10"}, {"SPOP", "t", "2"},
			{"SADD", "u", "1"}, {"SPOP", "u", "0"}},
		want: [][]string{{"SADD", "s", "a"}, {"SREM", "s", "a"}, {"SADD", "n", "5"}, {"SREM", "n", "5"},
			{"SADD", "s", "1", "2", "3"}, {"DEL", "s"}, {"SADD", "t", "a", "b"}, {"DEL", "t"}, {"SADD", "u", "1"}}},
	{name: "SPOP in MULTI and the set STORE commands",
		cmds: [][]string{{"MULTI"}, {"SADD", "s", "x"}, {"SPOP", "s"}, {"SPOP", "s", "1"}, {"EXEC"},
			{"SADD", "a", "1", "2"}, {"SINTERSTORE", "d", "a", "a"}, {"SINTERSTORE", "d", "a", "nokey"}, {"SINTERSTORE", "d", "a", "nokey"},
			{"SMOVE", "a", "b", "1"}, {"SMOVE", "a", "b", "9"}},
		want: [][]string{{"MULTI"}, {"SADD", "s", "x"}, {"SREM", "s", "x"}, {"EXEC"},
			{"SADD", "a", "1", "2"}, {"SINTERSTORE", "d", "a", "a"}, {"SINTERSTORE", "d", "a", "nokey"}, {"SMOVE", "a", "b", "1"}}},
	{name: "list blocking commands served at once propagate their non-blocking form",
		cmds: [][]string{{"RPUSH", "l", "a", "b", "c", "d", "e", "f"}, {"BLPOP", "x", "l", "0"}, {"brpop", "l", "1"}, {"BLMOVE", "l", "m", "left", "RIGHT", "0"},
			{"brpoplpush", "l", "m", "0"}, {"BLMPOP", "0", "2", "x", "l", "LEFT", "COUNT", "5"}},
		want: [][]string{{"RPUSH", "l", "a", "b", "c", "d", "e", "f"}, {"LPOP", "l"}, {"RPOP", "l"}, {"LMOVE", "l", "m", "left", "RIGHT"},
			{"RPOPLPUSH", "l", "m"}, {"LPOP", "l", "2"}}},
	{name: "LMPOP becomes [LR]POP key count; LPOP count as sent",
		cmds: [][]string{{"RPUSH", "l", "1", "2", "3"}, {"lmpop", "1", "l", "right", "count", "2"}, {"LMPOP", "1", "l", "LEFT"}, {"LMPOP", "1", "l", "LEFT"},
			{"RPUSH", "l", "1", "2"}, {"lpop", "l", "5"}, {"LPOP", "l", "1"}},
		want: [][]string{{"RPUSH", "l", "1", "2", "3"}, {"RPOP", "l", "2"}, {"LPOP", "l", "1"}, {"RPUSH", "l", "1", "2"}, {"lpop", "l", "5"}}},
	{name: "list writes that change nothing propagate nothing",
		cmds: [][]string{{"LPUSHX", "l", "a"}, {"RPUSH", "l", "a"}, {"LREM", "l", "0", "x"}, {"LINSERT", "l", "BEFORE", "x", "y"}, {"LPOP", "l", "0"},
			{"LTRIM", "l", "0", "-1"}, {"LMOVE", "x", "l", "LEFT", "LEFT"}, {"LPOP", "nope"}},
		want: [][]string{{"RPUSH", "l", "a"}}},
	{name: "sorted sets: ZMPOP and BZ* become ZPOPMIN/ZPOPMAX, ZINCRBY and ZADD INCR as sent, no-op writes dropped",
		cmds: [][]string{{"ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d"}, {"ZINCRBY", "z", "1.5", "a"}, {"ZINCRBY", "z", "0", "a"},
			{"ZADD", "z", "INCR", "2", "b"}, {"ZADD", "z", "NX", "9", "a"}, {"ZMPOP", "2", "nokey", "z", "MAX", "COUNT", "2"},
			{"BZPOPMIN", "nokey", "z", "0"}, {"ZADD", "z", "5", "e", "6", "f"}, {"BZMPOP", "0", "1", "z", "MIN", "COUNT", "10"},
			{"ZREM", "z", "nope"}, {"ZUNIONSTORE", "u", "1", "nokey"}},
		want: [][]string{{"ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d"}, {"ZINCRBY", "z", "1.5", "a"},
			{"ZADD", "z", "INCR", "2", "b"}, {"ZPOPMAX", "z", "2"},
			{"ZPOPMIN", "z"}, {"ZADD", "z", "5", "e", "6", "f"}, {"ZPOPMIN", "z", "3"}}},
	{name: "PFCOUNT propagates when it refreshes the cached cardinality",
		cmds: [][]string{{"PFADD", "h", "a", "b"}, {"PFADD", "h", "a"}, {"PFCOUNT", "h"}, {"PFCOUNT", "h"}, {"PFCOUNT", "h", "nokey"},
			{"PFMERGE", "d", "h"}, {"PFDEBUG", "TODENSE", "d"}, {"PFDEBUG", "TODENSE", "d"}, {"PFDEBUG", "ENCODING", "h"}, {"PFDEBUG", "GETREG", "h"}},
		want: [][]string{{"PFADD", "h", "a", "b"}, {"PFCOUNT", "h"}, {"PFMERGE", "d", "h"}, {"PFDEBUG", "TODENSE", "d"}, {"PFDEBUG", "GETREG", "h"}}},
	{name: "EVAL propagates the script's writes, wrapped in MULTI/EXEC when more than one",
		cmds: [][]string{{"EVAL", "redis.call('set', 'a', '1'); redis.call('incr', 'a'); return redis.call('get', 'a')", "0"},
			{"EVAL", "return redis.call('set', KEYS[1], ARGV[1])", "1", "b", "2"}, {"EVAL", "return redis.call('get', 'b')", "0"},
			{"eval", "return redis.call('set', 'c', 1.5, 'EX', 100)", "0"}, {"SCRIPT", "LOAD", "return redis.call('del', 'c')"},
			{"EVALSHA", "095e98f2074dbfd14c1198c021f82d6fa708bc97", "0"}, {"SCRIPT", "FLUSH"},
			{"EVAL", "redis.call('set', 'd', '1'); return redis.call('incr', 'nokey', 'x')", "0"},
			{"EVAL", "redis.call('set', 'e', '1'); return redis.call('incr', 'e')", "0"}},
		want: [][]string{{"MULTI"}, {"set", "a", "1"}, {"incr", "a"}, {"EXEC"}, {"set", "b", "2"}, {"SET", "c", "1.5", "PXAT", "<t>"},
			{"del", "c"}, {"set", "d", "1"}, {"MULTI"}, {"set", "e", "1"}, {"incr", "e"}, {"EXEC"}}},
	{name: "EVAL with redis.set_repl and SELECT inside the script",
		cmds: [][]string{{"EVAL", "redis.set_repl(redis.REPL_NONE); redis.call('set', 'x', '1'); redis.set_repl(redis.REPL_ALL); redis.call('set', 'y', '2')", "0"},
			{"EVAL", "redis.call('select', '1'); redis.call('set', 'a', '1')", "0"}, {"SET", "b", "2"},
			{"EVAL", "redis.call('set', 'z', '1'); redis.call('select', '2'); redis.call('set', 'z', '2')", "0"}, {"SET", "w", "2"}},
		want: [][]string{{"set", "y", "2"}, {"SELECT", "1"}, {"set", "a", "1"}, {"SELECT", "0"}, {"SET", "b", "2"},
			{"MULTI"}, {"set", "z", "1"}, {"SELECT", "2"}, {"set", "z", "2"}, {"EXEC"}, {"SELECT", "0"}, {"SET", "w", "2"}}},
	{name: "EVAL inside MULTI joins the transaction; EVAL_RO and failed scripts propagate nothing",
		cmds: [][]string{{"MULTI"}, {"EVAL", "redis.call('set', 'a', '1'); redis.call('set', 'b', '2')", "0"}, {"SET", "c", "3"}, {"EXEC"},
			{"EVAL_RO", "return redis.call('get', 'a')", "0"}, {"EVAL", "error('x')", "0"}, {"EVAL", "return redis.pcall('set', 'a')", "0"}},
		want: [][]string{{"MULTI"}, {"set", "a", "1"}, {"set", "b", "2"}, {"SET", "c", "3"}, {"EXEC"}}},
	// redis.call's argv lives in arenas the next script reuses
	// (scripting.go resetArenas): inside MULTI the first script's writes
	// wait in the unit until EXEC while the second script runs.
	{name: "scripts inside MULTI keep each command's own arguments",
		cmds: [][]string{{"MULTI"},
			{"EVAL", "redis.call('set', KEYS[1], ARGV[1]); redis.call('incrby', KEYS[2], tonumber(ARGV[2]))", "2", "k1", "k2", "value-one", "7"},
			{"EVAL", "redis.call('set', KEYS[1], ARGV[1]); redis.call('incrby', KEYS[2], tonumber(ARGV[2]))", "2", "k3", "k4", "the-second-value", "1234567"},
			{"EXEC"},
			{"EVAL", "redis.call('set', KEYS[1], ARGV[1]); redis.call('incrby', KEYS[2], tonumber(ARGV[2]))", "2", "k5", "k6", "after", "-3"}},
		want: [][]string{{"MULTI"}, {"set", "k1", "value-one"}, {"incrby", "k2", "7"}, {"set", "k3", "the-second-value"}, {"incrby", "k4", "1234567"}, {"EXEC"},
			{"MULTI"}, {"set", "k5", "after"}, {"incrby", "k6", "-3"}, {"EXEC"}}},
}

// TestPropagateGolden runs each golden case on a Vigil test server with a
// Recorder attached and compares the stream with the case.
func TestPropagateGolden(t *testing.T) {
	for _, tc := range propagateCases {
		t.Run(tc.name, func(t *testing.T) {
			ts := newTestServer(t)
			c := ts.client()
			for i := 0; i+1 < len(tc.directives); i += 2 {
				if got := ts.do(c, "CONFIG", "SET", tc.directives[i], tc.directives[i+1]); got != "+OK\r\n" {
					t.Fatal(got)
				}
			}
			rec := &Recorder{}
			ts.s.AddPropagator(rec)
			ts.do(c, "FLUSHALL")
			rec.Reset()
			rec.stream.Assume(0) // the stream is at db 0, as Redis's after FLUSHALL
			for _, cmd := range tc.cmds {
				ts.do(c, cmd...)
				ts.clk.Advance(time.Millisecond)
			}
			got := parseAOF(t, rec.Bytes())
			if !goldenEqual(tc.want, got) {
				t.Fatalf("stream:\n got: %s\nwant: %s", fmtCmds(got), fmtCmdsS(tc.want))
			}
		})
	}
}

// TestPropagateGoldenRedis (interop) runs the same cases on redis-server
// 7.0.15 with its AOF on and checks that the golden streams are Redis's.
func TestPropagateGoldenRedis(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server")
	}
	dial, aof := startRedisAOF(t)
	rc, rbr := dial(2)
	for _, tc := range propagateCases {
		t.Run(tc.name, func(t *testing.T) {
			for i := 0; i+1 < len(tc.directives); i += 2 {
				rawDo(t, rc, rbr, "CONFIG", "SET", tc.directives[i], tc.directives[i+1])
				def := "no"
				t.Cleanup(func() { rawDo(t, rc, rbr, "CONFIG", "SET", tc.directives[i], def) })
			}
			rawDo(t, rc, rbr, "SELECT", "0")
			rawDo(t, rc, rbr, "FLUSHALL")
			mark := len(aof.incr(t))
			for _, cmd := range tc.cmds {
				rawDo(t, rc, rbr, cmd...)
			}
			got := parseAOF(t, aof.incr(t)[mark:])
			if !goldenEqual(tc.want, got) {
				t.Fatalf("redis-server's AOF:\n got: %s\nwant: %s", fmtCmds(got), fmtCmdsS(tc.want))
			}
		})
	}
}

// goldenEqual compares a stream with a golden one; "<t>" matches any
// absolute time within a day of now (both servers' clocks are near the
// real time: the test server's fake clock starts at a fixed date, so its
// times are checked against that date).
func goldenEqual(want [][]string, got [][][]byte) bool {
	if len(want) != len(got) {
		return false
	}
	for i := range want {
		if len(want[i]) != len(got[i]) {
			return false
		}
		for j, w := range want[i] {
			g := string(got[i][j])
			if w == "<t>" {
				ms, err := strconv.ParseInt(g, 10, 64)
				if err != nil || !plausibleAbsMs(ms) {
					return false
				}
				continue
			}
			if w != g {
				return false
			}
		}
	}
	return true
}

// plausibleAbsMs accepts the absolute times the cases produce: at most a
// few days after either the test clock's start or the real time.
func plausibleAbsMs(ms int64) bool {
	for _, base := range []int64{1700000000000, time.Now().UnixMilli()} {
		if ms > base && ms-base < 5*86400*1000 {
			return true
		}
	}
	return false
}

func fmtCmds(cmds [][][]byte) string {
	var s []string
	for _, c := range cmds {
		s = append(s, "["+fmtCmd(c)+"]")
	}
	return strings.Join(s, " ")
}

func fmtCmdsS(cmds [][]string) string {
	var s []string
	for _, c := range cmds {
		s = append(s, "["+strings.Join(c, " ")+"]")
	}
	return strings.Join(s, " ")
}

// TestPropagateActiveExpiry: keys removed by the active expire cycle
// propagate each as a DEL of its own (a unit outside any command), in the
// database they lived in, as Redis's activeExpireCycle does.
func TestPropagateActiveExpiry(t *testing.T) {
	ts := newTestServer(t)
	c := ts.client()
	rec := &Recorder{}
	ts.s.AddPropagator(rec)
	for i := 0; i < 5; i++ {
		ts.do(c, "SET", "x"+strconv.Itoa(i), "v", "PX", "10")
	}
	ts.do(c, "SELECT", "1")
	ts.do(c, "SET", "y", "v", "PX", "10")
	rec.Reset()
	ts.clk.Advance(time.Second)
	ts.s.mu.Lock()
	ts.s.setNow()
	ts.s.ks.ActiveExpireCycle(ts.s.nowMs, rand.New(rand.NewPCG(1, 2)), 1<<30, func() int64 { return 0 })
	ts.s.mu.Unlock()
	got := parseAOF(t, rec.Bytes())
	dels := map[string]int{}
	db := -1
	for _, cmd := range got {
		switch string(cmd[0]) {
		case "SELECT":
			db, _ = strconv.Atoi(string(cmd[1]))
		case "DEL":
			if len(cmd) != 2 {
				t.Fatalf("DEL of %d keys: %s", len(cmd)-1, fmtCmd(cmd))
			}
			dels[strconv.Itoa(db)+"/"+string(cmd[1])]++
		default:
			t.Fatalf("unexpected %s in %s", fmtCmd(cmd), fmtCmds(got))
		}
	}
	want := map[string]int{"0/x0": 1, "0/x1": 1, "0/x2": 1, "0/x3": 1, "0/x4": 1, "1/y": 1}
	if len(dels) != len(want) {
		t.Fatalf("DELs %v, want %v (stream %s)", dels, want, fmtCmds(got))
	}
	for k := range want {
		if dels[k] != 1 {
			t.Fatalf("DELs %v, want %v", dels, want)
		}
	}
}

// TestPropagateNothingWithoutPropagator: with nothing attached the write
// path records nothing and keeps no pending operations.
func TestPropagateNothingWithoutPropagator(t *testing.T) {
	ts := newTestServer(t)
	c := ts.client()
	ts.do(c, "SET", "a", "1", "EX", "10")
	ts.do(c, "MULTI")
	ts.do(c, "SET", "b", "1")
	ts.do(c, "SET", "c", "1")
	ts.do(c, "EXEC")
	if len(ts.s.pending) != 0 || ts.s.execDepth != 0 {
		t.Fatalf("pending %d, depth %d", len(ts.s.pending), ts.s.execDepth)
	}
}

// TestPropagateReplTarget: a Recorder for replicas sees PUBLISH, which the
// AOF never holds (publishCommand's forceCommandPropagation(REPL)).
func TestPropagateReplTarget(t *testing.T) {
	ts := newTestServer(t)
	c := ts.client()
	aofRec, replRec := &Recorder{}, &Recorder{Target: TargetRepl}
	ts.s.AddPropagator(aofRec)
	ts.s.AddPropagator(replRec)
	ts.do(c, "PUBLISH", "ch", "hi")
	ts.do(c, "SET", "a", "1")
	if got := fmtCmds(parseAOF(t, aofRec.Bytes())); got != `["SELECT" "0"] ["SET" "a" "1"]` {
		t.Fatalf("AOF stream %s", got)
	}
	if got := fmtCmds(parseAOF(t, replRec.Bytes())); got != `["SELECT" "0"] ["PUBLISH" "ch" "hi"] ["SET" "a" "1"]` {
		t.Fatalf("replication stream %s", got)
	}
}

// Recorder is a Propagator that keeps the stream as the AOF would hold it
// (operations for the AOF only, RESP-encoded with SELECT), for the tests
// that compare Vigil's stream with Redis's appendonly file.
type Recorder struct {
	Target Target // which operations to keep; 0 means TargetAOF
	stream resp.CommandStream
	buf    []byte
}

// Propagate implements Propagator.
func (r *Recorder) Propagate(ops []Op) {
	want := r.Target
	if want == 0 {
		want = TargetAOF
	}
	for _, op := range ops {
		if op.Target&want != 0 {
			r.buf = r.stream.Append(r.buf, op.DB, op.Argv)
		}
	}
}

// Bytes returns the recorded stream (read it under the server's lock or
// when the server is idle).
func (r *Recorder) Bytes() []byte { return r.buf }

// Reset empties the recording; the next operation starts with SELECT.
func (r *Recorder) Reset() { r.buf = r.buf[:0]; r.stream.Reset() }

// TestPropagateNothingAfterStartupLoad: the startup load attaches the
// backlog only while it reads the RDB (to feed the DELs of keys expired
// in it); without replication info in the RDB the backlog goes, and so
// does its Propagator, so that the writes of a server that never had a
// replica build no propagation (no rewritten argv, no pending unit).
func TestPropagateNothingAfterStartupLoad(t *testing.T) {
	ts := newTestServer(t, "--appendonly", "no")
	if err := ts.s.loadDataOnStart(); err != nil {
		t.Fatal(err)
	}
	if ts.s.repl.backlog != nil || ts.s.propagating() {
		t.Fatalf("after the load: backlog %v, %d propagators", ts.s.repl.backlog != nil, len(ts.s.props))
	}
	c := ts.client()
	ts.do(c, "SADD", "s", "a", "b")
	ts.do(c, "SPOP", "s")
	if len(ts.s.pending) != 0 {
		t.Fatalf("pending %d", len(ts.s.pending))
	}
	// A replica's backlog attaches it again.
	ts.s.createBacklog()
	if !ts.s.propagating() {
		t.Fatal("createBacklog attached no propagator")
	}
}
