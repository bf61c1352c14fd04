package server

import (
	"math/bits"
)

// Client memory accounting and client eviction (maxmemory-clients), as
// Redis 7.0.15 does them; the logic is translated from Redis (BSD):
// networking.c's getClientMemoryUsage, getClientEvictionLimit and
// evictClients, server.c's updateClientMemoryUsage,
// updateClientMemUsageAndBucket, removeClientFromMemUsageBucket,
// clientEvictionAllowed and the client_mem_usage_buckets.
//
// Each client remembers the memory it was last counted with (memUsage)
// and the type it was counted under (memType); the server keeps the sum
// by type (stat_clients_type_memory: INFO's mem_clients_normal and
// mem_clients_slaves, and the client part of used_memory). Updating a
// client is O(1): it is done after each of its commands and at the end of
// each of its batches (what its query buffer holds) when client eviction
// or maxmemory is on, after a push to it (pub/sub, tracking, MONITOR), and
// for every client by the cron (clientsCron), as Redis does.
//
// With maxmemory-clients set, the clients that may be evicted (normal and
// pub/sub clients without CLIENT NO-EVICT) are also in one of 19 buckets
// by the log2 of their memory (32 KB and below in the first, 8 GB and up
// in the last), each a list in the order clients entered it. evictClients
// frees clients from the top bucket down, each bucket's from its head,
// while the normal and pub/sub clients' memory is at or over the limit.
// It runs before each command (processCommand's place: the running client
// may be the one evicted, and its command does not run), at the end of
// each batch and from the cron (beforeSleep's).
//
// Vigil writes a client's output from its own goroutine, without the
// execution lock, where Redis updates the client after each write; a
// client whose output drained since it was last counted is recounted
// before it is evicted (evictClients), so a stale figure does not evict
// it.
//
// All of it is guarded by Server.mu.

// Sizes of Redis 7.0's structures on a 64-bit build, for the parts of a
// client's memory Redis counts by structure.
const (
	clientStructMem     = 768   // zmalloc_size(c): redis-server 7.0.15's client (jemalloc)
	sizeofPtr           = 8     // sizeof(robj*), sizeof(dictEntry*)
	sizeofListNode      = 24    // listNode
	sizeofDictEntry     = 24    // dictEntry
	sizeofMultiCmd      = 24    // multiCmd
	sizeofWatchedKey    = 32    // watchedKey
	sizeofReplyBlockHdr = 16    // clientReplyBlock's header
	raxNodeMem          = 4 * 8 // sizeof(raxNode) * sizeof(raxNode*), as Redis writes it
	clientEvictionFloor = 128 << 10
)

// Client types (getClientType).
const (
	memTypeNormal = iota
	memTypeReplica
	memTypePubSub
	memTypeMaster
	memTypes
)

// memBucket is a clientMemUsageBucket: its clients in the order they
// entered it (through Client.memPrev/memNext) and their memory's sum.
type memBucket struct {
	head, tail *Client
	sum        int64
}

// clientMemState is the server's part.
type clientMemState struct {
	typeMem [memTypes]int64 // stat_clients_type_memory
	// replObuf is the part of typeMem that is replicas' output buffers:
	// the shared replication buffer they reference, which used_memory
	// counts once as the buffer's own (usedMemory).
	replObuf int64
	// buckets is client_mem_usage_buckets: nil while maxmemory-clients
	// is 0.
	buckets *[clientMemBuckets]memBucket
	// track: update clients on the command path (client eviction or
	// maxmemory is on); else the cron alone does.
	track   bool
	evicted int64 // stat_evictedclients
	// limit is the maxmemory-clients the buckets were last set up for
	// (CONFIG SET applies a change once).
	limit int64
}

// memClientType is getClientType.
func memClientType(c *Client) int {
	switch c.replRole.Load() {
	case kindMaster:
		return memTypeMaster
	case kindReplica:
		if !c.monitor {
			return memTypeReplica
		}
	}
	if len(c.subs)+len(c.psubs)+len(c.ssubs) > 0 {
		return memTypePubSub
	}
	return memTypeNormal
}

// dictMem is a client dict's share in pubsubMemOverhead: its entries and
// its table (4 slots, doubled when full).
func dictMem(n int) int64 {
	if n == 0 {
		return 0
	}
	slots := max(4, 1<<bits.Len(uint(n-1)))
	return int64(n)*sizeofDictEntry + int64(slots)*sizeofPtr
}

// multiAllocCount is mstate.alloc_count: 2 for the first queued command,
// doubled when full.
func multiAllocCount(n int) int64 {
	if n == 0 {
		return 0
	}
	return int64(max(2, 1<<bits.Len(uint(n-1))))
}

// queryBufMem is sdsZmallocSize of the modeled query buffer (8 bytes for
// an empty one, as Redis's sdsempty).
func queryBufMem(m *bufModel) int64 {
	hdr, _ := sdsHdr(m.qbAlloc)
	return jeUsable(hdr + m.qbAlloc + 1)
}

// clientMemUsage is getClientMemoryUsage: c's memory and its output
// buffer's part. batch is the reply bytes of c's running batch (0 when it
// is not running), argv its current command's argv_len_sum plus a pointer
// an argument (-1: none running; the partial command's arguments then).
func (s *Server) clientMemUsage(c *Client, batch, argv int64) (total, obuf int64) {
	_, oll, omem := s.obufSplit(c, int(batch)) // obuf.go
	obuf = omem
	if c.replRole.Load() != kindReplica {
		obuf += oll * (sizeofListNode + sizeofReplyBlockHdr)
	}
	m := &c.bm
	total = obuf + clientStructMem
	if m.on {
		total += queryBufMem(m) + m.rbs
	}
	if argv < 0 {
		argv = m.pendArgv
	}
	total += argv
	total += s.multiStateMem(c)
	total += int64(len(c.psubs))*sizeofListNode + dictMem(len(c.subs)) + dictMem(len(c.ssubs))
	if tc := s.tracking.byClient[c]; tc != nil && len(tc.Prefixes) > 0 {
		// client_tracking_prefixes->numnodes, taken as the head and two
		// nodes a prefix (an underestimate, as Redis says of its own).
		total += int64(1+2*len(tc.Prefixes)) * raxNodeMem
	}
	return total, obuf
}

// multiStateMem is multiStateMemOverhead: the queued commands' argv, the
// queue's slots and the watched keys' list nodes.
func (s *Server) multiStateMem(c *Client) int64 {
	var n int64
	if c.multi != nil {
		n = c.multi.mem + multiAllocCount(len(c.multi.cmds))*sizeofMultiCmd
	}
	if s.watch.byClient != nil {
		if cw := s.watch.byClient[c]; cw != nil {
			n += int64(len(cw.keys)) * (sizeofListNode + sizeofWatchedKey)
		}
	}
	return n
}

// argvMem is argv_len_sum + sizeof(robj*)*argc.
func argvMem(args [][]byte) int64 {
	n := int64(len(args)) * sizeofPtr
	for _, a := range args {
		n += int64(len(a))
	}
	return n
}

// clientEvictionLimit is getClientEvictionLimit: maxmemory-clients in
// bytes (a percentage of maxmemory), at least 128 KB; 0: no limit.
func (s *Server) clientEvictionLimit() int64 {
	var limit int64
	switch mc := s.cfg.MaxmemoryClients; {
	case mc < 0 && s.cfg.Maxmemory > 0:
		limit = int64(float64(s.cfg.Maxmemory) * -float64(mc) / 100)
	case mc > 0:
		limit = mc
	default:
		return 0
	}
	return max(limit, clientEvictionFloor)
}

// clientEvictionAllowed: eviction is on and c is a normal or pub/sub
// client without NO-EVICT (and a connection's, not closed).
func (s *Server) clientEvictionAllowed(c *Client) bool {
	if s.cmem.buckets == nil || c.noEvict || !c.bm.on || c.killed.Load() {
		return false
	}
	t := memClientType(c)
	return t == memTypeNormal || t == memTypePubSub
}

// memBucketIndex is getMemUsageBucket's index.
func memBucketIndex(mem int64) int {
	i := bits.Len64(uint64(max(mem, 0)))
	return min(max(i, clientMemBucketMinLog), clientMemBucketMaxLog) - clientMemBucketMinLog
}

// updateClientMem is updateClientMemoryUsage: c's memory counted again
// under its current type.
func (s *Server) updateClientMem(c *Client, batch, argv int64) {
	if c.killed.Load() { // freed: out of the counts for good
		s.forgetClientMem(c)
		return
	}
	mem, obuf := s.clientMemUsage(c, batch, argv)
	t := memClientType(c)
	st := &s.cmem
	st.typeMem[c.memType] -= c.memUsage
	st.typeMem[t] += mem
	st.replObuf -= c.memReplObuf
	c.memReplObuf = 0
	if c.replRole.Load() == kindReplica {
		c.memReplObuf = obuf
		st.replObuf += obuf
	}
	c.memType, c.memUsage = uint8(t), mem
}

// removeClientMemBucket is removeClientFromMemUsageBucket: c's memory
// leaves its bucket's sum, and c the bucket unless allow.
func (s *Server) removeClientMemBucket(c *Client, allow bool) {
	b := c.memBucket
	if b == nil {
		return
	}
	b.sum -= c.memUsage
	if !allow {
		b.unlink(c)
	}
}

// unlink takes c out of b's list.
func (b *memBucket) unlink(c *Client) {
	if c.memPrev != nil {
		c.memPrev.memNext = c.memNext
	} else {
		b.head = c.memNext
	}
	if c.memNext != nil {
		c.memNext.memPrev = c.memPrev
	} else {
		b.tail = c.memPrev
	}
	c.memPrev, c.memNext, c.memBucket = nil, nil, nil
}

// updateClientMemBucket is updateClientMemUsageAndBucket: it reports
// whether c may be evicted (and was counted and put in its bucket).
func (s *Server) updateClientMemBucket(c *Client, batch, argv int64) bool {
	allow := s.clientEvictionAllowed(c)
	s.removeClientMemBucket(c, allow)
	if !allow {
		return false
	}
	s.updateClientMem(c, batch, argv)
	b := &s.cmem.buckets[memBucketIndex(c.memUsage)]
	b.sum += c.memUsage
	if b != c.memBucket {
		if c.memBucket != nil {
			c.memBucket.unlink(c)
		}
		c.memBucket = b
		c.memPrev = b.tail
		if b.tail != nil {
			b.tail.memNext = c
		} else {
			b.head = c
		}
		b.tail = c
	}
	return true
}

// clientMemAfterCommand is processCommandAndResetClient's and
// processInputBuffer's update (lock held), when the command path tracks
// clients at all.
func (s *Server) clientMemAfterCommand(c *Client, batch, argv int64) {
	if !s.updateClientMemBucket(c, batch, argv) {
		s.updateClientMem(c, batch, argv)
	}
}

// forgetClientMem takes a freed client out of the counts and buckets.
func (s *Server) forgetClientMem(c *Client) {
	s.removeClientMemBucket(c, false)
	s.cmem.typeMem[c.memType] -= c.memUsage
	s.cmem.replObuf -= c.memReplObuf
	c.memUsage, c.memType, c.memReplObuf = 0, 0, 0
}

// evictClients is evictClients (lock held): self is the client running a
// command, if any (it may be evicted too; its caller then stops).
func (s *Server) evictClients() {
	st := &s.cmem
	if st.buckets == nil {
		return
	}
	limit := s.clientEvictionLimit()
	if limit == 0 {
		return
	}
	cur := clientMemBuckets - 1
	next := st.buckets[cur].head
	reaped := false
	for st.typeMem[memTypeNormal]+st.typeMem[memTypePubSub] >= limit {
		if next == nil {
			cur--
			if cur < 0 {
				s.log.Warn().Msg("Over client maxmemory after evicting all evictable clients")
				break
			}
			next = st.buckets[cur].head
			continue
		}
		c := next
		next = c.memNext
		// Vigil's addition: the output written since c was last counted
		// (without the lock) is no longer c's. A client that moved down
		// is met again in its new bucket.
		was := c.memBucket
		var batch int64
		if s.current == c {
			batch = int64(len(c.w.B))
		}
		if !s.updateClientMemBucket(c, batch, -1) || c.memBucket != was {
			continue
		}
		if !reaped {
			// Before the first eviction, the clients whose peers
			// closed their connections go as Redis would have freed
			// them (reapClosedClients); then the limit is checked
			// again, from the largest bucket.
			reaped = true
			if s.reapClosedClients() > 0 {
				cur = clientMemBuckets - 1
				next = st.buckets[cur].head
				continue
			}
		}
		var self *Client
		if s.current == c {
			self = c
		}
		info := s.appendClientInfo(nil, c, self, nil, "")
		s.log.Info().Msgf("Evicting client: %s", info)
		s.freeClientNow(c)
		st.evicted++
	}
}

// reapClosedClients frees (lock held) the clients whose peers closed their
// connections after everything they sent had run, and returns how many.
// redis-server's one thread reads such a connection's end-of-file, and
// frees the client, before a command that arrived after it runs; here the
// client's goroutine may not have seen the close yet, and its memory (a
// NO-EVICT client's unfinished argument: client-eviction.tcl's "client
// no-evict off") would make the next command evict a client Redis keeps.
// Only run when a client is about to be evicted: one non-consuming recv
// per connection.
func (s *Server) reapClosedClients() int {
	n := 0
	for _, c := range s.clientsByID() {
		if c.raw == nil || c == s.current || c.replRole.Load() != 0 || c.ldbDetached.Load() {
			continue
		}
		if c.ord.in.Load() > c.ord.settled.Load() {
			continue // input read and not run yet: it runs first
		}
		ackBigArg(c) // a FIN held back by the window (order.go)
		closed := false
		if err := c.raw.rc.Control(func(fd uintptr) { closed = sockPeerClosed(int(fd)) }); err != nil || !closed {
			continue
		}
		s.freeClientNow(c)
		n++
	}
	return n
}

// freeClientNow is freeClient for a client evicted (lock held): its
// memory leaves the counts at once, its subscriptions, watches and
// MONITOR go, and its connection closes (its goroutine unlinks it).
func (s *Server) freeClientNow(c *Client) {
	s.forgetClientMem(c)
	c.kill()
	s.pubsub.unsubscribeAll(c)
	s.unwatchAll(c, true)
	delete(s.monitors, c)
	s.unblockGone(c)
}

// applyClientEvictionConfig is applyClientMaxMemoryUsage (lock held),
// run when maxmemory-clients or maxmemory changed.
func (s *Server) applyClientEvictionConfig() {
	st := &s.cmem
	st.track = s.cfg.MaxmemoryClients != 0 || s.cfg.Maxmemory > 0
	if s.cfg.MaxmemoryClients == st.limit && (st.limit == 0) == (st.buckets == nil) {
		return
	}
	st.limit = s.cfg.MaxmemoryClients
	on := st.limit != 0
	if on && st.buckets != nil {
		return // already on: the buckets stay
	}
	if on {
		st.buckets = new([clientMemBuckets]memBucket)
	}
	for _, c := range s.clientsByID() {
		if on {
			s.updateClientMemBucket(c, 0, -1)
		} else {
			s.removeClientMemBucket(c, false)
		}
	}
	if !on {
		st.buckets = nil
	}
}

// clientsMemCron is clientsCron's updateClientMemUsageAndBucket or
// updateClientMemoryUsage for one client.
func (s *Server) clientsMemCron(c *Client) {
	if !s.updateClientMemBucket(c, 0, -1) {
		s.updateClientMem(c, 0, -1)
	}
}

// clientsMemTotal is the clients' part of used_memory: all types' memory
// (zmalloc counts every client buffer).
func (s *Server) clientsMemTotal() int64 {
	t := &s.cmem.typeMem
	return max(t[0]+t[1]+t[2]+t[3], 0)
}
