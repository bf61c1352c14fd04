package logging

import (
	"errors"
	"os"
	"syscall"
)

// SignalName names a signal as Redis's log does ("Received SIGTERM
// scheduling shutdown...").
func SignalName(sig os.Signal) string {
	switch sig {
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGINT:
		return "SIGINT"
	}
	return sig.String()
}

// ErrText is the message of an OS error without the operation and path
// ("No such file or directory"), as strerror in Redis's log lines.
func ErrText(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	var se *os.SyscallError
	if errors.As(err, &se) {
		return se.Err.Error()
	}
	return err.Error()
}
