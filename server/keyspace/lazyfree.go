package keyspace

// LazyfreeThreshold is LAZYFREE_THRESHOLD: a value whose free effort is
// above it Redis frees in its lazyfree thread (and counts in INFO's
// lazyfreed_objects) when it is deleted asynchronously.
const LazyfreeThreshold = 64

// FreeEffort is lazyfreeGetFreeEffort: a list's quicklist nodes, a
// hashtable set's or hash's size, a skiplist's length, a stream's nodes
// (Redis counts its rax's nodes, one or a few per listpack) plus its
// groups times one more than the first group's pending entries; 1 for
// everything else (one allocation).
func FreeEffort(v Value) int {
	switch x := v.(type) {
	case *List:
		if x.listBody == nil { // a short list: one node, inline
			return 1
		}
		return len(x.nodes)
	case *Set:
		if x.Encoding() == EncodingHashtable {
			return x.Len()
		}
	case *ZSet:
		if x.Encoding() == EncodingSkiplist {
			return x.Len()
		}
	case *Hash:
		if x.Encoding() == EncodingHashtable {
			return x.Len()
		}
	case *Stream:
		effort := len(x.nodes)
		if x.groups != nil && x.groups.Len() > 0 {
			_, cg, _ := x.groups.First()
			effort += x.groups.Len() * (1 + cg.PEL.Len())
		}
		return effort
	}
	return 1
}
