package server

import (
	"math"
	"math/big"
	"slices"
	"strconv"

	"github.com/vigil-kv/vigil/configs"
	"github.com/vigil-kv/vigil/server/keyspace"
)

// String commands, as Redis 7.0's t_string.c. Values are *keyspace.String
// owned by the keyspace; arguments alias the read buffer and are copied
// before storing. A write that changes a stored string in place gets it from
// DB.Mutable, which copies it first when a running snapshot holds it.

func init() {
	w, r := FlagWrite, FlagReadonly
	d, f := FlagDenyOOM, FlagFast
	rs := func(acl ...string) []string { return acl }
	register(
		&Command{Name: "get", Arity: 2, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: rs("read", "string", "fast"), Handler: cmdGet},
		&Command{Name: "set", Arity: -3, Flags: w | d, FirstKey: 1, LastKey: 1, Step: 1, ACL: rs("write", "string", "slow"), Handler: cmdSet},
		&Command{Name: "setnx", Arity: 3, Flags: w | d | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: rs("write", "string", "fast"), Handler: cmdSetNX},
		&Command{Name: "setex", Arity: 4, Flags: w | d, FirstKey: 1, LastKey: 1, Step: 1, ACL: rs("write", "string", "slow"), Handler: cmdSetEX},
		&Command{Name: "psetex", Arity: 4, Flags: w | d, FirstKey: 1, LastKey: 1, Step: 1, ACL: rs("write", "string", "slow"), Handler: cmdPSetEX},
		&Command{Name: "getset", Arity: 3, Flags: w | d | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: rs("write", "string", "fast"), Handler: cmdGetSet},
		&Command{Name: "getdel", Arity: 2, Flags: w | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: rs("write", "string", "fast"), Handler: cmdGetDel},
		&Command{Name: "getex", Arity: -2, Flags: w | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: rs("write", "string", "fast"), Handler: cmdGetEx},
		&Command{Name: "mget", Arity: -2, Flags: r | f, FirstKey: 1, LastKey: -1, Step: 1, ACL: rs("read", "string", "fast"), Handler: cmdMGet},
		&Command{Name: "mset", Arity: -3, Flags: w | d, FirstKey: 1, LastKey: -1, Step: 2, ACL: rs("write", "string", "slow"), Handler: cmdMSet},
		&Command{Name: "msetnx", Arity: -3, Flags: w | d, FirstKey: 1, LastKey: -1, Step: 2, ACL: rs("write", "string", "slow"), Handler: cmdMSetNX},
		&Command{Name: "append", Arity: 3, Flags: w | d | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: rs("write", "string", "fast"), Handler: cmdAppend},
		&Command{Name: "strlen", Arity: 2, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: rs("read", "string", "fast"), Handler: cmdStrlen},
		&Command{Name: "getrange", Arity: 4, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, ACL: rs("read", "string", "slow"), Handler: cmdGetRange},
		&Command{Name: "substr", Arity: 4, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, ACL: rs("read", "string", "slow"), Handler: cmdGetRange},
		&Command{Name: "setrange", Arity: 4, Flags: w | d, FirstKey: 1, LastKey: 1, Step: 1, ACL: rs("write", "string", "slow"), Handler: cmdSetRange},
		&Command{Name: "incr", Arity: 2, Flags: w | d | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: rs("write", "string", "fast"), Handler: cmdIncr},
		&Command{Name: "decr", Arity: 2, Flags: w | d | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: rs("write", "string", "fast"), Handler: cmdDecr},
		&Command{Name: "incrby", Arity: 3, Flags: w | d | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: rs("write", "string", "fast"), Handler: cmdIncrBy},
		&Command{Name: "decrby", Arity: 3, Flags: w | d | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: rs("write", "string", "fast"), Handler: cmdDecrBy},
		&Command{Name: "incrbyfloat", Arity: 3, Flags: w | d | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: rs("write", "string", "fast"), Handler: cmdIncrByFloat},
		&Command{Name: "lcs", Arity: -3, Flags: r, FirstKey: 1, LastKey: 2, Step: 1, ACL: rs("read", "string", "slow"), Handler: cmdLCS},
	)
}

// --- helpers ---------------------------------------------------------------------

// checkStringLength is t_string.c's: the master link is exempt.
func (c *Client) checkStringLength(size int64) bool {
	if c.kind() != kindMaster && size > c.srv.protoMaxBulk.Load() {
		c.w.Error(ErrStringTooLong)
		return false
	}
	return true
}

// setString stores val (an argument: it is copied) at key, as setKey after
// lookupKeyWrite. With keepTTL the key's expire is kept, else removed.
func (c *Client) setString(key, val []byte, keepTTL bool) {
	e := c.storeString(c.lookupKeyWrite(key), key, val, keepTTL)
	if c.multi != nil {
		c.argvStored(e)
	}
}

// storeString is setString for a caller that already looked the key up
// (e is lookupKeyWrite's result). When the key holds a string that no
// running snapshot needs (DB.InPlace), its bytes are overwritten in place
// at the same length (DB.OverwriteString), so overwriting a value costs no
// allocation (the hot path of SET, MSET and INCR). Replies copy stored
// bytes, so nothing else holds them.
func (c *Client) storeString(e *keyspace.Entry, key, val []byte, keepTTL bool) *keyspace.Entry {
	db := c.selectedDB()
	now := c.srv.nowMs
	c.srv.ks.Dirty++
	c.touch(key)
	if e == nil {
		c.notify(configs.NotifyNew, "new", key) // dbAdd
	}
	if e != nil && db.InPlace(e) {
		if _, ok := e.StringValue(); ok {
			db.OverwriteString(key, e, val, keyspace.StringAuto)
			e.ClearArgvExec()
			if !keepTTL && e.HasExpire() {
				db.Persist(key)
			}
			return e
		}
	}
	return db.SetString(key, val, keyspace.StringAuto, now, keepTTL)
}

// Option flags of SET and GETEX (t_string.c OBJ_*).
const (
	setNX = 1 << iota
	setXX
	setEX
	setPX
	setKeepTTL
	setGet
	setEXAT
	setPXAT
	setPersist
)

// parseStringOpts is parseExtendedStringArgumentsOrReply: it returns the
// flags and the index of the expire argument (0 if none). isSet selects the
// SET options (NX, XX, GET, KEEPTTL) over GETEX's (PERSIST).
func parseStringOpts(args [][]byte, isSet bool) (flags, expIdx int, ok bool) {
	j := 2
	if isSet {
		j = 3
	}
	for ; j < len(args); j++ {
		opt := args[j]
		next := j < len(args)-1
		switch {
		case isSet && eqFold(opt, "nx") && flags&setXX == 0:
			flags |= setNX
		case isSet && eqFold(opt, "xx") && flags&setNX == 0:
			flags |= setXX
		case isSet && eqFold(opt, "get"):
			flags |= setGet
		case isSet && eqFold(opt, "keepttl") && flags&(setPersist|setEX|setEXAT|setPX|setPXAT) == 0:
			flags |= setKeepTTL
		case !isSet && eqFold(opt, "persist") && flags&(setEX|setEXAT|setPX|setPXAT|setKeepTTL) == 0:
			flags |= setPersist
		case eqFold(opt, "ex") && flags&(setKeepTTL|setPersist|setEXAT|setPX|setPXAT) == 0 && next:
			flags |= setEX
			j++
			expIdx = j
		case eqFold(opt, "px") && flags&(setKeepTTL|setPersist|setEX|setEXAT|setPXAT) == 0 && next:
			flags |= setPX
			j++
			expIdx = j
		case eqFold(opt, "exat") && flags&(setKeepTTL|setPersist|setEX|setPX|setPXAT) == 0 && next:
			flags |= setEXAT
			j++
			expIdx = j
		case eqFold(opt, "pxat") && flags&(setKeepTTL|setPersist|setEX|setEXAT|setPX) == 0 && next:
			flags |= setPXAT
			j++
			expIdx = j
		default:
			return 0, 0, false
		}
	}
	return flags, expIdx, true
}

// expireMillis is getExpireMillisecondsOrReply: the absolute unix-ms time
// of an EX/PX/EXAT/PXAT argument, or a reply of the error.
func (c *Client) expireMillis(arg []byte, flags int, cmd string) (int64, bool) {
	ms, ok := parseInt(arg)
	if !ok {
		c.w.Error(ErrNotInteger)
		return 0, false
	}
	seconds := flags&(setEX|setEXAT) != 0
	if ms <= 0 || (seconds && ms > math.MaxInt64/1000) {
		c.w.Error(errInvalidExpire(cmd))
		return 0, false
	}
	if seconds {
		ms *= 1000
	}
	if flags&(setEX|setPX) != 0 {
		if ms > math.MaxInt64-c.srv.nowMs {
			c.w.Error(errInvalidExpire(cmd))
			return 0, false
		}
		ms += c.srv.nowMs
	}
	return ms, true
}

// getGeneric is getGenericCommand: it replies with the value or null and
// reports false after replying WRONGTYPE.
func (c *Client) getGeneric(key []byte) bool {
	s, ok := lookupRead[*keyspace.String](c, key)
	if !ok {
		return false
	}
	if s == nil {
		c.w.Null()
		return true
	}
	c.w.Bulk(s.Bytes())
	return true
}

// --- GET / SET family ---------------------------------------------------------

func cmdGet(c *Client, args [][]byte) { c.getGeneric(args[1]) }

// setGeneric is setGenericCommand. expIdx is the argument holding the
// expire (0: none); intReplies selects SETNX's :1/:0 over +OK/null.
func (c *Client) setGeneric(args [][]byte, flags, expIdx int, cmd string, intReplies bool) {
	key, val := args[1], args[2]
	if cmd == "setex" || cmd == "psetex" {
		val = args[3]
	}
	var when int64
	if expIdx != 0 {
		var ok bool
		if when, ok = c.expireMillis(args[expIdx], flags, cmd); !ok {
			return
		}
	}
	if flags&setGet != 0 && !c.getGeneric(key) {
		return
	}
	e := c.lookupKeyWrite(key)
	found := e != nil
	if (flags&setNX != 0 && found) || (flags&setXX != 0 && !found) {
		if flags&setGet == 0 {
			if intReplies {
				c.w.Int(0)
			} else {
				c.w.Null()
			}
		}
		return
	}
	c.argvStored(c.storeString(e, key, val, flags&setKeepTTL != 0))
	c.notify(configs.NotifyString, "set", key)
	if expIdx != 0 {
		c.selectedDB().SetExpire(key, when)
		c.rememberReplicaExpire(key)
		c.notify(configs.NotifyGeneric, "expire", key)
	}
	if c.srv.propagating() {
		switch {
		case expIdx != 0:
			// Propagated as SET key value PXAT <abs-ms> (setGenericCommand;
			// 7.0.15 rewrites PXAT too, dropping NX/XX/GET).
			c.rewriteArgv(wordSet, key, val, wordPXAT, msArg(when))
		case flags&setGet != 0 && expIdx == 0:
			// Without the GET arguments, which may be repeated.
			argv := make([][]byte, 0, len(args))
			for j, a := range args {
				if j < 3 || !eqFold(a, "get") {
					argv = append(argv, a)
				}
			}
			c.rewriteArgv(argv...)
		}
	}
	if flags&setGet == 0 {
		if intReplies {
			c.w.Int(1)
		} else {
			c.w.OK()
		}
	}
}

func cmdSet(c *Client, args [][]byte) {
	if len(args) == 3 { // plain SET: the hot path
		c.setString(args[1], args[2], false)
		c.notify(configs.NotifyString, "set", args[1])
		c.w.OK()
		return
	}
	flags, expIdx, ok := parseStringOpts(args, true)
	if !ok {
		c.w.Error(ErrSyntax)
		return
	}
	c.setGeneric(args, flags, expIdx, "set", false)
}

func cmdSetNX(c *Client, args [][]byte) { c.setGeneric(args, setNX, 0, "setnx", true) }

func cmdSetEX(c *Client, args [][]byte) { c.setGeneric(args, setEX, 2, "setex", false) }

func cmdPSetEX(c *Client, args [][]byte) { c.setGeneric(args, setPX, 2, "psetex", false) }

func cmdGetSet(c *Client, args [][]byte) {
	if !c.getGeneric(args[1]) {
		return
	}
	c.setString(args[1], args[2], false)
	c.notify(configs.NotifyString, "set", args[1])
	if c.srv.propagating() {
		c.rewriteArgv(wordSet, args[1], args[2]) // getsetCommand: as SET
	}
}

func cmdGetDel(c *Client, args [][]byte) {
	if !c.getGeneric(args[1]) {
		return
	}
	if c.selectedDB().SyncDelete(args[1]) { // a string: never freed lazily
		c.srv.ks.Dirty++
		c.touch(args[1])
		c.notify(configs.NotifyGeneric, "del", args[1])
		if c.srv.propagating() { // as DEL, or UNLINK with lazyfree-lazy-user-del
			c.rewriteArgv(c.srv.delWord(c.srv.cfg.LazyfreeLazyUserDel), args[1])
		}
	}
}

// cmdGetEx is getexCommand: the value is replied before the TTL changes; an
// EXAT/PXAT in the past deletes the key.
func cmdGetEx(c *Client, args [][]byte) {
	flags, expIdx, ok := parseStringOpts(args, false)
	if !ok {
		c.w.Error(ErrSyntax)
		return
	}
	key := args[1]
	s, ok := lookupRead[*keyspace.String](c, key)
	if !ok {
		return
	}
	if s == nil {
		c.w.Null()
		return
	}
	b := s.Bytes()
	var when int64
	if expIdx != 0 {
		if when, ok = c.expireMillis(args[expIdx], flags, "getex"); !ok {
			return
		}
	}
	c.w.Bulk(b)
	db := c.selectedDB()
	switch {
	case flags&(setEXAT|setPXAT) != 0 && c.alreadyExpired(when):
		db.SyncDelete(key) // a string: never freed lazily
		c.srv.ks.Dirty++
		c.touch(key)
		c.notify(configs.NotifyGeneric, "del", key)
		if c.srv.propagating() {
			c.rewriteArgv(c.srv.delWord(c.srv.cfg.LazyfreeLazyExpire), key)
		}
	case expIdx != 0:
		db.SetExpire(key, when)
		c.rememberReplicaExpire(key)
		c.srv.ks.Dirty++
		c.touch(key)
		c.notify(configs.NotifyGeneric, "expire", key)
		if c.srv.propagating() {
			c.rewriteArgv(wordPExpAt, key, msArg(when))
		}
	case flags&setPersist != 0:
		if db.Persist(key) {
			c.srv.ks.Dirty++
			c.touch(key)
			c.notify(configs.NotifyGeneric, "persist", key)
			if c.srv.propagating() {
				c.rewriteArgv(wordPersist, key)
			}
		}
	}
}

func cmdMGet(c *Client, args [][]byte) {
	c.w.ArrayLen(len(args) - 1)
	for _, k := range args[1:] {
		e := c.lookupKeyRead(k)
		if e == nil {
			c.w.Null()
			continue
		}
		if s, ok := e.StringValue(); ok {
			c.w.Bulk(s.Bytes())
		} else {
			c.w.Null()
		}
	}
}

func cmdMSet(c *Client, args [][]byte) {
	if len(args)%2 == 0 {
		c.w.Error(errWrongArgs("mset"))
		return
	}
	for j := 1; j < len(args); j += 2 {
		c.setString(args[j], args[j+1], false)
		c.notify(configs.NotifyString, "set", args[j])
	}
	c.w.OK()
}

func cmdMSetNX(c *Client, args [][]byte) {
	if len(args)%2 == 0 {
		c.w.Error(errWrongArgs("msetnx"))
		return
	}
	for j := 1; j < len(args); j += 2 {
		if c.lookupKeyWrite(args[j]) != nil {
			c.w.Int(0)
			return
		}
	}
	for j := 1; j < len(args); j += 2 {
		c.setString(args[j], args[j+1], false)
		c.notify(configs.NotifyString, "set", args[j])
	}
	c.w.Int(1)
}

// --- APPEND, STRLEN, GETRANGE, SETRANGE ---------------------------------------

func cmdAppend(c *Client, args [][]byte) {
	key, arg := args[1], args[2]
	old, e, ok := lookupWrite[*keyspace.String](c, key)
	if !ok {
		return
	}
	if e == nil {
		c.argvStored(c.selectedDB().SetString(key, arg, keyspace.StringAuto, c.srv.nowMs, false))
		c.srv.ks.Dirty++
		c.touch(key)
		c.notify(configs.NotifyNew, "new", key)
		c.notify(configs.NotifyString, "append", key)
		c.w.Int(int64(len(arg)))
		return
	}
	if !c.checkStringLength(int64(len(old.Bytes())) + int64(len(arg))) {
		return
	}
	// In place, reusing the spare capacity (sdscatlen's greedy growth),
	// unless a running snapshot holds the value (Mutable copies it).
	s := c.selectedDB().Mutable(key, e).(*keyspace.String)
	nv := append(s.Bytes(), arg...)
	s.Set(nv, keyspace.StringRaw)
	e.ClearArgvExec()
	c.srv.ks.Dirty++
	c.touch(key)
	c.notify(configs.NotifyString, "append", key)
	c.w.Int(int64(len(nv)))
}

func cmdStrlen(c *Client, args [][]byte) {
	s, ok := lookupRead[*keyspace.String](c, args[1])
	if !ok {
		return
	}
	if s == nil {
		c.w.Int(0)
		return
	}
	c.w.Int(int64(len(s.Bytes())))
}

// cmdGetRange is getrangeCommand, including Redis 7.0's clamping of a
// negative end to 0 (GETRANGE k 0 -100 returns the first byte).
func cmdGetRange(c *Client, args [][]byte) {
	start, ok1 := parseInt(args[2])
	end, ok2 := parseInt(args[3])
	if !ok1 || !ok2 {
		c.w.Error(ErrNotInteger)
		return
	}
	v, ok := lookupRead[*keyspace.String](c, args[1])
	if !ok {
		return
	}
	if v == nil {
		c.w.BulkString("")
		return
	}
	s := v.Bytes()
	n := int64(len(s))
	if start < 0 && end < 0 && start > end {
		c.w.BulkString("")
		return
	}
	if start < 0 {
		start += n
	}
	if end < 0 {
		end += n
	}
	if start < 0 {
		start = 0
	}
	if end < 0 {
		end = 0
	}
	if end >= n {
		end = n - 1
	}
	if start > end || n == 0 {
		c.w.BulkString("")
		return
	}
	c.w.Bulk(s[start : end+1])
}

func cmdSetRange(c *Client, args [][]byte) {
	key, val := args[1], args[3]
	offset, ok := parseInt(args[2])
	if !ok {
		c.w.Error(ErrNotInteger)
		return
	}
	if offset < 0 {
		c.w.Error(ErrOffsetRange)
		return
	}
	sv, e, ok := lookupWrite[*keyspace.String](c, key)
	if !ok {
		return
	}
	var old []byte
	if e == nil {
		if len(val) == 0 {
			c.w.Int(0)
			return
		}
	} else {
		old = sv.Bytes()
		if len(val) == 0 {
			c.w.Int(int64(len(old)))
			return
		}
	}
	if offset > math.MaxInt64-int64(len(val)) { // the sum would overflow
		c.w.Error(ErrStringTooLong)
		return
	}
	if !c.checkStringLength(offset + int64(len(val))) {
		return
	}
	size := max(int64(len(old)), offset+int64(len(val)))
	if e == nil {
		// createObject(sdsnewlen(NULL, offset+len)): an sds of exactly
		// that length (alloc = cap-1), not a greedy growth.
		nv := make([]byte, size, size+1)
		copy(nv[offset:], val)
		c.selectedDB().Set(key, keyspace.NewString(nv, keyspace.StringSized), c.srv.nowMs)
		c.notify(configs.NotifyNew, "new", key)
	} else {
		// In place, as setrangeCommand's sdsgrowzero + memcpy: O(len(val))
		// unless the string grows past its capacity (amortised by
		// append's growth), not a copy of the whole value per write.
		// Mutable copies it first if a running snapshot holds it.
		s := c.selectedDB().Mutable(key, e).(*keyspace.String)
		nv := s.Bytes()
		kind := keyspace.StringRaw
		if n := len(nv); int64(n) < size {
			nv = slices.Grow(nv, int(size)-n)[:size]
			clear(nv[n:])
		} else if s.Kind() == keyspace.StringSized {
			kind = keyspace.StringSized // sdsgrowzero had no need to grow it
		}
		copy(nv[offset:], val)
		s.Set(nv, kind)
		e.ClearArgvExec()
	}
	c.srv.ks.Dirty++
	c.touch(key)
	c.notify(configs.NotifyString, "setrange", key)
	c.w.Int(size)
}

// --- INCR family ----------------------------------------------------------------

// incrDecr is incrDecrCommand: the TTL is kept.
func (c *Client) incrDecr(key []byte, incr int64) {
	var value int64
	s, e, ok := lookupWrite[*keyspace.String](c, key)
	if !ok {
		return
	}
	if e != nil {
		if value, ok = parseInt(s.Bytes()); !ok {
			c.w.Error(ErrNotInteger)
			return
		}
	}
	if (incr < 0 && value < 0 && incr < math.MinInt64-value) ||
		(incr > 0 && value > 0 && incr > math.MaxInt64-value) {
		c.w.Error(ErrIncrOverflow)
		return
	}
	value += incr
	var tmp [20]byte
	c.storeString(e, key, strconv.AppendInt(tmp[:0], value, 10), true)
	c.notify(configs.NotifyString, "incrby", key)
	c.w.Int(value)
}

func cmdIncr(c *Client, args [][]byte) { c.incrDecr(args[1], 1) }

func cmdDecr(c *Client, args [][]byte) { c.incrDecr(args[1], -1) }

func cmdIncrBy(c *Client, args [][]byte) {
	n, ok := parseInt(args[2])
	if !ok {
		c.w.Error(ErrNotInteger)
		return
	}
	c.incrDecr(args[1], n)
}

func cmdDecrBy(c *Client, args [][]byte) {
	n, ok := parseInt(args[2])
	if !ok {
		c.w.Error(ErrNotInteger)
		return
	}
	if n == math.MinInt64 {
		c.w.Error(ErrDecrOverflow)
		return
	}
	c.incrDecr(args[1], -n)
}

// cmdIncrByFloat is incrbyfloatCommand. Redis computes in C long double
// (x87 80-bit: 64-bit significand) and prints with "%.17Lf" minus trailing
// zeros, so 10.8+3000 is "3010.80000000000000004" while 0.1+0.2 is "0.3".
// The arithmetic is emulated with big.Float at 64-bit precision.
func cmdIncrByFloat(c *Client, args [][]byte) {
	key := args[1]
	s, e, ok := lookupWrite[*keyspace.String](c, key)
	if !ok {
		return
	}
	var value *big.Float
	if e != nil {
		if value, ok = parseLongDouble(s.Bytes()); !ok {
			c.w.Error(ErrNotFloat)
			return
		}
	} else {
		value = new(big.Float).SetPrec(ldPrec)
	}
	incr, ok := parseLongDouble(args[2])
	if !ok {
		c.w.Error(ErrNotFloat)
		return
	}
	sum, ok := addLongDouble(value, incr)
	if !ok {
		c.w.Error(ErrIncrNaN)
		return
	}
	out := []byte(formatLongDouble(sum))
	// createStringObjectFromLongDouble: embstr or raw, never int. The new
	// object also replaces the argument in argv (propagated as SET).
	v := keyspace.NewString(out, keyspace.StringEmbstr)
	if e != nil {
		e = c.selectedDB().SetKeepTTL(key, v, c.srv.nowMs)
	} else {
		e = c.selectedDB().Set(key, v, c.srv.nowMs)
		c.notify(configs.NotifyNew, "new", key)
	}
	c.argvStored(e)
	c.srv.ks.Dirty++
	c.touch(key)
	c.notify(configs.NotifyString, "incrbyfloat", key)
	if c.srv.propagating() {
		// As SET key <new value> KEEPTTL; a copy, since a later command of
		// the same unit may overwrite the stored bytes in place.
		c.rewriteArgv(wordSet, key, copyBytes(out), wordKeepTTL)
	}
	c.w.Bulk(out)
}

// x87 long double: 64-bit significand, values below 2^16384, subnormals
// down to 2^-16445.
const (
	ldPrec    = 64
	ldMaxExp  = 16384  // MantExp of the largest finite value
	ldMinExp  = -16444 // MantExp of the smallest subnormal
	ldMaxChar = 5 * 1024
)

// parseLongDouble is util.c's string2ld: strtold over the whole argument
// (decimal, hexadecimal "0x1.8p3", "inf"/"infinity"), rejecting leading
// space, trailing garbage, NaN and results that overflow to infinity or
// underflow to zero. The result is rounded to nearest-even at 64 bits, as
// glibc's strtold does.
func parseLongDouble(b []byte) (*big.Float, bool) {
	if len(b) == 0 || len(b) >= ldMaxChar {
		return nil, false
	}
	neg := false
	s := b
	if s[0] == '+' || s[0] == '-' {
		neg = s[0] == '-'
		s = s[1:]
	}
	if eqFold(s, "inf") || eqFold(s, "infinity") {
		return new(big.Float).SetPrec(ldPrec).SetInf(neg), true
	}
	hex := len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')
	digitVal := func(ch byte) int {
		switch {
		case ch >= '0' && ch <= '9':
			return int(ch - '0')
		case hex && ch >= 'a' && ch <= 'f':
			return int(ch-'a') + 10
		case hex && ch >= 'A' && ch <= 'F':
			return int(ch-'A') + 10
		}
		return -1
	}
	if hex {
		s = s[2:]
	}
	// Mantissa: digits [. digits], at least one digit.
	mant := make([]byte, 0, len(s))
	frac := 0
	seenDot, digits := false, 0
	i := 0
	for ; i < len(s); i++ {
		ch := s[i]
		if ch == '.' && !seenDot {
			seenDot = true
			continue
		}
		if digitVal(ch) < 0 {
			break
		}
		digits++
		if seenDot {
			frac++
		}
		mant = append(mant, ch)
	}
	if digits == 0 {
		return nil, false // also "0x" alone: strtold stops after the '0'
	}
	// Exponent: e/E (decimal) or p/P (hex), sign, at least one digit.
	var exp int64
	if i < len(s) {
		ch := s[i] | 0x20
		if (!hex && ch != 'e') || (hex && ch != 'p') {
			return nil, false
		}
		i++
		eneg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			eneg = s[i] == '-'
			i++
		}
		if i == len(s) {
			return nil, false
		}
		for ; i < len(s); i++ {
			if s[i] < '0' || s[i] > '9' {
				return nil, false
			}
			if exp < 1e9 {
				exp = exp*10 + int64(s[i]-'0')
			}
		}
		if eneg {
			exp = -exp
		}
	}
	// Strip leading zeros: an all-zero mantissa is a (signed) zero whatever
	// the exponent.
	lead := 0
	for lead < len(mant) && mant[lead] == '0' {
		lead++
	}
	mant = mant[lead:]
	f := new(big.Float).SetPrec(ldPrec)
	if len(mant) == 0 {
		if neg {
			f.Neg(f)
		}
		return f, true
	}
	var m big.Int
	if _, ok := m.SetString(string(mant), map[bool]int{false: 10, true: 16}[hex]); !ok {
		return nil, false
	}
	if hex {
		// value = m * 2^(exp - 4*frac): round m to 64 bits, then scale.
		e2 := exp - 4*int64(frac)
		top := int64(m.BitLen()) + e2 // value < 2^top
		if top-1 > ldMaxExp {
			return nil, false
		}
		if top < ldMinExp-2 {
			return nil, false
		}
		f.SetInt(&m)
		f.SetMantExp(f, int(e2))
	} else {
		// value = m * 10^e10, computed exactly then rounded once.
		e10 := exp - int64(frac)
		mag := int64(len(mant)) + e10 // value < 10^mag, >= 10^(mag-1)
		if mag-1 > 4933 {
			return nil, false
		}
		if mag < -4952 {
			return nil, false
		}
		if e10 >= 0 {
			m.Mul(&m, new(big.Int).Exp(big.NewInt(10), big.NewInt(e10), nil))
			f.SetInt(&m)
		} else {
			num := new(big.Float).SetInt(&m)
			den := new(big.Float).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(-e10), nil))
			f.Quo(num, den)
		}
	}
	// Overflow to infinity, or underflow below half the smallest subnormal
	// (which rounds to zero; exactly half rounds to even, i.e. zero too).
	var mfrac big.Float
	if x := f.MantExp(&mfrac); x > ldMaxExp || x < ldMinExp-1 ||
		(x == ldMinExp-1 && mfrac.Cmp(big.NewFloat(0.5)) == 0) {
		return nil, false
	}
	if neg {
		f.Neg(f)
	}
	return f, true
}

// addLongDouble adds at long double precision; false when the result is
// NaN or infinite.
func addLongDouble(a, b *big.Float) (*big.Float, bool) {
	if a.IsInf() || b.IsInf() {
		return nil, false
	}
	sum := new(big.Float).SetPrec(ldPrec).Add(a, b)
	if sum.Sign() != 0 && sum.MantExp(nil) > ldMaxExp {
		return nil, false
	}
	return sum, true
}

// formatLongDouble is ld2string's LD_STR_HUMAN: "%.17Lf", trailing zeros
// (and a trailing '.') removed, "-0" printed as "0".
func formatLongDouble(f *big.Float) string {
	s := f.Text('f', 17)
	l := len(s)
	for l > 0 && s[l-1] == '0' {
		l--
	}
	if l > 0 && s[l-1] == '.' {
		l--
	}
	s = s[:l]
	if s == "-0" {
		return "0"
	}
	return s
}

// --- LCS -------------------------------------------------------------------------

// cmdLCS is lcsCommand: the dynamic-programming table, then a walk back
// from the end emitting match ranges (latest first).
func cmdLCS(c *Client, args [][]byte) {
	ea := c.lookupKeyRead(args[1])
	eb := c.lookupKeyRead(args[2])
	var a, b []byte
	if ea != nil {
		s, ok := ea.StringValue()
		if !ok {
			c.w.Error(ErrLCSWrongType)
			return
		}
		a = s.Bytes()
	}
	if eb != nil {
		s, ok := eb.StringValue()
		if !ok {
			c.w.Error(ErrLCSWrongType)
			return
		}
		b = s.Bytes()
	}
	var minMatch int64
	getLen, getIdx, withMatchLen := false, false, false
	for j := 3; j < len(args); j++ {
		opt := args[j]
		more := len(args) - 1 - j
		switch {
		case eqFold(opt, "idx"):
			getIdx = true
		case eqFold(opt, "len"):
			getLen = true
		case eqFold(opt, "withmatchlen"):
			withMatchLen = true
		case eqFold(opt, "minmatchlen") && more > 0:
			n, ok := parseInt(args[j+1])
			if !ok {
				c.w.Error(ErrNotInteger)
				return
			}
			minMatch = max(n, 0)
			j++
		default:
			c.w.Error(ErrSyntax)
			return
		}
	}
	if getLen && getIdx {
		c.w.Error(ErrLCSLenAndIdx)
		return
	}
	if int64(len(a)) >= math.MaxUint32-1 || int64(len(b)) >= math.MaxUint32-1 {
		c.w.Error(ErrLCSTooLong)
		return
	}
	alen, blen := len(a), len(b)
	cells := uint64(alen+1) * uint64(blen+1)
	if cells*4 > uint64(c.srv.protoMaxBulk.Load()) {
		c.w.Error(ErrLCSMemory)
		return
	}
	lcs := make([]uint32, cells)
	at := func(i, j int) *uint32 { return &lcs[j+i*(blen+1)] }
	for i := 1; i <= alen; i++ {
		for j := 1; j <= blen; j++ {
			if a[i-1] == b[j-1] {
				*at(i, j) = *at(i-1, j-1) + 1
			} else {
				*at(i, j) = max(*at(i-1, j), *at(i, j-1))
			}
		}
	}
	total := int(*at(alen, blen))
	type match struct{ a0, a1, b0, b1 int }
	var matches []match
	computeLCS := getIdx || !getLen
	var result []byte
	if computeLCS {
		result = make([]byte, total)
	}
	idx := total
	i, j := alen, blen
	aStart, aEnd, bStart, bEnd := alen, 0, 0, 0 // aStart == alen: no range open
	for computeLCS && i > 0 && j > 0 {
		emit := false
		if a[i-1] == b[j-1] {
			result[idx-1] = a[i-1]
			if aStart == alen {
				aStart, aEnd = i-1, i-1
				bStart, bEnd = j-1, j-1
			} else if aStart == i && bStart == j {
				aStart--
				bStart--
			} else {
				emit = true
			}
			if aStart == 0 || bStart == 0 {
				emit = true
			}
			idx--
			i--
			j--
		} else {
			if *at(i-1, j) > *at(i, j-1) {
				i--
			} else {
				j--
			}
			if aStart != alen {
				emit = true
			}
		}
		if emit {
			if minMatch == 0 || int64(aEnd-aStart+1) >= minMatch {
				matches = append(matches, match{aStart, aEnd, bStart, bEnd})
			}
			aStart = alen
		}
	}
	switch {
	case getIdx:
		c.w.MapLen(2)
		c.w.BulkString("matches")
		c.w.ArrayLen(len(matches))
		for _, m := range matches {
			if withMatchLen {
				c.w.ArrayLen(3)
			} else {
				c.w.ArrayLen(2)
			}
			c.w.ArrayLen(2)
			c.w.Int(int64(m.a0))
			c.w.Int(int64(m.a1))
			c.w.ArrayLen(2)
			c.w.Int(int64(m.b0))
			c.w.Int(int64(m.b1))
			if withMatchLen {
				c.w.Int(int64(m.a1 - m.a0 + 1))
			}
		}
		c.w.BulkString("len")
		c.w.Int(int64(total))
	case getLen:
		c.w.Int(int64(total))
	default:
		c.w.Bulk(result)
	}
}
