package server

import (
	"strings"
	"testing"
	"time"
)

// timeoutTranscript: with timeout 1, a subscriber, a client blocked in
// BLPOP and a MONITOR connect first, then a plain client that sent one
// PING. The plain one is closed by the cron once idle for more than the
// timeout (clientsCronHandleTimeout); the others, idle longer, are not:
// with five clients or fewer every cron pass visits all of them, so they
// were looked at in the pass that closed the plain one, which answers
// before the server reads what follows. tick runs the cron (a fake clock's
// advance; nothing for redis-server, whose cron runs on its own); dial
// connects a new client.
func timeoutTranscript(t *testing.T, dial func() *rconn, tick func()) {
	sub, blk, mon := dial(), dial(), dial()
	sub.send("SUBSCRIBE", "ch")
	if got := sub.read(); !strings.Contains(got, "subscribe") {
		t.Fatalf("SUBSCRIBE: %s", got)
	}
	blk.send("BLPOP", "k", "0")
	if got := mon.do("MONITOR"); got != "+OK" {
		t.Fatalf("MONITOR: %s", got)
	}
	idle := dial()
	if got := idle.do("PING"); got != "+PONG" {
		t.Fatalf("PING: %s", got)
	}
	if !idle.closedWhile(tick) {
		t.Fatal("the idle client was not closed")
	}
	if got := sub.do("PING"); got != `["pong", ""]` {
		t.Fatalf("subscriber after the timeout: %s", got)
	}
	other := dial()
	if got := other.do("LPUSH", "k", "v"); got != "(integer) 1" {
		t.Fatalf("LPUSH: %s", got)
	}
	if got := blk.read(); got != `["k", "v"]` {
		t.Fatalf("blocked client after the timeout: %s", got)
	}
	// The monitor's stream: the commands since MONITOR (PINGs, maybe
	// the BLPOP), then the LPUSH.
	for i := 0; ; i++ {
		got := mon.read()
		if strings.Contains(got, `"LPUSH" "k" "v"`) {
			break
		}
		if i == 4 || !strings.HasPrefix(got, "+") {
			t.Fatalf("MONITOR after the timeout: %s", got)
		}
	}
}

// TestTimeoutClosesIdleClients: the timeout directive as
// clientsCronHandleTimeout (timeoutTranscript); TestTimeoutClosesIdleClientsRedis
// runs the same against redis-server 7.0.15.
func TestTimeoutClosesIdleClients(t *testing.T) {
	l := startLive(t, "--timeout", "1")
	timeoutTranscript(t, func() *rconn { return l.dial(t) }, func() { l.clk.Advance(100 * time.Millisecond) })
}

func TestTimeoutClosesIdleClientsRedis(t *testing.T) {
	sock := startRedisOracle(t, []string{"--timeout", "1"})
	timeoutTranscript(t, func() *rconn {
		d := dialOracle(t, sock)
		t.Cleanup(func() { d.c.Close() })
		return &rconn{t: t, c: d.c, br: d.br}
	}, func() {})
}

// TestTimeoutRetiredLoops: with the timeout directive set, idle loops
// park and retire as without it (it arms no read deadline), and the
// cron's close reaches a retired loop.
func TestTimeoutRetiredLoops(t *testing.T) {
	l, addr := startLiveTCP(t, "--timeout", "100")
	c := dialTCPLive(t, addr)
	c.do("CLIENT", "SETNAME", "idle")
	cl := clientNamed(t, l, "idle")
	retireAll(t, l, cl)
	// Idle for longer than the timeout: the next pass over it closes it.
	cl.lastInteraction.Store(time.Now().UnixMilli() - 200_000)
	if !c.closedByCron(l) {
		t.Fatal("retired idle client past the timeout: still open")
	}
}
