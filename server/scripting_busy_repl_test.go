package server

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/testutil"
)

// TestBusyScriptReplicaDropSeen is scripting.tcl's "not enough good
// replicas state change during long script", on redis-server 7.0.15 and on
// Vigil, with a replica spoken to on a raw connection: a script that wrote
// once loops until INFO replication says connected_slaves:0; the replica
// disconnects while the script is busy; as Redis's
// processEventsWhileBlocked frees that client between the script's calls,
// the script sees it gone and writes again (allowed: it already wrote,
// though min-replicas-to-write is no longer met).
func TestBusyScriptReplicaDropSeen(t *testing.T) {
	l, dialRedis := startLiveBesideRedis(t, "--repl-diskless-sync-delay", "0")
	stopBusyOnCleanup(t, l)
	const script = `
redis.call('set','x',"script value")
while true do
    local info = redis.call('info','replication')
    if (string.match(info, "connected_slaves:0")) then
        redis.call('set','x',info)
        break
    end
end
return 1`
	scenario := func(dial func() *rconn, pastThreshold func()) []string {
		var out []string
		step := func(s string) { out = append(out, s) }
		ctl := dial()
		info := func() string {
			v, _ := strconv.Unquote(ctl.do("INFO", "replication"))
			return v
		}
		step(ctl.do("SET", "x", "pre-script value"))
		step(ctl.do("CONFIG", "SET", "min-replicas-to-write", "1"))
		step(ctl.do("CONFIG", "SET", "lua-time-limit", "10"))
		// The replica: a full sync, then an ACK of the offset.
		rep := dial()
		step(rep.do("REPLCONF", "capa", "eof", "capa", "psync2"))
		rep.send("PSYNC", "?", "-1")
		rep.c.SetReadDeadline(time.Now().Add(10 * time.Second))
		line := "\n"
		for line == "\n" {
			var err error
			if line, err = rep.br.ReadString('\n'); err != nil {
				t.Fatal(err)
			}
		}
		f := strings.Fields(line)
		if len(f) != 3 || f[0] != "+FULLRESYNC" {
			t.Fatalf("PSYNC: %q", line)
		}
		step(readSyncPayload(rep))
		if !testutil.PollUntil(10*time.Second, func() bool { return strings.Contains(info(), "state=online") }) {
			t.Fatalf("replica not online: %s", info())
		}
		rep.send("REPLCONF", "ACK", f[2])
		if !testutil.PollUntil(10*time.Second, func() bool { return strings.Contains(info(), "min_slaves_good_slaves:1") }) {
			t.Fatalf("replica not good: %s", info())
		}
		rd := dial()
		rd.send("EVAL", script, "1", "x")
		// Wait for the script to pass lua-time-limit: others get -BUSY.
		pastThreshold()
		if !testutil.PollUntil(10*time.Second, func() bool { return strings.HasPrefix(ctl.do("PING"), "-BUSY") }) {
			t.Fatal("the script never got busy")
		}
		step(ctl.do("PING"))
		rep.c.Close() // the replica goes
		step(rd.read())
		x, _ := strconv.Unquote(ctl.do("GET", "x"))
		step("x has connected_slaves:0: " + strconv.FormatBool(strings.Contains(x, "connected_slaves:0")))
		step(ctl.do("CONFIG", "SET", "min-replicas-to-write", "0"))
		return out
	}
	redis := scenario(dialRedis, func() {})
	vigil := scenario(func() *rconn { return l.dial(t) }, func() {
		waitBusy(t, l.s)
		l.clk.Advance(20 * time.Millisecond)
	})
	want := []string{"+OK", "+OK", "+OK", "+OK", "eof keys=1 libs=[]", "-" + errBusy, "(integer) 1",
		"x has connected_slaves:0: true", "+OK"}
	sameAsRedis(t, "replica dropped during a busy script", redis, vigil, want)
}
