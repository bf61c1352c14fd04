package server

import (
	"bufio"
	"strconv"
	"strings"
	"testing"

	"github.com/vigil-kv/vigil/internal/redisutil"
	"github.com/vigil-kv/vigil/internal/testutil"
)

// TestMigrateInterop (interop) moves keys with MIGRATE from Vigil to a
// redis-server 7.0.15 (with a password: AUTH and AUTH2) and back from
// that redis-server to Vigil, and runs the same MIGRATE sequence with
// redis-server as the source against the same targets, requiring the same
// replies: moved keys (every type, a TTL), COPY, REPLACE, KEYS, BUSYKEY,
// a bad db, a wrong password, a refused connection, NOKEY and the
// argument errors.
func TestMigrateInterop(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server")
	}
	r := testutil.StartRedis(t, testutil.RedisOptions{TCP: true, Args: []string{"--requirepass", "pw"}})
	rc := r.Dial(t)
	rbr := bufio.NewReader(rc)
	rawDo(t, rc, rbr, "AUTH", "pw")
	l, vaddr := startLiveTCP(t)
	vc := l.dial(t)
	vport := vaddr[strings.LastIndexByte(vaddr, ':')+1:]
	rport := strconv.Itoa(r.Port)

	// redisDo renders a reply of the redis-server like rconn.do.
	redisDo := func(args ...string) string {
		t.Helper()
		return renderValue(parseReply(t, rawDo(t, rc, rbr, args...)))
	}
	type side struct {
		name   string
		do     func(args ...string) string
		target string // the other server's port
		auth   []string
	}
	vigil := side{"vigil", vc.do, rport, []string{"AUTH", "pw"}}
	redis := side{"redis", redisDo, vport, nil}
	steps := func(src, dst side) []struct{ args, want string } {
		a := strings.Join(src.auth, " ")
		if a != "" {
			a = " " + a
		}
		m := "MIGRATE 127.0.0.1 " + src.target + " "
		return []struct{ args, want string }{
			{m + "nokey 0 1000" + a, "+NOKEY"},
			{m + "l 0 1000" + a, "+OK"},
			{m + "s 3 1000 COPY" + a, "+OK"},
			{m + "s 3 1000 COPY" + a, "-ERR Target instance replied with error: BUSYKEY Target key name already exists."},
			{m + "s 3 1000 COPY REPLACE" + a, "+OK"},
			{m + `"" 0 1000` + a + " KEYS h z nokey", "+OK"},
			{m + "t 99 1000" + a, "-ERR Target instance replied with error: ERR DB index is out of range"},
			{m + "x 0 1000 KEYS h", "-ERR When using MIGRATE KEYS option, the key argument must be set to the empty string"},
			{m + "t 0 1000 AUTH", "-ERR syntax error"},
			{m + "t 0 1000 AUTH2 x", "-ERR syntax error"},
			{m + "t 0 1000 FOO", "-ERR syntax error"},
			{m + "t x 1000", "-ERR value is not an integer or out of range"},
			{m + "t 0 x", "-ERR value is not an integer or out of range"},
			{"MIGRATE 127.0.0.1 1 t 0 1000", "-IOERR error or timeout writing to target instance"},
			{m + `"" 0 1000 KEYS`, "+NOKEY"},
		}
	}
	for _, pair := range [][2]side{{vigil, redis}, {redis, vigil}} {
		src, dst := pair[0], pair[1]
		src.do("FLUSHALL")
		dst.do("FLUSHALL")
		for _, c := range [][]string{{"RPUSH", "l", "a", "b", "1"}, {"SET", "s", "v", "PX", "100000"}, {"HSET", "h", "f", "v"},
			{"ZADD", "z", "1.5", "m"}, {"SET", "t", "tv"}} {
			src.do(c...)
		}
		for _, st := range steps(src, dst) {
			args, err := redisutil.SplitArgs(st.args)
			if err != nil {
				t.Fatal(err)
			}
			if got := src.do(args...); got != st.want {
				t.Fatalf("%s -> %s: %s:\n got %s\nwant %s", src.name, dst.name, st.args, got, st.want)
			}
		}
		for _, c := range []struct{ args, want string }{
			{"EXISTS l s h z t", "(integer) 2"}, // s (copied) and t (failed) stay
			{"LRANGE l 0 -1", "[]"},
		} {
			if got := src.do(strings.Fields(c.args)...); got != c.want {
				t.Fatalf("source %s: %s: got %s, want %s", src.name, c.args, got, c.want)
			}
		}
		for _, c := range []struct{ args, want string }{
			{"LRANGE l 0 -1", `["a", "b", "1"]`},
			{"HGETALL h", `["f", "v"]`},
			{"ZSCORE z m", `"1.5"`},
			// SELECT 99 failed, but the pipelined RESTORE ran in db 0.
			{"EXISTS t", "(integer) 1"},
		} {
			if got := dst.do(strings.Fields(c.args)...); got != c.want {
				t.Fatalf("target %s: %s: got %s, want %s", dst.name, c.args, got, c.want)
			}
		}
		dst.do("SELECT", "3")
		got := dst.do("PTTL", "s")
		if ms, err := strconv.Atoi(strings.TrimPrefix(got, "(integer) ")); err != nil || ms < 90000 || ms > 100000 {
			t.Fatalf("target %s: PTTL s in db 3: %s", dst.name, got)
		}
		dst.do("SELECT", "0")
	}
}
