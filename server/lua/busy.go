package lua

import "context"

// Stopping a running script (script.c's scriptInterrupt, on gopher-lua's
// context): while busy-reply-threshold is on, the Lua state keeps one
// cancellable context across scripts (context.WithCancel and the state's
// switch to its context-checking loop are not paid per call); SCRIPT
// KILL, FUNCTION KILL and SHUTDOWN NOSAVE cancel it from another
// goroutine. Who is busy and what the other clients are answered is the
// server's (its scripting_busy.go).

// Arm readies the state for a script about to run: with interruptible it
// returns the cancel function that stops the script (the engine's
// context, made once); otherwise it drops a context kept from before and
// returns nil.
func (e *Engine) Arm(interruptible bool) context.CancelFunc {
	if interruptible {
		if e.cancel == nil {
			ctx, cancel := context.WithCancel(context.Background())
			e.cancel = cancel
			e.L.SetContext(ctx)
		}
		return e.cancel
	}
	if e.cancel != nil {
		e.dropContext()
	}
	return nil
}

// Disarm ends a run: a context that was cancelled (the script was
// stopped) is dropped, and so is one whose children the script's
// coroutines made, so they do not pile up.
func (e *Engine) Disarm(cancelled bool) {
	if (cancelled || e.coroutines) && e.cancel != nil {
		e.dropContext()
	}
	e.coroutines = false
}

// dropContext removes the Lua state's context (cancelled, or no longer
// wanted with busy-reply-threshold 0).
func (e *Engine) dropContext() {
	e.cancel()
	e.cancel = nil
	e.L.RemoveContext()
}
