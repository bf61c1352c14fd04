package server

// clientsMem is INFO memory's mem_clients_normal and mem_clients_slaves
// (lock held): Redis 7.0's server.stat_clients_type_memory, normal +
// pubsub + master clients in the first, replicas in the second, each
// client's figure as it was last counted (clientevict.go: after its
// commands when client eviction or maxmemory is on, and by the cron).
func (s *Server) clientsMem() (normal, replicas int64) {
	t := &s.cmem.typeMem
	return t[memTypeNormal] + t[memTypePubSub] + t[memTypeMaster], t[memTypeReplica]
}
