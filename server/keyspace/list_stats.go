package keyspace

import (
	"fmt"
	"strings"
)

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

// QuicklistRepr is quicklistRepr's text (DEBUG QUICKLIST): the quicklist's
// count, node count, fill and compress depth, then a line per node (its
// container, PLAIN or PACKED, whether Redis holds it LZF-compressed, its
// bytes and entries); with full, each node's elements too (a PLAIN node's
// as "{ entry : ... }", a packed node's one a line where Redis's lpRepr
// prints each entry's offsets and lengths).
func (l *List) QuicklistRepr(full bool) string {
	var b strings.Builder
	nodes, count, fill, _ := l.QuicklistStats()
	fmt.Fprintf(&b, "{count : %d}\n{len : %d}\n{fill : %d}\n{compress : %d}\n{bookmark_count : 0}\n", count, nodes, fill, l.depth)
	i := 0
	for k := 0; k < nodes; k++ {
		nd := qlNode{count: l.n, sz: int(l.ssz)}
		if l.listBody != nil {
			nd = l.nodes[k]
		}
		container, enc := "PACKED", "RAW"
		if nd.plain {
			container = "PLAIN"
		}
		if nd.lzf > 0 {
			enc = "LZF"
		}
		fmt.Fprintf(&b, "{quicklist node(%d)\n{container : %s, encoding: %s, size: %d, count: %d, recompress: 0, attempted_compress: 0}\n",
			k, container, enc, nd.sz, nd.count)
		if full {
			if nd.plain {
				fmt.Fprintf(&b, "{ entry : %s }\n", l.Index(i))
			} else {
				b.WriteString("{ listpack:\n")
				for j := i; j < i+nd.count; j++ {
					fmt.Fprintf(&b, "\t%s\n", l.Index(j))
				}
				b.WriteString("}\n")
			}
			b.WriteString("}\n")
		}
		i += nd.count
	}
	return b.String()
}
