package replication

import (
	"bytes"
	"fmt"
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
	if NewBacklog(1, 0).Size() != MinBacklogSize {
		t.Fatal("size not floored to 16 KiB")
	}
}

func TestBacklogContainsEdges(t *testing.T) {
	b := NewBacklog(MinBacklogSize, 1000)
	// Empty history: only End()+1 (= First()) is servable.
	for off, want := range map[int64]bool{1000: false, 1001: true, 1002: false} {
		if b.Contains(off) != want {
			t.Errorf("empty: Contains(%d) = %v", off, !want)
		}
	}
	b.Append(streamBytes(1001, 3*MinBacklogSize+5)) // wraps three times
	end := int64(1000 + 3*MinBacklogSize + 5)
	first := end - MinBacklogSize + 1
	if b.End() != end || b.First() != first || b.Histlen() != MinBacklogSize {
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

// TestBacklogReadFromEveryOffset appends in uneven pieces through several
// wraps and checks that every servable offset reads back exactly the
// stream's bytes, through ReadFrom and through a Cursor.
func TestBacklogReadFromEveryOffset(t *testing.T) {
	const size = MinBacklogSize
	for _, piece := range []int64{1, 7, 1000, size - 1, size, size + 3, 3 * size} {
		b := NewBacklog(size, 0)
		var written int64
		for i := 0; written < 3*size+11; i++ {
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
				a, c, ok := b.Pending(b.NewCursor(off))
				if !ok || !bytes.Equal(append(append([]byte{}, a...), c...), got) {
					t.Fatalf("piece %d: cursor at %d disagrees with ReadFrom", piece, off)
				}
			}
		}
		if b.Histlen() != min(written, size) {
			t.Fatalf("piece %d: histlen %d", piece, b.Histlen())
		}
	}
}

func TestCursorsShareTheRing(t *testing.T) {
	b := NewBacklog(MinBacklogSize, 0)
	b.Append(streamBytes(1, 100))
	fast, slow := b.NewCursor(b.End()+1), b.NewCursor(1)
	var got []byte
	for i := 0; i < 40; i++ {
		b.Append(streamBytes(b.End()+1, 1000))
		a, c, ok := b.Pending(fast)
		if !ok {
			t.Fatal("fast cursor dropped")
		}
		got = append(append(got, a...), c...)
		fast.Advance(len(a) + len(c))
	}
	if want := streamBytes(101, 40000); !bytes.Equal(got, want) {
		t.Fatal("fast cursor streamed wrong bytes")
	}
	// The slow cursor never advanced: its byte 1 was overwritten.
	if _, _, ok := b.Pending(slow); ok {
		t.Fatal("slow cursor should have fallen out of the window")
	}
	// A cursor beyond the end is out of the window too.
	if _, _, ok := b.Pending(Cursor{Offset: b.End() + 2}); ok {
		t.Fatal("cursor past the end accepted")
	}
	// Caught up: nothing pending, still in the window.
	if a, c, ok := b.Pending(fast); !ok || len(a)+len(c) != 0 {
		t.Fatal("caught-up cursor")
	}
}

func TestBacklogResizeKeepsNewest(t *testing.T) {
	for _, c := range []struct {
		name               string
		size, fill, resize int64
	}{
		{"shrink full ring", 4 * MinBacklogSize, 5*MinBacklogSize + 17, MinBacklogSize},
		{"shrink partial", 4 * MinBacklogSize, 2*MinBacklogSize + 3, MinBacklogSize},
		{"shrink below history floor", 4 * MinBacklogSize, 100, 10},
		{"grow full ring", MinBacklogSize, 3*MinBacklogSize + 1, 2 * MinBacklogSize},
		{"grow empty", MinBacklogSize, 0, 3 * MinBacklogSize},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := NewBacklog(c.size, 500)
			b.Append(streamBytes(501, c.fill))
			end := b.End()
			b.Resize(c.resize)
			size := max(c.resize, MinBacklogSize)
			hist := min(c.fill, c.size, size)
			if b.Size() != size || b.End() != end || b.Histlen() != hist || b.First() != end-hist+1 {
				t.Fatalf("size=%d end=%d hist=%d first=%d", b.Size(), b.End(), b.Histlen(), b.First())
			}
			got, _ := b.ReadFrom(b.First())
			if !bytes.Equal(got, streamBytes(b.First(), hist)) {
				t.Fatal("resize lost the newest bytes")
			}
			// Keep streaming through the new ring.
			b.Append(streamBytes(end+1, 2*size+9))
			got, _ = b.ReadFrom(b.First())
			if b.Histlen() != size || !bytes.Equal(got, streamBytes(b.First(), size)) {
				t.Fatal("streaming after resize")
			}
		})
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

// TestBacklogAgainstModel drives a backlog with seeded random appends and
// resizes and checks it against the whole stream kept in a slice.
func TestBacklogAgainstModel(t *testing.T) {
	rnd := rand.New(rand.NewSource(42))
	var all []byte // all[i] is the byte numbered i+1
	b := NewBacklog(MinBacklogSize, 0)
	size := int64(MinBacklogSize)
	hist := int64(0)
	for step := 0; step < 3000; step++ {
		switch r := rnd.Intn(100); {
		case r < 3:
			size = MinBacklogSize + rnd.Int63n(3*MinBacklogSize)
			b.Resize(size)
			hist = min(hist, size)
		default:
			n := rnd.Int63n(int64([]int{10, 300, 5000, 40000}[rnd.Intn(4)])) + 1
			p := make([]byte, n)
			rnd.Read(p)
			all = append(all, p...)
			b.Append(p)
			hist = min(hist+n, size)
		}
		end := int64(len(all))
		if b.End() != end || b.Histlen() != hist || b.First() != end-hist+1 || b.Size() != size {
			t.Fatalf("step %d: end %d hist %d first %d size %d; want %d %d %d %d", step, b.End(), b.Histlen(), b.First(), b.Size(), end, hist, end-hist+1, size)
		}
		off := b.First() + rnd.Int63n(hist+1)
		a, c, ok := b.Pending(Cursor{Offset: off})
		if !ok || !bytes.Equal(append(append([]byte{}, a...), c...), all[off-1:]) {
			t.Fatalf("step %d: bytes from %d differ", step, off)
		}
		if _, _, ok := b.Pending(Cursor{Offset: b.First() - 1}); ok && b.First() > 1 {
			t.Fatalf("step %d: offset before the window accepted", step)
		}
	}
}
