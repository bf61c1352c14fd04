package replication

import (
	"reflect"
	"testing"
)

// TestAckGate: a replica counts only once every known sentinel confirmed an
// INFO numbered after its attachment; confirmations of numbers never given
// out, or older ones, change nothing; a reattached replica waits again.
func TestAckGate(t *testing.T) {
	var g AckGate
	g.Start(1000)
	g.RestoreConfirmers("aaaaaaaa bbbbbbbb") // both confirmed in an earlier run
	known := []string{"aaaaaaaa", "bbbbbbbb"}
	old := g.Attach() // attached before any INFO
	if !g.Counted(old, nil) {
		t.Fatal("no sentinel known: every replica counts")
	}
	if g.Counted(old, known) {
		t.Fatal("counted before any sentinel saw it")
	}
	if g.Seen("aaaaaaaa", 1001) {
		t.Fatal("an INFO number never given out was accepted")
	}
	q1 := g.NextInfo() // lists old
	if !g.Seen("aaaaaaaa", q1) || g.Seen("aaaaaaaa", q1) {
		t.Fatal("Seen must report only a move")
	}
	if g.Counted(old, known) {
		t.Fatal("counted with one of two sentinels")
	}
	if got := g.Missing(old, known); !reflect.DeepEqual(got, []string{"bbbbbbbb"}) {
		t.Fatalf("Missing %v", got)
	}
	// A new replica attaches after INFO q1: bbbbbbbb confirming q1 counts
	// the old replica, not the new one.
	fresh := g.Attach()
	if !g.Seen("bbbbbbbb", q1) {
		t.Fatal("bbbbbbbb's first confirmation")
	}
	if !g.Counted(old, known) || g.Counted(fresh, known) {
		t.Fatalf("after q1: old %v fresh %v", g.Counted(old, known), g.Counted(fresh, known))
	}
	q2 := g.NextInfo()
	g.Seen("aaaaaaaa", q2)
	if g.Counted(fresh, known) {
		t.Fatal("fresh counted with one confirmation of q2")
	}
	g.Seen("bbbbbbbb", q2)
	if !g.Counted(fresh, known) {
		t.Fatal("fresh not counted after both confirmed q2")
	}
	// A sentinel that never confirmed (a redis-sentinel) is not waited
	// for; once it confirmed any INFO it is, and nothing counts until it
	// confirms a number after the attachment.
	known3 := append(known, "cccccccc")
	if !g.Counted(old, known3) {
		t.Fatal("waited for a sentinel that never confirmed")
	}
	if !g.Seen("cccccccc", q1) || g.Confirmers() != "aaaaaaaa bbbbbbbb cccccccc" {
		t.Fatalf("first confirmation of cccccccc: confirmers %q", g.Confirmers())
	}
	if g.Counted(fresh, known3) {
		t.Fatal("fresh counted without cccccccc's confirmation of a later INFO")
	}
	if !g.Counted(old, known3) {
		t.Fatal("old not counted though cccccccc confirmed an INFO listing it")
	}
	// The old replica reconnects: a new attachment, not counted until a
	// later INFO is confirmed by all.
	re := g.Attach()
	if g.Counted(re, known) {
		t.Fatal("a reattached replica kept counting")
	}
	if g.Seen("aaaaaaaa", q1) {
		t.Fatal("an older confirmation moved the sentinel back")
	}
	if g.Seen("", g.NextInfo()) {
		t.Fatal("an empty key was accepted")
	}
}
