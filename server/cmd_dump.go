package server

import (
	"strconv"

	"github.com/vigil-kv/vigil/configs"
	"github.com/vigil-kv/vigil/server/rdb"
)

// DUMP and RESTORE (cluster.c dumpCommand, restoreCommand), DEBUG RELOAD
// (debug.c), with RDB payloads from server/rdb.

func init() {
	register(&Command{Name: "dump", Arity: 2, Flags: FlagReadonly, FirstKey: 1, LastKey: 1, Step: 1,
		ACL: []string{"keyspace", "read", "slow"}, Handler: cmdDump})
	register(&Command{Name: "restore", Arity: -4, Flags: FlagWrite | FlagDenyOOM, FirstKey: 1, LastKey: 1, Step: 1,
		ACL: []string{"keyspace", "write", "slow", "dangerous"}, Handler: cmdRestore})
}

const errBusyKey = "BUSYKEY Target key name already exists."

var wordABSTTL = []byte("ABSTTL")

func cmdDump(c *Client, args [][]byte) {
	e := c.lookupKeyRead(args[1])
	if e == nil {
		c.w.Null()
		return
	}
	c.w.Bulk(rdb.DumpPayload(e.Value(), c.srv.cfg.RDBCompression))
}

// cmdRestore is restoreCommand: RESTORE key ttl serialized-value [REPLACE]
// [ABSTTL] [IDLETIME seconds] [FREQ frequency].
func cmdRestore(c *Client, args [][]byte) {
	s := c.srv
	replace, absttl := false, false
	idle, freq := int64(-1), int64(-1)
	for j := 4; j < len(args); j++ {
		additional := len(args) - j - 1
		switch {
		case eqFold(args[j], "replace"):
			replace = true
		case eqFold(args[j], "absttl"):
			absttl = true
		case eqFold(args[j], "idletime") && additional >= 1 && freq == -1:
			v, ok := parseInt(args[j+1])
			if !ok {
				c.w.Error(ErrNotInteger)
				return
			}
			if v < 0 {
				c.w.Error("ERR Invalid IDLETIME value, must be >= 0")
				return
			}
			idle = v
			j++
		case eqFold(args[j], "freq") && additional >= 1 && idle == -1:
			v, ok := parseInt(args[j+1])
			if !ok {
				c.w.Error(ErrNotInteger)
				return
			}
			if v < 0 || v > 255 {
				c.w.Error("ERR Invalid FREQ value, must be >= 0 and <= 255")
				return
			}
			freq = v
			j++
		default:
			c.w.Error(ErrSyntax)
			return
		}
	}
	key := args[1]
	if !replace && c.lookupKeyWrite(key) != nil {
		c.w.Error(errBusyKey)
		return
	}
	ttl, ok := parseInt(args[2])
	if !ok {
		c.w.Error(ErrNotInteger)
		return
	}
	if ttl < 0 {
		c.w.Error("ERR Invalid TTL value, must be >= 0")
		return
	}
	val, cause, err := rdb.ParsePayloadCause(args[3], s.ks.Encodings, s.dbg.skipChecksum) // DEBUG SET-SKIP-CHECKSUM-VALIDATION
	if err != nil {
		if cause != nil { // rdbReportError in a RESTORE context: logged in verbose
			for _, l := range cause.Reports(s.loadingLoadedBytes()) {
				s.log.Debug().Msg(l)
			}
		}
		c.w.Error("ERR " + err.Error())
		return
	}
	db := c.selectedDB()
	deleted := false
	if replace {
		deleted = db.Delete(key)
	}
	if ttl != 0 && !absttl {
		ttl += s.nowMs
	}
	if ttl != 0 && ttl < s.nowMs { // checkAlreadyExpired on a master
		if deleted {
			if s.propagating() {
				c.rewriteArgv(argvDel[0], key)
			}
			c.touch(key)
			c.notify(configs.NotifyGeneric, "del", key)
			s.ks.Dirty++
		}
		c.w.OK()
		return
	}
	e, _ := db.SetNew(key, val, s.nowMs) // the value's header (a string's bytes) in the key node
	c.notify(configs.NotifyNew, "new", key)
	if ttl != 0 {
		db.SetExpire(key, ttl)
		c.rememberReplicaExpire(key)
		if !absttl && s.propagating() {
			argv := append(append([][]byte(nil), args...), wordABSTTL)
			argv[2] = strconv.AppendInt(nil, ttl, 10)
			c.rewriteArgv(argv...)
		}
	}
	if e != nil {
		e.SetAccessMeta(s.policyIsLFU(), idle, int(freq), s.nowMs)
	}
	c.touch(key)
	c.notify(configs.NotifyGeneric, "restore", key)
	c.w.OK()
	s.ks.Dirty++
}

// debugReload is DEBUG RELOAD [MERGE] [NOFLUSH] [NOSAVE].
func debugReload(c *Client, args [][]byte) {
	s := c.srv
	flush, save, merge := true, true, false
	for _, a := range args[2:] {
		switch {
		case eqFold(a, "merge"):
			merge = true
		case eqFold(a, "noflush"):
			flush = false
		case eqFold(a, "nosave"):
			save = false
		default:
			c.w.Error("ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.")
			return
		}
	}
	if save {
		if err := s.rdbSave(); err != nil {
			c.w.Error("ERR")
			return
		}
	}
	if flush {
		for i, db := range s.ks.DBs {
			s.touchAllWatchedInDB(i, -1)
			db.Flush()
		}
		s.trackingFlush(false) // tracking.go: emptyData's signalFlushedDb
	}
	s.rdb.loading, s.rdb.keepFunctions = true, !flush
	err := s.loadRDBPath(s.rdbPath(), merge)
	s.rdb.loading, s.rdb.keepFunctions = false, false
	if err != nil {
		s.log.Warn().Msgf("Error trying to load the RDB dump: %s", err)
		c.w.Error("ERR Error trying to load the RDB dump")
		return
	}
	s.log.Warn().Msg("DB reloaded by DEBUG RELOAD")
	c.w.OK()
}
