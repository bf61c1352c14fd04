package deploy

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Node is one process of a deployment: a server or a sentinel. Its
// directory holds its own config copy, log file, pid file, data and
// output.log (the process's stdout and stderr).
//
// A Node is safe for concurrent use. Start, Stop, Kill, Pause, Resume and
// Restart act on the process group the node leads, so a child the server
// forks (a Redis BGSAVE) is signalled too.
type Node struct {
	Name     string // "server-6379", "sentinel-26379"
	Role     Role   // as started
	Host     string
	Port     int
	Dir      string
	ConfPath string
	LogPath  string
	PidPath  string
	OutPath  string
	// PeerPort is the port of the node's fault-injecting proxy (servers
	// with Spec.Proxy; 0 otherwise). The server announces it, so replicas,
	// sentinels and clients use PeerAddr.
	PeerPort int

	proxy *proxy
	netns string // the node's network namespace (Spec.Netns)

	argv        []string
	nextArgs    []string // extra arguments for the next Start only (restart.go)
	stopTimeout time.Duration

	mu     sync.Mutex
	cmd    *exec.Cmd
	done   chan struct{} // closed when the current process has exited
	err    error         // its exit status, once done
	paused bool
}

// Addr is host:port.
func (n *Node) Addr() string { return net.JoinHostPort(n.Host, strconv.Itoa(n.Port)) }

// Pid is the running process's pid, or 0 when none is running.
func (n *Node) Pid() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd == nil || n.cmd.Process == nil || isDone(n.done) {
		return 0
	}
	return n.cmd.Process.Pid
}

// Running reports whether the process is running (a paused one is).
func (n *Node) Running() bool { return n.Pid() != 0 }

// Done is closed when the current process exits (nil before Start).
func (n *Node) Done() <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.done
}

// ExitErr is the exit status of the last process once it has exited.
func (n *Node) ExitErr() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.err
}

func isDone(c <-chan struct{}) bool {
	if c == nil {
		return true
	}
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// Start starts the process from its config file. It returns once the
// process is spawned; Deployment.WaitHealthy (or polling Addr) tells when it
// serves. The process runs in its own process group and, on Linux, receives
// SIGKILL when the process that started it dies, so a killed `vigil up`
// leaves no orphans.
func (n *Node) Start() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !isDone(n.done) {
		return fmt.Errorf("%s: already running (pid %d)", n.Name, n.cmd.Process.Pid)
	}
	out, err := os.OpenFile(n.OutPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("%s: %w", n.Name, err)
	}
	argv := append(append(append([]string{}, n.argv...), n.ConfPath), n.nextArgs...)
	n.nextArgs = nil
	if n.netns != "" {
		ip, err := exec.LookPath("ip")
		if err != nil {
			out.Close()
			return fmt.Errorf("%s: %w", n.Name, err)
		}
		// ip execs argv in the namespace: the pid is the server's.
		argv = append([]string{ip, "netns", "exec", n.netns}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = n.Dir
	cmd.Stdout = out
	cmd.Stderr = out
	cmd.SysProcAttr = sysProcAttr()
	if err := startCmd(cmd); err != nil {
		out.Close()
		return fmt.Errorf("%s: starting %s: %w", n.Name, filepath.Base(n.argv[0]), err)
	}
	done := make(chan struct{})
	n.cmd, n.done, n.err, n.paused = cmd, done, nil, false
	go func() {
		err := cmd.Wait()
		out.Close()
		n.mu.Lock()
		n.err = err
		n.mu.Unlock()
		close(done)
	}()
	return nil
}

// signal sends sig to the node's process group.
func (n *Node) signal(sig syscall.Signal) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd == nil || isDone(n.done) {
		return fmt.Errorf("%s: not running", n.Name)
	}
	return signalGroup(n.cmd.Process.Pid, sig)
}

// Stop sends SIGTERM (and SIGCONT, in case it is paused) and waits for the
// process to exit; after the spec's stop timeout it sends SIGKILL. Stopping
// a node that is not running is not an error.
func (n *Node) Stop() error {
	done := n.Done()
	if isDone(done) {
		return nil
	}
	_ = n.signal(syscall.SIGTERM)
	_ = n.signal(syscall.SIGCONT)
	t := time.NewTimer(n.stopTimeout)
	defer t.Stop()
	select {
	case <-done:
		return nil
	case <-t.C:
	}
	_ = n.signal(syscall.SIGKILL)
	<-done
	return fmt.Errorf("%s: did not exit within %v of SIGTERM; killed", n.Name, n.stopTimeout)
}

// Kill sends SIGKILL and waits for the process to exit.
func (n *Node) Kill() error {
	done := n.Done()
	if err := n.signal(syscall.SIGKILL); err != nil {
		return err
	}
	<-done
	return nil
}

// Pause stops the process with SIGSTOP: it keeps its sockets but answers
// nothing, as a hung or partitioned node.
func (n *Node) Pause() error {
	if err := n.signal(syscall.SIGSTOP); err != nil {
		return err
	}
	n.mu.Lock()
	n.paused = true
	n.mu.Unlock()
	return nil
}

// Resume continues a paused process with SIGCONT.
func (n *Node) Resume() error {
	if err := n.signal(syscall.SIGCONT); err != nil {
		return err
	}
	n.mu.Lock()
	n.paused = false
	n.mu.Unlock()
	return nil
}

// Paused reports whether Pause was called without Resume.
func (n *Node) Paused() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.paused && !isDone(n.done)
}

// Restart stops the process (SIGTERM, then SIGKILL after the timeout) and
// starts it again from its config file, which a sentinel may have rewritten
// meanwhile (as an operator restarting a node does). A stop that needed
// SIGKILL does not prevent the restart.
func (n *Node) Restart() error {
	_ = n.Stop()
	return n.Start()
}
