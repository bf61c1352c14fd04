package server

import (
	"testing"

	"github.com/vigil-kv/vigil/server/keyspace"
)

// TestActiveExpireEffort: active-expire-effort reaches the active expire
// cycle, from the start-up configuration and from CONFIG SET: its keys per
// loop and its share of the cron period (expire.c's
// config_cycle_slow_time_perc), which the cron passes as the budget.
func TestActiveExpireEffort(t *testing.T) {
	ts := newTestServer(t, "--active-expire-effort", "4")
	if got := ts.s.ks.ActiveExpireEffort; got != 4 {
		t.Fatalf("active-expire-effort 4 at start-up: the keyspace has %d", got)
	}
	c := ts.client()
	if got := ts.do(c, "CONFIG", "SET", "active-expire-effort", "10"); got != "+OK\r\n" {
		t.Fatalf("CONFIG SET: %q", got)
	}
	if got := ts.s.ks.ActiveExpireEffort; got != 10 {
		t.Fatalf("after CONFIG SET active-expire-effort 10: the keyspace has %d", got)
	}
	// 25% + 2% per step above 1 of a 100 ms period (hz 10): 43 ms.
	if got := keyspace.SlowCycleBudget(10, ts.s.ks.ActiveExpireEffort); got != 43000 {
		t.Fatalf("slow cycle budget at effort 10, hz 10: %d us, want 43000", got)
	}
}
