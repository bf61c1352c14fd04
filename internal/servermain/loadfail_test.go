package servermain

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigil-kv/vigil/server/rdb"
)

// TestCorruptRDBAbortsStart is rdb.tcl's "Server should not start if RDB
// is corrupted" (external:skip): a dump.rdb whose checksum is wrong stops
// the start with exit 1, and the log ends as redis-server 7.0.15's does,
// with rdb.c's words (expected is the checksum computed, got the file's)
// and rdbReportCorruptRDB's "RDB CRC error" line. Vigil swapped the two
// sums, worded it "got: (...)", had no "RDB CRC error" line and then
// announced a shutdown ("User requested shutdown...", "bye bye"), as if
// one had been asked for; Redis exits at once.
func TestCorruptRDBAbortsStart(t *testing.T) {
	dir := t.TempDir()
	body := []byte("REDIS0009\xff")
	file := append(body, "foobar00"...)
	if err := os.WriteFile(filepath.Join(dir, "dump.rdb"), file, 0o644); err != nil {
		t.Fatal(err)
	}
	want := []string{
		fmt.Sprintf("Wrong RDB checksum expected: (%x) but got (%x). Aborting now.", rdb.CRC64(0, body), uint64(0x30307261626f6f66)),
		"Internal error in RDB reading offset 0, function at rdb.c:3225 -> RDB CRC error",
	}
	// redis-server's own log has these lines, if it is installed.
	if path, err := exec.LookPath("redis-server"); err == nil {
		out, _ := exec.Command(path, "--port", "0", "--unixsocket", filepath.Join(dir, "r.sock"), "--dir", dir, "--save", "").CombinedOutput()
		for _, w := range want {
			if !strings.Contains(string(out), "# "+w+"\n") {
				t.Errorf("redis-server's log lacks %q:\n%s", w, out)
			}
		}
	}
	// A unix socket, as redis-server's: with nothing to listen on, both
	// exit before loading ("Configured to not listen anywhere").
	code, stdout, _ := runQuick(t, nil, "--port", "0", "--unixsocket", filepath.Join(dir, "v.sock"), "--dir", dir, "--save", "")
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	msgs := logMessages(stdout)
	if len(msgs) < 2 || msgs[len(msgs)-2] != want[0] || msgs[len(msgs)-1] != want[1] {
		t.Errorf("log ends with %q, want %q", msgs[max(len(msgs)-4, 0):], want)
	}
}

// TestCorruptRDBValueAbortsStart is corrupt-dump.tcl's "load corrupted rdb
// with no CRC - #3505": a dump.rdb with a corrupt value (a hash ziplist
// whose entry length runs past its end) stops the start as
// rdbReportError does for rdbFileBeingLoaded: rdb.c's "Internal error in
// RDB reading offset 0, function at rdb.c:2275 -> Hash ziplist integrity
// check failed.", redis-check-rdb's trace of the file on stdout (which
// repeats that line), then "Terminating server after rdb file reading
// failure." and exit 1. Vigil logged the bare reason and exited.
func TestCorruptRDBValueAbortsStart(t *testing.T) {
	dir := t.TempDir()
	zl := "\x1b\x00\x00\x00\x16\x00\x00\x00\x04\x00\x00\x02\x61\x00\x04\x02\x62\x00\x04\x14\x63\x00\x04\x02\x64\x00\xff"
	file := "REDIS0009\xfe\x00\x0d\x01k\x1b" + zl + "\xff" + strings.Repeat("\x00", 8)
	if err := os.WriteFile(filepath.Join(dir, "dump.rdb"), []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	report := "Internal error in RDB reading offset 0, function at rdb.c:2275 -> Hash ziplist integrity check failed."
	last := "Terminating server after rdb file reading failure."
	if path, err := exec.LookPath("redis-server"); err == nil {
		out, _ := exec.Command(path, "--port", "0", "--unixsocket", filepath.Join(dir, "r.sock"), "--dir", dir, "--save", "").CombinedOutput()
		for _, w := range []string{"# " + report + "\n", "] " + report + "\n", "# " + last + "\n"} {
			if !strings.Contains(string(out), w) {
				t.Errorf("redis-server's output lacks %q:\n%s", w, out)
			}
		}
	}
	code, stdout, _ := runQuick(t, nil, "--port", "0", "--unixsocket", filepath.Join(dir, "v.sock"), "--dir", dir, "--save", "")
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	msgs := logMessages(stdout)
	if len(msgs) < 2 || msgs[len(msgs)-2] != report || msgs[len(msgs)-1] != last {
		t.Errorf("log ends with %q, want %q then %q", msgs[max(len(msgs)-4, 0):], report, last)
	}
	for _, w := range []string{"[offset 0] Checking RDB file dump.rdb\n", "--- RDB ERROR DETECTED ---\n", "] " + report + "\n"} {
		if !strings.Contains(stdout, w) {
			t.Errorf("stdout lacks the checker's %q:\n%s", w, stdout)
		}
	}
}

// logMessages returns the message of each log line in out, in order;
// lines that are not log lines (the checker's trace) are left out.
func logMessages(out string) []string {
	var msgs []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if e := logLine(line); e != nil {
			msgs = append(msgs, e["message"].(string))
		}
	}
	return msgs
}
