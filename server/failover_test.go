package server

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The FAILOVER command on a live master with a fake replica (a test
// connection that did PSYNC) and a fake target (a listener standing for
// the replica's listening port, to which the master turns with PSYNC ...
// FAILOVER). The server's clock is a fake: the test moves it and runs the
// cron, so updateFailoverStatus runs exactly when the test says.

// fakeTarget is the listener the master connects to when it fails over.
type fakeTarget struct {
	port  int
	conns chan net.Conn
}

func listenTarget(t *testing.T) *fakeTarget {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	ft := &fakeTarget{port: ln.Addr().(*net.TCPAddr).Port, conns: make(chan net.Conn, 4)}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
			ft.conns <- c
		}
	}()
	return ft
}

// fakeMasterReplID is the replication ID the replica tests' fake masters
// announce in +FULLRESYNC.
const fakeMasterReplID = "0123456789abcdef0123456789abcdef01234567"

// emptyRDBNoChecksum is an empty RDB with its checksum disabled (0), as
// rdb.c accepts.
const emptyRDBNoChecksum = "REDIS0010\xff\x00\x00\x00\x00\x00\x00\x00\x00"

// replicaOf makes the server c is connected to a replica of ft
// (REPLICAOF) and accepts its link up to PSYNC (acceptPsync).
func (ft *fakeTarget) replicaOf(t *testing.T, c *rconn) (net.Conn, *bufio.Reader, []string) {
	t.Helper()
	if got := c.do("REPLICAOF", "127.0.0.1", fmt.Sprint(ft.port)); got != "+OK" {
		t.Fatalf("REPLICAOF: %s", got)
	}
	return ft.acceptPsync(t)
}

// handshake accepts the master's connection and answers its handshake up
// to PSYNC, whose argv it returns; psyncReply is the answer written.
func (ft *fakeTarget) handshake(t *testing.T, psyncReply string) []string {
	t.Helper()
	c, _, argv := ft.acceptPsync(t)
	io.WriteString(c, psyncReply)
	return argv
}

// acceptPsync accepts the next connection and answers its handshake up to
// PSYNC, unanswered: it returns the connection, its reader and PSYNC's argv.
func (ft *fakeTarget) acceptPsync(t *testing.T) (net.Conn, *bufio.Reader, []string) {
	t.Helper()
	var c net.Conn
	select {
	case c = <-ft.conns:
	case <-time.After(10 * time.Second):
		t.Fatal("the master never connected to the failover target")
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(c)
	for {
		argv := nextStreamArgv(t, br)
		switch strings.ToUpper(argv[0]) {
		case "PING":
			io.WriteString(c, "+PONG\r\n")
		case "REPLCONF":
			io.WriteString(c, "+OK\r\n")
		case "PSYNC":
			return c, br, argv
		default:
			t.Fatalf("unexpected %q in the handshake", argv)
		}
	}
}

// attachReplica connects a fake replica announcing 127.0.0.1:port and
// reads its full sync (the master must not use diskless sync).
func attachReplica(t *testing.T, l *liveServer, port int) *rconn {
	t.Helper()
	r := l.dial(t)
	if got := r.do("REPLCONF", "listening-port", strconv.Itoa(port)); got != "+OK" {
		t.Fatalf("REPLCONF: %s", got)
	}
	if got := r.do("REPLCONF", "ip-address", "127.0.0.1"); got != "+OK" {
		t.Fatalf("REPLCONF: %s", got)
	}
	r.send("PSYNC", "?", "-1")
	r.c.SetReadDeadline(time.Now().Add(30 * time.Second))
	line, err := r.br.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "+FULLRESYNC") {
		t.Fatalf("PSYNC: %q %v", line, err)
	}
	for line == "\n" || strings.HasPrefix(line, "+") {
		if line, err = r.br.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	n, err := strconv.Atoi(strings.TrimRight(strings.TrimPrefix(line, "$"), "\r\n"))
	if err != nil {
		t.Fatalf("payload header %q", line)
	}
	if _, err := io.CopyN(io.Discard, r.br, int64(n)); err != nil {
		t.Fatal(err)
	}
	info := l.dial(t)
	eventually(t, "the replica to be online", func() bool {
		return strings.Contains(liveInfoField(t, info, "replication", "slave0"), ",state=online,")
	})
	return r
}

// cronTick moves the fake clock by d and runs the replication cron.
func (l *liveServer) cronTick(d time.Duration) {
	l.clk.Advance(d)
	l.s.mu.Lock()
	l.s.replCron()
	l.s.mu.Unlock()
}

// eventually polls cond until it holds, for at most 10 seconds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// parked waits until n commands are postponed by the pause.
func parked(t *testing.T, l *liveServer, info *rconn, n int) {
	t.Helper()
	want := strconv.Itoa(n)
	eventually(t, want+" paused clients", func() bool { return liveInfoField(t, info, "clients", "blocked_clients") == want })
}

// One replica, FAILOVER TO it: the writes pause, nothing happens until the
// replica acknowledged master_repl_offset, then the master follows the
// target with PSYNC <its replid> <offset+1> FAILOVER; the target's
// +CONTINUE ends the failover and the paused write gets -READONLY.
func TestFailoverHandsOver(t *testing.T) {
	l := startLive(t, "--repl-diskless-sync", "no")
	ft := listenTarget(t)
	rep := attachReplica(t, l, ft.port)
	c, info, w := l.dial(t), l.dial(t), l.dial(t)
	if got := c.do("SET", "k", "v"); got != "+OK" {
		t.Fatalf("SET: %s", got)
	}
	off := liveInfoField(t, info, "replication", "master_repl_offset")
	replid := liveInfoField(t, info, "replication", "master_replid")
	if got := c.do("FAILOVER", "TO", "127.0.0.1", strconv.Itoa(ft.port)); got != "+OK" {
		t.Fatalf("FAILOVER: %s", got)
	}
	if got := liveInfoField(t, info, "replication", "master_failover_state"); got != "waiting-for-sync" {
		t.Fatalf("state %q", got)
	}
	w.send("SET", "k2", "v2")
	parked(t, l, info, 1)
	if got := c.do("GET", "k"); got != `"v"` {
		t.Fatalf("reads are not paused: %s", got)
	}
	// CLIENT UNPAUSE ends only CLIENT PAUSE's pause.
	if got := c.do("CLIENT", "UNPAUSE"); got != "+OK" {
		t.Fatalf("CLIENT UNPAUSE: %s", got)
	}
	l.cronTick(time.Second)
	parked(t, l, info, 1)
	if got := liveInfoField(t, info, "replication", "master_failover_state"); got != "waiting-for-sync" {
		t.Fatalf("state before the ACK %q", got)
	}
	// Without TIMEOUT 7.0 still PINGs the replicas (replicationCron's
	// manual_failover_in_progress needs failover_end_time): the offset
	// moved by that PING only, the paused SET is not in the stream.
	const ping = "*1\r\n$4\r\nPING\r\n"
	o, _ := strconv.ParseInt(off, 10, 64)
	if got := liveInfoField(t, info, "replication", "master_repl_offset"); got != strconv.FormatInt(o+int64(len(ping)), 10) {
		t.Fatalf("the offset while paused: %s, was %s", got, off)
	}
	o += int64(len(ping))
	off = strconv.FormatInt(o, 10)
	rep.send("REPLCONF", "ACK", off)
	eventually(t, "the failover to start", func() bool {
		l.cronTick(100 * time.Millisecond)
		return liveInfoField(t, info, "replication", "master_failover_state") == "failover-in-progress"
	})
	if got := liveInfoField(t, info, "replication", "role"); got != "slave" {
		t.Fatalf("role during the failover %q", got)
	}
	const newID = "abcdefabcdefabcdefabcdefabcdefabcdefabcd"
	argv := ft.handshake(t, "+CONTINUE "+newID+"\r\n")
	if want := []string{"PSYNC", replid, strconv.FormatInt(o+1, 10), "FAILOVER"}; strings.Join(argv, " ") != strings.Join(want, " ") {
		t.Fatalf("PSYNC %q, want %q", argv, want)
	}
	eventually(t, "the failover to end", func() bool {
		return liveInfoField(t, info, "replication", "master_failover_state") == "no-failover"
	})
	if got := w.read(); got != "-READONLY You can't write against a read only replica." {
		t.Fatalf("the paused write: %s", got)
	}
	if got := liveInfoField(t, info, "replication", "master_port"); got != strconv.Itoa(ft.port) {
		t.Fatalf("master_port %q", got)
	}
	if got := liveInfoField(t, info, "replication", "master_replid"); got != newID {
		t.Fatalf("master_replid %q, want the target's", got)
	}
	if got := liveInfoField(t, info, "replication", "master_replid2"); got != replid {
		t.Fatalf("master_replid2 %q, want the old %q", got, replid)
	}
	if got := c.do("GET", "k"); got != `"v"` {
		t.Fatalf("GET after: %s", got)
	}
	// +CONTINUE with a new ID drops the sub-replicas (disconnectSlaves).
	rep.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.Copy(io.Discard, rep.br); err != nil {
		t.Fatalf("the old replica link stayed open: %v", err)
	}
}

// FAILOVER ABORT, TIMEOUT without FORCE, and FORCE to a target that
// rejects PSYNC FAILOVER: each ends in no-failover with the node a master
// and the paused write executed.
func TestFailoverAbortTimeoutForce(t *testing.T) {
	l := startLive(t, "--repl-diskless-sync", "no")
	ft := listenTarget(t)
	attachReplica(t, l, ft.port)
	c, info, w := l.dial(t), l.dial(t), l.dial(t)
	state := func() string { return liveInfoField(t, info, "replication", "master_failover_state") }

	if got := c.do("FAILOVER"); got != "+OK" {
		t.Fatalf("FAILOVER: %s", got)
	}
	w.send("SET", "a", "1")
	parked(t, l, info, 1)
	// EXEC of a transaction with a write waits too; a read-only one runs.
	x := l.dial(t)
	for _, cmd := range [][]string{{"MULTI"}, {"GET", "a"}, {"EXEC"}} {
		x.do(cmd...)
	}
	x.do("MULTI")
	if got := x.do("SET", "t", "1"); got != "+QUEUED" {
		t.Fatalf("queued SET: %s", got)
	}
	x.send("EXEC")
	parked(t, l, info, 2)
	if got := c.do("FAILOVER", "TIMEOUT", "10"); got != "-ERR FAILOVER already in progress." {
		t.Fatalf("second FAILOVER: %s", got)
	}
	if got := c.do("REPLICAOF", "127.0.0.1", "1"); got != "-ERR REPLICAOF not allowed while failing over." {
		t.Fatalf("REPLICAOF: %s", got)
	}
	if got := c.do("FAILOVER", "ABORT"); got != "+OK" {
		t.Fatalf("ABORT: %s", got)
	}
	if got := w.read(); got != "+OK" {
		t.Fatalf("the paused write after ABORT: %s", got)
	}
	if got := x.read(); got != "[+OK]" {
		t.Fatalf("the paused EXEC after ABORT: %s", got)
	}
	if got := state(); got != "no-failover" {
		t.Fatalf("after ABORT: %s", got)
	}
	if got := c.do("FAILOVER", "ABORT"); got != "-ERR No failover in progress." {
		t.Fatalf("ABORT again: %s", got)
	}

	if got := c.do("SET", "e", "1", "PX", "100"); got != "+OK" {
		t.Fatalf("SET PX: %s", got)
	}
	if got := c.do("FAILOVER", "TIMEOUT", "500"); got != "+OK" {
		t.Fatalf("FAILOVER TIMEOUT: %s", got)
	}
	off := liveInfoField(t, info, "replication", "master_repl_offset")
	w.send("SET", "b", "1")
	parked(t, l, info, 1)
	l.cronTick(499 * time.Millisecond)
	if got := state(); got != "waiting-for-sync" {
		t.Fatalf("before the deadline: %s", got)
	}
	// The dataset stays static while paused: the expired key reads as
	// missing, but neither the cron nor the read deletes it (no DEL in the
	// stream, which would move the offset the replica must acknowledge).
	if got := c.do("GET", "e"); got != "(nil)" {
		t.Fatalf("GET of an expired key: %s", got)
	}
	if got := liveInfoField(t, info, "stats", "expired_keys"); got != "0" {
		t.Fatalf("expired_keys while paused: %s", got)
	}
	if got := liveInfoField(t, info, "replication", "master_repl_offset"); got != off {
		t.Fatalf("master_repl_offset moved while paused: %s, was %s", got, off)
	}
	l.cronTick(time.Millisecond)
	if got := state(); got != "no-failover" {
		t.Fatalf("at the deadline: %s", got)
	}
	if got := w.read(); got != "+OK" {
		t.Fatalf("the paused write after the timeout: %s", got)
	}
	if got := c.do("GET", "e"); got != "(nil)" || liveInfoField(t, info, "stats", "expired_keys") != "1" {
		t.Fatalf("the expired key after the pause: %s", got)
	}

	replid := liveInfoField(t, info, "replication", "master_replid")
	if got := c.do("FAILOVER", "TO", "127.0.0.1", strconv.Itoa(ft.port), "TIMEOUT", "500", "FORCE"); got != "+OK" {
		t.Fatalf("FAILOVER FORCE: %s", got)
	}
	w.send("SET", "c", "1")
	parked(t, l, info, 1)
	l.cronTick(500 * time.Millisecond)
	if got := state(); got != "failover-in-progress" {
		t.Fatalf("FORCE at the deadline: %s", got)
	}
	argv := ft.handshake(t, "-ERR PSYNC FAILOVER replid must match my replid.\r\n")
	if len(argv) != 4 || argv[1] != replid || argv[3] != "FAILOVER" {
		t.Fatalf("PSYNC %q", argv)
	}
	eventually(t, "the rejected failover to abort", func() bool { return state() == "no-failover" })
	if got := w.read(); got != "+OK" {
		t.Fatalf("the paused write after the rejection: %s", got)
	}
	if got := liveInfoField(t, info, "replication", "role"); got != "master" {
		t.Fatalf("role after the rejection %q", got)
	}
	// replicationUnsetMaster shifted the IDs: the old one is replid2.
	if got := liveInfoField(t, info, "replication", "master_replid2"); got != replid {
		t.Fatalf("master_replid2 %q, want %q", got, replid)
	}
}

// The replies that need the server's state, and PSYNC FAILOVER on a
// master.
func TestFailoverServerErrors(t *testing.T) {
	ts := newTestServer(t)
	c := ts.client()
	for _, tc := range []struct{ args, want string }{
		{"FAILOVER", "-ERR FAILOVER requires connected replicas.\r\n"},
		{"FAILOVER ABORT", "-ERR No failover in progress.\r\n"},
		{"FAILOVER TIMEOUT 0", "-ERR FAILOVER timeout must be greater than 0\r\n"},
		{"PSYNC abc 1 FAILOVER", "-ERR PSYNC FAILOVER can't be sent to a master.\r\n"},
	} {
		if got := ts.do(c, strings.Fields(tc.args)...); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.args, got, tc.want)
		}
	}
	if got := ts.do(c, "INFO", "replication"); !strings.Contains(got, "\r\nmaster_failover_state:no-failover\r\n") {
		t.Errorf("INFO: %q", got)
	}
}

// A vigil-server replica receiving PSYNC <its replid> <offset> FAILOVER
// promotes itself and answers +CONTINUE <new replid>; another replid is
// refused and leaves it a replica.
func TestFailoverTargetPromotes(t *testing.T) {
	m, maddr := startLiveTCP(t, "--repl-diskless-sync", "no")
	r, _ := startLiveTCP(t)
	mc, rc := m.dial(t), r.dial(t)
	if got := mc.do("SET", "k", "v"); got != "+OK" {
		t.Fatalf("SET: %s", got)
	}
	host, port, _ := net.SplitHostPort(maddr)
	if got := rc.do("REPLICAOF", host, port); got != "+OK" {
		t.Fatalf("REPLICAOF: %s", got)
	}
	eventually(t, "the replica to sync", func() bool {
		return liveInfoField(t, rc, "replication", "master_link_status") == "up" && rc.do("GET", "k") == `"v"`
	})
	replid := liveInfoField(t, rc, "replication", "master_replid")
	off, _ := strconv.ParseInt(liveInfoField(t, rc, "replication", "master_repl_offset"), 10, 64)
	if replid != liveInfoField(t, mc, "replication", "master_replid") {
		t.Fatal("the replica does not share the master's replid")
	}
	p := r.dial(t)
	if got := p.do("PSYNC", "0123456789012345678901234567890123456789", "1", "FAILOVER"); got != "-ERR PSYNC FAILOVER replid must match my replid." {
		t.Fatalf("PSYNC FAILOVER with another replid: %s", got)
	}
	if got := liveInfoField(t, rc, "replication", "role"); got != "slave" {
		t.Fatalf("role after a refused PSYNC FAILOVER %q", got)
	}
	p.send("REPLCONF", "capa", "psync2")
	p.read()
	p.send("PSYNC", replid, strconv.FormatInt(off+1, 10), "FAILOVER")
	p.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := p.br.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	newID := liveInfoField(t, rc, "replication", "master_replid")
	if want := "+CONTINUE " + newID + "\r\n"; line != want || newID == replid {
		t.Fatalf("PSYNC FAILOVER: %q, want %q", line, want)
	}
	if got := liveInfoField(t, rc, "replication", "role"); got != "master" {
		t.Fatalf("role %q", got)
	}
	if got := liveInfoField(t, rc, "replication", "master_replid2"); got != replid {
		t.Fatalf("master_replid2 %q, want %q", got, replid)
	}
	if got := liveInfoField(t, rc, "replication", "second_repl_offset"); got != strconv.FormatInt(off+1, 10) {
		t.Fatalf("second_repl_offset %q", got)
	}
	if got := liveInfoField(t, rc, "replication", "connected_slaves"); got != "1" {
		t.Fatalf("connected_slaves %q: the old master is its replica", got)
	}
	if got := rc.do("SET", "k2", "v2"); got != "+OK" {
		t.Fatalf("write on the new master: %s", got)
	}
}

// The pause's purposes combine as 7.0's: the strictest mode of those
// active, CLIENT UNPAUSE ends only CLIENT PAUSE's, and an expired CLIENT
// PAUSE leaves the failover's (writes only).
func TestPausePurposes(t *testing.T) {
	t0 := time.Unix(1700000000, 0)
	read := &Command{Flags: FlagReadonly}
	write := &Command{Flags: FlagWrite}
	var p pauseState
	check := func(when string, now time.Time, wantRead, wantWrite bool) {
		t.Helper()
		if got := p.mustWait(read, now); got != wantRead {
			t.Errorf("%s: read waits %v", when, got)
		}
		if got := p.mustWait(write, now); got != wantWrite {
			t.Errorf("%s: write waits %v", when, got)
		}
	}
	check("no pause", t0, false, false)
	p.startFailover()
	check("failover", t0, false, true)
	p.start(t0.Add(time.Second), true)
	check("failover + CLIENT PAUSE ALL", t0, true, true)
	p.end() // CLIENT UNPAUSE
	check("after CLIENT UNPAUSE", t0, false, true)
	p.start(t0.Add(time.Second), true)
	check("CLIENT PAUSE expired", t0.Add(time.Second), false, true)
	if p.ch == nil {
		t.Fatal("the failover's pause ended with CLIENT PAUSE's")
	}
	p.start(t0.Add(time.Second), false)
	ch := p.ch
	p.endFailover()
	if ch == p.ch {
		t.Fatal("ending a purpose must wake the parked commands")
	}
	check("CLIENT PAUSE WRITE alone", t0, false, true)
	p.end()
	check("nothing", t0, false, false)
	if p.ch != nil {
		t.Fatal("pause channel left after every purpose ended")
	}
}
