package server

import (
	"github.com/vigil-kv/vigil/replication"
)

// Replication commands (replication.c): SYNC, PSYNC, REPLCONF, REPLICAOF,
// SLAVEOF, ROLE and WAIT. The state they read and change lives in
// repl_master.go and repl_replica.go.

func init() {
	ad := FlagAdmin | FlagNoScript
	ls := FlagLoading | FlagStale
	conn := []string{"slow", "connection"}
	register(
		&Command{Name: "sync", Arity: 1, Flags: ad | FlagNoAsyncLoading | FlagNoMulti, ACL: []string{"admin", "slow", "dangerous"}, Handler: cmdSync},
		&Command{Name: "psync", Arity: -3, Flags: ad | FlagNoAsyncLoading | FlagNoMulti, ACL: []string{"admin", "slow", "dangerous"}, Handler: cmdSync},
		&Command{Name: "replconf", Arity: -1, Flags: ad | FlagLoading | FlagStale | FlagAllowBusy, ACL: []string{"admin", "slow", "dangerous"}, Handler: cmdReplconf},
		&Command{Name: "replicaof", Arity: 3, Flags: ad | FlagStale | FlagNoAsyncLoading, ACL: []string{"admin", "slow", "dangerous"}, Handler: cmdReplicaof},
		&Command{Name: "slaveof", Arity: 3, Flags: ad | FlagStale | FlagNoAsyncLoading, ACL: []string{"admin", "slow", "dangerous"}, Handler: cmdReplicaof},
		&Command{Name: "role", Arity: 1, Flags: FlagNoScript | ls | FlagFast, ACL: []string{"admin", "fast", "dangerous"}, Handler: cmdRole},
		&Command{Name: "wait", Arity: 3, Flags: FlagNoScript, ACL: conn, Handler: cmdWait},
	)
}

// cmdRole is roleCommand: the master's replicas, or the replica's link.
func cmdRole(c *Client, args [][]byte) { c.srv.roleReply(c) }

// cmdWait is waitCommand: WAIT numreplicas timeout (milliseconds, 0:
// forever) replies how many replicas acknowledged the client's last write
// (c.woff), at once when enough have (always with numreplicas <= 0) or when
// blocking is denied (MULTI), else when enough acknowledge
// (ReplicasAcked), at the timeout or on CLIENT UNBLOCK. Without replicas
// it blocks for the whole timeout and replies 0, as 7.0.15 on a master
// with none.
func cmdWait(c *Client, args [][]byte) {
	numreplicas, ok := parseInt(args[1])
	if !ok {
		c.w.Error(ErrNotInteger)
		return
	}
	s := c.srv
	if s.isReplica() { // repl
		c.w.Error("ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a replica is configured to be writable (which is not the default) writes to replicas are just local and are not propagated.")
		return
	}
	deadline, ok := s.blockDeadline(c, args[2], false)
	if !ok {
		return
	}
	acked := s.countAcks(c.woff)
	if acked >= numreplicas || c.denyBlocking() {
		c.w.Int(acked)
		return
	}
	c.blockForAcks(s.lookup(args[0]), c.woff, numreplicas, deadline)
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
	if rc.RDBOnly != nil {
		c.replInfo.rdbOnly = *rc.RDBOnly
	}
	if rc.RDBFilter != nil {
		c.replInfo.req = rc.RDBFilter.Apply(c.replInfo.req)
	}
	if rc.Ack != nil {
		s.replicaAck(c, *rc.Ack)
	}
	if rc.SentinelSeen != nil {
		s.syncAckSentinelSeen(c, rc.SentinelID, *rc.SentinelSeen) // syncack.go
	}
	if rc.Reply != "" {
		c.w.Raw([]byte(rc.Reply))
	}
}

func cmdReplicaof(c *Client, args [][]byte) {
	s := c.srv
	st := replication.ReplicaofState{ClusterEnabled: s.cfg.ClusterEnabled, ClientIsReplica: s.replicaOf(c) != nil,
		FailingOver: s.repl.failover.State != replication.NoFailover}
	if l := s.repl.link; l != nil {
		st.MasterHost, st.MasterPort = l.host, l.port
		st.RefusingEmpty = l.refusedEmpty != ""
	}
	d := replication.DecideReplicaof(args, st)
	switch d.Action {
	case replication.ReplicaofPromote:
		s.unsetMaster()
		s.log.Info().Msgf("MASTER MODE enabled (user request from '%s')", s.appendClientInfo(nil, c, c, args, "replicaof"))
	case replication.ReplicaofFollow:
		s.startReplication(d.Host, d.Port)
	case replication.ReplicaofAcceptEmpty:
		s.acceptEmptySync(c, args)
	}
	if len(d.Reply) > 0 && d.Reply[0] == '+' {
		s.fenceReconfigured() // fence.go: reconfigured, the fence is lifted
	}
	if d.Reply != "" {
		c.w.Raw([]byte(d.Reply))
	}
}
