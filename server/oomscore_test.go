//go:build linux

package server

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/vigil-kv/vigil/internal/testutil"
)

// TestOOMScoreAdjVsRedis is oom-score-adj.tcl's cases on Vigil and on
// redis-server 7.0.15: CONFIG SET oom-score-adj / oom-score-adj-values set
// the process's oom_score_adj (relative to the score it had, per role,
// absolute, restored on "no"), and REPLICAOF moves it to the replica's
// class and back. Vigil ignored both directives. Vigil's score is written to
// a file standing for /proc/self/oom_score_adj (the test process's own must
// not move), which starts at redis-server's score.
func TestOOMScoreAdjVsRedis(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server")
	}
	if os.Geteuid() != 0 {
		t.Skip("lowering a process's oom_score_adj back needs root (CAP_SYS_RESOURCE)")
	}
	testutil.NeedRedis(t)
	r := testutil.StartRedis(t, testutil.RedisOptions{})
	l := startLive(t)
	c := r.Dial(t)
	t.Cleanup(func() { c.Close() })
	rc := &rconn{t: t, c: c, br: bufio.NewReader(c)}
	redisFile := "/proc/" + strconv.Itoa(r.Cmd.Process.Pid) + "/oom_score_adj"
	read := func(f string) string {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	base := read(redisFile)
	file := filepath.Join(t.TempDir(), "oom_score_adj")
	if err := os.WriteFile(file, []byte(base+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	oomState.Lock()
	old := oomScoreFile
	oomScoreFile = file
	oomState.Unlock()
	t.Cleanup(func() {
		oomState.Lock()
		oomScoreFile = old
		oomState.Unlock()
	})
	vc := l.dial(t)
	b, _ := strconv.Atoi(base)
	steps := [][]string{
		{"CONFIG", "SET", "oom-score-adj-values", "10 20 30"},
		{"CONFIG", "SET", "oom-score-adj", "yes"},
		{"CONFIG", "SET", "oom-score-adj-values", "15 20 30"},
		{"REPLICAOF", "localhost", "1"},
		{"REPLICAOF", "NO", "ONE"},
		{"CONFIG", "SET", "oom-score-adj", "no"},
		{"CONFIG", "SET", "oom-score-adj-values", "25 25 25"},
		{"CONFIG", "SET", "oom-score-adj-values", "9 9 9", "oom-score-adj", "yes"},
		{"CONFIG", "SET", "oom-score-adj", "absolute"},
		{"CONFIG", "SET", "oom-score-adj", "relative"},
		{"CONFIG", "SET", "oom-score-adj-values", "-2001 -2001 -2001"},
		{"CONFIG", "GET", "oom-score-adj-values"},
		{"CONFIG", "SET", "oom-score-adj", "no"},
	}
	want := []int{b, b + 10, b + 15, b + 20, b + 15, b, b, b + 9, 9, b + 9, b + 9, b + 9, b}
	for i, st := range steps {
		r, v := rc.do(st...), vc.do(st...)
		if r != v {
			t.Errorf("%q: vigil %q, redis %q", st, v, r)
		}
		rs, vs := read(redisFile), read(file)
		if rs != strconv.Itoa(want[i]) {
			t.Errorf("%q: redis-server's score %s, want %d", st, rs, want[i])
		}
		if vs != rs {
			t.Errorf("%q: vigil's score %s, redis-server's %s", st, vs, rs)
		}
	}
}
