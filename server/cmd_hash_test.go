package server

import (
	"strings"
	"testing"
)

// Hash commands: write accounting and keyspace events recorded from
// redis-server 7.0.15 (checked live by TestHashWritesAndEventsRedis), and
// the golden script testdata/scripts/hash.txt for replies.

// hashEventCases are commands with what redis-server 7.0.15 did for each:
// the server.dirty increment and the keyevent notifications
// (notify-keyspace-events EAnm), in order.
var hashEventCases = []eventCase{
	{[]string{"HSET", "h", "a", "1"}, 1, []string{"new h", "hset h"}},
	{[]string{"HSET", "h", "a", "2", "b", "3"}, 2, []string{"hset h"}}, // every pair counts, new or not
	{[]string{"HSET", "h", "a"}, 0, nil},
	{[]string{"HMSET", "h", "c", "1"}, 1, []string{"hset h"}},
	{[]string{"HSETNX", "h", "a", "1"}, 0, nil},
	{[]string{"HSETNX", "h", "d", "1"}, 1, []string{"hset h"}},
	{[]string{"HSETNX", "h2", "d", "1"}, 1, []string{"new h2", "hset h2"}},
	{[]string{"HGET", "nokey", "a"}, 0, []string{"keymiss nokey"}},
	{[]string{"HGET", "h", "zz"}, 0, nil},
	{[]string{"HMGET", "nokey", "a", "b"}, 0, []string{"keymiss nokey"}},
	{[]string{"HLEN", "nokey"}, 0, []string{"keymiss nokey"}},
	{[]string{"HSTRLEN", "nokey", "a"}, 0, []string{"keymiss nokey"}},
	{[]string{"HEXISTS", "nokey", "a"}, 0, []string{"keymiss nokey"}},
	{[]string{"HGETALL", "nokey"}, 0, []string{"keymiss nokey"}},
	{[]string{"HKEYS", "nokey"}, 0, []string{"keymiss nokey"}},
	{[]string{"HSCAN", "nokey", "0"}, 0, []string{"keymiss nokey"}},
	{[]string{"HRANDFIELD", "nokey"}, 0, []string{"keymiss nokey"}},
	{[]string{"HRANDFIELD", "nokey", "-3"}, 0, []string{"keymiss nokey"}},
	{[]string{"HINCRBY", "h", "n", "5"}, 1, []string{"hincrby h"}},
	{[]string{"HINCRBY", "h", "n", "x"}, 0, nil},
	{[]string{"HINCRBY", "nk", "n", "x"}, 0, nil},
	{[]string{"HINCRBY", "h", "n", "9223372036854775807"}, 0, nil}, // overflow
	{[]string{"HINCRBYFLOAT", "h", "f", "1.5"}, 1, []string{"hincrbyfloat h"}},
	{[]string{"HINCRBYFLOAT", "h", "f", "inf"}, 0, nil},
	{[]string{"HINCRBYFLOAT", "nk", "f", "2.5"}, 1, []string{"new nk", "hincrbyfloat nk"}},
	{[]string{"HDEL", "h", "zz"}, 0, nil},
	{[]string{"HDEL", "h", "a", "b", "zz", "a"}, 2, []string{"hdel h"}},
	{[]string{"HDEL", "nk", "f", "g"}, 1, []string{"hdel nk", "del nk"}},
	{[]string{"HDEL", "nokey", "a"}, 0, nil},
	{[]string{"SET", "s", "v"}, 1, []string{"new s", "set s"}},
	{[]string{"HSET", "s", "a", "1"}, 0, nil},
	{[]string{"HSET", "big", "f", strings.Repeat("x", 65), "g", "1"}, 2, []string{"new big", "hset big"}}, // converted
	{[]string{"HDEL", "big", "f", "g"}, 2, []string{"hdel big", "del big"}},
	{[]string{"COPY", "h", "h3"}, 1, []string{"new h3", "copy_to h3"}},
}

// TestHashWritesAndEvents checks Vigil against hashEventCases.
func TestHashWritesAndEvents(t *testing.T) {
	l := startLive(t, "--notify-keyspace-events", "EAnm")
	eventRun(t, hashEventCases, l.dial(t), l.dial(t), l.dial(t))
}

// TestHashWritesAndEventsRedis (interop) checks hashEventCases against a
// live redis-server.
func TestHashWritesAndEventsRedis(t *testing.T) {
	eventRunRedis(t, hashEventCases)
}
