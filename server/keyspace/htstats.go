package keyspace

// HTStats is one table of a dict as dict.c's dictGetStatsHt measures it,
// for DEBUG HTSTATS and HTSTATS-KEY.
type HTStats struct {
	// Size is the number of buckets, Used the number of elements.
	Size, Used int
	// Chains[n] is the number of buckets whose chain has n elements (the
	// last slot, index 49, counts chains of 49 or more, as
	// DICT_STATS_VECTLEN).
	Chains [50]int
}

// chainStats measures one table: tbl's buckets, next the chain link.
func chainStats[T any](tbl []*T, used int, next func(*T) *T) HTStats {
	st := HTStats{Size: len(tbl), Used: used}
	for _, e := range tbl {
		n := 0
		for ; e != nil; e = next(e) {
			n++
		}
		st.Chains[min(n, len(st.Chains)-1)]++
	}
	return st
}

// tables is the stats of ht[0], and of ht[1] while rehashing.
func tables[T any](ht [2][]*T, used [2]int, next func(*T) *T) []HTStats {
	out := []HTStats{chainStats(ht[0], used[0], next)}
	if ht[1] != nil {
		out = append(out, chainStats(ht[1], used[1], next))
	}
	return out
}

// HTStats is the stats of the main dict and of the expires dict.
func (db *DB) HTStats() (main, expires []HTStats) {
	next := func(e *dictEntry) *dictEntry { return e.next }
	return tables(db.dict.ht, db.dict.used, next), tables(db.expires.ht, db.expires.used, next)
}

// ValueHTStats is the stats of the hash table of a value encoded as one
// (a hashtable set or hash, a skiplist sorted set's member index); false
// for other values.
func ValueHTStats(v Value) ([]HTStats, bool) {
	switch v := v.(type) {
	case *Set:
		if d := v.ht(); d != nil {
			return tables(d.ht, d.used, func(e *fieldEntry) *fieldEntry { return e.next }), true
		}
	case *Hash:
		if d := v.ht(); d != nil {
			return tables(d.ht, d.used, func(e *fieldEntry) *fieldEntry { return e.next }), true
		}
	case *ZSet:
		if sl := v.sl(); sl != nil {
			return tables(sl.dict.ht, sl.dict.used, func(n *zslNode) *zslNode { return n.hnext }), true
		}
	}
	return nil, false
}
