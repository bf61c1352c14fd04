package server

import (
	"math"
	"time"

	"github.com/vigil-kv/vigil/configs"
	"github.com/vigil-kv/vigil/replication"
	"github.com/vigil-kv/vigil/server/keyspace"
)

// maxmemory and eviction: evict.c's performEvictions and processCommand's
// OOM check. The choice of keys is the keyspace's (keyspace.Evictor and
// Keyspace.Victim, pure and tested there); this file is the shell: when
// to evict, the memory figure it decides on, and what an eviction does
// besides deleting the key (evicted_keys, the "evicted" event, WATCH, the
// DEL or UNLINK on the write path).
//
// The memory figure is used_memory (usedMemory): the startup figure plus
// what the keyspace accounts for (keyspace.Keyspace.Memory, maintained
// incrementally) plus the AOF buffer. Eviction compares it, less
// mem_not_counted_for_evict (the AOF buffer, as
// freeMemoryGetNotCountedMemory), with maxmemory. With maxmemory 0 the only
// cost per command is the test of s.cfg.Maxmemory in call.

// maxStartupMemory caps used_memory_startup, the Go heap measured when the
// server is built (about 430 KB in a vigil-server process; Redis 7.0's is
// about 860 KB). It is part of used_memory, which eviction compares with
// maxmemory, so a process that builds a server after allocating much else
// (an embedder, a test binary) must not count its own heap.
const maxStartupMemory = 1 << 20

// ErrOOM is shared.oomerr.
const ErrOOM = "OOM command not allowed when used memory > 'maxmemory'."

// evictResult is performEvictions' EVICT_OK, EVICT_RUNNING, EVICT_FAIL.
type evictResult uint8

const (
	evictOK evictResult = iota
	evictRunning
	evictFail
)

// evictState is evict.c's and processCommand's state, guarded by mu.
type evictState struct {
	ev keyspace.Evictor
	// running: the last pass stopped at its time limit with memory still
	// over maxmemory (EVICT_RUNNING); the cron continues it, as
	// evictionTimeProc.
	running bool
	// preOOM is server.pre_command_oom_state: out of memory when the
	// top-level command (EVAL, EXEC) started.
	preOOM bool
	// configChanged: CONFIG SET changed maxmemory (updateMaxmemory
	// evicts once the directives are applied).
	configChanged bool
	// exceededSince is stat_last_eviction_exceeded_time (zero: not over
	// the limit); exceededTotal stat_total_eviction_exceeded_time.
	exceededSince time.Time
	exceededTotal time.Duration
}

// usedMemory is INFO's used_memory: the figure eviction decides on.
// The clients' memory is their figures as last counted
// (clientevict.go), as zmalloc counts their buffers, except that a
// replica's output buffer is the shared replication buffer from its
// position on (getClientOutputBufferMemoryUsage), allocated once for the
// backlog and all replicas: used_memory counts the buffer's blocks
// (repl_buffer_mem) instead. So a replica that leaves takes only its
// struct and query buffer with it at once, and the blocks it held go as
// the incremental trim frees them, as mem_not_counted_for_evict follows
// them (maxmemory.tcl "slave buffer are counted correctly").
func (s *Server) usedMemory() uint64 {
	clients := max(s.clientsMemTotal()-s.cmem.replObuf, 0)
	return s.adm.memStartup + s.ks.Memory() + uint64(max(s.aofBufferLen(), 0)) + uint64(clients) + uint64(max(s.replBufferMem(), 0))
}

// memNotCountedForEvict is freeMemoryGetNotCountedMemory: the AOF buffer
// and the replication buffer's memory beyond what the backlog accounts
// for (lock held). The backlog and the replicas share the buffer, so only
// what passes repl-backlog-size, with an approximation of its blocks'
// headers (one replBufBlock and listNode a 16 KB block, plus one), is the
// replicas' own; that holds with no replicas too, so the blocks a
// departed replica left for the trimming do not cause evictions. The AOF
// buffer counts as its allocation (aofBufMem).
func (s *Server) memNotCountedForEvict() uint64 {
	var n int64
	size, mem := s.replBacklogSize(), s.replBufferMem()
	if mem > size {
		counted := size + (size/replication.BlockSize+1)*replication.BlockOverhead
		n = max(mem-counted, 0)
	}
	return uint64(n) + uint64(s.aofBufMem())
}

// hashtableMaxLoadFactor is HASHTABLE_MAX_LOAD_FACTOR.
const hashtableMaxLoadFactor = 1.618

// dictExpandAllowed is server.c's dictExpandAllowed, the expandAllowed of
// the databases' key and expires dicts: below the maximum load factor a
// table only grows if its new buckets fit under maxmemory
// (overMaxmemoryAfterAlloc), so a rehash does not make the next command
// evict.
func (s *Server) dictExpandAllowed(moreMem uint64, usedRatio float64) bool {
	if usedRatio <= hashtableMaxLoadFactor {
		return !s.overMaxmemoryAfterAlloc(moreMem)
	}
	return true
}

// overMaxmemoryAfterAlloc is evict.c's: whether allocating moremem would
// take used memory, less what eviction does not count, past maxmemory.
func (s *Server) overMaxmemoryAfterAlloc(moremem uint64) bool {
	if s.cfg.Maxmemory <= 0 {
		return false
	}
	limit := uint64(s.cfg.Maxmemory)
	used := s.usedMemory()
	if used+moremem <= limit {
		return false
	}
	if nc := s.memNotCountedForEvict(); used > nc {
		used -= nc
	} else {
		used = 0
	}
	return used+moremem > limit
}

// maxmemoryState is getMaxmemoryState: whether memory is over maxmemory
// and by how much.
func (s *Server) maxmemoryState() (tofree uint64, over bool) {
	limit := uint64(s.cfg.Maxmemory)
	if s.cfg.Maxmemory <= 0 {
		return 0, false
	}
	used := s.usedMemory()
	if used <= limit {
		return 0, false
	}
	if nc := s.memNotCountedForEvict(); used > nc {
		used -= nc
	} else {
		used = 0
	}
	if used <= limit {
		return 0, false
	}
	return used - limit, true
}

// safeToEvict is isSafeToPerformEvictions: not while loading, not on a
// replica that ignores maxmemory, not while clients are paused.
func (s *Server) safeToEvict() bool {
	if s.rdb.loading {
		return false
	}
	if s.repl.link != nil && s.cfg.ReplicaIgnoreMaxmemory {
		return false
	}
	return s.pause.ch == nil
}

// applyEvictConfig copies maxmemory-policy, maxmemory-samples and
// lfu-decay-time to the evictor (from applyAtomics) and, after CONFIG SET
// maxmemory, evicts at once (updateMaxmemory).
func (s *Server) applyEvictConfig() {
	ev := &s.evict.ev
	p, _ := keyspace.ParsePolicy(s.cfg.MaxmemoryPolicy)
	if p != ev.Policy {
		ev.Reset()
	}
	ev.Policy = p
	ev.Samples = s.cfg.MaxmemorySamples
	ev.DecayTime = s.cfg.LFUDecayTime
	if s.evict.configChanged {
		s.evict.configChanged = false
		if s.cfg.Maxmemory > 0 {
			if tofree, over := s.maxmemoryState(); over {
				s.log.Warn().Msgf("WARNING: the new maxmemory value set via CONFIG SET (%d) is smaller than the current memory usage (%d). This will result in key eviction and/or the inability to accept new write commands depending on the maxmemory-policy.", s.cfg.Maxmemory, uint64(s.cfg.Maxmemory)+tofree)
			}
			// startEvictionTimeProc: Redis evicts from a time event, so
			// a CONFIG SET inside MULTI (or a script) evicts nothing
			// before the transaction ends; the cron (evictCron) or the
			// next command's check does it then.
			if s.execDepth > 1 {
				s.evict.running = true
			} else {
				s.performEvictions()
			}
		}
	}
}

// evictionTimeLimit is evictionTimeLimitUs for maxmemory-eviction-tenacity.
func evictionTimeLimit(tenacity int) int64 {
	if tenacity <= 10 {
		return 50 * int64(tenacity)
	}
	if tenacity < 100 {
		return int64(500 * math.Pow(1.15, float64(tenacity)-10))
	}
	return math.MaxInt64
}

// performEvictions is evict.c's performEvictions: while memory is over
// maxmemory, evict the key the policy selects. It returns evictFail when
// nothing (more) can be evicted and memory is still over the limit,
// evictRunning when it stopped at maxmemory-eviction-tenacity's time limit
// (the cron continues), else evictOK.
func (s *Server) performEvictions() (res evictResult) {
	s.evict.running = false
	if !s.safeToEvict() {
		return evictOK
	}
	defer s.updateEvictionMetrics(&res)
	tofree, over := s.maxmemoryState()
	if !over {
		return evictOK
	}
	if s.evict.ev.Policy == keyspace.NoEviction {
		return evictFail
	}
	limit := evictionTimeLimit(s.cfg.MaxmemoryEvictionTenacity)
	elapsed := s.elapsedUs(s.clock.Now())
	// The loop's time is the latency monitor's "eviction-cycle" event,
	// however it ends (evict.c's latencyStartMonitor before the loop).
	defer func() { s.latencyAddSampleIfNeeded("eviction-cycle", elapsed()/1000) }()
	// Each eviction propagates as a unit of its own, never wrapped in
	// MULTI, even when CONFIG SET maxmemory evicts inside a command
	// (7.0's propagate_no_multi with core_propagates): the command's
	// pending operations wait aside meanwhile.
	if s.execDepth > 0 {
		depth, pending := s.execDepth, s.pending
		s.execDepth, s.pending = 0, nil
		defer func() { s.execDepth, s.pending = depth, pending }()
	}
	lazy := s.cfg.LazyfreeLazyEviction
	var freed uint64
	for keys := 1; freed < tofree; keys++ {
		db, key, ok := s.ks.Victim(&s.evict.ev, s.nowMs, s.rng)
		if !ok {
			return evictFail
		}
		if lazy { // dbGenericDelete(db, key, lazyfree-lazy-eviction)
			if e := s.ks.DBs[db].LookupNoTouch([]byte(key), s.nowMs); e != nil {
				s.lazyfree(e.Value())
			}
		}
		n, found := s.ks.Evict(db, key)
		if !found { // cannot happen: Victim returns live keys
			return evictFail
		}
		freed += n
		s.stats.evictedKeys++
		s.notifyEvicted(db, key)
		s.propagateDeletion(db, []byte(key), lazy)
		if keys%16 == 0 && elapsed() > limit {
			// Stop here, memory still over: the cron goes on
			// (startEvictionTimeProc).
			if _, still := s.maxmemoryState(); still {
				s.evict.running = true
				return evictRunning
			}
			return evictOK
		}
	}
	return evictOK
}

// updateEvictionMetrics is performEvictions' update_metrics: the time
// spent over maxmemory (INFO stats *_eviction_exceeded_time).
func (s *Server) updateEvictionMetrics(res *evictResult) {
	now := s.clock.Now()
	if *res != evictOK {
		if s.evict.exceededSince.IsZero() {
			s.evict.exceededSince = now
		}
		return
	}
	if !s.evict.exceededSince.IsZero() {
		s.evict.exceededTotal += now.Sub(s.evict.exceededSince)
		s.evict.exceededSince = time.Time{}
	}
}

// evictionExceededMs is INFO stats' total_eviction_exceeded_time and
// current_eviction_exceeded_time, in milliseconds.
func (s *Server) evictionExceededMs() (total, current int64) {
	var cur time.Duration
	if !s.evict.exceededSince.IsZero() {
		cur = s.clock.Now().Sub(s.evict.exceededSince)
	}
	return (s.evict.exceededTotal + cur).Milliseconds(), cur.Milliseconds()
}

// notifyEvicted is what performEvictions signals for an evicted key:
// signalModifiedKey (WATCH) and the "evicted" event.
func (s *Server) notifyEvicted(db int, key string) {
	if s.tracking.keysOrPrefixes() { // tracking.go: signalModifiedKey(NULL, ...)
		s.trackingInvalidateKey(nil, []byte(key), true)
	}
	if len(s.watch.byClient) != 0 {
		s.touchWatchers(db, []byte(key))
	}
	if s.cfg.NotifyKeyspaceEvents&configs.NotifyEvicted != 0 {
		s.notifyPublish("evicted", []byte(key), db)
	}
}

// evictCron continues an eviction that stopped at its time limit
// (evictionTimeProc).
func (s *Server) evictCron() {
	if s.evict.running && s.cfg.Maxmemory > 0 {
		s.performEvictions()
	}
}

// oomRejects is processCommand's maxmemory block: evict what the policy
// allows and report whether cmd must be refused with -OOM. Call it only
// with maxmemory set. It records pre_command_oom_state for scripts.
func (s *Server) oomRejects(c *Client, cmd *Command) bool {
	out := s.performEvictions() == evictFail
	s.evict.preOOM = out
	if !out {
		return false
	}
	// Clients the server must obey (the master link, the AOF loader) and
	// replicas are never refused.
	if c.aofClient || c.kind() == kindMaster || c.kind() == kindReplica {
		return false
	}
	if cmd.Has(FlagDenyOOM) {
		return true
	}
	if c.multi != nil {
		switch cmd.FullName() {
		case "exec":
			// EXEC is refused when a queued command is denyoom
			// (mstate.cmd_flags).
			for _, q := range c.multi.cmds {
				if q.cmd.Has(FlagDenyOOM) {
					return true
				}
			}
			return false
		case "discard", "quit", "reset":
			return false
		}
		return true // queueing would use memory without bound
	}
	return false
}

// scriptVerifyOOM is scriptVerifyOOM for a command a script calls: a
// denyoom command is refused when memory was over maxmemory as the
// script started and the script has not written yet (wrote: after a
// write, refusing would break its atomicity). caller is the script's
// client.
func (s *Server) scriptVerifyOOM(caller *Client, cmd *Command, wrote bool) string {
	if s.cfg.Maxmemory <= 0 {
		return ""
	}
	obey := caller != nil && (caller.aofClient || caller.kind() == kindMaster)
	if !obey && !wrote && s.evict.preOOM && cmd.Has(FlagDenyOOM) {
		return ErrOOM
	}
	return ""
}
