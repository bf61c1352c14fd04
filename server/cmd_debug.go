package server

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/vigil-kv/vigil/internal/redisutil"
	"github.com/vigil-kv/vigil/server/keyspace"
	"github.com/vigil-kv/vigil/server/rdb"
)

// DEBUG, as debug.c debugCommand (Redis 7.0), for the subcommands Vigil
// implements. Like Redis it is one command (not a container), gated by
// enable-debug-command (no | yes | local: loopback and unix clients only).

func init() {
	register(&Command{Name: "debug", Arity: -2, Flags: FlagAdmin | FlagNoScript | FlagLoading | FlagStale | FlagProtected,
		ACL: []string{"admin", "slow", "dangerous"}, Handler: debugCommand})
}

// debugHelp is redis-server 7.0.15's DEBUG HELP, word for word (Vigil
// answers every subcommand it lists: see cmd_debug_more.go and
// cmd_debug_process.go).
var debugHelp = []string{
	"AOF-FLUSH-SLEEP <microsec>",
	"    Server will sleep before flushing the AOF, this is used for testing.",
	"ASSERT",
	"    Crash by assertion failed.",
	"CHANGE-REPL-ID",
	"    Change the replication IDs of the instance.",
	"    Dangerous: should be used only for testing the replication subsystem.",
	"CONFIG-REWRITE-FORCE-ALL",
	"    Like CONFIG REWRITE but writes all configuration options, including",
	"    keywords not listed in original configuration file or default values.",
	"CRASH-AND-RECOVER [<milliseconds>]",
	"    Hard crash and restart after a <milliseconds> delay (default 0).",
	"DIGEST",
	"    Output a hex signature representing the current DB content.",
	"DIGEST-VALUE <key> [<key> ...]",
	"    Output a hex signature of the values of all the specified keys.",
	"ERROR <string>",
	"    Return a Redis protocol error with <string> as message. Useful for clients",
	"    unit tests to simulate Redis errors.",
	"LEAK <string>",
	"    Create a memory leak of the input string.",
	"LOG <message>",
	"    Write <message> to the server log.",
	"HTSTATS <dbid>",
	"    Return hash table statistics of the specified Redis database.",
	"HTSTATS-KEY <key>",
	"    Like HTSTATS but for the hash table stored at <key>'s value.",
	"LOADAOF",
	"    Flush the AOF buffers on disk and reload the AOF in memory.",
	"REPLICATE <string>",
	"    Replicates the provided string to replicas, allowing data divergence.",
	"MALLCTL <key> [<val>]",
	"    Get or set a malloc tuning integer.",
	"MALLCTL-STR <key> [<val>]",
	"    Get or set a malloc tuning string.",
	"OBJECT <key>",
	"    Show low level info about `key` and associated value.",
	"DROP-CLUSTER-PACKET-FILTER <packet-type>",
	"    Drop all packets that match the filtered type. Set to -1 allow all packets.",
	"OOM",
	"    Crash the server simulating an out-of-memory error.",
	"PANIC",
	"    Crash the server simulating a panic.",
	"POPULATE <count> [<prefix>] [<size>]",
	"    Create <count> string keys named key:<num>. If <prefix> is specified then",
	"    it is used instead of the 'key' prefix. These are not propagated to",
	"    replicas. Cluster slots are not respected so keys not belonging to the",
	"    current node can be created in cluster mode.",
	"PROTOCOL <type>",
	"    Reply with a test value of the specified type. <type> can be: string,",
	"    integer, double, bignum, null, array, set, map, attrib, push, verbatim,",
	"    true, false.",
	"RELOAD [option ...]",
	"    Save the RDB on disk and reload it back to memory. Valid <option> values:",
	"    * MERGE: conflicting keys will be loaded from RDB.",
	"    * NOFLUSH: the existing database will not be removed before load, but",
	"      conflicting keys will generate an exception and kill the server.",
	"    * NOSAVE: the database will be loaded from an existing RDB file.",
	"    Examples:",
	"    * DEBUG RELOAD: verify that the server is able to persist, flush and reload",
	"      the database.",
	"    * DEBUG RELOAD NOSAVE: replace the current database with the contents of an",
	"      existing RDB file.",
	"    * DEBUG RELOAD NOSAVE NOFLUSH MERGE: add the contents of an existing RDB",
	"      file to the database.",
	"RESTART [<milliseconds>]",
	"    Graceful restart: save config, db, restart after a <milliseconds> delay (default 0).",
	"SDSLEN <key>",
	"    Show low level SDS string info representing `key` and value.",
	"SEGFAULT",
	"    Crash the server with sigsegv.",
	"SET-ACTIVE-EXPIRE <0|1>",
	"    Setting it to 0 disables expiring keys in background when they are not",
	"    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
	"    default.",
	"QUICKLIST-PACKED-THRESHOLD <size>",
	"    Sets the threshold for elements to be inserted as plain vs packed nodes",
	"    Default value is 1GB, allows values up to 4GB. Setting to 0 restores to default.",
	"SET-SKIP-CHECKSUM-VALIDATION <0|1>",
	"    Enables or disables checksum checks for RDB files and RESTORE's payload.",
	"SLEEP <seconds>",
	"    Stop the server for <seconds>. Decimals allowed.",
	"STRINGMATCH-TEST",
	"    Run a fuzz tester against the stringmatchlen() function.",
	"STRUCTSIZE",
	"    Return the size of different Redis core C structures.",
	"LISTPACK <key>",
	"    Show low level info about the listpack encoding of <key>.",
	"QUICKLIST <key> [<0|1>]",
	"    Show low level info about the quicklist encoding of <key>.",
	"    The optional argument (0 by default) sets the level of detail",
	"CLIENT-EVICTION",
	"    Show low level client eviction pools info (maxmemory-clients).",
	"PAUSE-CRON <0|1>",
	"    Stop periodic cron job processing.",
	"REPLYBUFFER PEAK-RESET-TIME <NEVER||RESET|time>",
	"    Sets the time (in milliseconds) to wait between client reply buffer peak resets.",
	"    In case NEVER is provided the last observed peak will never be reset",
	"    In case RESET is provided the peak reset time will be restored to the default value",
	"REPLYBUFFER RESIZING <0|1>",
	"    Enable or disable the reply buffer resize cron job",
	"CLUSTERLINK KILL <to|from|all> <node-id>",
	"    Kills the link based on the direction to/from (both) with the provided node.",
}

// debugAllowed is allowProtectedAction(server.enable_debug_cmd, c).
func (c *Client) debugAllowed() bool { return c.protectedAction(c.srv.cfg.EnableDebugCommand) }

// protectedAction is allowProtectedAction: setting is no, yes or local
// (loopback and unix clients only).
func (c *Client) protectedAction(setting string) bool {
	switch strings.ToLower(setting) {
	case "yes":
		return true
	case "local":
		return c.unix || c.conn == nil || isLoopback(c.conn.RemoteAddr())
	}
	return false
}

// debugCommand (Redis's name, which stack traces show) runs once call() has let it through: enable-debug-command is
// checked there (FlagProtected), after arity and before AUTH, as Redis.
func debugCommand(c *Client, args [][]byte) {
	s := c.srv
	sub := args[1]
	switch {
	case eqFold(sub, "help") && len(args) == 2:
		helpHandler("DEBUG", debugHelp)(c, args)
	case eqFold(sub, "sleep") && len(args) == 3:
		// Like Redis, the whole server stops: the execution lock is held.
		secs, _ := strconv.ParseFloat(strings.TrimSpace(string(args[2])), 64)
		if secs > 0 {
			d := time.Duration(secs * float64(time.Second))
			if f, ok := s.clock.(interface{ Advance(time.Duration) }); ok {
				f.Advance(d) // a fake clock: the sleep is the clock moving
			} else {
				time.Sleep(d)
			}
		}
		c.w.OK()
	case eqFold(sub, "set-active-expire") && len(args) == 3:
		n, _ := strconv.Atoi(string(args[2])) // atoi: garbage is 0
		s.adm.noActiveExpire = n == 0
		c.w.OK()
	case eqFold(sub, "object") && len(args) == 3:
		e := c.selectedDB().Peek(args[2]) // dictFind: logically expired keys too
		if e == nil {
			c.w.Error(ErrNoSuchKey)
			return
		}
		c.w.Simple(s.debugObject(e))
	case eqFold(sub, "reload"): // persist: cmd_dump.go
		debugReload(c, args)
	case eqFold(sub, "loadaof") && len(args) == 2: // persist: cmd_debug_loadaof.go
		debugLoadAOF(c)
	case eqFold(sub, "log") && len(args) == 3:
		s.log.Warn().Msg("DEBUG LOG: " + string(args[2]))
		c.w.OK()
	case eqFold(sub, "digest") && len(args) == 2: // cmd_debug_digest.go
		debugDigest(c)
	case eqFold(sub, "digest-value"):
		debugDigestValue(c, args[2:])
	case eqFold(sub, "error") && len(args) == 3:
		c.w.Error(string(args[2]))
	default:
		if !cmdDebugMore(c, args) && !cmdDebugProcess(c, args) { // cmd_debug_more.go, cmd_debug_process.go
			c.w.Error(errSubcommandSyntax(sub, "DEBUG"))
		}
	}
}

// debugObject is DEBUG OBJECT's status line. The address is the entry's;
// serializedlength is rdbSavedObjectLen (see serializedLength).
func (s *Server) debugObject(e *keyspace.Entry) string {
	enc, refcount := e.Value().Encoding().String(), int64(1)
	if s.sharedInteger(e) {
		refcount = 2147483647
	}
	serlen := serializedLength(e.Value(), s.cfg.RDBCompression)
	idle, lru := idleSecs(e, s.nowMs), e.LRUField()
	return fmt.Sprintf("Value at:%p refcount:%d encoding:%s serializedlength:%d lru:%d lru_seconds_idle:%d",
		e, refcount, enc, serlen, lru, idle) + s.debugQuicklist(e.Value()) // debug_quicklist.go
}

// serializedLength is rdbSavedObjectLen: the length of v's RDB encoding.
func serializedLength(v keyspace.Value, compress bool) int64 {
	if s, ok := v.(*keyspace.String); ok {
		return rdbStringLen(s.Bytes(), compress)
	}
	// persist: the DUMP payload without its type byte and footer.
	return int64(len(rdb.DumpPayload(v, compress)) - 11)
}

// rdbStringLen is the length rdbSaveRawString writes for b: integers in 8,
// 16 or 32 bits take their type byte and value; strings over 20 bytes that
// LZF shrinks by more than 4 bytes (with rdbcompression) their encoding
// byte, both lengths and the compressed bytes; other strings their length
// prefix and bytes.
func rdbStringLen(b []byte, compress bool) int64 {
	if len(b) <= 11 {
		if n, ok := parseInt(b); ok && strconv.FormatInt(n, 10) == string(b) {
			switch {
			case n >= -1<<7 && n < 1<<7:
				return 2
			case n >= -1<<15 && n < 1<<15:
				return 3
			case n >= -1<<31 && n < 1<<31:
				return 5
			}
		}
	}
	if compress && len(b) > 20 { // rdbSaveLzfStringObject
		out := make([]byte, len(b)-4)
		if n := redisutil.LZFCompress(b, out); n > 0 {
			return 1 + rdbLenLen(int64(n)) + rdbLenLen(int64(len(b))) + int64(n)
		}
	}
	l := int64(len(b))
	return rdbLenLen(l) + l
}

// rdbLenLen is the size of rdbSaveLen's encoding of l.
func rdbLenLen(l int64) int64 {
	switch {
	case l < 1<<6:
		return 1
	case l < 1<<14:
		return 2
	case l <= 1<<32-1:
		return 5
	}
	return 9
}
