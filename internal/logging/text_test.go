package logging

import (
	"errors"
	"os"
	"syscall"
	"testing"
)

func TestText(t *testing.T) {
	if SignalName(syscall.SIGTERM) != "SIGTERM" || SignalName(syscall.SIGINT) != "SIGINT" || SignalName(syscall.SIGHUP) != "hangup" {
		t.Fatal(SignalName(syscall.SIGHUP))
	}
	_, err := os.Open("/nonexistent/file")
	if ErrText(err) != "no such file or directory" {
		t.Fatalf("%q", ErrText(err))
	}
	if ErrText(os.NewSyscallError("bind", syscall.EADDRINUSE)) != "address already in use" || ErrText(errors.New("x")) != "x" {
		t.Fatal("syscall error")
	}
}
