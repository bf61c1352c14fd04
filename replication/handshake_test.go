package replication

import (
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"
)

// wire renders the Send actions of acts, and the kinds of the others, so a
// test can compare a whole step at once.
func describe(acts []Action) []string {
	var out []string
	for _, a := range acts {
		switch a := a.(type) {
		case Send:
			out = append(out, "send "+strings.ReplaceAll(string(a.Data), "\r\n", " "))
		case Log:
			// logs are not part of the protocol
		case Close:
			out = append(out, fmt.Sprintf("close cache=%v", a.CacheMaster))
		default:
			out = append(out, fmt.Sprintf("%T%+v", a, a))
		}
	}
	return out
}

// walk drives h to RECEIVE_PSYNC_REPLY with plain OK replies.
func walk(t *testing.T, h *Handshake) {
	t.Helper()
	h.Step(Connect{})
	h.Step(Connected{})
	h.Step(Reply{"+PONG"})
	for h.State != StateReceivePsyncReply {
		if !h.State.InHandshake() {
			t.Fatalf("left the handshake in %v", h.State)
		}
		h.Step(Reply{"+OK"})
	}
}

func TestHandshakeHappyPath(t *testing.T) {
	h := NewHandshake(HandshakeConfig{MasterUser: "repl", MasterAuth: "s3cret", ListeningPort: 6380, AnnounceIP: "10.0.0.5"}, nil)
	steps := []struct {
		ev    Event
		state ReplState
		acts  []string
	}{
		{Connect{}, StateConnecting, []string{"replication.Dial{}"}},
		{Connected{}, StateReceivePingReply, []string{"send *1 $4 PING "}},
		// One write with everything, as syncWithMaster pipelines it.
		{Reply{"+PONG"}, StateReceiveAuthReply, []string{"send *3 $4 AUTH $4 repl $6 s3cret " +
			"*3 $8 REPLCONF $14 listening-port $4 6380 " +
			"*3 $8 REPLCONF $10 ip-address $8 10.0.0.5 " +
			"*5 $8 REPLCONF $4 capa $3 eof $4 capa $6 psync2 "}},
		{Reply{"+OK"}, StateReceivePortReply, nil},
		{Reply{"+OK"}, StateReceiveIPReply, nil},
		{Reply{"+OK"}, StateReceiveCapaReply, nil},
		{Reply{"+OK"}, StateReceivePsyncReply, []string{"send *3 $5 PSYNC $1 ? $2 -1 "}},
		{Reply{""}, StateReceivePsyncReply, nil}, // newline keepalive before the reply
		{Reply{"+FULLRESYNC " + idA + " 28"}, StateTransfer, []string{"replication.FullResync{ReplID:" + idA + " Offset:28}"}},
		{Reply{""}, StateTransfer, []string{"replication.KeepAlive{}"}},
		{Reply{"$EOF:" + testMark}, StateTransfer, []string{"replication.ExpectPayload{Size:0 EOFMark:" + testMark + "}"}},
		{PayloadLoaded{}, StateConnected, []string{"replication.Synced{ReplID:" + idA + " Offset:28 PrePsync:false SendAck:true}"}},
		{LinkFailed{Reason: "EOF"}, StateConnect, []string{"close cache=true"}},
	}
	for i, s := range steps {
		got := describe(h.Step(s.ev))
		if h.State != s.state || !reflect.DeepEqual(got, s.acts) {
			t.Fatalf("step %d %T%+v: state %v acts %q; want %v %q", i, s.ev, s.ev, h.State, got, s.state, s.acts)
		}
	}
}

func TestHandshakeMinimalConfigAndDiskPayload(t *testing.T) {
	// No masterauth: no AUTH, the state goes straight to the port reply; no
	// announce-ip: no REPLCONF ip-address and its reply is not awaited.
	h := NewHandshake(HandshakeConfig{ListeningPort: 6379}, &CachedMaster{ReplID: idA, Offset: 541})
	h.Step(Connect{})
	h.Step(Connected{})
	got := describe(h.Step(Reply{"+PONG"}))
	want := []string{"send *3 $8 REPLCONF $14 listening-port $4 6379 *5 $8 REPLCONF $4 capa $3 eof $4 capa $6 psync2 "}
	if !reflect.DeepEqual(got, want) || h.State != StateReceivePortReply {
		t.Fatalf("%v %q", h.State, got)
	}
	h.Step(Reply{"+OK"})
	if h.State != StateReceiveCapaReply {
		t.Fatalf("after port reply: %v", h.State)
	}
	// PSYNC <cached replid> <cached offset+1>.
	if got := describe(h.Step(Reply{"+OK"})); !reflect.DeepEqual(got, []string{"send *3 $5 PSYNC $40 " + idA + " $3 542 "}) {
		t.Fatalf("%q", got)
	}
	h.Step(Reply{"+FULLRESYNC " + idB + " 1000"})
	if c, ok := h.Cached(); !ok || c.ReplID != idA {
		t.Fatal("the cached master is kept until the payload is loaded")
	}
	if got := describe(h.Step(Reply{"$175"})); !reflect.DeepEqual(got, []string{"replication.ExpectPayload{Size:175 EOFMark:}"}) {
		t.Fatalf("%q", got)
	}
	// Disk payload: no immediate ACK.
	if got := describe(h.Step(PayloadLoaded{})); !reflect.DeepEqual(got, []string{"replication.Synced{ReplID:" + idB + " Offset:1000 PrePsync:false SendAck:false}"}) {
		t.Fatalf("%q", got)
	}
	if _, ok := h.Cached(); ok {
		t.Fatal("a loaded full sync must discard the cached master")
	}
}

// TestHandshakeFailedTransferKeepsCache: a transfer that dies after
// +FULLRESYNC leaves the cached master, so the next attempt asks PSYNC with
// it again (7.0 discards it only in replicationAttachToNewMaster).
func TestHandshakeFailedTransferKeepsCache(t *testing.T) {
	h := NewHandshake(HandshakeConfig{ListeningPort: 1}, &CachedMaster{ReplID: idA, Offset: 9})
	walk(t, h)
	h.Step(Reply{"+FULLRESYNC " + idB + " 50"})
	h.Step(Reply{"$EOF:" + testMark})
	h.Step(LinkFailed{Reason: "Timeout receiving bulk data from MASTER"})
	if h.State != StateConnect {
		t.Fatal(h.State)
	}
	h.Step(Connect{})
	h.Step(Connected{})
	h.Step(Reply{"+PONG"})
	h.Step(Reply{"+OK"})
	if got := describe(h.Step(Reply{"+OK"})); !reflect.DeepEqual(got, []string{"send *3 $5 PSYNC $40 " + idA + " $2 10 "}) {
		t.Fatalf("%q", got)
	}
}

func TestHandshakeFailoverPsync(t *testing.T) {
	h := NewHandshake(HandshakeConfig{ListeningPort: 1, Failover: true}, &CachedMaster{ReplID: idA, Offset: 9})
	h.Step(Connect{})
	h.Step(Connected{})
	h.Step(Reply{"+PONG"})
	h.Step(Reply{"+OK"})
	if got := describe(h.Step(Reply{"+OK"})); !reflect.DeepEqual(got, []string{"send *4 $5 PSYNC $40 " + idA + " $2 10 $8 FAILOVER "}) {
		t.Fatalf("%q", got)
	}
}

const authHandshake0 = "send *2 $4 AUTH $2 pw *3 $8 REPLCONF $14 listening-port $4 6380 *5 $8 REPLCONF $4 capa $3 eof $4 capa $6 psync2 "

var authHandshake = []string{authHandshake0}

func TestHandshakeReplies(t *testing.T) {
	auth := HandshakeConfig{MasterAuth: "pw", ListeningPort: 6380}
	for _, c := range []struct {
		name   string
		cfg    HandshakeConfig
		state  ReplState // state to reach with OK replies before the line
		line   string
		after  ReplState
		expect []string
	}{
		// RECEIVE_PING_REPLY: "+..." or an auth error go on; anything else closes.
		{"PING +PONG", auth, StateReceivePingReply, "+PONG", StateReceiveAuthReply, authHandshake},
		{"PING any +", auth, StateReceivePingReply, "+whatever", StateReceiveAuthReply, authHandshake},
		{"PING -NOAUTH", auth, StateReceivePingReply, "-NOAUTH Authentication required.", StateReceiveAuthReply, authHandshake},
		{"PING -NOPERM", auth, StateReceivePingReply, "-NOPERM this user has no permissions to run the 'ping' command", StateReceiveAuthReply, authHandshake},
		{"PING old not permitted", auth, StateReceivePingReply, "-ERR operation not permitted", StateReceiveAuthReply, authHandshake},
		{"PING other error", auth, StateReceivePingReply, "-ERR unknown command", StateConnect, []string{"close cache=false"}},
		{"PING -LOADING", auth, StateReceivePingReply, "-LOADING Redis is loading the dataset in memory", StateConnect, []string{"close cache=false"}},
		{"PING empty line", auth, StateReceivePingReply, "", StateConnect, []string{"close cache=false"}},
		// AUTH: any '-' closes.
		{"AUTH ok", auth, StateReceiveAuthReply, "+OK", StateReceivePortReply, nil},
		{"AUTH wrong", auth, StateReceiveAuthReply, "-WRONGPASS invalid username-password pair or user is disabled.", StateConnect, []string{"close cache=false"}},
		{"AUTH no password set", auth, StateReceiveAuthReply, "-ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?", StateConnect, []string{"close cache=false"}},
		// REPLCONF replies: errors are only logged.
		{"port error", auth, StateReceivePortReply, "-ERR Unrecognized REPLCONF option: listening-port", StateReceiveCapaReply, nil},
		{"ip error", HandshakeConfig{AnnounceIP: "1.2.3.4"}, StateReceiveIPReply, "-ERR bad", StateReceiveCapaReply, nil},
		{"capa error", auth, StateReceiveCapaReply, "-ERR bad", StateReceivePsyncReply, []string{"send *3 $5 PSYNC $1 ? $2 -1 "}},
		// PSYNC replies (slaveTryPartialResynchronization).
		{"psync newline", auth, StateReceivePsyncReply, "", StateReceivePsyncReply, nil},
		{"psync -NOMASTERLINK", auth, StateReceivePsyncReply, "-NOMASTERLINK Can't SYNC while not connected with my master", StateConnect, []string{"close cache=false"}},
		{"psync -LOADING", auth, StateReceivePsyncReply, "-LOADING Redis is loading the dataset in memory", StateConnect, []string{"close cache=false"}},
		{"psync -ERR falls back to SYNC", auth, StateReceivePsyncReply, "-ERR unknown command 'PSYNC'", StateTransfer, []string{"send SYNC "}},
		{"psync unexpected falls back to SYNC", auth, StateReceivePsyncReply, "+OK", StateTransfer, []string{"send SYNC "}},
		{"psync other error falls back to SYNC", auth, StateReceivePsyncReply, "-NOAUTH Authentication required.", StateTransfer, []string{"send SYNC "}},
		{"psync fullresync", auth, StateReceivePsyncReply, "+FULLRESYNC " + idA + " 0", StateTransfer, []string{"replication.FullResync{ReplID:" + idA + " Offset:0}"}},
		{"psync fullresync short id", auth, StateReceivePsyncReply, "+FULLRESYNC " + idA[:39] + " 0", StateTransfer, []string{"replication.FullResync{ReplID: Offset:-1}"}},
		{"psync fullresync no offset", auth, StateReceivePsyncReply, "+FULLRESYNC " + idA, StateTransfer, []string{"replication.FullResync{ReplID: Offset:-1}"}},
		{"psync fullresync garbage offset (strtoll)", auth, StateReceivePsyncReply, "+FULLRESYNC " + idA + " 12abc", StateTransfer, []string{"replication.FullResync{ReplID:" + idA + " Offset:12}"}},
		{"psync continue without cached master", auth, StateReceivePsyncReply, "+CONTINUE", StateConnect, []string{"close cache=false"}},
		// TRANSFER header.
		{"transfer newline", auth, StateTransfer, "", StateTransfer, []string{"replication.KeepAlive{}"}},
		{"transfer master error", auth, StateTransfer, "-ERR snapshot failed", StateConnect, []string{"close cache=false"}},
		{"transfer bad protocol", auth, StateTransfer, "+FULLRESYNC again", StateConnect, []string{"close cache=false"}},
		{"transfer bad length", auth, StateTransfer, "$12x", StateConnect, []string{"close cache=false"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := NewHandshake(c.cfg, nil)
			h.Step(Connect{})
			h.Step(Connected{})
			for h.State != c.state {
				line := "+OK"
				if h.State == StateReceivePingReply {
					line = "+PONG"
				}
				if h.State == StateReceivePsyncReply {
					line = "+FULLRESYNC " + idB + " 5"
				}
				h.Step(Reply{line})
				if h.State == StateConnect {
					t.Fatal("could not reach the state")
				}
			}
			got := describe(h.Step(Reply{c.line}))
			if h.State != c.after || !reflect.DeepEqual(got, c.expect) {
				t.Fatalf("state %v acts %q; want %v %q", h.State, got, c.after, c.expect)
			}
		})
	}
}

func TestHandshakeContinue(t *testing.T) {
	for _, c := range []struct {
		name, line string
		want       PartialResync
		cachedID   string
	}{
		{"plain +CONTINUE", "+CONTINUE", PartialResync{}, idA},
		{"same id", "+CONTINUE " + idA, PartialResync{}, idA},
		{"new id", "+CONTINUE " + idB, PartialResync{NewID: idB, OldID: idA}, idB},
		{"id of the wrong length is ignored", "+CONTINUE " + idB + "x", PartialResync{}, idA},
		{"short id is ignored", "+CONTINUE abc", PartialResync{}, idA},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := NewHandshake(HandshakeConfig{}, &CachedMaster{ReplID: idA, Offset: 541})
			walk(t, h)
			var got []PartialResync
			for _, a := range h.Step(Reply{c.line}) {
				if p, ok := a.(PartialResync); ok {
					got = append(got, p)
				}
			}
			if h.State != StateConnected || len(got) != 1 || got[0] != c.want {
				t.Fatalf("state %v %+v", h.State, got)
			}
			if cm, _ := h.Cached(); cm.ReplID != c.cachedID || cm.Offset != 541 {
				t.Fatalf("cached %+v", cm)
			}
		})
	}
}

func TestHandshakeSyncFallbackIsPrePsync(t *testing.T) {
	h := NewHandshake(HandshakeConfig{}, nil)
	walk(t, h)
	h.Step(Reply{"-ERR unknown command 'PSYNC'"})
	h.Step(Reply{"$10"})
	acts := h.Step(PayloadLoaded{})
	s, ok := acts[len(acts)-1].(Synced)
	if !ok || !s.PrePsync || s.Offset != -1 || s.SendAck {
		t.Fatalf("%+v", acts)
	}
}

func TestHandshakeLifecycle(t *testing.T) {
	h := NewHandshake(HandshakeConfig{}, nil)
	// Events that do not fit the state are ignored or close the link, never panic.
	if acts := h.Step(Connected{}); acts != nil || h.State != StateConnect {
		t.Fatalf("%v %v", acts, h.State)
	}
	if got := describe(h.Step(Reply{"+PONG"})); !reflect.DeepEqual(got, []string{"close cache=false"}) {
		t.Fatalf("%q", got)
	}
	if got := describe(h.Step(PayloadLoaded{})); !reflect.DeepEqual(got, []string{"close cache=false"}) || h.State != StateConnect {
		t.Fatalf("%q", got)
	}
	// A connect failure goes back to CONNECT; the next cron dials again.
	h.Step(Connect{})
	if got := describe(h.Step(LinkFailed{Reason: "connection refused"})); !reflect.DeepEqual(got, []string{"close cache=false"}) || h.State != StateConnect {
		t.Fatalf("%q %v", got, h.State)
	}
	walk(t, h)
	// REPLICAOF NO ONE mid-handshake.
	if got := describe(h.Step(Stop{})); !reflect.DeepEqual(got, []string{"close cache=false"}) || h.State != StateNone {
		t.Fatalf("%q %v", got, h.State)
	}
	if h.Step(Connect{}) != nil || h.State != StateNone {
		t.Fatal("stopped handshake reconnected")
	}
}

func TestReplStateNames(t *testing.T) {
	for s, want := range map[ReplState][2]string{
		StateNone:              {"REPL_STATE_NONE", "none"},
		StateConnect:           {"REPL_STATE_CONNECT", "connect"},
		StateConnecting:        {"REPL_STATE_CONNECTING", "connecting"},
		StateReceivePingReply:  {"REPL_STATE_RECEIVE_PING_REPLY", "handshake"},
		StateSendPsync:         {"REPL_STATE_SEND_PSYNC", "handshake"},
		StateReceivePsyncReply: {"REPL_STATE_RECEIVE_PSYNC_REPLY", "handshake"},
		StateTransfer:          {"REPL_STATE_TRANSFER", "sync"},
		StateConnected:         {"REPL_STATE_CONNECTED", "connected"},
	} {
		if s.String() != want[0] || s.RoleState() != want[1] {
			t.Errorf("%d: %s %s", s, s, s.RoleState())
		}
	}
}

func TestStrtoll(t *testing.T) {
	for s, want := range map[string]int64{"": 0, "12": 12, "  -3x": -3, "+7": 7, "abc": 0,
		"9223372036854775807": 1<<63 - 1, "9223372036854775808": 1<<63 - 1, "99999999999999999999": 1<<63 - 1,
		"-9223372036854775808": -1 << 63, "-99999999999999999999": -1 << 63} {
		if got := strtoll(s); got != want {
			t.Errorf("strtoll(%q) = %d, want %d", s, got, want)
		}
	}
}

// TestHandshakeRandomPeer feeds seeded random events and hostile lines: the
// machine never panics, stays in a named state, and every Close leaves it in
// CONNECT.
func TestHandshakeRandomPeer(t *testing.T) {
	rnd := rand.New(rand.NewSource(3))
	lines := []string{"", "+PONG", "+OK", "-ERR x", "-NOAUTH y", "-LOADING z", "-NOMASTERLINK w", "+CONTINUE",
		"+CONTINUE " + idB, "+CONTINUE " + idB[:5], "+FULLRESYNC", "+FULLRESYNC " + idA + " 7", "+FULLRESYNC  ",
		"$", "$-5", "$12", "$EOF:" + testMark, "$EOF:", "*3", ":1", "\x00\xff"}
	for run := 0; run < 200; run++ {
		var cached *CachedMaster
		if rnd.Intn(2) == 0 {
			cached = &CachedMaster{ReplID: idA, Offset: rnd.Int63n(1000)}
		}
		h := NewHandshake(HandshakeConfig{MasterAuth: []string{"", "pw"}[rnd.Intn(2)], AnnounceIP: []string{"", "1.2.3.4"}[rnd.Intn(2)]}, cached)
		for i := 0; i < 60; i++ {
			var ev Event
			switch rnd.Intn(10) {
			case 0:
				ev = Connect{}
			case 1:
				ev = Connected{}
			case 2:
				ev = PayloadLoaded{}
			case 3:
				ev = LinkFailed{Reason: "boom"}
			case 4:
				if rnd.Intn(10) == 0 {
					ev = Stop{}
				} else {
					ev = Connect{}
				}
			default:
				ev = Reply{lines[rnd.Intn(len(lines))]}
			}
			acts := h.Step(ev)
			if strings.HasPrefix(h.State.String(), "REPL_STATE_UNKNOWN") {
				t.Fatalf("unknown state after %+v", ev)
			}
			for _, a := range acts {
				if _, ok := a.(Close); ok && h.State != StateConnect && h.State != StateNone {
					t.Fatalf("Close left state %v", h.State)
				}
			}
		}
	}
}

// TestHandshakeProtocolErrorDropsCache: a malformed stream from a master
// reached by +CONTINUE frees the master client instead of caching it
// (freeClient skips replicationCacheMaster on CLIENT_PROTOCOL_ERROR), so
// no cached master is left and the next attempt is a full "PSYNC ? -1".
func TestHandshakeProtocolErrorDropsCache(t *testing.T) {
	h := NewHandshake(HandshakeConfig{ListeningPort: 1}, &CachedMaster{ReplID: idA, Offset: 9})
	walk(t, h)
	h.Step(Reply{"+CONTINUE"})
	if h.State != StateConnected {
		t.Fatal(h.State)
	}
	if got := describe(h.Step(LinkFailed{Reason: "Protocol error: invalid multibulk length", ProtocolError: true})); !reflect.DeepEqual(got, []string{"close cache=false"}) {
		t.Fatalf("%q", got)
	}
	if _, ok := h.Cached(); ok {
		t.Fatal("a protocol error must leave no cached master")
	}
	h.Step(Connect{})
	h.Step(Connected{})
	h.Step(Reply{"+PONG"})
	h.Step(Reply{"+OK"})
	if got := describe(h.Step(Reply{"+OK"})); !reflect.DeepEqual(got, []string{"send *3 $5 PSYNC $1 ? $2 -1 "}) {
		t.Fatalf("%q", got)
	}
}
