package server

import (
	"bufio"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

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

// migratePeer is one server of TestMigrateSocketCache: do runs a command
// and renders its reply, port is where MIGRATE reaches it.
type migratePeer struct {
	name string
	do   func(args ...string) string
	port string
}

func redisMigratePeer(t *testing.T, r *testutil.Redis) migratePeer {
	c := r.Dial(t)
	br := bufio.NewReader(c)
	return migratePeer{"redis", func(args ...string) string {
		t.Helper()
		return renderValue(parseReply(t, rawDo(t, c, br, args...)))
	}, strconv.Itoa(r.Port)}
}

// info is the field of INFO section as p answers it.
func (p migratePeer) info(t *testing.T, section, field string) string {
	t.Helper()
	s, err := strconv.Unquote(p.do("INFO", section))
	if err != nil {
		t.Fatalf("%s: INFO %s: %v", p.name, section, err)
	}
	for _, line := range strings.Split(s, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return v
		}
	}
	return ""
}

// others are the ids and dbs of p's normal clients other than the test's
// own connection: the connections MIGRATE opened to it.
func (p migratePeer) others(t *testing.T) (ids, dbs []string) {
	t.Helper()
	self := strings.TrimPrefix(p.do("CLIENT", "ID"), "(integer) ")
	list, err := strconv.Unquote(p.do("CLIENT", "LIST", "TYPE", "normal"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(list), "\n") {
		var id, db string
		for _, f := range strings.Fields(line) {
			if v, ok := strings.CutPrefix(f, "id="); ok {
				id = v
			} else if v, ok := strings.CutPrefix(f, "db="); ok {
				db = v
			}
		}
		if id != self {
			ids, dbs = append(ids, id), append(dbs, db)
		}
	}
	return ids, dbs
}

// TestMigrateSocketCache (interop): MIGRATE keeps its connection to a
// target for the next MIGRATE, as redis-server 7.0.15 does, with either
// server as the source and the other as the target, requiring the same
// replies: one connection for several MIGRATEs (the target's CLIENT
// LIST), SELECT sent only when the db changes (the target's
// cmdstat_select) and again after a target error, a connection the target
// closed replaced without an error, a dead target's IOERR and the
// reconnection once it is back (and a retry on the dead cached socket
// when it came back in between), INFO migrate_cached_sockets throughout,
// and (Vigil, on its fake clock) the idle socket closed by the cron once
// unused for more than 10 s.
func TestMigrateSocketCache(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server")
	}
	testutil.NeedRedis(t)
	l, vaddr := startLiveTCP(t)
	vc := l.dial(t)
	vigil := migratePeer{"vigil", vc.do, vaddr[strings.LastIndexByte(vaddr, ':')+1:]}
	redis := redisMigratePeer(t, testutil.StartRedis(t, testutil.RedisOptions{TCP: true}))

	selects := func(p migratePeer) string {
		v := p.info(t, "commandstats", "cmdstat_select")
		v, _, _ = strings.Cut(strings.TrimPrefix(v, "calls="), ",")
		return v
	}
	for _, pair := range [][2]migratePeer{{vigil, redis}, {redis, vigil}} {
		src, dst := pair[0], pair[1]
		what := src.name + " -> " + dst.name
		m := func(want, key, db string, opts ...string) {
			t.Helper()
			args := append([]string{"MIGRATE", "127.0.0.1", dst.port, key, db, "5000"}, opts...)
			if got := src.do(args...); got != want {
				t.Fatalf("%s: %q: got %s, want %s", what, args, got, want)
			}
		}
		check := func(wantID, wantDB, wantSelects string) string {
			t.Helper()
			ids, dbs := dst.others(t)
			if len(ids) != 1 || (wantID != "" && ids[0] != wantID) || dbs[0] != wantDB {
				t.Fatalf("%s: target's MIGRATE connections %v in dbs %v, want one (id %q) in db %s", what, ids, dbs, wantID, wantDB)
			}
			if got := selects(dst); got != wantSelects {
				t.Fatalf("%s: target ran SELECT %s times, want %s", what, got, wantSelects)
			}
			if got := src.info(t, "stats", "migrate_cached_sockets"); got != "1" {
				t.Fatalf("%s: migrate_cached_sockets %s, want 1", what, got)
			}
			return ids[0]
		}
		src.do("FLUSHALL")
		dst.do("FLUSHALL")
		dst.do("CONFIG", "RESETSTAT")
		src.do("MSET", "a", "1", "b", "2", "c", "3", "d", "4")
		m("+OK", "a", "0")
		id := check("", "0", "1")
		m("+OK", "b", "0", "COPY")
		check(id, "0", "1")
		m("+OK", "b", "1")
		check(id, "1", "2")
		m("+OK", "c", "1", "COPY")
		check(id, "1", "2")
		// A target error: the db is no longer trusted, SELECT again.
		m("-ERR Target instance replied with error: BUSYKEY Target key name already exists.", "c", "1")
		check(id, "1", "2")
		m("+OK", "c", "1", "REPLACE")
		check(id, "1", "3")
		// The target closes the connection: the next MIGRATE's read fails
		// before anything was processed, and it retries on a new one.
		if got := dst.do("CLIENT", "KILL", "ID", id); got != "(integer) 1" {
			t.Fatalf("%s: CLIENT KILL ID %s: %s", what, id, got)
		}
		m("+OK", "d", "1")
		if check("", "1", "4") == id {
			t.Fatalf("%s: the killed connection is still listed", what)
		}
		dst.do("SELECT", "1")
		if got := dst.do("DBSIZE"); got != "(integer) 3" {
			t.Fatalf("%s: target db 1 DBSIZE %s", what, got)
		}
		dst.do("SELECT", "0")
	}

	// Idle: the cron closes the socket once unused for more than 10 s
	// (server.unixtime - last_use_time > MIGRATE_SOCKET_CACHE_TTL).
	l.clk.Advance(10 * time.Second)
	l.s.mu.Lock()
	l.s.setNow()
	l.s.migrateCron()
	n := len(l.s.migrateSockets)
	l.s.mu.Unlock()
	if n != 1 {
		t.Fatalf("closed after 10 s idle: %d cached", n)
	}
	l.clk.Advance(time.Second)
	if !testutil.PollUntil(10*time.Second, func() bool {
		ids, _ := redis.others(t)
		return vigil.info(t, "stats", "migrate_cached_sockets") == "0" && len(ids) == 0
	}) {
		t.Fatalf("not closed after 11 s idle: migrate_cached_sockets %s",
			vigil.info(t, "stats", "migrate_cached_sockets"))
	}

	// A dead target, with either server as the source: a redis-server
	// killed and started again on the same port.
	port := strconv.Itoa(testutil.FreePort(t))
	var target *exec.Cmd
	start := func() {
		target = exec.Command(testutil.RedisBin, "--port", port, "--bind", "127.0.0.1", "--save", "",
			"--appendonly", "no", "--dir", t.TempDir())
		if err := target.Start(); err != nil {
			t.Fatal(err)
		}
		cmd := target
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		if !testutil.PollUntil(10*time.Second, func() bool {
			c, err := net.Dial("tcp", "127.0.0.1:"+port)
			if err == nil {
				c.Close()
			}
			return err == nil
		}) {
			t.Fatal("redis-server did not start")
		}
	}
	kill := func() {
		target.Process.Kill()
		target.Wait()
	}
	start()
	for _, src := range []migratePeer{vigil, redis} {
		src.do("FLUSHALL")
		src.do("SET", "k", "v")
		// redis-server still holds its socket to Vigil from above.
		base, _ := strconv.Atoi(src.info(t, "stats", "migrate_cached_sockets"))
		for _, st := range []struct {
			do, want string
			cached   int
		}{
			{"", "+OK", 1},
			{"kill", "-IOERR error or timeout writing to target instance", 0},
			{"start", "+OK", 1},
			// Killed and back: the cached socket's read fails, retried.
			{"restart", "+OK", 1},
		} {
			switch st.do {
			case "kill":
				kill()
			case "start":
				start()
			case "restart":
				kill()
				start()
			}
			if got := src.do("MIGRATE", "127.0.0.1", port, "k", "0", "5000", "COPY", "REPLACE"); got != st.want {
				t.Fatalf("%s, %s target: got %s, want %s", src.name, st.do, got, st.want)
			}
			if got := src.info(t, "stats", "migrate_cached_sockets"); got != strconv.Itoa(base+st.cached) {
				t.Fatalf("%s, %s target: migrate_cached_sockets %s, want %d", src.name, st.do, got, base+st.cached)
			}
		}
		tc, err := net.Dial("tcp", "127.0.0.1:"+port)
		if err != nil {
			t.Fatal(err)
		}
		tbr := bufio.NewReader(tc)
		list := parseReply(t, rawDo(t, tc, tbr, "CLIENT", "LIST")).Str
		tc.Close()
		if n := strings.Count(list, "\n"); n != 2 {
			t.Fatalf("%s: restarted target has %d clients, want this one and MIGRATE's:\n%s", src.name, n, list)
		}
	}
}
