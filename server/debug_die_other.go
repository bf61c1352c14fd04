//go:build !linux

package server

import (
	"os"
	"syscall"
)

// dieBySignal exits with the shell's code for a death by sig.
func dieBySignal(sig syscall.Signal) { os.Exit(128 + int(sig)) }
