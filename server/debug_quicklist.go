package server

import (
	"fmt"

	"github.com/vigil-kv/vigil/server/keyspace"
)

// debugQuicklist is DEBUG OBJECT's quicklist part (debug.c): " ql_nodes:N
// ql_avg_node:%.2f ql_listpack_max:FILL ql_compressed:0|1
// ql_uncompressed_size:BYTES", "" for other values. ql_compressed is
// the list's compress depth != 0: the list-compress-depth it was created
// with, as Redis's quicklist->compress.
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
	if l.CompressDepth() != 0 {
		compressed = 1
	}
	return fmt.Sprintf(" ql_nodes:%d ql_avg_node:%.2f ql_listpack_max:%d ql_compressed:%d ql_uncompressed_size:%d",
		nodes, avg, fill, compressed, bytes)
}
