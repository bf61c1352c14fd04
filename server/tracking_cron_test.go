package server

import (
	"strings"
	"testing"
	"time"
)

// TestTrackingTableLimitInCronVsRedis is tracking.tcl's "Tracking gets
// notification on tracking table key eviction" on Vigil and redis-server
// 7.0.15: after CONFIG SET tracking-table-max-keys 1 with two keys
// tracked, serverCron evicts one (trackingLimitUsedSlots) and its
// invalidation reaches the redirection client although no command
// follows. Vigil evicted only before the next command.
func TestTrackingTableLimitInCronVsRedis(t *testing.T) {
	l, dialRedis := startLiveBesideRedis(t)
	for name, dial := range map[string]func() *rconn{"redis": dialRedis, "vigil": func() *rconn { return l.dial(t) }} {
		red, c := dial(), dial()
		rid := red.id()
		red.do("SUBSCRIBE", "__redis__:invalidate")
		c.do("CLIENT", "TRACKING", "on", "REDIRECT", rid, "NOLOOP")
		c.do("MSET", "key1", "1", "key2", "2")
		c.do("MGET", "key1", "key2")
		if got := c.do("CONFIG", "SET", "tracking-table-max-keys", "1"); got != "+OK" {
			t.Fatalf("%s: CONFIG SET: %s", name, got)
		}
		if name == "vigil" {
			l.clk.Advance(200 * time.Millisecond) // the cron runs on the fake clock
		}
		got := red.read()
		if !strings.Contains(got, `"__redis__:invalidate", ["key1"]]`) && !strings.Contains(got, `"__redis__:invalidate", ["key2"]]`) {
			t.Errorf("%s: redirection client got %s", name, got)
		}
		c.do("CONFIG", "SET", "tracking-table-max-keys", "0")
	}
}
