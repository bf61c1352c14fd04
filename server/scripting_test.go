package server

import (
	"strings"
	"testing"
)

// TestScriptMathRandom checks the PRNG scripts see against a fresh
// redis-server 7.0.15 (redisLrand48 from rand.c's initial state; the
// sequence continues across scripts and SCRIPT FLUSH; math.randomseed
// reseeds).
func TestScriptMathRandom(t *testing.T) {
	ts := newTestServer(t)
	c := ts.client()
	got := ts.do(c, "EVAL", "return {math.random(1000), math.random(1000), math.random(5,10), tostring(math.random())}", "0")
	want := "*4\r\n:397\r\n:841\r\n:7\r\n$16\r\n0.44658343468168\r\n"
	if got != want {
		t.Fatalf("got %q want %q", got, want)
	}
	ts.do(c, "SCRIPT", "FLUSH")
	if got := ts.do(c, "EVAL", "return {math.random(1000), math.random(1000)}", "0"); got != "*2\r\n:319\r\n:887\r\n" {
		t.Fatalf("after SCRIPT FLUSH: %q", got)
	}
	got = ts.do(c, "EVAL", "math.randomseed(42); return {math.random(1000), math.random(1000)}", "0")
	if want := "*2\r\n:745\r\n:343\r\n"; got != want {
		t.Fatalf("got %q want %q", got, want)
	}
}

// TestScriptWatchAndDirty: a script's writes touch watched keys (the EXEC
// of a watcher fails) and count in rdb_changes like the commands' own.
func TestScriptWatchAndDirty(t *testing.T) {
	ts := newTestServer(t)
	a, b := ts.client(), ts.client()
	ts.do(a, "WATCH", "k")
	ts.do(a, "MULTI")
	ts.do(a, "GET", "k")
	dirty := ts.s.ks.Dirty
	if got := ts.do(b, "EVAL", "redis.call('set', KEYS[1], 'v'); return redis.call('incr', 'n')", "1", "k"); got != ":1\r\n" {
		t.Fatal(got)
	}
	if d := ts.s.ks.Dirty - dirty; d != 2 {
		t.Fatalf("dirty += %d, want 2", d)
	}
	if got := ts.do(a, "EXEC"); got != "*-1\r\n" {
		t.Fatalf("EXEC after a script wrote the watched key: %q", got)
	}
	// The script ran in the caller's database; SELECT inside it does not
	// change the caller's.
	ts.do(b, "SELECT", "3")
	ts.do(b, "EVAL", "redis.call('set', 'x', '1'); redis.call('select', '5'); redis.call('set', 'y', '1')", "0")
	if got := ts.do(b, "EXISTS", "x"); got != ":1\r\n" {
		t.Fatalf("x in db 3: %q", got)
	}
	ts.do(b, "SELECT", "5")
	if got := ts.do(b, "EXISTS", "y"); got != ":1\r\n" {
		t.Fatalf("y in db 5: %q", got)
	}
}

// TestScriptBadInput: scripts that fail to compile, raise odd values or
// nest deeply reply errors, never panic.
func TestScriptBadInput(t *testing.T) {
	ts := newTestServer(t)
	c := ts.client()
	for _, body := range []string{
		"syntax error here", "error()", "error(nil)", "error(12)", "error({})", "return {err=1}",
		"local t = {}; t[1] = t; return t", "return nil + 1", "return redis.call('blpop', 'l', '0')",
		"return cjson.decode('{bad')", "return cjson.encode({[true]=1})", "return string.rep('x', 10) .. {}",
		"return struct.unpack('i', '')", "return struct.pack('i40', 1)", "return struct.unpack('c0', 'x')", "return struct.unpack('i16', string.rep('x', 16))",
		"return struct.unpack('s', 'abc')", "return struct.unpack('b', 'x', 100)", "return struct.size('s')", "return cmsgpack.unpack(string.char(0xdd, 255, 255, 255, 255))",
	} {
		got := ts.do(c, "EVAL", body, "0")
		if got == "" {
			t.Fatalf("%s: no reply", body)
		}
	}
	if got := ts.do(c, "EVAL", "syntax error here", "0"); got[:45] != "-ERR Error compiling script (new function): u" {
		t.Fatalf("compile error: %q", got)
	}
}

// TestScriptErrorStats: an error a command inside the script replied is
// counted once (by the command), not again for EVAL's reply, as 7.0.15's
// ignore_error_stats_update; EVAL's failed_calls counts every failure.
func TestScriptErrorStats(t *testing.T) {
	ts := newTestServer(t)
	c := ts.client()
	ts.do(c, "SET", "k2", "v")
	ts.do(c, "CONFIG", "RESETSTAT")
	for _, body := range []string{"return redis.call('incr','k2')", "return redis.pcall('incr','k2')", "error('x')",
		"return {err='FOO bar'}", "return redis.call('nosuch')", "return redis.pcall('nosuch')"} {
		ts.do(c, "EVAL", body, "0")
	}
	info := ts.do(c, "INFO", "errorstats")
	for _, want := range []string{"errorstat_ERR:count=5\r\n", "errorstat_FOO:count=1\r\n"} {
		if !strings.Contains(info, want) {
			t.Fatalf("INFO errorstats %q lacks %q", info, want)
		}
	}
	info = ts.do(c, "INFO", "commandstats")
	for _, want := range []string{"cmdstat_eval:calls=6,", "rejected_calls=0,failed_calls=6", "cmdstat_incr:calls=2,"} {
		if !strings.Contains(info, want) {
			t.Fatalf("INFO commandstats %q lacks %q", info, want)
		}
	}
}

// TestScriptCacheInfo: INFO memory counts the cached scripts; SCRIPT FLUSH
// empties the cache.
func TestScriptCacheInfo(t *testing.T) {
	ts := newTestServer(t)
	c := ts.client()
	ts.do(c, "EVAL", "return 1", "0")
	ts.do(c, "SCRIPT", "LOAD", "return 2")
	ts.do(c, "SCRIPT", "LOAD", "return 2")
	if info := ts.do(c, "INFO", "memory"); !strings.Contains(info, "number_of_cached_scripts:2\r\n") {
		t.Fatalf("INFO memory: %q", info)
	}
	ts.do(c, "SCRIPT", "FLUSH")
	if info := ts.do(c, "INFO", "memory"); !strings.Contains(info, "number_of_cached_scripts:0\r\n") {
		t.Fatalf("INFO memory after FLUSH: %q", info)
	}
}

// TestScriptErrorReplyCode: redis.error_reply gives a message without an
// error code the code ERR, as Redis 7.0 does (checked against
// redis-server 7.0.15: error_reply("x") replies -ERR x, error_reply("")
// replies "-ERR ").
func TestScriptErrorReplyCode(t *testing.T) {
	ts := newTestServer(t)
	c := ts.client()
	for _, tc := range []struct{ arg, want string }{
		{`"x"`, "-ERR x\r\n"},
		{`""`, "-ERR \r\n"},
		{`"-"`, "-ERR \r\n"},
		{`"MY err"`, "-MY err\r\n"},
		{`"-MY err"`, "-MY err\r\n"},
		{`"-NOPE"`, "-ERR NOPE\r\n"},
		{`"x\r\n"`, "-ERR x\r\n"},
	} {
		if got := ts.do(c, "EVAL", "return redis.error_reply("+tc.arg+")", "0"); got != tc.want {
			t.Errorf("error_reply(%s): got %q want %q", tc.arg, got, tc.want)
		}
	}
	if got := ts.do(c, "EVAL", "return redis.error_reply('x').err", "0"); got != "$5\r\nERR x\r\n" {
		t.Errorf("error_reply('x').err: got %q", got)
	}
}
