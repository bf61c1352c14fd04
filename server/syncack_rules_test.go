package server

import (
	"bufio"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSyncAckReplicaNeverHolds: min-replicas-ack on a replica (timeout 0:
// a held reply would never come) holds nothing. The master's stream is
// applied without waiting (every write arrives, in order), and a client's
// write to a writable replica (replica-read-only no) replies at once: such
// a write is local to the replica (Redis 7.0 propagates it to no one), so
// there is no acknowledgement to wait for, and the setting is for masters
// (docs/safety.md).
func TestSyncAckReplicaNeverHolds(t *testing.T) {
	_, maddr := startLiveTCP(t, "--repl-diskless-sync", "no")
	host, port, _ := net.SplitHostPort(maddr)
	m := dialTCPLive(t, maddr)
	r, _ := startLiveTCP(t, "--min-replicas-ack", "1", "--min-replicas-ack-timeout", "0")
	rc := r.dial(t)
	if got := rc.do("REPLICAOF", host, port); got != "+OK" {
		t.Fatalf("REPLICAOF: %s", got)
	}
	eventually(t, "the replica's link to be up", func() bool {
		return liveInfoField(t, rc, "replication", "master_link_status") == "up"
	})
	for i := 0; i < 20; i++ {
		if got := m.do("SET", "k"+strconv.Itoa(i), strconv.Itoa(i)); got != "+OK" {
			t.Fatalf("SET on the master: %s", got)
		}
	}
	if got := m.do("INCR", "k19"); got != "(integer) 20" {
		t.Fatalf("INCR: %s", got)
	}
	eventually(t, "the replica to apply the whole stream", func() bool {
		return rc.do("GET", "k19") == `"20"`
	})
	if got := rc.do("DBSIZE"); got != "(integer) 20" {
		t.Fatalf("DBSIZE on the replica: %s", got)
	}
	if got := liveInfoField(t, rc, "replication", "sync_ack_held_writes"); got != "0" {
		t.Fatalf("the replica held %s writes of its master's stream", got)
	}

	// A writable replica: its client's write replies at once (rconn's read
	// deadline is 5 s; a held reply, with timeout 0, would never come).
	if got := rc.do("CONFIG", "SET", "replica-read-only", "no"); got != "+OK" {
		t.Fatalf("CONFIG SET replica-read-only: %s", got)
	}
	if got := rc.do("SET", "local", "1"); got != "+OK" {
		t.Fatalf("SET on the writable replica: %s", got)
	}
	if got := rc.do("INCR", "local"); got != "(integer) 2" {
		t.Fatalf("INCR on the writable replica: %s", got)
	}
	for field, want := range map[string]string{"sync_ack_held_writes": "0", "sync_ack_waiting_clients": "0", "min_replicas_ack": "1"} {
		if got := liveInfoField(t, rc, "replication", field); got != want {
			t.Errorf("replica INFO %s: %s, want %s", field, got, want)
		}
	}
	// Its master, which never had the mode on, shows none of it.
	if got := liveInfoField(t, m, "replication", "min_replicas_ack"); got != "" {
		t.Errorf("master INFO min_replicas_ack %q", got)
	}
}

// dialTCPLive is rconn on a TCP address.
func dialTCPLive(t *testing.T, addr string) *rconn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rconn{t: t, c: c, br: bufio.NewReader(c)}
}

// TestSyncAckAOFLoadNeverWaits: loading the AOF at startup replays its
// writes without waiting for acknowledgements, with the mode on and no
// replica at all (timeout 0: a held write would stop the load for good).
func TestSyncAckAOFLoadNeverWaits(t *testing.T) {
	dir := t.TempDir()
	l, stop := startLiveAOF(t, dir)
	a := l.dial(t)
	for i := 0; i < 50; i++ {
		if got := a.do("RPUSH", "list", strconv.Itoa(i)); got != "(integer) "+strconv.Itoa(i+1) {
			t.Fatalf("RPUSH: %s", got)
		}
	}
	if got := a.do("SET", "k", "v"); got != "+OK" {
		t.Fatalf("SET: %s", got)
	}
	stop()

	l2, _ := startLiveAOF(t, dir, "--min-replicas-ack", "1", "--min-replicas-ack-timeout", "0")
	b := l2.dial(t)
	// INFO is not held (with no replica, reads are: CONFIG SET turns the
	// mode off to read the values back).
	eventually(t, "the AOF to be loaded", func() bool {
		return strings.HasPrefix(liveInfoField(t, b, "keyspace", "db0"), "keys=2,")
	})
	for field, want := range map[string]string{"sync_ack_held_writes": "0", "sync_ack_waiting_clients": "0"} {
		if got := liveInfoField(t, b, "replication", field); got != want {
			t.Errorf("INFO %s after loading: %s, want %s", field, got, want)
		}
	}
	if got := b.do("CONFIG", "SET", "min-replicas-ack", "0"); got != "+OK" {
		t.Fatal(got)
	}
	if got := b.do("LLEN", "list"); got != "(integer) 50" {
		t.Fatalf("LLEN after loading: %s", got)
	}
	if got := b.do("GET", "k"); got != `"v"` {
		t.Fatalf("GET after loading: %s", got)
	}
}

// TestSyncAckSaveNotHeld: SAVE resets the dirty counter; that is not a
// write, and its reply is not held (the hold used to trigger on any change
// of dirty, so SAVE after a write waited and timed out with UNACKED).
func TestSyncAckSaveNotHeld(t *testing.T) {
	l := startLive(t, "--min-replicas-ack", "1", "--min-replicas-ack-timeout", "50")
	a := l.dial(t)
	a.send("SET", "k", "v")
	waitHeld(t, l.dial(t), 1)
	l.clk.Advance(50 * time.Millisecond)
	if got := a.read(); !strings.HasPrefix(got, "-UNACKED ") {
		t.Fatalf("SET with no replica: %s", got)
	}
	// The fake clock stands still from here: a held reply would not come.
	if got := a.do("SAVE"); got != "+OK" {
		t.Fatalf("SAVE: %s", got)
	}
	if got := liveInfoField(t, a, "keyspace", "db0"); !strings.HasPrefix(got, "keys=1,") {
		t.Fatalf("INFO keyspace: %s", got)
	}
}
