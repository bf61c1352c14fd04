package sentinel

import "testing"

// TestAckSeenConfirm: an INFO of a sync-ack master carrying
// sync_ack_info_seq is confirmed (SendAckSeen) once every replica it lists
// is an ack member, after the Step's RewriteConfig (the new replicas are
// on disk first); not for a redis-server's INFO, not when the sentinel
// refused a listed address, and not for the mode's INFO without a number.
func TestAckSeenConfirm(t *testing.T) {
	c := newCore(t)
	m := c.masters["mymaster"]
	connect(c, t0+1, c.Step(t0+1, Ticked{}))
	base := "run_id:" + idC + "\r\nrole:master\r\nconnected_slaves:1\r\n" +
		"slave0:ip=127.0.0.1,port=6380,state=online,offset=10,lag=0\r\n"
	acts := c.Step(t0+10, InfoReceived{Instance: c.ref(m), Info: base + "min_replicas_ack:1\r\nsync_ack_info_seq:7\r\n"})
	seen, ok := find[SendAckSeen](acts)
	if !ok || seen.Seq != 7 || seen.RunID != idA || seen.Instance != c.ref(m) {
		t.Fatalf("no or wrong SendAckSeen: %#v", acts)
	}
	rw, iseen := -1, -1
	for i, a := range acts {
		switch a.(type) {
		case RewriteConfig:
			rw = i
		case SendAckSeen:
			iseen = i
		}
	}
	if rw < 0 || iseen < rw {
		t.Fatalf("SendAckSeen must follow the RewriteConfig that saves the new replica: %#v", acts)
	}
	r := m.replicas["127.0.0.1:6380"]
	if r == nil || !r.ackMember {
		t.Fatal("the listed replica is not an ack member")
	}
	// The same INFO again: confirmed again (the master ignores old numbers).
	if _, ok := find[SendAckSeen](c.Step(t0+20, InfoReceived{Instance: c.ref(m), Info: base + "min_replicas_ack:1\r\nsync_ack_info_seq:8\r\n"})); !ok {
		t.Fatal("a later INFO not confirmed")
	}
	// No number (mode off, or a redis-server): nothing.
	if _, ok := find[SendAckSeen](c.Step(t0+30, InfoReceived{Instance: c.ref(m), Info: base + "min_replicas_ack:1\r\n"})); ok {
		t.Fatal("confirmed an INFO without sync_ack_info_seq")
	}
	// The confirmation's reply settles the pending count like any reply.
	p := m.link.pending
	c.Step(t0+50, CommandReplied{Instance: c.ref(m)})
	if m.link.pending != p-1 {
		t.Fatalf("pending %d -> %d", p, m.link.pending)
	}
}
