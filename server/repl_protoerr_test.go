package server

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"
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
	if got := c.do("REPLICAOF", "127.0.0.1", fmt.Sprint(ft.port)); got != "+OK" {
		t.Fatalf("REPLICAOF: %s", got)
	}
	const id = "0123456789abcdef0123456789abcdef01234567"
	// An empty RDB with its checksum disabled (0), as rdb.c accepts.
	payload := "REDIS0010\xff\x00\x00\x00\x00\x00\x00\x00\x00"
	next := func() (net.Conn, *bufio.Reader, []string) {
		t.Helper()
		var conn net.Conn
		select {
		case conn = <-ft.conns:
		case <-time.After(10 * time.Second):
			t.Fatal("the replica never connected")
		}
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		br := bufio.NewReader(conn)
		for {
			argv := nextStreamArgv(t, br)
			switch strings.ToUpper(argv[0]) {
			case "PING":
				io.WriteString(conn, "+PONG\r\n")
			case "REPLCONF":
				io.WriteString(conn, "+OK\r\n")
			case "PSYNC":
				return conn, br, argv
			default:
				t.Fatalf("unexpected %q in the handshake", argv)
			}
		}
	}
	conn, _, _ := next() // PSYNC <its own replid> <offset+1>: it was a master
	fmt.Fprintf(conn, "+FULLRESYNC %s 0\r\n$%d\r\n%s", id, len(payload), payload)
	info := l.dial(t)
	eventually(t, "the link to be up", func() bool {
		return liveInfoField(t, info, "replication", "master_link_status") == "up"
	})
	// A well-formed write moves the offset, then a malformed request.
	io.WriteString(conn, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n")
	eventually(t, "the write to be applied", func() bool { return c.do("EXISTS", "k") == "(integer) 1" })
	io.WriteString(conn, "*abc\r\n")
	_, _, argv := next()
	if strings.Join(argv, " ") != "PSYNC ? -1" {
		t.Fatalf("PSYNC after a protocol error: %q, want a full resync (PSYNC ? -1)", argv)
	}
}
