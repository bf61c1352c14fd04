package replication

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// The FAILOVER replies, each checked against redis-server 7.0.15 with
// redis-cli (a master with and without a replica at 127.0.0.1:6380, a
// replica, a failover in progress).
func TestDecideFailoverCommand(t *testing.T) {
	online := FailoverReplica{Host: "127.0.0.1", Port: 6380, Online: true}
	syncing := FailoverReplica{Host: "10.0.0.2", Port: 6381}
	withReplica := FailoverEnv{Replicas: []FailoverReplica{online, syncing}}
	alone := FailoverEnv{}
	running := FailoverEnv{State: FailoverWaitSync, Replicas: []FailoverReplica{online}}
	replica := FailoverEnv{IsReplica: true}
	for _, c := range []struct {
		args string
		env  FailoverEnv
		want string
		req  *FailoverRequest
	}{
		{"FAILOVER", alone, "-ERR FAILOVER requires connected replicas.\r\n", nil},
		{"FAILOVER abort", alone, "-ERR No failover in progress.\r\n", nil},
		{"FAILOVER ABORT", running, "+OK\r\n", nil},
		{"FAILOVER abort x", alone, "-ERR syntax error\r\n", nil},
		{"FAILOVER TIMEOUT 5 ABORT", running, "-ERR syntax error\r\n", nil},
		{"FAILOVER timeout 0", alone, "-ERR FAILOVER timeout must be greater than 0\r\n", nil},
		{"FAILOVER timeout -1", withReplica, "-ERR FAILOVER timeout must be greater than 0\r\n", nil},
		{"FAILOVER timeout x", alone, "-ERR value is not an integer or out of range\r\n", nil},
		{"FAILOVER to h x", alone, "-ERR value is not an integer or out of range\r\n", nil},
		{"FAILOVER timeout", alone, "-ERR syntax error\r\n", nil},
		{"FAILOVER to h", alone, "-ERR syntax error\r\n", nil},
		{"FAILOVER foo", alone, "-ERR syntax error\r\n", nil},
		{"FAILOVER force force", alone, "-ERR syntax error\r\n", nil},
		{"FAILOVER timeout 5 timeout 6", alone, "-ERR syntax error\r\n", nil},
		{"FAILOVER to a 1 to b 2", alone, "-ERR syntax error\r\n", nil},
		// Argument errors come before the state checks.
		{"FAILOVER timeout 0", running, "-ERR FAILOVER timeout must be greater than 0\r\n", nil},
		{"FAILOVER", running, "-ERR FAILOVER already in progress.\r\n", nil},
		{"FAILOVER", replica, "-ERR FAILOVER is not valid when server is a replica.\r\n", nil},
		{"FAILOVER force", alone, "-ERR FAILOVER requires connected replicas.\r\n", nil},
		{"FAILOVER force", withReplica, "-ERR FAILOVER with force option requires both a timeout and target HOST and IP.\r\n", nil},
		{"FAILOVER timeout 100 force", withReplica, "-ERR FAILOVER with force option requires both a timeout and target HOST and IP.\r\n", nil},
		{"FAILOVER to 127.0.0.1 6380 force", withReplica, "-ERR FAILOVER with force option requires both a timeout and target HOST and IP.\r\n", nil},
		{"FAILOVER to 127.0.0.1 1", withReplica, "-ERR FAILOVER target HOST and PORT is not a replica.\r\n", nil},
		{"FAILOVER to 10.0.0.2 6381", withReplica, "-ERR FAILOVER target replica is not online.\r\n", nil},
		{"FAILOVER", withReplica, "+OK\r\n", &FailoverRequest{}},
		{"failover TO 127.0.0.1 6380", withReplica, "+OK\r\n", &FailoverRequest{HasTarget: true, Host: "127.0.0.1", Port: 6380}},
		{"FAILOVER force TIMEOUT 50 to 127.0.0.1 6380", withReplica, "+OK\r\n",
			&FailoverRequest{HasTarget: true, Host: "127.0.0.1", Port: 6380, Force: true, TimeoutMs: 50}},
	} {
		d := DecideFailoverCommand(argv(c.args), c.env)
		if d.Reply != c.want {
			t.Errorf("%s: %q, want %q", c.args, d.Reply, c.want)
		}
		if (c.req != nil) != d.Start {
			t.Errorf("%s: Start %v", c.args, d.Start)
		} else if c.req != nil && !reflect.DeepEqual(*c.req, d.Request) {
			t.Errorf("%s: request %+v, want %+v", c.args, d.Request, *c.req)
		}
		if d.Abort != (c.want == "+OK\r\n" && c.req == nil) {
			t.Errorf("%s: Abort %v", c.args, d.Abort)
		}
	}
	if d := DecideFailoverCommand(argv("FAILOVER"), FailoverEnv{ClusterEnabled: true}); d.Reply != "-ERR FAILOVER not allowed in cluster mode. Use CLUSTER FAILOVER command instead.\r\n" {
		t.Errorf("cluster: %q", d.Reply)
	}
}

// updateFailoverStatus: the deadline first, then the target's
// acknowledged offset; without TO the first replica that acknowledged
// everything becomes the target.
func TestFailoverUpdate(t *testing.T) {
	t0 := time.Unix(1700000000, 0)
	a := FailoverReplica{Host: "10.0.0.1", Port: 1, Online: true, AckOffset: 90}
	b := FailoverReplica{Host: "10.0.0.2", Port: 2, Online: true, AckOffset: 100}

	var f Failover
	if st := f.Update(t0, 100, []FailoverReplica{a, b}); st.Kind != FailoverWait {
		t.Fatalf("no failover: %+v", st)
	}

	// Any replica: b has everything.
	f.Start(FailoverRequest{}, t0)
	if st := f.Update(t0, 100, []FailoverReplica{a}); st.Kind != FailoverWait || f.State != FailoverWaitSync || f.Host != "" {
		t.Fatalf("a behind: %+v %+v", st, f)
	}
	st := f.Update(t0, 100, []FailoverReplica{a, b})
	if st.Kind != FailoverGo || st.Host != "10.0.0.2" || st.Port != 2 || f.State != FailoverInProgress {
		t.Fatalf("b synced: %+v %+v", st, f)
	}
	if st := f.Update(t0.Add(time.Hour), 100, nil); st.Kind != FailoverWait {
		t.Fatalf("in progress: %+v", st)
	}

	// A target: only it counts.
	f.Start(FailoverRequest{HasTarget: true, Host: "10.0.0.1", Port: 1}, t0)
	if st := f.Update(t0, 100, []FailoverReplica{a, b}); st.Kind != FailoverWait {
		t.Fatalf("target behind: %+v", st)
	}
	a.AckOffset = 100
	if st := f.Update(t0, 100, []FailoverReplica{a, b}); st.Kind != FailoverGo || st.Host != "10.0.0.1" {
		t.Fatalf("target synced: %+v", st)
	}

	// TIMEOUT: aborts at the deadline, not before.
	a.AckOffset = 90
	f.Start(FailoverRequest{TimeoutMs: 500}, t0)
	if !f.PingPaused(true) || f.PingPaused(false) {
		t.Fatal("PING must pause only with a deadline and paused clients")
	}
	if st := f.Update(t0.Add(499*time.Millisecond), 100, []FailoverReplica{a}); st.Kind != FailoverWait {
		t.Fatalf("before the deadline: %+v", st)
	}
	st = f.Update(t0.Add(500*time.Millisecond), 100, []FailoverReplica{a})
	if st.Kind != FailoverAbort || st.Reason != "Replica never caught up before timeout" {
		t.Fatalf("at the deadline: %+v", st)
	}
	if got := f.AbortLog(st.Reason); got != "FAILOVER to any replica aborted: Replica never caught up before timeout" {
		t.Fatalf("abort log %q", got)
	}

	// FORCE: fails over to the target at the deadline, synced or not.
	f.Start(FailoverRequest{HasTarget: true, Host: "10.0.0.1", Port: 1, Force: true, TimeoutMs: 500}, t0)
	st = f.Update(t0.Add(time.Second), 100, nil)
	if st.Kind != FailoverGo || st.Host != "10.0.0.1" || st.Port != 1 || f.State != FailoverInProgress {
		t.Fatalf("force: %+v %+v", st, f)
	}
	if st.Log != "FAILOVER to 10.0.0.1:1 time out exceeded, failing over." {
		t.Fatalf("force log %q", st.Log)
	}
	f.Clear()
	if f != (Failover{}) || f.PingPaused(true) {
		t.Fatalf("clear: %+v", f)
	}
	if new(Failover).PingPaused(true) {
		t.Fatal("PING paused without a failover")
	}
}

// The old master's handshake in FAILOVER_IN_PROGRESS: PSYNC carries
// FAILOVER; +CONTINUE or +FULLRESYNC is reported accepted (and handled as
// usual), an error ends the handshake; a reconnection after the answer
// sends a plain PSYNC.
func TestHandshakeFailover(t *testing.T) {
	const id = "0123456789012345678901234567890123456789"
	const newID = "abcdefabcdefabcdefabcdefabcdefabcdefabcd"
	start := func() (*Handshake, []Action) {
		h := NewHandshake(HandshakeConfig{ListeningPort: 6379, Failover: true}, &CachedMaster{ReplID: id, Offset: 100})
		h.Step(Connect{})
		h.Step(Connected{})
		h.Step(Reply{"+PONG"})
		h.Step(Reply{"+OK"})
		return h, h.Step(Reply{"+OK"})
	}
	h, acts := start()
	want := "send *4 $5 PSYNC $40 " + id + " $3 101 $8 FAILOVER "
	if got := describe(acts); len(got) != 1 || got[0] != want {
		t.Fatalf("PSYNC: %q", got)
	}
	if !h.FailingOver() {
		t.Fatal("FailingOver before the answer")
	}
	if got := h.Step(Reply{""}); len(got) != 0 {
		t.Fatalf("keepalive: %v", got)
	}
	acts = h.Step(Reply{"+CONTINUE " + newID})
	if fr, ok := acts[0].(FailoverReply); !ok || !fr.Accepted {
		t.Fatalf("first action %#v", acts[0])
	}
	var pr *PartialResync
	for _, a := range acts {
		if p, ok := a.(PartialResync); ok {
			pr = &p
		}
	}
	if pr == nil || pr.NewID != newID || pr.OldID != id || h.State != StateConnected || h.FailingOver() {
		t.Fatalf("+CONTINUE: %v state %v", describe(acts), h.State)
	}
	// The link drops: the next PSYNC is a plain one.
	h.Step(LinkFailed{Reason: "x"})
	h.Step(Connect{})
	h.Step(Connected{})
	h.Step(Reply{"+PONG"})
	h.Step(Reply{"+OK"})
	acts = h.Step(Reply{"+OK"})
	if got := describe(acts); len(got) != 1 || strings.Contains(got[0], "FAILOVER") {
		t.Fatalf("PSYNC after the failover: %q", got)
	}

	h, _ = start()
	acts = h.Step(Reply{"+FULLRESYNC " + newID + " 7"})
	if fr, ok := acts[0].(FailoverReply); !ok || !fr.Accepted || h.State != StateTransfer {
		t.Fatalf("+FULLRESYNC: %v", describe(acts))
	}

	h, _ = start()
	acts = h.Step(Reply{"-ERR PSYNC FAILOVER replid must match my replid."})
	if got := describe(acts); len(got) != 2 || !strings.HasPrefix(got[0], "replication.FailoverReply{Accepted:false") ||
		got[1] != "close cache=false" || h.State != StateNone {
		t.Fatalf("rejected: %q state %v", got, h.State)
	}
}
