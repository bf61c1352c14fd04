package rdb

import (
	"encoding/binary"
	"sort"

	"github.com/vigil-kv/vigil/server/keyspace"
)

// Streams: RDB_TYPE_STREAM_LISTPACKS (15, Redis 5 to 6.2) and
// RDB_TYPE_STREAM_LISTPACKS_2 (19, what Redis 7.0 writes, with first_id,
// max_deleted_entry_id, entries_added and each group's entries_read), as
// rdbLoadObject and rdbSaveObject. The radix tree's nodes are read into
// keyspace.Stream's nodes as they were (deleted entries included), and
// written back from them, so a stream goes through vigil-server with the
// listpacks Redis wrote.

// loadStream parses a type 15 or 19 value into a keyspace.Stream, with
// rdbLoadObject's consistency checks.
func loadStream(rd *reader, t int) (keyspace.Value, error) {
	s := keyspace.NewStream()
	nodes, err := rd.count()
	if err != nil {
		return nil, rd.readFailed(err, "Stream listpacks len loading failed.")
	}
	seenNode := map[string]struct{}{}
	var list []*keyspace.StreamNode
	for i := 0; i < nodes; i++ {
		key, err := rd.str()
		if err != nil {
			return nil, rd.readFailed(err, "Stream master ID loading failed: invalid encoding or I/O error.")
		}
		if len(key) != 16 {
			return nil, rd.errorf("Stream node key entry is not the size of a stream ID")
		}
		lp, err := rd.str()
		if err != nil {
			return nil, rd.readFailed(err, "Stream listpacks loading failed.")
		}
		ents, ok := parseListpack(lp)
		if !ok {
			return nil, rd.errorf("Stream listpack integrity check failed.")
		}
		if len(ents) == 0 {
			return nil, rd.errorf("Empty listpack inside stream")
		}
		master := keyspace.StreamID{Ms: binary.BigEndian.Uint64(key), Seq: binary.BigEndian.Uint64(key[8:])}
		n, ok := parseStreamNode(master, ents)
		if !ok {
			return nil, rd.errorf("Stream listpack integrity check failed.")
		}
		if _, dup := seenNode[string(key)]; dup {
			return nil, rd.errorf("Listpack re-added with existing key")
		}
		seenNode[string(key)] = struct{}{}
		list = append(list, n)
	}
	// The rax orders its keys; a node must end before the next begins.
	sort.Slice(list, func(i, j int) bool { return list[i].Master.Cmp(list[j].Master) < 0 })
	// Live entries must ascend across the nodes (deleted ones may not,
	// after an XSETID below them).
	var live uint64
	var prev keyspace.StreamID
	for _, n := range list {
		ordered := true
		n.Walk(func(e *keyspace.StreamEntry) bool {
			if e.Flags&keyspace.StreamFlagDeleted != 0 {
				return true
			}
			if live > 0 && e.ID.Cmp(prev) <= 0 {
				ordered = false
				return false
			}
			prev = e.ID
			live++
			return true
		})
		if !ordered {
			return nil, rd.errorf("Stream listpack integrity check failed.")
		}
		s.LoadNode(n)
	}
	length, err := rd.len()
	if err != nil {
		return nil, rd.readFailed(err, "Stream object metadata loading failed.")
	}
	var ids [6]uint64
	k := 2 // last_id
	if t == TypeStreamListpacks2 {
		k = 6 // first_id, max_deleted_entry_id
	}
	for i := 0; i < k; i++ {
		if ids[i], err = rd.len(); err != nil {
			return nil, rd.readFailed(err, "Stream object metadata loading failed.")
		}
	}
	var added uint64
	if t == TypeStreamListpacks2 {
		if added, err = rd.len(); err != nil {
			return nil, rd.readFailed(err, "Stream object metadata loading failed.")
		}
	}
	if length != live {
		return nil, rd.errorf("Stream length inconsistent with rax entries")
	}
	s.SetLength(length)
	last := keyspace.StreamID{Ms: ids[0], Seq: ids[1]}
	if live > 0 && prev.Cmp(last) > 0 {
		return nil, rd.errorf("Stream last_id is smaller than the last entry")
	}
	if t == TypeStreamListpacks2 {
		s.SetMeta(last, keyspace.StreamID{Ms: ids[2], Seq: ids[3]}, keyspace.StreamID{Ms: ids[4], Seq: ids[5]}, added)
		if length == 0 {
			s.SetMeta(last, keyspace.StreamID{}, s.MaxDeletedID(), added)
		} else if s.FirstID() != s.EdgeID(true) {
			// first_id is derived state: keep it true to the entries.
			s.SetMeta(last, s.EdgeID(true), s.MaxDeletedID(), added)
		}
	} else {
		first := keyspace.StreamID{}
		if length > 0 {
			first = s.EdgeID(true)
		}
		s.SetMeta(last, first, keyspace.StreamID{}, length)
	}
	groups, err := rd.count()
	if err != nil {
		return nil, rd.readFailed(err, "Stream cgroup count loading failed.")
	}
	for g := 0; g < groups; g++ {
		name, err := rd.str()
		if err != nil {
			return nil, rd.readFailed(err, "Error reading the consumer group name from Stream")
		}
		var gid keyspace.StreamID
		if gid.Ms, err = rd.len(); err != nil {
			return nil, rd.readFailed(err, "Stream cgroup ID loading failed.")
		}
		if gid.Seq, err = rd.len(); err != nil {
			return nil, rd.readFailed(err, "Stream cgroup ID loading failed.")
		}
		var read int64
		if t == TypeStreamListpacks2 {
			v, err := rd.len()
			if err != nil {
				return nil, rd.readFailed(err, "Stream cgroup offset loading failed.")
			}
			read = int64(v)
		} else {
			read = s.EstimateEntriesRead(gid)
		}
		cg := s.CreateGroup(string(name), gid, read)
		if cg == nil {
			return nil, rd.errorf("Duplicated consumer group name %s", name)
		}
		pelSize, err := rd.count()
		if err != nil {
			return nil, rd.readFailed(err, "Stream PEL size loading failed.")
		}
		for i := 0; i < pelSize; i++ {
			var raw [16]byte
			if err := rd.full(raw[:]); err != nil {
				return nil, rd.readFailed(err, "Stream PEL ID loading failed.")
			}
			if err := rd.full(rd.tmp[:8]); err != nil { // delivery time
				return nil, rd.readFailed(err, "Stream PEL NACK loading failed.")
			}
			nack := &keyspace.StreamNACK{DeliveryTime: int64(binary.LittleEndian.Uint64(rd.tmp[:8]))}
			if nack.DeliveryCount, err = rd.len(); err != nil {
				return nil, rd.readFailed(err, "Stream PEL NACK loading failed.")
			}
			if !cg.PELAdd(rawID(raw), nack) {
				return nil, rd.errorf("Duplicated global PEL entry loading stream consumer group")
			}
		}
		consumers, err := rd.count()
		if err != nil {
			return nil, rd.readFailed(err, "Stream consumers num loading failed.")
		}
		for c := 0; c < consumers; c++ {
			cname, err := rd.str()
			if err != nil {
				return nil, rd.readFailed(err, "Error reading the consumer name from Stream group.")
			}
			if err := rd.full(rd.tmp[:8]); err != nil { // seen time
				return nil, rd.readFailed(err, "Stream short read reading seen time.")
			}
			cons := cg.CreateConsumer(string(cname), int64(binary.LittleEndian.Uint64(rd.tmp[:8])))
			if cons == nil {
				return nil, rd.errorf("Duplicate stream consumer detected.")
			}
			n, err := rd.count()
			if err != nil {
				return nil, rd.readFailed(err, "Stream consumer PEL num loading failed.")
			}
			for i := 0; i < n; i++ {
				var raw [16]byte
				if err := rd.full(raw[:]); err != nil {
					return nil, rd.readFailed(err, "Stream short read reading PEL streamID.")
				}
				id := rawID(raw)
				nack := cg.PELGet(id)
				if nack == nil {
					return nil, rd.errorf("Consumer entry not found in group global PEL")
				}
				if nack.Consumer != nil {
					return nil, rd.errorf("Stream consumer PEL entry already has a consumer assigned")
				}
				nack.Consumer = cons
				cons.PELAdd(id, nack)
			}
		}
		// As deep sanitization: every pending entry has its consumer
		// (Vigil relies on it; a file Redis writes always has).
		orphan := false
		cg.PELRange(keyspace.StreamID{}, func(_ keyspace.StreamID, n *keyspace.StreamNACK) bool {
			orphan = n.Consumer == nil
			return !orphan
		})
		if orphan {
			return nil, rd.errorf("Stream CG PEL entry without consumer")
		}
	}
	return s, nil
}

// readFailed is rdbReportReadError after a read of a stream's part
// failed: reason, after the failure's own report if it had one (an
// invalid LZF string...).
func (rd *reader) readFailed(err error, reason string) error {
	e := &Error{Offset: rd.off, Reason: reason, Line: redisLines[reason]}
	if inner, ok := err.(*Error); ok && inner.Line != 0 {
		e.Cause = inner
	}
	return e
}

func rawID(b [16]byte) keyspace.StreamID {
	return keyspace.StreamID{Ms: binary.BigEndian.Uint64(b[:]), Seq: binary.BigEndian.Uint64(b[8:])}
}

func appendRawID(b []byte, id keyspace.StreamID) []byte {
	b = binary.BigEndian.AppendUint64(b, id.Ms)
	return binary.BigEndian.AppendUint64(b, id.Seq)
}

// parseStreamNode reads one node's listpack (streamValidateListpackIntegrity
// in deep mode): the master entry, then each entry with its lp-count; the
// counts must agree with the flags, IDs must ascend from the master.
func parseStreamNode(master keyspace.StreamID, ents [][]byte) (*keyspace.StreamNode, bool) {
	p := 0
	next := func() ([]byte, bool) {
		if p >= len(ents) {
			return nil, false
		}
		p++
		return ents[p-1], true
	}
	nextInt := func() (int64, bool) {
		b, ok := next()
		if !ok {
			return 0, false
		}
		return string2ll(b)
	}
	count, ok1 := nextInt()
	deleted, ok2 := nextInt()
	nf, ok3 := nextInt()
	if !ok1 || !ok2 || !ok3 || count < 0 || deleted < 0 || nf < 0 || int64(len(ents)) < 4+nf {
		return nil, false
	}
	fields := make([]string, nf)
	for i := range fields {
		b, _ := next()
		fields[i] = string(b)
	}
	n := keyspace.NewStreamNode(master, fields)
	if z, ok := nextInt(); !ok || z != 0 {
		return nil, false
	}
	live, dead := 0, 0
	for p < len(ents) {
		flags, ok1 := nextInt()
		msd, ok2 := nextInt()
		seqd, ok3 := nextInt()
		if !ok1 || !ok2 || !ok3 || flags < 0 || flags > 3 {
			return nil, false
		}
		id := keyspace.StreamID{Ms: master.Ms + uint64(msd), Seq: master.Seq + uint64(seqd)}
		nv, lpCount := nf, 3+nf
		if flags&keyspace.StreamFlagSameFields == 0 {
			k, ok := nextInt()
			if !ok || k < 0 || k > int64(len(ents)) {
				return nil, false
			}
			nv, lpCount = 2*k, 4+2*k
		}
		if int64(len(ents)-p) < nv+1 {
			return nil, false
		}
		vals := make([][]byte, nv)
		for i := range vals {
			vals[i], _ = next()
		}
		if c, ok := nextInt(); !ok || c != lpCount {
			return nil, false
		}
		if id.Cmp(master) < 0 {
			return nil, false
		}
		if flags&keyspace.StreamFlagDeleted != 0 {
			dead++
		} else {
			live++
		}
		n.AppendEntry(id, int(flags), vals)
	}
	if int64(live) != count || int64(dead) != deleted || n.Len() == 0 {
		return nil, false
	}
	n.Count, n.Deleted = live, dead
	return n, true
}

// appendStream is rdbSaveObject for a stream (type 19).
func appendStream(b []byte, s *keyspace.Stream, compress bool) []byte {
	b = appendLen(b, uint64(s.NumNodes()))
	var key [16]byte
	for _, n := range s.Nodes() {
		appendRawID(key[:0], n.Master)
		b = appendString(b, key[:], compress)
		b = appendString(b, streamNodeListpack(n), compress)
	}
	b = appendLen(b, s.Len())
	last, first, maxDel := s.LastID(), s.FirstID(), s.MaxDeletedID()
	for _, v := range []uint64{last.Ms, last.Seq, first.Ms, first.Seq, maxDel.Ms, maxDel.Seq, s.EntriesAdded()} {
		b = appendLen(b, v)
	}
	b = appendLen(b, uint64(s.NumGroups()))
	s.Groups(func(g *keyspace.StreamCG) bool {
		b = appendStr(b, g.Name, compress)
		b = appendLen(b, g.LastID.Ms)
		b = appendLen(b, g.LastID.Seq)
		b = appendLen(b, uint64(g.EntriesRead))
		b = appendLen(b, uint64(g.PELLen()))
		g.PELRange(keyspace.StreamID{}, func(id keyspace.StreamID, n *keyspace.StreamNACK) bool {
			b = appendRawID(b, id)
			b = binary.LittleEndian.AppendUint64(b, uint64(n.DeliveryTime))
			b = appendLen(b, n.DeliveryCount)
			return true
		})
		b = appendLen(b, uint64(g.NumConsumers()))
		g.ConsumersRange(func(c *keyspace.StreamConsumer) bool {
			b = appendStr(b, c.Name, compress)
			b = binary.LittleEndian.AppendUint64(b, uint64(c.SeenTime))
			b = appendLen(b, uint64(c.PELLen()))
			c.PELRange(keyspace.StreamID{}, func(id keyspace.StreamID, _ *keyspace.StreamNACK) bool {
				b = appendRawID(b, id)
				return true
			})
			return true
		})
		return true
	})
	return b
}

// streamNodeListpack lays a node out as streamAppendItem built it.
func streamNodeListpack(n *keyspace.StreamNode) []byte {
	lp := newListpack()
	lp.addInt(int64(n.Count))
	lp.addInt(int64(n.Deleted))
	lp.addInt(int64(len(n.MasterFields)))
	for _, f := range n.MasterFields {
		lp.addStr(f)
	}
	lp.addInt(0)
	n.Walk(func(e *keyspace.StreamEntry) bool {
		lp.addInt(int64(e.Flags))
		lp.addInt(int64(e.ID.Ms - n.Master.Ms))
		lp.addInt(int64(e.ID.Seq - n.Master.Seq))
		lpCount := 3 + len(e.Vals)
		if e.Flags&keyspace.StreamFlagSameFields == 0 {
			lp.addInt(int64(len(e.Vals) / 2))
			lpCount++
		}
		for _, v := range e.Vals {
			lp.add(v)
		}
		lp.addInt(int64(lpCount))
		return true
	})
	return lp.finish()
}
