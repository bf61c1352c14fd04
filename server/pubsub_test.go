package server

import (
	"strings"
	"testing"
	"time"
)

// TestShardPubSub: SPUBLISH reaches shard subscribers only, as "smessage"
// (a push frame in RESP3), and a shard-only subscriber is a pubsub client.
func TestShardPubSub(t *testing.T) {
	l := startLive(t)
	s2, s3, plain, pub := l.dial(t), l.dial(t), l.dial(t), l.dial(t)
	if got := s2.do("SSUBSCRIBE", "ch"); got != `["ssubscribe", "ch", (integer) 1]` {
		t.Fatalf("SSUBSCRIBE: %s", got)
	}
	s3.do("HELLO", "3")
	if got := s3.do("SSUBSCRIBE", "ch"); got != `>["ssubscribe", "ch", (integer) 1]` {
		t.Fatalf("SSUBSCRIBE in RESP3: %s", got)
	}
	if got := plain.do("SUBSCRIBE", "ch"); got != `["subscribe", "ch", (integer) 1]` {
		t.Fatalf("SUBSCRIBE: %s", got)
	}
	if got := pub.do("SPUBLISH", "ch", "hi"); got != "(integer) 2" {
		t.Fatalf("SPUBLISH: %s", got)
	}
	if got := s2.read(); got != `["smessage", "ch", "hi"]` {
		t.Errorf("RESP2 shard message: %s", got)
	}
	if got := s3.read(); got != `>["smessage", "ch", "hi"]` {
		t.Errorf("RESP3 shard message: %s", got)
	}
	if got := pub.do("PUBLISH", "ch", "plain"); got != "(integer) 1" {
		t.Fatalf("PUBLISH: %s", got)
	}
	if got := plain.read(); got != `["message", "ch", "plain"]` {
		t.Errorf("plain subscriber got %s", got)
	}
	if got := pub.do("CLIENT", "KILL", "TYPE", "pubsub"); got != "(integer) 3" {
		t.Errorf("CLIENT KILL TYPE pubsub: %s", got)
	}
	if !s2.closed() {
		t.Error("shard subscriber not killed")
	}
	if got := pub.do("PUBSUB", "SHARDNUMSUB", "ch"); got != `["ch", (integer) 0]` {
		t.Errorf("subscriptions left after the kill: %s", got)
	}
}

// TestKeyspaceNotifications: notify-keyspace-events publishes what Redis
// 7.0.15 publishes for the same commands (this sequence's events were
// recorded from redis-server; a random command stream compared the two as
// well). Lazy expiry runs on the fake clock.
func TestKeyspaceNotifications(t *testing.T) {
	l := startLive(t, "--notify-keyspace-events", "KEAnm")
	sub, c := l.dial(t), l.dial(t)
	if got := sub.do("PSUBSCRIBE", "__key*__:*"); got != `["psubscribe", "__key*__:*", (integer) 1]` {
		t.Fatalf("PSUBSCRIBE: %s", got)
	}
	for _, cmd := range [][]string{
		{"SET", "a", "1"}, {"SET", "a", "2", "EX", "100"}, {"GET", "nokey"}, {"SETNX", "a", "x"},
		{"APPEND", "a", "x"}, {"INCR", "n"}, {"INCRBYFLOAT", "n", "1.5"}, {"SETRANGE", "a", "0", "z"},
		{"GETEX", "a", "PERSIST"}, {"RENAME", "a", "b"}, {"COPY", "b", "c", "DB", "2"}, {"MOVE", "b", "1"},
		{"EXPIRE", "n", "0"}, {"MSET", "m", "1"}, {"PEXPIRE", "m", "100"}, {"OBJECT", "ENCODING", "nokey"},
	} {
		c.do(cmd...)
	}
	l.clk.Advance(time.Second)
	c.do("GET", "m")
	want := []string{
		"__keyspace@0__:a new", "__keyevent@0__:new a", "__keyspace@0__:a set", "__keyevent@0__:set a",
		"__keyspace@0__:a set", "__keyevent@0__:set a", "__keyspace@0__:a expire", "__keyevent@0__:expire a",
		"__keyspace@0__:nokey keymiss", "__keyevent@0__:keymiss nokey",
		"__keyspace@0__:a append", "__keyevent@0__:append a",
		"__keyspace@0__:n new", "__keyevent@0__:new n", "__keyspace@0__:n incrby", "__keyevent@0__:incrby n",
		"__keyspace@0__:n incrbyfloat", "__keyevent@0__:incrbyfloat n",
		"__keyspace@0__:a setrange", "__keyevent@0__:setrange a",
		"__keyspace@0__:a persist", "__keyevent@0__:persist a",
		"__keyspace@0__:b new", "__keyevent@0__:new b", "__keyspace@0__:a rename_from", "__keyevent@0__:rename_from a",
		"__keyspace@0__:b rename_to", "__keyevent@0__:rename_to b",
		"__keyspace@2__:c new", "__keyevent@2__:new c", "__keyspace@2__:c copy_to", "__keyevent@2__:copy_to c",
		"__keyspace@1__:b new", "__keyevent@1__:new b", "__keyspace@0__:b move_from", "__keyevent@0__:move_from b",
		"__keyspace@1__:b move_to", "__keyevent@1__:move_to b",
		"__keyspace@0__:n del", "__keyevent@0__:del n",
		"__keyspace@0__:m new", "__keyevent@0__:new m", "__keyspace@0__:m set", "__keyevent@0__:set m",
		"__keyspace@0__:m expire", "__keyevent@0__:expire m",
		"__keyspace@0__:m expired", "__keyevent@0__:expired m", "__keyspace@0__:m keymiss", "__keyevent@0__:keymiss m",
	}
	for i, w := range want {
		got := sub.read()
		if !strings.HasPrefix(got, `["pmessage", "__key*__:*", `) {
			t.Fatalf("event %d: %s", i, got)
		}
		parts := strings.Split(strings.TrimSuffix(strings.TrimPrefix(got, `["pmessage", "__key*__:*", `), "]"), ", ")
		if g := strings.Trim(parts[0], `"`) + " " + strings.Trim(parts[1], `"`); g != w {
			t.Fatalf("event %d: got %q, want %q", i, g, w)
		}
	}
}
