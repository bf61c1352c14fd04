package server

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/resp"
	"github.com/vigil-kv/vigil/internal/testutil"
)

// writeIncrAOF writes dir/appendonlydir with a manifest naming one
// incremental file holding cmds, and returns that file's size.
func writeIncrAOF(t *testing.T, dir string, cmds ...[]string) int64 {
	t.Helper()
	ad := filepath.Join(dir, "appendonlydir")
	if err := os.MkdirAll(ad, 0o755); err != nil {
		t.Fatal(err)
	}
	var w resp.Writer
	for _, c := range cmds {
		w.ArrayLen(len(c))
		for _, a := range c {
			w.Bulk([]byte(a))
		}
	}
	if err := os.WriteFile(filepath.Join(ad, "appendonly.aof.1.incr.aof"), w.B, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ad, "appendonly.aof.manifest"), []byte("file appendonly.aof.1.incr.aof seq 1 type i\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return int64(len(w.B))
}

// startLoading starts a live server marked loading (as vigil-server's
// main does) and its startup load; the load's result comes on the channel.
func startLoading(t *testing.T, directives ...string) (*liveServer, chan error) {
	t.Helper()
	l := startLiveAfter(t, (*Server).MarkLoading, directives...)
	t.Cleanup(func() { // a failed test must not leave a script running
		if bs := l.s.loadBusy(); bs != nil {
			bs.stop()
		}
	})
	loaded := make(chan error, 1)
	go func() { loaded <- l.s.LoadDataFromDisk() }()
	return l, loaded
}

func waitLoaded(t *testing.T, loaded chan error) error {
	t.Helper()
	select {
	case err := <-loaded:
		return err
	case <-time.After(time.Minute):
		t.Fatal("the load did not end")
		return nil
	}
}

// TestLoadingAOFBusyScript: a startup AOF whose EVAL runs past
// busy-reply-threshold (aof.tcl's "EVAL timeout with slow verbatim Lua
// script from AOF"): a client connecting meanwhile is answered at once, as
// redis-server 7.0.15 answers it (processCommand checks loading before
// busy): -LOADING for the commands not flagged loading (GET, SET, PING),
// -BUSY for the loading ones that are not allow-busy (INFO, SELECT), HELLO
// served. When the script ends the load goes on and the data is there.
// Vigil's clients used to wait for the whole load: Run took the execution
// lock the load held before it accepted connections.
func TestLoadingAOFBusyScript(t *testing.T) {
	dir := t.TempDir()
	writeIncrAOF(t, dir,
		[]string{"SELECT", "9"},
		[]string{"SET", "before", "1"},
		// Every instruction on line 2 (see TestBusyScriptKill).
		[]string{"EVAL", "redis.call('set',KEYS[1],'y')\nlocal i = 0 while true do i = i + 1 end", "1", "x"},
		[]string{"SET", "after", "2"})
	l, loaded := startLoading(t, "--dir", dir, "--appendonly", "yes")
	b := waitBusy(t, l.s)
	l.clk.Advance(5 * time.Second) // busy-reply-threshold 5000 ms
	rc := l.dial(t)
	for _, cmd := range [][]string{{"GET", "x"}, {"SET", "a", "b"}, {"PING"}} {
		if got := rc.do(cmd...); got != "-"+errLoadingMsg {
			t.Errorf("%s during the load's busy script: %s", cmd[0], got)
		}
	}
	for _, cmd := range [][]string{{"INFO", "persistence"}, {"SELECT", "9"}, {"SCRIPT", "KILL"}} {
		want := "-" + errBusy
		if cmd[0] == "SCRIPT" {
			want = "-" + errLoadingMsg // not flagged loading: SCRIPT KILL cannot end it either
		}
		if got := rc.do(cmd...); got != want {
			t.Errorf("%s during the load's busy script: %s", cmd[0], got)
		}
	}
	if got := rc.do("HELLO", "2"); !strings.Contains(got, `"proto", (integer) 2`) {
		t.Errorf("HELLO during the load's busy script: %s", got)
	}
	select {
	case err := <-loaded:
		t.Fatalf("the load ended during the script: %v", err)
	default:
	}
	b.stop() // the script ends
	if err := waitLoaded(t, loaded); err != nil {
		t.Fatal(err)
	}
	rc.do("SELECT", "9")
	for k, want := range map[string]string{"before": `"1"`, "x": `"y"`, "after": `"2"`} {
		if got := rc.do("GET", k); got != want {
			t.Errorf("GET %s after the load: %s", k, got)
		}
	}
}

// TestLoadingAOFBusyScriptShutdown: SHUTDOWN NOSAVE during a busy script
// of the startup load stops the script and the load (the commands after
// it are not run, nothing is saved) and the server, as redis-server.
func TestLoadingAOFBusyScriptShutdown(t *testing.T) {
	dir := t.TempDir()
	writeIncrAOF(t, dir,
		[]string{"EVAL", "\nlocal i = 0 while true do i = i + 1 end", "0"},
		[]string{"SET", "after", "2"})
	l, loaded := startLoading(t, "--dir", dir, "--appendonly", "yes")
	waitBusy(t, l.s)
	l.clk.Advance(5 * time.Second)
	rc := l.dial(t)
	if got := rc.do("SHUTDOWN"); got != "-"+errBusy {
		t.Fatalf("SHUTDOWN during the busy script: %s", got)
	}
	rc.send("SHUTDOWN", "NOSAVE")
	if err := waitLoaded(t, loaded); !errors.Is(err, ErrLoadAborted) {
		t.Fatalf("the load's error: %v", err)
	}
	select {
	case err := <-l.done:
		if err != nil {
			t.Fatal(err)
		}
		l.done <- nil // for the cleanup
	case <-time.After(time.Minute):
		t.Fatal("the server did not stop")
	}
	l.s.mu.Lock()
	n := l.s.ks.DBs[0].Len()
	l.s.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d keys: the load went on after SHUTDOWN NOSAVE", n)
	}
}

// TestLoadingAOFKeyLoadDelay: a startup AOF of plain commands yields to
// the clients every 1024 commands, and after each one with key-load-delay
// (loadSingleAppendOnlyFile's processEventsWhileBlocked and debugDelay):
// -LOADING for GET and SET, INFO persistence with loading:1 and the files'
// size as loading_total_bytes; then the data.
func TestLoadingAOFKeyLoadDelay(t *testing.T) {
	dir := t.TempDir()
	cmds := [][]string{{"SELECT", "0"}}
	for i := range 3000 {
		cmds = append(cmds, []string{"SET", "k" + strconv.Itoa(i), "v"})
	}
	size := writeIncrAOF(t, dir, cmds...)
	// 100 ms a command: the load cannot end before the checks below
	// however slow the machine; CONFIG SET key-load-delay 0 ends it.
	l, loaded := startLoading(t, "--dir", dir, "--appendonly", "yes", "--key-load-delay", "100000", "--enable-protected-configs", "yes")
	rc := l.dial(t)
	if got := rc.do("GET", "k1"); got != "-"+errLoadingMsg {
		t.Fatalf("GET while loading: %s", got)
	}
	if got := rc.do("SET", "k1", "w"); got != "-"+errLoadingMsg {
		t.Fatalf("SET while loading: %s", got)
	}
	// The server is marked loading before LoadDataFromDisk's goroutine
	// opens the files and sets their size: poll until it has.
	info := rc.do("INFO", "persistence")
	for deadline := time.Now().Add(10 * time.Second); strings.Contains(info, `loading_total_bytes:0\r\n`) && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
		info = rc.do("INFO", "persistence")
	}
	for _, want := range []string{`loading:1\r\n`, `async_loading:0\r\n`, "loading_total_bytes:" + strconv.FormatInt(size, 10) + `\r\n`, "loading_loaded_bytes:", "loading_eta_seconds:"} {
		if !strings.Contains(info, want) {
			t.Fatalf("INFO while loading lacks %q:\n%s", want, info)
		}
	}
	if got := rc.do("CONFIG", "SET", "key-load-delay", "0"); got != "+OK" {
		t.Fatalf("CONFIG SET while loading: %s", got)
	}
	if err := waitLoaded(t, loaded); err != nil {
		t.Fatal(err)
	}
	if got := rc.do("DBSIZE"); got != "(integer) 3000" {
		t.Fatalf("DBSIZE after the load: %s", got)
	}
	testutil.Poll(t, 10*time.Second, "loading:0", func() bool {
		return strings.Contains(rc.do("INFO", "persistence"), `loading:0\r\n`)
	})
}
