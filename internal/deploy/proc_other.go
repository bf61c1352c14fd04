//go:build !linux

package deploy

import (
	"os/exec"
	"syscall"
)

// sysProcAttr puts the child in its own process group. Only Linux has
// Pdeathsig: elsewhere a killed `vigil up` leaves its nodes running.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

func startCmd(cmd *exec.Cmd) error { return cmd.Start() }

func signalGroup(pid int, sig syscall.Signal) error { return syscall.Kill(-pid, sig) }
