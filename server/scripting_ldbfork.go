package server

import (
	"bufio"
	"bytes"
	"encoding/gob"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/sys/unix"

	"github.com/vigil-kv/vigil/configs"
	"github.com/vigil-kv/vigil/internal/redisutil"
	"github.com/vigil-kv/vigil/internal/resp"
	"github.com/vigil-kv/vigil/replication"
)

// The Lua debugger's forked session (SCRIPT DEBUG YES; Redis 7.0's
// ldbStartSession with ldb.forked, ldbEndSession, ldbRemoveChild,
// ldbPendingChildren and ldbKillForkedSessions in eval.c; Redis is BSD
// licensed). Redis forks: the child runs the script with the debugger on
// the client's socket, against its copy-on-write copy of the dataset, and
// exits when the session ends, so whatever the script wrote is gone; the
// parent forgets the client (freeClientAsync) and serves the others.
//
// Go cannot fork, so the parent re-executes its own binary
// (/proc/self/exe) as a debugging child, as internal/savechild does for
// BGSAVE. Under the execution lock (the fork's moment) it serialises
// what the child must stand for: the configuration, the ACL users, the
// client's state (database, protocol, user, the EVAL command), the role
// (a replica's master and link state), and starts a snapshot of the
// whole dataset, encoded with the function libraries as an RDB while the
// others are served (scripting_ldbcopy.go). The child gets the
// client's socket (a duplicate of its file descriptor), reads that state
// on a pipe, builds a server that listens nowhere and persists nothing,
// runs the EVAL through the debugger on the socket, writes the reply, and
// exits 0. The parent closes its copy of the socket without a word (no
// shutdown(2): the child's copy stays open), and reaps the child when it
// exits. SHUTDOWN kills the children (SIGKILL), as Redis's
// prepareForShutdown; while one lives, the cron's save points wait, as
// serverCron's ldbPendingChildren check.
//
// The child's lines ("Redis forked for debugging eval", "Lua debugging
// session child exiting") go to its stderr, which the parent logs.

// ldbFork is SCRIPT DEBUG YES's mode (ldbOff and ldbSync: scripting_ldb.go).
const ldbFork uint8 = ldbSync + 1

// envLdbChild marks a process started as a debugging child.
const envLdbChild = "VIGIL_LDB_CHILD"

// envLdbComm passes the parent's COMM to the child.
const envLdbComm = "VIGIL_LDB_CHILD_COMM"

var ldbForkEnabled atomic.Bool

// EnableLdbFork lets SCRIPT DEBUG YES start debugging children: the main
// calls it after MaybeRunLdbChild. Without it, an EVAL in that mode
// answers Redis's fork failure error.
func EnableLdbFork() { ldbForkEnabled.Store(true) }

// ldbForkState is what the parent sends the child before the RDB.
type ldbForkState struct {
	Config  [][2]string
	Rename  map[string]string
	ACL     []string // ACL LIST's lines
	DB      int
	Proto   int
	User    string
	Name    string
	LibName string
	LibVer  string
	ID      int64
	Args    [][]byte
	Out     []byte // the replies before the EVAL's, not written yet
	// The parent's role (server.masterhost, repl_state, which the
	// child inherits in Redis): a replica's child refuses a script's
	// writes as its parent would, and never connects to the master.
	MasterHost string // "" on a master
	MasterPort int
	LinkState  replication.ReplState
	// GoodReplicas is a master's server.repl_good_slaves_count, which
	// the forked child keeps: min-replicas-to-write judges its writes by
	// the parent's replicas.
	GoodReplicas int
}

// ldbChildInfo is a running debugging child (Server.ldbChildren).
type ldbChildInfo struct {
	cmd  *exec.Cmd
	done chan struct{}
}

// ldbStartFork is ldbStartSession's parent side for a client in YES mode
// (lock held): it starts the child and detaches the client, or answers
// the fork's error. Either way the client leaves the debug mode
// (ldbDisable).
func (s *Server) ldbStartFork(c *Client, args [][]byte) {
	c.ldbMode = ldbOff
	if !ldbForkEnabled.Load() {
		c.w.Error("ERR Fork() failed: can't run EVAL in debugging mode: Function not implemented")
		return
	}
	start := time.Now()
	st := ldbForkState{
		Config:  s.cfg.Snapshot(),
		Rename:  s.cfg.RenameCommands,
		ACL:     s.acl.Lines(),
		DB:      c.db,
		Proto:   c.w.Proto,
		User:    c.user,
		Name:    c.name,
		LibName: c.libName,
		LibVer:  c.libVer,
		ID:      c.id,
		Args:    args,
		Out:     append([]byte(nil), c.w.B...),

		GoodReplicas: s.goodReplicas(),
	}
	if l := s.repl.link; l != nil {
		st.MasterHost, st.MasterPort, st.LinkState = l.host, l.port, l.hs.State
	}
	data := new(bytes.Buffer)
	err := gob.NewEncoder(data).Encode(&st)
	var cmd *exec.Cmd
	var stdin *os.File
	if err == nil {
		cmd, stdin, err = s.ldbSpawn(c)
	}
	var cp *ldbCopy
	if err == nil {
		// The dataset as it is now: read from a snapshot while the others
		// are served, or at once if another snapshot runs (a BGSAVE...).
		if cp, err = s.ldbBeginCopy(data); err == nil && cp == nil {
			err = s.writeRDBDelay(data, false, 0)
		}
		if err != nil {
			_ = cmd.Process.Kill()
			stdin.Close()
			go cmd.Wait()
		}
	}
	if err != nil {
		c.w.Error("ERR Fork() failed: can't run EVAL in debugging mode: " + redisutil.Strerror(err))
		return
	}
	go func() {
		if cp != nil {
			s.ldbRunCopy(cp)
		}
		_, _ = stdin.Write(data.Bytes()) // EPIPE if the child died
		stdin.Close()
	}()
	s.stats.forks++
	s.stats.forkUsec = time.Since(start).Microseconds()
	info := &ldbChildInfo{cmd: cmd, done: make(chan struct{})}
	pid := cmd.Process.Pid
	s.ldbMu.Lock()
	if s.ldbChildren == nil {
		s.ldbChildren = map[int]*ldbChildInfo{}
	}
	s.ldbChildren[pid] = info
	s.ldbMu.Unlock()
	go func() {
		_ = cmd.Wait()
		s.ldbRemoveChild(pid)
		close(info.done)
	}()
	// freeClientAsync: no reply (runBatchPart drops the output of a
	// detached client), the connection closed on this side only.
	c.ldbDetached.Store(true)
	c.closeAfterReply = true
}

// ldbSpawn starts the child with the client's socket; it returns the
// child's stdin, for the state and the dataset.
func (s *Server) ldbSpawn(c *Client) (*exec.Cmd, *os.File, error) {
	sock, err := dupConnFile(c.conn)
	if err != nil {
		return nil, nil, err
	}
	defer sock.Close()
	stR, stW, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		stR.Close()
		stW.Close()
		return nil, nil, err
	}
	// The fork keeps the parent's title (redisFork sets none for LDB).
	argv := os.Args
	if t, ok := s.procTitle(); ok {
		argv = []string{t}
	}
	cmd := &exec.Cmd{
		Path:       "/proc/self/exe",
		Args:       argv,
		Stdin:      stR,
		Stderr:     errW,
		ExtraFiles: []*os.File{sock},
		Env:        append(os.Environ(), envLdbChild+"=1", envLdbComm+"="+procComm()),
	}
	err = cmd.Start()
	stR.Close()
	errW.Close()
	if err != nil {
		stW.Close()
		errR.Close()
		return nil, nil, err
	}
	log := s.log
	go func() {
		sc := bufio.NewScanner(errR)
		for sc.Scan() {
			log.Warn().Msg(sc.Text())
		}
		errR.Close()
	}()
	return cmd, stW, nil
}

// dupConnFile duplicates conn's file descriptor (close-on-exec: exec's
// ExtraFiles hands it to the child without it).
func dupConnFile(conn net.Conn) (*os.File, error) {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return nil, errors.New("the connection has no file descriptor")
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil, err
	}
	nfd := -1
	var derr error
	if err := rc.Control(func(fd uintptr) {
		nfd, derr = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0)
	}); err != nil {
		return nil, err
	}
	if derr != nil {
		return nil, derr
	}
	return os.NewFile(uintptr(nfd), "client"), nil
}

// procComm is this process's COMM (ps -o comm).
func procComm() string {
	b, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// ldbRemoveChild is ldbRemoveChild: the child exited (checkChildrenDone
// reaps it).
func (s *Server) ldbRemoveChild(pid int) bool {
	s.ldbMu.Lock()
	defer s.ldbMu.Unlock()
	if _, ok := s.ldbChildren[pid]; !ok {
		return false
	}
	delete(s.ldbChildren, pid)
	return true
}

// ldbPendingChildren is ldbPendingChildren.
func (s *Server) ldbPendingChildren() int {
	s.ldbMu.Lock()
	defer s.ldbMu.Unlock()
	return len(s.ldbChildren)
}

// ldbKillForkedSessions is ldbKillForkedSessions: SIGKILL to every
// debugging child, forgotten at once (their reaping removes nothing).
// quiet: without the log line (Run's end, for the children a shutdown
// without prepareForShutdown left: the embedder's context).
func (s *Server) ldbKillForkedSessions(quiet bool) {
	s.ldbMu.Lock()
	defer s.ldbMu.Unlock()
	for pid, ch := range s.ldbChildren {
		if !quiet {
			s.log.Warn().Msgf("Killing debugging session %d", pid)
		}
		_ = ch.cmd.Process.Kill()
		s.ldbKilled = append(s.ldbKilled, ch)
	}
	clear(s.ldbChildren)
}

// ldbWaitKilled kills the children left and waits (a bounded time) for
// every child killed to be reaped, so that none outlives Run. It does
// not take mu (a busy script SHUTDOWN NOSAVE stopped may hold it).
func (s *Server) ldbWaitKilled() {
	s.ldbKillForkedSessions(true)
	s.ldbMu.Lock()
	killed := s.ldbKilled
	s.ldbKilled = nil
	s.ldbMu.Unlock()
	for _, ch := range killed {
		select {
		case <-ch.done:
		case <-time.After(5 * time.Second):
		}
	}
}

// MaybeRunLdbChild runs the debugging child and exits when this process
// was started as one; otherwise it returns at once. Call it first thing
// in a main that calls EnableLdbFork.
func MaybeRunLdbChild() {
	if os.Getenv(envLdbChild) == "" {
		return
	}
	os.Exit(runLdbChild())
}

// ldbChildLog writes one line for the parent to log.
func ldbChildLog(msg string) { fmt.Fprintln(os.Stderr, msg) }

// runLdbChild is the child's side of ldbStartSession and ldbEndSession.
func runLdbChild() int {
	os.Unsetenv(envLdbChild)
	if comm := os.Getenv(envLdbComm); comm != "" {
		_ = os.WriteFile("/proc/self/comm", []byte(comm), 0)
	}
	os.Unsetenv(envLdbComm)
	// "Let's ignore important signals handled by the parent."
	signal.Ignore(syscall.SIGTERM, syscall.SIGINT)
	ldbChildLog("Redis forked for debugging eval")
	in := bufio.NewReaderSize(os.Stdin, 1<<16)
	var st ldbForkState
	if err := gob.NewDecoder(in).Decode(&st); err != nil {
		ldbChildLog("Lua debugging child: reading the parent's state: " + err.Error())
		return 1
	}
	s, err := newLdbChildServer(&st)
	if err != nil {
		ldbChildLog("Lua debugging child: " + err.Error())
		return 1
	}
	s.mu.Lock()
	if _, _, err := s.loadRDB(in, true, false); err != nil {
		s.mu.Unlock()
		ldbChildLog("Lua debugging child: loading the dataset: " + err.Error())
		return 1
	}
	if st.MasterHost != "" {
		s.ldbChildReplica(&st)
	}
	sock := os.NewFile(3, "client")
	conn, err := net.FileConn(sock)
	sock.Close()
	if err != nil {
		s.mu.Unlock()
		ldbChildLog("Lua debugging child: the client's socket: " + err.Error())
		return 1
	}
	c := &Client{
		srv:     s,
		conn:    conn,
		id:      st.ID,
		created: time.Now(),
		user:    st.User,
		authed:  true,
		db:      st.DB,
		name:    st.Name,
		libName: st.LibName,
		libVer:  st.LibVer,
		ldbMode: ldbFork,
	}
	if st.User != "" && st.User != "default" {
		c.aclUser = s.acl.User(st.User)
	}
	c.w.Proto = st.Proto
	c.w.B = append(c.w.B, st.Out...)
	c.lastInteraction.Store(time.Now().UnixMilli())
	c.rd = resp.NewReader(bytes.NewReader(nil), resp.DefaultLimits)
	s.ldbChild = true
	s.ldbGoodReplicas = st.GoodReplicas
	s.current = c
	s.process(c, st.Args)
	s.current = nil
	out := c.w.B
	s.mu.Unlock()
	// writeToClient: the EVAL's reply.
	if len(out) > 0 {
		conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
		_, _ = conn.Write(out)
	}
	ldbChildLog("Lua debugging session child exiting")
	return 0
}

// ldbChildReplica gives the child its parent's role, a replica (lock
// held): a link in the parent's state that runs nowhere (stopped: no
// goroutine, no connection), as the forked child's server.masterhost
// and repl_state with a master client it never reads. The read-only
// replica's refusals (scriptVerifyWriteCommandAllow's -READONLY, the
// shebang's check) and the stale checks follow from it.
func (s *Server) ldbChildReplica(st *ldbForkState) {
	hs := replication.NewHandshake(replication.HandshakeConfig{}, nil)
	hs.State = st.LinkState
	s.repl.link = &replLink{host: st.MasterHost, port: st.MasterPort, hs: hs, stop: make(chan struct{}), stopped: true}
	s.cfg.ReplicaOf = configs.Address{Host: st.MasterHost, Port: st.MasterPort}
	s.ks.Replica = true
}

// newLdbChildServer builds the child's server from the parent's state:
// its configuration without listeners, persistence or replication.
func newLdbChildServer(st *ldbForkState) (*Server, error) {
	// Not carried over: what would make the child listen, persist, log,
	// follow a master or read files (the users come from the parent's
	// ACL, the default user's password included).
	skip := map[string]bool{"appendonly": true, "save": true, "port": true, "unixsocket": true, "pidfile": true,
		"logfile": true, "replicaof": true, "requirepass": true, "aclfile": true, "tls-port": true, "metrics-port": true}
	pairs := st.Config[:0:0]
	for _, p := range st.Config {
		if !skip[p[0]] {
			pairs = append(pairs, p)
		}
	}
	cfg, _ := configs.FromSnapshot(pairs)
	cfg.RenameCommands = st.Rename
	if cfg.RenameCommands == nil {
		cfg.RenameCommands = map[string]string{}
	}
	cfg.Users = nil
	for _, l := range st.ACL {
		f := strings.Fields(l)
		if len(f) > 1 && f[0] == "user" {
			cfg.Users = append(cfg.Users, f[1:])
		}
	}
	cfg.Save = nil
	cfg.Port = 0
	return New(cfg, zerolog.Nop())
}
