package server

import (
	"math"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/vigil-kv/vigil/server/keyspace"
)

// MEMORY, as Redis 7.0.15's object.c memoryCommand.
//
// MEMORY USAGE computes what Redis 7.0 (built with jemalloc, as Debian's
// redis-server) would answer for the key: objectComputeSize of the value,
// plus the key's sds allocation, plus sizeof(dictEntry). The allocations are
// computed by the value model (keyspace.Value.Size, objectComputeSize);
// see keyspace.String.Size for where that is exact and where it is an
// estimate. MEMORY STATS and DOCTOR report the figures of
// INFO memory (Go's heap stands in for jemalloc's), MALLOC-STATS answers as
// a Redis built without jemalloc does.

func init() {
	slow := []string{"slow"}
	register(&Command{Name: "memory", Arity: -2, ACL: slow, Subs: []*Command{
		{Name: "doctor", Arity: 2, ACL: slow, Handler: cmdMemoryDoctor},
		{Name: "malloc-stats", Arity: 2, ACL: slow, Handler: cmdMemoryMallocStats},
		{Name: "purge", Arity: 2, ACL: slow, Handler: cmdMemoryPurge},
		{Name: "stats", Arity: 2, ACL: slow, Handler: cmdMemoryStats},
		{Name: "usage", Arity: -3, Flags: FlagReadonly, FirstKey: 2, LastKey: 2, Step: 1, ACL: []string{"read", "slow"}, Handler: cmdMemoryUsage},
		{Name: "help", Arity: 2, Flags: FlagLoading | FlagStale, ACL: slow, Handler: helpHandler("MEMORY", memoryHelp)},
	}})
}

// memoryHelp is memoryCommand's help text (addReplyHelp adds the frame).
var memoryHelp = []string{
	"DOCTOR",
	"    Return memory problems reports.",
	"MALLOC-STATS",
	"    Return internal statistics report from the memory allocator.",
	"PURGE",
	"    Attempt to purge dirty pages for reclamation by the allocator.",
	"STATS",
	"    Return information about the memory usage of the server.",
	"USAGE <key> [SAMPLES <count>]",
	"    Return memory in bytes used by <key> and its value. Nested values are",
	"    sampled up to <count> times (default: 5, 0 means sample all).",
}

// --- MEMORY USAGE ----------------------------------------------------------------

// memDoctorMinBytes: below this MEMORY DOCTOR declines to diagnose.
const memDoctorMinBytes = 5 << 20

// Sizes of Redis 7.0's structures on x86_64 (MEMORY STATS overheads).
const (
	robjSize         = keyspace.RobjSize
	dictEntrySize    = keyspace.DictEntrySize
	dictEntryPtrSize = keyspace.DictEntryPtrSize
)

// keyMemoryUsage is MEMORY USAGE's figure for key holding e: the value
// (objectComputeSize, sampling samples elements of an aggregate), the key's
// sds (dbAdd stores an exact-fit sdsdup) and the dictEntry.
func keyMemoryUsage(key []byte, e *keyspace.Entry, samples int) uint64 {
	return e.Value().Size(samples) + keyspace.SdsNewSize(uint64(len(key))) + dictEntrySize
}

// cmdMemoryUsage: the SAMPLES option is validated as Redis does and passed
// to Value.Size (OBJ_COMPUTE_SIZE_DEF_SAMPLES is 5). Like Redis's dictFind,
// the lookup does not expire the key, touch it or count a hit or miss.
func cmdMemoryUsage(c *Client, args [][]byte) {
	samples := int64(5)
	for j := 3; j < len(args); j++ {
		if !eqFold(args[j], "samples") || j+1 >= len(args) {
			c.w.Error(ErrSyntax)
			return
		}
		var ok bool
		samples, ok = parseInt(args[j+1])
		if !ok {
			c.w.Error(ErrNotInteger)
			return
		}
		if samples < 0 {
			c.w.Error(ErrSyntax)
			return
		}
		j++
	}
	e := c.selectedDB().Peek(args[2])
	if e == nil {
		c.w.Null()
		return
	}
	c.w.Int(int64(keyMemoryUsage(args[2], e, int(min(samples, math.MaxInt32)))))
}

// --- MEMORY STATS and DOCTOR: getMemoryOverheadData ------------------------------

// memOverhead is redisMemOverhead. The byte figures are INFO memory's (see
// memoryOverhead); the ratios are computed from them in C float, as Redis
// does.
type memOverhead struct {
	peakAllocated, totalAllocated, startupAllocated   int64
	replBacklog, clientsSlaves, clientsNormal         int64
	clusterLinks, aofBuffer, luaCaches, functionCache int64
	dbs                                               []dbOverhead
	overheadTotal, totalKeys, bytesPerKey, dataset    int64
	datasetPerc, peakPerc                             float32

	allocatorAllocated, allocatorActive, allocatorResident int64
	allocatorFrag, allocatorRSS, rssExtra, totalFrag       float32
	allocatorFragBytes, allocatorRSSBytes                  int64
	rssExtraBytes, totalFragBytes                          int64

	allocator string // ZMALLOC_LIB: INFO's mem_allocator
}

// dbOverhead is one non-empty database's hash-table overhead.
type dbOverhead struct {
	id                              int
	htMain, htExpires, htSlotToKeys int64
}

// infoFields runs one INFO section generator and returns its fields, so
// that MEMORY STATS and DOCTOR report the very figures INFO computes.
func (s *Server) infoFields(gen func(*Server, *infoWriter)) map[string]string {
	w := &infoWriter{}
	gen(s, w)
	f := map[string]string{}
	for _, line := range strings.Split(string(w.b), "\r\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			f[k] = v
		}
	}
	return f
}

// hashTableOverhead is getMemoryOverheadData's per-database figures:
// main is the entries, slots and robj headers of the keys, expires the
// entries and slots of the TTL table. The slot-to-keys map exists only in
// cluster mode.
func hashTableOverhead(id, keys, keySlots, expires, expireSlots int) dbOverhead {
	return dbOverhead{
		id:        id,
		htMain:    int64(keys)*dictEntrySize + int64(keySlots)*dictEntryPtrSize + int64(keys)*robjSize,
		htExpires: int64(expires)*dictEntrySize + int64(expireSlots)*dictEntryPtrSize,
	}
}

// memoryOverhead is getMemoryOverheadData over INFO memory's figures: the
// totals, the client and buffer memory, the overhead and the dataset are
// INFO's used_memory*, mem_* and allocator_* fields (so, as INFO does, it
// raises the recorded peak to the current figure); the per-database
// hash-table overheads are computed from the key counts.
func (s *Server) memoryOverhead() memOverhead {
	f := s.infoFields((*Server).infoMemory)
	num := func(k string) int64 {
		n, _ := strconv.ParseInt(f[k], 10, 64)
		return n
	}
	mh := memOverhead{
		peakAllocated:      num("used_memory_peak"),
		totalAllocated:     num("used_memory"),
		startupAllocated:   num("used_memory_startup"),
		replBacklog:        num("mem_replication_backlog"),
		clientsSlaves:      num("mem_clients_slaves"),
		clientsNormal:      num("mem_clients_normal"),
		clusterLinks:       num("mem_cluster_links"),
		aofBuffer:          num("mem_aof_buffer"),
		luaCaches:          num("used_memory_scripts_eval"),
		functionCache:      num("used_memory_functions"),
		overheadTotal:      num("used_memory_overhead"),
		dataset:            num("used_memory_dataset"),
		allocatorAllocated: num("allocator_allocated"),
		allocatorActive:    num("allocator_active"),
		allocatorResident:  num("allocator_resident"),
		allocatorFragBytes: num("allocator_frag_bytes"),
		allocatorRSSBytes:  num("allocator_rss_bytes"),
		rssExtraBytes:      num("rss_overhead_bytes"),
		totalFragBytes:     num("mem_fragmentation_bytes"),
		allocator:          f["mem_allocator"],
	}
	for i, db := range s.ks.DBs {
		if n := db.Len(); n > 0 {
			mh.totalKeys += int64(n)
			mh.dbs = append(mh.dbs, hashTableOverhead(i, n, db.Slots(), db.ExpiresLen(), db.ExpiresSlots()))
		}
	}
	mh.derive(num("used_memory_rss"))
	return mh
}

// derive computes getMemoryOverheadData's ratios and per-key figures from
// the byte counts (rss is the process RSS).
func (mh *memOverhead) derive(rss int64) {
	mh.totalFrag = ratio32(rss, mh.totalAllocated)
	mh.allocatorFrag = ratio32(mh.allocatorActive, mh.allocatorAllocated)
	mh.allocatorRSS = ratio32(mh.allocatorResident, mh.allocatorActive)
	mh.rssExtra = ratio32(rss, mh.allocatorResident)
	mh.peakPerc = float32(mh.totalAllocated) * 100 / float32(mh.peakAllocated)
	net := int64(1)
	if mh.totalAllocated > mh.startupAllocated {
		net = mh.totalAllocated - mh.startupAllocated
	}
	mh.datasetPerc = float32(mh.dataset) * 100 / float32(net)
	if mh.totalKeys > 0 {
		mh.bytesPerKey = net / mh.totalKeys
	}
}

// ratio32 is C's (float)a/b (a/0 is +Inf, as in C).
func ratio32(a, b int64) float32 { return float32(a) / float32(b) }

func cmdMemoryStats(c *Client, args [][]byte) {
	mh := c.srv.memoryOverhead()
	w := &c.w
	w.MapLen(27 + len(mh.dbs))
	kv := func(k string, v int64) { w.BulkString(k); w.Int(v) }
	kd := func(k string, v float32) { w.BulkString(k); w.Double(float64(v)) }
	kv("peak.allocated", mh.peakAllocated)
	kv("total.allocated", mh.totalAllocated)
	kv("startup.allocated", mh.startupAllocated)
	kv("replication.backlog", mh.replBacklog)
	kv("clients.slaves", mh.clientsSlaves)
	kv("clients.normal", mh.clientsNormal)
	kv("cluster.links", mh.clusterLinks)
	kv("aof.buffer", mh.aofBuffer)
	kv("lua.caches", mh.luaCaches)
	kv("functions.caches", mh.functionCache)
	for _, db := range mh.dbs {
		w.BulkString("db." + strconv.Itoa(db.id))
		w.MapLen(3)
		kv("overhead.hashtable.main", db.htMain)
		kv("overhead.hashtable.expires", db.htExpires)
		kv("overhead.hashtable.slot-to-keys", db.htSlotToKeys)
	}
	kv("overhead.total", mh.overheadTotal)
	kv("keys.count", mh.totalKeys)
	kv("keys.bytes-per-key", mh.bytesPerKey)
	kv("dataset.bytes", mh.dataset)
	kd("dataset.percentage", mh.datasetPerc)
	kd("peak.percentage", mh.peakPerc)
	kv("allocator.allocated", mh.allocatorAllocated)
	kv("allocator.active", mh.allocatorActive)
	kv("allocator.resident", mh.allocatorResident)
	kd("allocator-fragmentation.ratio", mh.allocatorFrag)
	kv("allocator-fragmentation.bytes", mh.allocatorFragBytes)
	kd("allocator-rss.ratio", mh.allocatorRSS)
	kv("allocator-rss.bytes", mh.allocatorRSSBytes)
	kd("rss-overhead.ratio", mh.rssExtra)
	kv("rss-overhead.bytes", mh.rssExtraBytes)
	kd("fragmentation", mh.totalFrag)
	kv("fragmentation.bytes", mh.totalFragBytes)
}

// doctorInput is what getMemoryDoctorReport looks at besides the overhead
// data.
type doctorInput struct {
	clients, replicas int // listLength(server.clients), of which replicas
	scripts           int // dictSize(evalScriptsDict())
}

// memoryDoctorReport is getMemoryDoctorReport.
func memoryDoctorReport(mh memOverhead, in doctorInput) string {
	var empty, bigPeak, highFrag, highAllocFrag, highAllocRSS, highProcRSS, bigReplicaBuf, bigClientBuf, manyScripts bool
	reports := 0
	flag := func(b *bool, cond bool) {
		if cond {
			*b = true
			reports++
		}
	}
	if mh.totalAllocated < memDoctorMinBytes {
		flag(&empty, true)
	} else {
		flag(&bigPeak, ratio32(mh.peakAllocated, mh.totalAllocated) > 1.5)
		flag(&highFrag, mh.totalFrag > 1.4 && mh.totalFragBytes > 10<<20)
		flag(&highAllocFrag, mh.allocatorFrag > 1.1 && mh.allocatorFragBytes > 10<<20)
		flag(&highAllocRSS, mh.allocatorRSS > 1.1 && mh.allocatorRSSBytes > 10<<20)
		flag(&highProcRSS, mh.rssExtra > 1.1 && mh.rssExtraBytes > 10<<20)
		if normal := in.clients - in.replicas; normal > 0 {
			flag(&bigClientBuf, mh.clientsNormal/int64(normal) > 200<<10)
		}
		flag(&bigReplicaBuf, in.replicas > 0 && mh.clientsSlaves > 10<<20)
		flag(&manyScripts, in.scripts > 1000)
	}
	switch {
	case reports == 0:
		return "Hi Sam, I can't find any memory issue in your instance. " +
			"I can only account for what occurs on this base.\n"
	case empty:
		return "Hi Sam, this instance is empty or is using very little memory, " +
			"my issues detector can't be used in these conditions. " +
			"Please, leave for your mission on Earth and fill it with some data. " +
			"The new Sam and I will be back to our programming as soon as I " +
			"finished rebooting.\n"
	}
	var b strings.Builder
	b.WriteString("Sam, I detected a few issues in this Redis instance memory implants:\n\n")
	for _, r := range []struct {
		on   bool
		text string
	}{
		{bigPeak, " * Peak memory: In the past this instance used more than 150% the memory that is currently using. The allocator is normally not able to release memory after a peak, so you can expect to see a big fragmentation ratio, however this is actually harmless and is only due to the memory peak, and if the Redis instance Resident Set Size (RSS) is currently bigger than expected, the memory will be used as soon as you fill the Redis instance with more data. If the memory peak was only occasional and you want to try to reclaim memory, please try the MEMORY PURGE command, otherwise the only other option is to shutdown and restart the instance.\n\n"},
		{highFrag, " * High total RSS: This instance has a memory fragmentation and RSS overhead greater than 1.4 (this means that the Resident Set Size of the Redis process is much larger than the sum of the logical allocations Redis performed). This problem is usually due either to a large peak memory (check if there is a peak memory entry above in the report) or may result from a workload that causes the allocator to fragment memory a lot. If the problem is a large peak memory, then there is no issue. Otherwise, make sure you are using the Jemalloc allocator and not the default libc malloc. Note: The currently used allocator is \"" + mh.allocator + "\".\n\n"},
		{highAllocFrag, " * High allocator fragmentation: This instance has an allocator external fragmentation greater than 1.1. This problem is usually due either to a large peak memory (check if there is a peak memory entry above in the report) or may result from a workload that causes the allocator to fragment memory a lot. You can try enabling 'activedefrag' config option.\n\n"},
		{highAllocRSS, " * High allocator RSS overhead: This instance has an RSS memory overhead is greater than 1.1 (this means that the Resident Set Size of the allocator is much larger than the sum what the allocator actually holds). This problem is usually due to a large peak memory (check if there is a peak memory entry above in the report), you can try the MEMORY PURGE command to reclaim it.\n\n"},
		{highProcRSS, " * High process RSS overhead: This instance has non-allocator RSS memory overhead is greater than 1.1 (this means that the Resident Set Size of the Redis process is much larger than the RSS the allocator holds). This problem may be due to Lua scripts or Modules.\n\n"},
		{bigReplicaBuf, " * Big replica buffers: The replica output buffers in this instance are greater than 10MB for each replica (on average). This likely means that there is some replica instance that is struggling receiving data, either because it is too slow or because of networking issues. As a result, data piles on the master output buffers. Please try to identify what replica is not receiving data correctly and why. You can use the INFO output in order to check the replicas delays and the CLIENT LIST command to check the output buffers of each replica.\n\n"},
		{bigClientBuf, " * Big client buffers: The clients output buffers in this instance are greater than 200K per client (on average). This may result from different causes, like Pub/Sub clients subscribed to channels bot not receiving data fast enough, so that data piles on the Redis instance output buffer, or clients sending commands with large replies or very large sequences of commands in the same pipeline. Please use the CLIENT LIST command in order to investigate the issue if it causes problems in your instance, or to understand better why certain clients are using a big amount of memory.\n\n"},
		{manyScripts, " * Many scripts: There seem to be many cached scripts in this instance (more than 1000). This may be because scripts are generated and `EVAL`ed, instead of being parameterized (with KEYS and ARGV), `SCRIPT LOAD`ed and `EVALSHA`ed. Unless `SCRIPT FLUSH` is called periodically, the scripts' caches may end up consuming most of your memory.\n\n"},
	} {
		if r.on {
			b.WriteString(r.text)
		}
	}
	b.WriteString("I'm here to keep you safe, Sam. I want to help you.\n")
	return b.String()
}

// cmdMemoryDoctor: Vigil has no replicas and no script cache yet.
func cmdMemoryDoctor(c *Client, args [][]byte) {
	s := c.srv
	clients, _ := strconv.Atoi(s.infoFields((*Server).infoClients)["connected_clients"])
	c.w.Verbatim("txt", memoryDoctorReport(s.memoryOverhead(), doctorInput{clients: clients}))
}

// cmdMemoryMallocStats answers as a Redis built without jemalloc.
func cmdMemoryMallocStats(c *Client, args [][]byte) {
	c.w.BulkString("Stats not supported for the current allocator")
}

// cmdMemoryPurge returns freed heap to the OS, the nearest Go has to
// jemalloc_purge.
func cmdMemoryPurge(c *Client, args [][]byte) {
	debug.FreeOSMemory()
	c.w.OK()
}
