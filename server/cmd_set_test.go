package server

import (
	"testing"
)

// setEventCases are set commands with what redis-server 7.0.15 did for
// each: the server.dirty increment and the keyevent notifications
// (notify-keyspace-events EAnm), in order. Members are chosen so the
// random commands act deterministically.
var setEventCases = []eventCase{
	{[]string{"SADD", "s", "1", "2", "2"}, 2, []string{"new s", "sadd s"}},
	{[]string{"SADD", "s", "1"}, 0, nil},
	{[]string{"SADD", "s", "x", "3"}, 2, []string{"sadd s"}},
	{[]string{"SREM", "s", "9"}, 0, nil},
	{[]string{"SREM", "nokey", "9"}, 0, nil},
	{[]string{"SREM", "s", "1", "2", "9"}, 2, []string{"srem s"}},
	{[]string{"SREM", "s", "x", "3", "4"}, 2, []string{"srem s", "del s"}},
	{[]string{"SISMEMBER", "nokey", "1"}, 0, []string{"keymiss nokey"}},
	{[]string{"SMEMBERS", "nokey"}, 0, []string{"keymiss nokey"}},
	{[]string{"SADD", "a", "1", "2"}, 2, []string{"new a", "sadd a"}},
	{[]string{"SMOVE", "a", "b", "1"}, 2, []string{"srem a", "new b", "sadd b"}},
	{[]string{"SMOVE", "a", "b", "9"}, 0, nil},
	{[]string{"SADD", "b", "2"}, 1, []string{"sadd b"}},
	{[]string{"SMOVE", "a", "b", "2"}, 1, []string{"srem a", "del a"}},
	{[]string{"SPOP", "b", "0"}, 0, nil},
	{[]string{"SPOP", "b", "5"}, 2, []string{"spop b", "del b"}},
	{[]string{"SADD", "p", "7"}, 1, []string{"new p", "sadd p"}},
	{[]string{"SPOP", "p"}, 1, []string{"spop p", "del p"}},
	{[]string{"SPOP", "p"}, 0, nil},
	{[]string{"SADD", "a", "1", "2", "3"}, 3, []string{"new a", "sadd a"}},
	{[]string{"SADD", "b", "2", "3", "4"}, 3, []string{"new b", "sadd b"}},
	{[]string{"SINTERSTORE", "d", "a", "b"}, 1, []string{"new d", "sinterstore d"}},
	{[]string{"SINTERSTORE", "d", "a", "b"}, 1, []string{"sinterstore d"}},
	{[]string{"SUNIONSTORE", "d", "a", "b"}, 1, []string{"sunionstore d"}},
	{[]string{"SDIFFSTORE", "d", "a", "b"}, 1, []string{"sdiffstore d"}},
	{[]string{"SDIFFSTORE", "d", "a", "a"}, 1, []string{"del d"}},
	{[]string{"SDIFFSTORE", "d", "a", "a"}, 0, nil},
	{[]string{"SINTERSTORE", "d", "a", "nokey"}, 0, []string{"keymiss nokey"}},
	{[]string{"SUNIONSTORE", "d", "a"}, 1, []string{"new d", "sunionstore d"}},
	{[]string{"SINTERSTORE", "d", "a", "nokey"}, 1, []string{"keymiss nokey", "del d"}},
	{[]string{"SINTERCARD", "2", "a", "nokey"}, 0, []string{"keymiss nokey"}},
	{[]string{"SRANDMEMBER", "nokey"}, 0, []string{"keymiss nokey"}},
	{[]string{"SSCAN", "nokey", "0"}, 0, []string{"keymiss nokey"}},
}

// TestSetWritesAndEvents checks Vigil against setEventCases.
func TestSetWritesAndEvents(t *testing.T) {
	l := startLive(t, "--notify-keyspace-events", "EAnm")
	eventRun(t, setEventCases, l.dial(t), l.dial(t), l.dial(t))
}

// TestSetWritesAndEventsRedis (interop) checks setEventCases against a
// live redis-server.
func TestSetWritesAndEventsRedis(t *testing.T) {
	eventRunRedis(t, setEventCases)
}

// TestSetWatch: a write that changes a set aborts a WATCHing transaction
// (signalModifiedKey), a no-op does not.
func TestSetWatch(t *testing.T) {
	ts := newTestServer(t)
	c, o := ts.client(), ts.client()
	for _, tc := range []struct {
		cmd   []string
		abort bool
	}{
		{[]string{"SADD", "w", "1"}, false}, // already a member
		{[]string{"SADD", "w", "2"}, true},
		{[]string{"SREM", "w", "9"}, false},
		{[]string{"SREM", "w", "1"}, true}, // and deletes it
		{[]string{"SPOP", "w", "0"}, false},
		{[]string{"SMOVE", "x", "w", "5"}, true}, // dst gets a member
		{[]string{"SINTERSTORE", "w", "w", "nokey"}, true},
		{[]string{"SINTERSTORE", "w", "nokey"}, true},
		{[]string{"SMOVE", "w", "x", "9"}, false},
		{[]string{"SISMEMBER", "w", "1"}, false},
	} {
		ts.do(o, "DEL", "w", "x")
		ts.do(o, "SADD", "w", "1")
		ts.do(o, "SADD", "x", "5")
		ts.do(c, "WATCH", "w")
		ts.do(o, tc.cmd...)
		ts.do(c, "MULTI")
		ts.do(c, "PING")
		got := ts.do(c, "EXEC")
		if aborted := got == "*-1\r\n"; aborted != tc.abort {
			t.Errorf("%v: EXEC %q, want aborted=%v", tc.cmd, got, tc.abort)
		}
	}
}
