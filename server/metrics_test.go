package server

import (
	"strings"
	"testing"
)

// TestMetricsSnapshot: the snapshot is INFO everything and the latency
// histograms of the commands that ran, their counts equal to commandstats'
// calls.
func TestMetricsSnapshot(t *testing.T) {
	ts := newTestServer(t)
	c := ts.client()
	for i := 0; i < 3; i++ {
		ts.do(c, "SET", "k", "v")
	}
	ts.do(c, "GET", "k")
	info, lat := ts.s.MetricsSnapshot()
	for _, want := range []string{"# Server\r\n", "# Commandstats\r\n", "cmdstat_set:calls=3,", "# Keyspace\r\ndb0:keys=1,"} {
		if !strings.Contains(info, want) {
			t.Errorf("snapshot INFO lacks %q", want)
		}
	}
	counts := map[string]uint64{}
	for _, l := range lat {
		for _, n := range l.Buckets {
			counts[l.Cmd] += n
		}
	}
	if counts["set"] != 3 || counts["get"] != 1 {
		t.Errorf("histogram counts %v, want set 3 get 1", counts)
	}
}
