package sentinel

import "testing"

// StampEpoch stamps only a vigil-server (vigil_version in its INFO), with
// the larger of its master's config and failover epochs.
func TestStampEpoch(t *testing.T) {
	c := newCore(t)
	m := c.masters["mymaster"]
	if _, ok := c.StampEpoch(c.ref(m)); ok {
		t.Fatal("stamp without INFO")
	}
	m.info, m.hasInfo = "# Server\r\nredis_version:7.0.15\r\nrun_id:x\r\n", true
	if _, ok := c.StampEpoch(c.ref(m)); ok {
		t.Fatal("stamp for a redis-server")
	}
	m.info = "# Server\r\nredis_version:7.0.15\r\nvigil_version:0.1.0\r\n"
	m.configEpoch, m.failoverEpoch = 3, 5
	if e, ok := c.StampEpoch(c.ref(m)); !ok || e != 5 {
		t.Fatalf("during a failover: %d %v", e, ok)
	}
	m.configEpoch = 6
	if e, ok := c.StampEpoch(c.ref(m)); !ok || e != 6 {
		t.Fatalf("after: %d %v", e, ok)
	}
	if _, ok := c.StampEpoch(Ref{ID: 999999}); ok {
		t.Fatal("stamp for an unknown instance")
	}
}
