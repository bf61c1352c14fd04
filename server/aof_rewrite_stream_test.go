package server

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/testutil"
	"github.com/vigil-kv/vigil/server/aof"
	"github.com/vigil-kv/vigil/server/keyspace"
)

// TestAOFRewriteStreamVsRedis: with aof-use-rdb-preamble no, a rewrite
// (BGREWRITEAOF, or one that appendonly yes starts) failed on any stream
// ("values of type stream can't be rewritten yet": dismiss-mem.tcl's
// "dismiss all data types memory" then loaded an empty AOF). A stream is
// now written as rewriteStreamObject writes it, and the base file is
// redis-server 7.0.15's byte for byte: XADDs with their IDs (XADD MAXLEN
// 0 of a dummy entry for an empty stream), XSETID with ENTRIESADDED and
// MAXDELETEDID, XGROUP CREATE ... ENTRIESREAD per group, an XCLAIM ...
// JUSTID FORCE per pending entry, XGROUP CREATECONSUMER for a consumer
// without one.
func TestAOFRewriteStreamVsRedis(t *testing.T) {
	script := [][]string{
		{"XADD", "s", "1-1", "a", "1", "b", "2"},
		{"XADD", "s", "2-1", "a", "3", "b", "4"},
		{"XADD", "s", "3-1", "c", "5"},
		{"XDEL", "s", "2-1"},
		{"XGROUP", "CREATE", "s", "g1", "0"},
		{"XGROUP", "CREATE", "s", "g0", "$"},
		{"XREADGROUP", "GROUP", "g1", "alice", "COUNT", "2", "STREAMS", "s", ">"},
		{"XCLAIM", "s", "g1", "bob", "0", "1-1", "TIME", "1600000000000", "RETRYCOUNT", "3"},
		{"XCLAIM", "s", "g1", "alice", "0", "3-1", "TIME", "1600000000001", "RETRYCOUNT", "1"},
		{"XGROUP", "CREATECONSUMER", "s", "g1", "carol"},
		{"XSETID", "s", "5-0"},
		{"XADD", "e", "MAXLEN", "0", "7-7", "x", "y"},
		{"XGROUP", "CREATE", "e", "eg", "$", "ENTRIESREAD", "3"},
	}
	r := testutil.StartRedis(t, testutil.RedisOptions{Args: []string{"--aof-use-rdb-preamble", "no"}})
	rc, rbr := redisDialer(t, r)(2)
	ts := newTestServer(t)
	vc := ts.client()
	for _, cmd := range script {
		want := rawDo(t, rc, rbr, cmd...)
		if got := ts.do(vc, cmd...); got != want {
			t.Fatalf("%v: vigil %q, redis %q", cmd, got, want)
		}
	}
	rawDo(t, rc, rbr, "BGREWRITEAOF")
	var base []byte
	for deadline := time.Now().Add(10 * time.Second); ; {
		files, _ := filepath.Glob(filepath.Join(r.Dir, "appendonlydir", "*.base.aof"))
		if len(files) == 1 && strings.Contains(rawDo(t, rc, rbr, "INFO", "persistence"), "aof_rewrite_in_progress:0") {
			b, err := os.ReadFile(files[0])
			if err != nil {
				t.Fatal(err)
			}
			base = b
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("redis-server's rewrite did not end")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The keys in either order: redis-server's follows its dict's seed.
	var got []string
	for _, order := range [][]string{{"e", "s"}, {"s", "e"}} {
		var buf bytes.Buffer
		w := aof.NewCommandBase(&buf)
		ts.s.mu.Lock()
		for _, k := range order {
			if err := w.WriteItem(keyspace.Item{DB: 0, Key: k, Value: ts.s.ks.DBs[0].Peek([]byte(k)).Value()}); err != nil {
				t.Fatal(err)
			}
		}
		ts.s.mu.Unlock()
		if err := w.Finish(); err != nil {
			t.Fatal(err)
		}
		if buf.String() == string(base) {
			return
		}
		got = append(got, buf.String())
	}
	t.Errorf("base file:\n%q\nredis-server's:\n%q", got, base)
}
