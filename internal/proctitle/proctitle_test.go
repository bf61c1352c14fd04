package proctitle

import (
	"bytes"
	"os"
	"runtime"
	"strings"
	"testing"
)

// TestSet: after Init, Set's title is what /proc/self/cmdline shows, a
// title longer than the arguments included (over the environment strings,
// which stay readable through os.Getenv); os.Args keeps the arguments.
func TestSet(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc/self/cmdline")
	}
	t.Setenv("PROCTITLE_TEST", "kept")
	// Copies: os.Args's strings before Init are the memory the title
	// takes (Init gives os.Args copies).
	args := make([]string, len(os.Args))
	for i, a := range os.Args {
		args[i] = strings.Clone(a)
	}
	Init()
	if Area() == 0 {
		t.Fatal("no area")
	}
	read := func() string {
		b, err := os.ReadFile("/proc/self/cmdline")
		if err != nil {
			t.Fatal(err)
		}
		return string(bytes.TrimRight(b, "\x00"))
	}
	long := "vigil-test " + strings.Repeat("x", min(200, Area()-20))
	for _, title := range []string{"vigil-test 127.0.0.1:6379", long} {
		Set(title)
		want := title
		if len(title) < len(args[0]) { // setproctitle's '.' where argv[0] ended
			want += strings.Repeat("\x00", len(args[0])-len(title)) + "."
		}
		if got := read(); got != want {
			t.Fatalf("cmdline %q, want %q", got, want)
		}
	}
	if len(long) <= len(strings.Join(args, " ")) {
		t.Logf("the long title (%d) fits the arguments (%d)", len(long), len(strings.Join(args, " ")))
	}
	for i, a := range args {
		if os.Args[i] != a {
			t.Fatalf("os.Args[%d] = %q, want %q", i, os.Args[i], a)
		}
	}
	if got := os.Getenv("PROCTITLE_TEST"); got != "kept" {
		t.Fatalf("environment after the title: %q", got)
	}
	if Arg0() != args[0] {
		t.Fatalf("Arg0 %q", Arg0())
	}
}
