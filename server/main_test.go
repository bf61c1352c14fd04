package server

import (
	"os"
	"testing"
)

// TestMain lets the tests run forked Lua debugging sessions: the test
// binary re-executes itself as the session's child
// (scripting_ldbfork.go), as vigil-server's main does.
func TestMain(m *testing.M) {
	MaybeRunLdbChild()
	EnableLdbFork()
	os.Exit(m.Run())
}
