package server

// replBufferMem is INFO memory's mem_total_replication_buffers, Redis
// 7.0's server.repl_buffer_mem (lock held): the memory of the shared
// replication buffer's blocks (the backlog's history and what the
// replicas have not been sent, held once for all of them), each block
// counted as Redis does (its allocation and list node).
func (s *Server) replBufferMem() int64 {
	if b := s.repl.backlog; b != nil {
		return b.Mem()
	}
	return 0 // freeReplicationBacklog: resetReplicationBuffer
}

// replMemSplit is getMemoryOverheadData's split of the replication
// buffer between mem_replication_backlog and mem_clients_slaves (lock
// held): with replicas, what passes repl-backlog-size is theirs;
// otherwise it is all the backlog's.
func (s *Server) replMemSplit(total int64) (backlog, replicas int64) {
	size := s.replBacklogSize()
	if len(s.repl.replicas) > 0 && total > size {
		return size, total - size
	}
	return total, 0
}

// replBacklogSize is server.repl_backlog_size: repl-backlog-size, which
// a CONFIG SET floors to CONFIG_REPL_BACKLOG_MIN_SIZE (resizeBacklog) but
// the configuration file and command line do not.
func (s *Server) replBacklogSize() int64 {
	if b := s.repl.backlog; b != nil {
		return b.Size()
	}
	return s.cfg.ReplBacklogSize
}
