package replication

import (
	"strings"
	"testing"
)

func TestRefuseEmptySync(t *testing.T) {
	mine := IDs{ID: strings.Repeat("a", 40), ID2: strings.Repeat("b", 40)}
	fresh := strings.Repeat("c", 40)
	base := EmptySyncInput{Enabled: true, Followed: true, LocalKeys: 10, PayloadEmpty: true,
		MasterReplID: fresh, MyIDs: mine, Host: "10.0.0.1", Port: 6379}
	cases := []struct {
		name   string
		mod    func(*EmptySyncInput)
		refuse bool
	}{
		{"empty restart of the followed master", func(*EmptySyncInput) {}, true},
		{"guard disabled", func(in *EmptySyncInput) { in.Enabled = false }, false},
		{"operator REPLICAOF cleared it", func(in *EmptySyncInput) { in.Overridden = true }, false},
		{"first sync of a new link", func(in *EmptySyncInput) { in.Followed = false }, false},
		{"replica empty too", func(in *EmptySyncInput) { in.LocalKeys = 0 }, false},
		{"payload has keys", func(in *EmptySyncInput) { in.PayloadEmpty = false }, false},
		{"payload has keys written since a fresh start", func(in *EmptySyncInput) { in.PayloadEmpty, in.MasterFresh = false, true }, true},
		{"fresh master of the same history", func(in *EmptySyncInput) {
			in.PayloadEmpty, in.MasterFresh, in.MasterReplID = false, true, mine.ID
		}, false},
		{"same history (flushed master)", func(in *EmptySyncInput) { in.MasterReplID = mine.ID }, false},
		{"same history via ID2, case-insensitive", func(in *EmptySyncInput) { in.MasterReplID = strings.ToUpper(mine.ID2) }, false},
		{"unknown ID (pre-PSYNC SYNC)", func(in *EmptySyncInput) { in.MasterReplID = "" }, true},
	}
	for _, tc := range cases {
		in := base
		tc.mod(&in)
		got, why := RefuseEmptySync(in)
		if got != tc.refuse {
			t.Errorf("%s: refuse = %v, want %v", tc.name, got, tc.refuse)
		}
		if got && (!strings.Contains(why, "10.0.0.1:6379") || !strings.Contains(why, "10 keys") || !strings.Contains(why, "REPLICAOF 10.0.0.1 6379")) {
			t.Errorf("%s: reason %q lacks the master, the key count or the override", tc.name, why)
		}
		if !got && why != "" {
			t.Errorf("%s: reason %q without a refusal", tc.name, why)
		}
	}
}

// TestInfoRefusedEmpty: the guard's fields follow master_link_down_since_seconds
// while it holds, and are absent otherwise.
func TestInfoRefusedEmpty(t *testing.T) {
	in := Info{IsReplica: true, MasterHost: "10.0.0.1", MasterPort: 6379, LinkState: StateConnect, LinkDownSinceSeconds: 3}
	if got := InfoSection(&in); strings.Contains(got, "refused") {
		t.Fatalf("guard fields without a refusal:\n%s", got)
	}
	in.RefusedEmptyReason = "why"
	got := InfoSection(&in)
	if !strings.Contains(got, "master_link_down_since_seconds:3\r\nmaster_sync_refused_empty:1\r\nmaster_sync_refused_reason:why\r\nslave_priority:") {
		t.Fatalf("guard fields missing or misplaced:\n%s", got)
	}
}
