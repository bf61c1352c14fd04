package servermain

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/testutil"
)

// Redis 7.0.15's multi-part AOF (aof.c) as integration/aof-multi-part.tcl
// checks it, run against vigil-server and, when installed, redis-server
// with the same steps: manifest contents, the files in appendonlydir and
// the log lines.

// aofDir is the server's appendonlydir.
func aofDir(p *process) string { return filepath.Join(p.dir, "appendonlydir") }

func readManifest(p *process) string {
	b, _ := os.ReadFile(filepath.Join(aofDir(p), "appendonly.aof.manifest"))
	return string(b)
}

// waitRewriteDone waits for a BGREWRITEAOF to end (successfully).
func waitRewriteDone(t *testing.T, p *process) {
	t.Helper()
	if !testutil.PollUntil(15*time.Second, func() bool {
		return infoField(t, p, "aof_rewrite_in_progress") == "0" && infoField(t, p, "aof_rewrite_scheduled") == "0"
	}) {
		t.Fatalf("the rewrite did not end\nlog:\n%s", p.log())
	}
	if got := infoField(t, p, "aof_last_bgrewrite_status"); got != "ok" {
		t.Fatalf("aof_last_bgrewrite_status:%s\nlog:\n%s", got, p.log())
	}
}

// waitDirFiles polls until appendonlydir holds exactly want (sorted):
// Redis unlinks history and temp files in its bio thread.
func waitDirFiles(t *testing.T, p *process, want ...string) {
	t.Helper()
	slices.Sort(want)
	var got []string
	if !testutil.PollUntil(10*time.Second, func() bool {
		got = dirNames(aofDir(p))
		return slices.Equal(got, want)
	}) {
		t.Fatalf("appendonlydir has %v, want %v", got, want)
	}
}

// TestAOFDisableAutoGC is aof-multi-part.tcl's "AOF enable/disable auto
// gc": with aof-disable-auto-gc yes rewrites keep the old bases and incr
// files, listed as history (type h) in the order markRewrittenIncrAofAs-
// History and getNewBaseFileNameAndMarkPreAsHistory give; setting it back
// to no deletes them at once (updateAofAutoGCEnabled -> aofDelHistoryFiles).
func TestAOFDisableAutoGC(t *testing.T) {
	for name, p := range saveServers(t, "appendonly yes\nsave \"\"\n") {
		t.Run(name, func(t *testing.T) {
			p.mustDo(t, "+OK\r\n", "SET", "k1", "v1")
			p.mustDo(t, "+OK\r\n", "CONFIG", "SET", "aof-disable-auto-gc", "yes")
			p.mustDo(t, "+Background append only file rewriting started\r\n", "BGREWRITEAOF")
			waitRewriteDone(t, p)
			p.mustDo(t, "+OK\r\n", "SET", "k2", "v2")
			p.mustDo(t, "+Background append only file rewriting started\r\n", "BGREWRITEAOF")
			waitRewriteDone(t, p)
			want := "file appendonly.aof.3.base.rdb seq 3 type b\n" +
				"file appendonly.aof.2.incr.aof seq 2 type h\n" +
				"file appendonly.aof.2.base.rdb seq 2 type h\n" +
				"file appendonly.aof.1.incr.aof seq 1 type h\n" +
				"file appendonly.aof.1.base.rdb seq 1 type h\n" +
				"file appendonly.aof.3.incr.aof seq 3 type i\n"
			if got := readManifest(p); got != want {
				t.Fatalf("manifest:\n%s\nwant\n%s", got, want)
			}
			waitDirFiles(t, p, "appendonly.aof.1.base.rdb", "appendonly.aof.2.base.rdb", "appendonly.aof.3.base.rdb",
				"appendonly.aof.1.incr.aof", "appendonly.aof.2.incr.aof", "appendonly.aof.3.incr.aof", "appendonly.aof.manifest")
			if strings.Contains(p.log(), "Removing the history file") {
				t.Fatalf("history removed with aof-disable-auto-gc yes:\n%s", p.log())
			}
			// DEBUG LOADAOF keeps them too (aofDelHistoryFiles is a no-op).
			p.mustDo(t, "+OK\r\n", "DEBUG", "LOADAOF")
			if got := readManifest(p); got != want {
				t.Fatalf("manifest after DEBUG LOADAOF:\n%s\nwant\n%s", got, want)
			}

			p.mustDo(t, "+OK\r\n", "CONFIG", "SET", "aof-disable-auto-gc", "no")
			want = "file appendonly.aof.3.base.rdb seq 3 type b\nfile appendonly.aof.3.incr.aof seq 3 type i\n"
			if got := readManifest(p); got != want {
				t.Fatalf("manifest after gc:\n%s\nwant\n%s", got, want)
			}
			waitDirFiles(t, p, "appendonly.aof.3.base.rdb", "appendonly.aof.3.incr.aof", "appendonly.aof.manifest")
			for _, f := range []string{"appendonly.aof.2.incr.aof", "appendonly.aof.2.base.rdb", "appendonly.aof.1.incr.aof", "appendonly.aof.1.base.rdb"} {
				if !strings.Contains(p.log(), "Removing the history file "+f+" in the background") {
					t.Errorf("log lacks the removal of %s", f)
				}
			}
			p.mustDo(t, "+OK\r\n", "DEBUG", "LOADAOF")
			p.mustDo(t, "v2", "GET", "k2")
		})
	}
}

// TestAOFEnableTempIncr is aof-multi-part.tcl's "AOF will open a
// temporary INCR AOF to accumulate data until the first AOFRW success
// when AOF is dynamically enabled": CONFIG SET appendonly yes writes the
// commands of its first rewrite to temp-appendonly.aof.incr (no manifest
// yet); a killed rewrite removes it ("Removing the temp incr aof file")
// and the cron starts another that begins it empty; the successful one
// renames it to appendonly.aof.1.incr.aof and writes the manifest.
func TestAOFEnableTempIncr(t *testing.T) {
	for name, p := range saveServers(t, "appendonly no\nappendfsync always\nsave \"\"\n") {
		t.Run(name, func(t *testing.T) {
			for _, k := range []string{"a", "b", "c", "d"} {
				p.mustDo(t, "+OK\r\n", "SET", k, "v")
			}
			p.mustDo(t, "+OK\r\n", "CONFIG", "SET", "rdb-key-save-delay", "1000000")
			p.mustDo(t, "+OK\r\n", "CONFIG", "SET", "appendonly", "yes")
			if got := infoField(t, p, "aof_rewrite_in_progress"); got != "1" {
				t.Fatalf("aof_rewrite_in_progress:%s after CONFIG SET appendonly yes", got)
			}
			temp := filepath.Join(aofDir(p), "temp-appendonly.aof.incr")
			waitLog(t, p, "Creating AOF incr file temp-appendonly.aof.incr on background rewrite")
			p.mustDo(t, "+OK\r\n", "SET", "during1", "x")
			want := "*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*3\r\n$3\r\nSET\r\n$7\r\nduring1\r\n$1\r\nx\r\n"
			if got, _ := os.ReadFile(temp); string(got) != want {
				t.Fatalf("temp incr %q, want %q", got, want)
			}
			if exists(filepath.Join(aofDir(p), "appendonly.aof.manifest")) {
				t.Fatal("manifest written before the first rewrite ended")
			}

			// A killed rewrite removes the temporary incr file; the
			// cron starts the next one, which opens it again, empty.
			child := saveChild(t, p)
			if err := syscall.Kill(child, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			waitLog(t, p, "Removing the temp incr aof file temp-appendonly.aof.incr in the background")
			if !testutil.PollUntil(15*time.Second, func() bool {
				return infoField(t, p, "aof_rewrite_in_progress") == "1" && len(children(p.cmd.Process.Pid)) == 1 &&
					children(p.cmd.Process.Pid)[0] != child
			}) {
				t.Fatalf("no second rewrite\nlog:\n%s", p.log())
			}
			if exists(filepath.Join(aofDir(p), "appendonly.aof.manifest")) || exists(filepath.Join(aofDir(p), "appendonly.aof.1.base.rdb")) {
				t.Fatalf("manifest or base after a failed first rewrite: %v", dirNames(aofDir(p)))
			}
			if got, err := os.ReadFile(temp); err != nil || len(got) != 0 {
				t.Fatalf("the new temp incr holds %q (%v)", got, err)
			}
			p.mustDo(t, "+OK\r\n", "SET", "during2", "y")
			want = "*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*3\r\n$3\r\nSET\r\n$7\r\nduring2\r\n$1\r\ny\r\n"
			if got, _ := os.ReadFile(temp); string(got) != want {
				t.Fatalf("temp incr %q, want %q", got, want)
			}

			// Killed again; the third attempt runs without the delay.
			p.mustDo(t, "+OK\r\n", "CONFIG", "SET", "rdb-key-save-delay", "0")
			child = saveChild(t, p)
			if err := syscall.Kill(child, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			wantMan := "file appendonly.aof.1.base.rdb seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n"
			if !testutil.PollUntil(15*time.Second, func() bool {
				return readManifest(p) == wantMan && infoField(t, p, "aof_rewrite_in_progress") == "0"
			}) {
				t.Fatalf("manifest %q\nlog:\n%s", readManifest(p), p.log())
			}
			waitLog(t, p, "Successfully renamed the temporary AOF incr file temp-appendonly.aof.incr into appendonly.aof.1.incr.aof")
			if n := strings.Count(p.log(), "Removing the temp incr aof file"); n != 2 {
				t.Errorf("%d temp incr removals, want 2\nlog:\n%s", n, p.log())
			}
			waitDirFiles(t, p, "appendonly.aof.1.base.rdb", "appendonly.aof.1.incr.aof", "appendonly.aof.manifest")
			if got := infoField(t, p, "aof_last_bgrewrite_status"); got != "ok" {
				t.Errorf("aof_last_bgrewrite_status:%s", got)
			}
			p.mustDo(t, "+OK\r\n", "SET", "after", "z")
			incr, _ := os.ReadFile(filepath.Join(aofDir(p), "appendonly.aof.1.incr.aof"))
			want = "*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*3\r\n$3\r\nSET\r\n$5\r\nafter\r\n$1\r\nz\r\n"
			if string(incr) != want {
				t.Errorf("incr %q, want %q", incr, want)
			}
			p.mustDo(t, "+OK\r\n", "DEBUG", "LOADAOF")
			p.mustDo(t, ":7\r\n", "DBSIZE")
			p.mustDo(t, "y", "GET", "during2")
		})
	}
}

// TestAOFEnableScheduledThenDisabled: CONFIG SET appendonly yes during a
// BGSAVE only schedules the first rewrite (AOF_WAIT_REWRITE with no file
// open); CONFIG SET appendonly no before it starts cancels it
// (stopAppendOnly clears aof_rewrite_scheduled), so no rewrite follows
// the BGSAVE and no appendonlydir is made.
func TestAOFEnableScheduledThenDisabled(t *testing.T) {
	for name, p := range saveServers(t, "appendonly no\nsave \"\"\nrdb-key-save-delay 1000000\n") {
		t.Run(name, func(t *testing.T) {
			p.mustDo(t, "+OK\r\n", "SET", "k", "v")
			p.mustDo(t, "+Background saving started\r\n", "BGSAVE")
			p.mustDo(t, "+OK\r\n", "CONFIG", "SET", "appendonly", "yes")
			waitLog(t, p, "AOF was enabled but there is already another background operation. An AOF background was scheduled to start when possible.")
			if got := infoField(t, p, "aof_rewrite_scheduled"); got != "1" {
				t.Fatalf("aof_rewrite_scheduled:%s", got)
			}
			if got := infoField(t, p, "aof_enabled"); got != "1" {
				t.Fatalf("aof_enabled:%s while waiting for the first rewrite", got)
			}
			p.mustDo(t, "+OK\r\n", "CONFIG", "SET", "appendonly", "no")
			if got := infoField(t, p, "aof_rewrite_scheduled"); got != "0" {
				t.Fatalf("aof_rewrite_scheduled:%s after appendonly no", got)
			}
			p.mustDo(t, "+OK\r\n", "CONFIG", "SET", "rdb-key-save-delay", "0")
			waitInfo(t, p, "rdb_bgsave_in_progress", "0")
			if got := infoField(t, p, "aof_rewrites"); got != "0" {
				t.Fatalf("aof_rewrites:%s", got)
			}
		})
	}
}

// TestShutdownDuringInitialAOFRewrite: prepareForShutdown refuses to exit
// while the AOF waits for its first rewrite ("Writing initial AOF, can't
// exit.": the dataset would be lost); with FORCE it logs "Writing initial
// AOF. Exit anyway." and kills the rewrite child.
func TestShutdownDuringInitialAOFRewrite(t *testing.T) {
	for name, p := range saveServers(t, "appendonly no\nsave \"\"\nrdb-key-save-delay 1000000\n") {
		t.Run(name, func(t *testing.T) {
			p.mustDo(t, "+OK\r\n", "SET", "k", "v")
			p.mustDo(t, "+OK\r\n", "CONFIG", "SET", "appendonly", "yes")
			child := saveChild(t, p)
			p.mustDo(t, "-ERR Errors trying to SHUTDOWN. Check logs.\r\n", "SHUTDOWN")
			waitLog(t, p, "Writing initial AOF, can't exit.")
			if got := infoField(t, p, "aof_rewrite_in_progress"); got != "1" {
				t.Fatalf("aof_rewrite_in_progress:%s after the refused SHUTDOWN", got)
			}
			_, _ = p.do("SHUTDOWN", "NOSAVE", "FORCE")
			if code := waitExit(t, p); code != 0 {
				t.Fatalf("exit code %d\nlog:\n%s", code, p.log())
			}
			for _, l := range []string{"Writing initial AOF. Exit anyway.", "There is a child rewriting the AOF. Killing it!"} {
				if !strings.Contains(p.log(), l) {
					t.Errorf("log lacks %q:\n%s", l, p.log())
				}
			}
			if !testutil.PollUntil(10*time.Second, func() bool { return !alive(child) }) {
				t.Errorf("the child %d still runs", child)
			}
		})
	}
}

// TestStartupDeletesAOFHistoryWhenOff: main calls aofDelHistoryFiles after
// loading whatever appendonly says, so history files a manifest lists
// (left by aof-disable-auto-gc) are deleted at start with the AOF off too.
func TestStartupDeletesAOFHistoryWhenOff(t *testing.T) {
	servers := map[string]*process{"vigil": newProcess(t)}
	if _, err := os.Stat(testutil.RedisBin); err == nil {
		p := newProcess(t)
		p.exe = testutil.RedisBin
		servers["redis"] = p
	}
	for name, p := range servers {
		t.Run(name, func(t *testing.T) {
			dir := aofDir(p)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			set := "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n"
			for f, data := range map[string]string{
				"appendonly.aof.1.base.aof": set, "appendonly.aof.1.incr.aof": "", "appendonly.aof.2.base.aof": set,
				"appendonly.aof.2.incr.aof": "",
				"appendonly.aof.manifest": "file appendonly.aof.2.base.aof seq 2 type b\n" +
					"file appendonly.aof.1.incr.aof seq 1 type h\nfile appendonly.aof.1.base.aof seq 1 type h\n" +
					"file appendonly.aof.2.incr.aof seq 2 type i\n",
			} {
				if err := os.WriteFile(filepath.Join(dir, f), []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			p.launch(t, "appendonly no\nsave \"\"\n")
			p.waitUp(t)
			want := "file appendonly.aof.2.base.aof seq 2 type b\nfile appendonly.aof.2.incr.aof seq 2 type i\n"
			if got := readManifest(p); got != want {
				t.Fatalf("manifest %q, want %q\nlog:\n%s", got, want, p.log())
			}
			waitDirFiles(t, p, "appendonly.aof.2.base.aof", "appendonly.aof.2.incr.aof", "appendonly.aof.manifest")
			waitLog(t, p, "Removing the history file appendonly.aof.1.base.aof in the background")
		})
	}
}
