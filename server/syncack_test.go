package server

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// syncAckSetup starts a master with one fake replica (online, never
// acknowledging unless told) and sync-ack mode on through CONFIG SET.
func syncAckSetup(t *testing.T, n, timeoutMs int) (*liveServer, *fakeReplica, *rconn) {
	t.Helper()
	l := startLive(t, "--repl-diskless-sync", "no")
	rep, got := psync(t, l, "?", -1)
	if got != "+FULLRESYNC" {
		t.Fatalf("PSYNC: %s", got)
	}
	admin := l.dial(t)
	// Acknowledgements count once the replica is online.
	eventually(t, "the replica to be online", func() bool {
		return strings.Contains(liveInfoField(t, admin, "replication", "slave0"), ",state=online,")
	})
	for _, kv := range [][2]string{{"min-replicas-ack-timeout", strconv.Itoa(timeoutMs)}, {"min-replicas-ack", strconv.Itoa(n)}} {
		if got := admin.do("CONFIG", "SET", kv[0], kv[1]); got != "+OK" {
			t.Fatalf("CONFIG SET %s: %s", kv[0], got)
		}
	}
	return l, rep, admin
}

// ackAll makes the fake replica acknowledge everything the master sent.
func ackAll(t *testing.T, rep *fakeReplica, admin *rconn) {
	t.Helper()
	off := liveInfoField(t, admin, "replication", "master_repl_offset")
	rep.r.send("REPLCONF", "ACK", off)
}

// waitHeld polls INFO until n writes are held.
func waitHeld(t *testing.T, admin *rconn, n int) {
	t.Helper()
	eventually(t, strconv.Itoa(n)+" held writes", func() bool {
		return liveInfoField(t, admin, "replication", "sync_ack_waiting_clients") == strconv.Itoa(n)
	})
}

// TestSyncAckHoldsReply: a write's reply is held until the replica
// acknowledges it; meanwhile another client is served: a read (which sees
// the write, applied on the master) is held until that write is
// acknowledged too, a no-op write and INFO return at once; once all is
// acknowledged a read returns at once.
func TestSyncAckHoldsReply(t *testing.T) {
	l, rep, admin := syncAckSetup(t, 1, 0)
	a, b, c := l.dial(t), l.dial(t), l.dial(t)
	a.send("SET", "k", "v")
	waitHeld(t, admin, 1)
	// Another client is served while a is held.
	if got := c.do("SET", "k", "other", "NX"); got != "(nil)" { // no-op write: not held
		t.Fatalf("SET NX: %s", got)
	}
	if got := c.do("PING"); got != "+PONG" {
		t.Fatalf("PING while held: %s", got)
	}
	// A read sees the unacknowledged write: held with it.
	b.send("GET", "k")
	waitHeld(t, admin, 2)
	if got := liveInfoField(t, admin, "replication", "sync_ack_held_reads"); got != "1" {
		t.Fatalf("sync_ack_held_reads %s", got)
	}
	ackAll(t, rep, admin)
	if got := a.read(); got != "+OK" {
		t.Fatalf("SET after ACK: %s", got)
	}
	if got := b.read(); got != `"v"` {
		t.Fatalf("GET after ACK: %s", got)
	}
	waitHeld(t, admin, 0)
	// Everything acknowledged: a read returns at once.
	ackAll(t, rep, admin)
	if got := b.do("GET", "k"); got != `"v"` {
		t.Fatalf("GET with all acknowledged: %s", got)
	}
	if got := liveInfoField(t, admin, "replication", "sync_ack_held_writes"); got != "1" {
		t.Errorf("sync_ack_held_writes %s", got)
	}
	if got := liveInfoField(t, admin, "replication", "min_replicas_ack"); got != "1" {
		t.Errorf("min_replicas_ack %s", got)
	}
	// CONFIG SET at runtime: off again, writes return at once, and INFO
	// keeps the counters (the mode was used).
	if got := admin.do("CONFIG", "SET", "min-replicas-ack", "0"); got != "+OK" {
		t.Fatal(got)
	}
	if got := a.do("SET", "k", "w"); got != "+OK" {
		t.Fatalf("SET with the mode off: %s", got)
	}
}

// TestSyncAckTimeout: without enough acknowledgements the client gets the
// UNACKED error at the timeout, never the reply; INFO counts it.
func TestSyncAckTimeout(t *testing.T) {
	l, rep, admin := syncAckSetup(t, 2, 100)
	a := l.dial(t)
	a.send("SET", "k", "v")
	waitHeld(t, admin, 1)
	ackAll(t, rep, admin) // one of the two
	l.clk.Advance(99 * time.Millisecond)
	if got := liveInfoField(t, admin, "replication", "sync_ack_waiting_clients"); got != "1" {
		t.Fatalf("released before the timeout (waiting %s)", got)
	}
	l.clk.Advance(time.Millisecond)
	want := "-UNACKED Write may or may not be applied: acknowledged by 1 of 2 required replicas within 100 ms"
	if got := a.read(); got != want {
		t.Fatalf("timed out: %q, want %q", got, want)
	}
	if got := liveInfoField(t, admin, "replication", "sync_ack_timeouts"); got != "1" {
		t.Errorf("sync_ack_timeouts %s", got)
	}
	if got := liveInfoField(t, admin, "errorstats", "errorstat_UNACKED"); got != "count=1" {
		t.Errorf("errorstat_UNACKED %q", got)
	}
	// A read of the unacknowledged write: UNACKED at the timeout, not
	// the value.
	b := l.dial(t)
	b.send("GET", "k")
	waitHeld(t, admin, 1)
	l.clk.Advance(100 * time.Millisecond)
	// (0 of 2: the master's offset has moved past the replica's ACK, by
	// the GETACK sent for the read.)
	want = "-UNACKED Read not served: the writes it may see are acknowledged by 0 of 2 required replicas within 100 ms"
	if got := b.read(); got != want {
		t.Fatalf("read timed out: %q, want %q", got, want)
	}
	if got := liveInfoField(t, admin, "replication", "sync_ack_read_timeouts"); got != "1" {
		t.Errorf("sync_ack_read_timeouts %s", got)
	}
}

// TestSyncAckPipelineOrder: commands pipelined behind a held write wait
// behind it and reply in order; each write is held on its own.
func TestSyncAckPipelineOrder(t *testing.T) {
	l, rep, admin := syncAckSetup(t, 1, 0)
	a := l.dial(t)
	a.send("SET", "k", "1")
	a.send("GET", "k")
	a.send("INCR", "k")
	a.send("GET", "k")
	waitHeld(t, admin, 1)
	// The INCR has not run: the GET behind the held SET waits too.
	if got := liveInfoField(t, admin, "commandstats", "cmdstat_incr"); got != "" {
		t.Fatalf("INCR ran while the SET is held: %s", got)
	}
	ackAll(t, rep, admin)
	if got := a.read(); got != "+OK" {
		t.Fatalf("SET: %s", got)
	}
	if got := a.read(); got != `"1"` {
		t.Fatalf("GET: %s", got)
	}
	// The INCR is held now.
	eventually(t, "the INCR to be held", func() bool {
		return liveInfoField(t, admin, "replication", "sync_ack_held_writes") == "2"
	})
	waitHeld(t, admin, 1)
	ackAll(t, rep, admin)
	if got := a.read(); got != "(integer) 2" {
		t.Fatalf("INCR: %s", got)
	}
	if got := a.read(); got != `"2"` {
		t.Fatalf("GET: %s", got)
	}
}

// TestSyncAckMultiAndScript: a transaction waits once, after EXEC, for its
// final offset (its QUEUED replies are not held); a script after it ran;
// WAIT itself is WAIT.
func TestSyncAckMultiAndScript(t *testing.T) {
	l, rep, admin := syncAckSetup(t, 1, 0)
	a := l.dial(t)
	if got := a.do("MULTI"); got != "+OK" {
		t.Fatal(got)
	}
	if got := a.do("SET", "k", "1"); got != "+QUEUED" {
		t.Fatal(got)
	}
	if got := a.do("INCR", "k"); got != "+QUEUED" {
		t.Fatal(got)
	}
	a.send("EXEC")
	waitHeld(t, admin, 1)
	ackAll(t, rep, admin)
	if got := a.read(); !strings.Contains(got, "OK") || !strings.Contains(got, "2") {
		t.Fatalf("EXEC: %s", got)
	}
	if got := liveInfoField(t, admin, "replication", "sync_ack_held_writes"); got != "1" {
		t.Errorf("sync_ack_held_writes %s after one EXEC", got)
	}
	a.send("EVAL", "redis.call('set', KEYS[1], 'x'); return 7", "1", "k")
	waitHeld(t, admin, 1)
	ackAll(t, rep, admin)
	if got := a.read(); got != "(integer) 7" {
		t.Fatalf("EVAL: %s", got)
	}
	// A read-only script and WAIT return at once (WAIT: acknowledged).
	if got := a.do("EVAL", "return redis.call('get', KEYS[1])", "1", "k"); got != `"x"` {
		t.Fatalf("read-only EVAL: %s", got)
	}
	if got := a.do("WAIT", "1", "0"); got != "(integer) 1" {
		t.Fatalf("WAIT: %s", got)
	}
	if got := liveInfoField(t, admin, "replication", "sync_ack_held_writes"); got != "2" {
		t.Errorf("sync_ack_held_writes %s", got)
	}
}

// TestSyncAckClientGone: a client that disconnects while its write is
// held is dropped by the cron's sweep, as a parked WAIT.
func TestSyncAckClientGone(t *testing.T) {
	l, _, admin := syncAckSetup(t, 1, 0)
	a := l.dial(t)
	a.send("SET", "k", "v")
	waitHeld(t, admin, 1)
	a.c.Close()
	eventually(t, "the gone client to be unblocked", func() bool {
		l.s.mu.Lock()
		l.s.blockedCron()
		l.s.mu.Unlock()
		return liveInfoField(t, admin, "replication", "sync_ack_waiting_clients") == "0"
	})
	// Never acknowledged: a read would be held too; off, it shows the
	// write applied.
	if got := admin.do("CONFIG", "SET", "min-replicas-ack", "0"); got != "+OK" {
		t.Fatal(got)
	}
	if got := admin.do("GET", "k"); got != `"v"` {
		t.Fatalf("GET: %s", got)
	}
}

// TestSyncAckOff: the directives are Vigil's own: CONFIG GET * does
// not list them, CONFIG GET by name does.
func TestSyncAckOff(t *testing.T) {
	l := startLive(t, "--min-replicas-ack", "1", "--min-replicas-ack-timeout", "50")
	a := l.dial(t)
	if got := a.do("CONFIG", "GET", "min-replicas-ack"); !strings.Contains(got, `"1"`) {
		t.Fatalf("CONFIG GET: %s", got)
	}
	if got := a.do("CONFIG", "GET", "*"); strings.Contains(got, "min-replicas-ack") {
		t.Fatalf("CONFIG GET * lists the Vigil directives")
	}
	// No replicas at all: a write waits and times out, never a silent success.
	a.send("SET", "k", "v")
	waitHeld(t, l.dial(t), 1)
	l.clk.Advance(50 * time.Millisecond)
	if got := a.read(); !strings.HasPrefix(got, "-UNACKED Write may or may not be applied: acknowledged by 0 of 1 required replicas within 50 ms") {
		t.Fatalf("no replicas: %s", got)
	}
}

// TestSyncAckPublishNotHeld: PUBLISH propagates but changes no data, so its
// reply is not held (a sentinel's hello, and the PING queued behind it,
// must not wait for replicas); a write pipelined behind it still is.
func TestSyncAckPublishNotHeld(t *testing.T) {
	l, rep, admin := syncAckSetup(t, 1, 0)
	a := l.dial(t)
	if got := a.do("PUBLISH", "__sentinel__:hello", "x"); got != "(integer) 0" {
		t.Fatalf("PUBLISH: %s", got)
	}
	if got := a.do("SPUBLISH", "ch", "x"); got != "(integer) 0" {
		t.Fatalf("SPUBLISH: %s", got)
	}
	a.send("SET", "k", "v")
	waitHeld(t, admin, 1)
	ackAll(t, rep, admin)
	if got := a.read(); got != "+OK" {
		t.Fatalf("SET after ACK: %s", got)
	}
}

// TestSyncAckHeldWriteOnDemotion: a write held when the master turns into
// a replica (REPLICAOF, as the sentinels demote it) ran: its client gets
// UNACKED ("may or may not be applied"), not UNBLOCKED.
func TestSyncAckHeldWriteOnDemotion(t *testing.T) {
	l, _, admin := syncAckSetup(t, 1, 0)
	a := l.dial(t)
	a.send("SET", "k", "v")
	waitHeld(t, admin, 1)
	if got := admin.do("REPLICAOF", "127.0.0.1", "1"); got != "+OK" {
		t.Fatalf("REPLICAOF: %s", got)
	}
	want := "-UNACKED Write may or may not be applied: acknowledged by 0 of 1 required replicas before this master turned into a replica"
	if got := a.read(); got != want {
		t.Fatalf("held write on demotion: %q, want %q", got, want)
	}
	waitHeld(t, admin, 0)
}
