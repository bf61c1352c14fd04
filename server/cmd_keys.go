package server

import (
	"math"
	"strconv"
	"strings"

	"github.com/vigil-kv/vigil/configs"
	"github.com/vigil-kv/vigil/server/keyspace"
)

// Generic keyspace commands, as Redis 7.0's db.c, expire.c and object.c.

func init() {
	w, r, f := FlagWrite, FlagReadonly, FlagFast
	acl := func(a ...string) []string { return a }
	register(
		&Command{Name: "del", Arity: -2, Flags: w, FirstKey: 1, LastKey: -1, Step: 1, ACL: acl("keyspace", "write", "slow"), Handler: cmdDel},
		&Command{Name: "unlink", Arity: -2, Flags: w | f, FirstKey: 1, LastKey: -1, Step: 1, ACL: acl("keyspace", "write", "fast"), Handler: cmdDel},
		&Command{Name: "exists", Arity: -2, Flags: r | f, FirstKey: 1, LastKey: -1, Step: 1, ACL: acl("keyspace", "read", "fast"), Handler: cmdExists},
		&Command{Name: "type", Arity: 2, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: acl("keyspace", "read", "fast"), Handler: cmdType},
		&Command{Name: "keys", Arity: 2, Flags: r, ACL: acl("keyspace", "read", "slow", "dangerous"), Handler: cmdKeys},
		&Command{Name: "scan", Arity: -2, Flags: r | FlagTouchesArbitraryKeys, ACL: acl("keyspace", "read", "slow"), Handler: cmdScan},
		&Command{Name: "randomkey", Arity: 1, Flags: r | FlagTouchesArbitraryKeys, ACL: acl("keyspace", "read", "slow"), Handler: cmdRandomKey},
		&Command{Name: "rename", Arity: 3, Flags: w, FirstKey: 1, LastKey: 2, Step: 1, ACL: acl("keyspace", "write", "slow"), Handler: cmdRename},
		&Command{Name: "renamenx", Arity: 3, Flags: w | f, FirstKey: 1, LastKey: 2, Step: 1, ACL: acl("keyspace", "write", "fast"), Handler: cmdRenameNX},
		&Command{Name: "move", Arity: 3, Flags: w | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: acl("keyspace", "write", "fast"), Handler: cmdMove},
		&Command{Name: "copy", Arity: -3, Flags: w | FlagDenyOOM, FirstKey: 1, LastKey: 2, Step: 1, ACL: acl("keyspace", "write", "slow"), Handler: cmdCopy},
		&Command{Name: "expire", Arity: -3, Flags: w | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: acl("keyspace", "write", "fast"), Handler: cmdExpire},
		&Command{Name: "pexpire", Arity: -3, Flags: w | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: acl("keyspace", "write", "fast"), Handler: cmdPExpire},
		&Command{Name: "expireat", Arity: -3, Flags: w | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: acl("keyspace", "write", "fast"), Handler: cmdExpireAt},
		&Command{Name: "pexpireat", Arity: -3, Flags: w | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: acl("keyspace", "write", "fast"), Handler: cmdPExpireAt},
		&Command{Name: "ttl", Arity: 2, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: acl("keyspace", "read", "fast"), Handler: cmdTTL},
		&Command{Name: "pttl", Arity: 2, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: acl("keyspace", "read", "fast"), Handler: cmdPTTL},
		&Command{Name: "expiretime", Arity: 2, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: acl("keyspace", "read", "fast"), Handler: cmdExpireTime},
		&Command{Name: "pexpiretime", Arity: 2, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: acl("keyspace", "read", "fast"), Handler: cmdPExpireTime},
		&Command{Name: "persist", Arity: 2, Flags: w | f, FirstKey: 1, LastKey: 1, Step: 1, ACL: acl("keyspace", "write", "fast"), Handler: cmdPersist},
		&Command{Name: "touch", Arity: -2, Flags: r | f, FirstKey: 1, LastKey: -1, Step: 1, ACL: acl("keyspace", "read", "fast"), Handler: cmdTouch},
		&Command{Name: "object", Arity: -2, ACL: acl("slow"), Subs: []*Command{
			{Name: "encoding", Arity: 3, Flags: r, FirstKey: 2, LastKey: 2, Step: 1, ACL: acl("keyspace", "read", "slow"), Handler: cmdObjectEncoding},
			{Name: "freq", Arity: 3, Flags: r, FirstKey: 2, LastKey: 2, Step: 1, ACL: acl("keyspace", "read", "slow"), Handler: cmdObjectFreq},
			{Name: "idletime", Arity: 3, Flags: r, FirstKey: 2, LastKey: 2, Step: 1, ACL: acl("keyspace", "read", "slow"), Handler: cmdObjectIdleTime},
			{Name: "refcount", Arity: 3, Flags: r, FirstKey: 2, LastKey: 2, Step: 1, ACL: acl("keyspace", "read", "slow"), Handler: cmdObjectRefCount},
			{Name: "help", Arity: 2, Flags: FlagLoading | FlagStale, ACL: acl("keyspace", "slow"), Handler: helpHandler("OBJECT", objectHelp)},
		}},
	)
}

// typeName is getObjectTypeName.
func typeName(e *keyspace.Entry) string {
	if e == nil {
		return "none"
	}
	return e.Value().Type().String()
}

// --- DEL, EXISTS, TYPE, KEYS, SCAN, RANDOMKEY ---------------------------------

// cmdDel is delGenericCommand (DEL and UNLINK: freeing is Go's job, so both
// are synchronous). An expired key is expired first (expireIfNeeded) and not
// counted; on a replica, where expiry only hides keys, it is deleted and
// counted, so the master's DEL of an expired key removes it.
func cmdDel(c *Client, args [][]byte) {
	db := c.selectedDB()
	n := int64(0)
	// delGenericCommand: UNLINK, and DEL with lazyfree-lazy-user-del, free
	// asynchronously (dbAsyncDelete).
	lazy := c.srv.cfg.LazyfreeLazyUserDel || eqFold(args[0], "unlink")
	for _, k := range args[1:] {
		e := db.LookupNoTouch(k, c.srv.nowMs)
		if lazy && e != nil {
			c.srv.lazyfree(e.Value())
		}
		if db.SyncDelete(k) {
			n++
			c.notify(configs.NotifyGeneric, "del", k)
			c.touch(k)
		}
	}
	c.srv.ks.Dirty += n
	c.w.Int(n)
}

// cmdExists counts every argument that exists, duplicates included.
func cmdExists(c *Client, args [][]byte) {
	n := int64(0)
	for _, k := range args[1:] {
		if c.lookupKeyReadNoTouch(k) != nil {
			n++
		}
	}
	c.w.Int(n)
}

func cmdType(c *Client, args [][]byte) { c.w.Simple(typeName(c.lookupKeyReadNoTouch(args[1]))) }

func cmdKeys(c *Client, args [][]byte) {
	var keys []string
	c.selectedDB().Keys(args[1], c.srv.nowMs, func(k string) { keys = append(keys, k) })
	c.replyDeferredLen() // obuf.go: keysCommand's addReplyDeferredLen
	c.w.ArrayLen(len(keys))
	for i, k := range keys {
		c.w.BulkString(k)
		if (i+1)%hugeReplyCheckEvery == 0 && c.closeASAP() {
			break // closed for its output buffer (obuf.go)
		}
	}
}

// parseScanCursor is parseScanCursorOrReply: strtoul in base 10, so a
// leading '+' or '-' is accepted ("-1" is 2^64-1) and an empty cursor is 0,
// but leading space, trailing garbage and overflow are not. The argument
// ends at a NUL byte, as a C string does.
func parseScanCursor(b []byte) (uint64, bool) {
	for i, ch := range b {
		if ch == 0 {
			b = b[:i]
			break
		}
	}
	if len(b) == 0 {
		return 0, true
	}
	s := b
	neg := false
	if s[0] == '+' || s[0] == '-' {
		neg = s[0] == '-'
		s = s[1:]
	}
	if len(s) == 0 {
		return 0, false
	}
	var n uint64
	for _, ch := range s {
		if ch < '0' || ch > '9' {
			return 0, false
		}
		d := uint64(ch - '0')
		if n > (math.MaxUint64-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	if neg {
		n = -n
	}
	return n, true
}

// cmdScan is scanCommand over the selected database.
func cmdScan(c *Client, args [][]byte) {
	cursor, ok := parseScanCursor(args[1])
	if !ok {
		c.w.Error(ErrInvalidCursor)
		return
	}
	count, pattern, usePattern, typ, ok := c.parseScanOptions(args, 2, true)
	if !ok {
		return
	}
	if count > math.MaxInt32 {
		count = math.MaxInt32
	}
	var keys []string
	next := c.selectedDB().Scan(cursor, int(count), c.srv.nowMs, func(k string, e *keyspace.Entry) {
		if usePattern && !keyspace.GlobMatchString(pattern, k, false) {
			return
		}
		if typ != nil {
			// Redis looks each candidate up (LOOKUP_NOTOUCH) to learn its
			// type, which counts as a keyspace hit.
			c.srv.stats.keyspaceHits++
			if !eqFoldString(typ, typeName(e)) {
				return
			}
		}
		keys = append(keys, k)
	})
	c.w.ArrayLen(2)
	var tmp [20]byte
	c.w.Bulk(strconv.AppendUint(tmp[:0], next, 10))
	c.w.ArrayLen(len(keys))
	for _, k := range keys {
		c.w.BulkString(k)
	}
}

// parseScanOptions is the option loop scanGenericCommand shares among SCAN,
// HSCAN, SSCAN and ZSCAN: COUNT (at least 1), MATCH ("*" matches all, so
// it is not applied) and, for SCAN only, TYPE, from args[from] on. It
// replies the error and returns !ok on a bad option.
func (c *Client) parseScanOptions(args [][]byte, from int, allowType bool) (count int64, pattern []byte, usePattern bool, typ []byte, ok bool) {
	count = 10
	for i := from; i < len(args); {
		more := len(args) - i
		switch {
		case eqFold(args[i], "count") && more >= 2:
			n, ok := parseInt(args[i+1])
			if !ok {
				c.w.Error(ErrNotInteger)
				return 0, nil, false, nil, false
			}
			if n < 1 {
				c.w.Error(ErrSyntax)
				return 0, nil, false, nil, false
			}
			count = n
			i += 2
		case eqFold(args[i], "match") && more >= 2:
			pattern = args[i+1]
			usePattern = !(len(pattern) == 1 && pattern[0] == '*')
			i += 2
		case allowType && eqFold(args[i], "type") && more >= 2:
			typ = args[i+1]
			i += 2
		default:
			c.w.Error(ErrSyntax)
			return 0, nil, false, nil, false
		}
	}
	return count, pattern, usePattern, typ, true
}

// eqFoldString compares case-insensitively (strcasecmp).
func eqFoldString(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := 0; i < len(b); i++ {
		x, y := b[i], s[i]
		if x >= 'A' && x <= 'Z' {
			x += 'a' - 'A'
		}
		if y >= 'A' && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

func cmdRandomKey(c *Client, args [][]byte) {
	k, ok := c.selectedDB().RandomKey(c.srv.nowMs, c.srv.rng)
	if !ok {
		c.w.Null()
		return
	}
	c.w.BulkString(k)
}

// --- RENAME, MOVE, COPY ----------------------------------------------------------

func cmdRename(c *Client, args [][]byte)   { c.renameGeneric(args, false) }
func cmdRenameNX(c *Client, args [][]byte) { c.renameGeneric(args, true) }

// renameGeneric is renameGenericCommand: the value, its TTL and its access
// metadata move to the new name, replacing what was there (unless NX).
func (c *Client) renameGeneric(args [][]byte, nx bool) {
	src, dst := args[1], args[2]
	if c.lookupKeyWrite(src) == nil {
		c.w.Error(ErrNoSuchKey)
		return
	}
	if string(src) == string(dst) {
		if nx {
			c.w.Int(0)
		} else {
			c.w.OK()
		}
		return
	}
	if c.lookupKeyWrite(dst) != nil && nx {
		c.w.Int(0)
		return
	}
	c.selectedDB().Rename(src, dst, c.srv.nowMs)
	if e := c.selectedDB().Peek(dst); e != nil && e.HasExpire() {
		c.rememberReplicaExpire(dst) // renameGenericCommand's setExpire
	}
	c.srv.ks.Dirty++
	c.touch(src)
	c.touch(dst)
	// dbAdd of the new name, then the pair (renameGenericCommand).
	c.notify(configs.NotifyNew, "new", dst)
	c.notify(configs.NotifyGeneric, "rename_from", src)
	c.notify(configs.NotifyGeneric, "rename_to", dst)
	if nx {
		c.w.Int(1)
	} else {
		c.w.OK()
	}
}

// parseDBIndex is getIntFromObjectOrReply plus selectDb's range check.
func (c *Client) parseDBIndex(b []byte) (*keyspace.DB, int, bool) {
	n, ok := parseInt(b)
	if !ok {
		c.w.Error(ErrNotInteger)
		return nil, 0, false
	}
	if n < math.MinInt32 || n > math.MaxInt32 {
		c.w.Error(ErrIntRange)
		return nil, 0, false
	}
	if n < 0 || n >= int64(len(c.srv.ks.DBs)) {
		c.w.Error(ErrDBIndex)
		return nil, 0, false
	}
	return c.srv.ks.DBs[n], int(n), true
}

func cmdMove(c *Client, args [][]byte) {
	key := args[1]
	dst, id, ok := c.parseDBIndex(args[2])
	if !ok {
		return
	}
	if id == c.db {
		c.w.Error(ErrSameObject)
		return
	}
	e := c.lookupKeyWrite(key)
	if e == nil {
		c.w.Int(0)
		return
	}
	if dst.Lookup(key, c.srv.nowMs) != nil {
		c.w.Int(0)
		return
	}
	// The object itself moves, with its TTL and access metadata.
	c.selectedDB().Move(key, dst, c.srv.nowMs)
	if e := dst.Peek(key); e != nil && e.HasExpire() {
		c.rememberReplicaExpireIn(id, key) // moveCommand's setExpire
	}
	c.srv.ks.Dirty++
	c.touch(key)
	c.srv.touchWatched(id, key)
	c.srv.notify(configs.NotifyNew, "new", key, id)
	c.notify(configs.NotifyGeneric, "move_from", key)
	c.srv.notify(configs.NotifyGeneric, "move_to", key, id)
	c.w.Int(1)
}

func cmdCopy(c *Client, args [][]byte) {
	src, dstKey := args[1], args[2]
	dst, dstID := c.selectedDB(), c.db
	replace := false
	for j := 3; j < len(args); j++ {
		switch {
		case eqFold(args[j], "replace"):
			replace = true
		case eqFold(args[j], "db") && j+1 < len(args):
			db, id, ok := c.parseDBIndex(args[j+1])
			if !ok {
				return
			}
			dst, dstID = db, id
			j++
		default:
			c.w.Error(ErrSyntax)
			return
		}
	}
	if dstID == c.db && string(src) == string(dstKey) {
		c.w.Error(ErrSameObject)
		return
	}
	e := c.lookupKeyRead(src)
	if e == nil {
		c.w.Int(0)
		return
	}
	exists := dst.Lookup(dstKey, c.srv.nowMs) != nil
	if exists && !replace {
		c.w.Int(0)
		return
	}
	val := e.Value().Dup() // dupStringObject, dupListObject, ...
	expireAt := c.selectedDB().ExpireAt(e)
	if exists {
		dst.Delete(dstKey)
	}
	dst.SetNew(dstKey, val, c.srv.nowMs) // the value's header (a string's bytes) in the key node
	if expireAt != 0 {
		dst.SetExpire(dstKey, expireAt)
		c.rememberReplicaExpireIn(dstID, dstKey)
	}
	c.srv.ks.Dirty++
	c.srv.touchWatched(dstID, dstKey)
	c.srv.notify(configs.NotifyNew, "new", dstKey, dstID)
	c.srv.notify(configs.NotifyGeneric, "copy_to", dstKey, dstID)
	c.w.Int(1)
}

// --- EXPIRE family, TTL family, PERSIST, TOUCH -----------------------------

// EXPIRE option flags (expire.c EXPIRE_*).
const (
	expireNX = 1 << iota
	expireXX
	expireGT
	expireLT
)

// parseExpireOpts is parseExtendedExpireArgumentsOrReply.
func (c *Client) parseExpireOpts(args [][]byte) (int, bool) {
	flags := 0
	for _, opt := range args[3:] {
		switch {
		case eqFold(opt, "nx"):
			flags |= expireNX
		case eqFold(opt, "xx"):
			flags |= expireXX
		case eqFold(opt, "gt"):
			flags |= expireGT
		case eqFold(opt, "lt"):
			flags |= expireLT
		default:
			c.w.Error(errUnsupportedOption(opt))
			return 0, false
		}
	}
	if flags&expireNX != 0 && flags&(expireXX|expireGT|expireLT) != 0 {
		c.w.Error(ErrExpireNXIncompatible)
		return 0, false
	}
	if flags&expireGT != 0 && flags&expireLT != 0 {
		c.w.Error(ErrExpireGTLT)
		return 0, false
	}
	return flags, true
}

// expireGeneric is expireGenericCommand. basetime is 0 for the *AT forms;
// a time at or before now deletes the key.
func (c *Client) expireGeneric(args [][]byte, basetime int64, seconds bool, cmd string) {
	flags, ok := c.parseExpireOpts(args)
	if !ok {
		return
	}
	when, ok := parseInt(args[2])
	if !ok {
		c.w.Error(ErrNotInteger)
		return
	}
	if seconds {
		if when > math.MaxInt64/1000 || when < math.MinInt64/1000 {
			c.w.Error(errInvalidExpire(cmd))
			return
		}
		when *= 1000
	}
	if when > math.MaxInt64-basetime {
		c.w.Error(errInvalidExpire(cmd))
		return
	}
	when += basetime
	key := args[1]
	e := c.lookupKeyWrite(key)
	if e == nil {
		c.w.Int(0)
		return
	}
	if flags != 0 {
		cur := c.selectedDB().ExpireAt(e) // 0: no TTL (Redis's -1)
		switch {
		case flags&expireNX != 0 && cur != 0,
			flags&expireXX != 0 && cur == 0,
			flags&expireGT != 0 && (cur == 0 || when <= cur),
			flags&expireLT != 0 && cur != 0 && when >= cur:
			c.w.Int(0)
			return
		}
	}
	db := c.selectedDB()
	if c.alreadyExpired(when) {
		// expireGenericCommand: dbAsyncDelete under lazyfree-lazy-expire.
		if c.srv.cfg.LazyfreeLazyExpire {
			c.srv.lazyfree(e.Value())
		}
		db.SyncDelete(key)
		c.notify(configs.NotifyGeneric, "del", key)
		if c.srv.propagating() { // an explicit DEL, or UNLINK (lazyfree-lazy-expire)
			c.rewriteArgv(c.srv.delWord(c.srv.cfg.LazyfreeLazyExpire), key)
		}
	} else {
		db.SetExpire(key, when)
		c.rememberReplicaExpire(key)
		c.notify(configs.NotifyGeneric, "expire", key)
		if c.srv.propagating() && cmd != "pexpireat" {
			// As PEXPIREAT key <abs-ms> [flags]: the name and, unless it
			// already is absolute milliseconds, the time are replaced.
			argv := append([][]byte{wordPExpAt}, args[1:]...)
			if basetime != 0 || seconds {
				argv[2] = msArg(when)
			}
			c.rewriteArgv(argv...)
		}
	}
	c.srv.ks.Dirty++
	c.touch(key)
	c.w.Int(1)
}

// alreadyExpired is checkAlreadyExpired: a TTL at or before now deletes
// the key, except on a replica, which keeps it for the master's DEL, and
// while the AOF loads (server.loading), where the key keeps its TTL and
// the commands after it still see it.
func (c *Client) alreadyExpired(when int64) bool {
	return when <= c.srv.nowMs && !c.srv.ks.Replica && !c.aofClient
}

func cmdExpire(c *Client, args [][]byte)   { c.expireGeneric(args, c.srv.nowMs, true, "expire") }
func cmdPExpire(c *Client, args [][]byte)  { c.expireGeneric(args, c.srv.nowMs, false, "pexpire") }
func cmdExpireAt(c *Client, args [][]byte) { c.expireGeneric(args, 0, true, "expireat") }
func cmdPExpireAt(c *Client, args [][]byte) {
	c.expireGeneric(args, 0, false, "pexpireat")
}

// ttlGeneric is ttlGenericCommand: -2 for a missing key, -1 without TTL;
// seconds are rounded to nearest.
func (c *Client) ttlGeneric(key []byte, ms, abs bool) {
	e := c.lookupKeyReadNoTouch(key)
	if e == nil {
		c.w.Int(-2)
		return
	}
	ttl := c.selectedDB().ExpireAt(e)
	if ttl == 0 {
		c.w.Int(-1)
		return
	}
	if !abs {
		ttl -= c.srv.nowMs
	}
	if ttl < 0 {
		ttl = 0
	}
	if ms {
		c.w.Int(ttl)
		return
	}
	// (ttl+500)/1000 without overflowing near MaxInt64.
	c.w.Int(ttl/1000 + (ttl%1000+500)/1000)
}

func cmdTTL(c *Client, args [][]byte)         { c.ttlGeneric(args[1], false, false) }
func cmdPTTL(c *Client, args [][]byte)        { c.ttlGeneric(args[1], true, false) }
func cmdExpireTime(c *Client, args [][]byte)  { c.ttlGeneric(args[1], false, true) }
func cmdPExpireTime(c *Client, args [][]byte) { c.ttlGeneric(args[1], true, true) }

func cmdPersist(c *Client, args [][]byte) {
	if c.lookupKeyWrite(args[1]) != nil && c.selectedDB().Persist(args[1]) {
		c.srv.ks.Dirty++
		c.touch(args[1])
		c.notify(configs.NotifyGeneric, "persist", args[1])
		c.w.Int(1)
		return
	}
	c.w.Int(0)
}

func cmdTouch(c *Client, args [][]byte) {
	n := int64(0)
	for _, k := range args[1:] {
		if c.lookupKeyRead(k) != nil {
			n++
		}
	}
	c.w.Int(n)
}

// --- OBJECT ----------------------------------------------------------------------

// objectLookup is objectCommandLookupOrReply: no touch, no keymiss event
// (LOOKUP_NONOTIFY), null when missing.
func (c *Client) objectLookup(key []byte) *keyspace.Entry {
	e := c.selectedDB().LookupNoTouch(key, c.srv.nowMs)
	c.countLookup(e)
	if e == nil {
		c.w.Null()
	}
	return e
}

// policyIsLFU is maxmemory_policy & MAXMEMORY_FLAG_LFU.
func (s *Server) policyIsLFU() bool { return strings.HasSuffix(s.cfg.MaxmemoryPolicy, "-lfu") }

// applyKeyspaceConfig passes the LFU settings (and the encoding thresholds
// the data types implement) to the keyspace, whose
// lookups maintain the counters of OBJECT FREQ under an LFU policy.
// Called at start and after CONFIG SET (from applyAtomics).
func (s *Server) applyKeyspaceConfig() {
	l := &s.ks.LFU
	l.Enabled = s.policyIsLFU()
	l.LogFactor = s.cfg.LFULogFactor
	l.DecayTime = s.cfg.LFUDecayTime
	s.ks.Encodings.ListMaxListpackSize = s.cfg.ListMaxListpackSize
	// list-compress-depth: read when a list is created (LPUSH & co., RDB
	// and RESTORE loads); a list keeps the depth it was created with.
	s.ks.Encodings.ListCompressDepth = s.cfg.ListCompressDepth
	if l.Rand == nil {
		l.Rand = s.rng
	}
	// The compact encodings' thresholds (hash-max-listpack-*), read by
	// the writers of each type. Clamped to int: beyond any real size.
	enc := &s.ks.Encodings
	enc.HashMaxListpackEntries = int(min(s.cfg.HashMaxListpackEntries, math.MaxInt32))
	enc.HashMaxListpackValue = int(min(s.cfg.HashMaxListpackValue, math.MaxInt32))
	s.ks.Encodings.SetMaxIntsetEntries = int(s.cfg.SetMaxIntsetEntries)
	s.ks.Encodings.ZSetMaxListpackEntries = int(s.cfg.ZsetMaxListpackEntries)
	s.ks.Encodings.ZSetMaxListpackValue = int(s.cfg.ZsetMaxListpackValue)
	enc.StreamNodeMaxBytes = int(s.cfg.StreamNodeMaxBytes)
	enc.StreamNodeMaxEntries = int(s.cfg.StreamNodeMaxEntries)
	// active-expire-effort: the keys per loop, the acceptable stale share
	// and the cron's time budget of the active expire cycle (expire.c).
	s.ks.ActiveExpireEffort = s.cfg.ActiveExpireEffort
}

// sharingIntegers reports whether Redis would use its shared integer
// objects: not when maxmemory is set with an LRU or LFU policy
// (MAXMEMORY_FLAG_NO_SHARED_INTEGERS).
func (s *Server) sharingIntegers() bool {
	p := s.cfg.MaxmemoryPolicy
	return s.cfg.Maxmemory == 0 || !(strings.HasSuffix(p, "-lru") || strings.HasSuffix(p, "-lfu"))
}

// sharedIntegers is OBJ_SHARED_INTEGERS.
const sharedIntegers = 10000

// sharedInteger reports whether e's value is one of Redis's shared integer
// objects (refcount OBJ_SHARED_REFCOUNT): a string created by
// tryObjectEncoding holding 0..9999, when maxmemory does not forbid
// sharing.
func (s *Server) sharedInteger(e *keyspace.Entry) bool {
	v, ok := e.Value().(*keyspace.String)
	if !ok || v.Kind() != keyspace.StringAuto || !s.sharingIntegers() {
		return false
	}
	n, ok := v.Int()
	return ok && n >= 0 && n < sharedIntegers
}

func cmdObjectEncoding(c *Client, args [][]byte) {
	e := c.objectLookup(args[2])
	if e == nil {
		return
	}
	c.w.BulkString(e.Value().Encoding().String())
}

// cmdObjectRefCount reports 1, except for the integers 0..9999 that Redis
// shares (refcount OBJ_SHARED_REFCOUNT) when maxmemory does not forbid it,
// and 2 for a value stored from an argument earlier in the EXEC running
// now (argvShared).
func cmdObjectRefCount(c *Client, args [][]byte) {
	e := c.objectLookup(args[2])
	if e == nil {
		return
	}
	if c.srv.sharedInteger(e) {
		c.w.Int(math.MaxInt32)
		return
	}
	if c.argvShared(e) {
		// The queued argv holds it too, and, while anything consumes the
		// write path, so does the pending propagation of the command that
		// stored it (alsoPropagate's incrRefCount), until the EXEC ends.
		if c.srv.propagating() {
			c.w.Int(3)
			return
		}
		c.w.Int(2)
		return
	}
	c.w.Int(1)
}

func cmdObjectIdleTime(c *Client, args [][]byte) {
	e := c.objectLookup(args[2])
	if e == nil {
		return
	}
	if c.srv.policyIsLFU() {
		c.w.Error(ErrLFUSelected)
		return
	}
	c.w.Int(idleSecs(e, c.srv.nowMs))
}

func cmdObjectFreq(c *Client, args [][]byte) {
	e := c.objectLookup(args[2])
	if e == nil {
		return
	}
	if !c.srv.policyIsLFU() {
		c.w.Error(ErrLFUNotSelected)
		return
	}
	// LFUDecrAndReturn: the counter as decayed by now, without storing it.
	c.w.Int(int64(e.LFUDecay(c.srv.nowMs, c.srv.ks.LFU.DecayTime)))
}

// objectHelp is object.c's help text (addReplyHelp adds the frame).
var objectHelp = []string{
	"ENCODING <key>",
	"    Return the kind of internal representation used in order to store the value",
	"    associated with a <key>.",
	"FREQ <key>",
	"    Return the access frequency index of the <key>. The returned integer is",
	"    proportional to the logarithm of the recent access frequency of the key.",
	"IDLETIME <key>",
	"    Return the idle time of the <key>, that is the approximated number of",
	"    seconds elapsed since the last access to the key.",
	"REFCOUNT <key>",
	"    Return the number of references of the value associated with the specified",
	"    <key>.",
}

// rememberReplicaExpire is setExpire's rememberSlaveKeyWithExpire for key
// in the client's database: see rememberReplicaExpireIn.
func (c *Client) rememberReplicaExpire(key []byte) { c.rememberReplicaExpireIn(c.db, key) }

// rememberReplicaExpireIn is the end of db.c's setExpire: on a writable
// replica (replica-read-only no), a TTL set by a client other than the
// master is remembered, for the cron's ExpireReplicaKeys to delete the key
// when it expires (the master sends no DEL for a key it does not have).
func (c *Client) rememberReplicaExpireIn(db int, key []byte) {
	s := c.srv
	if s.isReplica() && !s.cfg.ReplicaReadOnly && c.replRole.Load() != kindMaster {
		s.ks.RememberReplicaKeyWithExpire(db, key)
	}
}
