package server

import (
	"os"
	"path/filepath"
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
		if !strings.Contains(string(b), "$"+itoa(int64(len(k)))+"\r\n"+k+"\r\n") {
			t.Fatalf("%s missing from the AOF:\n%q", k, b)
		}
	}
	if strings.Contains(string(b), "denied") {
		t.Fatalf("the denied write is in the AOF:\n%q", b)
	}
}
