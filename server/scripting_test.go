package server

import (
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
