package rdb

import (
	"github.com/vigil-kv/vigil/server/keyspace"
)

// loadStream parses a STREAM_LISTPACKS (15) or STREAM_LISTPACKS_2 (19)
// value as rdbLoadObject does, with its consistency checks, and returns it
// as an opaque keyspace.Stream holding the bytes read.
func loadStream(rd *reader, t int) (keyspace.Value, error) {
	rd.rec, rd.recording = rd.rec[:0], true
	length, err := parseStream(rd, t)
	rd.recording = false
	if err != nil {
		return nil, err
	}
	payload := append([]byte(nil), rd.rec...)
	rd.rec = nil
	return keyspace.NewOpaqueStream(byte(t), payload, length), nil
}

func parseStream(rd *reader, t int) (uint64, error) {
	nodes, err := rd.count()
	if err != nil {
		return 0, err
	}
	seenNode := map[string]struct{}{}
	for i := 0; i < nodes; i++ {
		key, err := rd.str()
		if err != nil {
			return 0, err
		}
		if len(key) != 16 {
			return 0, rd.errorf("Stream node key entry is not the size of a stream ID")
		}
		lp, err := rd.str()
		if err != nil {
			return 0, err
		}
		ents, ok := parseListpack(lp)
		if !ok || !validStreamListpack(ents) {
			return 0, rd.errorf("Stream listpack integrity check failed.")
		}
		if len(ents) == 0 {
			return 0, rd.errorf("Empty listpack inside stream")
		}
		if _, dup := seenNode[string(key)]; dup {
			return 0, rd.errorf("Listpack re-added with existing key")
		}
		seenNode[string(key)] = struct{}{}
	}
	length, err := rd.len()
	if err != nil {
		return 0, err
	}
	n := 2 // last_id
	if t == TypeStreamListpacks2 {
		n += 5 // first_id, max_deleted_entry_id, entries_added
	}
	for i := 0; i < n; i++ {
		if _, err := rd.len(); err != nil {
			return 0, err
		}
	}
	groups, err := rd.count()
	if err != nil {
		return 0, err
	}
	seenGroup := map[string]struct{}{}
	for g := 0; g < groups; g++ {
		name, err := rd.str()
		if err != nil {
			return 0, err
		}
		n := 2 // last delivered id
		if t == TypeStreamListpacks2 {
			n++ // entries_read
		}
		for i := 0; i < n; i++ {
			if _, err := rd.len(); err != nil {
				return 0, err
			}
		}
		if _, dup := seenGroup[string(name)]; dup {
			return 0, rd.errorf("Duplicated consumer group name %s", name)
		}
		seenGroup[string(name)] = struct{}{}
		pelSize, err := rd.count()
		if err != nil {
			return 0, err
		}
		pel := map[[16]byte]bool{} // id -> owned by a consumer
		for i := 0; i < pelSize; i++ {
			var id [16]byte
			if err := rd.full(id[:]); err != nil {
				return 0, err
			}
			if err := rd.full(rd.tmp[:8]); err != nil { // delivery time
				return 0, err
			}
			if _, err := rd.len(); err != nil { // delivery count
				return 0, err
			}
			if _, dup := pel[id]; dup {
				return 0, rd.errorf("Duplicated global PEL entry loading stream consumer group")
			}
			pel[id] = false
		}
		consumers, err := rd.count()
		if err != nil {
			return 0, err
		}
		seenConsumer := map[string]struct{}{}
		for c := 0; c < consumers; c++ {
			cname, err := rd.str()
			if err != nil {
				return 0, err
			}
			if _, dup := seenConsumer[string(cname)]; dup {
				return 0, rd.errorf("Duplicate stream consumer detected.")
			}
			seenConsumer[string(cname)] = struct{}{}
			if err := rd.full(rd.tmp[:8]); err != nil { // seen time
				return 0, err
			}
			n, err := rd.count()
			if err != nil {
				return 0, err
			}
			for i := 0; i < n; i++ {
				var id [16]byte
				if err := rd.full(id[:]); err != nil {
					return 0, err
				}
				owned, ok := pel[id]
				if !ok {
					return 0, rd.errorf("Consumer entry not found in group global PEL")
				}
				if owned {
					return 0, rd.errorf("Duplicated consumer PEL entry loading a stream consumer group")
				}
				pel[id] = true
			}
		}
	}
	return length, nil
}

// validStreamListpack is a shallow streamValidateListpackIntegrity: the
// master entry (count, deleted, master field count, the fields, the 0
// terminator) must be there.
func validStreamListpack(ents [][]byte) bool {
	if len(ents) < 4 {
		return false
	}
	nf, ok := string2ll(ents[2])
	if !ok || nf < 0 || int64(len(ents)) < 3+nf+1 {
		return false
	}
	return string(ents[3+nf]) == "0"
}
