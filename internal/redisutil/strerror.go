package redisutil

import (
	"errors"
	"os"
	"strings"
	"syscall"
)

// Strerror is the C library's strerror text of err's errno, as Redis logs
// and replies it ("No such file or directory"): the errno is looked for
// through the wrapping (os.PathError, os.LinkError, os.SyscallError); an
// error without one gives its own text, capitalized the same way.
func Strerror(err error) string {
	if err == nil {
		return ""
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return capitalize(errno.Error())
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		err = le.Err
	}
	var se *os.SyscallError
	if errors.As(err, &se) {
		err = se.Err
	}
	return capitalize(err.Error())
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
