package aof

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vigil-kv/vigil/internal/resp"
)

// Fsync is appendfsync.
type Fsync int

// appendfsync policies (AOF_FSYNC_*).
const (
	FsyncNo Fsync = iota
	FsyncAlways
	FsyncEverysec
)

// ParseFsync maps an appendfsync value.
func ParseFsync(s string) Fsync {
	switch s {
	case "always":
		return FsyncAlways
	case "no":
		return FsyncNo
	}
	return FsyncEverysec
}

// Writer is the append side of the AOF: feedAppendOnlyFile's buffer
// (server.aof_buf) and flushAppendOnlyFile. Append and Flush are called
// with the server's execution lock held, as Redis calls them from its one
// thread; the everysec fsync runs in a goroutine of its own (Redis's bio
// thread), so the command path never waits for it.
type Writer struct {
	f      *os.File // the incremental file written now
	buf    []byte   // aof_buf
	stream resp.CommandStream

	// Policy is appendfsync; NoFsyncOnRewrite with Rewriting set is
	// no-appendfsync-on-rewrite during a rewrite. Set under the lock.
	Policy           Fsync
	NoFsyncOnRewrite bool
	Rewriting        bool

	size           int64 // aof_current_size: base + incremental bytes
	fileSize       int64 // bytes in f
	lastTS         int64 // aof_cur_timestamp
	lastFsync      time.Time
	postponedStart time.Time             // aof_flush_postponed_start
	delayed        int64                 // aof_delayed_fsync
	lastWriteErr   error                 // aof_last_write_status (nil: ok)
	lastErrno      error                 // aof_last_write_errno: the cause of lastWriteErr
	fsyncErr       atomic.Pointer[error] // aof_bio_fsync_status/errno (nil: ok)

	fsyncOffset atomic.Int64 // aof_fsync_offset, set by the fsync goroutine too
	pending     atomic.Int64 // jobs queued or running (aof_pending_bio_fsync)
	jobs        chan fsyncJob
	wg          sync.WaitGroup
	warn        func(string)
}

type fsyncJob struct {
	f      *os.File
	upto   int64
	close  bool
	update bool // upto is for the current file: advance fsyncOffset
}

// NewWriter appends to f, whose bytes (with the base's) already count
// size. warn logs warnings (may be nil).
func NewWriter(f *os.File, size int64, policy Fsync, warn func(string)) *Writer {
	w := &Writer{f: f, size: size, Policy: policy, jobs: make(chan fsyncJob, 16), warn: warn}
	w.fsyncOffset.Store(size)
	if fi, err := f.Stat(); err == nil {
		w.fileSize = fi.Size()
	}
	w.wg.Add(1)
	go w.fsyncLoop()
	return w
}

func (w *Writer) fsyncLoop() {
	defer w.wg.Done()
	for j := range w.jobs {
		err := j.f.Sync()
		if err == nil && j.update {
			w.fsyncOffset.Store(j.upto)
		}
		// aof_bio_fsync_status: a failed background fsync denies writes
		// (-MISCONF) until one succeeds.
		if err != nil {
			w.fsyncErr.Store(&err)
		} else {
			w.fsyncErr.Store(nil)
		}
		if j.close {
			j.f.Close()
		}
		w.pending.Add(-1)
	}
}

// Append adds a command run in db to the buffer (feedAppendOnlyFile),
// preceded by SELECT when the database changed.
func (w *Writer) Append(db int, argv [][]byte) { w.buf = w.stream.Append(w.buf, db, argv) }

// Timestamp adds the "#TS:<unix seconds>" annotation when the second
// changed since the last one (aof-timestamp-enabled:
// genAofTimestampAnnotationIfNeeded). The loader skips annotations.
func (w *Writer) Timestamp(sec int64) {
	if sec > w.lastTS {
		w.buf = append(w.buf, "#TS:"...)
		w.buf = strconv.AppendInt(w.buf, sec, 10)
		w.buf = append(w.buf, '\r', '\n')
		w.lastTS = sec
	}
}

// AppendRaw adds already encoded commands; the caller's stream encoding
// must have the writer's selected database in mind (ResetStream).
func (w *Writer) AppendRaw(b []byte) { w.buf = append(w.buf, b...) }

// Buffered is aof_buffer_length.
func (w *Writer) Buffered() int { return len(w.buf) }

// Size is aof_current_size.
func (w *Writer) Size() int64 { return w.size }

// SetSize corrects aof_current_size (after a rewrite).
func (w *Writer) SetSize(n int64) { w.size = n; w.fsyncOffset.Store(n) }

// Delayed is aof_delayed_fsync.
func (w *Writer) Delayed() int64 { return w.delayed }

// PendingFsync is aof_pending_bio_fsync.
func (w *Writer) PendingFsync() int64 { return w.pending.Load() }

// LastWriteErr is aof_last_write_status: nil when the last write worked.
func (w *Writer) LastWriteErr() error { return w.lastWriteErr }

// DiskError is writeCommandsDeniedByDiskError's AOF part: the cause
// (aof_last_write_errno) of the last failed write, or of the last
// background fsync when it failed; nil when writes may go on. A later
// successful write (or fsync) clears it, as in Redis.
func (w *Writer) DiskError() error {
	if w.lastWriteErr != nil {
		return w.lastErrno
	}
	if p := w.fsyncErr.Load(); p != nil {
		return *p
	}
	return nil
}

// Retry is serverCron's once-a-second flushAppendOnlyFile(0) while the
// last write failed: the kept buffer is written again, and a success
// clears the error (MISCONF).
func (w *Writer) Retry(now time.Time) error {
	if w.lastWriteErr == nil {
		return nil
	}
	return w.Flush(now, false)
}

// SwapFileForFault replaces the file written to and returns the previous
// one: fault injection for tests (a file on /dev/full makes every write
// fail with ENOSPC, even as root). Call it under the execution lock.
func (w *Writer) SwapFileForFault(f *os.File) *os.File {
	old := w.f
	w.f = f
	return old
}

// Flush is flushAppendOnlyFile: write the buffer and, by policy, fsync
// (always), schedule a background fsync once a second (everysec) or leave
// it to the kernel (no). With everysec and a background fsync still
// running, the write is postponed up to two seconds, then done anyway
// (counted in Delayed). force writes regardless (shutdown, rewrite
// start). An error with appendfsync always is fatal for the caller, as in
// Redis ("Can't recover from AOF write error").
func (w *Writer) Flush(now time.Time, force bool) error {
	if len(w.buf) == 0 {
		// Nothing to write, but an everysec fsync may be due for what
		// an earlier write left (the fsync offset lags the size).
		if w.Policy == FsyncEverysec && w.fsyncOffset.Load() != w.size &&
			now.Sub(w.lastFsync) >= time.Second && w.pending.Load() == 0 {
			w.scheduleFsync(now)
		}
		return nil
	}
	if w.Policy == FsyncEverysec && !force && w.pending.Load() > 0 {
		if w.postponedStart.IsZero() {
			w.postponedStart = now
			return nil
		}
		if now.Sub(w.postponedStart) < 2*time.Second {
			return nil
		}
		w.delayed++
		if w.warn != nil {
			w.warn("Asynchronous AOF fsync is taking too long (disk is busy?). Writing the AOF buffer without waiting for fsync to complete, this may slow down Redis.")
		}
	}
	n, err := w.f.Write(w.buf)
	if err != nil {
		// Remove a partial write so that the file ends on a command
		// (flushAppendOnlyFile's ftruncate).
		if n > 0 {
			if terr := w.f.Truncate(w.fileSize); terr == nil {
				n = 0
			}
		}
		w.size += int64(n)
		w.fileSize += int64(n)
		if n > 0 {
			w.buf = w.buf[n:]
		}
		w.lastWriteErr = fmt.Errorf("Error writing to the AOF file: %w", err)
		w.lastErrno = errnoOf(err)
		return w.lastWriteErr
	}
	if w.lastWriteErr != nil && w.warn != nil {
		w.warn("AOF write error looks solved, Redis can write again.")
	}
	w.postponedStart = time.Time{}
	w.size += int64(n)
	w.fileSize += int64(n)
	w.lastWriteErr = nil
	if cap(w.buf) <= 4000 {
		w.buf = w.buf[:0]
	} else {
		w.buf = nil
	}
	if w.NoFsyncOnRewrite && w.Rewriting {
		return nil
	}
	switch w.Policy {
	case FsyncAlways:
		if err := w.f.Sync(); err != nil {
			w.lastWriteErr = fmt.Errorf("Can't persist AOF for fsync error when the AOF fsync policy is 'always': %w", err)
			w.lastErrno = errnoOf(err)
			return w.lastWriteErr
		}
		w.lastFsync = now
		w.fsyncOffset.Store(w.size)
	case FsyncEverysec:
		if now.Sub(w.lastFsync) >= time.Second && w.pending.Load() == 0 {
			w.scheduleFsync(now)
		}
	}
	return nil
}

func (w *Writer) scheduleFsync(now time.Time) {
	w.pending.Add(1)
	select {
	case w.jobs <- fsyncJob{f: w.f, upto: w.size, update: true}:
		w.lastFsync = now
	default:
		w.pending.Add(-1)
	}
}

// Switch makes f the file appended to (a new incremental file). The
// buffer must have been flushed; the old file is fsynced and closed in
// the background (aof_background_fsync_and_close) unless the policy is
// always, where it is already synced.
func (w *Writer) Switch(f *os.File) {
	old := w.f
	w.f = f
	w.fileSize = 0
	if fi, err := f.Stat(); err == nil {
		w.fileSize = fi.Size()
	}
	w.stream.Reset() // a new file starts with SELECT
	if old != nil {
		w.pending.Add(1)
		w.jobs <- fsyncJob{f: old, close: true}
	}
}

// Discard drops the buffer (backgroundRewriteDoneHandler's cleanup of
// aof_buf while the AOF waits for its first rewrite); the next command
// gets SELECT.
func (w *Writer) Discard() {
	w.buf = w.buf[:0]
	w.postponedStart = time.Time{}
	w.stream.Reset()
}

// ResetStream forgets the selected database (the next command gets
// SELECT), as a rewrite does for the new incremental file.
func (w *Writer) ResetStream() { w.stream.Reset() }

// Sync fsyncs the current file now (stopAppendOnly, shutdown).
func (w *Writer) Sync() error {
	if err := w.f.Sync(); err != nil {
		return err
	}
	w.fsyncOffset.Store(w.size)
	return nil
}

// Close flushes, fsyncs and closes the file and stops the fsync
// goroutine.
func (w *Writer) Close(now time.Time) error {
	err := w.Flush(now, true)
	if serr := w.f.Sync(); err == nil {
		err = serr
	}
	close(w.jobs)
	w.wg.Wait()
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// errnoOf is the system error under err (a *PathError's errno), what
// Redis reports with strerror(aof_last_write_errno).
func errnoOf(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Strerror words err as C's strerror does (a capital first letter:
// "No space left on device").
func Strerror(err error) string {
	s := err.Error()
	if s != "" && s[0] >= 'a' && s[0] <= 'z' {
		s = string(s[0]-'a'+'A') + s[1:]
	}
	return s
}
