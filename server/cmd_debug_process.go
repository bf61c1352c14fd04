package server

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/vigil-kv/vigil/internal/netshell"
	"github.com/vigil-kv/vigil/server/keyspace"
)

// The DEBUG subcommands of debug.c (Redis 7.0.15) that act on the process
// (SEGFAULT, PANIC, ASSERT, OOM, RESTART, CRASH-AND-RECOVER), on the
// allocator (MALLCTL, MALLCTL-STR) and SDSLEN.
//
// The crashes log Redis's bug report (its sections, with Go's goroutine
// stacks for the backtrace) and kill the process with the signal Redis dies
// of: SIGSEGV for SEGFAULT, SIGABRT (abort) for the others. RESTART and
// CRASH-AND-RECOVER execve the same executable with the same arguments, as
// restartServer does: the pid stays. Vigil has no jemalloc: MALLCTL and
// MALLCTL-STR answer as redis-server does for a name jemalloc does not know.

// restartExec is what RESTART executes (EnableRestart); nil in a server
// embedded in another program (tests), which cannot restart.
var restartExec atomic.Pointer[restartTarget]

type restartTarget struct {
	exe  string
	argv []string
}

// EnableRestart lets DEBUG RESTART and CRASH-AND-RECOVER re-execute this
// process (the executable and os.Args): vigil-server's main calls it.
func EnableRestart() error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	restartExec.Store(&restartTarget{exe: exe, argv: append([]string(nil), os.Args...)})
	return nil
}

// cmdDebugProcess runs the subcommands of this file; false when sub is
// none of them (or has the wrong number of arguments). Like debug.c,
// SEGFAULT, PANIC, RESTART, CRASH-AND-RECOVER, OOM and ASSERT take any
// number of arguments.
func cmdDebugProcess(c *Client, args [][]byte) bool {
	s := c.srv
	sub := args[1]
	n := len(args)
	switch {
	case eqFold(sub, "segfault"):
		s.bugReport(c, args, syscall.SIGSEGV, []string{
			fmt.Sprintf("Redis %s crashed by signal: 11, si_code: 2", RedisVersion),
			"Crashed running DEBUG SEGFAULT (a simulated invalid memory access)",
		})
	case eqFold(sub, "panic"):
		s.bugReport(c, args, syscall.SIGABRT, guruMeditation(fmt.Sprintf("DEBUG PANIC called at Unix time %d", time.Now().Unix())))
	case eqFold(sub, "assert"):
		lines := []string{"=== ASSERTION FAILED CLIENT CONTEXT ==="}
		lines = append(lines, clientContext(c, args)...)
		lines = append(lines,
			"=== ASSERTION FAILED OBJECT CONTEXT ===",
			"Object type: 0", "Object encoding: 8", "Object refcount: 1",
			"=== ASSERTION FAILED ===",
			"==> debug.c:530 '1 == 2' is not true")
		s.bugReport(c, args, syscall.SIGABRT, lines)
	case eqFold(sub, "oom"):
		// zmalloc(ULONG_MAX): jemalloc refuses it and zmalloc's OOM
		// handler (redisOutOfMemoryHandler) panics.
		const size = 1<<63 - 1
		s.log.Warn().Msgf("Out Of Memory allocating %d bytes!", uint64(size))
		s.bugReport(c, args, syscall.SIGABRT, guruMeditation(fmt.Sprintf("Redis aborting for OUT OF MEMORY. Allocating %d bytes!", uint64(size))))
	case eqFold(sub, "restart") || eqFold(sub, "crash-and-recover"):
		var delay int64
		if n >= 3 {
			v, ok := parseInt(args[2])
			if !ok {
				c.w.Error(ErrNotInteger)
				return true
			}
			delay = max(v, 0)
		}
		s.restartServer(eqFold(sub, "restart"), delay)
		c.w.Error("ERR failed to restart the server. Check server logs.")
	case eqFold(sub, "mallctl") && n >= 3:
		if n > 3 {
			if _, ok := parseInt(args[3]); !ok {
				c.w.Error(ErrNotInteger)
				return true
			}
		}
		c.w.Error(errMallctlENOENT) // je_mallctl: ENOENT
	case eqFold(sub, "mallctl-str") && n >= 3:
		c.w.Error(errMallctlENOENT)
	case eqFold(sub, "sdslen") && n == 3:
		debugSdsLen(c, args[2])
	default:
		return false
	}
	return true
}

// debugSdsLen is DEBUG SDSLEN: the sds sizes Redis would have for the key
// and its string value (keyspace.SdsInfo models them as MEMORY USAGE does).
func debugSdsLen(c *Client, key []byte) {
	e := c.selectedDB().Peek(key) // dictFind: logically expired keys too
	if e == nil {
		c.w.Error(ErrNoSuchKey)
		return
	}
	str, ok := e.Value().(*keyspace.String)
	var v keyspace.SdsInfo
	if ok {
		v, ok = str.SdsInfo()
	}
	if !ok {
		c.w.Error("ERR Not an sds encoded string.")
		return
	}
	k := keyspace.KeySdsInfo(uint64(len(key)))
	c.w.Simple(fmt.Sprintf("key_sds_len:%d, key_sds_avail:%d, key_zmalloc: %d, val_sds_len:%d, val_sds_avail:%d, val_zmalloc: %d",
		k.Len, k.Avail, k.Zmalloc, v.Len, v.Avail, v.Zmalloc))
}

// guruMeditation is _serverPanic's header.
func guruMeditation(msg string) []string { return guruMeditationAt(msg, "debug.c") }

// guruMeditationAt is serverPanic's banner for msg raised at where.
func guruMeditationAt(msg, where string) []string {
	return []string{
		"------------------------------------------------",
		"!!! Software Failure. Press left mouse button to continue",
		"Guru Meditation: " + msg + " #" + where,
	}
}

// clientContext is _serverAssertPrintClientInfo's lines.
func clientContext(c *Client, args [][]byte) []string {
	lines := []string{
		"client->flags = 0",
		fmt.Sprintf("client->conn = fd=%d", connFD(c)),
		fmt.Sprintf("client->argc = %d", len(args)),
	}
	for i, a := range args {
		lines = append(lines, fmt.Sprintf("client->argv[%d] = \"%s\" (refcount: 1)", i, a))
	}
	return lines
}

func connFD(c *Client) int64 {
	if c.conn == nil {
		return -1
	}
	return netshell.ConnFD(c.conn)
}

// bugReport logs Redis's bug report (bugReportStart, the header lines,
// printCrashReport's sections, bugReportEnd) and kills the process with
// sig. The execution lock is held: nothing else runs meanwhile.
func (s *Server) bugReport(c *Client, args [][]byte, sig syscall.Signal, header []string) {
	s.bugReportLocked(c, args, sig, header, true)
}

// bugReportLocked is bugReport; without the execution lock (locked false)
// the sections that read the server's state (INFO, CLIENT LIST, the
// current client) are left out.
func (s *Server) bugReportLocked(c *Client, args [][]byte, sig syscall.Signal, header []string, locked bool) {
	log := func(msg string) { s.log.Warn().Msg(msg) }
	log("=== REDIS BUG REPORT START: Cut & paste starting from here ===")
	for _, l := range header {
		log(l)
	}
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	log("------ STACK TRACE ------\n" + string(buf))
	if locked {
		s.logServerState(c, args)
	}
	log("=== REDIS BUG REPORT END. Make sure to include from START to END. ===\n\n" +
		"       Please report the crash by opening an issue on github:\n\n" +
		"           http://github.com/redis/redis/issues\n")
	die(sig)
}

// logServerState is printCrashReport's INFO and CLIENT LIST sections and
// logCurrentClient. Lock held.
func (s *Server) logServerState(c *Client, args [][]byte) {
	log := func(msg string) { s.log.Warn().Msg(msg) }
	log("------ INFO OUTPUT ------\n" + strings.ReplaceAll(s.genInfo([]string{"all"}), "\r\n", "\n"))
	var cl []byte
	for _, o := range s.clientsByID() {
		cl = append(s.appendClientInfo(cl, o, c, args, "debug"), '\n')
	}
	log("------ CLIENT LIST OUTPUT ------\n" + string(cl))
	if c != nil { // logCurrentClient: only with a current client
		cur := append(s.appendClientInfo(nil, c, c, args, "debug"), '\n')
		for i, a := range args {
			cur = fmt.Appendf(cur, "argv[%d]: '\"%s\"'\n", i, a)
		}
		log("------ CURRENT CLIENT INFO ------\n" + string(cur))
	}
}

// restartServer is restartServer (server.c): graceful (RESTART) rewrites
// the config file and does prepareForShutdown's work (the RDB save with
// save points, the AOF flushed); then, after delayMs, the process execve's
// itself. It returns only when the restart could not be done (logged).
func (s *Server) restartServer(graceful bool, delayMs int64) {
	t := restartExec.Load()
	if t == nil {
		s.log.Warn().Msg("Can't restart: this server is not running as its own process")
		return
	}
	if syscall.Access(t.exe, 1 /* X_OK */) != nil {
		s.log.Warn().Msgf("Can't restart: this process has no permissions to execute %s", t.exe)
		return
	}
	if graceful && s.cfg.File != "" {
		if err := s.cfg.Rewrite(); err != nil {
			s.log.Warn().Msgf("Can't restart: configuration rewrite process failed: %v", err)
			return
		}
	}
	if graceful {
		s.log.Warn().Msg("User requested shutdown...")
		if !s.prepareShutdownSave(false, false, false) {
			s.log.Warn().Msg("Can't restart: error preparing for shutdown")
			return
		}
		if s.aof.mgr != nil && s.aof.mgr.W != nil {
			s.log.Info().Msg("Calling fsync() on the AOF file.")
			_ = s.aofStop()
		}
		if s.cfg.PidFile != "" {
			s.log.Info().Msg("Removing the pid file.")
			_ = os.Remove(s.cfg.PidFile)
		}
		s.log.Warn().Msg("Redis is now ready to exit, bye bye...")
	}
	if delayMs > 0 {
		time.Sleep(time.Duration(delayMs) * time.Millisecond)
	}
	// Every descriptor Go opens is close-on-exec: the listeners, the
	// clients and the files close; stdin, stdout and stderr stay.
	err := syscall.Exec(t.exe, t.argv, os.Environ())
	s.log.Warn().Msgf("Can't restart: execve %s: %v", t.exe, err)
	os.Exit(1) // restartServer's _exit(1): the process is half shut down
}

// errMallctlENOENT is strerror(ENOENT) as glibc words it: je_mallctl's
// answer for a name jemalloc does not have.
const errMallctlENOENT = "ERR No such file or directory"

// CrashBySignal is sigsegvHandler for a fatal signal another process sent
// (kill -SIGABRT, -SIGSEGV, -SIGBUS, -SIGFPE, -SIGILL): the bug report,
// then death by that signal. The report's INFO and CLIENT LIST need the
// execution lock; when a command holds it (a busy or stuck server, which
// is when operators send SIGABRT), the report has the banner and every
// goroutine's stack only, as Redis's handler may be cut short too.
func (s *Server) CrashBySignal(sig syscall.Signal) {
	header := []string{fmt.Sprintf("Redis %s crashed by signal: %d, si_code: 0", RedisVersion, int(sig))}
	s.bugReportLocked(nil, nil, sig, header, s.mu.TryLock()) // dies, holding the lock if it got it
}
