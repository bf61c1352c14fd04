package replication

import "strconv"

// FailoverState is server.failover_state as INFO prints it
// (getFailoverStateString).
type FailoverState int

const (
	NoFailover         FailoverState = iota // no-failover
	FailoverWaitSync                        // waiting-for-sync
	FailoverInProgress                      // failover-in-progress
)

func (f FailoverState) String() string {
	switch f {
	case FailoverWaitSync:
		return "waiting-for-sync"
	case FailoverInProgress:
		return "failover-in-progress"
	}
	return "no-failover"
}

// InfoReplica is one replica client as the master's INFO lists it.
type InfoReplica struct {
	// IP is slave_addr (REPLCONF ip-address) or else the peer address.
	IP string
	// Port is the REPLCONF listening-port (0 if never sent).
	Port   int
	State  ReplicaState
	Offset int64 // repl_ack_off
	Lag    int64 // ReplicaAck.Lag: seconds since the last ACK when online, else 0
}

// Info is everything genRedisInfoString's replication section prints; the
// server fills it and InfoSection renders it.
type Info struct {
	// IsReplica: server.masterhost is set (role:slave).
	IsReplica bool

	// Replica-only fields.
	MasterHost string
	MasterPort int
	LinkState  ReplState
	// MasterLastIOSecondsAgo: unixtime - master->lastinteraction, -1 when
	// there is no master client.
	MasterLastIOSecondsAgo int64
	// SlaveReadReplOffset / SlaveReplOffset: the master client's (or the
	// cached master's) read_reploff and reploff; 1 when neither exists. A
	// master turned replica has a cached master made of its own history
	// (replicationCacheMasterUsingMyself): its master_repl_offset.
	SlaveReadReplOffset, SlaveReplOffset int64
	// During the transfer (LinkState == StateTransfer): repl_transfer_size
	// (-1 before the $ line, 0 for an EOF-marked payload), bytes read so
	// far and seconds since the last transfer I/O.
	TransferSize, TransferRead int64
	TransferLastIOSecondsAgo   int64
	// LinkDownSinceSeconds: unixtime - repl_down_since when the link is not
	// connected, or -1 when no drop was recorded.
	LinkDownSinceSeconds int64
	// RefusedEmptyReason is set while the empty-restart guard refuses the
	// master's payload (emptysync.go): master_sync_refused_empty:1 and
	// master_sync_refused_reason are printed (Vigil fields, absent
	// otherwise, so that INFO stays Redis's byte for byte).
	RefusedEmptyReason string
	ReplicaPriority    int
	ReplicaReadOnly    bool
	ReplicaAnnounced   bool

	// Both roles.
	// Replicas are all replica clients (connected_slaves counts them all;
	// those whose state prints as "" get no slaveN line).
	Replicas []InfoReplica
	// MinReplicasActive (min-replicas-to-write and -max-lag both set) adds
	// min_slaves_good_slaves:GoodReplicas.
	MinReplicasActive bool
	GoodReplicas      int
	FailoverState     FailoverState
	IDs               IDs
	MasterReplOffset  int64
	// The backlog; nil when there is none (repl_backlog_active:0, first
	// byte offset and histlen 0). BacklogSize is repl-backlog-size.
	Backlog     *Backlog
	BacklogSize int64
}

// AppendInfoSection appends "# Replication\r\n" and the section's fields in
// Redis 7.0's order and format.
func AppendInfoSection(b []byte, in *Info) []byte {
	line := func(k string, v []byte) { b = append(append(append(append(b, k...), ':'), v...), '\r', '\n') }
	num := func(k string, n int64) { line(k, strconv.AppendInt(nil, n, 10)) }
	flag := func(k string, on bool) {
		if on {
			num(k, 1)
		} else {
			num(k, 0)
		}
	}
	b = append(b, "# Replication\r\n"...)
	if in.IsReplica {
		line("role", []byte("slave"))
		line("master_host", []byte(in.MasterHost))
		num("master_port", int64(in.MasterPort))
		if in.LinkState == StateConnected {
			line("master_link_status", []byte("up"))
		} else {
			line("master_link_status", []byte("down"))
		}
		num("master_last_io_seconds_ago", in.MasterLastIOSecondsAgo)
		flag("master_sync_in_progress", in.LinkState == StateTransfer)
		num("slave_read_repl_offset", in.SlaveReadReplOffset)
		num("slave_repl_offset", in.SlaveReplOffset)
		if in.LinkState == StateTransfer {
			perc := 0.0
			if in.TransferSize != 0 {
				perc = float64(in.TransferRead) / float64(in.TransferSize) * 100
			}
			num("master_sync_total_bytes", in.TransferSize)
			num("master_sync_read_bytes", in.TransferRead)
			num("master_sync_left_bytes", in.TransferSize-in.TransferRead)
			line("master_sync_perc", strconv.AppendFloat(nil, perc, 'f', 2, 64))
			num("master_sync_last_io_seconds_ago", in.TransferLastIOSecondsAgo)
		}
		if in.LinkState != StateConnected {
			num("master_link_down_since_seconds", in.LinkDownSinceSeconds)
		}
		if in.RefusedEmptyReason != "" {
			num("master_sync_refused_empty", 1)
			line("master_sync_refused_reason", []byte(in.RefusedEmptyReason))
		}
		num("slave_priority", int64(in.ReplicaPriority))
		flag("slave_read_only", in.ReplicaReadOnly)
		flag("replica_announced", in.ReplicaAnnounced)
	} else {
		line("role", []byte("master"))
	}
	num("connected_slaves", int64(len(in.Replicas)))
	if in.MinReplicasActive {
		num("min_slaves_good_slaves", int64(in.GoodReplicas))
	}
	id := 0
	for _, r := range in.Replicas {
		state := r.State.String()
		if state == "" {
			continue
		}
		b = append(b, "slave"...)
		b = strconv.AppendInt(b, int64(id), 10)
		b = append(b, ":ip="...)
		b = append(b, r.IP...)
		b = append(b, ",port="...)
		b = strconv.AppendInt(b, int64(r.Port), 10)
		b = append(b, ",state="...)
		b = append(b, state...)
		b = append(b, ",offset="...)
		b = strconv.AppendInt(b, r.Offset, 10)
		b = append(b, ",lag="...)
		b = strconv.AppendInt(b, r.Lag, 10)
		b = append(b, '\r', '\n')
		id++
	}
	line("master_failover_state", []byte(in.FailoverState.String()))
	line("master_replid", []byte(in.IDs.ID))
	line("master_replid2", []byte(in.IDs.ID2))
	num("master_repl_offset", in.MasterReplOffset)
	num("second_repl_offset", in.IDs.SecondOffset)
	flag("repl_backlog_active", in.Backlog != nil)
	num("repl_backlog_size", in.BacklogSize)
	if in.Backlog != nil {
		num("repl_backlog_first_byte_offset", in.Backlog.First())
		num("repl_backlog_histlen", in.Backlog.Histlen())
	} else {
		num("repl_backlog_first_byte_offset", 0)
		num("repl_backlog_histlen", 0)
	}
	return b
}

// InfoSection renders the section as a string.
func InfoSection(in *Info) string { return string(AppendInfoSection(nil, in)) }
