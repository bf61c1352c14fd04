package server

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestAOFWriteErrorMisconf: a failed AOF write (ENOSPC from /dev/full,
// which fails even as root) denies writes and PING with Redis's -MISCONF
// text and sets aof_last_write_status:err; reads go on. Once writes
// work again the kept buffer is written, the error clears and the
// command that hit the error is in the AOF.
func TestAOFWriteErrorMisconf(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no /dev/full: %v", err)
	}
	defer full.Close()
	dir := t.TempDir()
	// appendfsync no: with always a write error is fatal (as in Redis), with
	// everysec the write may be postponed behind a background fsync.
	l, _ := startLiveAOF(t, dir, "--appendfsync", "no")
	r := dialUnix(t, l.sock)
	if got := r.do("SET", "before", "1"); got != "+OK\r\n" {
		t.Fatal(got)
	}
	l.s.mu.Lock()
	good := l.s.aof.mgr.W.SwapFileForFault(full)
	l.s.mu.Unlock()
	// The write that fails was executed and answered (Redis writes the
	// AOF in beforeSleep, after the command ran).
	if got := r.do("SET", "failed", "1"); got != "+OK\r\n" {
		t.Fatal(got)
	}
	const want = "-MISCONF Errors writing to the AOF file: No space left on device\r\n"
	if got := r.do("SET", "denied", "1"); got != want {
		t.Fatalf("write during error: %q", got)
	}
	if got := r.do("PING"); got != want {
		t.Fatalf("PING during error: %q", got)
	}
	if got := r.do("GET", "before"); got != "$1\r\n1\r\n" {
		t.Fatalf("read during error: %q", got)
	}
	if !strings.Contains(r.do("INFO", "persistence"), "aof_last_write_status:err\r\n") {
		t.Fatal("aof_last_write_status is not err")
	}
	// The disk is back: the retry (serverCron) writes the buffer and
	// writes are accepted again.
	l.s.mu.Lock()
	l.s.aof.mgr.W.SwapFileForFault(good)
	l.s.mu.Unlock()
	waitInfo(t, r, "aof_last_write_status", "ok")
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := r.do("SET", "after", "1")
		if got == "+OK\r\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("writes still denied: %q", got)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := r.do("PING"); got != "+PONG\r\n" {
		t.Fatal(got)
	}
	r.do("CONFIG", "SET", "appendfsync", "always")
	r.do("SET", "sync", "1")
	b, err := os.ReadFile(filepath.Join(dir, "appendonlydir", "appendonly.aof.1.incr.aof"))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"before", "failed", "after"} {
		if !strings.Contains(string(b), "$"+strconv.Itoa(len(k))+"\r\n"+k+"\r\n") {
			t.Fatalf("%s missing from the AOF:\n%q", k, b)
		}
	}
	if strings.Contains(string(b), "denied") {
		t.Fatalf("the denied write is in the AOF:\n%q", b)
	}
}

// TestDebugLoadAOF: DEBUG LOADAOF replaces the dataset with what the AOF
// (base + incremental file) holds: a key written while propagation was
// off, so only in memory, is gone. The AOF is unchanged (neither the
// reloaded commands nor DEBUG LOADAOF itself are appended) and dirty is
// reset.
func TestDebugLoadAOF(t *testing.T) {
	for _, preamble := range []string{"no", "yes"} {
		t.Run("preamble-"+preamble, func(t *testing.T) {
			dir := t.TempDir()
			l, _ := startLiveAOF(t, dir, "--aof-use-rdb-preamble", preamble, "--enable-debug-command", "yes")
			r := dialUnix(t, l.sock)
			r.do("SET", "base", "1")
			r.do("RPUSH", "l", "a", "b")
			if got := r.do("BGREWRITEAOF"); !strings.HasPrefix(got, "+Background") {
				t.Fatal(got)
			}
			waitInfo(t, r, "aof_rewrites", "1")
			waitInfo(t, r, "aof_rewrite_in_progress", "0")
			r.do("SET", "incr", "2")
			r.do("SELECT", "3")
			r.do("SET", "in3", "3")
			r.do("SELECT", "0")
			want := dumpKeys(t, r)
			// A key that is not in the AOF: only in memory.
			l.s.mu.Lock()
			props := l.s.props
			l.s.props = nil
			l.s.mu.Unlock()
			r.do("SET", "memonly", "x")
			l.s.mu.Lock()
			l.s.props = props
			l.s.mu.Unlock()
			incr := filepath.Join(dir, "appendonlydir", "appendonly.aof.2.incr.aof")
			before, _ := os.ReadFile(incr)
			if got := r.do("DEBUG", "LOADAOF"); got != "+OK\r\n" {
				t.Fatalf("DEBUG LOADAOF: %q", got)
			}
			if got := r.do("EXISTS", "memonly"); got != ":0\r\n" {
				t.Fatalf("memonly survived: %q", got)
			}
			if got := dumpKeys(t, r); got != want {
				t.Fatalf("after DEBUG LOADAOF: %s", dumpDiff(got, want))
			}
			after, _ := os.ReadFile(incr)
			if string(after) != string(before) {
				t.Fatalf("the reload was appended to the AOF:\nbefore %q\nafter  %q", before, after)
			}
			if !strings.Contains(r.do("INFO", "persistence"), "rdb_changes_since_last_save:0\r\n") {
				t.Fatal("dirty not reset")
			}
			// Writes after the reload go on being appended.
			r.do("SET", "later", "1")
			after, _ = os.ReadFile(incr)
			if !strings.Contains(string(after), "later") {
				t.Fatalf("write after reload not appended: %q", after)
			}
		})
	}
}
