package server

import (
	"os"
	"path/filepath"
	"testing"
)

// TestStartTrace: VIGIL_TRACE's writer leaves a non-empty execution trace
// once stopped, and a file it cannot create is an error, not a panic.
func TestStartTrace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.trace")
	stop, err := startTrace(path)
	if err != nil {
		t.Fatalf("startTrace: %v", err)
	}
	stop()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatalf("stat trace: %v", err)
	}
	if st.Size() == 0 {
		t.Fatal("the trace file is empty")
	}
	if _, err := startTrace(filepath.Join(dir, "missing", "run.trace")); err == nil {
		t.Fatal("startTrace into a missing directory: want an error")
	}
}
