package server

import (
	"bufio"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"
)

// nextStreamArgv reads one multibulk command of a replication stream,
// skipping the keepalive newlines.
func nextStreamArgv(t *testing.T, br *bufio.Reader) []string {
	t.Helper()
	line := "\n"
	var err error
	for line == "\n" || line == "\r\n" {
		if line, err = br.ReadString('\n'); err != nil {
			t.Fatalf("stream: %v", err)
		}
	}
	n, err := strconv.Atoi(strings.TrimRight(strings.TrimPrefix(line, "*"), "\r\n"))
	if err != nil || !strings.HasPrefix(line, "*") {
		t.Fatalf("stream: %q is not a multibulk header", line)
	}
	argv := make([]string, n)
	for i := range argv {
		h, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		size, _ := strconv.Atoi(strings.TrimRight(strings.TrimPrefix(h, "$"), "\r\n"))
		b := make([]byte, size+2)
		if _, err := io.ReadFull(br, b); err != nil {
			t.Fatalf("stream: %v", err)
		}
		argv[i] = string(b[:size])
	}
	return argv
}

// TestWaitAsksAtOnce: a WAIT that blocks asks the replicas for an
// acknowledgement right away, after the write it waits for, as
// beforeSleep's replicationRequestAckFromSlaves does, not at the next
// replication cron tick. The server's clock is a fake that never moves
// here, so no cron runs: the GETACK can only come from the WAIT. The
// replica's ACK then answers the WAIT.
func TestWaitAsksAtOnce(t *testing.T) {
	l := startLive(t, "--repl-diskless-sync", "no")
	rep, got := psync(t, l, "?", -1)
	if got != "+FULLRESYNC" {
		t.Fatalf("PSYNC: %s", got)
	}
	c := l.dial(t)
	if got := c.do("SET", "k", "v"); got != "+OK" {
		t.Fatalf("SET: %s", got)
	}
	c.send("WAIT", "1", "0")
	rep.r.c.SetReadDeadline(time.Now().Add(30 * time.Second))
	sawSet := false
	for {
		argv := nextStreamArgv(t, rep.r.br)
		cmd := strings.ToUpper(strings.Join(argv, " "))
		if cmd == "SET K V" {
			sawSet = true
		}
		if cmd == "REPLCONF GETACK *" {
			break
		}
	}
	if !sawSet {
		t.Fatal("GETACK came before the write it is for")
	}
	// Acknowledge everything the master has sent.
	off, err := strconv.ParseInt(liveInfoField(t, l.dial(t), "replication", "master_repl_offset"), 10, 64)
	if err != nil || off == 0 {
		t.Fatalf("master_repl_offset %d: %v", off, err)
	}
	rep.r.send("REPLCONF", "ACK", strconv.FormatInt(off, 10))
	if got := c.read(); got != "(integer) 1" {
		t.Fatalf("WAIT: %s", got)
	}
}
