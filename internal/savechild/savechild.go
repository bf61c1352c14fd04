package savechild

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/vigil-kv/vigil/internal/redisutil"
)

// Kind is what the child writes: its temp file's name.
type Kind string

const (
	// RDB is BGSAVE's child: temp-<pid>.rdb (rdbSaveBackground).
	RDB Kind = "rdb"
	// AOF is the AOF rewrite's child: temp-rewriteaof-bg-<pid>.aof
	// (rewriteAppendOnlyFileBackground).
	AOF Kind = "aof"
	// Socket is a diskless full sync's child (rdbSaveToSlavesSockets,
	// "redis-rdb-to-slaves"): it writes no file but passes the RDB to
	// the parent through a pipe (fd 4, Child.Out), which the parent
	// forwards to the replicas' sockets.
	Socket Kind = "socket"
)

// TempName is the temp file a child of kind with pid writes.
func TempName(kind Kind, pid int) string {
	if kind == AOF {
		return fmt.Sprintf("temp-rewriteaof-bg-%d.aof", pid)
	}
	return fmt.Sprintf("temp-%d.rdb", pid)
}

// envKind marks a process started as a writer child; its value is the Kind.
const envKind = "VIGIL_SAVE_CHILD"

// exitKilled is SERVER_CHILD_NOERROR_RETVAL: the exit code of a child
// stopped by SIGUSR1.
const exitKilled = 255

// MaybeRunChild runs the writer child and exits when this process was
// started as one; otherwise it returns at once. Call it first thing in a
// main that calls Enable.
func MaybeRunChild() {
	kind := os.Getenv(envKind)
	if kind == "" {
		return
	}
	os.Exit(runChild(Kind(kind)))
}

func runChild(kind Kind) int {
	os.Unsetenv(envKind)
	if comm := os.Getenv(envComm); comm != "" {
		// ps's COMM of the parent (exec of /proc/self/exe named it "exe").
		_ = os.WriteFile("/proc/self/comm", []byte(comm), 0)
		os.Unsetenv(envComm)
	}
	if v := os.Getenv(envOOM); v != "" {
		if err := os.WriteFile("/proc/self/oom_score_adj", []byte(v+"\n"), 0); err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			msg := err.Error()
			if msg != "" && msg[0] >= 'a' && msg[0] <= 'z' {
				msg = string(msg[0]-'a'+'A') + msg[1:]
			}
			fmt.Fprintf(os.Stderr, "Unable to write oom_score_adj: %s\n", msg)
		}
	}
	os.Unsetenv(envOOM)
	if kind == Socket {
		return runSocketChild()
	}
	name := TempName(kind, os.Getpid())
	var removed atomic.Bool
	remove := func() {
		if removed.CompareAndSwap(false, true) {
			os.Remove(name)
		}
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGUSR1)
	signal.Ignore(syscall.SIGINT, syscall.SIGPIPE) // the parent decides
	go func() {
		<-sigs
		remove()
		os.Exit(exitKilled)
	}()
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		dir, _ := os.Getwd()
		what := "temp RDB file"
		if kind == AOF {
			what = "temp AOF file"
		}
		fmt.Fprintf(os.Stderr, "Failed opening the %s %s (in server root dir %s) for saving: %s\n", what, name, dir, redisutil.Strerror(err))
		return 1
	}
	fail := func(op string, err error) int {
		fmt.Fprintf(os.Stderr, "Write error saving DB on disk(%s): %s\n", op, redisutil.Strerror(err))
		f.Close()
		remove()
		return 1
	}
	if _, err := io.Copy(f, os.Stdin); err != nil {
		return fail("write", err)
	}
	ctrl := os.NewFile(3, "ctrl")
	var b [1]byte
	if n, _ := ctrl.Read(b[:]); n != 1 || b[0] != 'C' {
		f.Close()
		remove()
		return 1
	}
	if err := f.Sync(); err != nil {
		return fail("fsync", err)
	}
	if err := f.Close(); err != nil {
		return fail("fclose", err)
	}
	return 0
}

// runSocketChild is the Socket child: stdin to fd 4 until EOF, then fd 4
// is closed (the parent reads EOF: "done reading from pipe") and the
// child waits on fd 3 for the parent's word that it may exit, as Redis's
// child waits on its safe_to_exit_pipe: 'C' exits 0, anything else or
// EOF exits 1, a write error (the parent stopped reading) exits 1 at
// once. SIGUSR1 exits 255 (killRDBChild).
func runSocketChild() int {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGUSR1)
	signal.Ignore(syscall.SIGINT, syscall.SIGPIPE)
	go func() {
		<-sigs
		os.Exit(exitKilled)
	}()
	out := os.NewFile(4, "rdb-pipe")
	// Pipe-sized reads and writes (io.Copy's would be 32 KB).
	_, err := io.CopyBuffer(struct{ io.Writer }{out}, struct{ io.Reader }{os.Stdin}, make([]byte, pipeSize))
	out.Close()
	if err != nil {
		return 1
	}
	ctrl := os.NewFile(3, "ctrl")
	var b [1]byte
	if n, _ := ctrl.Read(b[:]); n != 1 || b[0] != 'C' {
		return 1
	}
	return 0
}

// envComm passes the parent's COMM to the child.
const envComm = "VIGIL_SAVE_CHILD_COMM"

// envOOM passes the child's oom_score_adj (Options.OOMScoreAdj).
const envOOM = "VIGIL_SAVE_CHILD_OOM_SCORE_ADJ"

var enabled atomic.Bool

// Enable lets Start spawn children: the main calls it after MaybeRunChild.
func Enable() { enabled.Store(true) }

// Enabled reports whether Enable was called.
func Enabled() bool { return enabled.Load() }

// ErrDisabled is Start's error in a process whose main did not Enable.
var ErrDisabled = errors.New("background save children are not enabled in this process")

// Options say how to start a child.
type Options struct {
	Kind Kind
	// Dir is the directory the temp file is written in (dir).
	Dir string
	// Argv is the child's command line (its process title): Redis's
	// child title, e.g. "redis-rdb-bgsave 127.0.0.1:6379", or the
	// parent's argv when set-proc-title is no.
	Argv []string
	// Log receives each line the child writes on its stderr, with the
	// child's pid.
	Log func(pid int, line string)
	// OOMScoreAdj, when not empty, is written by the child to its
	// /proc/self/oom_score_adj first (redisFork's
	// setOOMScoreAdj(CONFIG_OOM_BGCHILD)); a failure is logged.
	OOMScoreAdj string
}

// Child is a running writer child. Write sends it data; Commit or Abort
// ends the stream; Done is closed once it exited (Status).
type Child struct {
	Pid  int
	Path string // its temp file, in Options.Dir
	// Out is the read end of a Socket child's RDB pipe (nil otherwise);
	// the caller reads it to EOF and closes it.
	Out *os.File

	cmd    *exec.Cmd
	data   *os.File
	ctrl   *os.File
	done   chan struct{}
	once   sync.Once
	state  *os.ProcessState
	logged chan struct{}
}

// Start spawns a child (ErrDisabled unless Enable was called).
func Start(o Options) (*Child, error) {
	if !enabled.Load() {
		return nil, ErrDisabled
	}
	dataR, dataW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	ctrlR, ctrlW, err := os.Pipe()
	if err != nil {
		dataR.Close()
		dataW.Close()
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		dataR.Close()
		dataW.Close()
		ctrlR.Close()
		ctrlW.Close()
		return nil, err
	}
	var outR, outW *os.File
	if o.Kind == Socket {
		if outR, outW, err = os.Pipe(); err != nil {
			dataR.Close()
			dataW.Close()
			ctrlR.Close()
			ctrlW.Close()
			errR.Close()
			errW.Close()
			return nil, err
		}
	}
	argv := o.Argv
	if len(argv) == 0 {
		argv = []string{"vigil-save-child"}
	}
	extra := []*os.File{ctrlR}
	if outW != nil {
		extra = append(extra, outW) // fd 4
	}
	cmd := &exec.Cmd{
		Path:       "/proc/self/exe",
		Args:       argv,
		Dir:        o.Dir,
		Stdin:      dataR,
		Stderr:     errW,
		ExtraFiles: extra,
		Env:        append(os.Environ(), envKind+"="+string(o.Kind), envComm+"="+comm(), envOOM+"="+o.OOMScoreAdj),
	}
	err = cmd.Start()
	dataR.Close()
	ctrlR.Close()
	errW.Close()
	if outW != nil {
		outW.Close() // the parent reads EOF once the child closed its end
	}
	if err != nil {
		dataW.Close()
		ctrlW.Close()
		errR.Close()
		if outR != nil {
			outR.Close()
		}
		return nil, err
	}
	// A larger pipe: fewer wake-ups of the child per megabyte
	// (F_SETPIPE_SZ; best effort).
	setPipeSize(dataW)
	if outR != nil {
		setPipeSize(outR)
	}
	c := &Child{
		Out:    outR,
		Pid:    cmd.Process.Pid,
		cmd:    cmd,
		data:   dataW,
		ctrl:   ctrlW,
		done:   make(chan struct{}),
		logged: make(chan struct{}),
	}
	c.Path = TempName(o.Kind, c.Pid)
	if o.Dir != "" {
		c.Path = o.Dir + string(os.PathSeparator) + c.Path
	}
	go func() {
		defer close(c.logged)
		sc := bufio.NewScanner(errR)
		for sc.Scan() {
			if o.Log != nil {
				o.Log(c.Pid, sc.Text())
			}
		}
		errR.Close()
	}()
	go func() {
		_ = cmd.Wait()
		<-c.logged // its last words are logged before the outcome
		c.state = cmd.ProcessState
		close(c.done)
	}()
	return c, nil
}

func setPipeSize(f *os.File) {
	if rc, err := f.SyscallConn(); err == nil {
		_ = rc.Control(func(fd uintptr) {
			_, _, _ = syscall.Syscall(syscall.SYS_FCNTL, fd, fSetPipeSz, pipeSize)
		})
	}
}

// comm is this process's COMM (ps -o comm).
func comm() string {
	b, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// Write sends data to the child (EPIPE once it died).
func (c *Child) Write(p []byte) (int, error) { return c.data.Write(p) }

// Commit ends the stream: the child fsyncs its file and exits 0. After
// Abort it does nothing and returns ErrAborted.
func (c *Child) Commit() error {
	err := ErrAborted
	c.once.Do(func() {
		err = c.data.Close()
		if err == nil {
			_, err = c.ctrl.Write([]byte{'C'})
		}
		c.ctrl.Close()
	})
	return err
}

// CloseData ends the data stream without a word on fd 3: a Socket
// child copies what is left to its pipe and closes it, then waits for
// Release.
func (c *Child) CloseData() error { return c.data.Close() }

// Release tells a Socket child it may exit (the parent read its pipe to
// the end): with ok it exits 0, else 1. Safe after Abort (nothing).
func (c *Child) Release(ok bool) {
	c.once.Do(func() {
		c.data.Close()
		if ok {
			_, _ = c.ctrl.Write([]byte{'C'})
		}
		c.ctrl.Close()
	})
}

// ErrAborted is Commit's error after Abort.
var ErrAborted = errors.New("background save child aborted")

const (
	fSetPipeSz = 1031 // F_SETPIPE_SZ
	pipeSize   = 1 << 20
)

// Abort ends the stream without committing: the child removes its file
// and exits 1. Safe to call after Commit or more than once.
func (c *Child) Abort() {
	c.once.Do(func() {
		c.data.Close()
		c.ctrl.Close()
	})
}

// Signal sends sig to the child (SIGUSR1: Redis's killRDBChild).
func (c *Child) Signal(sig syscall.Signal) { _ = c.cmd.Process.Signal(sig) }

// Done is closed once the child exited and was reaped.
func (c *Child) Done() <-chan struct{} { return c.done }

// Status is the exit code and terminating signal after Done, as
// checkChildrenDone reads them: exit code 255 (SIGUSR1 handled) reads as
// bysignal SIGUSR1, exitcode 1; a signal gives exit code -1.
func (c *Child) Status() (exitcode, bysignal int) {
	ws, ok := c.state.Sys().(syscall.WaitStatus)
	if !ok {
		return c.state.ExitCode(), 0
	}
	if ws.Signaled() {
		return -1, int(ws.Signal())
	}
	code := ws.ExitStatus()
	if code == exitKilled {
		return 1, int(syscall.SIGUSR1)
	}
	return code, 0
}
