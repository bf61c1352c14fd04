package replication

import (
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/resp"
)

func cmd(argv ...string) []byte { return resp.AppendCommandStrings(nil, argv...) }

func TestCommandBytes(t *testing.T) {
	if len(PingCommand) != 14 || len(GetAckCommand) != 37 {
		t.Fatal(len(PingCommand), len(GetAckCommand))
	}
	if string(cmd("PING")) != PingCommand || string(cmd("REPLCONF", "GETACK", "*")) != GetAckCommand {
		t.Fatal("constants differ from the encoder")
	}
	if got := string(AckCommand(168)); got != "*3\r\n$8\r\nREPLCONF\r\n$3\r\nACK\r\n$3\r\n168\r\n" {
		t.Fatalf("%q", got)
	}
}

// TestGetAckExcludesItself replays the observed exchange: 105 stream bytes
// after offset 100 ending with GETACK give ACK 168 (205-37), and the next
// periodic ACK says 205.
func TestGetAckExcludesItself(t *testing.T) {
	o := NewStreamOffsets(100)
	set := cmd("SET", "key:000000000000", "value-value-value-value-v") // 68 bytes
	if len(set)+len(GetAckCommand) != 105 {
		t.Fatalf("fixture is %d bytes", len(set)+len(GetAckCommand))
	}
	o.Received(len(set) + len(GetAckCommand))
	o.Processed(len(set), false)
	// The GETACK executes: the reply is built before it is counted.
	ack := o.GetAck()
	o.Processed(len(GetAckCommand), false)
	if string(ack) != string(AckCommand(168)) {
		t.Fatalf("GETACK answered %q", ack)
	}
	if o.Applied != 205 || o.Read != 205 {
		t.Fatalf("applied %d read %d", o.Applied, o.Read)
	}
}

func TestAppliedOffsetAndMulti(t *testing.T) {
	o := NewStreamOffsets(0)
	multi, set, exec := cmd("MULTI"), cmd("SET", "a", "1"), cmd("EXEC")
	all := len(multi) + 2*len(set) + len(exec)
	o.Received(all) // one read holding the whole transaction
	steps := []struct {
		n       int
		inMulti bool
		applied int64
		fed     int64
	}{
		{len(multi), true, 0, 0},
		{len(set), true, 0, 0},
		{len(set), true, 0, 0},
		{len(exec), false, int64(all), int64(all)}, // EXEC: the whole block at once
	}
	for i, s := range steps {
		fed := o.Processed(s.n, s.inMulti)
		if o.Applied != s.applied || fed != s.fed {
			t.Fatalf("step %d: applied %d fed %d", i, o.Applied, fed)
		}
	}
	if o.Read != int64(all) {
		t.Fatal(o.Read)
	}
	// A bare newline is counted with the next command.
	o.Received(1 + len(set))
	o.Skipped(1)
	if o.Applied != int64(all) {
		t.Fatal("newline applied on its own")
	}
	o.Processed(len(set), false)
	if o.Applied != o.Read {
		t.Fatalf("applied %d read %d", o.Applied, o.Read)
	}
}

func TestAckAndNewlineDue(t *testing.T) {
	t0 := time.Unix(100, 500e6)
	for _, c := range []struct {
		pre  bool
		now  time.Time
		want bool
	}{
		{false, t0.Add(999 * time.Millisecond), false},
		{false, t0.Add(time.Second), true},
		{true, t0.Add(time.Hour), false}, // never ACK a pre-PSYNC master
	} {
		if AckDue(c.pre, t0, c.now) != c.want {
			t.Errorf("AckDue(%v, +%v) != %v", c.pre, c.now.Sub(t0), c.want)
		}
	}
	if NewlineDue(t0, t0.Add(400*time.Millisecond)) || !NewlineDue(t0, t0.Add(500*time.Millisecond)) {
		t.Error("NewlineDue follows the unixtime second")
	}
}

func TestCountAcksAndWait(t *testing.T) {
	rs := []ReplicaAck{
		{State: ReplicaOnline, Offset: 100},
		{State: ReplicaOnline, Offset: 99},
		{State: ReplicaOnline, Offset: 150},
		{State: ReplicaWaitBgsaveEnd, Offset: 500}, // not online: never counted
		{State: ReplicaSendBulk, Offset: 500},
	}
	for target, want := range map[int64]int{0: 3, 99: 3, 100: 2, 101: 1, 150: 1, 151: 0} {
		if got := CountAcks(rs, target); got != want {
			t.Errorf("CountAcks(%d) = %d, want %d", target, got, want)
		}
	}
	for _, c := range []struct {
		target, num int64
		multi       bool
		count       int
		done        bool
	}{
		{100, 2, false, 2, true},
		{100, 3, false, 2, false},
		{100, 3, true, 2, true}, // inside MULTI: reply at once
		{0, 0, false, 3, true},  // a new connection (woff 0) / WAIT 0 0
		{200, 0, false, 0, true},
	} {
		count, done := WaitDone(rs, c.target, c.num, c.multi)
		if count != c.count || done != c.done {
			t.Errorf("%+v: %d %v", c, count, done)
		}
	}
	var r ReplicaAck
	now := time.Unix(50, 0)
	r.OnAck(10, now)
	r.OnAck(5, now.Add(time.Second)) // an older offset does not go back
	if r.Offset != 10 || !r.Time.Equal(now.Add(time.Second)) {
		t.Fatalf("%+v", r)
	}
}

func TestGoodReplicas(t *testing.T) {
	now := time.Unix(1000, 100e6)
	at := func(sec int64, ms int64) time.Time { return time.Unix(sec, ms*1e6) }
	rs := []ReplicaAck{
		{State: ReplicaOnline, Time: at(990, 0)},   // lag 10: good with max-lag 10
		{State: ReplicaOnline, Time: at(989, 999)}, // lag 11 in whole seconds (10.1 s really)
		{State: ReplicaOnline, Time: at(1000, 50)},
		{State: ReplicaWaitBgsaveStart, Time: at(1000, 0)}, // not online
	}
	if good, active := GoodReplicas(rs, 2, 10, now); good != 2 || !active {
		t.Fatalf("good %d active %v", good, active)
	}
	for _, c := range [][2]int{{0, 10}, {2, 0}} {
		if _, active := GoodReplicas(rs, c[0], c[1], now); active {
			t.Fatalf("%v should be inactive", c)
		}
	}
	for _, c := range []struct {
		replica              bool
		toWrite, maxLag, got int
		want                 bool
	}{
		{false, 2, 10, 2, true},
		{false, 2, 10, 1, false},
		{false, 0, 10, 0, true},
		{false, 2, 0, 0, true},
		{true, 2, 10, 0, true},
	} {
		if WritesAllowed(c.replica, c.toWrite, c.maxLag, c.got) != c.want {
			t.Errorf("%+v", c)
		}
	}
	if ErrNoReplicas != "-NOREPLICAS Not enough good replicas to write.\r\n" {
		t.Fatal(ErrNoReplicas)
	}
}

func TestTimeouts(t *testing.T) {
	t0 := time.Unix(1000, 900e6)
	to := 60 * time.Second
	on := ReplicaAck{State: ReplicaOnline, Time: t0}
	if ReplicaTimedOut(on, to, t0.Add(60*time.Second)) || !ReplicaTimedOut(on, to, t0.Add(60*time.Second+100*time.Millisecond)) {
		t.Error("master-side replica timeout")
	}
	pre := on
	pre.PrePsync = true
	if ReplicaTimedOut(pre, to, t0.Add(time.Hour)) {
		t.Error("pre-PSYNC replicas never time out")
	}
	if ReplicaTimedOut(ReplicaAck{State: ReplicaSendBulk, Time: t0}, to, t0.Add(time.Hour)) {
		t.Error("only online replicas time out this way")
	}
	late := t0.Add(61 * time.Second)
	for _, c := range []struct {
		state ReplState
		io    time.Time
		inter time.Time
		want  string
	}{
		{StateConnecting, t0, late, "Timeout connecting to the MASTER..."},
		{StateReceivePsyncReply, t0, late, "Timeout connecting to the MASTER..."},
		{StateTransfer, t0, late, "Timeout receiving bulk data from MASTER... If the problem persists try to set the 'repl-timeout' parameter in redis.conf to a larger value."},
		{StateTransfer, late, t0, ""},
		{StateConnected, t0, t0, "MASTER timeout: no data nor PING received..."},
		{StateConnected, t0, late, ""},
		{StateConnect, t0, t0, ""},
		{StateNone, t0, t0, ""},
	} {
		reason, ok := LinkTimeout(c.state, c.io, c.inter, to, late)
		if reason != c.want || ok != (c.want != "") {
			t.Errorf("%v: %q %v", c.state, reason, ok)
		}
	}
	if !NeedsNewline(ReplicaWaitBgsaveStart, true) || !NeedsNewline(ReplicaWaitBgsaveEnd, false) ||
		NeedsNewline(ReplicaWaitBgsaveEnd, true) || NeedsNewline(ReplicaOnline, false) {
		t.Error("NeedsNewline")
	}
	if !PingDue(20, 10, 1) || PingDue(21, 10, 1) || PingDue(20, 10, 0) {
		t.Error("PingDue")
	}
	if (ReplicaAck{State: ReplicaOnline, Time: t0}).Lag(t0.Add(2500*time.Millisecond)) != 3 ||
		(ReplicaAck{State: ReplicaSendBulk, Time: t0}).Lag(late) != 0 {
		t.Error("Lag")
	}
}
