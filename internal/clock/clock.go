package clock

import (
	"sort"
	"sync"
	"time"
)

// Clock is the wall time seen by a shell.
type Clock interface {
	Now() time.Time
	NewTicker(d time.Duration) Ticker
	AfterFunc(d time.Duration, f func()) Timer
}

// Ticker delivers ticks on C until stopped.
type Ticker interface {
	C() <-chan time.Time
	Stop()
}

// Timer is a pending AfterFunc.
type Timer interface{ Stop() bool }

// Real is the system clock.
type Real struct{}

// Now returns time.Now().
func (Real) Now() time.Time { return time.Now() }

// NewTicker wraps time.NewTicker.
func (Real) NewTicker(d time.Duration) Ticker { return realTicker{time.NewTicker(d)} }

// AfterFunc wraps time.AfterFunc.
func (Real) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

type realTicker struct{ t *time.Ticker }

func (r realTicker) C() <-chan time.Time { return r.t.C }
func (r realTicker) Stop()               { r.t.Stop() }

// Fake is a manual clock for tests: time moves only on Advance.
type Fake struct {
	mu      sync.Mutex
	now     time.Time
	waiters []*fakeWaiter
}

type fakeWaiter struct {
	at     time.Time
	period time.Duration // >0 for tickers
	ch     chan time.Time
	fn     func()
	done   bool
}

// NewFake returns a fake clock set to start.
func NewFake(start time.Time) *Fake { return &Fake{now: start} }

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// Advance moves time forward, firing due timers and tickers in time order.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	end := f.now.Add(d)
	for {
		sort.SliceStable(f.waiters, func(i, j int) bool { return f.waiters[i].at.Before(f.waiters[j].at) })
		var w *fakeWaiter
		for _, x := range f.waiters {
			if !x.done && !x.at.After(end) {
				w = x
				break
			}
		}
		if w == nil {
			break
		}
		f.now = w.at
		if w.period > 0 {
			w.at = w.at.Add(w.period)
			select {
			case w.ch <- f.now:
			default:
			}
			continue
		}
		w.done = true
		fn := w.fn
		f.mu.Unlock()
		fn()
		f.mu.Lock()
	}
	f.now = end
	live := f.waiters[:0]
	for _, x := range f.waiters {
		if !x.done {
			live = append(live, x)
		}
	}
	f.waiters = live
	f.mu.Unlock()
}

// NewTicker returns a ticker driven by Advance.
func (f *Fake) NewTicker(d time.Duration) Ticker {
	f.mu.Lock()
	defer f.mu.Unlock()
	w := &fakeWaiter{at: f.now.Add(d), period: d, ch: make(chan time.Time, 1)}
	f.waiters = append(f.waiters, w)
	return &fakeTicker{f: f, w: w}
}

// AfterFunc runs fn when Advance passes d.
func (f *Fake) AfterFunc(d time.Duration, fn func()) Timer {
	f.mu.Lock()
	defer f.mu.Unlock()
	w := &fakeWaiter{at: f.now.Add(d), fn: fn}
	f.waiters = append(f.waiters, w)
	return &fakeTimer{f: f, w: w}
}

type fakeTicker struct {
	f *Fake
	w *fakeWaiter
}

func (t *fakeTicker) C() <-chan time.Time { return t.w.ch }
func (t *fakeTicker) Stop() {
	t.f.mu.Lock()
	t.w.done = true
	t.f.mu.Unlock()
}

type fakeTimer struct {
	f *Fake
	w *fakeWaiter
}

func (t *fakeTimer) Stop() bool {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	was := !t.w.done
	t.w.done = true
	return was
}
