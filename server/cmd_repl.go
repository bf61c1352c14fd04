package server

import (
	"github.com/vigil-kv/vigil/replication"
)

// Replication commands (replication.c): SYNC, PSYNC, REPLCONF, REPLICAOF
// and SLAVEOF. ROLE and WAIT live in cmd_admin.go and call into
// repl_master.go.

func init() {
	ad := FlagAdmin | FlagNoScript
	register(
		&Command{Name: "sync", Arity: 1, Flags: ad | FlagNoAsyncLoading | FlagNoMulti, ACL: []string{"admin", "slow", "dangerous"}, Handler: cmdSync},
		&Command{Name: "psync", Arity: -3, Flags: ad | FlagNoAsyncLoading | FlagNoMulti, ACL: []string{"admin", "slow", "dangerous"}, Handler: cmdSync},
		&Command{Name: "replconf", Arity: -1, Flags: ad | FlagLoading | FlagStale | FlagAllowBusy, ACL: []string{"admin", "slow", "dangerous"}, Handler: cmdReplconf},
		&Command{Name: "replicaof", Arity: 3, Flags: ad | FlagStale | FlagNoAsyncLoading, ACL: []string{"admin", "slow", "dangerous"}, Handler: cmdReplicaof},
		&Command{Name: "slaveof", Arity: 3, Flags: ad | FlagStale | FlagNoAsyncLoading, ACL: []string{"admin", "slow", "dangerous"}, Handler: cmdReplicaof},
	)
}

func cmdSync(c *Client, args [][]byte) { c.srv.syncRequest(c, args) }

func cmdReplconf(c *Client, args [][]byte) {
	s := c.srv
	rc := replication.ParseReplconf(args, s.replicaOf(c) != nil)
	if c.replInfo == nil {
		c.replInfo = &replicaInfo{}
	}
	if rc.ListeningPort != nil {
		c.replInfo.port = int(*rc.ListeningPort)
	}
	if rc.IPAddress != nil {
		c.replInfo.ip = *rc.IPAddress
	}
	if rc.CapaEOF {
		c.replInfo.capaEOF = true
	}
	if rc.CapaPSYNC2 {
		c.replInfo.psync2 = true
	}
	if rc.Ack != nil {
		s.replicaAck(c, *rc.Ack)
	}
	if rc.Reply != "" {
		c.w.Raw([]byte(rc.Reply))
	}
}

func cmdReplicaof(c *Client, args [][]byte) {
	s := c.srv
	st := replication.ReplicaofState{ClusterEnabled: s.cfg.ClusterEnabled, ClientIsReplica: s.replicaOf(c) != nil}
	if l := s.repl.link; l != nil {
		st.MasterHost, st.MasterPort = l.host, l.port
	}
	d := replication.DecideReplicaof(args, st)
	switch d.Action {
	case replication.ReplicaofPromote:
		s.promote()
	case replication.ReplicaofFollow:
		s.startReplication(d.Host, d.Port)
	}
	if d.Reply != "" {
		c.w.Raw([]byte(d.Reply))
	}
}
