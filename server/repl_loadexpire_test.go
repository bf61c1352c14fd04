package server

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/clock"
	"github.com/vigil-kv/vigil/internal/testutil"
)

// TestStartupLoadFeedsExpiredDels is psync2-master-restart.tcl's "Partial
// resync after Master restart using RDB aux fields with expire": a master
// that loads its RDB at start-up puts a DEL for each key it finds expired
// in its backlog (RDBFLAGS_FEED_REPL), rebased on the RDB's repl-offset,
// so that a replica resuming at that offset deletes them too; a node
// started as a replica keeps them (its master expires them). The RDB is
// redis-server's; both servers load a copy and are compared.
func TestStartupLoadFeedsExpiredDels(t *testing.T) {
	testutil.NeedRedis(t)
	// The RDB: a backlog (a replica's PSYNC), keys expiring at once in
	// several databases, a SAVE.
	src := testutil.StartRedis(t, testutil.RedisOptions{Args: []string{"--enable-debug-command", "yes",
		"--repl-diskless-sync-delay", "0", "--repl-ping-replica-period", "3600"}})
	sc := src.Dial(t)
	t.Cleanup(func() { sc.Close() })
	s := &rconn{t: t, c: sc, br: bufio.NewReader(sc)}
	rc := src.Dial(t)
	t.Cleanup(func() { rc.Close() })
	rep := &rconn{t: t, c: rc, br: bufio.NewReader(rc)}
	rep.send("PSYNC", "?", "-1")
	if line, _ := rep.br.ReadString('\n'); !strings.HasPrefix(line, "+FULLRESYNC") {
		t.Fatalf("PSYNC: %q", line)
	}
	s.do("DEBUG", "SET-ACTIVE-EXPIRE", "0")
	for j := 0; j < 20; j++ {
		s.do("SELECT", strconv.Itoa(j%4))
		s.do("SET", "k"+strconv.Itoa(j), "v", "PX", "10")
	}
	s.do("SELECT", "0")
	s.do("SET", "kept", "v")
	// Until the keys expired (10 ms; active expiry is off), on the
	// server's clock (TIME), without touching them.
	serverMs := func() int64 {
		v := s.do("TIME") // ["sec", "usec"]
		f := strings.FieldsFunc(v, func(r rune) bool { return r < '0' || r > '9' })
		return mustInt(f[0])*1000 + mustInt(f[1])/1000
	}
	t0 := serverMs()
	testutil.Poll(t, 5*time.Second, "the keys to expire", func() bool { return serverMs() > t0+20 })
	// The full sync's save child (the PSYNC above) must be done: SAVE
	// refuses to run beside it.
	testutil.Poll(t, 5*time.Second, "the sync's save child to finish", func() bool {
		return liveInfoField(t, s, "persistence", "rdb_bgsave_in_progress") == "0"
	})
	if got := s.do("SAVE"); got != "+OK" {
		t.Fatal(got)
	}
	id := liveInfoField(t, s, "replication", "master_replid")
	off, _ := strconv.ParseInt(liveInfoField(t, s, "replication", "master_repl_offset"), 10, 64)
	dump, err := os.ReadFile(filepath.Join(src.Dir, "dump.rdb"))
	if err != nil {
		t.Fatal(err)
	}
	withRDB := func() string {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "dump.rdb"), dump, 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	scenario := func(dial func() *rconn) []string {
		c := dial()
		info := func(section, f string) string { return liveInfoField(t, c, section, f) }
		histlen, _ := strconv.ParseInt(info("replication", "repl_backlog_histlen"), 10, 64)
		out := []string{
			"expired " + info("persistence", "rdb_last_load_keys_expired"),
			"replid2 is the RDB's " + strconv.FormatBool(info("replication", "master_replid2") == id),
			"second_repl_offset-off " + strconv.FormatInt(mustInt(info("replication", "second_repl_offset"))-off, 10),
			"first_byte-off " + strconv.FormatInt(mustInt(info("replication", "repl_backlog_first_byte_offset"))-off, 10),
			"master_repl_offset-off-histlen " + strconv.FormatInt(mustInt(info("replication", "master_repl_offset"))-off-histlen, 10),
			"histlen>0 " + strconv.FormatBool(histlen > 0),
		}
		// A replica resuming at the RDB's offset gets the DELs.
		r := dial()
		out = append(out, r.do("REPLCONF", "capa", "psync2"))
		r.send("PSYNC", id, strconv.FormatInt(off+1, 10))
		line, _ := r.br.ReadString('\n')
		out = append(out, strings.Fields(line)[0])
		stream := make([]byte, histlen)
		r.c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.ReadFull(r.br, stream); err != nil {
			t.Fatal(err)
		}
		out = append(out, strconv.Quote(string(stream)))
		return out
	}
	redisNode := func(args ...string) func() *rconn {
		rs := testutil.StartRedis(t, testutil.RedisOptions{Dir: withRDB(), WaitLoaded: true, Args: args})
		return func() *rconn {
			return rawConn(t, rs.Dial(t))
		}
	}
	// Vigil's test server runs on a fake clock: it is moved to now before
	// the load, so that the keys are expired for it too.
	vigilNode := func(args ...string) func() *rconn {
		l := startLiveAfter(t, func(s *Server) {
			fc := s.clock.(*clock.Fake)
			fc.Advance(time.Since(fc.Now()))
		}, append([]string{"--dir", withRDB()}, args...)...)
		return func() *rconn { return l.dial(t) }
	}
	redis := scenario(redisNode())
	vigil := scenario(vigilNode())
	want := []string{"expired 20", "replid2 is the RDB's true", "second_repl_offset-off 1", "first_byte-off 1",
		"master_repl_offset-off-histlen 0", "histlen>0 true", "+OK", "+CONTINUE"}
	sameAsRedis(t, "master restart with expired keys", redis[:len(want)], vigil[:len(want)], want)
	if redis[len(want)] != vigil[len(want)] {
		t.Errorf("the stream after the RDB's offset:\nredis %s\nvigil %s", redis[len(want)], vigil[len(want)])
	}
	// A replica keeps them.
	replica := func(dial func() *rconn) []string {
		c := dial()
		return []string{"expired " + liveInfoField(t, c, "persistence", "rdb_last_load_keys_expired"), c.do("SELECT", "1"), c.do("DBSIZE")}
	}
	sameAsRedis(t, "replica start with expired keys", replica(redisNode("--replicaof", "127.0.0.1", "1")),
		replica(vigilNode("--replicaof", "127.0.0.1", "1")), []string{"expired 0", "+OK", "(integer) 5"})
}

func mustInt(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}
