//go:build !linux

package server

// idleSpinner is Linux-only (spin.go); elsewhere the server never spins.
type idleSpinner struct{}

func newIdleSpinner(*readyPoller) *idleSpinner { return nil }
func (sp *idleSpinner) activity(int64)         {}
func (sp *idleSpinner) handoff()               {}
func (sp *idleSpinner) close()                 {}
