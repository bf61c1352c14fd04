package server

import (
	"strings"
	"testing"
	"time"
)

// TestSyncAckUnseenReplicaNotCounted: with sentinels known, a replica's
// acknowledgements do not count toward sync-ack until every known sentinel
// confirmed (REPLCONF sentinel-seen) an INFO that listed it: the gap case,
// a replica the sentinels never saw acknowledges and vanishes, gives the
// client UNACKED (never +OK); once both sentinels confirmed, its acks count.
func TestSyncAckUnseenReplicaNotCounted(t *testing.T) {
	l, rep, admin := syncAckSetup(t, 1, 100)
	// aaaaaaaa and bbbbbbbb are vigil-sentinels (they confirmed INFOs in
	// an earlier run: persisted), eeeeeeee a redis-sentinel, never waited for.
	if got := admin.do("CONFIG", "SET", "master-known-sentinels", "aaaaaaaa bbbbbbbb eeeeeeee"); got != "+OK" {
		t.Fatalf("CONFIG SET master-known-sentinels: %s", got)
	}
	if got := admin.do("CONFIG", "SET", "master-sync-ack-sentinels", "aaaaaaaa bbbbbbbb cccccccc"); got != "+OK" {
		t.Fatalf("CONFIG SET master-sync-ack-sentinels: %s", got)
	}
	if got := liveInfoField(t, admin, "replication", "sync_ack_unseen_replicas"); got != "1" {
		t.Fatalf("sync_ack_unseen_replicas %q, want 1 (%s; INFO %q)", got, admin.do("CONFIG", "GET", "master-known-sentinels"), admin.do("INFO", "replication"))
	}
	a := l.dial(t)
	a.send("SET", "k", "v")
	waitHeld(t, admin, 1)
	off := liveInfoField(t, admin, "replication", "master_repl_offset")
	rep.r.send("REPLCONF", "ACK", off)
	eventually(t, "the replica's ACK to be recorded", func() bool {
		return strings.Contains(liveInfoField(t, admin, "replication", "slave0"), ",offset="+off+",")
	})
	if got := liveInfoField(t, admin, "replication", "sync_ack_waiting_clients"); got != "1" {
		t.Fatalf("an unseen replica's ACK released the write (waiting %s)", got)
	}
	l.clk.Advance(100 * time.Millisecond)
	want := "-UNACKED Write may or may not be applied: acknowledged by 0 of 1 required replicas within 100 ms (1 more from replicas not yet seen by every sentinel)"
	if got := a.read(); got != want {
		t.Fatalf("write acked only by an unseen replica: %q, want %q", got, want)
	}

	// The sentinels confirm an INFO listing the replica: one is not enough.
	seq := liveInfoField(t, admin, "replication", "sync_ack_info_seq")
	s1 := l.dial(t)
	if got := s1.do("CLIENT", "SETNAME", "sentinel-aaaaaaaa-cmd"); got != "+OK" {
		t.Fatal(got)
	}
	a.send("SET", "k", "w")
	waitHeld(t, admin, 1)
	off = liveInfoField(t, admin, "replication", "master_repl_offset")
	rep.r.send("REPLCONF", "ACK", off)
	if got := s1.do("REPLCONF", "sentinel-seen", seq); got != "+OK" { // key from the client name
		t.Fatalf("REPLCONF sentinel-seen: %s", got)
	}
	eventually(t, "the replica's ACK to be recorded", func() bool {
		return strings.Contains(liveInfoField(t, admin, "replication", "slave0"), ",offset="+off+",")
	})
	if got := liveInfoField(t, admin, "replication", "sync_ack_waiting_clients"); got != "1" {
		t.Fatalf("released with one of two sentinels' confirmation (waiting %s)", got)
	}
	// An INFO number never given out is ignored.
	if got := admin.do("REPLCONF", "sentinel-seen", "999999", "sentinel-id", "bbbbbbbbffff"); got != "+OK" {
		t.Fatal(got)
	}
	if got := liveInfoField(t, admin, "replication", "sync_ack_waiting_clients"); got != "1" {
		t.Fatalf("released by a confirmation of an INFO never given (waiting %s)", got)
	}
	if got := admin.do("REPLCONF", "sentinel-seen", seq, "sentinel-id", "bbbbbbbbffff"); got != "+OK" {
		t.Fatal(got)
	}
	if got := a.read(); got != "+OK" {
		t.Fatalf("held write after both confirmations: %q", got)
	}
	if got := liveInfoField(t, admin, "replication", "sync_ack_unseen_replicas"); got != "0" {
		t.Fatalf("sync_ack_unseen_replicas %q, want 0", got)
	}
	// A sentinel learned from its confirmation is known from then on
	// (persisted with the others); it confirmed an INFO listing the
	// replica, which still counts. One learned otherwise (a hello; here
	// CONFIG SET) must confirm too.
	if got := admin.do("REPLCONF", "sentinel-seen", seq, "sentinel-id", "dddddddd"); got != "+OK" {
		t.Fatal(got)
	}
	if got := admin.do("CONFIG", "GET", "master-known-sentinels"); !strings.Contains(got, "aaaaaaaa bbbbbbbb dddddddd eeeeeeee") {
		t.Fatalf("master-known-sentinels: %s", got)
	}
	if got := admin.do("CONFIG", "GET", "master-sync-ack-sentinels"); !strings.Contains(got, "aaaaaaaa bbbbbbbb cccccccc dddddddd") {
		t.Fatalf("master-sync-ack-sentinels: %s", got)
	}
	if got := liveInfoField(t, admin, "replication", "sync_ack_unseen_replicas"); got != "0" {
		t.Fatalf("sync_ack_unseen_replicas %q, want 0", got)
	}
	if got := admin.do("CONFIG", "SET", "master-known-sentinels", "aaaaaaaa bbbbbbbb cccccccc dddddddd eeeeeeee"); got != "+OK" {
		t.Fatal(got)
	}
	if got := liveInfoField(t, admin, "replication", "sync_ack_unseen_replicas"); got != "1" {
		t.Fatalf("sync_ack_unseen_replicas %q with a sentinel that never confirmed", got)
	}
}

// TestSyncAckReattachedReplicaWaits: a replica that reconnects is a new
// attachment: the confirmations its old connection had do not carry over.
func TestSyncAckReattachedReplicaWaits(t *testing.T) {
	l, rep, admin := syncAckSetup(t, 1, 0)
	if got := admin.do("CONFIG", "SET", "master-known-sentinels", "aaaaaaaa"); got != "+OK" {
		t.Fatal(got)
	}
	if got := liveInfoField(t, admin, "replication", "sync_ack_unseen_replicas"); got != "0" {
		t.Fatalf("waited for a sentinel that never confirmed (unseen %q)", got)
	}
	seq := liveInfoField(t, admin, "replication", "sync_ack_info_seq")
	if got := admin.do("REPLCONF", "sentinel-seen", seq, "sentinel-id", "aaaaaaaa"); got != "+OK" {
		t.Fatal(got)
	}
	if got := liveInfoField(t, admin, "replication", "sync_ack_unseen_replicas"); got != "0" {
		t.Fatalf("sync_ack_unseen_replicas %q, want 0", got)
	}
	rep.r.c.Close()
	eventually(t, "the replica to be dropped", func() bool {
		return liveInfoField(t, admin, "replication", "connected_slaves") == "0"
	})
	if _, got := psync(t, l, "?", -1); got != "+FULLRESYNC" {
		t.Fatalf("PSYNC: %s", got)
	}
	eventually(t, "the replica to be back", func() bool {
		return liveInfoField(t, admin, "replication", "connected_slaves") == "1"
	})
	if got := liveInfoField(t, admin, "replication", "sync_ack_unseen_replicas"); got != "1" {
		t.Fatalf("a reattached replica kept its confirmation (unseen %q)", got)
	}
}
