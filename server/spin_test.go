//go:build linux

package server

import "testing"

// TestSpinnerSkips: a batch's end kicks the idle spinner unless the batch
// woke a replica's writer (the replica needs the CPU) or the same client
// ended the batch before too (its next request cannot come before it
// read the reply); batches of other clients in between kick it again.
func TestSpinnerSkips(t *testing.T) {
	sp := &idleSpinner{kick: make(chan struct{}, 1)}
	kicked := func() bool {
		select {
		case <-sp.kick:
			return true
		default:
			return false
		}
	}
	steps := []struct {
		handoff bool
		client  int64
		kick    bool
	}{
		{false, 1, true},  // a first batch
		{false, 2, true},  // another client's
		{false, 2, false}, // the same client again
		{false, 1, true},  // clients taking turns
		{true, 2, false},  // fed a replica
		{false, 1, true},  // the next batch of another client
		{true, 1, false},  // fed a replica, and the same client
		{false, 1, false}, // the same client
		{false, 3, true},
	}
	for i, st := range steps {
		if st.handoff {
			sp.handoff()
			sp.handoff()
		}
		sp.activity(st.client)
		if got := kicked(); got != st.kick {
			t.Fatalf("step %d (client %d, fed a replica %v): kicked %v, want %v", i, st.client, st.handoff, got, st.kick)
		}
	}
}
