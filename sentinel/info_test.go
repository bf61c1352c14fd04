package sentinel

import (
	"reflect"
	"testing"
)

const masterInfo = "# Server\r\nredis_version:7.0.15\r\nrun_id:0123456789012345678901234567890123456789\r\n\r\n" +
	"# Replication\r\nrole:master\r\nconnected_slaves:2\r\n" +
	"slave0:ip=10.0.0.2,port=6380,state=online,offset=100,lag=0\r\n" +
	"slave1:10.0.0.3,6381,online\r\nmaster_repl_offset:100\r\n"

const replicaInfo = "# Server\r\nrun_id:9999999999999999999999999999999999999999\r\n\r\n# Replication\r\n" +
	"role:slave\r\nmaster_host:10.0.0.1\r\nmaster_port:6379\r\nmaster_link_status:down\r\n" +
	"slave_repl_offset:12345\r\nmaster_link_down_since_seconds:7\r\nslave_priority:50\r\n" +
	"replica_announced:0\r\n"

func TestParseInfo(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Info
	}{
		{"empty", "", Info{}},
		{"master", masterInfo, Info{
			RunID: "0123456789012345678901234567890123456789", Role: KindMaster,
			Replicas: []Addr{{IP: "10.0.0.2", Port: 6380}, {IP: "10.0.0.3", Port: 6381}},
		}},
		{"replica", replicaInfo, Info{
			RunID: "9999999999999999999999999999999999999999", Role: KindReplica,
			LinkDownSinceMs: 7000,
			MasterHost:      "10.0.0.1", HasMasterHost: true,
			MasterPort: 6379, HasMasterPort: true,
			MasterLinkUp: false, HasMasterLinkStatus: true,
			Priority: 50, HasPriority: true,
			ReplOffset: 12345, HasReplOffset: true,
			ReplicaAnnounced: 0, HasReplicaAnnounced: true,
		}},
		{"link up case-insensitive", "role:slave\r\nmaster_link_status:UP\r\n",
			Info{Role: KindReplica, MasterLinkUp: true, HasMasterLinkStatus: true}},
		{"replica fields before role are ignored", "master_host:x\r\nslave_priority:0\r\nrole:slave\r\n",
			Info{Role: KindReplica}},
		{"short run_id ignored", "run_id:abc\r\n", Info{}},
		{"bare newlines do not split", "role:master\nrun_id:0123456789012345678901234567890123456789\n",
			Info{Role: KindMaster}},
		{"never-linked replica", "role:slave\r\nmaster_link_down_since_seconds:-1\r\n",
			Info{Role: KindReplica, LinkDownSinceMs: -1000}},
		{"replica_priority alias", "role:slave\r\nreplica_priority:7\r\n",
			Info{Role: KindReplica, Priority: 7, HasPriority: true}},
		{"atoi garbage", "role:slave\r\nmaster_port:12ab\r\nslave_priority:x\r\n",
			Info{Role: KindReplica, MasterPort: 12, HasMasterPort: true, HasPriority: true}},
		{"legacy line without trailing comma skipped", "slave0:10.0.0.3,6381\r\n", Info{}},
		{"slave line needs a digit", "slaves:ip=1.2.3.4,port=1\r\n", Info{}},
		{"sync-ack fields (Vigil)", "role:master\r\nmaster_replid:abc\r\nmaster_replid2:def\r\nmin_replicas_ack:2\r\n",
			Info{Role: KindMaster, ReplID: "abc", MinReplicasAck: 2, HasMinReplicasAck: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ParseInfo(tc.in); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestCNumbers(t *testing.T) {
	for in, want := range map[string]int64{
		"": 0, "42": 42, "  -7x": -7, "+3": 3, "x1": 0,
		"99999999999999999999": 1<<63 - 1, "-99999999999999999999": -1 << 63,
	} {
		if got := cStrtoll(in); got != want {
			t.Errorf("strtoll(%q) = %d, want %d", in, got, want)
		}
	}
	for in, want := range map[string]uint64{
		"": 0, "42": 42, "-1": ^uint64(0), "99999999999999999999": ^uint64(0), "18446744073709551615": ^uint64(0),
	} {
		if got := cStrtoull(in); got != want {
			t.Errorf("strtoull(%q) = %d, want %d", in, got, want)
		}
	}
	for in, want := range map[string]int{"": 0, "6379": 6379, "-1": -1, "12ab": 12, "4294967297": 1} {
		if got := cAtoi(in); got != want {
			t.Errorf("atoi(%q) = %d, want %d", in, got, want)
		}
	}
}

// TestRefreshInfo checks the events INFO processing produces.
func TestRefreshInfo(t *testing.T) {
	c := newCore(t)
	m := c.masters["mymaster"]
	acts := c.Step(t0+100, InfoReceived{Instance: c.ref(m), Info: masterInfo})
	want := []string{
		"+slave slave 10.0.0.2:6380 10.0.0.2 6380 @ mymaster 127.0.0.1 6379",
		"+slave slave 10.0.0.3:6381 10.0.0.3 6381 @ mymaster 127.0.0.1 6379",
	}
	if got := notifies(acts); !reflect.DeepEqual(got, want) {
		t.Errorf("got %q", got)
	}
	if count[RewriteConfig](acts) != 1 {
		t.Error("+slave must flush the config (once per Step)")
	}
	// Same INFO again: nothing new. A new run id: +reboot.
	if acts := c.Step(t0+200, InfoReceived{Instance: c.ref(m), Info: masterInfo}); len(notifies(acts)) != 0 {
		t.Errorf("repeated INFO: %q", notifies(acts))
	}
	rebooted := "run_id:1111111111111111111111111111111111111111\r\nrole:master\r\n"
	acts = c.Step(t0+300, InfoReceived{Instance: c.ref(m), Info: rebooted})
	if got := notifies(acts); len(got) != 1 || got[0] != "+reboot master mymaster 127.0.0.1 6379" {
		t.Errorf("got %q", got)
	}
	// The master reports role:slave: -role-change (verbose).
	acts = c.Step(t0+400, InfoReceived{Instance: c.ref(m), Info: "role:slave\r\nmaster_host:1.2.3.4\r\nmaster_port:1\r\n"})
	n, _ := find[Notify](acts)
	if n.Type != "-role-change" || n.Level != LevelVerbose || n.Message != "master mymaster 127.0.0.1 6379 new reported role is slave" {
		t.Errorf("got %+v", n)
	}
	// Replica fields are stored.
	r := m.replicas["10.0.0.2:6380"]
	c.Step(t0+500, InfoReceived{Instance: c.ref(r), Info: replicaInfo})
	if r.slavePriority != 50 || r.slaveReplOffset != 12345 || r.masterLinkDownTime != 7000 || r.replicaAnnounced != 0 {
		t.Errorf("replica fields: %+v", r)
	}
	if rs, _ := c.Replicas(t0+500, "mymaster"); len(rs) != 1 {
		t.Errorf("replica_announced:0 must be hidden from SENTINEL REPLICAS, got %d", len(rs))
	}
	// A failed INFO reply changes nothing but the pending count.
	c.Step(t0+600, InfoReceived{Instance: c.ref(r), Failed: true})
	if r.infoRefresh != t0+500 {
		t.Error("failed INFO must not refresh")
	}
}
