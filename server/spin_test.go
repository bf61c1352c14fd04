//go:build linux

package server

import "testing"

// TestSpinnerHandoff: a batch that woke a replica's writer does not make
// the idle spinner spin (the replica needs the CPU); the next batch that
// fed nothing does.
func TestSpinnerHandoff(t *testing.T) {
	sp := &idleSpinner{kick: make(chan struct{}, 1)}
	kicked := func() bool {
		select {
		case <-sp.kick:
			return true
		default:
			return false
		}
	}
	sp.activity()
	if !kicked() {
		t.Fatal("a batch's end did not kick the spinner")
	}
	sp.handoff()
	sp.handoff()
	sp.activity()
	if kicked() {
		t.Fatal("a batch that fed a replica kicked the spinner")
	}
	sp.activity()
	if !kicked() {
		t.Fatal("the next batch's end did not kick the spinner")
	}
}
