package server

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/vigil-kv/vigil/internal/testutil"
)

// TestSlowScriptLogged is scriptInterrupt's warning, which aof.tcl's "EVAL
// timeout with slow verbatim Lua script from AOF" waits for: once a script
// runs past busy-reply-threshold, the log says "Slow script detected: ...
// Script name is: <sha>." (redis-server 7.0.15 prints the bare sha; FUNCTION KILL and the function's name for a
// function), once per script. Vigil never logged it.
func TestSlowScriptLogged(t *testing.T) {
	logs := &testutil.LockedBuffer{}
	l := startLiveAfter(t, func(s *Server) { s.log = zerolog.New(logs) })
	t.Cleanup(func() {
		if bs := l.s.loadBusy(); bs != nil {
			bs.stop()
		}
	})
	a, b := l.dial(t), l.dial(t)
	line := regexp.MustCompile(`Slow script detected: still in execution after \d+ milliseconds\. You can try killing the script using the SCRIPT KILL command\. Script name is: ([0-9a-f]{40})\.`)
	a.send("EVAL", "while true do end", "0")
	waitBusy(t, l.s)
	testutil.Poll(t, 10*time.Second, "the slow-script line", func() bool {
		l.clk.Advance(time.Second) // past the 5 s threshold; the cron ticks
		return line.MatchString(logs.String())
	})
	sha := line.FindStringSubmatch(logs.String())[1]
	l.clk.Advance(10 * time.Second)
	if got := b.do("SCRIPT", "KILL"); got != "+OK" {
		t.Fatalf("SCRIPT KILL: %s", got)
	}
	a.read()
	if got := b.do("SCRIPT", "EXISTS", sha); got != "[(integer) 1]" {
		t.Fatalf("the line names f_%s, which SCRIPT EXISTS does not know: %s", sha, got)
	}
	if n := strings.Count(logs.String(), "Slow script detected"); n != 1 {
		t.Fatalf("logged %d times, want once per script:\n%s", n, logs.String())
	}

	if got := a.do("FUNCTION", "LOAD", "#!lua name=spinlib\nredis.register_function('spin', function() while true do end end)"); got != `"spinlib"` {
		t.Fatalf("FUNCTION LOAD: %s", got)
	}
	a.send("FCALL", "spin", "0")
	waitBusy(t, l.s)
	want := "You can try killing the script using the FUNCTION KILL command. Script name is: spin."
	testutil.Poll(t, 10*time.Second, "the function's slow-script line", func() bool {
		l.clk.Advance(time.Second)
		return strings.Contains(logs.String(), want)
	})
	if got := b.do("FUNCTION", "KILL"); got != "+OK" {
		t.Fatalf("FUNCTION KILL: %s", got)
	}
	a.read()
}
