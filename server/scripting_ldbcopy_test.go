package server

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/testutil"
)

// A forked session's dataset is read from a snapshot while the server
// serves the others: with the copy held midway (ldbCopyStepHook), other
// clients' commands are answered, and the child sees the dataset as it
// was when the session started. A BGSAVE meanwhile starts at once (a
// debugging child is no active child): it finishes the copy under the
// lock and takes the snapshot; the session still gets the whole dataset.
func TestLuaDebuggerForkedCopyServesOthers(t *testing.T) {
	l := startLive(t, "--save", "")
	o := l.dial(t)
	mset := []string{"MSET"}
	for i := 0; i < 1000; i++ {
		mset = append(mset, fmt.Sprintf("k%d", i), "v")
	}
	if got := o.do(mset...); got != "+OK" {
		t.Fatalf("MSET: %s", got)
	}
	session := func(name string, meanwhile func()) {
		held, release := make(chan struct{}), make(chan struct{})
		first := true
		hook := func() {
			if first { // the copy's goroutine alone runs the hook
				first = false
				close(held)
				<-release
			}
		}
		ldbCopyStepHook.Store(&hook)
		defer ldbCopyStepHook.Store(nil)
		c := l.dial(t)
		if got := c.do("SCRIPT", "DEBUG", "YES"); got != "+OK" {
			t.Fatalf("%s: SCRIPT DEBUG: %s", name, got)
		}
		c.send("EVAL", "return redis.call('dbsize')", "0")
		select {
		case <-held:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the copy did not start", name)
		}
		// The copy is midway: the others are served.
		for _, step := range [][2]string{{"SET k0 changed", "+OK"}, {"DEL k1", "(integer) 1"}, {"SET new x", "+OK"}} {
			if got := o.do(strings.Fields(step[0])...); got != step[1] {
				t.Errorf("%s: %s during the copy: %s", name, step[0], got)
			}
		}
		meanwhile()
		close(release)
		if got := c.read(); !strings.Contains(got, "Stopped at 1") {
			t.Fatalf("%s: EVAL: %s", name, got)
		}
		want := [][2]string{
			{"r get k0", `[+<redis> get k0, +<reply> "v"]`},
			{"r exists k1 new", "[+<redis> exists k1 new, +<reply> 1]"},
			{"c", "[+<endsession>]"},
		}
		for _, w := range want {
			if got := c.do(strings.Fields(w[0])...); got != w[1] {
				t.Errorf("%s: %s: %s, want %s", name, w[0], got, w[1])
			}
		}
		if got := c.read(); got != "(integer) 1000" {
			t.Errorf("%s: the EVAL's reply: %s", name, got)
		}
		if !c.closed() {
			t.Errorf("%s: the session's connection is open", name)
		}
		if !testutil.PollUntil(10*time.Second, func() bool { return len(l.ldbChildPids()) == 0 }) {
			t.Fatalf("%s: children left: %v", name, l.ldbChildPids())
		}
		// Put the dataset back for the next session.
		o.do("SET", "k0", "v")
		o.do("SET", "k1", "v")
		o.do("DEL", "new")
	}
	session("copy", func() {})
	session("bgsave", func() {
		if got := o.do("BGSAVE"); got != "+Background saving started" {
			t.Errorf("BGSAVE during the copy: %s", got)
		}
	})
	if !testutil.PollUntil(10*time.Second, func() bool {
		return liveInfoField(t, o, "persistence", "rdb_bgsave_in_progress") == "0"
	}) {
		t.Fatal("the BGSAVE did not end")
	}
	if got := liveInfoField(t, o, "persistence", "rdb_last_bgsave_status"); got != "ok" {
		t.Errorf("rdb_last_bgsave_status: %s", got)
	}
	session("bgrewriteaof", func() {
		if got := o.do("BGREWRITEAOF"); got != "+Background append only file rewriting started" {
			t.Errorf("BGREWRITEAOF during the copy: %s", got)
		}
	})
	if !testutil.PollUntil(10*time.Second, func() bool {
		return liveInfoField(t, o, "persistence", "aof_rewrite_in_progress") == "0"
	}) {
		t.Fatal("the AOF rewrite did not end")
	}
	// Another snapshot running as the session starts: the dataset is
	// encoded at once, the hook never runs.
	l.s.mu.Lock()
	snap, err := l.s.ks.BeginSnapshot()
	l.s.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	c := l.dial(t)
	c.do("SCRIPT", "DEBUG", "YES")
	if got := c.do("EVAL", "return redis.call('dbsize')", "0"); !strings.Contains(got, "Stopped at 1") {
		t.Fatalf("EVAL with a snapshot running: %s", got)
	}
	c.do("c")
	if got := c.read(); got != "(integer) 1000" {
		t.Errorf("EVAL with a snapshot running: %s", got)
	}
	l.s.mu.Lock()
	snap.Close()
	l.s.mu.Unlock()
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	if l.s.ldbCopy != nil || l.s.ks.Snapshotting() {
		t.Error("a snapshot is left running")
	}
}
