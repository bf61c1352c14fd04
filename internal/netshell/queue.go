package netshell

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Queue is a connection's bounded output queue and its writer: Push never
// blocks, so an event loop can publish to slow subscribers, and a client
// whose queued output would pass Max bytes (pub/sub events included) is
// disconnected, like Redis's client-output-buffer-limit. Run writes the
// queue in order until Close has drained it or a write fails.
type Queue struct {
	conn net.Conn
	max  int
	// Writes and Out, when set, count each write and its bytes before the
	// write is made, as writeToClient does: a client that has read a reply
	// and asks INFO sees it counted. Bytes a failed write did not send are
	// taken back from Out.
	writes, out *atomic.Int64

	mu     sync.Mutex
	q      [][]byte
	bytes  int
	closed bool
	sig    chan struct{}
	done   chan struct{}
}

// NewQueue makes conn's queue; the caller starts Run on its own goroutine.
// writes and out may be nil.
func NewQueue(conn net.Conn, max int, writes, out *atomic.Int64) *Queue {
	return &Queue{conn: conn, max: max, writes: writes, out: out, sig: make(chan struct{}, 1), done: make(chan struct{})}
}

// Push hands b (which the queue then owns) to the writer; it reports false
// when the queue is closed or b would pass the limit, which closes conn.
func (q *Queue) Push(b []byte) bool {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return false
	}
	if q.bytes+len(b) > q.max {
		q.closed = true
		q.mu.Unlock()
		q.conn.Close()
		return false
	}
	q.q = append(q.q, b)
	q.bytes += len(b)
	q.mu.Unlock()
	q.wake()
	return true
}

func (q *Queue) wake() {
	select {
	case q.sig <- struct{}{}:
	default:
	}
}

// Run writes queued output in order until the queue is closed and drained
// (Close) or a write fails, which closes conn.
func (q *Queue) Run() {
	defer close(q.done)
	for {
		q.mu.Lock()
		batch := q.q
		q.q = nil
		q.bytes = 0
		closed := q.closed
		q.mu.Unlock()
		for _, b := range batch {
			if q.writes != nil {
				q.writes.Add(1)
			}
			if q.out != nil {
				q.out.Add(int64(len(b)))
			}
			q.conn.SetWriteDeadline(time.Now().Add(30 * time.Second))
			n, err := q.conn.Write(b)
			if err != nil {
				if q.out != nil {
					q.out.Add(int64(n - len(b)))
				}
				q.mu.Lock()
				q.closed = true
				q.mu.Unlock()
				q.conn.Close()
				return
			}
		}
		if closed && len(batch) == 0 {
			return
		}
		if len(batch) == 0 {
			<-q.sig
		}
	}
}

// Close stops accepting output and waits for Run to drain what is queued.
func (q *Queue) Close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.wake()
	<-q.done
}
