package server

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/vigil-kv/vigil/configs"
	"github.com/vigil-kv/vigil/internal/resp"
	"github.com/vigil-kv/vigil/server/keyspace"
)

// The DEBUG subcommands of debug.c (Redis 7.0.15) beyond OBJECT, RELOAD,
// LOADAOF, SLEEP, LOG, ERROR and the digests: their replies are
// redis-server's, byte for byte. Those that tune a part of Redis Vigil
// does not have (jemalloc, the reply buffer resizing, AOF flush sleeps)
// accept their arguments as Redis does and change
// nothing; README's differences list them.

// debugState is what DEBUG sets; guarded by Server.mu.
type debugState struct {
	pauseCron          bool  // DEBUG PAUSE-CRON 1: the cron does nothing
	skipChecksum       bool  // DEBUG SET-SKIP-CHECKSUM-VALIDATION 1
	disableDenyScripts bool  // DEBUG SET-DISABLE-DENY-SCRIPTS 1
	packedThreshold    int64 // DEBUG QUICKLIST-PACKED-THRESHOLD (0: 1 GB); lists take it as they change
}

// cmdDebugMore runs the subcommands of this file; false when sub is none
// of them (or has the wrong number of arguments).
func cmdDebugMore(c *Client, args [][]byte) bool {
	s := c.srv
	sub := args[1]
	n := len(args)
	switch {
	case eqFold(sub, "populate") && n >= 3 && n <= 5:
		debugPopulate(c, args)
	case eqFold(sub, "protocol") && n == 3:
		debugProtocol(c, args[2])
	case eqFold(sub, "change-repl-id") && n == 2:
		s.log.Warn().Msg("Changing replication IDs after receiving DEBUG change-repl-id")
		s.repl.ids.Reset(s.repl.rnd) // changeReplicationId + clearReplicationId2
		c.w.OK()
	case eqFold(sub, "htstats") && n == 3:
		dbid, ok := parseInt(args[2])
		if !ok {
			c.w.Error(ErrNotInteger)
			return true
		}
		if dbid < 0 || dbid >= int64(len(s.ks.DBs)) {
			c.w.Error("ERR Out of range database")
			return true
		}
		main, expires := s.ks.DBs[dbid].HTStats()
		var b strings.Builder
		b.WriteString("[Dictionary HT]\n")
		writeDictStats(&b, main)
		b.WriteString("[Expires HT]\n")
		writeDictStats(&b, expires)
		c.w.Verbatim("txt", b.String())
	case eqFold(sub, "htstats-key") && n == 3:
		e := c.selectedDB().LookupNoTouch(args[2], s.nowMs)
		if e == nil {
			c.w.Error(ErrNoSuchKey)
			return true
		}
		st, ok := keyspace.ValueHTStats(e.Value())
		if !ok {
			c.w.Error("ERR The value stored at the specified key is not represented using an hash table")
			return true
		}
		var b strings.Builder
		writeDictStats(&b, st)
		c.w.Verbatim("txt", b.String())
	case eqFold(sub, "listpack") && n == 3:
		e := c.selectedDB().LookupNoTouch(args[2], s.nowMs)
		switch {
		case e == nil:
			c.w.Error(ErrNoSuchKey)
		case e.Value().Encoding() != keyspace.EncodingListpack:
			c.w.Error("ERR Not a listpack encoded object.")
		default:
			// lpRepr prints to stdout; Vigil writes a summary to the log.
			s.log.Info().Msgf("DEBUG LISTPACK %s: %s", args[2], s.debugObject(e))
			c.w.Simple("Listpack structure printed on stdout")
		}
	case eqFold(sub, "quicklist") && (n == 3 || n == 4):
		e := c.selectedDB().LookupNoTouch(args[2], s.nowMs)
		switch {
		case e == nil:
			c.w.Error(ErrNoSuchKey)
		case e.Value().Encoding() != keyspace.EncodingQuicklist:
			c.w.Error("ERR Not a quicklist encoded object.")
		default:
			// quicklistRepr prints to stdout; Vigil writes it to the log.
			full := n == 4 && atoi(args[3]) != 0
			s.log.Info().Msgf("DEBUG QUICKLIST %s:\n%s", args[2], e.Value().(*keyspace.List).QuicklistRepr(full))
			c.w.Simple("Quicklist structure printed on stdout")
		}
	case eqFold(sub, "structsize") && n == 2:
		// The x86_64 sizes of Redis's structures, which Vigil's MEMORY
		// accounting models.
		c.w.BulkString("bits:64 robj:16 dictentry:24 sdshdr5:1 sdshdr8:3 sdshdr16:5 sdshdr32:9 sdshdr64:17 ")
	case eqFold(sub, "stringmatch-test") && n == 2:
		c.w.Simple("Apparently Redis did not crash: test passed")
	case eqFold(sub, "quicklist-packed-threshold") && n == 3:
		sz, ok := configs.Memtoull(string(args[2]))
		if !ok || sz > 1<<32-1<<20 { // quicklistisSetPackedThreshold
			c.w.Error("ERR argument must be a memory value bigger than 1 and smaller than 4gb")
			return true
		}
		// Redis's packed_threshold is the process's; here the server's
		// (one server a process), set on each list a command changes.
		s.dbg.packedThreshold = int64(sz)
		c.w.OK()
	case eqFold(sub, "set-skip-checksum-validation") && n == 3:
		s.dbg.skipChecksum = atoi(args[2]) != 0
		c.w.OK()
	case eqFold(sub, "set-disable-deny-scripts") && n == 3:
		s.dbg.disableDenyScripts = atoi(args[2]) != 0
		c.w.OK()
	case eqFold(sub, "pause-cron") && n == 3:
		s.dbg.pauseCron = atoi(args[2]) != 0
		c.w.OK()
	case eqFold(sub, "replicate") && n >= 3:
		// replicationFeedSlaves(server.slaves, -1, argv+2): the arguments
		// go to the replicas and the backlog as a command, not executed
		// and not written to the AOF, with no SELECT before them; a
		// replica feeds nothing.
		if r := &s.repl; !r.applying && r.backlog != nil && r.link == nil {
			s.replFeed(resp.AppendCommand(nil, args[2:]...))
		}
		c.w.OK()
	case eqFold(sub, "aof-flush-sleep") && n == 3:
		c.w.OK() // server.aof_flush_sleep: Vigil's AOF has no such test hook
	case eqFold(sub, "leak") && n == 3:
		c.w.OK() // sdsdup of the argument, never freed: nothing to leak here
	case eqFold(sub, "drop-cluster-packet-filter") && n == 3:
		if _, ok := parseInt(args[2]); !ok {
			c.w.Error(ErrNotInteger)
			return true
		}
		c.w.OK()
	case eqFold(sub, "clusterlink") && n == 5 && eqFold(args[2], "kill"):
		c.w.Error("ERR Debug option only available for cluster mode enabled setup!")
	case eqFold(sub, "config-rewrite-force-all") && n == 2:
		if s.cfg.File == "" {
			// rewriteConfig(NULL, 1) fails with EFAULT in Redis.
			c.w.Error("ERR CONFIG-REWRITE-FORCE-ALL failed: Bad address")
			return true
		}
		if err := s.cfg.RewriteForceAll(); err != nil {
			c.w.Error("ERR CONFIG-REWRITE-FORCE-ALL failed: " + strings.TrimPrefix(configError(err), "ERR Rewriting config file: "))
			return true
		}
		c.w.OK()
	case eqFold(sub, "replybuffer") && n == 4:
		// The modeled reply buffers' cron settings (bufmodel.go).
		switch {
		case eqFold(args[2], "peak-reset-time"):
			switch {
			case eqFold(args[3], "never"):
				s.bufm.peakResetMs = -1
			case eqFold(args[3], "reset"):
				s.bufm.peakResetMs = replyBufPeakResetDefMs
			default:
				v, ok := parseInt(args[3])
				if !ok {
					c.w.Error(ErrNotInteger)
					return true
				}
				s.bufm.peakResetMs = v
			}
		case eqFold(args[2], "resizing"):
			v, _ := parseInt(args[3]) // atoi: not a number is 0
			s.bufm.resizingOff = v == 0
		default:
			c.w.Error(errSubcommandSyntax(sub, "DEBUG"))
			return true
		}
		c.w.OK()
	case eqFold(sub, "client-eviction") && n == 2:
		debugClientEviction(c)
	default:
		return false
	}
	return true
}

// atoi is C's atoi as DEBUG reads its 0/1 flags: leading digits, garbage
// is 0.
func atoi(b []byte) int64 {
	s := strings.TrimLeft(string(b), " \t\n\v\f\r")
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	v, _ := strconv.ParseInt(s[:i], 10, 64)
	return v
}

// debugPopulate is DEBUG POPULATE count [prefix] [size]: keys prefix:N
// (default "key:N") for N in 0..count-1 that do not exist get the string
// "value:N", cut or padded with zero bytes to size when size is given.
// Like Redis, nothing is propagated and the dirty counter does not move;
// WATCHed keys are touched.
func debugPopulate(c *Client, args [][]byte) {
	// getPositiveLongFromObjectOrReply: one error for both.
	count, ok := parseInt(args[2])
	if !ok || count < 0 {
		c.w.Error(ErrPositive)
		return
	}
	var size int64
	if len(args) == 5 {
		if size, ok = parseInt(args[4]); !ok || size < 0 {
			c.w.Error(ErrPositive)
			return
		}
	}
	prefix := "key"
	if len(args) >= 4 {
		prefix = string(args[3])
	}
	db := c.selectedDB()
	var key, val []byte
	for j := int64(0); j < count; j++ {
		key = strconv.AppendInt(append(append(key[:0], prefix...), ':'), j, 10)
		if db.Lookup(key, c.srv.nowMs) != nil { // lookupKeyWrite
			continue
		}
		val = strconv.AppendInt(append(val[:0], "value:"...), j, 10)
		v := val
		if size > 0 {
			v = make([]byte, size)
			copy(v, val)
		}
		db.SetString(key, copyBytes(v), keyspace.StringAuto, c.srv.nowMs, false)
		c.touch(key)
	}
	c.w.OK()
}

// debugProtocol is DEBUG PROTOCOL type: a sample reply of each RESP3 type
// (RESP2 clients get the RESP2 form; push is refused to them).
func debugProtocol(c *Client, name []byte) {
	w := &c.w
	switch {
	case eqFold(name, "string"):
		w.BulkString("Hello World")
	case eqFold(name, "integer"):
		w.Int(12345)
	case eqFold(name, "double"):
		w.Double(3.141)
	case eqFold(name, "bignum"):
		w.BigNumber("1234567999999999999999999999999999999")
	case eqFold(name, "null"):
		w.Null()
	case eqFold(name, "array"):
		w.ArrayLen(3)
		for j := int64(0); j < 3; j++ {
			w.Int(j)
		}
	case eqFold(name, "set"):
		w.SetLen(3)
		for j := int64(0); j < 3; j++ {
			w.Int(j)
		}
	case eqFold(name, "map"):
		w.MapLen(3)
		for j := int64(0); j < 3; j++ {
			w.Int(j)
			w.Bool(j == 1)
		}
	case eqFold(name, "attrib"):
		if w.Proto >= 3 {
			w.Raw([]byte("|1\r\n")) // addReplyAttributeLen
			w.BulkString("key-popularity")
			w.ArrayLen(2)
			w.BulkString("key:123")
			w.Int(90)
		}
		w.BulkString("Some real reply following the attribute")
	case eqFold(name, "push"):
		if w.Proto < 3 {
			w.Error("ERR RESP2 is not supported by this command")
			return
		}
		w.PushLen(2)
		w.BulkString("server-cpu-usage")
		w.Int(42)
		w.BulkString("Some real reply following the push reply")
	case eqFold(name, "true"):
		w.Bool(true)
	case eqFold(name, "false"):
		w.Bool(false)
	case eqFold(name, "verbatim"):
		w.Verbatim("txt", "This is a verbatim\nstring")
	default:
		w.Error("ERR Wrong protocol type name. Please use one of the following: string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false")
	}
}

// writeDictStats is dictGetStats: each table's dictGetStatsHt text.
func writeDictStats(b *strings.Builder, tables []keyspace.HTStats) {
	for i, t := range tables {
		name := "main hash table"
		if i == 1 {
			name = "rehashing target"
		}
		fmt.Fprintf(b, "Hash table %d stats (%s):\n", i, name)
		if t.Used == 0 {
			b.WriteString("No stats available for empty dictionaries\n")
			continue
		}
		slots, maxChain, total := 0, 0, 0
		for n, k := range t.Chains {
			if n > 0 && k > 0 {
				slots += k
				maxChain = n
				total += n * k
			}
		}
		fmt.Fprintf(b, " table size: %d\n number of elements: %d\n different slots: %d\n max chain length: %d\n"+
			" avg chain length (counted): %.02f\n avg chain length (computed): %.02f\n Chain length distribution:\n",
			t.Size, t.Used, slots, maxChain, float32(total)/float32(slots), float32(t.Used)/float32(slots))
		for n, k := range t.Chains {
			if k == 0 {
				continue
			}
			ge := ""
			if n == len(t.Chains)-1 {
				ge = ">= "
			}
			fmt.Fprintf(b, "   %s%d: %d (%.02f%%)\n", ge, n, k, float32(k)/float32(t.Size)*100)
		}
	}
}

// Client eviction buckets (server.h CLIENT_MEM_USAGE_BUCKET_*).
const (
	clientMemBucketMinLog = 15
	clientMemBucketMaxLog = 33
	clientMemBuckets      = 1 + clientMemBucketMaxLog - clientMemBucketMinLog
)

// debugClientEviction is DEBUG CLIENT-EVICTION: with maxmemory-clients
// set, the memory of the clients eviction may pick (normal and pub/sub
// clients without NO-EVICT), by power-of-two bucket as Redis groups them.
func debugClientEviction(c *Client) {
	s := c.srv
	if g := s.cfg.Get("maxmemory-clients"); len(g) == 2 && g[1] == "0" {
		c.w.Error("ERR maxmemory-clients is disabled.")
		return
	}
	var mem [clientMemBuckets]int64
	var clients [clientMemBuckets]int
	if bs := s.cmem.buckets; bs != nil { // clientevict.go
		for k := range bs {
			mem[k] = bs[k].sum
			for cl := bs[k].head; cl != nil; cl = cl.memNext {
				clients[k]++
			}
		}
	}
	var b strings.Builder
	for j := 0; j < clientMemBuckets; j++ {
		if j == 0 {
			b.WriteString("bucket          0")
		} else {
			fmt.Fprintf(&b, "bucket %10d", uint64(1)<<(j-1+clientMemBucketMinLog))
		}
		if j == clientMemBuckets-1 {
			b.WriteString("+            : ")
		} else {
			fmt.Fprintf(&b, " - %10d: ", uint64(1)<<(j+clientMemBucketMinLog)-1)
		}
		fmt.Fprintf(&b, "tot-mem: %10d, clients: %d\n", mem[j], clients[j])
	}
	c.w.Verbatim("txt", b.String())
}
