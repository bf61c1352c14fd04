package server

import (
	"math/bits"
	"sort"
)

// Redis's per-client query and reply buffers, as CLIENT LIST/INFO report
// them (qbuf, qbuf-free, rbs, rbp), modeled. Vigil reads a connection into
// its own reader and builds the replies of a batch in one growing buffer,
// so it has neither of Redis's buffers; bufModel follows the sizes Redis
// 7.0 would have for the same traffic: the query buffer an sds grown by
// readQueryFromClient (16 KB reads, the non-greedy first allocation, the
// exact buffer a big argument gets) and shrunk by clientsCron's
// clientsCronResizeQueryBuffer (idle for more than 2 seconds, or far above
// its recent peak); the reply buffer the 16 KB static buffer that
// clientsCronResizeOutputBuffer halves or doubles from its peak. Sizes are
// jemalloc's (the size classes of Debian's redis-server). The figures are
// Redis's for requests that arrive in one read each (no pipeline of more
// than 16 KB).
//
// Guarded by Server.mu: set while the client's batch holds the lock and by
// the cron.
type bufModel struct {
	on bool // a connection's client (not a script's, the AOF loader's, a test's)

	qbLen, qbAlloc, qbPeak int64 // sdslen, sdsalloc, querybuf_peak

	// The command being received (bufModelPending): its arguments parsed
	// so far (argv_len_sum, and plus a pointer each for the client's
	// memory), the length of the bulk being read (c->bulklen, 0: none)
	// and the reader's buffered bytes the model has seen.
	pendArgvLen, pendArgv int64
	pendBulk              int64
	rdHeld                int64

	rbs, rbPeak   int64 // buf_usable_size, buf_peak
	rbPeakResetMs int64 // buf_peak_last_reset_time
}

// bufModelState is the server side: DEBUG REPLYBUFFER's settings, INFO's
// counters and clientsCron's position.
type bufModelState struct {
	peakResetMs int64 // reply_buffer_peak_reset_time (-1: never)
	resizingOff bool  // !reply_buffer_resizing_enabled
	shrinks     int64 // stat_reply_buffer_shrinks
	expands     int64 // stat_reply_buffer_expands
	cursor      int64 // the id after which the next clientsCron pass starts
	scratch     []*Client
}

const (
	protoIOBufLen           = 16 << 10 // PROTO_IOBUF_LEN
	protoMBulkBigArg        = 32 << 10 // PROTO_MBULK_BIG_ARG
	protoResizeThreshold    = 32 << 10 // PROTO_RESIZE_THRESHOLD
	protoReplyChunkBytes    = 16 << 10 // PROTO_REPLY_CHUNK_BYTES
	protoReplyMinBytes      = 1024     // PROTO_REPLY_MIN_BYTES
	sdsMaxPrealloc          = 1 << 20  // SDS_MAX_PREALLOC
	replyBufPeakResetDefMs  = 5000     // REPLY_BUFFER_DEFAULT_PEAK_RESET_TIME
	clientsCronMinIteration = 5        // CLIENTS_CRON_MIN_ITERATIONS
)

// jeUsable is jemalloc's usable size for a request of n bytes: 8, then
// multiples of 16 up to 128, then four size classes per doubling.
func jeUsable(n int64) int64 {
	switch {
	case n <= 8:
		return 8
	case n <= 128:
		return (n + 15) &^ 15
	}
	k := bits.Len64(uint64(n-1)) - 1 // 2^k < n <= 2^(k+1)
	step := int64(1) << (k - 2)
	return (n + step - 1) / step * step
}

// sdsHdr is sdsHdrSize(sdsReqType(n)), type 5 excluded as the functions
// modeled here exclude it; max is the type's largest alloc.
func sdsHdr(n int64) (hdr, max int64) {
	switch {
	case n < 1<<8:
		return 3, 1<<8 - 1
	case n < 1<<16:
		return 5, 1<<16 - 1
	case n < 1<<32:
		return 9, 1<<32 - 1
	}
	return 17, 1<<63 - 1
}

// sdsAllocFor is the alloc an sds gets from an allocation for n bytes of
// content (_sdsMakeRoomFor's and _sdsnewlen's usable size).
func sdsAllocFor(n int64) int64 {
	hdr, max := sdsHdr(n)
	return min(jeUsable(hdr+n+1)-hdr-1, max)
}

// sdsMakeRoom is _sdsMakeRoomFor's new alloc for a string of len bytes and
// alloc, to have room for add more.
func sdsMakeRoom(len, alloc, add int64, greedy bool) int64 {
	if alloc-len >= add {
		return alloc
	}
	n := len + add
	if greedy {
		if n < sdsMaxPrealloc {
			n *= 2
		} else {
			n += sdsMaxPrealloc
		}
	}
	return sdsAllocFor(n)
}

// initBufModel is createClient's part: an empty query buffer, a 16 KB
// reply buffer whose peak is its size. The peak's last reset is set to
// the time in seconds, as createClient does (server.unixtime where the
// cron compares milliseconds): the first cron pass resets the peak, and
// an idle client's buffer shrinks to 1 KB on the second.
func (c *Client) initBufModel(nowMs int64) {
	m := &c.bm
	m.on = true
	m.rbs = jeUsable(protoReplyChunkBytes)
	m.rbPeak = m.rbs
	m.rbPeakResetMs = nowMs / 1000
}

// bufModelRead is readQueryFromClient for the bytes the batch running its
// first command got since the last batch that ran one (the reader's
// buffered bytes beyond those the model holds already), as one read: the
// room made for a 16 KB read (or as much as the buffer has free), then the
// peak.
func (c *Client) bufModelRead(buffered int64) { c.bufModelReads(buffered, -1) }

// bufModelReads is bufModelRead with the query buffer trimmed to at most
// trim bytes after each read (-1: not trimmed).
func (c *Client) bufModelReads(buffered, trim int64) {
	m := &c.bm
	if !m.on {
		return
	}
	n := buffered - m.rdHeld
	m.rdHeld = buffered
	if n <= 0 {
		return
	}
	if m.pendBulk >= protoMBulkBigArg {
		// A big argument being read: the buffer was made room for it
		// (readQueryFromClient reads the rest of the bulk into it).
		m.qbAlloc = sdsMakeRoom(m.qbLen, m.qbAlloc, n, false)
		m.qbLen += n
		m.qbPeak = max(m.qbPeak, m.qbLen)
		return
	}
	for n > 0 { // more than a read's worth: reads in a row
		readlen := int64(protoIOBufLen)
		if m.qbAlloc < protoIOBufLen {
			m.qbAlloc = sdsMakeRoom(m.qbLen, m.qbAlloc, protoIOBufLen, false)
		} else {
			m.qbAlloc = sdsMakeRoom(m.qbLen, m.qbAlloc, protoIOBufLen, true)
			readlen = m.qbAlloc - m.qbLen
		}
		r := min(n, readlen)
		m.qbLen += r
		n -= r
		m.qbPeak = max(m.qbPeak, m.qbLen)
		if trim >= 0 {
			m.qbLen = min(m.qbLen, trim)
		}
	}
	m.qbPeak = max(m.qbPeak, m.qbLen)
}

// bufModelCommand follows a command's arguments: an argument of 32 KB or
// more leaves the query buffer to become the argument's string, and the
// client gets a new empty one of its size (processMultibulkBuffer).
func (c *Client) bufModelCommand(args [][]byte) {
	m := &c.bm
	if !m.on {
		return
	}
	for _, a := range args {
		if len(a) >= protoMBulkBigArg {
			m.qbAlloc = sdsAllocFor(int64(len(a)) + 2)
			m.qbLen = 0
		}
	}
}

// bufModelReply follows the reply buffer after a command: the replies not
// yet written (the batch's) fill it up to its size (_addReplyToBuffer's
// buf_peak).
func (c *Client) bufModelReply(pending int64) {
	m := &c.bm
	if m.on {
		m.rbPeak = max(m.rbPeak, min(pending, m.rbs))
	}
}

// bufModelBatchEnd is the end of processInputBuffer: what the batch
// consumed is trimmed from the query buffer (sdsrange); what is left is
// the command being received, its arguments parsed so far out of it (in
// argv) and, for a bulk of 32 KB or more, the buffer made room for the
// whole bulk (processMultibulkBuffer's sdsMakeRoomForNonGreedy). Bytes
// that arrived in a batch that ran no command are reads of their own only
// for such a bulk; else the batch that runs the command models them.
func (c *Client) bufModelBatchEnd(buffered int64, ranCommand bool) {
	m := &c.bm
	if !m.on || (!ranCommand && buffered == m.rdHeld) {
		return
	}
	argvLen, argc, bulkLen, tail := c.rd.Pending()
	m.pendArgvLen, m.pendArgv = argvLen, argvLen+int64(argc)*sizeofPtr
	big := bulkLen >= protoMBulkBigArg && tail <= bulkLen+2
	if !ranCommand {
		if !big {
			// Left to the batch that runs the command: Vigil's reads
			// are smaller than Redis's (which read as much as the
			// buffer has room for), so they are modeled as one read
			// then.
			return
		}
		// Redis parses what each read brought and trims it: the buffer
		// holds no more than the unparsed tail between reads.
		c.bufModelReads(buffered, tail)
	}
	m.rdHeld = buffered
	seen := m.pendBulk == bulkLen
	m.pendBulk = max(bulkLen, 0)
	m.qbLen = tail
	if big {
		if !seen {
			// Redis parsed the header after the first 16 KB read and
			// made room for the bulk then: the reads modeled above
			// (Vigil's, of any size) went into that room.
			m.qbAlloc = sdsAllocFor(bulkLen + 2)
		} else {
			m.qbAlloc = sdsMakeRoom(m.qbLen, m.qbAlloc, bulkLen+2-m.qbLen, false)
		}
	}
	m.qbAlloc = max(m.qbAlloc, m.qbLen)
}

// clientsCron is serverCron's pass over the clients (lock held), from one
// snapshot of the registry: every client's output limits (obuf.go), then
// the buffers of numclients/hz of them (clientsCronBuffers). The
// snapshot's slice is kept between ticks (one a tick was 400 KB a second
// of garbage with 5000 idle clients).
func (s *Server) clientsCron() {
	all := s.snapshotClients(s.bufm.scratch[:0])
	s.obufCron(all)
	s.clientsCronBuffers(all)
	clear(all)
	s.bufm.scratch = all[:0]
}

// snapshotClients appends every registered client to dst.
func (s *Server) snapshotClients(dst []*Client) []*Client {
	s.clientsMu.Lock()
	for _, cl := range s.clients {
		dst = append(dst, cl)
	}
	s.clientsMu.Unlock()
	return dst
}

// clientsCronBuffers is clientsCron's pass over the clients' buffers:
// numclients/hz clients of all a call, at least 5, in turn (it sorts all).
func (s *Server) clientsCronBuffers(all []*Client) {
	st := &s.bufm
	if len(all) == 0 {
		return
	}
	sort.Slice(all, func(i, j int) bool { return all[i].id < all[j].id })
	hz := max(s.cfg.Hz, 1)
	iterations := min(max(len(all)/hz, clientsCronMinIteration), len(all))
	start := sort.Search(len(all), func(i int) bool { return all[i].id > st.cursor })
	for i := range iterations {
		cl := all[(start+i)%len(all)]
		st.cursor = cl.id
		if s.clientsCronHandleTimeout(cl) { // the timeout directive (conn.go)
			continue
		}
		s.trimIdleBuffers(cl) // the real buffers (idlebuf.go)
		if !cl.bm.on {
			continue
		}
		s.resizeQueryBuffer(cl)
		s.resizeOutputBuffer(cl)
		s.clientsMemCron(cl) // clientevict.go
	}
	s.evictClients()
}

// resizeQueryBuffer is clientsCronResizeQueryBuffer.
func (s *Server) resizeQueryBuffer(c *Client) {
	m := &c.bm
	idle := s.nowMs/1000 - c.lastInteraction.Load()/1000
	if m.qbAlloc-m.qbLen > 4<<10 {
		switch {
		case idle > 2:
			m.qbAlloc = m.qbLen // sdsRemoveFreeSpace
		case m.qbAlloc > protoResizeThreshold && m.qbAlloc/2 > m.qbPeak:
			m.qbAlloc = max(m.qbLen, m.qbPeak, m.pendBulk) // sdsResize
		}
	}
	m.qbPeak = max(m.qbLen, m.pendBulk)
}

// resizeOutputBuffer is clientsCronResizeOutputBuffer.
func (s *Server) resizeOutputBuffer(c *Client) {
	st, m := &s.bufm, &c.bm
	if st.resizingOff {
		return
	}
	var size int64
	shrink, expand := m.rbs/2, m.rbs*2
	switch {
	case shrink >= protoReplyMinBytes && m.rbPeak < shrink:
		size = max(protoReplyMinBytes, m.rbPeak+1)
		st.shrinks++
	case expand < protoReplyChunkBytes*2 && m.rbPeak == m.rbs:
		size = min(protoReplyChunkBytes, expand)
		st.expands++
	}
	if reset := st.peakResetMs; reset >= 0 && s.nowMs-m.rbPeakResetMs >= reset {
		m.rbPeak = 0 // bufpos: the replies were written
		m.rbPeakResetMs = s.nowMs
	}
	if size != 0 {
		m.rbs = jeUsable(size)
	}
}
