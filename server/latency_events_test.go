package server

import (
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/vigil-kv/vigil/configs"
	"github.com/vigil-kv/vigil/internal/clock"
	"github.com/vigil-kv/vigil/server/keyspace"
)

// stepClock is a fake clock that, while armed, moves step forward at each
// reading: a cron cycle that reads the clock at its start and its end
// then takes at least step, deterministically (no real time involved).
type stepClock struct {
	*clock.Fake
	step  time.Duration
	armed atomic.Bool
}

func (c *stepClock) Now() time.Time {
	if c.armed.Load() {
		c.Fake.Advance(c.step)
	}
	return c.Fake.Now()
}

func newStepClockServer(t *testing.T, step time.Duration, directives ...string) (*testServer, *stepClock) {
	t.Helper()
	cfg, err := configs.Load(configs.LoadOptions{Args: append([]string{"--dir", t.TempDir()}, directives...)})
	if err != nil {
		t.Fatal(err)
	}
	clk := &stepClock{Fake: clock.NewFake(time.Unix(1700000000, 0)), step: step}
	s, err := New(cfg, zerolog.Nop(), WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	return &testServer{s: s, clk: clk.Fake}, clk
}

// TestLatencyExpireCycleEvent: a slow active expire cycle is the latency
// monitor's "expire-cycle" event (expire.c's latencyAddSampleIfNeeded
// with the cycle's time), as latency-monitor.tcl's "LATENCY of expire
// events are correctly collected" sees it on redis-server (a 1M-member set
// expiring under a 20 ms threshold). Here the cycle is made slow by a
// clock that moves 30 ms at each reading; below the threshold, or with
// the monitor off, nothing is recorded.
func TestLatencyExpireCycleEvent(t *testing.T) {
	ts, clk := newStepClockServer(t, 30*time.Millisecond)
	c := ts.client()
	ts.do(c, "SADD", "mybigkey", "a", "b", "c")
	ts.do(c, "PEXPIRE", "mybigkey", "50")
	cycle := func() {
		ts.clk.Advance(100 * time.Millisecond)
		ts.s.mu.Lock()
		ts.s.setNow()
		clk.armed.Store(true)
		ts.s.activeExpireCron()
		clk.armed.Store(false)
		ts.s.mu.Unlock()
	}
	// Monitor off (threshold 0): a slow cycle is not recorded.
	cycle()
	if got := ts.do(c, "DBSIZE"); got != ":0\r\n" {
		t.Fatalf("DBSIZE after the cycle: %q", got)
	}
	if got := ts.do(c, "LATENCY", "LATEST"); got != "*0\r\n" {
		t.Fatalf("LATENCY LATEST with the monitor off: %q", got)
	}
	// Threshold above the cycle's time: not recorded.
	ts.do(c, "CONFIG", "SET", "latency-monitor-threshold", "100")
	cycle()
	if got := ts.do(c, "LATENCY", "LATEST"); got != "*0\r\n" {
		t.Fatalf("LATENCY LATEST under a threshold above the cycle's time: %q", got)
	}
	// At or above the threshold: recorded, even with nothing to expire.
	ts.do(c, "CONFIG", "SET", "latency-monitor-threshold", "20")
	cycle()
	got := ts.do(c, "LATENCY", "LATEST")
	if !strings.Contains(got, "expire-cycle") {
		t.Fatalf("LATENCY LATEST after a 30 ms expire cycle: %q", got)
	}
	if h := ts.do(c, "LATENCY", "HISTORY", "expire-cycle"); !strings.HasPrefix(h, "*1\r\n") {
		t.Fatalf("LATENCY HISTORY expire-cycle: %q", h)
	}
	// Paused clients: activeExpireCycle returns before timing anything.
	ts.do(c, "LATENCY", "RESET")
	ts.do(c, "CLIENT", "PAUSE", "100000", "WRITE")
	cycle()
	if got := ts.do(c, "LATENCY", "LATEST"); got != "*0\r\n" {
		t.Fatalf("LATENCY LATEST after a cycle while paused: %q", got)
	}
}

// TestLatencyEvictionCycleEvent: a slow eviction loop is the latency
// monitor's "eviction-cycle" event (evict.c's performEvictions), here
// made slow by a clock that moves 30 ms at each reading; a performEvictions
// that has nothing to evict (under maxmemory) records nothing.
func TestLatencyEvictionCycleEvent(t *testing.T) {
	ts, clk := newStepClockServer(t, 30*time.Millisecond, "--maxmemory-policy", "allkeys-random")
	c := ts.client()
	for i := range 10 {
		ts.do(c, "SET", "k"+strconv.Itoa(i), "v")
	}
	ts.do(c, "CONFIG", "SET", "latency-monitor-threshold", "20")
	evict := func() {
		ts.s.mu.Lock()
		clk.armed.Store(true)
		ts.s.performEvictions()
		clk.armed.Store(false)
		ts.s.mu.Unlock()
	}
	evict() // maxmemory 0: nothing to do
	if got := ts.do(c, "LATENCY", "LATEST"); got != "*0\r\n" {
		t.Fatalf("LATENCY LATEST without maxmemory: %q", got)
	}
	ts.do(c, "CONFIG", "SET", "maxmemory", "1") // evicts, but the clock is not armed
	ts.do(c, "LATENCY", "RESET")
	for i := range 10 {
		ts.s.mu.Lock()
		ts.s.ks.DBs[0].Set([]byte("k"+strconv.Itoa(i)), keyspace.NewString([]byte("v"), keyspace.StringRaw), ts.s.nowMs)
		ts.s.mu.Unlock()
	}
	evict()
	if got := ts.do(c, "LATENCY", "LATEST"); !strings.Contains(got, "eviction-cycle") {
		t.Fatalf("LATENCY LATEST after a 30 ms eviction loop: %q", got)
	}
}
