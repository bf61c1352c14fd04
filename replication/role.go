package replication

import "github.com/vigil-kv/vigil/internal/resp"

// WriteRoleMaster is roleCommand on a master: "master", the offset as an
// integer, then one [ip, port, ack offset] triple per ONLINE replica, port
// and offset as bulk strings. Replicas in other states are skipped.
func WriteRoleMaster(w *resp.Writer, masterReplOffset int64, replicas []InfoReplica) {
	w.ArrayLen(3)
	w.BulkString("master")
	w.Int(masterReplOffset)
	n := 0
	for _, r := range replicas {
		if r.State == ReplicaOnline {
			n++
		}
	}
	w.ArrayLen(n)
	for _, r := range replicas {
		if r.State != ReplicaOnline {
			continue
		}
		w.ArrayLen(3)
		w.BulkString(r.IP)
		w.BulkInt(int64(r.Port))
		w.BulkInt(r.Offset)
	}
}

// WriteRoleReplica is roleCommand on a replica: "slave", the master's host,
// its port as an integer, the link state (ReplState.RoleState) and the
// master client's applied offset, or -1 when there is no master client
// (hasMaster false: not connected).
func WriteRoleReplica(w *resp.Writer, host string, port int, state ReplState, offset int64, hasMaster bool) {
	w.ArrayLen(5)
	w.BulkString("slave")
	w.BulkString(host)
	w.Int(int64(port))
	w.BulkString(state.RoleState())
	if !hasMaster {
		offset = -1
	}
	w.Int(offset)
}
