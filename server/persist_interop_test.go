package server

import (
	"bufio"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/server/keyspace"
	"github.com/vigil-kv/vigil/server/rdb"
)

// startRedisIn starts redis-server 7.0 with dir (loading its dump.rdb).
func startRedisIn(t *testing.T, dir string) (net.Conn, *bufio.Reader) {
	t.Helper()
	if _, err := os.Stat(redisServerBin); err != nil {
		t.Skip("redis-server not installed: apt-get install -y redis-server redis-tools")
	}
	sock := filepath.Join(dir, "r.sock")
	cmd := exec.Command(redisServerBin, "--port", "0", "--unixsocket", sock, "--save", "", "--appendonly", "no",
		"--enable-debug-command", "yes", "--dir", dir, "--logfile", filepath.Join(dir, "redis.log"))
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.Dial("unix", sock)
		if err == nil {
			t.Cleanup(func() { c.Close() })
			br := bufio.NewReader(c)
			// Wait for the load to end: PING answers -LOADING meanwhile.
			for rawDo(t, c, br, "PING") != "+PONG\r\n" {
				if time.Now().After(deadline) {
					t.Fatal("redis-server still loading")
				}
				time.Sleep(10 * time.Millisecond)
			}
			return c, br
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "redis.log"))
			t.Fatalf("redis-server did not start: %v\n%s", err, log)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

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
	if _, err := os.Stat(redisServerBin); err != nil {
		t.Skip("redis-server not installed: apt-get install -y redis-server redis-tools")
	}
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
	sameDump(t, "redis-server's dataset", got, want)

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
}
