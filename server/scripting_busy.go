package server

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vigil-kv/vigil/internal/resp"
	vlua "github.com/vigil-kv/vigil/server/lua"
)

// Busy scripts (script.c scriptInterrupt, server.c processCommand's busy
// check). A script runs under the execution lock; once it has run for
// busy-reply-threshold (lua-time-limit), a client whose batch finds the
// lock taken by it is answered without the lock: -BUSY for every command
// but SCRIPT KILL, which stops a script that has not written (the Lua
// state's context is cancelled; the script's caller gets "Script killed by
// user with SCRIPT KILL...") and answers -UNKILLABLE otherwise.
//
// SHUTDOWN NOSAVE stops the script, drops its effects and shuts down.
//
// Differences from Redis: a client already waiting for the lock when the
// script began waits for its end; the other allow_busy commands (AUTH,
// HELLO, MULTI...) get -BUSY too.

const (
	errBusy       = "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
	errUnkillable = "UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command."
	// errBusyFn is shared.slowscripterr: the busy reply while a function
	// (FCALL) runs.
	errBusyFn = "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE."
)

// busyScript is the running script as seen by the other clients' goroutines.
type busyScript struct {
	start time.Time // on the server's clock
	limit time.Duration
	// stopMu guards done, cancel, ended and cancelled: stop (other
	// goroutines) cancels the engine's context only while the script
	// runs, since the engine keeps that context for its next scripts.
	// done is made by the first goroutine that waits for the script's
	// end (doneCh), so a script nobody waits for costs no channel.
	stopMu    sync.Mutex
	done      chan struct{}
	cancel    context.CancelFunc // nil: no busy threshold, nothing to stop
	ended     bool
	cancelled bool
	wrote     atomic.Bool
	killed    atomic.Bool
	shutdown  atomic.Bool // SHUTDOWN NOSAVE stopped it: nothing propagates

	// A function's run (functions.go), set before the script is
	// published: its name, the caller's command and the engine's counts
	// for FUNCTION STATS. fn is "" for EVAL.
	fn           string
	argv         [][]byte
	nlib, nfuncs int
}

// busyShutdownNoSave reports a SHUTDOWN that a busy script allows: NOSAVE,
// with NOW and FORCE or not.
func busyShutdownNoSave(args [][]byte) bool {
	nosave := false
	for _, a := range args[1:] {
		switch {
		case eqFold(a, "nosave"):
			nosave = true
		case eqFold(a, "now"), eqFold(a, "force"):
		default:
			return false
		}
	}
	return nosave
}

// stop interrupts the running script (SCRIPT KILL, FUNCTION KILL,
// SHUTDOWN NOSAVE): its Lua state's context is cancelled, unless the
// script has already ended.
func (b *busyScript) stop() {
	b.stopMu.Lock()
	if !b.ended && b.cancel != nil {
		b.cancel()
		b.cancelled = true
	}
	b.stopMu.Unlock()
}

// doneCh is closed when the script has ended.
func (b *busyScript) doneCh() <-chan struct{} {
	b.stopMu.Lock()
	defer b.stopMu.Unlock()
	if b.done == nil {
		b.done = make(chan struct{})
		if b.ended {
			close(b.done)
		}
	}
	return b.done
}

func (b *busyScript) over(now time.Time) bool { return b.limit > 0 && now.Sub(b.start) >= b.limit }

// startBusyFn arms the busy state for a script about to run (under mu):
// the function fi (nil: EVAL) called with argv.
func (s *Server) startBusyFn(h *luaHost, fi *vlua.Function, argv [][]byte) *busyScript {
	// The script starts at its command's time (s.now, set as the command
	// began, microseconds ago); outside a command the clock is read.
	start := s.now
	if s.execDepth == 0 || start.IsZero() {
		start = s.clock.Now()
	}
	b := &busyScript{start: start, limit: time.Duration(s.cfg.BusyReplyThreshold) * time.Millisecond}
	if fi != nil {
		b.fn = fi.Name
		b.argv = make([][]byte, len(argv))
		for i, a := range argv {
			b.argv[i] = append([]byte(nil), a...)
		}
		b.nlib, b.nfuncs = len(s.fns.cur.libs), len(s.fns.cur.funcs)
	}
	// The engine keeps one cancellable context across scripts (server/lua's
	// busy.go); a script that was stopped leaves it cancelled, and
	// endBusy drops it.
	b.cancel = h.e.Arm(b.limit > 0)
	s.busy.Store(b)
	return b
}

func (s *Server) endBusy(h *luaHost, b *busyScript) {
	s.busy.Store(nil)
	b.stopMu.Lock()
	b.ended = true
	if b.done != nil {
		close(b.done)
	}
	cancelled := b.cancelled
	b.stopMu.Unlock()
	h.e.Disarm(cancelled)
}

// lockBatch takes the execution lock for a batch, or returns false when a
// script holding it has run past the busy threshold (serveBusy then
// answers the batch).
func (s *Server) lockBatch() bool {
	if s.mu.TryLock() {
		return true
	}
	for {
		b := s.busy.Load()
		if b == nil {
			s.mu.Lock()
			return true
		}
		if b.over(s.clock.Now()) {
			return false
		}
		t := time.NewTimer(5 * time.Millisecond)
		select {
		case <-b.doneCh():
		case <-t.C:
		}
		t.Stop()
		if s.mu.TryLock() {
			return true
		}
	}
}

// serveBusy answers c's buffered commands while a script is busy, without
// the lock; it returns false when the connection must close.
func (s *Server) serveBusy(c *Client) bool {
	b := s.busy.Load()
	var w resp.Writer
	w.Proto = c.w.Proto
	keep := true
	for keep {
		args, err := c.rd.Next()
		if err != nil {
			var pe *resp.ProtocolError
			if errors.As(err, &pe) {
				w.Error("ERR " + pe.Error())
			}
			keep = false
			break
		}
		if args == nil {
			break
		}
		cmd := s.lookup(args[0])
		// rejectCommand flags the transaction of a client in MULTI
		// (flagTransaction): its EXEC will abort. MULTI and DISCARD are
		// allowed while busy (CMD_ALLOW_BUSY, so that a pipelined
		// transaction is not cut in two); EXEC is rejected, and that
		// aborts the transaction (execCommandAbort).
		n := len(w.B)
		switch {
		case cmd == nil:
			w.Error(errUnknownCommand(args))
		case cmd.Name == "quit":
			w.OK()
			keep = false
		case (cmd.Name == "script" || cmd.Name == "function") && len(args) == 2 && strings.EqualFold(string(args[1]), "kill"):
			// scriptKill: SCRIPT KILL stops EVAL, FUNCTION KILL a function.
			isEval := cmd.Name == "script"
			switch {
			case b == nil:
				w.Error("NOTBUSY No scripts in execution right now.")
			case b.wrote.Load():
				w.Error(errUnkillable)
			case isEval && b.fn != "":
				w.Error(errBusyFn)
			case !isEval && b.fn == "":
				w.Error(errBusy)
			default:
				b.killed.Store(true)
				b.stop()
				w.OK()
			}
		case cmd.Name == "shutdown" && busyShutdownNoSave(args):
			// SHUTDOWN NOSAVE: the script is stopped and its effects
			// dropped (Redis exits without running it to its end).
			if b != nil {
				b.shutdown.Store(true)
				b.stop()
			}
			s.requestShutdown(shutdownReq{nosave: true, from: c})
			keep = false
		case (cmd.Arity > 0 && len(args) != cmd.Arity) || len(args) < -cmd.Arity:
			w.Error(errWrongArgs(cmd.Name))
		case cmd.Name == "function" && len(args) == 2 && strings.EqualFold(string(args[1]), "stats"):
			busyFunctionStats(&w, b, s.clock.Now())
		case cmd.Name == "multi":
			if c.multi != nil {
				w.Error("ERR MULTI calls can not be nested")
			} else {
				c.multi = &multiState{}
				w.OK()
			}
			continue
		case cmd.Name == "discard":
			if c.multi == nil {
				w.Error("ERR DISCARD without MULTI")
			} else {
				c.multi, c.busyUnwatch = nil, true
				w.OK()
			}
			continue
		case c.multi != nil && cmd.Name == "exec":
			msg := errBusy
			if b != nil && b.fn != "" {
				msg = errBusyFn
			}
			c.multi, c.busyUnwatch = nil, true
			w.Error("EXECABORT Transaction discarded because of: " + msg)
			continue
		case b != nil && b.fn != "":
			w.Error(errBusyFn)
		default:
			w.Error(errBusy)
		}
		if c.multi != nil && len(w.B) > n && w.B[n] == '-' {
			c.multi.dirty = true
		}
	}
	now := time.Now()
	c.lastInteraction.Store(now.UnixMilli())
	if len(w.B) > 0 && !c.write(w.B, now) {
		keep = false
	}
	return keep
}
