package keyspace

// QuicklistStats is what DEBUG OBJECT reports of a list's quicklist: its
// node count, entry count, fill (list-max-listpack-size when it was
// created) and the sum of its nodes' listpack bytes (node->sz, the
// uncompressed size whatever list-compress-depth is). DEBUG OBJECT's
// ql_compressed is CompressDepth() != 0.
func (l *List) QuicklistStats() (nodes, count, fill int, bytes uint64) {
	if l.listBody == nil {
		if l.n == 0 {
			return 0, 0, int(l.fill), 0
		}
		return 1, l.n, int(l.fill), uint64(l.ssz)
	}
	for _, nd := range l.nodes {
		bytes += uint64(nd.sz)
	}
	return len(l.nodes), l.n, int(l.fill), bytes
}
