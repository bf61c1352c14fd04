package deploy

import (
	"os/exec"
	"runtime"
	"syscall"
)

// sysProcAttr puts the child in its own process group (a Ctrl-C on the
// terminal reaches `vigil up` only, which then stops the nodes in order) and
// asks the kernel to SIGKILL it when its parent thread dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// spawns carries start requests to the spawner goroutine.
var spawns = make(chan spawnReq)

type spawnReq struct {
	cmd  *exec.Cmd
	errc chan error
}

func init() {
	// Pdeathsig fires when the *thread* that forked the child exits, not
	// the process (golang/go#27505). The Go runtime may retire idle threads,
	// so every child is forked from one goroutine locked to its thread for
	// the life of the process: that thread never exits before the process.
	go func() {
		runtime.LockOSThread()
		for r := range spawns {
			r.errc <- r.cmd.Start()
		}
	}()
}

// startCmd starts cmd from the spawner thread.
func startCmd(cmd *exec.Cmd) error {
	errc := make(chan error, 1)
	spawns <- spawnReq{cmd, errc}
	return <-errc
}

// signalGroup sends sig to the process group led by pid.
func signalGroup(pid int, sig syscall.Signal) error {
	return syscall.Kill(-pid, sig)
}
