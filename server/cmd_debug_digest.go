package server

import (
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"math"
	"strconv"

	"github.com/vigil-kv/vigil/server/keyspace"
)

// DEBUG DIGEST and DEBUG DIGEST-VALUE, as debug.c (Redis 7.0):
// computeDatasetDigest, xorObjectDigest, xorDigest and mixDigest, so that
// a dataset has the same digest in vigil-server and in redis-server (how
// operators and Redis's own tests compare a replica with its master).
//
// Unordered aggregates (the keys of a db, set members, hash fields, sorted
// set elements) are xored together, so their iteration order does not
// matter; lists and streams are mixed in order.

// digest is a 20-byte SHA1 accumulator.
type digest [20]byte

// xor is xorDigest: d ^= SHA1(b).
func (d *digest) xor(b []byte) {
	h := sha1.Sum(b)
	for i := range d {
		d[i] ^= h[i]
	}
}

// mix is mixDigest: d = SHA1(d ^ SHA1(b)).
func (d *digest) mix(b []byte) {
	d.xor(b)
	*d = sha1.Sum(d[:])
}

func (d *digest) mixString(s string) { d.mix([]byte(s)) }

func (d *digest) hex() string { return hex.EncodeToString(d[:]) }

// appendScore17 is the "%.17g" xorObjectDigest formats a score with (inf
// and -inf as glibc prints them; a sorted set never holds NaN).
func appendScore17(b []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(b, "inf"...)
	case math.IsInf(f, -1):
		return append(b, "-inf"...)
	}
	return strconv.AppendFloat(b, f, 'g', 17, 64)
}

// streamEntryWalker is what a stream value offers DEBUG DIGEST: its
// entries in ID order, each with its field/value pairs.
type streamEntryWalker interface {
	WalkEntries(fn func(ms, seq uint64, fieldsValues [][]byte)) error
}

// xorObjectDigest mixes the type, the value and the expire flag of e into
// d, as debug.c's xorObjectDigest.
func xorObjectDigest(d *digest, e *keyspace.Entry) {
	var tmp [128]byte
	v := e.Value()
	binary.BigEndian.PutUint32(tmp[:4], uint32(v.Type())) // htonl(o->type)
	d.mix(tmp[:4])
	switch v := v.(type) {
	case *keyspace.String:
		d.mix(v.Bytes())
	case *keyspace.List:
		for i, n := 0, v.Len(); i < n; i++ {
			d.mix(v.Index(i))
		}
	case *keyspace.Set:
		v.Range(func(m keyspace.Member) bool {
			d.xor(m.AppendTo(tmp[:0]))
			return true
		})
	case *keyspace.ZSet:
		v.ForEach(func(member string, score float64) bool {
			var ed digest
			ed.mixString(member)
			ed.mix(appendScore17(tmp[:0], score))
			d.xor(ed[:])
			return true
		})
	case *keyspace.Hash:
		v.Range(func(field, value string) bool {
			var ed digest
			ed.mixString(field)
			ed.mixString(value)
			d.xor(ed[:])
			return true
		})
	case streamEntryWalker:
		_ = v.WalkEntries(func(ms, seq uint64, fv [][]byte) { mixStreamEntry(d, ms, seq, fv) })
	}
	if e.HasExpire() {
		d.xor([]byte("!!expire!!"))
	}
}

// mixStreamEntry mixes one stream entry: its ID as "ms.seq", then each
// field and value.
func mixStreamEntry(d *digest, ms, seq uint64, fv [][]byte) {
	var tmp [48]byte
	id := strconv.AppendUint(tmp[:0], ms, 10)
	id = append(id, '.')
	id = strconv.AppendUint(id, seq, 10)
	d.mix(id)
	for _, b := range fv {
		d.mix(b)
	}
}

// datasetDigest is computeDatasetDigest: for each non-empty db, its
// number is mixed into the result, then the digest of every key (its name
// mixed with xorObjectDigest) is xored in. Logically expired keys that are
// still stored count, as in Redis (a dict iterator, no lookup).
func (s *Server) datasetDigest() digest {
	var final digest
	for j, db := range s.ks.DBs {
		if db.Len() == 0 {
			continue
		}
		var aux [4]byte
		binary.BigEndian.PutUint32(aux[:], uint32(j))
		final.mix(aux[:])
		db.ForEach(func(key string, e *keyspace.Entry) bool {
			var d digest
			d.mixString(key)
			xorObjectDigest(&d, e)
			final.xor(d[:])
			return true
		})
	}
	return final
}

// debugDigest is DEBUG DIGEST: the dataset's digest in hex (40 zeros for
// an empty dataset).
func debugDigest(c *Client) {
	d := c.srv.datasetDigest()
	c.w.Simple(d.hex())
}

// debugDigestValue is DEBUG DIGEST-VALUE key ...: one status reply per key,
// the digest of its value (type, content, expire flag) without its name;
// 40 zeros for a missing key. Like Redis it looks the key up without
// expiring it.
func debugDigestValue(c *Client, keys [][]byte) {
	c.w.ArrayLen(len(keys))
	db := c.selectedDB()
	for _, k := range keys {
		var d digest
		if e := db.Peek(k); e != nil {
			xorObjectDigest(&d, e)
		}
		c.w.Simple(d.hex())
	}
}
