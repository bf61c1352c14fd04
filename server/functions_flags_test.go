package server

import (
	"net"
	"strconv"
	"strings"
	"testing"
)

// functionsFlagsTable: FCALL and FCALL_RO against the functions' flags,
// EVAL against a shebang's, under maxmemory and in MULTI, replayed on
// redis-server by
// TestFunctionsFlagsGolden.
var functionsFlagsTable = [][]string{
	{"FLUSHALL"},
	{"FUNCTION", "FLUSH"},
	{"CONFIG", "SET", "maxmemory-policy", "noeviction"},
	{"FUNCTION", "LOAD", fnLibCode("t",
		"redis.register_function{function_name='w', callback=function(keys, args) return redis.call('set', keys[1], 'v') end}",
		"redis.register_function{function_name='ro', callback=function(keys, args) return redis.call('get', keys[1]) end, flags={'no-writes'}}",
		"redis.register_function{function_name='rowrite', callback=function(keys, args) return redis.call('set', keys[1], 'v') end, flags={'no-writes'}}",
		"redis.register_function{function_name='oom', callback=function(keys, args) return redis.call('set', keys[1], 'v') end, flags={'allow-oom'}}",
		"redis.register_function{function_name='noflags', callback=function(keys, args) return redis.call('get', keys[1]) end}",
	)},
	{"FCALL_RO", "ro", "1", "k"},
	{"FCALL_RO", "w", "1", "k"},
	{"FCALL_RO", "rowrite", "1", "k"},
	{"FCALL", "rowrite", "1", "k"},
	{"FCALL_RO", "noflags", "1", "k"},
	{"FCALL_RO", "oom", "1", "k"},
	// EVAL's "#!lua flags=..." shebang (evalExtractShebangFlags).
	{"EVAL", "#!lua", "0"},
	{"EVAL", "#!lua\nreturn 1", "0"},
	{"EVAL", "#!python\nreturn 1", "0"},
	{"EVAL", "#!lua foo=bar\nreturn 1", "0"},
	{"EVAL", "#!lua flags=bad\nreturn 1", "0"},
	{"EVAL", "#!lua flags=\nreturn 1", "0"},
	{"EVAL", "#!lua \"a\nreturn 1", "0"},
	{"EVAL", "#! lua\nreturn 1", "0"},
	{"EVAL", "#!lua\n\nreturn +", "0"},
	{"EVAL", "#!lua flags=no-writes,allow-oom\nreturn redis.call('set','k','v')", "0"},
	{"EVAL_RO", "#!lua\nreturn 1", "0"},
	{"EVAL_RO", "#!lua flags=no-writes\nreturn redis.call('get','k')", "0"},
	{"SCRIPT", "LOAD", "#!lua flags=no-writes\nreturn redis.call('get','k')"},
	{"EVALSHA_RO", "0f2b3ea0c1a1fa2ad8c9a4b3c4b4fb0b2f2b1b0e", "0"},
	{"SET", "big", strings.Repeat("x", 100000)},
	{"CONFIG", "SET", "maxmemory", "1"},
	// Out of memory: a function without no-writes or allow-oom is refused
	// before it runs (plain -OOM), allow-oom writes, no-writes reads.
	{"FCALL", "w", "1", "k"},
	{"FCALL", "noflags", "1", "k"},
	{"FCALL_RO", "noflags", "1", "k"},
	{"FCALL", "oom", "1", "k2"},
	{"FCALL", "ro", "1", "k"},
	{"FCALL_RO", "ro", "1", "k"},
	{"FCALL", "nosuch", "0"},
	{"EXISTS", "k2"},
	{"EVAL", "#!lua\nreturn redis.call('get','k')", "0"},
	{"EVAL", "#!lua flags=allow-oom\nreturn redis.call('set','k6','v')", "0"},
	{"EVAL", "#!lua flags=no-writes\nreturn redis.call('get','k6')", "0"},
	{"EVAL", "return redis.call('get','k6')", "0"},
	{"EVAL", "return redis.call('set','k7','v')", "0"},
	{"MULTI"},
	{"FCALL", "noflags", "1", "k"},
	{"FCALL", "ro", "1", "k"},
	{"EXEC"},
	{"CONFIG", "SET", "maxmemory", "0"},
	// Queued while memory was fine, EXEC under OOM: EXEC sees the queued
	// functions' flags.
	{"MULTI"},
	{"FCALL", "noflags", "1", "k"},
	{"FCALL", "oom", "1", "k5"},
	{"CONFIG", "SET", "maxmemory", "1"},
	{"EXEC"},
	{"CONFIG", "SET", "maxmemory", "0"},
	{"MULTI"},
	{"FCALL", "ro", "1", "k"},
	{"FCALL", "oom", "1", "k5"},
	{"CONFIG", "SET", "maxmemory", "1"},
	{"EXEC"},
	{"CONFIG", "SET", "maxmemory", "0"},
	{"EXISTS", "k5"},
}

// TestFunctionsFlagsGolden runs functionsFlagsTable against redis-server
// and Vigil and compares every reply byte for byte.
func TestFunctionsFlagsGolden(t *testing.T) {
	dial := startRedis(t)
	rc, rbr := dial(2)
	ts := newTestServer(t)
	c := ts.client()
	for _, args := range functionsFlagsTable {
		want := rawDo(t, rc, rbr, args...)
		got := ts.doProto(c, 2, args...)
		if want != got {
			t.Errorf("%.120q:\n redis: %q\n vigil: %q", args, want, got)
		}
	}
}

// TestFunctionsStaleFlags: on a stale replica (replica-serve-stale-data
// no, master unreachable) a function without allow-stale is refused by
// processCommand; one with allow-stale runs, and the commands it calls
// run only if flagged stale (ECHO yes, GET and PING no); an EVAL without shebang is refused.
func TestFunctionsStaleFlags(t *testing.T) {
	ts := newTestServer(t)
	c := ts.client()
	ts.do(c, "FUNCTION", "LOAD", fnLibCode("s",
		"redis.register_function{function_name='stale', callback=function(keys, args) return redis.call('get', keys[1]) end, flags={'no-writes', 'allow-stale'}}",
		"redis.register_function{function_name='staleecho', callback=function(keys, args) return redis.call('echo', 'x') end, flags={'no-writes', 'allow-stale'}}",
		"redis.register_function{function_name='ro', callback=function(keys, args) return redis.call('get', keys[1]) end, flags={'no-writes'}}",
		"redis.register_function{function_name='w', callback=function(keys, args) return redis.call('set', keys[1], 'v') end}",
	))
	ts.do(c, "CONFIG", "SET", "replica-serve-stale-data", "no")
	port := closedPort(t)
	if got := ts.do(c, "REPLICAOF", "127.0.0.1", port); got != "+OK\r\n" {
		t.Fatalf("REPLICAOF: %q", got)
	}
	defer ts.do(c, "REPLICAOF", "NO", "ONE")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"FCALL", "stale", "1", "k"}, "-ERR Can not execute the command on a stale replica script: stale, on @user_function:2.\r\n"},
		{[]string{"FCALL", "staleecho", "0"}, "$1\r\nx\r\n"},
		{[]string{"FCALL", "ro", "1", "k"}, "-MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.\r\n"},
		{[]string{"FCALL", "w", "1", "k"}, "-READONLY You can't write against a read only replica.\r\n"},
		{[]string{"EVAL", "return 1", "0"}, "-MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.\r\n"},
		{[]string{"EVAL", "#!lua flags=no-writes,allow-stale\nreturn redis.call('echo','x')", "0"}, "$1\r\nx\r\n"},
		{[]string{"EVAL", "#!lua flags=no-writes\nreturn 1", "0"}, "-MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.\r\n"},
	} {
		if got := ts.do(c, tc.args...); got != tc.want {
			t.Errorf("%q: got %q want %q", tc.args, got, tc.want)
		}
	}
}

// closedPort is a loopback port nothing listens on (a listener's, closed).
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return strconv.Itoa(port)
}
