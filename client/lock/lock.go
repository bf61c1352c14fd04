package lock

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Errors.
var (
	// ErrNotAcquired: the lock is held by someone else.
	ErrNotAcquired = errors.New("lock: held by another holder")
	// ErrNotHeld: release or extend of a lock the caller does not hold
	// (expired, or taken by someone else).
	ErrNotHeld = errors.New("lock: not held by this holder")
	// ErrLost: the watchdog found the lock no longer held.
	ErrLost = errors.New("lock: lost (expired or taken over)")
	// ErrReleased: Err after a successful Release.
	ErrReleased = errors.New("lock: released")
)

// NotEnoughReplicasError: WithReplicas(n) was not met; the lock was released.
type NotEnoughReplicasError struct{ Want, Acked int }

func (e *NotEnoughReplicasError) Error() string {
	return fmt.Sprintf("lock: WAIT: %d of %d replicas acknowledged the lock", e.Acked, e.Want)
}

// Option configures a Locker.
type Option func(*Locker)

// WithTTL sets the lock TTL (default 10 s). With the watchdog it is how long
// a crashed holder keeps the lock; without it, how long the lock lasts.
func WithTTL(d time.Duration) Option { return func(l *Locker) { l.ttl = d } }

// WithoutWatchdog disables the TTL extension: the lock expires after TTL
// unless extended by hand (Lock.Extend).
func WithoutWatchdog() Option { return func(l *Locker) { l.watchdog = false } }

// WithReentrancy makes the locks reentrant for holder (an id unique to this
// holder, e.g. a process and task id): Acquire by the same holder while it
// holds the lock increments a count; the lock is freed when as many
// Releases have happened.
func WithReentrancy(holder string) Option { return func(l *Locker) { l.holder = holder } }

// WithReplicas makes Acquire issue WAIT n timeout after the lock is set and
// fail (releasing the lock) when fewer than n replicas acknowledged it.
func WithReplicas(n int, timeout time.Duration) Option {
	return func(l *Locker) { l.replicas, l.waitTimeout = n, timeout }
}

// WithRetryInterval sets how often Acquire retries while the lock is taken
// (default 50 ms).
func WithRetryInterval(d time.Duration) Option { return func(l *Locker) { l.retry = d } }

// Locker takes locks on one Redis deployment.
type Locker struct {
	rdb         redis.Cmdable
	ttl         time.Duration
	watchdog    bool
	holder      string // "" = not reentrant
	replicas    int
	waitTimeout time.Duration
	retry       time.Duration
}

// New returns a Locker using rdb (a client.Client, a *redis.Client, ...).
func New(rdb redis.Cmdable, opts ...Option) *Locker {
	l := &Locker{rdb: rdb, ttl: 10 * time.Second, watchdog: true, retry: 50 * time.Millisecond}
	for _, o := range opts {
		o(l)
	}
	return l
}

// Lock is one acquisition.
type Lock struct {
	Key string
	// Token identifies this holder in Redis (random, or the reentrant
	// holder id).
	Token string
	// Fence is the fencing token: larger for every later acquisition of
	// Key. For a reentrant re-acquisition it is the outer acquisition's.
	Fence int64

	l      *Locker
	done   chan struct{}
	mu     sync.Mutex
	err    error
	stop   chan struct{}
	stopWG sync.WaitGroup
}

// Done is closed when the lock is released or lost.
func (k *Lock) Done() <-chan struct{} { return k.done }

// Err is nil while held, ErrReleased after Release, ErrLost when lost.
func (k *Lock) Err() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.err
}

func (k *Lock) finish(err error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.err == nil {
		k.err = err
		close(k.done)
	}
}

// The scripts. KEYS[1] is the lock, KEYS[2] its fencing counter.
var (
	// SET NX PX and the fence, atomically. Returns the fence or nil.
	acquireScriptSrc = `
if redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return redis.call('incr', KEYS[2])
end
return false`
	// Compare-and-delete: only the holder's token deletes.
	releaseScriptSrc = `
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('del', KEYS[1])
end
return 0`
	// Compare-and-pexpire: only the holder's token extends.
	extendScriptSrc = `
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('pexpire', KEYS[1], ARGV[2])
end
return 0`

	// Reentrant (Redisson's layout): hash holder -> count, plus the
	// field "\0fence" holding the fence of the outer acquisition.
	reentrantAcquireScriptSrc = `
if redis.call('exists', KEYS[1]) == 0 then
  local f = redis.call('incr', KEYS[2])
  redis.call('hset', KEYS[1], ARGV[1], 1, '\0fence', f)
  redis.call('pexpire', KEYS[1], ARGV[2])
  return f
end
if redis.call('hexists', KEYS[1], ARGV[1]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[1], 1)
  redis.call('pexpire', KEYS[1], ARGV[2])
  return tonumber(redis.call('hget', KEYS[1], '\0fence'))
end
return false`
	// Returns -1 when not held, else the remaining count (0: deleted).
	reentrantReleaseScriptSrc = `
if redis.call('hexists', KEYS[1], ARGV[1]) == 0 then
  return -1
end
local c = redis.call('hincrby', KEYS[1], ARGV[1], -1)
if c > 0 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  return c
end
redis.call('del', KEYS[1])
return 0`
	reentrantExtendScriptSrc = `
if redis.call('hexists', KEYS[1], ARGV[1]) == 1 then
  return redis.call('pexpire', KEYS[1], ARGV[2])
end
return 0`
)

var (
	acquireScript          = redis.NewScript(acquireScriptSrc)
	releaseScript          = redis.NewScript(releaseScriptSrc)
	extendScript           = redis.NewScript(extendScriptSrc)
	reentrantAcquireScript = redis.NewScript(reentrantAcquireScriptSrc)
	reentrantReleaseScript = redis.NewScript(reentrantReleaseScriptSrc)
	reentrantExtendScript  = redis.NewScript(reentrantExtendScriptSrc)
)

func (l *Locker) keys(key string) []string { return []string{key, key + ":fence"} }

// TryAcquire takes the lock once; ErrNotAcquired when it is held.
func (l *Locker) TryAcquire(ctx context.Context, key string) (*Lock, error) {
	token := l.holder
	script, src := reentrantAcquireScript, reentrantAcquireScriptSrc
	if token == "" {
		token = randomToken()
		script, src = acquireScript, acquireScriptSrc
	}
	ms := l.ttl.Milliseconds()
	var fence int64
	var err error
	if l.replicas > 0 {
		// WAIT counts the replicas that acknowledged this connection's
		// writes, so it must follow the script on the same connection: a
		// pipeline uses one.
		var evalCmd *redis.Cmd
		var waitCmd *redis.Cmd
		_, err = l.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			evalCmd = p.Eval(ctx, src, l.keys(key), token, ms)
			waitCmd = p.Do(ctx, "WAIT", l.replicas, l.waitTimeout.Milliseconds())
			return nil
		})
		if evalCmd != nil && evalCmd.Err() != nil {
			err = evalCmd.Err()
		}
		if err == nil || errors.Is(err, redis.Nil) {
			fence, err = evalCmd.Int64()
			if err == nil {
				acked, werr := waitCmd.Int64()
				if werr != nil || acked < int64(l.replicas) {
					k := &Lock{Key: key, Token: token, l: l}
					_ = k.release(context.WithoutCancel(ctx))
					if werr != nil {
						return nil, fmt.Errorf("lock: WAIT: %w", werr)
					}
					return nil, &NotEnoughReplicasError{Want: l.replicas, Acked: int(acked)}
				}
			}
		}
	} else {
		fence, err = script.Run(ctx, l.rdb, l.keys(key), token, ms).Int64()
	}
	if errors.Is(err, redis.Nil) {
		return nil, ErrNotAcquired
	}
	if err != nil {
		return nil, err
	}
	k := &Lock{Key: key, Token: token, Fence: fence, l: l, done: make(chan struct{}), stop: make(chan struct{})}
	if l.watchdog {
		k.stopWG.Add(1)
		go k.watch()
	}
	return k, nil
}

// Acquire retries TryAcquire until it succeeds or ctx ends.
func (l *Locker) Acquire(ctx context.Context, key string) (*Lock, error) {
	for {
		k, err := l.TryAcquire(ctx, key)
		if !errors.Is(err, ErrNotAcquired) {
			return k, err
		}
		t := time.NewTimer(l.retry)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("%w: %w", ErrNotAcquired, ctx.Err())
		case <-t.C:
		}
	}
}

// Release frees the lock (for a reentrant lock: one level of it) and stops
// its watchdog. ErrNotHeld when the lock had expired or belongs to someone
// else; the lock is then left alone.
func (k *Lock) Release(ctx context.Context) error {
	k.stopWatch()
	err := k.release(ctx)
	if err == nil {
		k.finish(ErrReleased)
	} else if errors.Is(err, ErrNotHeld) {
		k.finish(ErrLost)
	}
	return err
}

func (k *Lock) release(ctx context.Context) error {
	l := k.l
	if l.holder != "" {
		n, err := reentrantReleaseScript.Run(ctx, l.rdb, l.keys(k.Key), k.Token, l.ttl.Milliseconds()).Int64()
		if err != nil {
			return err
		}
		if n < 0 {
			return ErrNotHeld
		}
		return nil
	}
	n, err := releaseScript.Run(ctx, l.rdb, l.keys(k.Key), k.Token).Int64()
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrNotHeld
	}
	return nil
}

// Extend resets the TTL to the Locker's TTL if the lock is still held.
func (k *Lock) Extend(ctx context.Context) error {
	l := k.l
	script := extendScript
	if l.holder != "" {
		script = reentrantExtendScript
	}
	n, err := script.Run(ctx, l.rdb, l.keys(k.Key), k.Token, l.ttl.Milliseconds()).Int64()
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrNotHeld
	}
	return nil
}

func (k *Lock) stopWatch() {
	k.mu.Lock()
	select {
	case <-k.stop:
	default:
		close(k.stop)
	}
	k.mu.Unlock()
	k.stopWG.Wait()
}

// watch extends the TTL every third of it. A definite "not held" ends the
// lock as lost. Errors (a failover, a network cut) are retried; if no
// extension succeeded for a whole TTL, the lock may have expired, so it is
// reported lost too.
func (k *Lock) watch() {
	defer k.stopWG.Done()
	ttl := k.l.ttl
	every := max(ttl/3, time.Millisecond)
	lastOK := time.Now()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-k.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), every)
		err := k.Extend(ctx)
		cancel()
		switch {
		case err == nil:
			lastOK = time.Now()
		case errors.Is(err, ErrNotHeld) || time.Since(lastOK) >= ttl:
			k.finish(ErrLost)
			return
		}
	}
}

func randomToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
