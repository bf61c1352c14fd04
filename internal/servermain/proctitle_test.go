package servermain

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// cmdline is /proc/PID/cmdline as ps reads it: the title up to its NULs.
func cmdline(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	return string(bytes.TrimRight(b, "\x00"))
}

// TestProcTitle: vigil-server's process title is proc-title-template
// expanded ("{title} {listen-addr} {server-mode}": the executable and
// 127.0.0.1:port), and CONFIG SET proc-title-template changes it, a title
// longer than the arguments included (other.tcl's "Process title set as
// expected", whose template this is); an invalid template gets
// redis-server 7.0.15's error.
func TestProcTitle(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc/PID/cmdline")
	}
	p := startProcess(t, "")
	pid := p.cmd.Process.Pid
	addr := "127.0.0.1:" + strconv.Itoa(p.port)
	if got, want := cmdline(t, pid), os.Args[0]+" "+addr; got != want {
		t.Fatalf("title at start: %q, want %q", got, want)
	}
	// other.tcl's template, and the executable again to go past the
	// arguments of startProcess (long test paths).
	tmpl := "TEST {title} {listen-addr} {port} {tls-port} {unixsocket} {config-file} {title}"
	if got, err := p.do("CONFIG", "SET", "proc-title-template", tmpl); got != "+OK\r\n" || err != nil {
		t.Fatalf("CONFIG SET proc-title-template: %q %v", got, err)
	}
	want := "TEST " + os.Args[0] + " " + addr + " " + strconv.Itoa(p.port) + " 0  " + filepath.Join(p.dir, "vigil.conf") + " " + os.Args[0]
	want = want[:min(len(want), 255)] // SPT_MAXTITLE
	if got := cmdline(t, pid); got != want {
		t.Fatalf("title after CONFIG SET:\n got %q\nwant %q", got, want)
	}
	// startProcess's arguments: the title goes past them, over the
	// environment strings that followed them, as setproctitle's.
	if argv := len(os.Args[0]) + len(filepath.Join(p.dir, "vigil.conf")) + len("--logfile") + len(filepath.Join(p.dir, "log")) + 4; len(want) <= argv {
		t.Fatalf("the title (%d bytes) should be longer than the arguments (%d)", len(want), argv)
	}
	for _, bad := range []string{"{invalid-var}", "{title", "{", " ", "{server-mode}"} {
		got, _ := p.do("CONFIG", "SET", "proc-title-template", bad)
		if want := "-ERR CONFIG SET failed (possibly related to argument 'proc-title-template') - template format is invalid or contains unknown variables\r\n"; got != want {
			t.Errorf("CONFIG SET proc-title-template %q: %q", bad, got)
		}
	}
	if got := cmdline(t, pid); got != want {
		t.Fatalf("a refused template changed the title: %q", got)
	}
	if got, err := p.do("CONFIG", "SET", "proc-title-template", "x"); got != "+OK\r\n" || err != nil {
		t.Fatalf("CONFIG SET proc-title-template x: %q %v", got, err)
	}
	// setproctitle's mark: a title shorter than argv[0] leaves a '.'
	// where argv[0] ended (ps shows "x     .", as redis-server's).
	if got, want := cmdline(t, pid), "x"+strings.Repeat("\x00", len(os.Args[0])-1)+"."; got != want {
		t.Fatalf("short title: %q, want %q", got, want)
	}
}
