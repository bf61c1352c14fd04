//go:build !linux

package server

import "testing"

// pinToOneCPU is Linux-only (pincpu_linux_test.go).
func pinToOneCPU(t *testing.T) func() { return func() {} }
