package redisutil

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"
)

func TestStrerror(t *testing.T) {
	_, openErr := os.Open("/nonexistent/vigil-strerror")
	for _, c := range []struct {
		err  error
		want string
	}{
		{openErr, "No such file or directory"},
		{&os.LinkError{Op: "rename", Old: "a", New: "b", Err: syscall.EXDEV}, "Invalid cross-device link"},
		{os.NewSyscallError("write", syscall.ENOSPC), "No space left on device"},
		{fmt.Errorf("saving: %w", &os.PathError{Op: "open", Path: "x", Err: syscall.EACCES}), "Permission denied"},
		{errors.New("short write"), "Short write"},
		{nil, ""},
	} {
		if got := Strerror(c.err); got != c.want {
			t.Errorf("Strerror(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}
