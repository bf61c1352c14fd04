package rdb

import (
	"encoding/binary"
	"strconv"

	"github.com/vigil-kv/vigil/server/keyspace"
)

// loadLegacy loads the types Redis 7.0 reads but no longer writes
// (ziplists, zipmaps, quicklists of ziplists), streams, and refuses
// modules.
func loadLegacy(rd *reader, t int, enc keyspace.EncodingConfig) (keyspace.Value, error) {
	switch t {
	case TypeModule, TypeModule2:
		id, err := rd.len()
		if err != nil {
			return nil, err
		}
		return nil, rd.errorf("The RDB file contains module data I can't load: no matching module type '%s' (module type %s not supported)", moduleName(id), moduleName(id))
	case TypeStreamListpacks, TypeStreamListpacks2:
		return loadStream(rd, t)
	case TypeListZiplist:
		b, err := rd.str()
		if err != nil {
			return nil, err
		}
		ents, ok := parseZiplist(b)
		if !ok {
			return nil, rd.errorf("List ziplist integrity check failed.")
		}
		if len(ents) == 0 {
			return nil, errEmpty
		}
		l := newLoadedList(enc)
		for _, e := range ents {
			l.PushBack(e)
		}
		return l, nil
	case TypeListQuicklist:
		n, err := rd.count()
		if err != nil {
			return nil, err
		}
		l := newLoadedList(enc)
		for i := 0; i < n; i++ {
			b, err := rd.str()
			if err != nil {
				return nil, err
			}
			ents, ok := parseZiplist(b)
			if !ok {
				return nil, rd.errorf("Ziplist integrity check failed.")
			}
			if len(ents) == 0 {
				continue
			}
			l.AppendNode(ents, keyspace.ListpackSizeOf(ents))
		}
		if l.Len() == 0 {
			return nil, errEmpty
		}
		return l, nil
	case TypeHashZiplist:
		b, err := rd.str()
		if err != nil {
			return nil, err
		}
		ents, ok := parseZiplist(b)
		if !ok || len(ents)%2 != 0 {
			return nil, rd.errorf("Hash ziplist integrity check failed.")
		}
		return hashFromPairs(rd, ents, enc, "Hash ziplist integrity check failed.")
	case TypeZSetZiplist:
		b, err := rd.str()
		if err != nil {
			return nil, err
		}
		ents, ok := parseZiplist(b)
		if !ok || len(ents)%2 != 0 {
			return nil, rd.errorf("Zset ziplist integrity check failed.")
		}
		return zsetFromPairs(rd, ents, enc, "Zset ziplist integrity check failed.")
	case TypeHashZipmap:
		b, err := rd.str()
		if err != nil {
			return nil, err
		}
		ents, ok := parseZipmap(b)
		if !ok {
			return nil, rd.errorf("Zipmap integrity check failed.")
		}
		seen := make(map[string]struct{}, len(ents)/2)
		for i := 0; i < len(ents); i += 2 {
			if _, dup := seen[string(ents[i])]; dup || len(ents[i])+len(ents[i+1]) > listpackSafety {
				return nil, rd.errorf("Hash zipmap with dup elements, or big length (%d)", len(ents[i]))
			}
			seen[string(ents[i])] = struct{}{}
		}
		v, err := hashFromPairs(rd, ents, enc, "Zipmap integrity check failed.")
		if err != nil {
			return nil, err
		}
		h := v.(*keyspace.Hash)
		for _, e := range ents {
			if len(e) > enc.HashMaxListpackValue {
				h.ConvertToHashtable()
				break
			}
		}
		return h, nil
	}
	return nil, rd.errorf("Unknown RDB encoding type %d", t)
}

// parseZiplist is ziplistValidateIntegrity (deep) + the entries, integers
// as decimal text.
func parseZiplist(b []byte) ([][]byte, bool) {
	const hdr = 10
	if len(b) < hdr+1 || int(binary.LittleEndian.Uint32(b)) != len(b) || b[len(b)-1] != 0xFF {
		return nil, false
	}
	tail := int(binary.LittleEndian.Uint32(b[4:]))
	count := int(binary.LittleEndian.Uint16(b[8:]))
	end := len(b) - 1
	var ents [][]byte
	p, prevLen, last := hdr, 0, hdr
	for p < end {
		start := p
		// prevlen
		var pl int
		if b[p] < 254 {
			pl = int(b[p])
			p++
		} else if b[p] == 254 {
			if p+5 > end {
				return nil, false
			}
			pl = int(binary.LittleEndian.Uint32(b[p+1:]))
			p += 5
		} else {
			return nil, false
		}
		if pl != prevLen {
			return nil, false
		}
		if p >= end {
			return nil, false
		}
		c := b[p]
		var ent []byte
		need := func(n int) bool { return p+n <= end }
		switch c >> 6 {
		case 0:
			n := int(c & 0x3F)
			if !need(1 + n) {
				return nil, false
			}
			ent = append([]byte(nil), b[p+1:p+1+n]...)
			p += 1 + n
		case 1:
			if !need(2) {
				return nil, false
			}
			n := int(c&0x3F)<<8 | int(b[p+1])
			if !need(2 + n) {
				return nil, false
			}
			ent = append([]byte(nil), b[p+2:p+2+n]...)
			p += 2 + n
		case 2:
			if c != 0x80 || !need(5) {
				return nil, false
			}
			n := uint64(binary.BigEndian.Uint32(b[p+1:]))
			if uint64(p)+5+n > uint64(end) {
				return nil, false
			}
			ent = append([]byte(nil), b[p+5:p+5+int(n)]...)
			p += 5 + int(n)
		default:
			var v int64
			switch {
			case c == 0xC0:
				if !need(3) {
					return nil, false
				}
				v = int64(int16(binary.LittleEndian.Uint16(b[p+1:])))
				p += 3
			case c == 0xD0:
				if !need(5) {
					return nil, false
				}
				v = int64(int32(binary.LittleEndian.Uint32(b[p+1:])))
				p += 5
			case c == 0xE0:
				if !need(9) {
					return nil, false
				}
				v = int64(binary.LittleEndian.Uint64(b[p+1:]))
				p += 9
			case c == 0xF0:
				if !need(4) {
					return nil, false
				}
				u := uint32(b[p+1]) | uint32(b[p+2])<<8 | uint32(b[p+3])<<16
				v = int64(int32(u<<8) >> 8)
				p += 4
			case c == 0xFE:
				if !need(2) {
					return nil, false
				}
				v = int64(int8(b[p+1]))
				p += 2
			case c >= 0xF1 && c <= 0xFD:
				v = int64(c&0x0F) - 1
				p++
			default:
				return nil, false
			}
			ent = strconv.AppendInt(nil, v, 10)
		}
		prevLen = p - start
		last = start
		ents = append(ents, ent)
	}
	if len(ents) > 0 && tail != last || len(ents) == 0 && tail != hdr {
		return nil, false
	}
	if count != 65535 && count != len(ents) {
		return nil, false
	}
	return ents, true
}

// parseZipmap is zipmapValidateIntegrity (deep) + the fields and values:
// entries up to the first end marker where a field's length is read, an
// empty zipmap refused, the header's count checked unless it is 254.
func parseZipmap(b []byte) ([][]byte, bool) {
	if len(b) < 2 || b[len(b)-1] != 0xFF {
		return nil, false
	}
	end := len(b) - 1
	// lenAt is zipmapGetEncodedLengthSize and zipmapDecodeLength at p
	// (p <= end), refused if it reaches past end or if a length below
	// 254 takes 5 bytes.
	lenAt := func(p int) (l, s int, ok bool) {
		if b[p] < 254 {
			return int(b[p]), 1, true
		}
		if p+5 > end {
			return 0, 0, false
		}
		l = int(binary.LittleEndian.Uint32(b[p+1:]))
		return l, 5, l >= 254
	}
	var ents [][]byte
	p := 1
	for b[p] != 0xFF {
		l, s, ok := lenAt(p)
		if !ok {
			return nil, false
		}
		p += s
		if l > end-p {
			return nil, false
		}
		key := b[p : p+l]
		p += l
		if l, s, ok = lenAt(p); !ok {
			return nil, false
		}
		p += s
		free := int(b[p])
		p++
		if p > end || l > end-p || free > end-p-l {
			return nil, false
		}
		ents = append(ents, append([]byte(nil), key...), append([]byte(nil), b[p:p+l]...))
		p += l + free
	}
	if len(ents) == 0 || b[0] != 254 && int(b[0]) != len(ents)/2 {
		return nil, false
	}
	return ents, true
}
