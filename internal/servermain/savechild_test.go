package servermain

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/testutil"
)

// Background saves run in a child process, as Redis's fork child
// (internal/savechild): the tests below run the same scenario against
// vigil-server and, when installed, redis-server 7.0, and check what an
// operator or Redis's test suite sees: the child in the process table
// (get_child_pid), its title, temp-<childpid>.rdb, INFO persistence, the
// log, and what killing the child or shutting down does.

// saveServers are vigil-server and, if installed, redis-server, each
// started with conf.
func saveServers(t *testing.T, conf string) map[string]*process {
	t.Helper()
	out := map[string]*process{"vigil": startProcess(t, conf)}
	if _, err := os.Stat(testutil.RedisBin); err == nil {
		p := newProcess(t)
		p.exe = testutil.RedisBin
		p.launch(t, conf)
		p.waitUp(t)
		out["redis"] = p
	} else {
		t.Logf("%s not installed: vigil-server only", testutil.RedisBin)
	}
	return out
}

// children lists the pids whose parent is pid (pgrep -P).
func children(pid int) []int {
	var out []int
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		for _, w := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(w); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// titledChild waits for a child of p whose title (its cmdline) starts with
// title and returns its pid. It looks at every child each time, so a
// transient other child (or none yet) does not stop it; on a timeout it
// reports what it last saw of each child.
func titledChild(t *testing.T, p *process, title string) int {
	t.Helper()
	pid, seen := 0, ""
	if !testutil.PollUntil(20*time.Second, func() bool {
		var b strings.Builder
		for _, k := range children(p.cmd.Process.Pid) {
			cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(k) + "/cmdline")
			if strings.HasPrefix(string(cmdline), title) {
				pid = k
				return true
			}
			stat, _ := os.ReadFile("/proc/" + strconv.Itoa(k) + "/stat")
			fmt.Fprintf(&b, "[%d: cmdline %q (%v), stat %q] ", k, cmdline, err, stat)
		}
		seen = b.String()
		return false
	}) {
		t.Fatalf("no child of %d titled %q...; children last seen: %s\nlog:\n%s", p.cmd.Process.Pid, title, seen, p.log())
	}
	return pid
}

// saveChild waits for the server's one child and returns its pid.
func saveChild(t *testing.T, p *process) int {
	t.Helper()
	var kids []int
	if !testutil.PollUntil(10*time.Second, func() bool {
		kids = children(p.cmd.Process.Pid)
		return len(kids) == 1
	}) {
		t.Fatalf("children of %d: %v, want one\nlog:\n%s", p.cmd.Process.Pid, kids, p.log())
	}
	return kids[0]
}

// infoField is one field of INFO persistence.
func infoField(t *testing.T, p *process, name string) string {
	t.Helper()
	info, err := p.do("INFO", "persistence")
	if err != nil {
		t.Fatalf("INFO: %v", err)
	}
	for _, l := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(l, name+":"); ok {
			return v
		}
	}
	t.Fatalf("no %s in INFO persistence", name)
	return ""
}

func waitInfo(t *testing.T, p *process, name, want string) {
	t.Helper()
	var got string
	if !testutil.PollUntil(15*time.Second, func() bool {
		got = infoField(t, p, name)
		return got == want
	}) {
		t.Fatalf("%s is %q, want %q\nlog:\n%s", name, got, want, p.log())
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// alive reports whether pid runs (not gone, not a zombie).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// TestBgsaveChildKilled: BGSAVE's child is in the process table titled
// redis-rdb-bgsave and writes temp-<childpid>.rdb; INFO reports the save
// in progress. Killed with SIGKILL, the save fails as Redis's does: "Background
// saving terminated by signal 9", rdb_last_bgsave_status:err, the temp file
// removed, writes refused with -MISCONF (save points are set); the next
// BGSAVE succeeds and clears it.
func TestBgsaveChildKilled(t *testing.T) {
	for name, p := range saveServers(t, "save 900 1\nrdb-key-save-delay 1000000\n") {
		t.Run(name, func(t *testing.T) {
			for i := range 5 {
				p.mustDo(t, "+OK\r\n", "SET", "k"+strconv.Itoa(i), "v")
			}
			p.mustDo(t, "+Background saving started\r\n", "BGSAVE")
			child := saveChild(t, p)
			tmp := filepath.Join(p.dir, "temp-"+strconv.Itoa(child)+".rdb")
			if !testutil.PollUntil(10*time.Second, func() bool { return exists(tmp) }) {
				t.Fatalf("no %s; dir has %v", tmp, dirNames(p.dir))
			}
			cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(child) + "/cmdline")
			if !strings.HasPrefix(string(cmdline), "redis-rdb-bgsave ") {
				t.Errorf("child's cmdline %q, want redis-rdb-bgsave ...", cmdline)
			}
			if got := infoField(t, p, "rdb_bgsave_in_progress"); got != "1" {
				t.Errorf("rdb_bgsave_in_progress:%s during the save", got)
			}
			if err := syscall.Kill(child, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			waitInfo(t, p, "rdb_bgsave_in_progress", "0")
			if got := infoField(t, p, "rdb_last_bgsave_status"); got != "err" {
				t.Errorf("rdb_last_bgsave_status:%s, want err", got)
			}
			if exists(tmp) {
				t.Errorf("%s left behind", tmp)
			}
			if !strings.Contains(p.log(), "Background saving terminated by signal 9") {
				t.Errorf("log lacks the signal line:\n%s", p.log())
			}
			if got, _ := p.do("SET", "x", "y"); !strings.HasPrefix(got, "-MISCONF ") {
				t.Errorf("SET after the failed save: %q, want -MISCONF", got)
			}
			p.mustDo(t, "+OK\r\n", "CONFIG", "SET", "rdb-key-save-delay", "0")
			p.mustDo(t, "+Background saving started\r\n", "BGSAVE")
			waitInfo(t, p, "rdb_last_bgsave_status", "ok")
			waitInfo(t, p, "rdb_bgsave_in_progress", "0")
			if !exists(filepath.Join(p.dir, "dump.rdb")) {
				t.Errorf("no dump.rdb after the second BGSAVE; dir has %v", dirNames(p.dir))
			}
			if !testutil.PollUntil(10*time.Second, func() bool { return len(children(p.cmd.Process.Pid)) == 0 }) {
				t.Errorf("children left: %v", children(p.cmd.Process.Pid))
			}
			p.mustDo(t, "+OK\r\n", "SET", "x", "y")
		})
	}
}

// TestShutdownKillsSaveChild: SHUTDOWN NOSAVE during a BGSAVE kills the
// child ("There is a child saving an .rdb. Killing it!") and removes its
// temp file; no dump.rdb is written, and the child's end is not logged.
func TestShutdownKillsSaveChild(t *testing.T) {
	for name, p := range saveServers(t, "save \"\"\nrdb-key-save-delay 1000000\n") {
		t.Run(name, func(t *testing.T) {
			p.mustDo(t, "+OK\r\n", "SET", "k", "v")
			p.mustDo(t, "+OK\r\n", "SET", "k2", "v")
			p.mustDo(t, "+Background saving started\r\n", "BGSAVE")
			child := saveChild(t, p)
			tmp := filepath.Join(p.dir, "temp-"+strconv.Itoa(child)+".rdb")
			if !testutil.PollUntil(10*time.Second, func() bool { return exists(tmp) }) {
				t.Fatalf("no %s; dir has %v", tmp, dirNames(p.dir))
			}
			_, _ = p.do("SHUTDOWN", "NOSAVE")
			done := make(chan struct{})
			go func() { _ = p.cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(15 * time.Second):
				t.Fatal("the server did not exit")
			}
			if exists(tmp) {
				t.Errorf("%s left behind", tmp)
			}
			if exists(filepath.Join(p.dir, "dump.rdb")) {
				t.Error("dump.rdb written")
			}
			if !strings.Contains(p.log(), "There is a child saving an .rdb. Killing it!") {
				t.Errorf("log lacks the kill line:\n%s", p.log())
			}
			// The process exits before reaping its child: no done line.
			if strings.Contains(p.log(), "Background saving terminated") {
				t.Errorf("log has the child's end:\n%s", p.log())
			}
			if !testutil.PollUntil(10*time.Second, func() bool { return !alive(child) }) {
				t.Errorf("the child %d still runs", child)
			}
		})
	}
}

func dirNames(dir string) []string {
	es, _ := os.ReadDir(dir)
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

// waitExit waits for the process to end and returns its exit code.
func waitExit(t *testing.T, p *process) int {
	t.Helper()
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		t.Fatalf("the server did not exit\nlog:\n%s", p.log())
	}
	return p.cmd.ProcessState.ExitCode()
}

// waitLog polls the log for text.
func waitLog(t *testing.T, p *process, text string) {
	t.Helper()
	if !testutil.PollUntil(10*time.Second, func() bool { return strings.Contains(p.log(), text) }) {
		t.Fatalf("log lacks %q:\n%s", text, p.log())
	}
}

// TestSignalShutdownThroughCron: a SIGTERM only schedules the shutdown
// (sigShutdownHandler's shutdown_asap); the cron performs it, so DEBUG
// PAUSE-CRON holds it and SHUTDOWN ABORT cancels it ("Shutdown manually
// aborted."), as shutdown.tcl's "SHUTDOWN ABORT can cancel SIGTERM". With
// nothing pending SHUTDOWN ABORT is an error; a later SIGTERM shuts down
// anew (exit 0). A second SIGINT while one is pending exits at once
// ("You insist... exiting now.", exit 1).
func TestSignalShutdownThroughCron(t *testing.T) {
	for name, p := range saveServers(t, "save \"\"\n") {
		t.Run(name+"/abort", func(t *testing.T) {
			p.mustDo(t, "+OK\r\n", "DEBUG", "PAUSE-CRON", "1")
			if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			waitLog(t, p, "Received SIGTERM scheduling shutdown...")
			p.mustDo(t, "+PONG\r\n", "PING")
			p.mustDo(t, "+OK\r\n", "SHUTDOWN", "ABORT")
			waitLog(t, p, "Shutdown manually aborted.")
			p.mustDo(t, "-ERR No shutdown in progress.\r\n", "SHUTDOWN", "ABORT")
			p.mustDo(t, "+OK\r\n", "DEBUG", "PAUSE-CRON", "0")
			p.mustDo(t, "+PONG\r\n", "PING")
			if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			if code := waitExit(t, p); code != 0 {
				t.Errorf("exit %d after the second SIGTERM, want 0\nlog:\n%s", code, p.log())
			}
			if strings.Contains(p.log(), "You insist") {
				t.Errorf("the aborted SIGTERM was still pending:\n%s", p.log())
			}
		})
	}
	for name, p := range saveServers(t, "save \"\"\n") {
		t.Run(name+"/insist", func(t *testing.T) {
			p.mustDo(t, "+OK\r\n", "DEBUG", "PAUSE-CRON", "1")
			if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			waitLog(t, p, "Received SIGINT scheduling shutdown...")
			p.mustDo(t, "+PONG\r\n", "PING")
			if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			if code := waitExit(t, p); code != 1 {
				t.Errorf("exit %d after the second SIGINT, want 1\nlog:\n%s", code, p.log())
			}
			if !strings.Contains(p.log(), "You insist... exiting now.") {
				t.Errorf("log lacks the insist line:\n%s", p.log())
			}
		})
	}
}

// TestSignalShutdownSaveFails: a signal's shutdown whose save fails keeps
// the server running ("Error trying to save the DB, can't exit.") and is
// cancelled (cancelShutdown): the next SIGINT schedules a new shutdown
// rather than forcing the exit, and once the save can succeed it exits 0.
func TestSignalShutdownSaveFails(t *testing.T) {
	for name, p := range saveServers(t, "save 900 1\n") {
		t.Run(name, func(t *testing.T) {
			p.mustDo(t, "+OK\r\n", "SET", "k", "v")
			dump := filepath.Join(p.dir, "dump.rdb")
			if err := os.Mkdir(dump, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			waitLog(t, p, "Error trying to save the DB, can't exit.")
			p.mustDo(t, "+PONG\r\n", "PING")
			if err := os.Remove(dump); err != nil {
				t.Fatal(err)
			}
			if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			if code := waitExit(t, p); code != 0 {
				t.Errorf("exit %d after the second SIGINT, want 0\nlog:\n%s", code, p.log())
			}
			if n := strings.Count(p.log(), "Received SIGINT scheduling shutdown..."); n != 2 {
				t.Errorf("%d scheduling lines, want 2:\n%s", n, p.log())
			}
			if !exists(dump) {
				t.Error("no dump.rdb after the second SIGINT")
			}
		})
	}
}

// oomScore reads a process's oom_score_adj.
func oomScore(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/oom_score_adj")
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestBgsaveChildOOMScore: with oom-score-adj yes the save child takes
// oom-score-adj-values' bgchild entry over the base score (redisFork's
// setOOMScoreAdj(CONFIG_OOM_BGCHILD)), the server keeping its master
// entry (0 over the base); raising a score needs no privilege.
func TestBgsaveChildOOMScore(t *testing.T) {
	for name, p := range saveServers(t, "save \"\"\noom-score-adj yes\noom-score-adj-values 0 200 800\nrdb-key-save-delay 1000000\n") {
		t.Run(name, func(t *testing.T) {
			p.mustDo(t, "+OK\r\n", "SET", "k", "v")
			p.mustDo(t, "+OK\r\n", "SET", "k2", "v")
			base := oomScore(t, p.cmd.Process.Pid)
			p.mustDo(t, "+Background saving started\r\n", "BGSAVE")
			child := saveChild(t, p)
			t.Cleanup(func() { _ = syscall.Kill(child, syscall.SIGKILL) })
			want := min(base+800, 1000)
			var got int
			if !testutil.PollUntil(10*time.Second, func() bool { got = oomScore(t, child); return got == want }) {
				t.Errorf("child's oom_score_adj %d, want %d (server's %d)\nlog:\n%s", got, want, base, p.log())
			}
			if got := oomScore(t, p.cmd.Process.Pid); got != base {
				t.Errorf("server's oom_score_adj %d, want %d", got, base)
			}
		})
	}
}
