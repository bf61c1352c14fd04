package server

import "github.com/vigil-kv/vigil/replication"

// replBufferMem is INFO memory's mem_total_replication_buffers, Redis
// 7.0's server.repl_buffer_mem (lock held): the bytes held for the
// replication stream. Redis keeps one list of reference-counted blocks
// for the backlog and every replica's output (feedReplicationBuffer,
// incrementalTrimReplicationBacklog); here the backlog is a ring of at
// most repl-backlog-size bytes, and what a replica has not been sent
// beyond it is the replica's own: its spill (the bytes the ring
// overwrote before its writer took them) and, once it streams, the write
// in flight (taken from the ring, not yet accepted by the kernel). The
// figure is the ring's history plus those; it grows while a replica does
// not read and falls back as it catches up or is dropped. The payload of
// a full sync and the +CONTINUE reply (the backlog's bytes, which Redis
// sends by reference) are not counted, as Redis does not. It walks the
// replicas, as INFO does in Redis; nothing is added to the write path.
func (s *Server) replBufferMem() int64 {
	b := s.repl.backlog
	if b == nil {
		return 0 // freeReplicationBacklog: resetReplicationBuffer
	}
	n := b.Histlen()
	for _, rp := range s.repl.replicas {
		if rp.gone || rp.rdbOnly {
			continue
		}
		n += int64(len(rp.spill))
		if rp.streaming {
			n += rp.c.inflight.Load()
		}
	}
	return n
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

// replBacklogSize is server.repl_backlog_size: repl-backlog-size, never
// under CONFIG_REPL_BACKLOG_MIN_SIZE (resizeReplicationBacklog).
func (s *Server) replBacklogSize() int64 {
	if b := s.repl.backlog; b != nil {
		return b.Size()
	}
	return max(s.cfg.ReplBacklogSize, replication.MinBacklogSize)
}
