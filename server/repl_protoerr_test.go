package server

import (
	"fmt"
	"io"
	"strings"
	"testing"
)

// TestReplicaProtocolErrorDropsCachedMaster: a master whose stream turns
// malformed is freed, not cached (networking.c freeClient skips
// replicationCacheMaster for CLIENT_PROTOCOL_ERROR), so the replica's next
// attempt is a full "PSYNC ? -1", not a partial resync from an offset that
// followed a broken stream.
func TestReplicaProtocolErrorDropsCachedMaster(t *testing.T) {
	ft := listenTarget(t)
	l := startLive(t, "--repl-diskless-load", "disabled")
	c := l.dial(t)
	conn, _, _ := ft.replicaOf(t, c) // PSYNC <its own replid> <offset+1>: it was a master
	fmt.Fprintf(conn, "+FULLRESYNC %s 0\r\n$%d\r\n%s", fakeMasterReplID, len(emptyRDBNoChecksum), emptyRDBNoChecksum)
	info := l.dial(t)
	eventually(t, "the link to be up", func() bool {
		return liveInfoField(t, info, "replication", "master_link_status") == "up"
	})
	// A well-formed write moves the offset, then a malformed request.
	io.WriteString(conn, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n")
	eventually(t, "the write to be applied", func() bool { return c.do("EXISTS", "k") == "(integer) 1" })
	io.WriteString(conn, "*abc\r\n")
	_, _, argv := ft.acceptPsync(t)
	if strings.Join(argv, " ") != "PSYNC ? -1" {
		t.Fatalf("PSYNC after a protocol error: %q, want a full resync (PSYNC ? -1)", argv)
	}
}
