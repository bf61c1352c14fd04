package server

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// TestAOFTimestampAnnotations is aof.tcl's "Generate timestamp annotations
// in AOF" (external:skip): under aof-timestamp-enabled the incremental file
// gets a "#TS:<unix seconds>" line before a second's first command and a
// rewrite's AOF-format base starts with one (rewriteAppendOnlyFileRio);
// both load again. Vigil's bases had none.
func TestAOFTimestampAnnotations(t *testing.T) {
	dir := t.TempDir()
	pre := []string{"--aof-use-rdb-preamble", "no", "--aof-timestamp-enabled", "yes"}
	l, stop := startLiveAOF(t, dir, pre...)
	r := dialUnix(t, l.sock)
	r.do("SET", "foo", "bar")
	adir := filepath.Join(dir, "appendonlydir")
	ts := regexp.MustCompile(`^#TS:\d+\r\n`)
	incr, _ := os.ReadFile(filepath.Join(adir, "appendonly.aof.1.incr.aof"))
	if !ts.Match(incr) {
		t.Fatalf("the incremental file starts %q, want a #TS: line", incr)
	}
	if got := r.do("BGREWRITEAOF"); got != "+Background append only file rewriting started\r\n" {
		t.Fatalf("BGREWRITEAOF: %q", got)
	}
	waitInfo(t, r, "aof_rewrites", "1")
	waitInfo(t, r, "aof_rewrite_in_progress", "0")
	base, _ := os.ReadFile(filepath.Join(adir, "appendonly.aof.2.base.aof"))
	if !ts.Match(base) {
		t.Fatalf("the rewritten base starts %q, want a #TS: line", base)
	}
	want := dumpKeys(t, r)
	stop()
	l2, _ := startLiveAOF(t, dir, pre...)
	if got := dumpKeys(t, dialUnix(t, l2.sock)); got != want {
		t.Fatalf("after restart: %s", dumpDiff(got, want))
	}
}
