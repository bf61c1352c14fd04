package testutil

import (
	"testing"
	"time"
)

// PollInterval is how often Poll evaluates its condition.
const PollInterval = 10 * time.Millisecond

// Poll calls cond every PollInterval until it returns true, and fails t
// ("timed out waiting for what") if it has not after limit. The limit only
// bounds the wait: a slow machine takes longer, never fails sooner.
func Poll(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	if !PollUntil(limit, cond) {
		t.Fatalf("timed out waiting for %s", what)
	}
}

// PollUntil calls cond every PollInterval until it returns true (true) or
// limit has passed (false), for callers that report the failure
// themselves.
func PollUntil(limit time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(PollInterval)
	}
	return true
}
