package server

import (
	"runtime"
	"strconv"
	"sync/atomic"
	"time"
)

// # The software watchdog (watchdog-period)
//
// Redis's DEBUG-era watchdog (debug.c enableWatchdog, watchdogSignalHandler):
// with watchdog-period N (milliseconds, 0 off), serverCron re-arms a
// one-shot SIGALRM timer of N ms on every run; when the main thread is
// stuck in one command or script for longer, the timer fires and the log
// gets "--- WATCHDOG TIMER EXPIRED ---", the stack trace of what runs, and
// "--------". Here the cron stamps each run (watchdogState.lastCron) and a
// goroutine started with the server looks every few milliseconds while a
// period is set: once the cron has not run for the period, it logs every
// goroutine's stack (the one holding the execution lock among them, with
// the command's handler, such as debugCommand) once per stall, as the
// one-shot timer fires once until the cron re-arms it.

type watchdogState struct {
	periodMs atomic.Int64  // watchdog-period in effect (at least two cron periods), 0 off
	lastCron atomic.Int64  // wall clock (UnixNano) of the cron's last full run
	fired    atomic.Bool   // logged for the current stall
	on       chan struct{} // watchdogConfigure wakes the loop when a period is set
}

// watchdogConfigure applies watchdog-period (start-up and CONFIG SET, under
// mu): enableWatchdog's minimum of two cron periods.
func (s *Server) watchdogConfigure() {
	v := s.cfg.Get("watchdog-period")
	ms := int64(0)
	if len(v) == 2 {
		ms, _ = strconv.ParseInt(v[1], 10, 64)
	}
	if ms > 0 {
		hz := int64(s.cfg.Hz)
		if hz <= 0 {
			hz = 10
		}
		if minMs := 1000 / hz * 2; ms < minMs {
			ms = minMs
		}
	}
	s.watchdog.lastCron.Store(time.Now().UnixNano())
	s.watchdog.fired.Store(false)
	s.watchdog.periodMs.Store(ms)
	if ms > 0 {
		select {
		case s.watchdog.on <- struct{}{}:
		default:
		}
	}
}

// watchdogCronRan is the cron's re-arm (watchdogScheduleSignal).
func (s *Server) watchdogCronRan() {
	if s.watchdog.periodMs.Load() == 0 {
		return
	}
	s.watchdog.lastCron.Store(time.Now().UnixNano())
	s.watchdog.fired.Store(false)
}

// watchdogLoop runs until stop closes, on the wall clock (SIGALRM's).
func (s *Server) watchdogLoop(stop <-chan struct{}) {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		if s.watchdog.periodMs.Load() == 0 {
			t.Stop() // no wake-ups while the watchdog is off
			select {
			case <-stop:
				return
			case <-s.watchdog.on:
			}
			t.Reset(20 * time.Millisecond)
		}
		select {
		case <-stop:
			return
		case <-t.C:
		}
		p := s.watchdog.periodMs.Load()
		if p == 0 || s.watchdog.fired.Load() {
			continue
		}
		if time.Since(time.Unix(0, s.watchdog.lastCron.Load())) < time.Duration(p)*time.Millisecond {
			continue
		}
		s.watchdog.fired.Store(true)
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		s.log.Warn().Msg("\n--- WATCHDOG TIMER EXPIRED ---\n" + string(buf))
		s.log.Warn().Msg("--------\n")
	}
}
