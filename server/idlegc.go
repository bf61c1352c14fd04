package server

import (
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"sync/atomic"
	"time"
)

// # Returning a write burst's garbage when the server goes idle
//
// Go collects its heap as allocation goes on (GOGC, default 100: the next
// collection when the heap has grown by as much as was live after the
// last one), and nothing else runs one but the runtime's forced collection
// every two minutes; the background scavenger returns free pages only down
// to about the next collection's goal. So after a burst of writes that
// stops (a `redis-cli --pipe` load, a full sync, a migration), or a
// FLUSHALL or DEL of big values, up to a live heap's worth of garbage stays
// resident while the server idles: after a 1 M-key load and a FLUSHALL,
// vigil-server kept 166 MB of RSS for minutes, where Redis's RSS is what
// its allocator holds for live data. Redis users read RSS whenever they
// like (INFO's used_memory_rss, their container's memory).
//
// So once the server has run no command for idleGCAfter, and what a
// collection and a scavenge may give back is at least max(idleGCMinGarbage,
// an eighth of the live heap) — what the heap allocated and the keyspace
// freed (its used_memory figure) since the last collection, plus the free
// pages still resident — the cron starts a collection and returns the
// freed pages to the OS, off the lock (debug.FreeOSMemory, as MEMORY
// PURGE). It runs at most once per idle period, and only after a burst:
// the collection resets the counts. It costs nothing while commands flow, so it does not
// trade throughput or latency under load for RSS. Then the hook
// SetIdleRelease gave runs (vigil-server drops the binary's file pages the
// burst faulted in; the next commands fault back what they use, about 60
// minor faults). No memory limit is set
// (GOMEMLIMIT is honoured when given). GOGC is Go's default, 100, above a
// heap floor (gcFloorPercent, VIGIL_GC_FLOOR_MB, default 64 MB): below it
// the next collection comes when the heap reaches live + floor, so a small
// dataset under writes is collected rarely, each collection marking no
// more than before; a GOGC from the environment turns the floor off.

const (
	// idleGCAfter is how long the server must have run no command.
	idleGCAfter = time.Second
	// idleGCMinGarbage is the least garbage worth a collection of its own.
	idleGCMinGarbage = 4 << 20
)

// idleGC is the cron's state for it; guarded by mu except running.
type idleGC struct {
	lastCommands int64     // stats.commands at the last look
	lastActive   time.Time // when stats.commands last changed
	cycles       uint64    // completed GC cycles at the last look
	allocsAtGC   uint64    // cumulative heap allocation when cycles last changed
	usedAtGC     uint64    // the keyspace's memory then
	collected    bool      // a collection was started in this idle period
	dropped      uint64    // client buffers the cron dropped since (idlebuf.go)
	samples      []metrics.Sample
	running      atomic.Bool
	// release, when set (SetIdleRelease), runs after the collection, in
	// its goroutine.
	release func()
	// floor is the heap floor in bytes (gcFloorPercent), 0 for none;
	// percent is the GC percent last set for it, 0 before the first.
	floor       uint64
	percent     int
	floorCycles uint64 // cycles when gcFloorCron last ran
}

// GCFloorEnv names the environment variable that sets the heap floor in
// MB (default defaultGCFloorMB; 0 turns it off). It is ignored when GOGC
// is set.
const GCFloorEnv = "VIGIL_GC_FLOOR_MB"

const defaultGCFloorMB = 64

// gcFloorPercent is the GC percent that puts the next collection's goal at
// live + max(live, floor) (GOGC 100 above floor): a small heap is not
// collected every few MB of allocation. The mark's cost is the live heap's,
// so collections get rarer but not longer, and each one stalls the
// connections (the fractional mark worker, docs/benchmarks.md "Tail
// latency") no longer than before. Go's own floor, 4 MB, scales with the
// percent, so the percent is at most floor / 4 MB * 100.
func gcFloorPercent(floor, live uint64) int {
	const goMin = 4 << 20
	if floor <= live {
		return 100
	}
	return int(floor * 100 / max(live, goMin))
}

// gcFloorFromEnv is the heap floor in bytes the environment asks for.
func gcFloorFromEnv() uint64 {
	if os.Getenv("GOGC") != "" {
		return 0
	}
	mb := uint64(defaultGCFloorMB)
	if v, ok := os.LookupEnv(GCFloorEnv); ok {
		n, err := strconv.ParseUint(v, 10, 32)
		if err != nil {
			return 0
		}
		mb = n
	}
	return mb << 20
}

// gcFloorCron sets the GC percent for the live heap the last collection
// found (called when a cycle completed, and once at the start).
func (g *idleGC) gcFloorCron(live uint64) {
	if g.floor == 0 {
		return
	}
	if p := gcFloorPercent(g.floor, live); p != g.percent {
		g.percent = p
		debug.SetGCPercent(p)
	}
}

// SetIdleRelease sets fn to run, off the lock, after each idle collection
// has returned the heap's free pages (vigil-server drops the file pages
// the burst faulted in: internal/servermain's dropStartupPages). Call it
// before Run.
func (s *Server) SetIdleRelease(fn func()) { s.idleGC.release = fn }

// idleGCDue is the decision: idle long enough, and enough allocated or
// freed since the last collection, or free and resident, against the live
// heap it found.
func idleGCDue(idle time.Duration, allocated, freed, free, live uint64) bool {
	return idle >= idleGCAfter && allocated+freed+free >= max(idleGCMinGarbage, live/8)
}

// idleGCCron runs from the cron (lock held).
func (s *Server) idleGCCron() {
	g := &s.idleGC
	if g.samples == nil {
		g.samples = []metrics.Sample{
			{Name: "/gc/cycles/total:gc-cycles"},
			{Name: "/gc/heap/allocs:bytes"},
			{Name: "/gc/heap/live:bytes"},
			{Name: "/memory/classes/heap/free:bytes"},
			{Name: "/memory/classes/heap/objects:bytes"},
		}
		g.floor = gcFloorFromEnv()
	}
	metrics.Read(g.samples)
	cycles, allocs, live := g.samples[0].Value.Uint64(), g.samples[1].Value.Uint64(), g.samples[2].Value.Uint64()
	if cycles != g.cycles {
		g.cycles, g.allocsAtGC, g.usedAtGC = cycles, allocs, s.ks.Memory()
	}
	if cycles != g.floorCycles || g.percent == 0 {
		g.floorCycles = cycles
		g.gcFloorCron(live)
	}
	now := s.clock.Now()
	if g.dropped >= max(idleGCMinGarbage, live/8) && !g.running.Load() {
		// Idle clients' buffers (idlebuf.go): collected now, busy or not,
		// as they were dropped to give the memory back.
		s.startIdleGC()
		return
	}
	if s.stats.commands != g.lastCommands || g.lastActive.IsZero() {
		g.lastCommands, g.lastActive, g.collected = s.stats.commands, now, false
		return
	}
	if g.collected || g.running.Load() {
		return
	}
	used := s.ks.Memory()
	free := g.samples[3].Value.Uint64()
	// The allocation since the last collection: the counter's growth
	// since the cron saw the cycle end, or the heap's objects beyond those
	// the collection marked live, whichever is more. The counter alone
	// misses what was allocated while the collection ran and before the
	// cron looked (a load ends within a cycle: a 1 M-element compressed
	// list's last raw chunks, 5 MB, stayed as garbage).
	allocated := max(allocs-g.allocsAtGC, g.samples[4].Value.Uint64()-min(live, g.samples[4].Value.Uint64()))
	if !idleGCDue(now.Sub(g.lastActive), allocated, g.usedAtGC-min(used, g.usedAtGC)+g.dropped, free, live) {
		return
	}
	s.startIdleGC()
}

// startIdleGC starts the collection and the release (lock held).
func (s *Server) startIdleGC() {
	g := &s.idleGC
	g.collected, g.dropped = true, 0
	g.running.Store(true)
	release := g.release
	go func() {
		defer g.running.Store(false)
		debug.FreeOSMemory()
		if release != nil {
			release()
		}
	}()
}
