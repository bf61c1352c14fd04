package server

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vigil-kv/vigil/internal/resp"
	vlua "github.com/vigil-kv/vigil/server/lua"
)

// Busy scripts (script.c scriptInterrupt, server.c processCommand's busy
// check). A script runs under the execution lock; once it has run for
// busy-reply-threshold (lua-time-limit), a client whose batch finds the
// lock taken by it is served by serveBusy, with the server's state lent
// by the script between its redis.call's (busyScript.lend): the commands
// go through processCommand's checks, then the busy check answers -BUSY
// to all but the allow-busy ones (AUTH, HELLO, MULTI, WATCH...). SCRIPT
// KILL stops a script that has not written (the Lua state's context is
// cancelled; the script's caller gets "Script killed by user with SCRIPT
// KILL...") and answers -UNKILLABLE otherwise. A client connecting during
// the script is admitted without the lock (serveConn).
//
// SHUTDOWN NOSAVE stops the script, drops its effects and shuts down.
//
// A batch that found the lock taken before the script began waits in
// mu.Lock (lockBatch, counted in Server.parked); once the script is past
// the threshold, rescueParked lets those batches out to serveBusy, as
// Redis would answer their commands -BUSY.

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
	// lendMu lends the server's state, which the script's goroutine
	// holds mu for, to the clients serveBusy answers: the script's
	// goroutine holds it while it runs a command (luaHost.Call) and to end
	// (endBusy, which clears live), so a command served under it never
	// meets the script's redis.call, nor runs after the script's end.
	lendMu   sync.Mutex
	live     bool // guarded by lendMu
	killed   atomic.Bool
	shutdown atomic.Bool // SHUTDOWN NOSAVE stopped it: nothing propagates

	// A function's run (functions.go), set before the script is
	// published: its name, the caller's command and the engine's counts
	// for FUNCTION STATS. fn is "" for EVAL.
	fn           string
	argv         [][]byte
	nlib, nfuncs int
	// sha is an EVAL's script (its name in the slow-script log line is
	// "<sha>"); slowLogged: that line was logged (noteSlowScript).
	sha        string
	slowLogged atomic.Bool

	// rescued: rescueParked ran (or runs) for this script (one loaded
	// by loadBusy: seen, never recycled).
	rescued atomic.Bool

	// seen: a goroutine other than the script's loaded it (loadBusy) and
	// may still hold it. Never cleared: a busyScript nobody else saw is
	// reused for the next script (startBusyFn), one that was seen never.
	seen atomic.Bool
}

// loadBusy is s.busy.Load for the goroutines other than the script's: the
// script it returns is marked seen before it is checked to be still the
// running one, so that endBusy, which unpublishes it before recycleBusy
// reads seen, either finds it seen or came before this load (which then
// returns the next script, or nil).
func (s *Server) loadBusy() *busyScript {
	for {
		b := s.busy.Load()
		if b == nil {
			return nil
		}
		b.seen.Store(true)
		if s.busy.Load() == b {
			return b
		}
	}
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

// lend runs fn with the server's state lent by the script's goroutine
// (lendMu); it returns false, without running fn, once the script ended.
func (b *busyScript) lend(fn func()) bool {
	b.lendMu.Lock()
	defer b.lendMu.Unlock()
	if !b.live {
		return false
	}
	fn()
	return true
}

func (b *busyScript) over(now time.Time) bool { return b.limit > 0 && now.Sub(b.start) >= b.limit }

// startBusyFn arms the busy state for a script about to run (under mu):
// the function fi (nil: EVAL of the script sha) called with argv.
func (s *Server) startBusyFn(h *luaHost, fi *vlua.Function, sha string, argv [][]byte) *busyScript {
	// The script starts at its command's time (s.now, set as the command
	// began, microseconds ago); outside a command the clock is read.
	start := s.now
	if s.execDepth == 0 || start.IsZero() {
		start = s.clock.Now()
	}
	// A script nobody else saw leaves its busyScript to the next one
	// (recycleBusy): EVALSHA in a pipeline allocates none.
	b := h.spareBusy
	h.spareBusy = nil
	if b == nil {
		b = new(busyScript)
	}
	b.start, b.limit = start, time.Duration(s.cfg.BusyReplyThreshold)*time.Millisecond
	b.slowLogged.Store(false)
	// Set before s.busy publishes b: the cron reads them (noteSlowScript).
	b.sha, b.fn, b.argv = sha, "", nil
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
	b.live = true
	if s.beforeBusy != nil { // tests: a batch parks in lockBatch meanwhile
		s.beforeBusy()
	}
	s.busy.Store(b)
	return b
}

func (s *Server) endBusy(h *luaHost, b *busyScript) {
	b.lendMu.Lock()
	b.live = false
	b.lendMu.Unlock()
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

// recycleBusy keeps b, a script that has ended (endBusy) and that no
// other goroutine loaded (loadBusy), for the luaHost's next script, its
// state cleared (startBusyFn sets the rest).
func (h *luaHost) recycleBusy(b *busyScript) {
	if b.seen.Load() {
		return
	}
	b.done, b.cancel, b.ended, b.cancelled = nil, nil, false, false
	// Loads first: a store is a locked instruction, and they are rarely set.
	if b.wrote.Load() {
		b.wrote.Store(false)
	}
	if b.killed.Load() {
		b.killed.Store(false)
	}
	if b.shutdown.Load() {
		b.shutdown.Store(false)
	}
	b.fn, b.argv, b.nlib, b.nfuncs, b.sha = "", nil, 0, 0, ""
	h.spareBusy = b
}

// lockBatch takes the execution lock for a batch, or returns the script
// holding it when it has run past the busy threshold (serveBusy then
// answers the batch).
//
// With no script published it waits in mu.Lock, counted in s.parked
// before it looks for the script (again): a script that starts after
// that look (it publishes itself as it starts, startBusyFn) then finds
// the count once past the threshold, and rescueParked lets the batch
// out, which then finds the script and answers -BUSY, instead of
// waiting for the script's end. The count costs the batches that wait
// for mu anyway; one that takes mu at once pays nothing.
func (s *Server) lockBatch() *busyScript {
	if s.mu.TryLock() {
		return nil
	}
	for {
		s.parked.Add(1)
		b := s.loadBusy()
		if b == nil {
			s.mu.Mutex.Lock()
			s.parked.Add(-1)
			if s.mu.handoff.Load() == nil {
				return nil
			}
			// Let out by rescueParked: mu is the busy script's.
			s.mu.Mutex.Unlock()
			continue
		}
		s.parked.Add(-1)
		if b.over(s.clock.Now()) {
			s.rescueParked(b)
			return b
		}
		t := time.NewTimer(5 * time.Millisecond)
		select {
		case <-b.doneCh():
		case <-t.C:
		}
		t.Stop()
		if s.mu.TryLock() {
			return nil
		}
	}
}

// execMutex is the execution lock: a sync.Mutex that rescueParked lets
// go of on a busy script's behalf (a Mutex is not tied to the goroutine
// that locked it) while handoff is set. Whoever takes it meanwhile
// (always a goroutine other than the script's, which holds it) gives it
// back at once: Lock waits for the rescue's end and takes it again (so
// it waits for the script, as before), TryLock fails, and a parked batch
// goes to serveBusy (lockBatch). Outside a rescue, Lock and TryLock cost
// the Mutex's and one atomic load.
type execMutex struct {
	sync.Mutex
	handoff atomic.Pointer[muHandoff]
}

// muHandoff is one rescue: done is closed at its end.
type muHandoff struct{ done chan struct{} }

func (m *execMutex) Lock() {
	m.Mutex.Lock()
	if m.handoff.Load() != nil {
		m.waitHandoff()
	}
}

func (m *execMutex) waitHandoff() {
	for h := m.handoff.Load(); h != nil; h = m.handoff.Load() {
		m.Mutex.Unlock()
		<-h.done
		m.Mutex.Lock()
	}
}

func (m *execMutex) TryLock() bool {
	if !m.Mutex.TryLock() {
		return false
	}
	if m.handoff.Load() != nil {
		m.Mutex.Unlock()
		return false
	}
	return true
}

// rescueParked lets the batches parked in mu.Lock (lockBatch) out when
// the script b, which holds mu, has run past the busy threshold: they
// were parked before b began (with b published nothing parks), and
// would wait for b's end. Called by whoever finds b past the threshold
// (lockBatch, the cron), once per script that has batches parked.
//
// It holds b.lendMu, so that b's goroutine runs no command (luaHost.Call)
// and does not end (endBusy) meanwhile, sets mu's handoff and unlocks mu
// on b's behalf, then takes it back on b's behalf once every parked
// batch has taken it and let it go (lockBatch; a Mutex's waiter that
// waited over 1 ms is handed the lock in turn, so a parked one is not
// passed over for long). Nothing runs under mu meanwhile: every taker
// gives it back (execMutex). Then Lock's takers park again, for b's end.
func (s *Server) rescueParked(b *busyScript) {
	if s.parked.Load() == 0 || !b.rescued.CompareAndSwap(false, true) {
		return
	}
	b.lendMu.Lock()
	defer b.lendMu.Unlock()
	// Ended, or a debugging session's script (never busy for others).
	if !b.live || s.busy.Load() != b {
		return
	}
	hand := &muHandoff{done: make(chan struct{})}
	s.mu.handoff.Store(hand)
	s.mu.Mutex.Unlock()
	for {
		s.mu.Mutex.Lock()
		if s.parked.Load() == 0 {
			break
		}
		s.mu.Mutex.Unlock()
		time.Sleep(50 * time.Microsecond)
	}
	s.mu.handoff.Store(nil)
	close(hand.done)
}

// cronWait is the cron's wait on mu (lockCron): a goroutine blocked in
// mu.Lock, kept across ticks while a busy script holds mu.
type cronWait struct {
	state atomic.Int32 // cronWaiting, cronTaken, cronAbandoned, cronGone
	got   chan struct{}
}

const (
	cronWaiting   = iota // the cron wants mu
	cronTaken            // the goroutine got mu for the cron (got closed)
	cronAbandoned        // the cron went on without it: give mu back at once
	cronGone             // it got mu and gave it back
)

// lockCron is lockBatch for the cron. lockBatch waits on mu itself once no
// script is published as busy, so a tick that came between a script's batch
// taking mu and the script publishing itself waited for the script's end:
// no slow-script line, and no SIGTERM seen (loadingSignalShutdown) for as
// long as it ran (TestSlowScriptLogged failed so in CI). Here a goroutine
// waits on mu while the cron keeps looking for a script past the busy
// threshold; if one is found first, the cron goes on and the goroutine,
// which the next tick takes up again (*pend), gives mu back as soon as it
// gets it if nobody wants it by then. Never on the clients' path.
func (s *Server) lockCron(pend **cronWait) *busyScript {
	w := *pend
	if w != nil && !w.state.CompareAndSwap(cronAbandoned, cronWaiting) {
		w = nil // it came and went
	}
	if w == nil {
		*pend = nil
		if s.mu.TryLock() {
			return nil
		}
		w = &cronWait{got: make(chan struct{})}
		go func() {
			s.mu.Lock()
			for {
				if w.state.CompareAndSwap(cronWaiting, cronTaken) {
					close(w.got)
					return
				}
				if w.state.CompareAndSwap(cronAbandoned, cronGone) {
					s.mu.Unlock()
					return
				}
			}
		}()
	}
	*pend = w
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-w.got:
			*pend = nil
			return nil
		case <-t.C:
		}
		if b := s.loadBusy(); b != nil && b.over(s.clock.Now()) {
			if w.state.CompareAndSwap(cronWaiting, cronAbandoned) {
				return b
			}
			<-w.got // it took mu meanwhile: the cron holds it
			*pend = nil
			return nil
		}
	}
}

// lockOrLend runs fn under the execution lock, or, while a script past the
// busy threshold holds it, with the server's state the script lends
// between its redis.call's (processEventsWhileBlocked's work for events
// other than commands).
func (s *Server) lockOrLend(fn func()) {
	for {
		b := s.lockBatch()
		if b == nil {
			fn()
			s.mu.Unlock()
			return
		}
		if b.lend(fn) {
			return
		}
		// The script ended before lending: take the lock.
	}
}

// serveBusy answers c's buffered commands while the script b is busy.
// Each command runs while the script's goroutine lends it the server's
// state (lend): as Redis's processEventsWhileBlocked between two Lua hook
// calls, the command goes through processCommand's checks (unknown
// command, arity, NOAUTH, ACL, ...) and then the busy check, which
// refuses every command not flagged allow-busy (server.c processCommand);
// AUTH, HELLO, MULTI, WATCH... run, SCRIPT KILL and FUNCTION KILL stop the
// script, SHUTDOWN NOSAVE stops it and the server. When the script has
// ended, more is true and the commands left run under the lock.
func (s *Server) serveBusy(c *Client, b *busyScript) (keep, more bool) {
	keep = true
	for keep {
		done := false
		lent := b.lend(func() {
			args, err := c.ord.cmd, error(nil) // stashed by runBatchPart (order.go)
			if args != nil {
				c.ord.cmd, c.ord.cmdBuf = nil, 0
			} else {
				args, err = c.rd.Next()
			}
			if err != nil {
				var pe *resp.ProtocolError
				if errors.As(err, &pe) {
					c.w.Error("ERR " + pe.Error())
				}
				keep = false
				return
			}
			if args == nil {
				done = true
				return
			}
			cur, now, nowMs := s.current, s.now, s.nowMs
			s.current, c.busyRun = c, b
			s.process(c, args)
			s.current, c.busyRun = cur, nil
			s.now, s.nowMs = now, nowMs // the script's time (scripts' key expiry)
			if c.closeAfterReply || c.killed.Load() {
				keep = false
			}
		})
		if !lent {
			more = true // the script ended: runBatch takes the lock
			break
		}
		if done {
			break
		}
	}
	now := time.Now()
	c.lastInteraction.Store(now.UnixMilli())
	if len(c.w.B) > 0 {
		s.stats.netOutput.Add(int64(len(c.w.B)))
		s.ordHold(c, 1) // the write may wait for the peer (order.go)
		if !c.write(c.w.B, now) {
			keep = false
		}
		s.ordHold(c, -1)
		c.w.B = c.w.B[:0]
	}
	return keep, more && keep
}

// busyErr is the busy reply: shared.slowevalerr during EVAL,
// shared.slowscripterr during a function.
func (b *busyScript) busyErr() string {
	if b.fn != "" {
		return errBusyFn
	}
	return errBusy
}

// busyKill is SCRIPT KILL (isEval) or FUNCTION KILL while b is busy
// (scriptKill).
func busyKill(c *Client, b *busyScript, isEval bool) {
	switch {
	case b.wrote.Load():
		c.w.Error(errUnkillable)
	case isEval && b.fn != "":
		c.w.Error(errBusyFn)
	case !isEval && b.fn == "":
		c.w.Error(errBusy)
	default:
		b.killed.Store(true)
		b.stop()
		c.w.OK()
	}
}

// noteSlowScript is scriptInterrupt's log line, once per script, when the
// cron finds the script b past the busy threshold (Redis logs it from the
// script's hook as the threshold passes; here the cron, which cannot run
// while a script holds the server, looks ten times a second).
func (s *Server) noteSlowScript(b *busyScript) {
	if !b.slowLogged.CompareAndSwap(false, true) {
		return
	}
	kill, name := "SCRIPT KILL", b.sha // evalGenericCommand: funcname+2, the sha without "f_"
	if b.fn != "" {
		kill, name = "FUNCTION KILL", b.fn
	}
	s.log.Warn().Msgf("Slow script detected: still in execution after %d milliseconds. "+
		"You can try killing the script using the %s command. Script name is: %s.",
		s.clock.Now().Sub(b.start).Milliseconds(), kill, name)
}
