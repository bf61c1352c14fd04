package rdb

import (
	"encoding/binary"
	"math"
	"strconv"

	"github.com/vigil-kv/vigil/server/keyspace"
)

// listpackValueLimit is lpSafeToAdd's LISTPACK_MAX_SAFETY_SIZE.
const listpackSafety = 1 << 30

// loadObject is rdbLoadObject: the value of type t, in the encoding Redis
// 7.0 gives it after loading under enc. errEmpty for an empty collection.
func loadObject(rd *reader, t int, enc keyspace.EncodingConfig) (keyspace.Value, error) {
	switch t {
	case TypeString:
		b, err := rd.str()
		if err != nil {
			return nil, err
		}
		return keyspace.NewString(b, keyspace.StringAuto), nil
	case TypeList:
		n, err := rd.count()
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, errEmpty
		}
		l := newLoadedList(enc)
		for i := 0; i < n; i++ {
			b, err := rd.str()
			if err != nil {
				return nil, err
			}
			l.PushBack(b)
		}
		return l, nil
	case TypeSet:
		return loadSet(rd, enc)
	case TypeZSet, TypeZSet2:
		return loadZSet(rd, t, enc)
	case TypeHash:
		return loadHash(rd, enc)
	case TypeSetIntset:
		b, err := rd.str()
		if err != nil {
			return nil, err
		}
		n, ok := validIntset(b)
		if !ok {
			return nil, rd.errorf("Intset integrity check failed.")
		}
		s := keyspace.NewIntSetBlob(b)
		if n > enc.SetMaxIntsetEntries {
			s.ConvertToHashtable()
		}
		return s, nil
	case TypeHashListpack:
		b, err := rd.str()
		if err != nil {
			return nil, err
		}
		ents, ok := parseListpack(b)
		if !ok || len(ents)%2 != 0 {
			return nil, rd.errorf("Hash listpack integrity check failed.")
		}
		return hashFromPairs(rd, ents, enc, "Hash listpack integrity check failed.")
	case TypeZSetListpack:
		b, err := rd.str()
		if err != nil {
			return nil, err
		}
		ents, ok := parseListpack(b)
		if !ok || len(ents)%2 != 0 {
			return nil, rd.errorf("Zset listpack integrity check failed.")
		}
		return zsetFromPairs(rd, ents, enc, "Zset listpack integrity check failed.")
	case TypeListQuicklist2:
		return loadQuicklist2(rd, enc)
	}
	return loadLegacy(rd, t, enc)
}

func loadSet(rd *reader, enc keyspace.EncodingConfig) (keyspace.Value, error) {
	n64, err := rd.len()
	if err != nil {
		return nil, err
	}
	if n64 == 0 {
		return nil, errEmpty
	}
	maxEntries := min(enc.SetMaxIntsetEntries, 1<<30)
	if n64 > uint64(maxEntries) && n64 > 4 && dictOOM(n64) {
		return nil, rd.errorf("OOM in dictTryExpand %d", n64)
	}
	// Read everything first: the dict is sized from n only once the data
	// is there. As rdbLoadObject, an intset that meets a string becomes a
	// dict sized for n.
	members := make([][]byte, 0, min(n64, 1024))
	intset := n64 <= uint64(maxEntries)
	for i := uint64(0); i < n64; i++ {
		b, err := rd.str()
		if err != nil {
			return nil, err
		}
		if intset {
			if _, ok := string2ll(b); !ok {
				if intset = false; dictOOM(n64) {
					return nil, rd.errorf("OOM in dictTryExpand %d", n64)
				}
			}
		}
		members = append(members, b)
	}
	n := int(n64)
	var s *keyspace.Set
	if n > maxEntries {
		s = keyspace.NewHashtableSet(n)
	} else {
		s = keyspace.NewIntSet()
	}
	for _, m := range members {
		if s.IsIntset() {
			if _, ok := string2ll(m); !ok {
				s.ConvertToHashtable()
				s.ExpandHashtable(n)
			}
		}
		if intset := s.IsIntset(); !s.Add(m, math.MaxInt) {
			e := rd.fail("Duplicate set members detected")
			if !intset {
				e.(*Error).Line = 1829 // dictAdd's, where 1809 is intsetAdd's
			}
			return nil, e
		}
	}
	return s, nil
}

func loadHash(rd *reader, enc keyspace.EncodingConfig) (keyspace.Value, error) {
	n64, err := rd.len()
	if err != nil {
		return nil, err
	}
	if n64 == 0 {
		return nil, errEmpty
	}
	// As rdbLoadObject: pairs read one at a time, a repeated field
	// refused as it comes ("Hash with dup elements" while the hash is a
	// listpack, "Duplicate hash fields detected" once a dict), the dict's
	// table sized for the pairs left when it becomes one.
	listpack := n64 <= uint64(enc.HashMaxListpackEntries)
	if !listpack && n64 > 4 && dictOOM(n64) {
		return nil, rd.errorf("OOM in dictTryExpand %d", n64)
	}
	pairs := make([][]byte, 0, min(2*n64, 2048))
	seen := make(map[string]struct{}, min(n64, 1024))
	for left := n64; left > 0; {
		left--
		f, err := rd.str()
		if err != nil {
			return nil, err
		}
		v, err := rd.str()
		if err != nil {
			return nil, err
		}
		if _, dup := seen[string(f)]; dup {
			if listpack {
				return nil, rd.errorf("Hash with dup elements")
			}
			return nil, rd.errorf("Duplicate hash fields detected")
		}
		seen[string(f)] = struct{}{}
		if listpack && (len(f) > enc.HashMaxListpackValue || len(v) > enc.HashMaxListpackValue) {
			if listpack = false; left > 4 && dictOOM(left) {
				return nil, rd.errorf("OOM in dictTryExpand %d", left)
			}
		}
		pairs = append(pairs, f, v)
	}
	n := int(n64)
	var h *keyspace.Hash
	if n > enc.HashMaxListpackEntries {
		h = keyspace.NewHashtableHash(n)
	} else {
		h = keyspace.NewHash()
	}
	for i := 0; i < len(pairs); i += 2 {
		f, v := string(pairs[i]), string(pairs[i+1])
		if h.Encoding() == keyspace.EncodingListpack &&
			(len(f) > enc.HashMaxListpackValue || len(v) > enc.HashMaxListpackValue) {
			h.ConvertToHashtable()
		}
		h.AppendListpack(f, v)
	}
	return h, nil
}

// dictOOM is dictTryExpand(n) failing to allocate: a table of the power
// of two at or above n, 8 bytes an entry. A size that overflows is
// refused by _dictExpand without allocating (the load goes on, as Redis
// ignores that refusal); a table of more than 1 TiB is taken as an
// allocation that fails.
func dictOOM(n uint64) bool {
	if n >= math.MaxInt64 {
		return false
	}
	size := uint64(4)
	for size < n {
		size <<= 1
	}
	if size*8 < size {
		return false
	}
	return size*8 > 1<<40
}

// hashFromPairs builds a hash from a listpack's, ziplist's or zipmap's
// fields and values; a repeated field fails with reason (the container's
// integrity check).
func hashFromPairs(rd *reader, ents [][]byte, enc keyspace.EncodingConfig, reason string) (keyspace.Value, error) {
	if len(ents) == 0 {
		return nil, errEmpty
	}
	h := keyspace.NewHash()
	seen := make(map[string]struct{}, len(ents)/2)
	for i := 0; i < len(ents); i += 2 {
		f := string(ents[i])
		if _, dup := seen[f]; dup {
			return nil, rd.fail(reason)
		}
		seen[f] = struct{}{}
		h.AppendListpack(f, string(ents[i+1]))
	}
	if h.Len() > enc.HashMaxListpackEntries {
		h.ConvertToHashtable()
	}
	return h, nil
}

// zsetFromPairs builds a sorted set from a listpack's or ziplist's members
// and scores; a bad score or a repeated member fails with reason (the
// container's integrity check).
func zsetFromPairs(rd *reader, ents [][]byte, enc keyspace.EncodingConfig, reason string) (keyspace.Value, error) {
	if len(ents) == 0 {
		return nil, errEmpty
	}
	members := make([][]byte, 0, len(ents)/2)
	scores := make([]float64, 0, len(ents)/2)
	for i := 0; i < len(ents); i += 2 {
		s, err := strconv.ParseFloat(string(ents[i+1]), 64)
		if err != nil && !isRangeErr(err) || math.IsNaN(s) {
			return nil, rd.fail(reason)
		}
		members = append(members, ents[i])
		scores = append(scores, s)
	}
	// One build, sorted, where a Set per element would copy the buffer
	// each time; a repeated member fails the integrity check.
	z, ok := keyspace.NewZSetListpack(members, scores)
	if !ok {
		return nil, rd.fail(reason)
	}
	if z.Len() > enc.ZSetMaxListpackEntries {
		z.ConvertToSkiplist()
	}
	return z, nil
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

func loadZSet(rd *reader, t int, enc keyspace.EncodingConfig) (keyspace.Value, error) {
	n, err := rd.len()
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, errEmpty
	}
	if n > 4 && dictOOM(n) {
		return nil, rd.errorf("OOM in dictTryExpand %d", n)
	}
	z := keyspace.NewZSet(false)
	maxlen, total := 0, 0
	for i := uint64(0); i < n; i++ {
		m, err := rd.str()
		if err != nil {
			return nil, err
		}
		var s float64
		if t == TypeZSet2 {
			if err := rd.full(rd.tmp[:8]); err != nil {
				return nil, err
			}
			s = math.Float64frombits(binary.LittleEndian.Uint64(rd.tmp[:8]))
		} else {
			if s, err = loadDoubleValue(rd); err != nil {
				return nil, err
			}
		}
		if math.IsNaN(s) {
			return nil, rd.errorf("Zset with NAN score detected")
		}
		maxlen = max(maxlen, len(m))
		total += len(m)
		if !z.Set(string(m), s) {
			return nil, rd.errorf("Duplicate zset fields detected")
		}
	}
	if z.Len() <= enc.ZSetMaxListpackEntries && maxlen <= enc.ZSetMaxListpackValue && total <= listpackSafety {
		z.ConvertToListpackIfNeeded(enc)
	}
	return z, nil
}

// loadDoubleValue is rdbLoadDoubleValue (legacy ZSET scores).
func loadDoubleValue(rd *reader) (float64, error) {
	c, err := rd.byte()
	if err != nil {
		return 0, err
	}
	switch c {
	case 253:
		return math.NaN(), nil
	case 254:
		return math.Inf(1), nil
	case 255:
		return math.Inf(-1), nil
	}
	b := make([]byte, c)
	if err := rd.full(b); err != nil {
		return 0, err
	}
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil && !isRangeErr(err) {
		return 0, rd.errorf("Invalid double value")
	}
	return v, nil
}

func loadQuicklist2(rd *reader, enc keyspace.EncodingConfig) (keyspace.Value, error) {
	n, err := rd.count()
	if err != nil {
		return nil, err
	}
	l := newLoadedList(enc)
	for i := 0; i < n; i++ {
		container, err := rd.len()
		if err != nil {
			return nil, err
		}
		if container != containerPlain && container != containerPacked {
			return nil, rd.errorf("Quicklist integrity check failed.")
		}
		b, err := rd.str()
		if err != nil {
			return nil, err
		}
		if len(b) == 0 { // rdbLoadObject fails on an empty node, unreported
			return nil, rd.errorf("Empty quicklist node")
		}
		if container == containerPlain {
			l.AppendPlainNode(b)
			continue
		}
		ents, ok := parseListpack(b)
		if !ok {
			return nil, rd.errorf("Listpack integrity check failed.")
		}
		if len(ents) == 0 {
			continue // empty listpack nodes are skipped
		}
		l.AppendNode(ents, len(b))
	}
	if l.Len() == 0 {
		return nil, errEmpty
	}
	return l, nil
}

// validIntset is intsetValidateIntegrity (deep): a known encoding, the
// length matching the blob, at least one element, elements strictly
// ascending. It returns the length.
func validIntset(b []byte) (int, bool) {
	if len(b) < 8 {
		return 0, false
	}
	w := int(binary.LittleEndian.Uint32(b))
	if w != 2 && w != 4 && w != 8 {
		return 0, false
	}
	n := uint64(binary.LittleEndian.Uint32(b[4:]))
	if n == 0 || 8+uint64(w)*n != uint64(len(b)) {
		return 0, false
	}
	var prev int64
	for i := range int(n) {
		p := b[8+i*w:]
		var v int64
		switch w {
		case 2:
			v = int64(int16(binary.LittleEndian.Uint16(p)))
		case 4:
			v = int64(int32(binary.LittleEndian.Uint32(p)))
		default:
			v = int64(binary.LittleEndian.Uint64(p))
		}
		if i > 0 && v <= prev {
			return 0, false
		}
		prev = v
	}
	return int(n), true
}

// parseListpack is lpValidateIntegrity (deep) + the entries, integers as
// their decimal text.
func parseListpack(b []byte) ([][]byte, bool) {
	if len(b) < 7 || int(binary.LittleEndian.Uint32(b)) != len(b) || b[len(b)-1] != 0xFF {
		return nil, false
	}
	count := int(binary.LittleEndian.Uint16(b[4:]))
	var ents [][]byte
	p := 6
	end := len(b) - 1
	for p < end {
		start := p
		c := b[p]
		var ent []byte
		var iv int64
		isInt := true
		need := func(n int) bool { return p+n <= end }
		switch {
		case c&0x80 == 0:
			iv = int64(c & 0x7F)
			p++
		case c&0xC0 == 0x80:
			n := int(c & 0x3F)
			if !need(1 + n) {
				return nil, false
			}
			ent, isInt = b[p+1:p+1+n], false
			p += 1 + n
		case c&0xE0 == 0xC0:
			if !need(2) {
				return nil, false
			}
			u := uint64(c&0x1F)<<8 | uint64(b[p+1])
			iv = int64(u<<51) >> 51
			p += 2
		case c&0xF0 == 0xE0:
			if !need(2) {
				return nil, false
			}
			n := int(c&0x0F)<<8 | int(b[p+1])
			if !need(2 + n) {
				return nil, false
			}
			ent, isInt = b[p+2:p+2+n], false
			p += 2 + n
		case c == 0xF0:
			if !need(5) {
				return nil, false
			}
			n := uint64(binary.LittleEndian.Uint32(b[p+1:]))
			if uint64(p)+5+n > uint64(end) {
				return nil, false
			}
			ent, isInt = b[p+5:p+5+int(n)], false
			p += 5 + int(n)
		case c == 0xF1:
			if !need(3) {
				return nil, false
			}
			iv = int64(int16(binary.LittleEndian.Uint16(b[p+1:])))
			p += 3
		case c == 0xF2:
			if !need(4) {
				return nil, false
			}
			u := uint32(b[p+1]) | uint32(b[p+2])<<8 | uint32(b[p+3])<<16
			iv = int64(int32(u<<8) >> 8)
			p += 4
		case c == 0xF3:
			if !need(5) {
				return nil, false
			}
			iv = int64(int32(binary.LittleEndian.Uint32(b[p+1:])))
			p += 5
		case c == 0xF4:
			if !need(9) {
				return nil, false
			}
			iv = int64(binary.LittleEndian.Uint64(b[p+1:]))
			p += 9
		default:
			return nil, false
		}
		// The backlen must encode the entry's size.
		sz := p - start
		bl := lpAppendBacklen(nil, sz)
		if p+len(bl) > end || string(b[p:p+len(bl)]) != string(bl) {
			return nil, false
		}
		p += len(bl)
		if isInt {
			ent = strconv.AppendInt(nil, iv, 10)
		} else {
			ent = append([]byte(nil), ent...)
		}
		ents = append(ents, ent)
	}
	if count != lpHdrNumEleUnknown && count != len(ents) {
		return nil, false
	}
	return ents, true
}

// newLoadedList is the quicklist rdbLoadObject creates for a list:
// quicklistSetOptions with list-max-listpack-size and list-compress-depth.
func newLoadedList(enc keyspace.EncodingConfig) *keyspace.List {
	l := keyspace.NewList(enc.ListMaxListpackSize)
	l.SetCompressDepth(enc.ListCompressDepth)
	return l
}
