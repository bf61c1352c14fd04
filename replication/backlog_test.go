package replication

import (
	"bytes"
	"fmt"
	"math"
	"math/rand"
	"testing"
	"time"
)

// stream returns n bytes whose byte numbered o (from 1) is a function of o.
func streamBytes(from, n int64) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = byte((from + int64(i)) * 7 % 251)
	}
	return p
}

func TestBacklogCreatedAsRedis(t *testing.T) {
	// createReplicationBacklog: offset = master_repl_offset+1, histlen 0.
	// Observed on redis-server: a replica's fresh backlog after a full sync
	// at offset 78 reports first_byte_offset 79 and histlen 0
	// (testdata/replica_link_down.txt).
	b := NewBacklog(DefaultBacklogSize, 78)
	if b.First() != 79 || b.Histlen() != 0 || b.End() != 78 || b.Size() != DefaultBacklogSize {
		t.Fatalf("first=%d hist=%d end=%d size=%d", b.First(), b.Histlen(), b.End(), b.Size())
	}
	// A master's backlog created at offset 0 holding 50 bytes reports
	// first_byte_offset 1 and histlen 50 (testdata/master_with_replica.txt).
	b = NewBacklog(DefaultBacklogSize, 0)
	b.Append(streamBytes(1, 50))
	if b.First() != 1 || b.Histlen() != 50 || b.End() != 50 {
		t.Fatalf("first=%d hist=%d end=%d", b.First(), b.Histlen(), b.End())
	}
	// repl-backlog-size 1 from the configuration file stands
	// (createReplicationBacklog); a CONFIG SET floors it to 16 KiB
	// (resizeReplicationBacklog).
	b = NewBacklog(1, 0)
	if b.Size() != 1 {
		t.Fatalf("size %d, want the configured 1", b.Size())
	}
	if b.Resize(1); b.Size() != MinBacklogSize {
		t.Fatalf("size %d after Resize(1), want 16 KiB", b.Size())
	}
}

// maxBlock is the largest block a backlog of size allocates: histlen
// exceeds size by less than that when no replica holds blocks.
func maxBlock(size int64) int64 {
	return allocSize(max(size/16, BlockSize)+blockHeader) - blockHeader
}

func TestBacklogContainsEdges(t *testing.T) {
	b := NewBacklog(MinBacklogSize, 1000)
	// Empty history: only End()+1 (= First()) is servable.
	for off, want := range map[int64]bool{1000: false, 1001: true, 1002: false} {
		if b.Contains(off) != want {
			t.Errorf("empty: Contains(%d) = %v", off, !want)
		}
	}
	for i := 0; i < 3*MinBacklogSize+5; i += 1000 {
		b.Append(streamBytes(b.End()+1, 1000))
	}
	end := b.End()
	first := b.First()
	if end-first+1 != b.Histlen() || b.Histlen() <= MinBacklogSize || b.Histlen() >= MinBacklogSize+maxBlock(MinBacklogSize) {
		t.Fatalf("end=%d first=%d hist=%d", b.End(), b.First(), b.Histlen())
	}
	for _, c := range []struct {
		off  int64
		want bool
	}{
		{first - 1, false}, // psync_offset < repl_backlog->offset
		{first, true},
		{end, true},
		{end + 1, true},  // offset + histlen: nothing missing
		{end + 2, false}, // psync_offset > offset + histlen
	} {
		if got := b.Contains(c.off); got != c.want {
			t.Errorf("Contains(%d) = %v, want %v", c.off, got, c.want)
		}
	}
}

// TestBlocksAsRedis: blocks are allocated as feedReplicationBuffer does
// (16 KiB at least, rounded to jemalloc's size class: 16384+40 bytes come
// as 20480, so a block holds 20440 bytes and costs 20480+24 in
// repl_buffer_mem), and trimmed a whole block at a time.
func TestBlocksAsRedis(t *testing.T) {
	b := NewBacklog(MinBacklogSize, 0)
	b.Append(streamBytes(1, 10))
	if b.Mem() != 20504 {
		t.Fatalf("mem %d after 10 bytes", b.Mem())
	}
	b.Append(streamBytes(11, 20430))
	if b.Mem() != 20504 || b.Histlen() != 20440 {
		t.Fatalf("mem %d hist %d after one full block", b.Mem(), b.Histlen())
	}
	b.Append(streamBytes(20441, 1))
	// Two blocks; dropping the first would leave 1 byte < 16 KiB: kept.
	if b.Mem() != 2*20504 || b.Histlen() != 20441 || b.First() != 1 {
		t.Fatalf("mem %d hist %d first %d", b.Mem(), b.Histlen(), b.First())
	}
	b.Append(streamBytes(20442, 20439+MinBacklogSize+1))
	// Three blocks, the last holding 16385 bytes: the first two go (the
	// history without each is still over 16 KiB).
	if b.Mem() != 20504 || b.Histlen() != MinBacklogSize+1 || b.First() != 2*20440+1 {
		t.Fatalf("mem %d hist %d first %d", b.Mem(), b.Histlen(), b.First())
	}
	// A big append with a big backlog: blocks of size/16.
	b = NewBacklog(100<<20, 0)
	b.Append(make([]byte, 10<<20))
	first := allocSize(100<<20/16 + blockHeader)
	if want := first + allocSize(10<<20-(first-blockHeader)+blockHeader) + 2*blockNode; b.Mem() != want || want != 11010096 {
		t.Fatalf("mem %d after 10 MB, want %d", b.Mem(), want)
	}
}

// TestBacklogReadFromEveryOffset appends in uneven pieces and checks that
// every servable offset reads back exactly the stream's bytes, through
// ReadFrom and through Slices with and without a limit.
func TestBacklogReadFromEveryOffset(t *testing.T) {
	const size = MinBacklogSize
	for _, piece := range []int64{1, 7, 1000, size - 1, size, size + 3, 3 * size} {
		b := NewBacklog(size, 0)
		var written int64
		for i := 0; written < 6*size+11; i++ {
			b.Append(streamBytes(written+1, piece))
			written += piece
			if piece < 100 && i%97 != 0 {
				continue
			}
			for _, off := range []int64{b.First(), b.First() + 1, (b.First() + b.End()) / 2, b.End(), b.End() + 1} {
				if off < b.First() {
					continue
				}
				got, ok := b.ReadFrom(off)
				if !ok {
					t.Fatalf("piece %d: ReadFrom(%d) refused, window %d..%d", piece, off, b.First(), b.End())
				}
				if want := streamBytes(off, b.End()-off+1); !bytes.Equal(got, want) {
					t.Fatalf("piece %d: ReadFrom(%d) wrong bytes (len %d want %d)", piece, off, len(got), len(want))
				}
				parts, ok := b.Slices(off, 1000, nil)
				if !ok || !bytes.Equal(bytes.Join(parts, nil), got[:min(1000, len(got))]) {
					t.Fatalf("piece %d: Slices at %d disagrees with ReadFrom", piece, off)
				}
			}
		}
		if h := b.Histlen(); h < min(written, size) || h >= size+maxBlock(size)+piece {
			t.Fatalf("piece %d: histlen %d", piece, h)
		}
	}
}

// TestReplicaKeepsBlocks: blocks a replica still needs are not trimmed,
// so the history outgrows repl-backlog-size while it lags (and a PSYNC may
// continue from it); once it has caught up the history is trimmed back.
func TestReplicaKeepsBlocks(t *testing.T) {
	b := NewBacklog(MinBacklogSize, 0)
	b.Append(streamBytes(1, 100))
	slow := int64(50) // the replica's next byte
	for i := 0; i < 100; i++ {
		b.AppendKeep(streamBytes(b.End()+1, 1000), slow)
	}
	if b.First() != 1 || b.Histlen() != 100100 || !b.Contains(slow) {
		t.Fatalf("first %d hist %d", b.First(), b.Histlen())
	}
	if b.Mem() < b.Histlen() {
		t.Fatalf("mem %d under hist %d", b.Mem(), b.Histlen())
	}
	parts, ok := b.Slices(slow, 0, nil)
	if !ok || !bytes.Equal(bytes.Join(parts, nil), streamBytes(slow, b.End()-slow+1)) {
		t.Fatal("the lagging replica's bytes")
	}
	// The replica took 30000 bytes: the blocks before them go.
	slow += 30000
	trimAll(b, slow)
	if b.First() > slow || b.First()+maxBlock(MinBacklogSize) <= slow || b.Histlen() <= MinBacklogSize {
		t.Fatalf("first %d hist %d (replica at %d)", b.First(), b.Histlen(), slow)
	}
	// Caught up (or gone): back to about repl-backlog-size.
	trimAll(b, b.End()+1)
	if b.Histlen() <= MinBacklogSize || b.Histlen() >= MinBacklogSize+maxBlock(MinBacklogSize) {
		t.Fatalf("hist %d after the replica caught up", b.Histlen())
	}
	mem := b.Mem()
	// A cursor beyond the end is out of the window; a caught-up one is
	// in it with nothing to send.
	if _, ok := b.Slices(b.End()+2, 0, nil); ok {
		t.Fatal("offset past the end accepted")
	}
	if parts, ok := b.Slices(b.End()+1, 0, nil); !ok || len(parts) != 0 {
		t.Fatal("caught-up offset")
	}
	if b.Mem() != mem || mem > 3*20504 {
		t.Fatalf("mem %d", b.Mem())
	}
}

func TestBacklogResize(t *testing.T) {
	b := NewBacklog(4*MinBacklogSize, 500)
	b.Append(streamBytes(501, 5*MinBacklogSize+17))
	end := b.End()
	b.Resize(10)
	if b.Size() != MinBacklogSize || b.End() != end {
		t.Fatalf("size %d end %d", b.Size(), b.End())
	}
	trimAll(b, b.End()-3*MinBacklogSize) // a replica holds the newest 48 KiB
	if b.First() > b.End()-3*MinBacklogSize || b.Histlen() >= 3*MinBacklogSize+maxBlock(MinBacklogSize) {
		t.Fatalf("hist %d first %d", b.Histlen(), b.First())
	}
	trimAll(b, b.End()+1)
	if b.Histlen() >= MinBacklogSize+maxBlock(MinBacklogSize) {
		t.Fatalf("hist %d", b.Histlen())
	}
	got, _ := b.ReadFrom(b.First())
	if !bytes.Equal(got, streamBytes(b.First(), b.Histlen())) {
		t.Fatal("resize lost the newest bytes")
	}
	b.Resize(3 * MinBacklogSize)
	b.Append(streamBytes(b.End()+1, 5*MinBacklogSize))
	if b.Histlen() < 3*MinBacklogSize {
		t.Fatalf("hist %d after growing", b.Histlen())
	}
}

func TestBacklogExpired(t *testing.T) {
	t0 := time.Unix(1000, 900e6)
	hour := time.Hour
	for _, c := range []struct {
		master, backlog bool
		replicas        int
		ttl             time.Duration
		now             time.Time
		want            bool
	}{
		{true, true, 0, hour, t0.Add(hour), false},                       // idle == ttl: not yet
		{true, true, 0, hour, t0.Add(hour + 100*time.Millisecond), true}, // 1000.9 -> 4601.0: idle 3601 s
		{true, true, 0, hour, t0.Add(hour + time.Second), true},
		{true, true, 1, hour, t0.Add(2 * hour), false},  // a replica is attached
		{false, true, 0, hour, t0.Add(2 * hour), false}, // replicas keep their backlog
		{true, false, 0, hour, t0.Add(2 * hour), false}, // nothing to free
		{true, true, 0, 0, t0.Add(1000 * hour), false},  // repl-backlog-ttl 0: never
	} {
		if got := BacklogExpired(c.master, c.backlog, c.replicas, c.ttl, t0, c.now); got != c.want {
			t.Errorf("%+v: got %v", c, got)
		}
	}
}

func ExampleBacklog() {
	b := NewBacklog(DefaultBacklogSize, 0)
	b.Append([]byte("*1\r\n$4\r\nPING\r\n"))
	fmt.Println(b.First(), b.End(), b.Histlen())
	// Output: 1 14 14
}

// TestBacklogAgainstModel drives a backlog with seeded random appends,
// resizes and replica positions and checks it against the whole stream
// kept in a slice.
func TestBacklogAgainstModel(t *testing.T) {
	rnd := rand.New(rand.NewSource(42))
	var all []byte // all[i] is the byte numbered i+1
	b := NewBacklog(MinBacklogSize, 0)
	size := int64(MinBacklogSize)
	keep := int64(1)  // a replica's next byte
	floor := int64(0) // histlen's lower bound
	for step := 0; step < 3000; step++ {
		switch r := rnd.Intn(100); {
		case r < 3:
			size = MinBacklogSize + rnd.Int63n(3*MinBacklogSize)
			b.Resize(size)
			floor = min(floor, size)
		case r < 10:
			keep += rnd.Int63n(int64(len(all)) - keep + 2)
			trimAll(b, keep)
		default:
			n := rnd.Int63n(int64([]int{10, 300, 5000, 40000}[rnd.Intn(4)])) + 1
			p := make([]byte, n)
			rnd.Read(p)
			all = append(all, p...)
			floor = min(b.Histlen()+n, size)
			b.AppendKeep(p, keep)
		}
		end := int64(len(all))
		hist := b.Histlen()
		if b.End() != end || b.First() != end-hist+1 || b.Size() != size || b.First() > keep ||
			hist < floor || b.Mem() < hist {
			t.Fatalf("step %d: end %d hist %d first %d size %d mem %d; want end %d size %d keep %d", step, b.End(), hist, b.First(), b.Size(), b.Mem(), end, size, keep)
		}
		off := b.First() + rnd.Int63n(hist+1)
		parts, ok := b.Slices(off, 0, nil)
		if !ok || !bytes.Equal(bytes.Join(parts, nil), all[off-1:]) {
			t.Fatalf("step %d: bytes from %d differ", step, off)
		}
		if _, ok := b.Slices(b.First()-1, 0, nil); ok && b.First() > 1 {
			t.Fatalf("step %d: offset before the window accepted", step)
		}
	}
}

// TestBacklogMemFrom: a replica's output is the blocks from the one
// holding its next byte to the end, whole (getClientOutputBufferMemoryUsage):
// with a 16 KB backlog each block holds 20440 bytes and counts 20504.
func TestBacklogMemFrom(t *testing.T) {
	const blk, mem = 20440, 20504
	b := NewBacklog(MinBacklogSize, 0)
	if got := b.MemFrom(1); got != 0 {
		t.Fatalf("no blocks: %d", got)
	}
	b.AppendKeep(streamBytes(1, 10), 1)
	// One byte or all of the block unsent, or nothing (the last block is
	// the replica's ref_repl_buf_node once it has been sent everything).
	for _, off := range []int64{1, 10, 11} {
		if got := b.MemFrom(off); got != mem {
			t.Fatalf("MemFrom(%d) = %d, want %d", off, got, mem)
		}
	}
	b.AppendKeep(streamBytes(11, 3*blk), 1) // four blocks, the replica at 1
	for off, want := range map[int64]int64{1: 4 * mem, blk: 4 * mem, blk + 1: 3 * mem,
		3*blk + 1: mem, b.End() + 1: mem} {
		if got := b.MemFrom(off); got != want {
			t.Fatalf("MemFrom(%d) = %d, want %d", off, got, want)
		}
	}
	if b.MemFrom(1) != b.Mem() || b.Pushed() != b.Mem() {
		t.Fatalf("mem %d pushed %d from 1 %d", b.Mem(), b.Pushed(), b.MemFrom(1))
	}
	// Once the first blocks are trimmed the figure is still what follows.
	trimAll(b, b.End()+1)
	if got := b.MemFrom(b.First()); got != b.Mem() || b.Pushed() <= b.Mem() {
		t.Fatalf("after trim: MemFrom(first) %d mem %d pushed %d", got, b.Mem(), b.Pushed())
	}
}

// TestBacklogTrimIncremental: incrementalTrimReplicationBacklog frees at
// most the blocks it is given per call, and a feed at most a
// beforeSleep's (SleepTrimBlocks). With a 16 KB backlog a replica that
// held 1000 blocks and left is freed 64 blocks by the call its leaving
// makes, then 640 a feed.
func TestBacklogTrimIncremental(t *testing.T) {
	const blk, mem = 20440, 20504
	b := NewBacklog(MinBacklogSize, 0)
	b.AppendKeep(streamBytes(1, 1000*blk), 1) // a replica at 1 holds them all
	if b.Mem() != 1000*mem {
		t.Fatalf("mem %d, want 1000 blocks", b.Mem())
	}
	// The replica left: a call frees 64 blocks.
	if n := b.TrimBlocks(b.End()+1, TrimBlocksPerCall); n != 64 || b.Mem() != 936*mem {
		t.Fatalf("trimmed %d, mem %d", n, b.Mem())
	}
	// A feed (adding a block) frees 640 more, the next the rest but the
	// backlog's.
	b.AppendKeep([]byte("x"), b.End()+2)
	if b.Mem() != (936+1-640)*mem {
		t.Fatalf("after a feed: mem %d, want %d blocks", b.Mem(), 936+1-640)
	}
	b.AppendKeep([]byte("y"), b.End()+2)
	if b.Histlen() <= MinBacklogSize || b.Histlen() >= MinBacklogSize+blk {
		t.Fatalf("hist %d once trimmed", b.Histlen())
	}
}

// trimAll is TrimBlocks without a limit on the blocks trimmed.
func trimAll(b *Backlog, keep int64) { b.TrimBlocks(keep, math.MaxInt) }
