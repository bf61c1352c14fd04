//go:build !linux || !(amd64 || arm64)

package server

import "syscall"

// inqState is Linux-only (rawread_inq.go): elsewhere every read is
// followed by another until EAGAIN.
type inqState struct{}

func enableInq(r *rawReader) bool { return false }

func (r *rawReader) readInq(p []byte) (int, bool, int, syscall.Errno) {
	return 0, true, 0, syscall.ENOSYS
}
