package sentinel

import (
	"math/rand"
	"strings"
	"testing"
	"time"
)

func logs(acts []Action) []string {
	var out []string
	for _, a := range acts {
		if l, ok := a.(Log); ok {
			out = append(out, l.Message)
		}
	}
	return out
}

// TestFailoverLogLines: the serverLog lines of sentinel.c that are not events.
// A vote reply with a new epoch logs "<sentinel> voted for <leader> <epoch>"
// once (sentinelReceiveIsMasterDownReply), and an ODOWN master whose failover
// is held back by the failover_timeout*2 delay (here: this sentinel voted for
// another one) logs "Next failover delay: ..." once per failover start time
// (sentinelStartFailoverIfNeeded).
func TestFailoverLogLines(t *testing.T) {
	c := newCore(t)
	m := c.masters["mymaster"]
	c.Step(t0+2, HelloReceived{Payload: hello("127.0.0.1", 26380, idB, 0, "127.0.0.1", 6379, 0)})
	connect(c, t0+10, c.Step(t0+10, Ticked{}))
	c.Step(t0+11, PingReplied{Instance: c.ref(m), Reply: "PONG"})
	var ask AskMasterDown
	for now := t0 + 100; now <= t0+7000 && ask.Sentinel.Name == ""; now += 100 {
		acts := c.Step(now, Ticked{})
		if a, ok := find[AskMasterDown](acts); ok {
			ask = a
		}
		for _, a := range acts {
			if p, ok := a.(SendPing); ok && p.Instance.Kind == KindSentinel {
				c.Step(now, PingReplied{Instance: p.Instance, Reply: "PONG"})
			}
		}
	}
	if ask.Sentinel.Name == "" {
		t.Fatal("no SENTINEL is-master-down-by-addr asked")
	}
	// B asks for our vote in epoch 1 and gets it: our failover start time
	// moves to now, so we must wait failover_timeout*2 before our own.
	c.Step(t0+6250, IsMasterDownAsked{IP: "127.0.0.1", Port: 6379, Epoch: 1, RunID: idB})
	acts := c.Step(t0+6251, IsMasterDownReplied{Sentinel: ask.Sentinel, Down: true, Leader: idB, LeaderEpoch: 1})
	if got, want := logs(acts), []string{idB + " voted for " + idB + " 1"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("vote reply logs %q, want %q", got, want)
	}
	if got := logs(c.Step(t0+6252, IsMasterDownReplied{Sentinel: ask.Sentinel, Down: true, Leader: idB, LeaderEpoch: 1})); len(got) != 0 {
		t.Errorf("same vote again logs %q", got)
	}
	acts = c.Step(t0+6300, Ticked{})
	if !hasNotify(acts, "+odown master mymaster") || hasNotify(acts, "+try-failover") {
		t.Fatalf("want ODOWN without a failover, got %q", notifies(acts))
	}
	until := time.Unix((m.failoverStartTime+m.failoverTimeout*2)/1000, 0).Format("Mon Jan _2 15:04:05 2006")
	if got, want := logs(acts), []string{"Next failover delay: I will not start a failover before " + until}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("ODOWN logs %q, want %q", got, want)
	}
	if got := logs(c.Step(t0+6400, Ticked{})); len(got) != 0 {
		t.Errorf("second tick logs %q (once per failover start time)", got)
	}
}

// TestFailoverCommandLogLine: SENTINEL FAILOVER logs "Executing user requested
// FAILOVER of '<name>'" when it starts the failover, and nothing when it
// refuses (sentinelCommand).
func TestFailoverCommandLogLine(t *testing.T) {
	c := forgetCore(t, nil)
	drive(c, t0, t0+3000, allBut())
	acts := c.Step(t0+3001, FailoverRequested{Name: "mymaster"})
	if r, ok := last(acts).(Reply); !ok || r.Kind != ReplyOK {
		t.Fatalf("SENTINEL FAILOVER: %#v", acts)
	}
	if got, want := logs(acts), []string{"Executing user requested FAILOVER of 'mymaster'"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("logs %q, want %q", got, want)
	}
	acts = c.Step(t0+3002, FailoverRequested{Name: "mymaster"})
	if r, ok := last(acts).(Reply); !ok || r.Kind != ReplyError || len(logs(acts)) != 0 {
		t.Errorf("second SENTINEL FAILOVER: %#v (want INPROG and no log line)", acts)
	}
}

// TestSimulateFailureLogLines: SENTINEL SIMULATE-FAILURE logs one warning per
// crash flag it sets, and none when it clears them (sentinelCommand).
func TestSimulateFailureLogLines(t *testing.T) {
	c := newCore(t)
	acts := c.Step(t0+1, SimulateFailureRequested{Flags: []string{SimCrashAfterElection, SimCrashAfterPromotion}})
	want := []string{
		"Failure simulation: this Sentinel will crash after being successfully elected as failover leader",
		"Failure simulation: this Sentinel will crash after promoting the selected replica to master",
	}
	if got := logs(acts); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("logs %q, want %q", got, want)
	}
	if got := logs(c.Step(t0+2, SimulateFailureRequested{})); len(got) != 0 {
		t.Errorf("clearing logs %q", got)
	}
}

// TestSimulateFailureRepeatedFlags: sentinelCommand logs a line per argument,
// in the order given, repeats included, and sets the flags from scratch.
func TestSimulateFailureRepeatedFlags(t *testing.T) {
	c := newCore(t)
	c.Step(t0+1, SimulateFailureRequested{Flags: []string{SimCrashAfterElection}})
	acts := c.Step(t0+2, SimulateFailureRequested{Flags: []string{SimCrashAfterPromotion, SimCrashAfterPromotion}})
	p := "Failure simulation: this Sentinel will crash after promoting the selected replica to master"
	if got := logs(acts); strings.Join(got, "|") != p+"|"+p {
		t.Errorf("logs %q, want the promotion line twice", got)
	}
	if got := c.SimulateFailureFlags(); got != 2 {
		t.Errorf("flags %d, want 2 (election cleared)", got)
	}
	acts = c.Step(t0+3, SimulateFailureRequested{Flags: []string{SimCrashAfterPromotion, SimCrashAfterElection}})
	want := []string{p, "Failure simulation: this Sentinel will crash after being successfully elected as failover leader"}
	if got := logs(acts); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("logs %q, want %q (argument order)", got, want)
	}
}

// TestResolveFailureLogLines: createSentinelAddr logs "Failed to resolve
// hostname '%s'" at warning level when anetResolve fails (a host name
// without resolve-hostnames, or one that does not resolve), even when the
// address is then accepted unresolved; not for a bad port, and not for
// SENTINEL MONITOR's own check, which refuses such a host silently.
func TestResolveFailureLogLines(t *testing.T) {
	c := New(Options{Port: 26379, Resolve: func(h string) (string, bool) {
		return "10.0.0.9", h == "peer.example"
	}}, rand.New(rand.NewSource(1)))
	cfg := NewConfig()
	cfg.MyID = idA
	cfg.Masters = []MasterConfig{{Name: "mymaster", IP: "127.0.0.1", Port: 6379, Quorum: 2, DownAfter: 5000, FailoverTimeout: 60000}}
	c.Step(t0, ConfigLoaded{Config: cfg})
	warn := func(acts []Action) []string {
		var out []string
		for _, a := range acts {
			if l, ok := a.(Log); ok && l.Level == LevelWarning && strings.HasPrefix(l.Message, "Failed to resolve") {
				out = append(out, l.Message)
			}
		}
		return out
	}
	check := func(what string, acts []Action, want ...string) {
		t.Helper()
		if got := warn(acts); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%s: logs %q, want %q", what, got, want)
		}
	}
	check("is-master-down-by-addr host name", c.Step(t0+1, IsMasterDownAsked{IP: "nosuch.example", Port: 6379, RunID: "*"}),
		"Failed to resolve hostname 'nosuch.example'")
	check("is-master-down-by-addr bad port", c.Step(t0+2, IsMasterDownAsked{IP: "nosuch.example", Port: 70000, RunID: "*"}))
	acts := c.Step(t0+3, MonitorRequested{Name: "m2", IP: "peer.example", Port: 6379, Quorum: 1})
	check("monitor host name", acts)
	if r, ok := last(acts).(Reply); !ok || r.Text != "ERR Invalid IP address or hostname specified" {
		t.Errorf("monitor host name without resolve-hostnames: %#v", last(acts))
	}
	c.Step(t0+4, ConfigSetRequested{Param: "resolve-hostnames", Value: "yes"})
	acts = c.Step(t0+5, MonitorRequested{Name: "m3", IP: "nosuch.example", Port: 6379, Quorum: 1})
	check("monitor unresolvable", acts)
	if r, ok := last(acts).(Reply); !ok || r.Text != "ERR Invalid IP address or hostname specified" {
		t.Errorf("monitor unresolvable host: %#v", last(acts))
	}
	acts = c.Step(t0+6, MonitorRequested{Name: "m4", IP: "peer.example", Port: 6379, Quorum: 1})
	if r, ok := last(acts).(Reply); !ok || r.Kind != ReplyOK {
		t.Fatalf("monitor resolvable host: %#v", last(acts))
	}
	check("monitor resolvable", acts)
	m := c.masters["mymaster"]
	info := "run_id:" + idB + "\r\nrole:master\r\nslave0:ip=gone.example,port=6380,state=online,offset=1,lag=0\r\n"
	// sentinelRedisInstanceLookupSlave and createSentinelRedisInstance each
	// try, every INFO.
	check("INFO unresolvable replica", c.Step(t0+7, InfoReceived{Instance: c.ref(m), Info: info}),
		"Failed to resolve hostname 'gone.example'", "Failed to resolve hostname 'gone.example'")
	check("INFO unresolvable replica again", c.Step(t0+8, InfoReceived{Instance: c.ref(m), Info: info}),
		"Failed to resolve hostname 'gone.example'", "Failed to resolve hostname 'gone.example'")
}
