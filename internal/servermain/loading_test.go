package servermain

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/resp"
	"github.com/vigil-kv/vigil/internal/testutil"
)

// TestLoadingBusyScriptProcess: vigil-server started on an AOF whose
// EVAL never ends (aof.tcl's slow verbatim script, made endless): a client
// connecting meanwhile gets -LOADING for GET and SET, and once the script
// is past busy-reply-threshold (lua-time-limit 1) -BUSY for INFO, as
// redis-server 7.0.15 answers; SIGTERM then ends the process at once
// (exit 0, nothing saved, no "Ready to accept connections"), as Redis's
// whileBlockedCron. The server used to make every new client wait for the
// end of the load.
func TestLoadingBusyScriptProcess(t *testing.T) {
	p := newProcess(t)
	ad := filepath.Join(p.dir, "appendonlydir")
	if err := os.MkdirAll(ad, 0o755); err != nil {
		t.Fatal(err)
	}
	aof := resp.AppendCommandStrings(nil, "SET", "before", "1")
	aof = resp.AppendCommandStrings(aof, "EVAL", "local i = 0 while true do i = i + 1 end", "0")
	if err := os.WriteFile(filepath.Join(ad, "appendonly.aof.1.incr.aof"), aof, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ad, "appendonly.aof.manifest"), []byte("file appendonly.aof.1.incr.aof seq 1 type i\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p.launch(t, "appendonly yes\nlua-time-limit 1\nsave 1 1\n")
	loading := "-LOADING Redis is loading the dataset in memory\r\n"
	var got string
	if !testutil.PollUntil(15*time.Second, func() bool {
		got, _ = p.do("GET", "before")
		return got == loading
	}) {
		t.Fatalf("GET during the load: %q\nlog:\n%s", got, p.log())
	}
	if got, _ := p.do("SET", "a", "b"); got != loading {
		t.Fatalf("SET during the load: %q", got)
	}
	busy := "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n"
	if !testutil.PollUntil(15*time.Second, func() bool {
		got, _ = p.do("INFO", "persistence")
		return got == busy
	}) {
		t.Fatalf("INFO during the load's busy script: %q", got)
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("exit: %v\nlog:\n%s", err, p.log())
		}
	case <-time.After(time.Minute):
		t.Fatalf("SIGTERM did not stop the load\nlog:\n%s", p.log())
	}
	log := p.log()
	if !strings.Contains(log, "Received shutdown signal during loading, scheduling shutdown.") || strings.Contains(log, "Ready to accept connections") || strings.Contains(log, "Saving the final RDB snapshot") {
		t.Fatalf("log:\n%s", log)
	}
	if _, err := os.Stat(filepath.Join(p.dir, "dump.rdb")); err == nil {
		t.Fatal("a dump.rdb was saved")
	}
}
