package server

import (
	"bufio"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigil-kv/vigil/internal/testutil"
)

// interopLibs are two libraries: a short one and one long enough for its
// code to be LZF-compressed in RDB files and DUMP payloads.
var interopLibs = []string{
	"#!lua name=short\nredis.register_function{function_name='sget', callback=function(keys) return redis.call('get', keys[1]) end, flags={'no-writes'}, description='reads'}",
	"#!lua name=long\n" + strings.Repeat("-- padding padding padding padding\n", 20) +
		"redis.register_function('lset', function(keys, args) return redis.call('set', keys[1], args[1]) end)\n" +
		"redis.register_function('lecho', function(keys, args) return args end)",
}

func fnListBoth(t *testing.T, ts *testServer, c *Client, rc net.Conn, rbr *bufio.Reader) (vigil, redis string) {
	t.Helper()
	return fnListCanonicalSorted(t, ts.do(c, "FUNCTION", "LIST", "WITHCODE")), fnListCanonicalSorted(t, rawDo(t, rc, rbr, "FUNCTION", "LIST", "WITHCODE"))
}

// fnListCanonicalSorted is fnListCanonical with the libraries sorted too.
func fnListCanonicalSorted(t *testing.T, raw string) string {
	t.Helper()
	v := parseReply(t, fnListCanonicalRaw(t, raw))
	parts := make([]string, len(v.Elems))
	for i, e := range v.Elems {
		parts[i] = renderValue(e)
	}
	sortStrings(parts)
	return strings.Join(parts, "\n")
}

// TestFunctionsRDBInterop (interop): libraries saved here load in
// redis-server 7.0 (redis-check-rdb accepts the file) and the reverse;
// FUNCTION DUMP payloads restore both ways; a one-library DUMP is the same
// bytes on both; SAVE + DEBUG RELOAD and a restart keep the libraries.
func TestFunctionsRDBInterop(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server")
	}
	testutil.NeedRedis(t)
	dir := t.TempDir()
	ts := newTestServer(t, "--dir", dir, "--enable-debug-command", "yes")
	c := ts.client()
	for _, l := range interopLibs {
		if got := ts.do(c, "FUNCTION", "LOAD", l); !strings.HasPrefix(got, "$") {
			t.Fatalf("FUNCTION LOAD: %q", got)
		}
	}
	ts.do(c, "SET", "k", "v")
	if got := ts.do(c, "SAVE"); got != "+OK\r\n" {
		t.Fatalf("SAVE: %q", got)
	}
	if out, err := exec.Command("redis-check-rdb", filepath.Join(dir, "dump.rdb")).CombinedOutput(); err != nil || !strings.Contains(string(out), "RDB looks OK") {
		t.Fatalf("redis-check-rdb: %v\n%s", err, out)
	}

	// SAVE + DEBUG RELOAD here.
	if got := ts.do(c, "DEBUG", "RELOAD"); got != "+OK\r\n" {
		t.Fatalf("DEBUG RELOAD: %q", got)
	}
	if got := ts.do(c, "FCALL", "sget", "1", "k"); got != "$1\r\nv\r\n" {
		t.Fatalf("FCALL after DEBUG RELOAD: %q", got)
	}
	if got := ts.do(c, "FCALL", "lecho", "0", "a"); got != "*1\r\n$1\r\na\r\n" {
		t.Fatalf("FCALL after DEBUG RELOAD: %q", got)
	}

	// Our dump.rdb in redis-server.
	rc, rbr := startRedisIn(t, dir)
	if v, r := fnListBoth(t, ts, c, rc, rbr); v != r {
		t.Fatalf("libraries loaded by redis-server from our RDB:\n redis: %s\n vigil: %s", r, v)
	}
	if got := rawDo(t, rc, rbr, "FCALL", "sget", "1", "k"); got != "$1\r\nv\r\n" {
		t.Fatalf("redis-server FCALL of a library from our RDB: %q", got)
	}

	// DUMP / RESTORE both ways.
	theirs := bulkOf(t, rawDo(t, rc, rbr, "FUNCTION", "DUMP"))
	if got := ts.do(c, "FUNCTION", "RESTORE", theirs); got != "-ERR Library short already exists\r\n" && got != "-ERR Library long already exists\r\n" {
		t.Fatalf("RESTORE (APPEND) of existing libraries: %q", got)
	}
	if got := ts.do(c, "FUNCTION", "RESTORE", theirs, "FLUSH"); got != "+OK\r\n" {
		t.Fatalf("RESTORE FLUSH of redis-server's DUMP: %q", got)
	}
	if v, r := fnListBoth(t, ts, c, rc, rbr); v != r {
		t.Fatalf("libraries restored from redis-server's DUMP:\n redis: %s\n vigil: %s", r, v)
	}
	ours := bulkOf(t, ts.do(c, "FUNCTION", "DUMP"))
	if got := rawDo(t, rc, rbr, "FUNCTION", "RESTORE", ours, "REPLACE"); got != "+OK\r\n" {
		t.Fatalf("redis-server RESTORE REPLACE of our DUMP: %q", got)
	}
	if v, r := fnListBoth(t, ts, c, rc, rbr); v != r {
		t.Fatalf("libraries after redis-server restored our DUMP:\n redis: %s\n vigil: %s", r, v)
	}
	// One library: the same payload bytes (compressed code included).
	rawDo(t, rc, rbr, "FUNCTION", "DELETE", "short")
	ts.do(c, "FUNCTION", "DELETE", "short")
	theirs = bulkOf(t, rawDo(t, rc, rbr, "FUNCTION", "DUMP"))
	ours = bulkOf(t, ts.do(c, "FUNCTION", "DUMP"))
	if theirs != ours {
		t.Fatalf("FUNCTION DUMP of one library:\n redis: %q\n vigil: %q", theirs, ours)
	}

	// redis-server's dump.rdb with functions loads here at startup.
	rawDo(t, rc, rbr, "FUNCTION", "LOAD", interopLibs[0])
	if r := rawDo(t, rc, rbr, "SAVE"); r != "+OK\r\n" {
		t.Fatalf("redis-server SAVE: %q", r)
	}
	ts2 := newTestServer(t, "--dir", dir)
	if err := ts2.s.LoadDataFromDisk(); err != nil {
		t.Fatalf("loading redis-server's dump.rdb: %v", err)
	}
	c2 := ts2.client()
	if v, r := fnListBoth(t, ts2, c2, rc, rbr); v != r {
		t.Fatalf("libraries loaded here from redis-server's RDB:\n redis: %s\n vigil: %s", r, v)
	}
	if got := ts2.do(c2, "FCALL", "lset", "1", "k2", "x"); got != "+OK\r\n" {
		t.Fatalf("FCALL of a library from redis-server's RDB: %q", got)
	}
	if got := ts2.do(c2, "INFO", "memory"); !strings.Contains(got, "number_of_functions:3\r\n") || !strings.Contains(got, "number_of_libraries:2\r\n") {
		t.Fatalf("INFO memory: %q", got)
	}
}
