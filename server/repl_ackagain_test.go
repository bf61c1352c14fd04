package server

import (
	"fmt"
	"github.com/rs/zerolog"
	"github.com/vigil-kv/vigil/internal/testutil"
	"io"
	"strings"
	"testing"
	"time"
)

// TestReplicaAcksAgainUntilStreamStarts: after an EOF-marked (diskless)
// full sync the replica ACKs at once, as readSyncBulkPayload, then again
// at every cron tick while the master's stream has not started
// (replLink.ackAgain), not only a second later: a Redis 7.0 master starts
// a diskless replica's stream on the first ACK it gets once it has seen
// its RDB child exit, and an ACK before that is spent (the first WAIT
// after a sync then waited up to a second). Once the stream flows, ACKs
// carry its offset. The fake clock drives the cron: each 100 ms advance
// is one tick at hz 10.
func TestReplicaAcksAgainUntilStreamStarts(t *testing.T) {
	ft := listenTarget(t)
	logs := &testutil.LockedBuffer{}
	l := startLiveAfter(t, func(s *Server) { s.log = zerolog.New(logs) })
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(logs.String())
		}
	})
	c := l.dial(t)
	mark := strings.Repeat("m", 40)
	conn, br, _ := ft.replicaOf(t, c)
	// An empty RDB, then the mark.
	fmt.Fprintf(conn, "+FULLRESYNC %s 0\r\n$EOF:%s\r\n%s%s", fakeMasterReplID, mark, emptyRDBNoChecksum, mark)
	ack := func(what string) string {
		t.Helper()
		conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		argv := nextStreamArgv(t, br)
		if len(argv) != 3 || !strings.EqualFold(argv[0], "REPLCONF") || !strings.EqualFold(argv[1], "ACK") {
			t.Fatalf("%s: %q, want REPLCONF ACK <offset>", what, argv)
		}
		return argv[2]
	}
	if got := ack("after the payload"); got != "0" {
		t.Fatalf("first ACK offset %s, want 0", got)
	}
	for tick := 1; tick <= 3; tick++ {
		l.clk.Advance(100 * time.Millisecond)
		if got := ack(fmt.Sprintf("cron tick %d, no stream yet", tick)); got != "0" {
			t.Fatalf("tick %d: ACK offset %s, want 0", tick, got)
		}
	}
	// The stream starts: a PING (14 bytes).
	io.WriteString(conn, "*1\r\n$4\r\nPING\r\n")
	eventually(t, "the PING to be applied", func() bool {
		return liveInfoField(t, c, "replication", "slave_repl_offset") == "14"
	})
	// The once-a-second ACK carries the stream's offset (ACKs of 0 a
	// tick queued before the PING may come first).
	l.clk.Advance(1100 * time.Millisecond)
	for i := 0; ; i++ {
		got := ack("after the stream started")
		if got == "14" {
			break
		}
		if got != "0" || i > 20 {
			t.Fatalf("ACK after the stream started: offset %s, want 14", got)
		}
	}
}
