package server

import "testing"

// TestPubSubOrderGuarantee pins the ordering Vigil gives pub/sub across
// connections (README, "Not there yet"): commands of one connection run in
// the order sent, pipelined or not, and a command sent after the reply to
// another connection's command was read sees its effect. Redis's own
// tests also expect an UNSUBSCRIBE whose reply was not read yet to be
// served before a PUBLISH sent afterwards on another connection (its
// single event loop reads them in arrival order): Vigil reads each
// connection on its own goroutine, and PUBLISH and the PUBSUB counts wait
// for the subscribers' arrived input (order.go; the last case below, and
// pubsub_arrival_test.go many times over, against redis-server too).
func TestPubSubOrderGuarantee(t *testing.T) {
	l := startLive(t)
	a, b := l.dial(t), l.dial(t)
	a.send("SUBSCRIBE", "ch")
	if got := a.read(); got != `["subscribe", "ch", (integer) 1]` {
		t.Fatal(got)
	}
	if got := b.do("PUBLISH", "ch", "m1"); got != "(integer) 1" {
		t.Fatalf("PUBLISH to a subscriber: %s", got)
	}
	if got := a.read(); got != `["message", "ch", "m1"]` {
		t.Fatal(got)
	}
	// Causal order: the UNSUBSCRIBE's reply was read before PUBLISH.
	a.send("UNSUBSCRIBE")
	if got := a.read(); got != `["unsubscribe", "ch", (integer) 0]` {
		t.Fatal(got)
	}
	if got := b.do("PUBLISH", "ch", "m2"); got != "(integer) 0" {
		t.Fatalf("PUBLISH after the UNSUBSCRIBE was answered: %s", got)
	}
	// One connection, pipelined: SUBSCRIBE then PUBLISH from the same
	// (RESP3) client sees the subscription.
	if got := b.do("HELLO", "3"); got == "" {
		t.Fatal("HELLO 3")
	}
	b.send("SUBSCRIBE", "x")
	b.send("PUBLISH", "x", "self")
	for _, want := range []string{`>["subscribe", "x", (integer) 1]`, `>["message", "x", "self"]`, "(integer) 1"} {
		if got := b.read(); got != want {
			t.Fatalf("pipelined SUBSCRIBE, PUBLISH: got %s, want %s", got, want)
		}
	}
	// Arrival order: an UNSUBSCRIBE whose reply is not read yet is served
	// before a PUBLISH sent afterwards on another connection.
	a.send("SUBSCRIBE", "ch")
	if got := a.read(); got != `["subscribe", "ch", (integer) 1]` {
		t.Fatal(got)
	}
	a.send("UNSUBSCRIBE")
	if got := l.dial(t).do("PUBLISH", "ch", "m3"); got != "(integer) 0" {
		t.Fatalf("PUBLISH after an UNSUBSCRIBE not answered yet: %s", got)
	}
}
