package server

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/testutil"
)

// TestReplicaResyncsDuringBusyScript is replication.tcl's "Fullsync should
// not free scripting engine on a replica while a script is running": the
// master drops a replica that runs a busy script (its output buffer limit
// in the Tcl test); the replica notices the closed link and reconnects
// with a new PSYNC while the script still runs (Redis reads the master's
// stream without applying it, frees the master client and reconnects from
// processEventsWhileBlocked), the payload waits for the script's end, and
// after SCRIPT KILL the link comes up. Vigil's link waited for the
// script's lock before it read on, so the master saw no new sync. Run
// against redis-server too (skipped when it is absent).
func TestReplicaResyncsDuringBusyScript(t *testing.T) {
	scenario := func(t *testing.T, dial func() *rconn, started func()) {
		ft := listenTarget(t)
		c := dial()
		if got := c.do("CONFIG", "SET", "busy-reply-threshold", "1"); got != "+OK" {
			t.Fatal(got)
		}
		conn, _, _ := ft.replicaOf(t, c)
		fmt.Fprintf(conn, "+FULLRESYNC %s 0\r\n$%d\r\n%s", fakeMasterReplID, len(emptyRDBNoChecksum), emptyRDBNoChecksum)
		eventually(t, "the link to be up", func() bool {
			return liveInfoField(t, c, "replication", "master_link_status") == "up"
		})
		script := dial()
		script.send("EVAL", "while true do end", "0")
		started()
		eventually(t, "the script to be busy", func() bool { return strings.HasPrefix(c.do("PING"), "-BUSY") })
		// A write the replica holds while busy, then the link closes.
		io.WriteString(conn, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n")
		conn.Close()
		conn2, _, argv := ft.acceptPsync(t)
		if argv[0] != "PSYNC" {
			t.Fatalf("after the drop: %q", argv)
		}
		if got := c.do("PING"); !strings.HasPrefix(got, "-BUSY") {
			t.Fatalf("PING after the new PSYNC: %s, want the script still busy", got)
		}
		fmt.Fprintf(conn2, "+FULLRESYNC %s 0\r\n$%d\r\n%s", fakeMasterReplID, len(emptyRDBNoChecksum), emptyRDBNoChecksum)
		if got := c.do("SCRIPT", "KILL"); got != "+OK" {
			t.Fatalf("SCRIPT KILL: %s", got)
		}
		if got := script.read(); !strings.Contains(got, "Script killed by user") {
			t.Fatalf("the script's reply: %s", got)
		}
		eventually(t, "the link to be up again", func() bool {
			return liveInfoField(t, c, "replication", "master_link_status") == "up"
		})
	}
	t.Run("redis", func(t *testing.T) {
		rs := testutil.StartRedis(t, testutil.RedisOptions{Args: []string{"--repl-diskless-load", "disabled"}})
		scenario(t, func() *rconn {
			rc := rs.Dial(t)
			return &rconn{t: t, c: rc, br: bufio.NewReader(rc)}
		}, func() {})
	})
	t.Run("vigil", func(t *testing.T) {
		l := startLive(t, "--repl-diskless-load", "disabled")
		t.Cleanup(func() { // a failed test must not leave the script running
			if bs := l.s.loadBusy(); bs != nil {
				bs.stop()
			}
		})
		scenario(t, func() *rconn { return l.dial(t) }, func() {
			// The server's clock is a fake: past the threshold once the
			// script runs.
			waitBusy(t, l.s)
			l.clk.Advance(time.Second)
		})
	})
}
