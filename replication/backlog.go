package replication

import "time"

// TrimBlocksPerCall is REPL_BACKLOG_TRIM_BLOCKS_PER_CALL: how many blocks
// one incrementalTrimReplicationBacklog call frees at most (feeding,
// a replica moving to its next block or leaving, a resize).
const TrimBlocksPerCall = 64

// SleepTrimBlocks is what the event loop's beforeSleep frees at most
// each iteration (ten times TrimBlocksPerCall): after each command, and
// about hz times a second when idle.
const SleepTrimBlocks = 10 * TrimBlocksPerCall

// MinBacklogSize is CONFIG_REPL_BACKLOG_MIN_SIZE (16 KiB): resizeReplicationBacklog
// never lets repl-backlog-size go below it.
const MinBacklogSize = 16 * 1024

// DefaultBacklogSize is repl-backlog-size's default (1 MiB).
const DefaultBacklogSize = 1024 * 1024

// BlockSize is PROTO_REPLY_CHUNK_BYTES: the smallest block of the
// replication buffer feedReplicationBuffer allocates.
const BlockSize = 16 * 1024

// blockHeader is sizeof(replBufBlock) and blockNode sizeof(listNode) on a
// 64-bit Redis: what each block costs beside its bytes in repl_buffer_mem.
const (
	blockHeader = 40
	blockNode   = 24
	// BlockOverhead is sizeof(replBufBlock)+sizeof(listNode).
	BlockOverhead = blockHeader + blockNode
)

// Backlog is the replication buffer: Redis 7.0's one list of blocks
// (server.repl_buffer_blocks) addressed by the global replication offset,
// shared by the backlog (repl_backlog) and every replica's output. A
// replica streams from the blocks at its own offset; nothing is copied per
// replica.
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
// Blocks are allocated as feedReplicationBuffer does (at least BlockSize,
// at most max(Size()/16, BlockSize), rounded up to the allocator's size
// class) and the oldest are dropped a whole block at a time as
// incrementalTrimReplicationBacklog does: only while Histlen() would stay
// above Size() without it, and never a block the owner says a replica
// still needs (AppendKeep, TrimBlocks: Redis's block reference counts). So
// Histlen() exceeds Size() by less than a block, or by what a lagging
// replica holds, and a PSYNC may continue from all of it. A block's bytes
// never change once appended, so a reader may keep slices of them
// (Slices) after the owner's lock is released.
//
// A Backlog has no lock: its owner serialises Append, TrimBlocks, Resize and the
// reads (the server's execution lock).
type Backlog struct {
	size   int64    // repl-backlog-size
	blocks []*block // blocks[head:] is the list, oldest first
	head   int
	end    int64 // master_repl_offset
	hist   int64 // repl_backlog_histlen: the bytes of the blocks
	mem    int64 // repl_buffer_mem
	pushed int64 // the memory of every block ever allocated (MemFrom)
}

// block is a replBufBlock: len(buf) is used, cap(buf) size.
type block struct {
	off int64 // repl_offset: the offset of buf[0]
	buf []byte
	cum int64 // Backlog.pushed before this block was allocated
}

// NewBacklog is createReplicationBacklog: an empty backlog whose first byte
// will be masterReplOffset+1 (repl_backlog->offset = master_repl_offset+1,
// histlen 0). size is repl-backlog-size as configured: Redis floors it to
// MinBacklogSize only when CONFIG SET changes it (Resize), so a smaller
// size from the configuration file or the command line stands.
func NewBacklog(size, masterReplOffset int64) *Backlog {
	return &Backlog{size: size, end: masterReplOffset}
}

// Size is repl-backlog-size as INFO reports it (repl_backlog_size).
func (b *Backlog) Size() int64 { return b.size }

// End is master_repl_offset: the offset of the last byte appended.
func (b *Backlog) End() int64 { return b.end }

// Histlen is repl_backlog_histlen: how many bytes the backlog holds.
func (b *Backlog) Histlen() int64 { return b.hist }

// Mem is server.repl_buffer_mem: the memory of the blocks held (each
// block's allocation and list node), what INFO reports as
// mem_total_replication_buffers.
func (b *Backlog) Mem() int64 { return b.mem }

// Pushed is the memory of every block ever allocated (as Mem counts
// them, trimmed ones included): it grows by what an Append allocates, an
// upper bound of how much any replica's MemFrom grew.
func (b *Backlog) Pushed() int64 { return b.pushed }

// MemFrom is getClientOutputBufferMemoryUsage of a replica whose next
// unsent byte is off: Redis counts a replica's output as the blocks from
// its ref_repl_buf_node (the block holding off; the last block once the
// replica has been sent everything, off > End()) to the end of the list,
// whole: each block's size and its replBufBlock and listNode headers,
// what Mem counts for it. 0 without blocks.
func (b *Backlog) MemFrom(off int64) int64 {
	if len(b.blocks) == b.head {
		return 0
	}
	i := len(b.blocks) - 1
	if off <= b.end {
		i = b.find(max(off, b.First()))
	}
	return b.pushed - b.blocks[i].cum
}

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

// allocSize is the usable size jemalloc gives a request of n bytes (its
// size classes: four per doubling), as zmalloc_usable reports it.
func allocSize(n int64) int64 {
	if n <= 4096 {
		return (n + 15) &^ 15
	}
	p := int64(1)
	for p*2 < n {
		p *= 2
	}
	step := p / 4
	return (n + step - 1) / step * step
}

// Append adds p to the stream (feedReplicationBuffer) when no replica holds
// any block: see AppendKeep.
func (b *Backlog) Append(p []byte) { b.AppendKeep(p, b.end+int64(len(p))+1) }

// AppendKeep adds p to the stream (feedReplicationBuffer): master_repl_offset
// and histlen grow by len(p), filling the last block and then new ones,
// and at most SleepTrimBlocks of the oldest blocks are trimmed (TrimBlocks:
// the beforeSleep that follows the command, which frees what the feed's
// own call, made only once it added a block, leaves) except those holding
// offsets from keep on, the oldest byte a replica still needs. It
// returns how many blocks were trimmed.
func (b *Backlog) AppendKeep(p []byte, keep int64) int {
	if len(p) == 0 {
		return 0
	}
	for len(p) > 0 {
		if n := len(b.blocks); n > b.head {
			if t := b.blocks[n-1]; cap(t.buf) > len(t.buf) {
				k := min(cap(t.buf)-len(t.buf), len(p))
				t.buf = append(t.buf, p[:k]...)
				p = p[k:]
				b.end += int64(k)
				b.hist += int64(k)
				continue
			}
		}
		limit := max(b.size/16, BlockSize)
		want := min(max(int64(len(p)), BlockSize), limit)
		usable := allocSize(want + blockHeader)
		b.push(&block{off: b.end + 1, buf: make([]byte, 0, usable-blockHeader), cum: b.pushed})
		b.mem += usable + blockNode
		b.pushed += usable + blockNode
	}
	return b.TrimBlocks(keep, SleepTrimBlocks)
}

func (b *Backlog) push(k *block) {
	if b.head > 32 && b.head*2 > len(b.blocks) {
		n := copy(b.blocks, b.blocks[b.head:])
		clear(b.blocks[n:])
		b.blocks, b.head = b.blocks[:n], 0
	}
	b.blocks = append(b.blocks, k)
}

// TrimBlocks is incrementalTrimReplicationBacklog(maxBlocks): the oldest
// blocks are dropped, at most maxBlocks of them, while more than one is
// held, the history without the oldest would still exceed Size(), and no
// replica needs it (keep, the oldest offset a replica still needs, is past
// its last byte). It returns how many were dropped. Redis frees a large
// history a few blocks a call (the event loop's next iterations go on),
// so that no call spends long freeing.
func (b *Backlog) TrimBlocks(keep int64, maxBlocks int) int {
	n := 0
	for ; n < maxBlocks && len(b.blocks)-b.head > 1 && b.hist > b.size; n++ {
		fo := b.blocks[b.head]
		used := int64(len(fo.buf))
		if keep < fo.off+used || b.hist-used <= b.size {
			break
		}
		b.hist -= used
		b.mem -= allocSize(int64(cap(fo.buf))+blockHeader) + blockNode
		b.blocks[b.head] = nil
		b.head++
	}
	return n
}

// Rebase renumbers the stream by delta (rebaseReplicationBuffer): a
// master that fed its backlog while loading its RDB at startup moves
// what it fed after the RDB's repl-offset.
func (b *Backlog) Rebase(delta int64) {
	for _, k := range b.blocks[b.head:] {
		k.off += delta
	}
	b.end += delta
}

// Resize is CONFIG SET repl-backlog-size (resizeReplicationBacklog): the new
// size is floored to MinBacklogSize; the owner then trims the history
// toward it as Redis does, with TrimBlocks(keep, TrimBlocksPerCall) and
// the event loop's later calls. Offsets do not change.
func (b *Backlog) Resize(size int64) {
	b.size = max(size, MinBacklogSize)
}

// find is the index in blocks of the block holding off (First() <= off <=
// End()).
func (b *Backlog) find(off int64) int {
	lo, hi := b.head, len(b.blocks)-1
	for lo < hi {
		m := (lo + hi + 1) / 2
		if b.blocks[m].off <= off {
			lo = m
		} else {
			hi = m - 1
		}
	}
	return lo
}

// Slices appends to dst the held bytes from off to the end, at most limit
// of them (limit <= 0: all), as slices of the blocks (one per block). They
// stay valid after later appends and trims. ok is false when off is outside
// the servable window (see Contains): a replica that fell out of it is
// dropped and comes back with a full resync.
func (b *Backlog) Slices(off, limit int64, dst [][]byte) (_ [][]byte, ok bool) {
	if !b.Contains(off) {
		return dst, false
	}
	if off > b.end {
		return dst, true
	}
	for i := b.find(off); i < len(b.blocks); i++ {
		k := b.blocks[i]
		p := k.buf[off-k.off:]
		if limit > 0 && int64(len(p)) > limit {
			p = p[:limit]
		}
		if len(p) > 0 {
			dst = append(dst, p)
		}
		off += int64(len(p))
		if limit > 0 {
			if limit -= int64(len(p)); limit == 0 {
				break
			}
		}
	}
	return dst, true
}

// ReadFrom copies the bytes from offset to the end, as addReplyReplicationBacklog
// sends to a replica granted +CONTINUE. ok is false when offset is outside
// the servable window (see Contains).
func (b *Backlog) ReadFrom(offset int64) (p []byte, ok bool) {
	parts, ok := b.Slices(offset, 0, nil)
	if !ok {
		return nil, false
	}
	p = make([]byte, 0, b.end-offset+1)
	for _, x := range parts {
		p = append(p, x...)
	}
	return p, true
}

// Cursor is one replica's position in the shared buffer: Offset is the
// next byte the replica has not been given yet.
type Cursor struct {
	Offset int64
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
