package server

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/vigil-kv/vigil/configs"
	"github.com/vigil-kv/vigil/internal/clock"
)

// TestAOFRewriteLimited: aofRewriteLimited of aof.c 7.0.15. Below 3
// consecutive failed rewrites nothing is limited; at 3 the cron starts no
// rewrite for 1 minute (logged once), then for 2, 4, ... minutes up to 60;
// a success resets it (aof-multi-part.tcl's "AOF will trigger limit when
// AOFRW fails many times" greps "triggered the limit").
func TestAOFRewriteLimited(t *testing.T) {
	cfg, err := configs.Load(configs.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	clk := clock.NewFake(time.Unix(1700000000, 0))
	s, err := New(cfg, zerolog.New(&buf), WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.aof.failures = 2
	if s.aofRewriteLimited() {
		t.Fatal("limited after 2 failures")
	}
	s.aof.failures = 3
	for i := range 2 {
		if !s.aofRewriteLimited() {
			t.Fatalf("call %d: not limited after 3 failures", i)
		}
	}
	if n := strings.Count(buf.String(), "triggered the limit, will retry in 1 minutes"); n != 1 {
		t.Fatalf("%d limit lines, want 1: %s", n, buf.String())
	}
	clk.Advance(59 * time.Second)
	if !s.aofRewriteLimited() {
		t.Fatal("not limited within the minute")
	}
	clk.Advance(time.Second)
	if s.aofRewriteLimited() {
		t.Fatal("limited after the minute")
	}
	for want := int64(2); want <= 64; want *= 2 {
		if !s.aofRewriteLimited() {
			t.Fatal("not limited again")
		}
		if w := min(want, 60); s.aof.limitDelay != w {
			t.Fatalf("delay %d minutes, want %d", s.aof.limitDelay, w)
		}
		clk.Advance(time.Duration(s.aof.limitDelay) * time.Minute)
		if s.aofRewriteLimited() {
			t.Fatal("limited after the delay")
		}
	}
	s.aof.failures = 0
	if s.aofRewriteLimited() || s.aof.limitDelay != 0 {
		t.Fatal("not reset by a success")
	}
}
