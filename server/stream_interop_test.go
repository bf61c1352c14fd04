package server

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigil-kv/vigil/internal/testutil"
)

// TestStreamRDBInteropRedis (interop): streams with deleted entries,
// several nodes, consumer groups, consumers and pending entries built in
// redis-server 7.0.15 (its XGROUP, XREADGROUP, XACK, XCLAIM) go through
// DUMP / RESTORE here and back byte for byte (RDB type 19, Redis's
// nodes, deleted entries, groups and PELs); a dump.rdb this server SAVEs
// passes redis-check-rdb and loads in redis-server with the same DUMP
// payloads; redis-server's dump.rdb loads here with them too.
func TestStreamRDBInteropRedis(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server")
	}
	testutil.NeedRedis(t)
	dir := t.TempDir()
	rc, rbr := startRedisIn(t, dir)
	r := func(args ...string) string { t.Helper(); return rawDo(t, rc, rbr, args...) }
	r("CONFIG", "SET", "stream-node-max-entries", "4")
	for i, id := range []string{"1-1", "1-2", "2-0", "3-0", "3-5", "4-0", "5-0", "6-0", "7-0", "8-0", "9-0"} {
		if i%3 == 0 {
			r("XADD", "st", id, "f", "v"+id, "g", "12345")
		} else {
			r("XADD", "st", id, "other", strings.Repeat("x", i*7))
		}
	}
	r("XDEL", "st", "3-0", "4-0", "1-1")
	r("XGROUP", "CREATE", "st", "g1", "0")
	r("XGROUP", "CREATE", "st", "g2", "$", "ENTRIESREAD", "3")
	r("XREADGROUP", "GROUP", "g1", "alice", "COUNT", "3", "STREAMS", "st", ">")
	r("XREADGROUP", "GROUP", "g1", "bob", "COUNT", "2", "STREAMS", "st", ">")
	r("XACK", "st", "g1", "1-2")
	r("XCLAIM", "st", "g1", "carol", "0", "5-0", "RETRYCOUNT", "7")
	r("XGROUP", "CREATECONSUMER", "st", "g2", "idle")
	r("XADD", "empty", "5-5", "a", "b")
	r("XDEL", "empty", "5-5")
	r("XGROUP", "CREATE", "empty", "g", "$")
	r("XSETID", "empty", "9-9", "ENTRIESADDED", "12", "MAXDELETEDID", "5-5")

	ts := newTestServer(t, "--dir", dir)
	c := ts.client()
	for _, k := range []string{"st", "empty"} {
		p := bulkOf(t, r("DUMP", k))
		if got := ts.do(c, "RESTORE", k, "0", p); got != "+OK\r\n" {
			t.Fatalf("RESTORE %q of Redis's DUMP: %q", k, got)
		}
		if err := ts.s.ks.Check(); err != nil {
			t.Fatalf("after RESTORE %q: %v", k, err)
		}
		ours := bulkOf(t, ts.do(c, "DUMP", k))
		if ours != p {
			t.Errorf("%q: DUMP here differs from Redis's:\n ours %q\nredis %q", k, ours, p)
		}
		if got := r("RESTORE", k+"2", "0", ours); got != "+OK\r\n" {
			t.Fatalf("redis-server RESTORE %q of our DUMP: %q", k, got)
		}
		if d1, d2 := r("DEBUG", "DIGEST-VALUE", k), r("DEBUG", "DIGEST-VALUE", k+"2"); d1 != d2 {
			t.Errorf("%q: digest after the round trip %q, want %q", k, d2, d1)
		}
		for _, cmd := range [][]string{{"XRANGE", k, "-", "+"}, {"XLEN", k}} {
			if a, b := r(cmd...), ts.do(c, cmd...); a != b {
				t.Errorf("%v: vigil %q, redis %q", cmd, b, a)
			}
		}
	}
	// This server's dump.rdb in redis-server.
	ts.do(c, "XADD", "mine", "1-0", "a", "1")
	ts.do(c, "XADD", "mine", "2-0", "a", "2", "b", "3")
	ts.do(c, "XDEL", "mine", "1-0")
	want := map[string]string{}
	for _, k := range []string{"st", "empty", "mine"} {
		want[k] = bulkOf(t, ts.do(c, "DUMP", k))
	}
	if got := ts.do(c, "SAVE"); got != "+OK\r\n" {
		t.Fatalf("SAVE: %q", got)
	}
	if out, err := exec.Command("redis-check-rdb", filepath.Join(dir, "dump.rdb")).CombinedOutput(); err != nil || !strings.Contains(string(out), "RDB looks OK") {
		t.Fatalf("redis-check-rdb: %v\n%s", err, out)
	}
	sub := t.TempDir()
	b, err := os.ReadFile(filepath.Join(dir, "dump.rdb"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sub, "dump.rdb"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	rc2, rbr2 := startRedisIn(t, sub)
	for k, p := range want {
		if got := bulkOf(t, rawDo(t, rc2, rbr2, "DUMP", k)); got != p {
			t.Errorf("%q in redis-server after loading our dump.rdb: DUMP %q, want %q", k, got, p)
		}
	}
	// redis-server's dump.rdb here.
	if got := rawDo(t, rc2, rbr2, "SAVE"); got != "+OK\r\n" {
		t.Fatalf("redis-server SAVE: %q", got)
	}
	ts2 := newTestServer(t, "--dir", sub)
	if err := ts2.s.LoadDataFromDisk(); err != nil {
		t.Fatalf("loading redis-server's dump.rdb: %v", err)
	}
	c2 := ts2.client()
	for k, p := range want {
		if got := bulkOf(t, ts2.do(c2, "DUMP", k)); got != p {
			t.Errorf("%q loaded from redis-server's dump.rdb: DUMP %q, want %q", k, got, p)
		}
	}
	if err := ts2.s.ks.Check(); err != nil {
		t.Fatal(err)
	}
}
