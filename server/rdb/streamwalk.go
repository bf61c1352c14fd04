package rdb

import (
	"bytes"
	"encoding/binary"
)

// WalkStreamEntries calls fn for every live entry of a stream held as its
// RDB value encoding (keyspace.Stream's payload), in ID order, as
// streamIteratorGetID/GetField see them: the ID and the entry's field and
// value strings alternating (integers as their decimal text). It is what
// DEBUG DIGEST needs of an opaque stream; fn must not keep the slices.
func WalkStreamEntries(payload []byte, fn func(ms, seq uint64, fieldsValues [][]byte)) error {
	rd := newReader(bytes.NewReader(payload), false)
	nodes, err := rd.count()
	if err != nil {
		return err
	}
	var fv [][]byte
	for i := 0; i < nodes; i++ {
		key, err := rd.str()
		if err != nil {
			return err
		}
		if len(key) != 16 {
			return rd.errorf("Stream node key entry is not the size of a stream ID")
		}
		masterMs, masterSeq := binary.BigEndian.Uint64(key), binary.BigEndian.Uint64(key[8:])
		lp, err := rd.str()
		if err != nil {
			return err
		}
		ents, ok := parseListpack(lp)
		if !ok || !validStreamListpack(ents) {
			return rd.errorf("Stream listpack integrity check failed.")
		}
		// The master entry: count, deleted, master field count, the
		// master fields, the 0 terminator.
		nmf, _ := string2ll(ents[2])
		master := ents[3 : 3+nmf]
		p := 3 + int(nmf) + 1
		num := func() (int64, bool) {
			if p >= len(ents) {
				return 0, false
			}
			n, ok := string2ll(ents[p])
			p++
			return n, ok
		}
		for p < len(ents) {
			flags, ok1 := num()
			dms, ok2 := num()
			dseq, ok3 := num()
			if !ok1 || !ok2 || !ok3 {
				return rd.errorf("Stream listpack integrity check failed.")
			}
			fv = fv[:0]
			if flags&2 != 0 { // STREAM_ITEM_FLAG_SAMEFIELDS
				if p+len(master) > len(ents) {
					return rd.errorf("Stream listpack integrity check failed.")
				}
				for j, f := range master {
					fv = append(fv, f, ents[p+j])
				}
				p += len(master)
			} else {
				nf, ok := num()
				if !ok || nf < 0 || p+2*int(nf) > len(ents) {
					return rd.errorf("Stream listpack integrity check failed.")
				}
				fv = append(fv, ents[p:p+2*int(nf)]...)
				p += 2 * int(nf)
			}
			p++               // lp-count
			if flags&1 == 0 { // not STREAM_ITEM_FLAG_DELETED
				fn(masterMs+uint64(dms), masterSeq+uint64(dseq), fv)
			}
		}
	}
	return nil
}
