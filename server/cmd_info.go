package server

import (
	"github.com/vigil-kv/vigil/internal/redistext"

	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// INFO, as server.c genRedisInfoString (Redis 7.0): the same sections in
// the same order, the same field names. Fields of subsystems Vigil does not
// have (fork, AOF, modules, Lua memory, cluster) are reported with the
// values Redis shows when they are idle or disabled.

func init() {
	register(&Command{Name: "info", Arity: -1, Flags: FlagLoading | FlagStale, ACL: []string{"slow", "dangerous"}, Handler: cmdInfo})
}

// infoSection is one INFO section; dflt marks the sections of a bare INFO.
type infoSection struct {
	name, title string
	dflt        bool
	gen         func(s *Server, w *infoWriter)
}

// infoSections is genRedisInfoString's order.
var infoSections = []infoSection{
	{"server", "Server", true, (*Server).infoServer},
	{"clients", "Clients", true, (*Server).infoClients},
	{"memory", "Memory", true, (*Server).infoMemory},
	{"persistence", "Persistence", true, (*Server).infoPersistence},
	{"stats", "Stats", true, (*Server).infoStats},
	{"replication", "Replication", true, (*Server).infoReplication},
	{"cpu", "CPU", true, (*Server).infoCPU},
	{"modules", "Modules", true, func(*Server, *infoWriter) {}},
	{"commandstats", "Commandstats", false, (*Server).infoCommandStats},
	{"errorstats", "Errorstats", true, (*Server).infoErrorStats},
	{"latencystats", "Latencystats", false, (*Server).infoLatencyStats},
	{"cluster", "Cluster", true, func(_ *Server, w *infoWriter) { w.int("cluster_enabled", 0) }},
	{"keyspace", "Keyspace", true, (*Server).infoKeyspace},
}

// infoWriter appends "key:value\r\n" lines.
type infoWriter struct{ b []byte }

func (w *infoWriter) str(k, v string) {
	w.b = append(w.b, k...)
	w.b = append(w.b, ':')
	w.b = append(w.b, v...)
	w.b = append(w.b, '\r', '\n')
}

func (w *infoWriter) int(k string, v int64) { w.str(k, strconv.FormatInt(v, 10)) }

func (w *infoWriter) f2(k string, v float64) { w.str(k, strconv.FormatFloat(v, 'f', 2, 64)) }

// genInfo renders the selected sections (lower-case names; "all",
// "everything", "default" as in Redis 7.0; unknown names select nothing).
// Sections come in Redis's fixed order, each once.
func (s *Server) genInfo(names []string) string {
	want := map[string]bool{}
	all := false
	if len(names) == 0 {
		names = []string{"default"}
	}
	for _, n := range names {
		switch n = strings.ToLower(n); n {
		case "all", "everything":
			all = true
		case "default":
			for _, sec := range infoSections {
				if sec.dflt {
					want[sec.name] = true
				}
			}
		default:
			want[n] = true
		}
	}
	w := &infoWriter{}
	for _, sec := range infoSections {
		if !all && !want[sec.name] {
			continue
		}
		if len(w.b) > 0 {
			w.b = append(w.b, '\r', '\n')
		}
		w.b = append(w.b, "# "...)
		w.b = append(w.b, sec.title...)
		w.b = append(w.b, '\r', '\n')
		sec.gen(s, w)
	}
	return string(w.b)
}

func cmdInfo(c *Client, args [][]byte) {
	names := make([]string, len(args)-1)
	for i, a := range args[1:] {
		names[i] = string(a)
	}
	c.w.Verbatim("txt", c.srv.genInfo(names))
}

// --- server ------------------------------------------------------------------

var (
	hostInfo        = redistext.HostInfo
	multiplexingAPI = redistext.MultiplexingAPI
)

func (s *Server) infoServer(w *infoWriter) {
	osName, buildID := hostInfo()
	up := max(0, s.now.Sub(s.startTime).Milliseconds()/1000)
	exe, _ := os.Executable()
	cfgFile := s.cfgFile
	if cfgFile != "" && cfgFile != "-" {
		if abs, err := filepath.Abs(cfgFile); err == nil {
			cfgFile = abs
		}
	}
	w.str("redis_version", RedisVersion)
	w.str("vigil_version", Version)
	w.str("redis_git_sha1", "00000000")
	w.str("redis_git_dirty", "0")
	w.str("redis_build_id", buildID)
	w.str("redis_mode", "standalone")
	w.str("os", osName)
	w.int("arch_bits", strconv.IntSize)
	w.str("monotonic_clock", "POSIX clock_gettime")
	w.str("multiplexing_api", multiplexingAPI())
	w.str("atomicvar_api", "go-sync/atomic")
	w.str("gcc_version", "0.0.0")
	w.str("go_version", runtime.Version())
	w.int("process_id", int64(os.Getpid()))
	w.str("process_supervised", "no")
	w.str("run_id", s.runID)
	w.int("tcp_port", int64(s.tcpPort))
	w.int("server_time_usec", s.now.UnixMicro())
	w.int("uptime_in_seconds", up)
	w.int("uptime_in_days", up/86400)
	w.int("hz", int64(s.cfg.Hz))
	w.int("configured_hz", int64(s.cfg.Hz))
	w.int("lru_clock", (s.nowMs/1000)&(1<<24-1))
	w.str("executable", exe)
	w.str("config_file", cfgFile)
	w.int("io_threads_active", 0)
	if s.shutdownInitiated() {
		w.int("shutdown_in_milliseconds", s.shutdownWait.deadline.Sub(s.clock.Now()).Milliseconds())
	}
}

// --- clients -----------------------------------------------------------------

func (s *Server) infoClients(w *infoWriter) {
	n := 0
	s.clientsMu.Lock()
	for _, cl := range s.clients {
		// Killed ones are only unlinking; replicas are not counted
		// (listLength(server.clients) - listLength(server.slaves)).
		if !cl.killed.Load() && cl.replRole.Load() != kindReplica {
			n++
		}
	}
	s.clientsMu.Unlock()
	w.int("connected_clients", int64(n))
	w.int("cluster_connections", 0)
	w.int("maxclients", s.maxClients.Load())
	w.int("client_recent_max_input_buffer", 0)
	w.int("client_recent_max_output_buffer", 0)
	w.int("blocked_clients", s.blockedClients())
	w.int("tracking_clients", int64(len(s.tracking.byClient)))
	w.int("clients_in_timeout_table", int64(s.blocking.timed))
}

// --- memory ------------------------------------------------------------------

// memInfo is the Go runtime's view of the heap (runtime/metrics, which does
// not stop the world as runtime.ReadMemStats does).
type memInfo struct {
	heapObjects  uint64 // allocated objects: used_memory
	heapUnused   uint64 // in spans in use, not holding objects
	heapFree     uint64 // free spans still mapped
	heapReleased uint64 // returned to the OS
	total        uint64 // everything the runtime mapped
}

func readMem() memInfo {
	smp := []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"},
		{Name: "/memory/classes/heap/free:bytes"},
		{Name: "/memory/classes/heap/released:bytes"},
		{Name: "/memory/classes/total:bytes"},
	}
	metrics.Read(smp)
	v := func(i int) uint64 {
		if smp[i].Value.Kind() == metrics.KindUint64 {
			return smp[i].Value.Uint64()
		}
		return 0
	}
	return memInfo{v(0), v(1), v(2), v(3), v(4)}
}

// rssBytes is the resident set size from /proc/self/statm, or fallback.
func rssBytes(fallback uint64) uint64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return fallback
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return fallback
	}
	pages, err := strconv.ParseUint(f[1], 10, 64)
	if err != nil {
		return fallback
	}
	return pages * uint64(os.Getpagesize())
}

// totalSystemMemory is MemTotal from /proc/meminfo (0 when unknown).
func totalSystemMemory() uint64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, _ := strconv.ParseUint(fields[1], 10, 64)
			return kb * 1024
		}
	}
	return 0
}

// bytesToHuman is Redis's bytesToHuman.
func bytesToHuman(n uint64) string {
	f := float64(n)
	switch {
	case n < 1024:
		return strconv.FormatUint(n, 10) + "B"
	case n < 1<<20:
		return strconv.FormatFloat(f/(1<<10), 'f', 2, 64) + "K"
	case n < 1<<30:
		return strconv.FormatFloat(f/(1<<20), 'f', 2, 64) + "M"
	case n < 1<<40:
		return strconv.FormatFloat(f/(1<<30), 'f', 2, 64) + "G"
	case n < 1<<50:
		return strconv.FormatFloat(f/(1<<40), 'f', 2, 64) + "T"
	case n < 1<<60:
		return strconv.FormatFloat(f/(1<<50), 'f', 2, 64) + "P"
	}
	return strconv.FormatUint(n, 10) + "B"
}

func ratio(a, b uint64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func (s *Server) infoMemory(w *infoWriter) {
	m := readMem()
	used := s.usedMemory() // evict.go: the dataset's figure, which eviction uses
	if used > s.adm.memPeak {
		s.adm.memPeak = used
	}
	peak := s.adm.memPeak
	active := m.heapObjects + m.heapUnused
	resident := m.total - m.heapReleased
	rss := rssBytes(resident)
	startup := min(s.adm.memStartup, used)
	// getMemoryOverheadData: the overhead is the startup memory plus each
	// database's hash tables (clients, buffers and caches are 0 here); the
	// dataset is the rest.
	// The replicas' output is their share of the replication buffer
	// (repl_bufmem.go), as Redis 7.0 counts it, not stat_clients_type_memory.
	clientsNormal, _ := s.clientsMem() // info_clients_mem.go
	replBufMem := s.replBufferMem()
	replBacklog, clientsSlaves := s.replMemSplit(replBufMem)
	overhead := startup + uint64(clientsNormal+replBacklog+clientsSlaves)
	for i, db := range s.ks.DBs {
		if db.Len() > 0 {
			o := hashTableOverhead(i, db.Len(), db.Slots(), db.ExpiresLen(), db.ExpiresSlots())
			overhead += uint64(o.htMain + o.htExpires)
		}
	}
	dataset := uint64(0)
	if used > overhead {
		dataset = used - overhead
	}
	sysMem := totalSystemMemory()
	maxmem := uint64(max(s.cfg.Maxmemory, 0))
	w.int("used_memory", int64(used))
	w.str("used_memory_human", bytesToHuman(used))
	w.int("used_memory_rss", int64(rss))
	w.str("used_memory_rss_human", bytesToHuman(rss))
	w.int("used_memory_peak", int64(peak))
	w.str("used_memory_peak_human", bytesToHuman(peak))
	w.str("used_memory_peak_perc", strconv.FormatFloat(ratio(used, peak)*100, 'f', 2, 64)+"%")
	w.int("used_memory_overhead", int64(overhead))
	w.int("used_memory_startup", int64(startup))
	w.int("used_memory_dataset", int64(dataset))
	net := uint64(1)
	if used > startup {
		net = used - startup
	}
	w.str("used_memory_dataset_perc", strconv.FormatFloat(float64(float32(dataset)*100/float32(net)), 'f', 2, 64)+"%")
	w.int("allocator_allocated", int64(m.heapObjects))
	w.int("allocator_active", int64(active))
	w.int("allocator_resident", int64(resident))
	w.int("total_system_memory", int64(sysMem))
	w.str("total_system_memory_human", bytesToHuman(sysMem))
	vmEval, vmFunctions := s.evalVMMemory(), s.functionsVMMemory() // luamem.go
	w.int("used_memory_lua", vmEval)
	w.int("used_memory_vm_eval", vmEval)
	w.str("used_memory_lua_human", bytesToHuman(uint64(vmEval)))
	scriptsEval := int64(s.scriptsEvalMemory()) // scripting.go
	w.int("used_memory_scripts_eval", scriptsEval)
	w.int("number_of_cached_scripts", int64(s.cachedScripts()))
	nfuncs, nlibs := s.functionCounts() // functions.go
	w.int("number_of_functions", int64(nfuncs))
	w.int("number_of_libraries", int64(nlibs))
	w.int("used_memory_vm_functions", vmFunctions)
	w.int("used_memory_vm_total", vmEval+vmFunctions)
	w.str("used_memory_vm_total_human", bytesToHuman(uint64(vmEval+vmFunctions)))
	fnMem := s.functionsMemory()
	w.int("used_memory_functions", fnMem)
	w.int("used_memory_scripts", scriptsEval+fnMem)
	w.str("used_memory_scripts_human", bytesToHuman(uint64(scriptsEval+fnMem)))
	w.int("maxmemory", int64(maxmem))
	w.str("maxmemory_human", bytesToHuman(maxmem))
	w.str("maxmemory_policy", s.cfg.MaxmemoryPolicy)
	w.f2("allocator_frag_ratio", ratio(active, m.heapObjects))
	w.int("allocator_frag_bytes", int64(active)-int64(m.heapObjects))
	w.f2("allocator_rss_ratio", ratio(resident, active))
	w.int("allocator_rss_bytes", int64(resident)-int64(active))
	w.f2("rss_overhead_ratio", ratio(rss, resident))
	w.int("rss_overhead_bytes", int64(rss)-int64(resident))
	w.f2("mem_fragmentation_ratio", ratio(rss, used))
	w.int("mem_fragmentation_bytes", int64(rss)-int64(used))
	w.int("mem_not_counted_for_evict", int64(s.memNotCountedForEvict()))
	w.int("mem_replication_backlog", replBacklog)
	w.int("mem_total_replication_buffers", replBufMem)
	w.int("mem_clients_slaves", clientsSlaves)
	w.int("mem_clients_normal", clientsNormal)
	w.int("mem_cluster_links", 0)
	w.int("mem_aof_buffer", s.aofBufMem()) // persist_aof.go
	w.str("mem_allocator", "go")
	w.int("active_defrag_running", 0)
	w.int("lazyfree_pending_objects", 0)
	w.int("lazyfreed_objects", int64(s.stats.lazyfreed))
}

// --- persistence -------------------------------------------------------------

// infoPersistence: persist_rdb.go (infoPersistenceRDB).
func (s *Server) infoPersistence(w *infoWriter) { s.infoPersistenceRDB(w) }

// --- stats -------------------------------------------------------------------

func (s *Server) infoStats(w *infoWriter) {
	st := &s.stats
	ks := &s.ks.Stats
	a := &s.adm
	w.int("total_connections_received", st.totalConns.Load())
	w.int("total_commands_processed", st.commands)
	w.int("instantaneous_ops_per_sec", a.metrics[metricCommands].value())
	w.int("total_net_input_bytes", st.netInput.Load())
	w.int("total_net_output_bytes", st.netOutput.Load())
	w.int("total_net_repl_input_bytes", 0)
	w.int("total_net_repl_output_bytes", 0)
	w.f2("instantaneous_input_kbps", float64(a.metrics[metricNetInput].value())/1024)
	w.f2("instantaneous_output_kbps", float64(a.metrics[metricNetOutput].value())/1024)
	w.str("instantaneous_input_repl_kbps", "0.00")
	w.str("instantaneous_output_repl_kbps", "0.00")
	w.int("rejected_connections", st.rejectedConns.Load())
	w.int("sync_full", s.repl.syncFull) // repl
	w.int("sync_partial_ok", s.repl.partialOK)
	w.int("sync_partial_err", s.repl.partialErr)
	w.int("expired_keys", ks.ExpiredKeys)
	w.f2("expired_stale_perc", ks.ExpiredStalePerc*100)
	w.int("expired_time_cap_reached_count", ks.ExpiredTimeCapReachedCount)
	w.int("expire_cycle_cpu_milliseconds", ks.ExpireCycleMicros/1000)
	w.int("evicted_keys", st.evictedKeys)
	w.int("evicted_clients", s.cmem.evicted)
	exTotal, exCur := s.evictionExceededMs() // evict.go
	w.int("total_eviction_exceeded_time", exTotal)
	w.int("current_eviction_exceeded_time", exCur)
	w.int("keyspace_hits", st.keyspaceHits)
	w.int("keyspace_misses", st.keyspaceMisses)
	w.int("pubsub_channels", int64(len(s.pubsub.channels)))
	w.int("pubsub_patterns", int64(len(s.pubsub.patterns)))
	w.int("pubsubshard_channels", int64(len(s.pubsub.shard)))
	w.int("latest_fork_usec", st.forkUsec)
	w.int("total_forks", st.forks)
	w.int("migrate_cached_sockets", int64(len(s.migrateSockets)))
	w.int("slave_expires_tracked_keys", int64(s.ks.ReplicaKeysWithExpire()))
	w.int("active_defrag_hits", 0)
	w.int("active_defrag_misses", 0)
	w.int("active_defrag_key_hits", 0)
	w.int("active_defrag_key_misses", 0)
	w.int("total_active_defrag_time", 0)
	w.int("current_active_defrag_time", 0)
	tkeys, titems, tprefixes := s.trackingInfo()
	w.int("tracking_total_keys", tkeys)
	w.int("tracking_total_items", titems)
	w.int("tracking_total_prefixes", tprefixes)
	w.int("unexpected_error_replies", st.unexpectedErrorReplies)
	w.int("total_error_replies", st.errorReplies)
	w.int("dump_payload_sanitizations", 0)
	w.int("total_reads_processed", a.reads.Load())
	w.int("total_writes_processed", a.writes.Load())
	w.int("io_threaded_reads_processed", 0)
	w.int("io_threaded_writes_processed", 0)
	w.int("reply_buffer_shrinks", s.bufm.shrinks)
	w.int("reply_buffer_expands", s.bufm.expands)
}

// --- replication ---------------------------------------------------------------

// infoReplication is INFO replication (repl_master.go).
func (s *Server) infoReplication(w *infoWriter) {
	s.replInfo(w) // repl
	s.infoSyncAck(w)
	s.infoFence(w)
}

// --- cpu -----------------------------------------------------------------------

func tvString(tv syscall.Timeval) string {
	us := strconv.FormatInt(int64(tv.Usec), 10)
	return strconv.FormatInt(int64(tv.Sec), 10) + "." + strings.Repeat("0", max(0, 6-len(us))) + us
}

// infoCPU reports getrusage. Go has no main thread: the *_main_thread
// fields repeat the process totals.
func (s *Server) infoCPU(w *infoWriter) {
	var self, children syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	w.str("used_cpu_sys", tvString(self.Stime))
	w.str("used_cpu_user", tvString(self.Utime))
	w.str("used_cpu_sys_children", tvString(children.Stime))
	w.str("used_cpu_user_children", tvString(children.Utime))
	w.str("used_cpu_sys_main_thread", tvString(self.Stime))
	w.str("used_cpu_user_main_thread", tvString(self.Utime))
}

// --- commandstats, errorstats, latencystats ---------------------------------

func (s *Server) infoCommandStats(w *infoWriter) {
	for _, cmd := range allCommands {
		if cmd.Index() >= len(s.stats.cmds) {
			continue
		}
		st := s.stats.cmds[cmd.Index()]
		if st.calls == 0 && st.failed == 0 && st.rejected == 0 {
			continue
		}
		perCall := 0.0
		if st.calls > 0 {
			perCall = float64(st.usec) / float64(st.calls)
		}
		w.str("cmdstat_"+cmd.FullName(), "calls="+strconv.FormatInt(st.calls, 10)+
			",usec="+strconv.FormatInt(st.usec, 10)+
			",usec_per_call="+strconv.FormatFloat(perCall, 'f', 2, 64)+
			",rejected_calls="+strconv.FormatInt(st.rejected, 10)+
			",failed_calls="+strconv.FormatInt(st.failed, 10))
	}
}

func (s *Server) infoErrorStats(w *infoWriter) {
	codes := make([]string, 0, len(s.stats.errorCodes))
	for code := range s.stats.errorCodes {
		codes = append(codes, code)
	}
	sort.Strings(codes)
	for _, code := range codes {
		w.str("errorstat_"+code, "count="+strconv.FormatInt(s.stats.errorCodes[code], 10))
	}
}

// infoLatencyStats reports the latency-tracking-info-percentiles at the
// resolution of the power-of-two histograms.
func (s *Server) infoLatencyStats(w *infoWriter) {
	for _, cmd := range allCommands {
		h := s.histogramOf(cmd)
		if h == nil {
			continue
		}
		var v []byte
		for i, p := range s.cfg.LatencyTrackingInfoPercentiles {
			if i > 0 {
				v = append(v, ',')
			}
			v = append(v, 'p')
			v = strconv.AppendFloat(v, p, 'f', -1, 64)
			v = append(v, '=')
			v = strconv.AppendFloat(v, h.percentile(p), 'f', 3, 64)
		}
		w.str("latency_percentiles_usec_"+cmd.FullName(), string(v))
	}
}

// --- keyspace ------------------------------------------------------------------

func (s *Server) infoKeyspace(w *infoWriter) {
	for i, db := range s.ks.DBs {
		keys, expires := db.Len(), db.ExpiresLen()
		if keys == 0 && expires == 0 {
			continue
		}
		w.str("db"+strconv.Itoa(i), "keys="+strconv.Itoa(keys)+",expires="+strconv.Itoa(expires)+
			",avg_ttl="+strconv.FormatInt(db.AvgTTL(), 10))
	}
}
