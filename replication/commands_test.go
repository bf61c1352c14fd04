package replication

import (
	"strings"
	"testing"
)

func argv(s string) [][]byte {
	var out [][]byte
	for _, f := range strings.Fields(s) {
		out = append(out, []byte(f))
	}
	return out
}

// The error texts were checked against redis-server 7.0.15 with redis-cli.
func TestParseReplconf(t *testing.T) {
	long := strings.Repeat("a", 256)
	for _, c := range []struct {
		cmd     string
		replica bool
		reply   string
		check   func(Replconf) bool
	}{
		{"REPLCONF listening-port", false, "-ERR syntax error\r\n", nil},
		{"REPLCONF", false, "+OK\r\n", nil},
		{"REPLCONF foo bar", false, "-ERR Unrecognized REPLCONF option: foo\r\n", nil},
		{"REPLCONF rdb-only 2", false, "-ERR value is out of range, value must between 0 and 1\r\n", nil},
		{"REPLCONF rdb-only x", false, "-ERR value is not an integer or out of range\r\n", nil},
		{"REPLCONF rdb-only 1", false, "+OK\r\n", func(r Replconf) bool { return r.RDBOnly != nil && *r.RDBOnly }},
		{"REPLCONF listening-port 12x", false, "-ERR value is not an integer or out of range\r\n", nil},
		{"REPLCONF ip-address " + long, false, "-ERR REPLCONF ip-address provided by replica instance is too long: 256 bytes\r\n", nil},
		{"REPLCONF ip-address " + long[:255], false, "+OK\r\n", func(r Replconf) bool { return r.IPAddress != nil && len(*r.IPAddress) == 255 }},
		{"REPLCONF capa zzz listening-port 5", false, "+OK\r\n", func(r Replconf) bool { return *r.ListeningPort == 5 && !r.CapaEOF && !r.CapaPSYNC2 }},
		{"REPLCONF listening-port 6380 capa eof capa psync2", false, "+OK\r\n", func(r Replconf) bool { return *r.ListeningPort == 6380 && r.CapaEOF && r.CapaPSYNC2 }},
		{"replconf CAPA EOF", false, "+OK\r\n", func(r Replconf) bool { return r.CapaEOF }},
		// Options before a bad one stay applied.
		{"REPLCONF listening-port 7 foo bar", false, "-ERR Unrecognized REPLCONF option: foo\r\n", func(r Replconf) bool { return *r.ListeningPort == 7 }},
		// ACK: no reply, ignored unless the client is a replica.
		{"REPLCONF ack 5", false, "", func(r Replconf) bool { return r.Ack == nil }},
		{"REPLCONF ack 5", true, "", func(r Replconf) bool { return r.Ack != nil && *r.Ack == 5 }},
		{"REPLCONF ack x", true, "", func(r Replconf) bool { return r.Ack == nil }},
		{"REPLCONF getack *", false, "", func(r Replconf) bool { return r.GetAck }},
	} {
		r := ParseReplconf(argv(c.cmd), c.replica)
		if r.Reply != c.reply || (c.check != nil && !c.check(r)) {
			t.Errorf("%.60s: %+v", c.cmd, r)
		}
	}
}

func TestDecideReplicaof(t *testing.T) {
	master := ReplicaofState{}
	replica := ReplicaofState{MasterHost: "10.0.0.1", MasterPort: 6379}
	for _, c := range []struct {
		cmd    string
		st     ReplicaofState
		reply  string
		action ReplicaofAction
	}{
		{"REPLICAOF no one", master, "+OK\r\n", ReplicaofNothing},
		{"REPLICAOF NO ONE", replica, "+OK\r\n", ReplicaofPromote},
		{"SLAVEOF No One", replica, "+OK\r\n", ReplicaofPromote},
		{"REPLICAOF 127.0.0.1 70000", master, "-ERR Invalid master port\r\n", ReplicaofNothing},
		{"REPLICAOF 127.0.0.1 abc", master, "-ERR Invalid master port\r\n", ReplicaofNothing},
		{"REPLICAOF 127.0.0.1 -1", master, "-ERR Invalid master port\r\n", ReplicaofNothing},
		{"REPLICAOF 127.0.0.1 65535", master, "+OK\r\n", ReplicaofFollow},
		{"REPLICAOF 10.0.0.1 6379", replica, "+OK Already connected to specified master\r\n", ReplicaofNothing},
		{"REPLICAOF 10.0.0.1 6380", replica, "+OK\r\n", ReplicaofFollow},
		{"REPLICAOF 10.0.0.1 6379", ReplicaofState{MasterHost: "10.0.0.1", MasterPort: 6379, RefusingEmpty: true},
			"+OK Already connected to specified master\r\n", ReplicaofAcceptEmpty},
		{"REPLICAOF 10.0.0.1 6380", ReplicaofState{MasterHost: "10.0.0.1", MasterPort: 6379, RefusingEmpty: true}, "+OK\r\n", ReplicaofFollow},
		{"REPLICAOF 10.0.0.2 6379", replica, "+OK\r\n", ReplicaofFollow},
		{"REPLICAOF 10.0.0.2 6379", ReplicaofState{ClientIsReplica: true}, "-ERR Command is not valid when client is a replica.\r\n", ReplicaofNothing},
		{"REPLICAOF no one", ReplicaofState{ClientIsReplica: true, MasterHost: "x"}, "+OK\r\n", ReplicaofPromote},
		{"REPLICAOF no one", ReplicaofState{FailingOver: true}, "-ERR REPLICAOF not allowed while failing over.\r\n", ReplicaofNothing},
		{"REPLICAOF h 1", ReplicaofState{ClusterEnabled: true}, "-ERR REPLICAOF not allowed in cluster mode.\r\n", ReplicaofNothing},
		{"REPLICAOF h", master, "-ERR wrong number of arguments for 'replicaof' command\r\n", ReplicaofNothing},
	} {
		d := DecideReplicaof(argv(c.cmd), c.st)
		if d.Reply != c.reply || d.Action != c.action {
			t.Errorf("%s: %+v", c.cmd, d)
		}
	}
	if d := DecideReplicaof(argv("REPLICAOF Host 7"), master); d.Host != "Host" || d.Port != 7 {
		t.Errorf("%+v", d)
	}
	if d := DecideReplicaof(nil, master); d.Action != ReplicaofNothing {
		t.Error("empty argv")
	}
}

// REPLCONF rdb-filter-only, as redis-cli --functions-rdb ("functions")
// and --replica ("") send it: replies checked against redis-server
// 7.0.15, and the requirements replconfCommand leaves on the client
// (slave_req), starting from none and from a previous "functions".
func TestReplconfRDBFilterOnly(t *testing.T) {
	const both = ReqExcludeData | ReqExcludeFunctions
	for _, tc := range []struct {
		val, reply string
		set        bool     // RDBFilter is set
		req, after ReqFlags // from none, and after a previous "functions" (data excluded)
	}{
		{"", "+OK\r\n", true, both, both},
		{"functions", "+OK\r\n", true, ReqExcludeData, ReqExcludeData},
		{"FUNCTIONS", "+OK\r\n", true, ReqExcludeData, ReqExcludeData},
		{"  'functions'  functions ", "+OK\r\n", true, ReqExcludeData, ReqExcludeData},
		{"foo", "-ERR Unsupported rdb-filter-only option: foo\r\n", true, both, both},
		{"functions foo", "-ERR Unsupported rdb-filter-only option: foo\r\n", true, ReqExcludeData, ReqExcludeData},
		{"foo functions", "-ERR Unsupported rdb-filter-only option: foo\r\n", true, both, both},
		{`"a\nb"`, "-ERR Unsupported rdb-filter-only option: a b\r\n", true, both, both},
		{`"a`, "-ERR Missing rdb-filter-only values\r\n", false, 0, ReqExcludeData},
		{`"functions"x`, "-ERR Missing rdb-filter-only values\r\n", false, 0, ReqExcludeData},
	} {
		r := ParseReplconf([][]byte{[]byte("REPLCONF"), []byte("rdb-filter-only"), []byte(tc.val)}, false)
		if r.Reply != tc.reply {
			t.Errorf("%q: %q, want %q", tc.val, r.Reply, tc.reply)
		}
		if (r.RDBFilter != nil) != tc.set {
			t.Errorf("%q: filter set %v", tc.val, r.RDBFilter != nil)
			continue
		}
		apply := func(old ReqFlags) ReqFlags {
			if r.RDBFilter == nil {
				return old
			}
			return r.RDBFilter.Apply(old)
		}
		if got := apply(0); got != tc.req {
			t.Errorf("%q: req %b, want %b", tc.val, got, tc.req)
		}
		if got := apply(ReqExcludeData); got != tc.after {
			t.Errorf("%q: req after functions %b, want %b", tc.val, got, tc.after)
		}
	}
}
