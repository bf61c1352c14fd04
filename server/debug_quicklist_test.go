package server

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/vigil-kv/vigil/configs"
)

// debugObjectStable drops DEBUG OBJECT's address and lru clock.
var debugObjectStable = regexp.MustCompile(`Value at:\S+ |lru:\d+ `)

// TestListCompressDepth: list-compress-depth is accepted by CONFIG SET
// (Redis's range and errors), CONFIG GET and a config file, and DEBUG
// OBJECT prints the quicklist fields as Redis 7.0.15 does (the figures
// below are redis-server's for the same commands).
func TestListCompressDepth(t *testing.T) {
	ts := newTestServer(t, "--enable-debug-command", "yes")
	c := ts.client()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"CONFIG", "GET", "list-compress-depth"}, "*2\r\n$19\r\nlist-compress-depth\r\n$1\r\n0\r\n"},
		{[]string{"CONFIG", "SET", "list-compress-depth", "-1"}, "-ERR CONFIG SET failed (possibly related to argument 'list-compress-depth') - argument must be between 0 and 2147483647 inclusive\r\n"},
		{[]string{"CONFIG", "SET", "list-compress-depth", "abc"}, "-ERR CONFIG SET failed (possibly related to argument 'list-compress-depth') - argument couldn't be parsed into an integer\r\n"},
		{[]string{"CONFIG", "SET", "list-compress-depth", "1"}, "+OK\r\n"},
		{[]string{"CONFIG", "GET", "list-compress-depth"}, "*2\r\n$19\r\nlist-compress-depth\r\n$1\r\n1\r\n"},
		{[]string{"RPUSH", "small", "a", "b", "c"}, ":3\r\n"},
		{[]string{"OBJECT", "ENCODING", "small"}, "$9\r\nquicklist\r\n"},
		{[]string{"DEBUG", "OBJECT", "small"}, "+refcount:1 encoding:quicklist serializedlength:19 lru_seconds_idle:0 ql_nodes:1 ql_avg_node:3.00 ql_listpack_max:-2 ql_compressed:1 ql_uncompressed_size:16\r\n"},
		{[]string{"CONFIG", "SET", "list-max-listpack-size", "5"}, "+OK\r\n"},
		{[]string{"RPUSH", "l2", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11"}, ":11\r\n"},
		{[]string{"DEBUG", "OBJECT", "l2"}, "+refcount:1 encoding:quicklist serializedlength:50 lru_seconds_idle:0 ql_nodes:3 ql_avg_node:3.67 ql_listpack_max:5 ql_compressed:1 ql_uncompressed_size:43\r\n"},
		{[]string{"CONFIG", "SET", "list-compress-depth", "0"}, "+OK\r\n"},
		{[]string{"CONFIG", "SET", "list-max-listpack-size", "-2"}, "+OK\r\n"},
		{[]string{"RPUSH", "l3", "a"}, ":1\r\n"},
		{[]string{"DEBUG", "OBJECT", "l3"}, "+refcount:1 encoding:quicklist serializedlength:13 lru_seconds_idle:0 ql_nodes:1 ql_avg_node:1.00 ql_listpack_max:-2 ql_compressed:0 ql_uncompressed_size:10\r\n"},
	} {
		got := debugObjectStable.ReplaceAllString(ts.do(c, tc.args...), "")
		if got != tc.want {
			t.Errorf("%q:\n got %q\nwant %q", tc.args, got, tc.want)
		}
	}
	// A 2000-element list over 7 nodes.
	args := []string{"RPUSH", "big"}
	for i := 0; i < 2000; i++ {
		args = append(args, "value-"+strings.Repeat("x", 1+i%3)+"-x")
	}
	ts.do(c, args...)
	if got := ts.do(c, "DEBUG", "OBJECT", "big"); !strings.Contains(got, " ql_nodes:") || !strings.Contains(got, " ql_avg_node:") {
		t.Errorf("DEBUG OBJECT big: %q", got)
	}

	// The config file.
	dir := t.TempDir()
	path := filepath.Join(dir, "vigil.conf")
	if err := os.WriteFile(path, []byte("list-compress-depth 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := configs.Load(configs.LoadOptions{ConfigFile: path})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ListCompressDepth != 3 {
		t.Fatalf("list-compress-depth from the file: %d", cfg.ListCompressDepth)
	}
	if _, err := configs.Load(configs.LoadOptions{Args: []string{"--list-compress-depth", "-1"}}); err == nil {
		t.Fatal("list-compress-depth -1 accepted at startup")
	}
}
