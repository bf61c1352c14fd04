package server

import (
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/testutil"
)

// TestLuaDebuggerForkedReplicaLikeRedis: a forked session (SCRIPT DEBUG
// YES) on a replica runs as a replica, as Redis's child keeps
// server.masterhost and repl_state: on a read-only replica the script's
// writes and the debugger's "redis" command get -READONLY; with
// replica-read-only no they succeed in the child's copy (the replica's
// key is as before after the session); with the link down and
// replica-serve-stale-data no a command without the stale flag is
// refused. On redis-server 7.0.15 and on Vigil as replicas of one
// redis-server master, every reply the same.
func TestLuaDebuggerForkedReplicaLikeRedis(t *testing.T) {
	m, port := redisMaster(t)
	deadPort := strconv.Itoa(testutil.FreePort(t))
	const write = "local r = redis.pcall('set', KEYS[1], ARGV[1])\nredis.breakpoint()\nreturn redis.call('set', KEYS[1], ARGV[1])\n"
	const get = "#!lua flags=no-writes,allow-stale\nreturn redis.call('get', KEYS[1])\n"
	redis, vigil := replicasOfRedis(t, 50*time.Millisecond, false, func(dial func() *rconn, tag string, tick func()) []string {
		c := dial()
		out := []string{c.do("REPLICAOF", "127.0.0.1", port)}
		eventually(t, "the replica's link to be up", func() bool {
			tick()
			return liveInfoField(t, c, "replication", "master_link_status") == "up"
		})
		out = append(out, m.do("SET", "k1", "m"))
		eventually(t, "the key to reach the replica", func() bool {
			tick()
			return c.do("GET", "k1") == `"m"`
		})
		session := func(script string, steps ...[]string) {
			out = append(out, ldbRunMode(t, dial(), "YES", script, steps, 1, nil)...)
			out = append(out, c.do("GET", "k1"))
		}
		// A read-only replica.
		session(write, []string{"s"}, []string{"p"}, []string{"r", "set", "k1", "y"}, []string{"r", "get", "k1"},
			[]string{"c"}, []string{"c"})
		// A shebang script that may write: processCommand's refusal,
		// no session.
		d := dial()
		out = append(out, d.do("SCRIPT", "DEBUG", "YES"),
			d.do("EVAL", "#!lua\nreturn redis.call('set', KEYS[1], ARGV[1])\n", "1", "k1", "v1"))
		// A writable replica: the writes are the child's.
		out = append(out, c.do("CONFIG", "SET", "replica-read-only", "no"))
		session(write, []string{"s"}, []string{"p"}, []string{"r", "set", "k1", "y"}, []string{"r", "get", "k1"},
			[]string{"c"}, []string{"c"})
		out = append(out, c.do("CONFIG", "SET", "replica-read-only", "yes"))
		// The link down, replica-serve-stale-data no (SCRIPT DEBUG,
		// which a stale replica refuses, before).
		s := dial()
		out = append(out, s.do("SCRIPT", "DEBUG", "YES"), c.do("CONFIG", "SET", "replica-serve-stale-data", "no"),
			c.do("REPLICAOF", "127.0.0.1", deadPort))
		eventually(t, "the replica's link to be down", func() bool {
			tick()
			return liveInfoField(t, c, "replication", "master_link_status") == "down"
		})
		out = append(out, s.do("EVAL", get, "1", "k1"), s.do("s"), s.read())
		if s.closed() {
			out = append(out, "<closed>")
		}
		out = append(out, c.do("CONFIG", "SET", "replica-serve-stale-data", "yes"), c.do("REPLICAOF", "NO", "ONE"))
		return out
	})
	ldbSameReplies(t, redis, vigil, []string{"READONLY You can't write against a read only replica.", `<reply> "+OK"`,
		"Can not execute the command on a stale replica"})
}

// TestLuaDebuggerForkedMinReplicasLikeRedis: a forked session's child
// judges min-replicas-to-write by its parent's good replicas when the
// session started (Redis's child keeps server.repl_good_slaves_count):
// with no replica the script's write gets -NOREPLICAS, with one attached
// it succeeds (in the child's copy). Vigil's child has no replicas of its
// own and refused it. On redis-server 7.0.15 and on Vigil as masters of a
// redis-server replica, every reply the same.
func TestLuaDebuggerForkedMinReplicasLikeRedis(t *testing.T) {
	testutil.NeedRedis(t)
	const write = "local r = redis.pcall('set', KEYS[1], ARGV[1])\nreturn r\n"
	scenario := func(m *rconn, port int, dial func() *rconn) []string {
		out := []string{m.do("CONFIG", "SET", "min-replicas-to-write", "1"), m.do("CONFIG", "SET", "min-replicas-max-lag", "100"),
			m.do("CONFIG", "SET", "repl-diskless-sync-delay", "0")}
		steps := [][]string{{"s"}, {"c"}}
		out = append(out, ldbRunMode(t, dial(), "YES", write, steps, 1, nil)...)
		testutil.StartRedis(t, testutil.RedisOptions{Args: []string{"--replicaof", "127.0.0.1", strconv.Itoa(port)}})
		eventually(t, "a good replica", func() bool {
			return liveInfoField(t, m, "replication", "min_slaves_good_slaves") == "1"
		})
		out = append(out, ldbRunMode(t, dial(), "YES", write, steps, 1, nil)...)
		return append(out, m.do("GET", "k1"))
	}
	r := testutil.StartRedis(t, testutil.RedisOptions{TCP: true})
	dialRedis := func() *rconn {
		return rawConn(t, r.Dial(t))
	}
	redis := scenario(dialRedis(), r.Port, dialRedis)
	l, addr := startLiveTCP(t)
	_, p, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(p)
	vigil := scenario(l.dial(t), port, func() *rconn { return l.dial(t) })
	ldbSameReplies(t, redis, vigil, []string{"NOREPLICAS Not enough good replicas to write.", `<reply> "+OK"`})
}
