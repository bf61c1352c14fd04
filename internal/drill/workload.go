package drill

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vigil-kv/vigil/client"
)

// workload runs clients goroutines, each with its own client.Client,
// until ctx ends, recording every operation in h.
type workload struct {
	opts     client.Options
	clients  int
	wait     int
	regKeys  int
	opTime   time.Duration
	pace     time.Duration
	seed     int64
	runID    string // this run's id, in every key: a reused data set cannot mask a loss
	start    time.Time
	h        *History
	writesOK atomic.Int64
	onChange func(client int, old, new, source string)
	// gens counts each client's master changes (Op.Node is set only when
	// none happened during the operation).
	gens []atomic.Uint64
}

func (w *workload) since() time.Duration { return time.Since(w.start) }

func (w *workload) run(ctx context.Context) error {
	var wg sync.WaitGroup
	cls := make([]*client.Client, w.clients)
	w.gens = make([]atomic.Uint64, w.clients)
	for i := range cls {
		o := w.opts
		o.ClientName = fmt.Sprintf("drill-%d", i)
		o.MaxRetries = -1 // every outcome is recorded as it happened
		o.RetryWrites = false
		o.OnMasterChange = func(old, new, source string) {
			w.gens[i].Add(1)
			if w.onChange != nil {
				w.onChange(i, old, new, source)
			}
		}
		c, err := client.New(o)
		if err != nil {
			for _, c := range cls[:i] {
				c.Close()
			}
			return err
		}
		cls[i] = c
	}
	for i, c := range cls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			w.worker(ctx, i, c)
		}()
	}
	wg.Wait()
	return nil
}

func (w *workload) worker(ctx context.Context, id int, c *client.Client) {
	r := rand.New(rand.NewSource(w.seed + int64(id)*7919))
	for seq := 0; ctx.Err() == nil; seq++ {
		p := r.Intn(10)
		switch {
		case p < 5:
			w.write(c, id, seq)
		case p < 8:
			w.regWrite(c, id, seq, fmt.Sprintf("drill:%s:r:%d", w.runID, r.Intn(w.regKeys)))
		default:
			w.regRead(c, id, fmt.Sprintf("drill:%s:r:%d", w.runID, r.Intn(w.regKeys)))
		}
		select {
		case <-ctx.Done():
		case <-time.After(w.pace):
		}
	}
}

// node is the master c writes to if it has not changed since the client's
// generation was gen ("" otherwise, or when it is not known at once): the
// server that answered an operation that succeeded in between.
func (w *workload) node(c *client.Client, id int, gen uint64) string {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	a, err := c.MasterAddr(ctx)
	if err != nil || w.gens[id].Load() != gen {
		return ""
	}
	return a
}

func (w *workload) write(c *client.Client, id, seq int) {
	key := fmt.Sprintf("drill:%s:w:%d:%d", w.runID, id, seq)
	gen := w.gens[id].Load()
	op := Op{Client: id, Kind: KindWrite, Key: key, Value: fmt.Sprintf("%d-%d", id, seq), Invoke: w.since()}
	ctx, cancel := context.WithTimeout(context.Background(), w.opTime)
	defer cancel()
	var err error
	if w.wait > 0 {
		var set *redis.StatusCmd
		var wait *redis.Cmd
		_, err = c.Pipelined(ctx, func(p redis.Pipeliner) error {
			set = p.Set(ctx, key, op.Value, 0)
			wait = p.Do(ctx, "WAIT", w.wait, 500)
			return nil
		})
		if set != nil && set.Err() == nil {
			err = nil
			n, werr := wait.Int()
			op.Replicas = n
			op.Acked = werr == nil && n >= w.wait
		} else if set != nil && set.Err() != nil {
			err = set.Err()
		}
	} else {
		err = c.Set(ctx, key, op.Value, 0).Err()
		op.Acked = err == nil
	}
	op.Done = w.since()
	op.Status, op.Err = classify(err)
	if op.Status == StatusOK {
		w.writesOK.Add(1)
		op.Node = w.node(c, id, gen)
	}
	w.h.Add(op)
}

func (w *workload) regWrite(c *client.Client, id, seq int, key string) {
	gen := w.gens[id].Load()
	op := Op{Client: id, Kind: KindRegWrite, Key: key, Value: fmt.Sprintf("%d-%d", id, seq), Invoke: w.since()}
	ctx, cancel := context.WithTimeout(context.Background(), w.opTime)
	defer cancel()
	err := c.Set(ctx, key, op.Value, 0).Err()
	op.Done = w.since()
	op.Status, op.Err = classify(err)
	op.Acked = op.Status == StatusOK
	if op.Acked {
		op.Node = w.node(c, id, gen)
	}
	w.h.Add(op)
}

func (w *workload) regRead(c *client.Client, id int, key string) {
	gen := w.gens[id].Load()
	op := Op{Client: id, Kind: KindRegRead, Key: key, Invoke: w.since()}
	ctx, cancel := context.WithTimeout(context.Background(), w.opTime)
	defer cancel()
	v, err := c.Get(ctx, key).Result()
	if errors.Is(err, redis.Nil) {
		err = nil
	}
	op.Value = v
	op.Done = w.since()
	op.Status, op.Err = classify(err)
	if op.Status == StatusOK {
		op.Node = w.node(c, id, gen)
	}
	w.h.Add(op)
}

// classify maps a command's error to an outcome: an error reply (the
// server answered: -READONLY, -MASTERDOWN, ...) or a refusal before sending
// (ErrStaleMaster, a failed dial) had no effect; anything else (a timeout,
// a connection broken after sending) may have. So may the error replies of
// a write that ran and whose reply was held (sync-ack mode): -UNACKED (too
// few replicas acknowledged it in time) and -UNBLOCKED (the wait was ended:
// CLIENT UNBLOCK, or the master turned into a replica).
func classify(err error) (Status, string) {
	if err == nil {
		return StatusOK, ""
	}
	msg := err.Error()
	if strings.HasPrefix(msg, "UNACKED ") || strings.HasPrefix(msg, "UNBLOCKED ") {
		return StatusUnknown, msg
	}
	var rerr redis.Error
	if errors.As(err, &rerr) || errors.Is(err, client.ErrStaleMaster) ||
		strings.Contains(msg, "connection refused") || strings.Contains(msg, "dial tcp") ||
		strings.Contains(msg, "connection pool timeout") {
		return StatusFailed, msg
	}
	return StatusUnknown, msg
}

// readBack reads every key of ops from the current master through a fresh
// client, retrying until ctx ends.
func readBack(ctx context.Context, opts client.Options, ops []Op) (map[string]string, string, error) {
	seen := map[string]bool{}
	var keys []string
	for _, op := range ops {
		if op.Kind == KindWrite && !seen[op.Key] {
			seen[op.Key] = true
			keys = append(keys, op.Key)
		}
	}
	opts.ClientName = "drill-readback"
	c, err := client.New(opts)
	if err != nil {
		return nil, "", err
	}
	defer c.Close()
	out := map[string]string{}
	for i := 0; i < len(keys); {
		j := min(i+500, len(keys))
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		vals, err := c.MGet(cctx, keys[i:j]...).Result()
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return nil, "", fmt.Errorf("reading back the writes: %w", err)
			}
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
			continue
		}
		for k, v := range vals {
			if s, ok := v.(string); ok {
				out[keys[i+k]] = s
			}
		}
		i = j
	}
	master, _ := c.MasterAddr(ctx)
	return out, master, nil
}
