package server

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/vigil-kv/vigil/internal/testutil"
)

// TestDisklessLoadShortReadLogged is replication.tcl's "diskless loading
// short read": a master link cut in the middle of a diskless (swapdb)
// load logs rdbReportError's socket short read, "Internal error in RDB
// reading offset ... Failure loading rdb format from socket, assuming
// connection error, resuming operation.", which the test waits for, keeps
// the old data, and tries again (a new PSYNC).
func TestDisklessLoadShortReadLogged(t *testing.T) {
	ft := listenTarget(t)
	logs := &testutil.LockedBuffer{}
	l := startLiveAfter(t, func(s *Server) { s.log = zerolog.New(logs) }, "--repl-diskless-load", "swapdb")
	c := l.dial(t)
	if got := c.do("SET", "old", "1"); got != "+OK" {
		t.Fatal(got)
	}
	mark := strings.Repeat("m", 40)
	conn, _, _ := ft.replicaOf(t, c)
	// An RDB cut after its header and one aux field.
	fmt.Fprintf(conn, "+FULLRESYNC %s 0\r\n$EOF:%s\r\nREDIS0010\xfa\x09redis-ver\x067.0.15\xfe\x00\xfb\x02\x00\x00\x03abc", fakeMasterReplID, mark)
	conn.Close()
	_, _, argv := ft.acceptPsync(t) // the link tries again
	if argv[0] != "PSYNC" {
		t.Fatalf("after the short read: %q", argv)
	}
	want := "Failure loading rdb format from socket, assuming connection error, resuming operation."
	if !strings.Contains(logs.String(), "Internal error in RDB reading offset ") || !strings.Contains(logs.String(), want) {
		t.Fatalf("log:\n%s", logs.String())
	}
	if got := c.do("GET", "old"); got != `"1"` {
		t.Fatalf("the old data after the short read: %s", got)
	}
}
