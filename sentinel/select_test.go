package sentinel

import (
	"testing"
)

func TestCompareReplicas(t *testing.T) {
	r := func(prio int, off uint64, id string) *instance {
		return &instance{slavePriority: prio, slaveReplOffset: off, runID: id}
	}
	tests := []struct {
		name string
		a, b *instance
		want int
	}{
		{"lower priority wins", r(10, 0, idC), r(100, 999, idA), -1},
		{"higher priority loses", r(100, 999, idA), r(10, 0, idC), 1},
		{"larger offset wins", r(100, 500, idC), r(100, 400, idA), -1},
		{"smaller offset loses", r(100, 400, idA), r(100, 500, idC), 1},
		{"run id ascending", r(100, 5, idA), r(100, 5, idB), -1},
		{"run id case-insensitive", r(100, 5, "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"), r(100, 5, idB), -1},
		{"run id equal ignoring case", r(100, 5, "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"), r(100, 5, idA), 0},
		{"missing run id sorts last", r(100, 5, ""), r(100, 5, idC), 1},
		{"both missing", r(100, 5, ""), r(100, 5, ""), 0},
	}
	for _, tc := range tests {
		if got := compareReplicas(tc.a, tc.b); got != tc.want {
			t.Errorf("%s: got %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestSelectReplica is sentinelSelectSlave's exclusion table plus ranking.
func TestSelectReplica(t *testing.T) {
	const now = t0 + 100_000
	type rep struct {
		port        int
		prio        int
		off         uint64
		sdown       bool
		disconn     bool
		pingAge     int64 // ms since the last valid PING reply
		infoAge     int64
		linkDown    int64 // master_link_down_time
		wantExclude string
	}
	tests := []struct {
		name        string
		masterSDown int64 // SDOWN age of the master, 0 = not SDOWN
		reps        []rep
		want        int // port of the chosen replica, 0 = none
	}{
		{"best offset", 3000, []rep{
			{port: 1, prio: 100, off: 10},
			{port: 2, prio: 100, off: 20},
		}, 2},
		{"priority beats offset", 3000, []rep{
			{port: 1, prio: 50, off: 10},
			{port: 2, prio: 100, off: 20},
		}, 1},
		{"exclusions", 3000, []rep{
			{port: 1, prio: 0, off: 99, wantExclude: "priority-zero"},
			{port: 2, prio: 100, off: 98, sdown: true, wantExclude: "down"},
			{port: 3, prio: 100, off: 97, disconn: true, wantExclude: "disconnected"},
			{port: 4, prio: 100, off: 96, pingAge: 5001, wantExclude: "ping-reply-too-old"},
			{port: 5, prio: 100, off: 95, infoAge: 5001, wantExclude: "info-too-old"},
			// limit: SDOWN age 3000 + 10 x down-after (5000) = 53000
			{port: 6, prio: 100, off: 94, linkDown: 53001, wantExclude: "link-down-too-long"},
			{port: 7, prio: 100, off: 10, linkDown: 53000},
			{port: 8, prio: 100, off: 5, pingAge: 5000, infoAge: 5000},
		}, 7},
		{"master not SDOWN: INFO valid for 30 s, link limit 10 x down-after", 0, []rep{
			{port: 1, prio: 100, off: 9, infoAge: 29000, linkDown: 50001, wantExclude: "link-down-too-long"},
			{port: 2, prio: 100, off: 8, infoAge: 29000},
			{port: 3, prio: 100, off: 99, infoAge: 30001, wantExclude: "info-too-old"},
		}, 2},
		{"nobody", 3000, []rep{{port: 1, prio: 0, wantExclude: "priority-zero"}}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCore(t)
			c.now = now
			m := c.masters["mymaster"]
			if tc.masterSDown > 0 {
				m.flags |= fSDown
				m.sdownSince = now - tc.masterSDown
			}
			maxDown := m.downAfter * 10
			if tc.masterSDown > 0 {
				maxDown += tc.masterSDown
			}
			for _, r := range tc.reps {
				ri, err := c.createInstance("", fSlave, "10.0.0.1", r.port, 2, m)
				if err != "" {
					t.Fatal(err)
				}
				ri.slavePriority, ri.slaveReplOffset = r.prio, r.off
				ri.masterLinkDownTime = r.linkDown
				ri.infoRefresh = now - r.infoAge
				ri.link.lastAvail = now - r.pingAge
				if !r.disconn {
					ri.link.cc, ri.link.pc = connUp, connUp
				}
				if r.sdown {
					ri.flags |= fSDown
				}
				if got := c.replicaExcluded(m, ri, maxDown); got != r.wantExclude {
					t.Errorf("port %d: excluded %q, want %q", r.port, got, r.wantExclude)
				}
			}
			got := c.selectReplica(m)
			switch {
			case tc.want == 0 && got != nil:
				t.Errorf("chose %s, want none", got.name)
			case tc.want != 0 && (got == nil || got.addr.Port != tc.want):
				t.Errorf("chose %v, want port %d", got, tc.want)
			}
		})
	}
}
