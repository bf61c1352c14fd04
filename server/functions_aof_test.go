package server

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigil-kv/vigil/server/rdb"
)

// TestFunctionsAOFRewrite: libraries survive BGREWRITEAOF and a restart
// from the AOF, with an RDB base and with an AOF-format base (which starts
// with a FUNCTION LOAD per library, as rewriteFunctions writes it); a
// library loaded after the rewrite is replayed from the incremental file.
func TestFunctionsAOFRewrite(t *testing.T) {
	for _, preamble := range []string{"yes", "no"} {
		t.Run("preamble-"+preamble, func(t *testing.T) {
			dir := t.TempDir()
			l, stop := startLiveAOF(t, dir, "--aof-use-rdb-preamble", preamble)
			r := dialUnix(t, l.sock)
			if got := r.do("FUNCTION", "LOAD", interopLibs[0]); got != "$5\r\nshort\r\n" {
				t.Fatalf("FUNCTION LOAD: %q", got)
			}
			if got := r.do("FUNCTION", "LOAD", interopLibs[1]); got != "$4\r\nlong\r\n" {
				t.Fatalf("FUNCTION LOAD: %q", got)
			}
			r.do("FCALL", "lset", "1", "k", "v1")
			if got := r.do("BGREWRITEAOF"); got != "+Background append only file rewriting started\r\n" {
				t.Fatalf("BGREWRITEAOF: %q", got)
			}
			waitInfo(t, r, "aof_rewrites", "1")
			waitInfo(t, r, "aof_rewrite_in_progress", "0")
			r.do("FUNCTION", "LOAD", "#!lua name=after\nredis.register_function('aft', function() return 'after' end)")
			r.do("FUNCTION", "DELETE", "short")
			stop()
			base, _ := filepath.Glob(filepath.Join(dir, "appendonlydir", "*.base.*"))
			if len(base) != 1 {
				t.Fatalf("base files: %v", base)
			}
			b, err := os.ReadFile(base[0])
			if err != nil {
				t.Fatal(err)
			}
			if preamble == "no" && !strings.Contains(string(b), "*3\r\n$8\r\nFUNCTION\r\n$4\r\nLOAD\r\n$") {
				t.Fatalf("the AOF base has no FUNCTION LOAD: %.300q", b)
			}
			l2, _ := startLiveAOF(t, dir, "--aof-use-rdb-preamble", preamble)
			r2 := dialUnix(t, l2.sock)
			for _, tc := range []struct {
				args []string
				want string
			}{
				{[]string{"FCALL", "lecho", "0", "x"}, "*1\r\n$1\r\nx\r\n"},
				{[]string{"FCALL", "aft", "0"}, "$5\r\nafter\r\n"},
				{[]string{"FCALL", "sget", "1", "k"}, "-ERR Function not found\r\n"},
				{[]string{"GET", "k"}, "$2\r\nv1\r\n"},
			} {
				if got := r2.do(tc.args...); got != tc.want {
					t.Fatalf("after restart, %q: %q, want %q", tc.args, got, tc.want)
				}
			}
		})
	}
}

// TestFunctionsFullSyncPayload: the full-sync payload (the master's RDB
// writer with the replication options) carries the libraries, and the
// replica's load of it (loadRDB as repl_replica.go calls it) replaces the
// replica's own libraries with the master's (emptyData flushes functions).
func TestFunctionsFullSyncPayload(t *testing.T) {
	master, replica := newTestServer(t), newTestServer(t)
	mc, rc := master.client(), replica.client()
	master.do(mc, "FUNCTION", "LOAD", interopLibs[0])
	master.do(mc, "SET", "k", "v")
	replica.do(rc, "FUNCTION", "LOAD", "#!lua name=stale\nredis.register_function('old', function() return 1 end)")
	var buf bytes.Buffer
	master.s.mu.Lock()
	enc, err := rdb.NewEncoder(&buf, master.s.replEncodeOptions())
	if err == nil {
		err = enc.Finish()
	}
	master.s.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	replica.s.mu.Lock()
	_, _, err = replica.s.loadRDB(bufio.NewReader(&buf), true, false)
	replica.s.mu.Unlock()
	if err != nil {
		t.Fatalf("loading the payload: %v", err)
	}
	if got := replica.do(rc, "FCALL", "old", "0"); got != "-ERR Function not found\r\n" {
		t.Fatalf("the replica's own library after a full sync: %q", got)
	}
	if got := replica.do(rc, "FUNCTION", "LIST", "LIBRARYNAME", "short"); !strings.Contains(got, "sget") {
		t.Fatalf("the master's library on the replica: %q", got)
	}
}

// TestDebugLoadAOFFunctions: DEBUG LOADAOF empties the keys and the
// libraries (emptyData(-1, EMPTYDB_NO_FLAGS)) and loads them back from the
// AOF, on a read-only replica too (functions.tcl's "FUNCTION can processes
// create, delete and flush commands in AOF when doing "debug loadaof" in
// read-only slaves"). Vigil kept the libraries, so replaying the AOF's
// FUNCTION LOAD failed ("already exists": an unexpected error reply, which
// propagation-error-behavior panic, the Tcl suite's, turns into a crash).
func TestDebugLoadAOFFunctions(t *testing.T) {
	for _, preamble := range []string{"yes", "no"} {
		t.Run("preamble-"+preamble, func(t *testing.T) { testDebugLoadAOFFunctions(t, preamble) })
	}
}

func testDebugLoadAOFFunctions(t *testing.T, preamble string) {
	dir := t.TempDir()
	l, _ := startLiveAOF(t, dir, "--aof-use-rdb-preamble", preamble, "--enable-debug-command", "yes")
	r := dialUnix(t, l.sock)
	if got := r.do("BGREWRITEAOF"); got != "+Background append only file rewriting started\r\n" {
		t.Fatalf("BGREWRITEAOF: %q", got)
	}
	waitInfo(t, r, "aof_rewrite_in_progress", "0")
	lib := "#!lua name=test\nredis.register_function('test', function() return 'hello' end)"
	reload := func(what string) {
		t.Helper()
		r.do("REPLICAOF", "127.0.0.1", "0")
		if got := r.do("DEBUG", "LOADAOF"); got != "+OK\r\n" {
			t.Fatalf("%s: DEBUG LOADAOF: %q", what, got)
		}
		r.do("REPLICAOF", "NO", "ONE")
		if got := r.do("INFO", "stats"); !strings.Contains(got, "unexpected_error_replies:0\r\n") {
			t.Fatalf("%s: the AOF's replay failed a command: %s", what, got)
		}
	}
	listed := "*1\r\n*6\r\n$12\r\nlibrary_name\r\n$4\r\ntest\r\n"
	// The library in the incremental file.
	if got := r.do("FUNCTION", "LOAD", lib); got != "$4\r\ntest\r\n" {
		t.Fatalf("FUNCTION LOAD: %q", got)
	}
	reload("FUNCTION LOAD in the incr file")
	if got := r.do("FUNCTION", "LIST"); !strings.HasPrefix(got, listed) {
		t.Fatalf("FUNCTION LIST after LOAD and DEBUG LOADAOF: %q", got)
	}
	if got := r.do("FCALL", "test", "0"); got != "$5\r\nhello\r\n" {
		t.Fatalf("FCALL after DEBUG LOADAOF: %q", got)
	}
	r.do("FUNCTION", "DELETE", "test")
	reload("FUNCTION DELETE")
	if got := r.do("FUNCTION", "LIST"); got != "*0\r\n" {
		t.Fatalf("FUNCTION LIST after DELETE and DEBUG LOADAOF: %q", got)
	}
	r.do("FUNCTION", "LOAD", lib)
	r.do("FUNCTION", "FLUSH")
	reload("FUNCTION FLUSH")
	if got := r.do("FUNCTION", "LIST"); got != "*0\r\n" {
		t.Fatalf("FUNCTION LIST after FLUSH and DEBUG LOADAOF: %q", got)
	}
	// The library in the RDB base, the writes replayed on a read-only
	// replica.
	r.do("FUNCTION", "LOAD", lib)
	r.do("SET", "k1", "v1")
	r.do("BGREWRITEAOF")
	waitInfo(t, r, "aof_rewrite_in_progress", "0")
	reload("library in the base")
	if got := r.do("FCALL", "test", "0"); got != "$5\r\nhello\r\n" {
		t.Fatalf("FCALL after DEBUG LOADAOF of a base: %q", got)
	}
	if got := r.do("GET", "k1"); got != "$2\r\nv1\r\n" {
		t.Fatalf("GET after DEBUG LOADAOF on a replica: %q", got)
	}
}
