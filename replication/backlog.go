package replication

import "time"

// MinBacklogSize is CONFIG_REPL_BACKLOG_MIN_SIZE (16 KiB): resizeReplicationBacklog
// never lets repl-backlog-size go below it.
const MinBacklogSize = 16 * 1024

// DefaultBacklogSize is repl-backlog-size's default (1 MiB).
const DefaultBacklogSize = 1024 * 1024

// Backlog is the replication backlog: one ring buffer addressed by the global
// replication offset, shared by every replica (Redis's repl_backlog).
//
// Offsets follow Redis exactly. The stream's bytes are numbered from 1;
// End() is master_repl_offset, the number of the last byte appended (0 when
// nothing was ever appended). The backlog holds the newest Histlen() bytes,
// numbered First() .. End(), where First() = End() - Histlen() + 1
// (repl_backlog->offset, INFO's repl_backlog_first_byte_offset). A PSYNC
// offset names the first byte the replica still wants, so the servable
// offsets are First() .. End()+1, the last meaning "nothing missing".
//
// A Backlog is created only when Redis creates one (createReplicationBacklog:
// the first replica of a master without backlog, or a replica after its
// sync); while no backlog exists master_repl_offset does not move
// (feedReplicationBuffer returns early), which is the caller's business.
//
// Storage grows on demand up to Size() bytes (Redis allocates its 16 KiB
// blocks lazily too), then wraps. Redis 7.0 trims its block list a whole
// 16 KiB block at a time, so after wrapping its repl_backlog_histlen may
// exceed repl-backlog-size by up to one block; this ring keeps exactly
// Size() bytes (the reference calls that compatible).
//
// A Backlog has no lock: its owner serialises Append, Resize and cursor reads
// (the server's execution lock).
type Backlog struct {
	size int64  // repl-backlog-size
	buf  []byte // len(buf) <= size; grows until it reaches size, then wraps
	base int64  // the offset of the byte stored at buf[0]
	end  int64  // master_repl_offset
	hist int64  // repl_backlog_histlen
}

// NewBacklog is createReplicationBacklog: an empty backlog whose first byte
// will be masterReplOffset+1 (repl_backlog->offset = master_repl_offset+1,
// histlen 0). size is floored to MinBacklogSize.
func NewBacklog(size, masterReplOffset int64) *Backlog {
	if size < MinBacklogSize {
		size = MinBacklogSize
	}
	return &Backlog{size: size, base: masterReplOffset + 1, end: masterReplOffset}
}

// Size is repl-backlog-size as INFO reports it (repl_backlog_size).
func (b *Backlog) Size() int64 { return b.size }

// End is master_repl_offset: the offset of the last byte appended.
func (b *Backlog) End() int64 { return b.end }

// Histlen is repl_backlog_histlen: how many bytes the backlog holds.
func (b *Backlog) Histlen() int64 { return b.hist }

// First is repl_backlog->offset (INFO's repl_backlog_first_byte_offset): the
// offset of the oldest byte held, End()-Histlen()+1. With an empty history it
// is End()+1, as Redis reports right after createReplicationBacklog.
func (b *Backlog) First() int64 { return b.end - b.hist + 1 }

// Contains reports whether a replica asking for offset (the first byte it
// wants) can be served from the backlog: masterTryPartialResynchronization's
// psync_offset >= repl_backlog->offset && psync_offset <= offset + histlen.
func (b *Backlog) Contains(offset int64) bool {
	return offset >= b.First() && offset <= b.First()+b.hist
}

// index is where the byte numbered off lives in buf.
func (b *Backlog) index(off int64) int {
	return int((off - b.base) % b.size)
}

// Append adds p to the stream (feedReplicationBuffer's backlog half):
// master_repl_offset and histlen grow by len(p); the oldest bytes beyond
// Size() are dropped.
func (b *Backlog) Append(p []byte) {
	if len(p) == 0 {
		return
	}
	b.end += int64(len(p))
	b.hist += int64(len(p))
	if b.hist > b.size {
		b.hist = b.size
	}
	start := b.end - int64(len(p)) + 1 // offset of p[0]
	if int64(len(p)) >= b.size {
		// Only the last size bytes of p survive: they are the whole ring.
		p = p[int64(len(p))-b.size:]
		if int64(cap(b.buf)) < b.size {
			b.buf = make([]byte, b.size)
		}
		b.buf = b.buf[:b.size]
		copy(b.buf, p)
		b.base = b.end - b.size + 1
		return
	}
	if room := b.size - int64(len(b.buf)); room > 0 {
		// Growing phase: bytes are stored linearly from base, and every
		// byte from base on is still held, so p starts at base+len(buf).
		n := int64(len(p))
		if n > room {
			n = room
		}
		if int64(cap(b.buf)-len(b.buf)) < n {
			c := max(2*int64(cap(b.buf)), int64(len(b.buf))+n, 4096)
			nb := make([]byte, len(b.buf), min(c, b.size))
			copy(nb, b.buf)
			b.buf = nb
		}
		b.buf = append(b.buf, p[:n]...)
		p = p[n:]
		start += n
	}
	for len(p) > 0 {
		n := copy(b.buf[b.index(start):], p)
		p = p[n:]
		start += int64(n)
	}
}

// Rebase renumbers the stream by delta (rebaseReplicationBuffer): a
// master that fed its backlog while loading its RDB at startup moves
// what it fed after the RDB's repl-offset.
func (b *Backlog) Rebase(delta int64) {
	b.base += delta
	b.end += delta
}

// Resize is CONFIG SET repl-backlog-size (resizeReplicationBacklog): the new
// size is floored to MinBacklogSize and the newest min(Histlen, size) bytes
// are kept, as Redis's incrementalTrimReplicationBacklog drops the oldest.
// Offsets do not change. Cursors behind the new First() fall out of the
// window.
func (b *Backlog) Resize(size int64) {
	if size < MinBacklogSize {
		size = MinBacklogSize
	}
	if size == b.size {
		return
	}
	keep := b.hist
	if keep > size {
		keep = size
	}
	nb := make([]byte, 0, min(size, max(keep, 4096)))
	first := b.end - keep + 1
	a, c := b.chunks(first)
	nb = append(nb, a...)
	nb = append(nb, c...)
	b.buf, b.base, b.size, b.hist = nb, first, size, keep
}

// chunks returns the held bytes from off (First() <= off <= End()+1) to the
// end, as at most two slices of the ring.
func (b *Backlog) chunks(off int64) (first, second []byte) {
	n := b.end - off + 1
	if n <= 0 {
		return nil, nil
	}
	if int64(len(b.buf)) < b.size {
		i := int(off - b.base)
		return b.buf[i : i+int(n)], nil
	}
	i := b.index(off)
	if int64(i)+n <= int64(len(b.buf)) {
		return b.buf[i : i+int(n)], nil
	}
	return b.buf[i:], b.buf[:n-int64(len(b.buf)-i)]
}

// ReadFrom copies the bytes from offset to the end, as addReplyReplicationBacklog
// sends to a replica granted +CONTINUE. ok is false when offset is outside
// the servable window (see Contains).
func (b *Backlog) ReadFrom(offset int64) (p []byte, ok bool) {
	if !b.Contains(offset) {
		return nil, false
	}
	a, c := b.chunks(offset)
	p = make([]byte, 0, len(a)+len(c))
	return append(append(p, a...), c...), true
}

// Cursor is one replica's position in the shared backlog: Offset is the next
// byte the replica has not been given yet. Replicas stream from the same
// ring, each with its own Cursor; nothing is copied per replica.
type Cursor struct {
	Offset int64
}

// NewCursor starts a cursor at offset (a +CONTINUE replica's psync_offset,
// or End()+1 for a replica that starts receiving the stream now).
func (b *Backlog) NewCursor(offset int64) Cursor { return Cursor{Offset: offset} }

// Pending returns the bytes from c.Offset to the end of the backlog as at
// most two slices aliasing the ring. They are valid only until the next
// Append or Resize, so the shell writes or copies them under the same lock.
// ok is false when c.Offset has fallen out of the window (the ring
// overwrote bytes the replica has not received, or c.Offset is beyond the
// end): the shell drops the replica, which comes back with a full resync.
func (b *Backlog) Pending(c Cursor) (first, second []byte, ok bool) {
	if !b.Contains(c.Offset) {
		return nil, nil, false
	}
	first, second = b.chunks(c.Offset)
	return first, second, true
}

// Advance records that n bytes from the cursor's position were handed to
// the replica.
func (c *Cursor) Advance(n int) { c.Offset += int64(n) }

// BacklogExpired is replicationCron's backlog TTL: a master (not a replica:
// replicas keep accumulating for a later promotion) with a backlog, no
// replicas and repl-backlog-ttl != 0 frees it when the seconds since the last
// replica left exceed the TTL. Time is whole seconds as server.unixtime. The
// caller then changes the replication ID and clears ID2 (changeReplicationId,
// clearReplicationId2) as Redis does.
func BacklogExpired(isMaster, haveBacklog bool, replicas int, ttl time.Duration, noReplicasSince, now time.Time) bool {
	if replicas != 0 || ttl <= 0 || !haveBacklog || !isMaster {
		return false
	}
	idle := now.Unix() - noReplicasSince.Unix()
	return idle > int64(ttl/time.Second)
}
