package replication

import (
	"math/rand"
	"strings"
	"testing"
)

const (
	idA = "3cf651151ef4f51d549995123ba758ea40a79ed7"
	idB = "70932932034102433c946d9b83478bd952200cb6"
	idC = "27249fe065a54cfbb2842134e9f3447ee7b8a9f6"
)

// A master whose history is idA up to and including offset 541 (so replid2 is
// valid for PSYNC offsets <= 542) and idB after, with a backlog holding bytes
// 400..1000.
func promotedState() MasterState {
	return MasterState{
		IDs:              IDs{ID: idB, ID2: idA, SecondOffset: 542},
		MasterReplOffset: 1000,
		Backlog:          BacklogWindow{Active: true, First: 400, Histlen: 601},
		Replicas:         2,
	}
}

func TestDecide(t *testing.T) {
	st := promotedState()
	noBacklog := st
	noBacklog.Backlog = BacklogWindow{}
	noBacklog.Replicas = 0
	fresh := MasterState{IDs: IDs{ID: idB, ID2: NoID, SecondOffset: -1}}
	replicaDown := st
	replicaDown.IsReplica = true
	replicaUp := replicaDown
	replicaUp.LinkUp = true
	failing := st
	failing.FailingOver = true

	psync := func(id, off string) PsyncRequest { return PsyncRequest{ReplID: id, Offset: off, PSYNC2: true} }
	old := func(id, off string) PsyncRequest { return PsyncRequest{ReplID: id, Offset: off} }

	for _, c := range []struct {
		name  string
		req   PsyncRequest
		st    MasterState
		want  Outcome
		reply string
		off   int64
	}{
		// strcasecmp(master_replid, server.replid) == 0: any offset in the window.
		{"replid, first byte of the window", psync(idB, "400"), st, PsyncContinue, "+CONTINUE " + idB + "\r\n", 400},
		{"replid, middle", psync(idB, "700"), st, PsyncContinue, "+CONTINUE " + idB + "\r\n", 700},
		{"replid, last byte", psync(idB, "1000"), st, PsyncContinue, "+CONTINUE " + idB + "\r\n", 1000},
		{"replid, nothing missing (offset+histlen)", psync(idB, "1001"), st, PsyncContinue, "+CONTINUE " + idB + "\r\n", 1001},
		{"replid compared case-insensitively (strcasecmp)", psync(strings.ToUpper(idB), "700"), st, PsyncContinue, "+CONTINUE " + idB + "\r\n", 700},
		// psync_offset < server.repl_backlog->offset
		{"replid, one before the window", psync(idB, "399"), st, PsyncFull, "", 0},
		// psync_offset > server.repl_backlog->offset + histlen
		{"replid, one past the end", psync(idB, "1002"), st, PsyncFull, "", 0},
		{"replid, far past the end", psync(idB, "99999"), st, PsyncFull, "", 0},
		// replid2: valid while psync_offset <= second_replid_offset.
		{"replid2 below second offset", psync(idA, "500"), st, PsyncContinue, "+CONTINUE " + idB + "\r\n", 500},
		{"replid2 at second offset", psync(idA, "542"), st, PsyncContinue, "+CONTINUE " + idB + "\r\n", 542},
		{"replid2 one past second offset", psync(idA, "543"), st, PsyncFull, "", 0},
		{"replid2 inside ID window but before backlog", psync(idA, "399"), st, PsyncFull, "", 0},
		// "+CONTINUE" without the id for replicas that did not send capa psync2.
		{"no psync2 capa", old(idB, "700"), st, PsyncContinue, "+CONTINUE\r\n", 700},
		{"no psync2 capa via replid2", old(idA, "542"), st, PsyncContinue, "+CONTINUE\r\n", 542},
		// Unknown ID and "?".
		{"unknown replid", psync(idC, "700"), st, PsyncFull, "", 0},
		{"forced full sync ? -1", psync("?", "-1"), st, PsyncFull, "", 0},
		{"unset replid2 (all zeros) never matches", psync(NoID, "-1"), fresh, PsyncFull, "", 0},
		// No backlog.
		{"no backlog", psync(idB, "1001"), noBacklog, PsyncFull, "", 0},
		// Bad offset argument.
		{"offset not an integer", psync(idB, "12a"), st, PsyncReject, "-ERR value is not an integer or out of range\r\n", 0},
		{"offset with plus sign", psync(idB, "+5"), st, PsyncReject, "-ERR value is not an integer or out of range\r\n", 0},
		// The syncCommand checks before masterTryPartialResynchronization.
		{"already a replica", PsyncRequest{ReplID: idB, Offset: "700", AlreadyReplica: true}, st, PsyncIgnore, "", 0},
		{"failing over", psync(idB, "700"), failing, PsyncReject, "-NOMASTERLINK Can't SYNC while failing over\r\n", 0},
		{"replica with link down", psync(idB, "700"), replicaDown, PsyncReject, "-NOMASTERLINK Can't SYNC while not connected with my master\r\n", 0},
		{"replica with link up serves", psync(idB, "700"), replicaUp, PsyncContinue, "+CONTINUE " + idB + "\r\n", 700},
		{"pending output", PsyncRequest{ReplID: idB, Offset: "700", PendingOutput: true}, st, PsyncReject, "-ERR SYNC and PSYNC are invalid with pending output\r\n", 0},
		{"SYNC is always full", PsyncRequest{Sync: true}, st, PsyncFull, "", 0},
		// A filtered RDB (rdb-filter-only) goes over the socket only.
		{"filtered SYNC without capa eof", PsyncRequest{Sync: true, Filtered: true}, st, PsyncReject, "-ERR Filtered replica requires EOF capability\r\n", 0},
		{"filtered PSYNC without capa eof", PsyncRequest{ReplID: idB, Offset: "700", Filtered: true}, st, PsyncReject, "-ERR Filtered replica requires EOF capability\r\n", 0},
		{"filtered SYNC with capa eof", PsyncRequest{Sync: true, Filtered: true, CapaEOF: true}, st, PsyncFull, "", 0},
		{"pending output before the filter check", PsyncRequest{Sync: true, Filtered: true, PendingOutput: true}, st, PsyncReject, "-ERR SYNC and PSYNC are invalid with pending output\r\n", 0},
		{"PSYNC FAILOVER with my replid promotes", PsyncRequest{ReplID: idB, Offset: "700", Failover: true}, replicaUp, PsyncPromote, "", 0},
		{"PSYNC FAILOVER with another replid", PsyncRequest{ReplID: idA, Offset: "700", Failover: true}, replicaUp, PsyncReject, "-ERR PSYNC FAILOVER replid must match my replid.\r\n", 0},
		{"PSYNC FAILOVER to a master", PsyncRequest{ReplID: idB, Offset: "700", Failover: true}, st, PsyncReject, "-ERR PSYNC FAILOVER can't be sent to a master.\r\n", 0},
		{"PSYNC FAILOVER with a down link still promotes", PsyncRequest{ReplID: idB, Offset: "700", Failover: true}, replicaDown, PsyncPromote, "", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := Decide(c.req, c.st)
			if d.Outcome != c.want || d.Reply != c.reply || (c.want == PsyncContinue && d.Offset != c.off) {
				t.Fatalf("got %v %q off %d; want %v %q off %d (%s)", d.Outcome, d.Reply, d.Offset, c.want, c.reply, c.off, d.Log)
			}
		})
	}
}

func TestDecideStatsAndBacklogCreation(t *testing.T) {
	st := promotedState()
	d := Decide(PsyncRequest{ReplID: idB, Offset: "700"}, st)
	if !d.PartialOK || d.PartialErr || d.Full {
		t.Fatalf("continue stats %+v", d)
	}
	d = Decide(PsyncRequest{ReplID: idC, Offset: "700"}, st)
	if d.PartialOK || !d.PartialErr || !d.Full || d.CreateBacklog {
		t.Fatalf("mismatch stats %+v", d)
	}
	// "?" is a deliberate full sync: not counted in sync_partial_err.
	d = Decide(PsyncRequest{ReplID: "?", Offset: "-1"}, st)
	if d.PartialErr || !d.Full {
		t.Fatalf("? stats %+v", d)
	}
	// First replica and no backlog: new history (new replid, backlog).
	fresh := MasterState{IDs: IDs{ID: idB, ID2: NoID, SecondOffset: -1}}
	d = Decide(PsyncRequest{ReplID: "?", Offset: "-1"}, fresh)
	if !d.CreateBacklog || d.Outcome != PsyncFull {
		t.Fatalf("fresh %+v", d)
	}
	// A second replica arriving before the backlog exists (impossible in
	// Redis, the first one creates it) would not create it again.
	fresh.Replicas = 1
	if Decide(PsyncRequest{Sync: true}, fresh).CreateBacklog {
		t.Fatal("created the backlog for a second replica")
	}
	if d := Decide(PsyncRequest{Sync: true}, st); !d.PrePsync || !d.Full || d.PartialErr {
		t.Fatalf("SYNC %+v", d)
	}
}

// TestPromotionThenPsync follows the observed failover rehearsal: a replica
// at offset 541 is promoted (shiftReplicationId), its old master then asks
// PSYNC <old id> 542 and gets +CONTINUE <new id>.
func TestPromotionThenPsync(t *testing.T) {
	rnd := rand.New(rand.NewSource(1))
	ids := IDs{ID: idA, ID2: NoID, SecondOffset: -1}
	b := NewBacklog(DefaultBacklogSize, 0)
	b.Append(streamBytes(1, 541))
	ids.Shift(b.End(), rnd)
	if ids.ID2 != idA || ids.SecondOffset != 542 || ids.ID == idA || !ValidID(ids.ID) {
		t.Fatalf("shift %+v", ids)
	}
	st := MasterState{IDs: ids, MasterReplOffset: b.End(), Backlog: b.Window()}
	d := Decide(PsyncRequest{ReplID: idA, Offset: "542", PSYNC2: true}, st)
	if d.Outcome != PsyncContinue || d.Reply != "+CONTINUE "+ids.ID+"\r\n" || d.Offset != 542 {
		t.Fatalf("%+v", d)
	}
	// After one write on the new master, the old id is still good for 542
	// (the sibling has history up to 541) but not for 543.
	b.Append([]byte("x"))
	st = MasterState{IDs: ids, MasterReplOffset: b.End(), Backlog: b.Window()}
	if d := Decide(PsyncRequest{ReplID: idA, Offset: "542"}, st); d.Outcome != PsyncContinue {
		t.Fatalf("542 after a write: %+v", d)
	}
	if d := Decide(PsyncRequest{ReplID: idA, Offset: "543"}, st); d.Outcome != PsyncFull {
		t.Fatalf("543 after a write: %+v", d)
	}
}

func TestIDs(t *testing.T) {
	rnd := rand.New(rand.NewSource(7))
	ids := NewIDs(rnd)
	if !ValidID(ids.ID) || ids.ID2 != NoID || ids.SecondOffset != -1 || strings.ToLower(ids.ID) != ids.ID {
		t.Fatalf("%+v", ids)
	}
	again := NewIDs(rand.New(rand.NewSource(7)))
	if again != ids {
		t.Fatal("same seed, different ids")
	}
	first := ids.ID
	ids.Shift(100, rnd)
	if ids.ID2 != first || ids.SecondOffset != 101 || ids.ID == first {
		t.Fatalf("shift %+v", ids)
	}
	ids.Reset(rnd)
	if ids.ID2 != NoID || ids.SecondOffset != -1 {
		t.Fatalf("reset %+v", ids)
	}
	ids.AdoptContinue(idB, idA, 77)
	if ids != (IDs{ID: idB, ID2: idA, SecondOffset: 78}) {
		t.Fatalf("continue %+v", ids)
	}
	ids.AdoptFullSync(idC)
	if ids != (IDs{ID: idC, ID2: NoID, SecondOffset: -1}) {
		t.Fatalf("fullsync %+v", ids)
	}
	for s, want := range map[string]bool{idA: true, strings.ToUpper(idA): true, idA[:39]: false, idA + "0": false, "?": false, idA[:39] + "g": false} {
		if ValidID(s) != want {
			t.Errorf("ValidID(%q) != %v", s, want)
		}
	}
	if got := FullResyncLine(idA, 28); got != "+FULLRESYNC "+idA+" 28\r\n" {
		t.Fatal(got)
	}
}
