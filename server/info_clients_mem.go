package server

import "unsafe"

// clientsMem is INFO memory's mem_clients_normal and mem_clients_slaves
// (lock held): Redis 7.0 sums getClientMemoryUsage by client type
// (server.stat_clients_type_memory), normal + pubsub + master clients in
// the first, replicas in the second. A client's share is what CLIENT
// LIST's tot-mem counts for it: the client struct, its queued MULTI
// commands and its pending output as obufSplit lays it out (the static
// buffer and the reply blocks; a replica's unsent part of the stream).
// Query buffers are read into the connection goroutine's buffer and parsed
// at once, so they hold nothing between commands (CLIENT LIST's qbuf=0).
func (s *Server) clientsMem() (normal, replicas int64) {
	base := int64(unsafe.Sizeof(Client{}))
	for _, cl := range s.clientsByID() {
		obl, _, omem := s.obufSplit(cl, 0) // obuf.go
		m := base + multiMem(cl) + obl + omem
		if cl.replRole.Load() == kindReplica {
			replicas += m
		} else {
			normal += m
		}
	}
	return normal, replicas
}
