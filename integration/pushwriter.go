package integration

import (
	"context"
	"fmt"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"github.com/redis/go-redis/v9"
)

// PushWriter RPUSHes 1, 2, 3, ... to one list through a client (a go-redis
// FailoverClient in the failover specs), one push every 5 ms, and records
// the pushes whose reply was OK: the acknowledged writes (any error, an
// UNACKED in sync-ack mode included, is not one). The failover specs stop
// it after the hand-over and check with Missing that every acknowledged
// push is on the new master.
type PushWriter struct {
	Key    string
	client *redis.Client
	mu     sync.Mutex
	acked  []int64
	errs   int
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

// StartPushWriter starts the loop on client, each push bounded by timeout;
// it stops on Stop or when the spec ends.
func StartPushWriter(client *redis.Client, key string, timeout time.Duration) *PushWriter {
	GinkgoHelper()
	w := &PushWriter{Key: key, client: client, done: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	go func() {
		defer GinkgoRecover()
		defer close(w.done)
		for i := int64(1); ctx.Err() == nil; i++ {
			wctx, stop := context.WithTimeout(ctx, timeout)
			err := w.client.RPush(wctx, key, i).Err()
			stop()
			w.mu.Lock()
			if err == nil {
				w.acked = append(w.acked, i)
			} else {
				w.errs++
			}
			w.mu.Unlock()
			select {
			case <-ctx.Done():
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	DeferCleanup(w.Stop)
	return w
}

// Stop ends the loop and waits for it.
func (w *PushWriter) Stop() {
	w.once.Do(func() {
		w.cancel()
		<-w.done
	})
}

// Count returns how many pushes were acknowledged so far.
func (w *PushWriter) Count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.acked)
}

// Missing returns the acknowledged pushes that are not in list (the LRANGE
// of the key on a server).
func (w *PushWriter) Missing(list []string) []int64 {
	have := map[string]bool{}
	for _, v := range list {
		have[v] = true
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	var lost []int64
	for _, v := range w.acked {
		if !have[fmt.Sprint(v)] {
			lost = append(lost, v)
		}
	}
	return lost
}

// Report is "acknowledged / failed" for AddReportEntry.
func (w *PushWriter) Report() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return fmt.Sprintf("%d / %d", len(w.acked), w.errs)
}
