package server

import (
	"encoding/binary"
	"math"
	"strconv"
	"strings"

	"github.com/vigil-kv/vigil/configs"
	"github.com/vigil-kv/vigil/server/hll"
	"github.com/vigil-kv/vigil/server/keyspace"
)

// HyperLogLog commands, as Redis 7.0.15's hyperloglog.c: PFADD, PFCOUNT,
// PFMERGE, PFDEBUG and PFSELFTEST. An HLL is a string value in Redis's
// exact representation (package hll), so DUMP/RESTORE, RDB and
// replication carry it unchanged. A command that changes it works on the
// bytes DB.Mutable returns (dbUnshareStringValue), leaving the string
// raw-encoded as Redis does, even when nothing changes.

// Error replies of hyperloglog.c.
const (
	ErrHLLWrongType = "WRONGTYPE Key is not a valid HyperLogLog string value."
	ErrHLLInvalid   = "INVALIDOBJ Corrupted HLL object detected"
	ErrHLLNoKey     = "ERR The specified key does not exist"
	ErrHLLNotSparse = "ERR HLL encoding is not sparse"
)

func init() {
	acl := func(a ...string) []string { return a }
	register(
		&Command{Name: "pfadd", Arity: -2, Flags: FlagWrite | FlagDenyOOM | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, ACL: acl("write", "hyperloglog", "fast"), Handler: cmdPFAdd},
		&Command{Name: "pfcount", Arity: -2, Flags: FlagReadonly | FlagMayReplicate, FirstKey: 1, LastKey: -1, Step: 1, ACL: acl("read", "hyperloglog", "slow"), Handler: cmdPFCount},
		&Command{Name: "pfmerge", Arity: -2, Flags: FlagWrite | FlagDenyOOM, FirstKey: 1, LastKey: -1, Step: 1, ACL: acl("write", "hyperloglog", "slow"), Handler: cmdPFMerge},
		&Command{Name: "pfdebug", Arity: 3, Flags: FlagWrite | FlagDenyOOM | FlagAdmin, FirstKey: 2, LastKey: 2, Step: 1, ACL: acl("write", "hyperloglog", "admin", "slow", "dangerous"), Handler: cmdPFDebug},
		&Command{Name: "pfselftest", Arity: 1, Flags: FlagAdmin, ACL: acl("hyperloglog", "admin", "slow", "dangerous"), Handler: cmdPFSelfTest},
	)
}

// hllCheck is isHLLObjectOrReply: e's value is a string holding a valid
// HLL header, whose bytes it returns (it replies and returns false
// otherwise).
func (c *Client) hllCheck(e *keyspace.Entry) ([]byte, bool) {
	s, ok := valueAs[*keyspace.String](c, e)
	if !ok {
		return nil, false
	}
	b := s.Bytes()
	if !hll.Valid(b) {
		c.w.Error(ErrHLLWrongType)
		return nil, false
	}
	return b, true
}

// hllUnshare is dbUnshareStringValue: the stored string, owned by this
// writer and raw-encoded, and its bytes. The first time an HLL command
// writes a string, its bytes get the sds allocation Redis would have
// (keyspace.StringSized): a new sds for an embstr, the argument's sds
// (trimmed by trimStringObjectIfNeeded) for a raw string SET wrote, one
// greedy growth for a string changed in place.
func (c *Client) hllUnshare(key []byte, e *keyspace.Entry) (*keyspace.String, []byte) {
	s := c.selectedDB().Mutable(key, e).(*keyspace.String)
	b := s.Bytes()
	if s.Kind() != keyspace.StringSized {
		n := uint64(len(b))
		alloc := keyspace.SdsNewAlloc(n)
		switch {
		case s.Kind() == keyspace.StringRaw:
			alloc = keyspace.SdsMakeRoomFor(0, 0, n)
		case s.Kind() == keyspace.StringAuto && s.Encoding() == keyspace.EncodingRaw && alloc-n > n/10:
			alloc = n // trimStringObjectIfNeeded of the SET argument
		}
		nb := make([]byte, len(b), alloc+1)
		copy(nb, b)
		b = nb
	}
	s.Set(b, keyspace.StringSized)
	return s, b
}

func (c *Client) hllSparseMax() int64 { return c.srv.cfg.HLLSparseMaxBytes }

// cmdPFAdd is pfaddCommand: 1 when a register changed or the key was
// created. Elements added before a corrupt value is detected stay added,
// without the notification or the dirty count, as in Redis.
func cmdPFAdd(c *Client, args [][]byte) {
	key := args[1]
	e := c.lookupKeyWrite(key)
	var s *keyspace.String
	var b []byte
	updated := 0
	if e == nil {
		b = hll.New()
		s = keyspace.NewString(b, keyspace.StringSized)
		c.selectedDB().Set(key, s, c.srv.nowMs)
		c.notify(configs.NotifyNew, "new", key)
		updated++
	} else {
		if _, ok := c.hllCheck(e); !ok {
			return
		}
		s, b = c.hllUnshare(key, e)
	}
	max := c.hllSparseMax()
	for _, ele := range args[2:] {
		var r int
		b, r = hll.Add(b, ele, max)
		s.Set(b, keyspace.StringSized)
		switch r {
		case 1:
			updated++
		case -1:
			c.w.Error(ErrHLLInvalid)
			return
		}
	}
	if updated > 0 {
		hll.Invalidate(b)
		c.touch(key)
		c.notify(configs.NotifyString, "pfadd", key)
		c.srv.ks.Dirty += int64(updated)
		c.w.Int(1)
		return
	}
	c.w.Int(0)
}

// cmdPFCount is pfcountCommand. With one key it answers the cached
// cardinality, or computes it and writes it back into the value, which is
// then a write (signalModifiedKey, server.dirty++: Redis propagates this
// PFCOUNT). With several keys it counts their union without writing.
func cmdPFCount(c *Client, args [][]byte) {
	if len(args) > 2 {
		var max [hll.Registers]uint8
		for _, key := range args[1:] {
			e := c.lookupKeyRead(key)
			if e == nil {
				continue
			}
			b, ok := c.hllCheck(e)
			if !ok {
				return
			}
			if !hll.Merge(&max, b) {
				c.w.Error(ErrHLLInvalid)
				return
			}
		}
		c.w.Int(int64(hll.CountRaw(&max)))
		return
	}
	key := args[1]
	e := c.lookupKeyRead(key)
	if e == nil {
		c.w.Int(0)
		return
	}
	if _, ok := c.hllCheck(e); !ok {
		return
	}
	_, b := c.hllUnshare(key, e)
	card, valid := hll.CachedCard(b)
	if !valid {
		var invalid bool
		card, invalid = hll.Count(b)
		if invalid {
			c.w.Error(ErrHLLInvalid)
			return
		}
		hll.SetCard(b, card)
		c.touch(key)
		c.srv.ks.Dirty++
	}
	c.w.Int(int64(card))
}

// cmdPFMerge is pfmergeCommand: the union of the sources (the destination
// included) written into the destination, dense if any source is dense.
// Redis notifies "pfadd" for it.
func cmdPFMerge(c *Client, args [][]byte) {
	var max [hll.Registers]uint8
	useDense := false
	for _, key := range args[1:] {
		e := c.lookupKeyRead(key)
		if e == nil {
			continue
		}
		b, ok := c.hllCheck(e)
		if !ok {
			return
		}
		if hll.Encoding(b) == hll.EncDense {
			useDense = true
		}
		if !hll.Merge(&max, b) {
			c.w.Error(ErrHLLInvalid)
			return
		}
	}
	key := args[1]
	e := c.lookupKeyWrite(key)
	var s *keyspace.String
	var b []byte
	if e == nil {
		b = hll.New()
		s = keyspace.NewString(b, keyspace.StringSized)
		c.selectedDB().Set(key, s, c.srv.nowMs)
		c.notify(configs.NotifyNew, "new", key)
	} else {
		s, b = c.hllUnshare(key, e)
	}
	if useDense {
		d, ok := hll.ToDense(b)
		if !ok {
			c.w.Error(ErrHLLInvalid)
			return
		}
		b = d
		s.Set(b, keyspace.StringSized)
	}
	sparseMax := c.hllSparseMax()
	for i, v := range max {
		if v != 0 {
			b, _ = hll.Set(b, i, v, sparseMax)
		}
	}
	hll.Invalidate(b)
	s.Set(b, keyspace.StringSized)
	c.touch(key)
	c.notify(configs.NotifyString, "pfadd", key)
	c.srv.ks.Dirty++
	c.w.OK()
}

// cmdPFDebug is pfdebugCommand: GETREG, DECODE, ENCODING and TODENSE on an
// existing HLL (converting to dense counts as a write).
func cmdPFDebug(c *Client, args [][]byte) {
	key := args[2]
	e := c.lookupKeyWrite(key)
	if e == nil {
		c.w.Error(ErrHLLNoKey)
		return
	}
	if _, ok := c.hllCheck(e); !ok {
		return
	}
	s, b := c.hllUnshare(key, e)
	toDense := func() bool {
		d, ok := hll.ToDense(b)
		if !ok {
			c.w.Error(ErrHLLInvalid)
			return false
		}
		b = d
		s.Set(b, keyspace.StringSized)
		c.srv.ks.Dirty++
		return true
	}
	sub := cstr(args[1])
	switch strings.ToLower(string(sub)) {
	case "getreg":
		if hll.Encoding(b) == hll.EncSparse && !toDense() {
			return
		}
		c.w.ArrayLen(hll.Registers)
		for i := 0; i < hll.Registers; i++ {
			c.w.Int(int64(hll.DenseRegister(b, i)))
		}
	case "decode":
		if hll.Encoding(b) != hll.EncSparse {
			c.w.Error(ErrHLLNotSparse)
			return
		}
		c.w.Bulk(hll.Decode(b))
	case "encoding":
		if hll.Encoding(b) == hll.EncDense {
			c.w.Simple("dense")
		} else {
			c.w.Simple("sparse")
		}
	case "todense":
		if hll.Encoding(b) != hll.EncSparse {
			c.w.Int(0)
			return
		}
		if toDense() {
			c.w.Int(1)
		}
	default:
		c.w.Error("ERR Unknown PFDEBUG subcommand '" + string(sub) + "'")
	}
}

// cmdPFSelfTest is pfselftestCommand: the dense register accessors keep
// random values, and a dense and a sparse HLL fed the same 10 million
// elements agree with each other and stay within six standard errors of
// the true cardinality at every power of ten.
func cmdPFSelfTest(c *Client, _ [][]byte) {
	rng := c.srv.rng
	dense := make([]byte, hll.DenseSize)
	copy(dense, "HYLL")
	var bytecounters [hll.Registers]uint8
	for j := 0; j < 1000; j++ {
		for i := range bytecounters {
			r := uint8(rng.Uint32() & hll.RegisterMax)
			bytecounters[i] = r
			hll.SetRegister(dense, i, r)
		}
		for i, want := range bytecounters {
			if got := hll.DenseRegister(dense, i); got != want {
				c.w.Error("ERR TESTFAILED Register " + strconv.Itoa(i) + " should be " + strconv.Itoa(int(want)) + " but is " + strconv.Itoa(int(got)))
				return
			}
		}
	}
	clear(dense[hll.HdrSize:])
	sparse := hll.New()
	sparseMax := c.hllSparseMax()
	relerr := 1.04 / math.Sqrt(hll.Registers)
	checkpoint := int64(1)
	seed := rng.Uint64()
	var ele [8]byte
	for j := int64(1); j <= 10000000; j++ {
		binary.LittleEndian.PutUint64(ele[:], uint64(j)^seed)
		dense, _ = hll.Add(dense, ele[:], sparseMax)
		sparse, _ = hll.Add(sparse, ele[:], sparseMax)
		if j != checkpoint {
			continue
		}
		if j < sparseMax/2 && hll.Encoding(sparse) != hll.EncSparse {
			c.w.Error("ERR TESTFAILED sparse encoding not used")
			return
		}
		dc, _ := hll.Count(dense)
		if sc, _ := hll.Count(sparse); dc != sc {
			c.w.Error("ERR TESTFAILED dense/sparse disagree")
			return
		}
		abserr := checkpoint - int64(dc)
		maxerr := int64(math.Ceil(relerr * 6 * float64(checkpoint)))
		if j == 10 {
			maxerr = 1
		}
		if abserr < 0 {
			abserr = -abserr
		}
		if abserr > maxerr {
			c.w.Error("ERR TESTFAILED Too big error. card:" + strconv.FormatInt(checkpoint, 10) + " abserr:" + strconv.FormatInt(abserr, 10))
			return
		}
		checkpoint *= 10
	}
	c.w.OK()
}
