package server

import (
	"context"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/vigil-kv/vigil/internal/resp"
	"github.com/vigil-kv/vigil/internal/testutil"
)

// TestPanicInCommandCrashes: a Go panic inside a command ends the process
// as Redis's serverPanic does (the bug report logged, then death by
// SIGABRT) instead of hanging it: the panic's unwinding used to run
// unlinkClient, which waited forever for the lock the panicking batch
// held. The test's die records the signal and parks the goroutine, as the
// real one never returns.
func TestPanicInCommandCrashes(t *testing.T) {
	died := make(chan syscall.Signal, 1)
	die = func(sig syscall.Signal) {
		died <- sig
		select {} // the process is gone
	}
	t.Cleanup(func() { die = dieBySignal })

	probe, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := probe.Addr().String()
	probe.Close()
	_, port, _ := net.SplitHostPort(addr)
	ts := newTestServer(t, "--port", port, "--bind", "127.0.0.1")
	logs := &testutil.LockedBuffer{}
	ts.s.log = zerolog.New(logs)
	// ECHO, on this server only, panics as a bug in a command would.
	echo := *ts.s.cmds["echo"]
	echo.Handler = func(c *Client, args [][]byte) { panic("a bug in ECHO") }
	ts.s.cmds["echo"] = &echo
	if err := ts.s.Listen(); err != nil {
		t.Fatal(err)
	}
	go ts.s.Run(context.Background()) // never stopped: it "died"

	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write(resp.AppendCommandStrings(nil, "ECHO", "x")); err != nil {
		t.Fatal(err)
	}
	select {
	case sig := <-died:
		if sig != syscall.SIGABRT {
			t.Fatalf("died of %v, want SIGABRT", sig)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the server neither crashed nor answered: the panic hung it")
	}
	log := logs.String()
	for _, want := range []string{"=== REDIS BUG REPORT START", "Guru Meditation: a bug in ECHO #panic",
		"------ STACK TRACE ------", "------ INFO OUTPUT ------", "------ CLIENT LIST OUTPUT ------",
		"=== REDIS BUG REPORT END"} {
		if !strings.Contains(log, want) {
			t.Errorf("the log lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("log:\n%s", log)
	}
}
