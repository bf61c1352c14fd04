package server

import (
	"bufio"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/vigil-kv/vigil/internal/testutil"
	"github.com/vigil-kv/vigil/server/keyspace"
	"github.com/vigil-kv/vigil/server/rdb"
)

// bulkOf extracts a bulk string reply's bytes.
func bulkOf(t *testing.T, raw string) string {
	t.Helper()
	i := strings.Index(raw, "\r\n")
	if !strings.HasPrefix(raw, "$") || i < 0 {
		t.Fatalf("not a bulk reply: %.100q", raw)
	}
	return raw[i+2 : len(raw)-2]
}

// TestRDBInteropRedis (interop): the dump.rdb SAVE writes passes
// redis-check-rdb and loads in redis-server 7.0 with the same contents
// (compared key by key through Redis's DUMP); DUMP payloads go from
// redis-server to RESTORE here and back unchanged.
func TestRDBInteropRedis(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server")
	}
	testutil.NeedRedis(t)
	dir := t.TempDir()
	ts := newTestServer(t, "--dir", dir)
	c := ts.client()
	populate(ts, c)
	// Absolute TTLs in the future of the real clock too.
	ts.do(c, "SET", "t", "v", "PXAT", "4102444800000")
	ts.do(c, "PEXPIREAT", "h", "4102444801000")
	want := keyspaceDump(ts)
	if got := ts.do(c, "SAVE"); got != "+OK\r\n" {
		t.Fatalf("SAVE: %q", got)
	}
	if out, err := exec.Command("redis-check-rdb", filepath.Join(dir, "dump.rdb")).CombinedOutput(); err != nil || !strings.Contains(string(out), "RDB looks OK") {
		t.Fatalf("redis-check-rdb: %v\n%s", err, out)
	}
	rc, rbr := startRedisIn(t, dir)
	sameDump(t, "redis-server's dataset", redisDataset(t, rc, rbr), want)

	// DUMP from redis-server, RESTORE here, DUMP here, RESTORE there.
	rawDo(t, rc, rbr, "SELECT", "0")
	for _, k := range []string{"s", "int", "big", "l", "bl", "iset", "set", "bs", "h", "bh", "z", "bz", "\x00bin\xff\r\n"} {
		rawDo(t, rc, rbr, "PERSIST", k) // DIGEST-VALUE mixes in the TTL
		p := bulkOf(t, rawDo(t, rc, rbr, "DUMP", k))
		ts.do(c, "DEL", k)
		if r := ts.do(c, "RESTORE", k, "0", p); r != "+OK\r\n" {
			t.Fatalf("RESTORE %q of Redis's DUMP: %q", k, r)
		}
		ours := bulkOf(t, ts.do(c, "DUMP", k))
		if r := rawDo(t, rc, rbr, "RESTORE", k+"2", "0", ours); r != "+OK\r\n" {
			t.Fatalf("redis-server RESTORE %q of our DUMP: %q", k, r)
		}
		d1 := rawDo(t, rc, rbr, "DEBUG", "DIGEST-VALUE", k)
		d2 := rawDo(t, rc, rbr, "DEBUG", "DIGEST-VALUE", k+"2")
		if d1 != d2 {
			t.Errorf("%q: digest after the round trip %q, want %q", k, d2, d1)
		}
	}

	// redis-server's own dump.rdb loads here at startup with its contents.
	rawDo(t, rc, rbr, "PEXPIREAT", "bl", "4102444802000")
	if r := rawDo(t, rc, rbr, "SAVE"); r != "+OK\r\n" {
		t.Fatalf("redis-server SAVE: %q", r)
	}
	theirs := redisDataset(t, rc, rbr)
	ts2 := newTestServer(t, "--dir", dir)
	if err := ts2.s.LoadDataFromDisk(); err != nil {
		t.Fatalf("loading redis-server's dump.rdb: %v", err)
	}
	sameDump(t, "redis-server's dump.rdb loaded here", keyspaceDump(ts2), theirs)
}

// redisDataset reads every key of redis-server in keyspaceDump's form.
func redisDataset(t *testing.T, rc net.Conn, rbr *bufio.Reader) map[string]string {
	t.Helper()
	got := map[string]string{}
	for db := range 16 {
		rawDo(t, rc, rbr, "SELECT", strconv.Itoa(db))
		keys := rawDo(t, rc, rbr, "KEYS", "*")
		br := bufio.NewReader(strings.NewReader(keys))
		var n int
		line, _ := br.ReadString('\n')
		n, _ = strconv.Atoi(strings.TrimSpace(line[1:]))
		for range n {
			hdr, _ := br.ReadString('\n')
			l, _ := strconv.Atoi(strings.TrimSpace(hdr[1:]))
			b := make([]byte, l+2)
			if _, err := io.ReadFull(br, b); err != nil {
				t.Fatal(err)
			}
			key := string(b[:l])
			p := bulkOf(t, rawDo(t, rc, rbr, "DUMP", key))
			v, err := rdb.ParsePayload([]byte(p), keyspace.DefaultEncodingConfig())
			if err != nil {
				t.Fatalf("Redis's DUMP of %q: %v", key, err)
			}
			at := rawDo(t, rc, rbr, "PEXPIRETIME", key)
			ms, _ := strconv.ParseInt(strings.TrimSpace(at[1:]), 10, 64)
			if ms < 0 {
				ms = 0
			}
			got[strconv.Itoa(db)+":"+key] = canon(v) + "|" + strconv.FormatInt(ms, 10)
		}
	}
	rawDo(t, rc, rbr, "SELECT", "0")
	return got
}
