package server

import (
	"fmt"

	"github.com/vigil-kv/vigil/server/keyspace"
)

// debugQuicklist is DEBUG OBJECT's quicklist part (debug.c): " ql_nodes:N
// ql_avg_node:%.2f ql_listpack_max:FILL ql_compressed:0|1
// ql_uncompressed_size:BYTES", "" for other values. ql_compressed is
// list-compress-depth != 0: Redis reads the depth the quicklist was
// created with, Vigil the current one (compression is not modelled; the
// directive changes only the RDB/DUMP encoding).
func (s *Server) debugQuicklist(v keyspace.Value) string {
	l, ok := v.(*keyspace.List)
	if !ok {
		return ""
	}
	nodes, count, fill, bytes := l.QuicklistStats()
	avg := 0.0
	if nodes > 0 {
		avg = float64(count) / float64(nodes)
	}
	compressed := 0
	if s.cfg.ListCompressDepth != 0 {
		compressed = 1
	}
	return fmt.Sprintf(" ql_nodes:%d ql_avg_node:%.2f ql_listpack_max:%d ql_compressed:%d ql_uncompressed_size:%d",
		nodes, avg, fill, compressed, bytes)
}
