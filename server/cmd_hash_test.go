package server

import (
	"strings"
	"testing"

	"github.com/vigil-kv/vigil/internal/resp"
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

// TestHashOverwriteAfterRead: a hashtable writes a value of the same size
// class over the old one in place, so a value read earlier in the same
// pipelined batch, MULTI or script must already be in the reply (or the
// script's own string) before the overwrite: the replies keep the old
// values.
func TestHashOverwriteAfterRead(t *testing.T) {
	l := startLive(t, "--hash-max-listpack-entries", "0")
	c := l.dial(t)
	if got := c.do("HSET", "h", "element:1", "aaa", "element:2", "bbb"); got != "(integer) 2" {
		t.Fatalf("HSET: %s", got)
	}
	if got := c.do("OBJECT", "ENCODING", "h"); got != `"hashtable"` {
		t.Fatalf("encoding %s", got)
	}
	// One write, so that the commands run as one batch.
	var batch []byte
	for _, cmd := range [][]string{
		{"HGET", "h", "element:1"},
		{"HSET", "h", "element:1", "ccc"},
		{"HGETALL", "h"},
		{"HSET", "h", "element:1", "ddd", "element:2", "eee"},
		{"HMGET", "h", "element:1", "element:2"},
		{"HINCRBY", "h", "n", "5"},
		{"HINCRBY", "h", "n", "-3"},
	} {
		batch = resp.AppendCommandStrings(batch, cmd...)
	}
	if _, err := c.c.Write(batch); err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{
		`"aaa"`,
		"(integer) 0",
		`["element:1", "ccc", "element:2", "bbb"]`,
		"(integer) 0",
		`["ddd", "eee"]`,
		"(integer) 5",
		"(integer) 2",
	} {
		got := c.read()
		if i == 2 && got == `["element:2", "bbb", "element:1", "ccc"]` {
			continue // the other order a hashtable may have
		}
		if got != want {
			t.Fatalf("batch reply %d: %s, want %s", i, got, want)
		}
	}
	c.do("MULTI")
	c.do("HGET", "h", "element:1")
	c.do("HSET", "h", "element:1", "fff")
	c.do("HGET", "h", "element:1")
	if got := c.do("EXEC"); got != `["ddd", (integer) 0, "fff"]` {
		t.Fatalf("EXEC: %s", got)
	}
	script := "local v = redis.call('hget', KEYS[1], 'element:1') " +
		"redis.call('hset', KEYS[1], 'element:1', 'ggg') " +
		"return {v, redis.call('hget', KEYS[1], 'element:1')}"
	if got := c.do("EVAL", script, "1", "h"); got != `["fff", "ggg"]` {
		t.Fatalf("EVAL: %s", got)
	}
}
