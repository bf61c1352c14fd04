package server

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/vigil-kv/vigil/internal/savechild"
	"github.com/vigil-kv/vigil/server/aof"
	"github.com/vigil-kv/vigil/server/keyspace"
)

// The append-only file (aof.c): wiring of server/aof into the server.
//
//   - At start (loadDataOnStart, from Run before any client is accepted)
//     the AOF is loaded when appendonly is yes; it has priority over the
//     RDB (loadRDBFile, persist_rdb.go). The commands run
//     through a fake client (Redis's createAOFClient): no replies, MULTI
//     and EXEC honoured, no ACL check. Then the directory is opened for
//     appending (a base is written first when there is none).
//   - aofProp is the write path's Propagator for the AOF: every unit's
//     TargetAOF operations are encoded into the writer's buffer under the
//     lock (feedAppendOnlyFile). aofBeforeReply, called by the connection
//     loop before it releases the lock and writes the replies of a batch,
//     writes the buffer and, with appendfsync always, fsyncs it: Redis's
//     beforeSleep flushes the AOF before handleClientsWithPendingWrites.
//     The cron flushes too (postponed everysec writes, due fsyncs) and
//     checks the auto-rewrite trigger.
//   - BGREWRITEAOF, auto rewrites and CONFIG SET appendonly yes run
//     rewriteAppendOnlyFileBackground without stopping the world: under
//     the lock the Manager opens the new incremental file and the keyspace
//     snapshot begins; a goroutine writes the base from Snapshot.Step
//     batches (locking only for each Step) and finishes under the lock.

// aofState is the server's AOF state (server.aof_*). Guarded by mu.
type aofState struct {
	mgr  *aof.Manager
	prop *aofProp
	// rewriting is the running rewrite (aof_child_pid != -1).
	rewriting *aof.Rewrite
	cancel    chan struct{}    // closed to abandon the running rewrite
	child     *savechild.Child // the running rewrite's writer child (nil: in process)
	scheduled bool             // aof_rewrite_scheduled
	lastTime  int64            // aof_rewrite_time_last (seconds, -1 never)
	lastOK    bool             // aof_lastbgrewrite_status
	rewrites  int64            // stat_aof_rewrites (aof_rewrites)
	failures  int64            // aof_rewrites_consecutive_failures
	// aofRewriteLimited's state: the delay (minutes) and the unix time
	// before which the cron starts no rewrite.
	limitDelay, limitNext int64
	loaded                bool      // loadDataOnStart ran
	errLogged             time.Time // last "Error writing to the AOF file" log
	lastCow               uint64    // aof_last_cow_size: the last rewrite snapshot's CowBytes
	// buf models server.aof_buf's allocation (aofBufMem).
	buf aofBufModel
}

// aofBufModel is the allocation of Redis's AOF buffer (server.aof_buf,
// an sds): hdr and alloc as the sds has them once each command was
// appended (sdscatlen's greedy sdsMakeRoomFor) and each flush cleared it
// (flushAppendOnlyFile: kept when its allocation is under 4000 bytes,
// else freed for an empty one). The zero value is sdsempty's.
type aofBufModel struct{ hdr, alloc int64 }

// cat is sdscatlen(aof_buf, n bytes) on a buffer holding used bytes.
func (m *aofBufModel) cat(used, n int64) {
	if m.hdr == 0 {
		m.hdr, m.alloc = 3, 4 // sdsempty: 8 bytes
	}
	if m.alloc-used >= n {
		return
	}
	newlen := used + n
	if newlen < 1<<20 { // SDS_MAX_PREALLOC
		newlen *= 2
	} else {
		newlen += 1 << 20
	}
	hdr, maxAlloc := sdsHdr(newlen)
	m.hdr, m.alloc = hdr, min(jeUsable(hdr+newlen+1)-hdr-1, maxAlloc)
}

// flushed is flushAppendOnlyFile's end once the buffer was written.
func (m *aofBufModel) flushed() {
	if m.alloc >= 4000 {
		*m = aofBufModel{}
	}
}

// size is sdsAllocSize(aof_buf).
func (m *aofBufModel) size() int64 {
	if m.hdr == 0 {
		return 8
	}
	return m.hdr + m.alloc + 1
}

// aofDiskError is writeCommandsDeniedByDiskError's AOF part: the
// -MISCONF text while the last AOF write (or background fsync) failed,
// "" otherwise. A later successful write clears it (aofCron retries).
func (s *Server) aofDiskError() string {
	m := s.aof.mgr
	if m == nil || m.W == nil {
		return ""
	}
	if err := m.W.DiskError(); err != nil {
		return "MISCONF Errors writing to the AOF file: " + aof.Strerror(err)
	}
	return ""
}

// aofProp feeds the AOF writer from the write path.
type aofProp struct{ s *Server }

// Propagate implements Propagator (feedAppendOnlyFile).
func (p *aofProp) Propagate(ops []Op) {
	m := p.s.aof.mgr
	if m == nil || m.W == nil {
		return
	}
	// AOF_WAIT_REWRITE accumulates only while the first rewrite runs
	// (feedAppendOnlyFile: child_type == CHILD_TYPE_AOF); after a failed
	// one nothing is kept until the next starts.
	if m.Enabling() && p.s.aof.rewriting == nil {
		return
	}
	prev := int64(m.W.Buffered())
	if p.s.cfg.AOFTimestampEnabled {
		m.W.Timestamp(p.s.nowMs / 1000)
	}
	for _, op := range ops {
		if op.Target&TargetAOF != 0 {
			// feedAppendOnlyFile: one sdscatlen a command (its SELECT
			// and timestamp annotation with it).
			m.W.Append(op.DB, op.Argv)
			n := int64(m.W.Buffered())
			p.s.aof.buf.cat(prev, n-prev)
			prev = n
		}
	}
}

func (s *Server) aofConfig() aof.Config {
	format := s.aofCommandFormat()
	if s.cfg.AOFUseRDBPreamble {
		format = s.aofRDBFormat()
	}
	return aof.Config{
		Dir:      s.cfg.Dir,
		DirName:  s.cfg.AppendDirName,
		Filename: s.cfg.AppendFilename,
		Fsync:    aof.ParseFsync(s.cfg.AppendFsync),
		Format:   format,

		DisableAutoGC: s.cfg.AOFDisableAutoGC,
	}
}

func (s *Server) aofManager() *aof.Manager {
	if s.aof.mgr == nil {
		s.aof.lastTime = -1
		s.aof.lastOK = true
		s.aof.mgr = &aof.Manager{
			Cfg:    s.aofConfig(),
			Warn:   func(m string) { s.log.Warn().Msg(m) },
			Notice: func(m string) { s.log.Info().Msg(m) },
		}
	}
	return s.aof.mgr
}

// LoadData loads the AOF (or the RDB) and opens the AOF for appending:
// the main program calls it before logging "Ready to accept connections",
// as Redis's main calls loadDataFromDisk; Run calls it if nobody did.
func (s *Server) LoadData() error { return s.loadDataOnStart() }

// loadDataOnStart is loadDataFromDisk plus aofOpenIfNeededOnServerStart.
// It runs once.
func (s *Server) loadDataOnStart() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.aof.loaded {
		return nil
	}
	s.aof.loaded = true
	s.rdb.loading = true
	s.startupLoading.Store(true)
	defer s.startupLoading.Store(false)
	if err := s.loadDataLocked(); err != nil {
		if !errors.Is(err, ErrLoadAborted) {
			s.rdb.loadFailed = true // stays "loading": nothing saves over it
		}
		return err
	}
	s.rdb.loading = false
	s.markFreshStart() // repl: repl_master.go
	return nil
}

// loadDataLocked is loadDataOnStart's work, with mu held.
func (s *Server) loadDataLocked() (err error) {
	m := s.aofManager()
	// aofLoadManifestFromDisk runs whatever appendonly says, so that
	// CONFIG SET appendonly yes later turns the old files into history.
	if err := m.ReadManifest(); err != nil {
		return err
	}
	if !s.cfg.AppendOnly {
		// main's aofDelHistoryFiles runs whatever appendonly says
		// (after a successful load).
		defer func() {
			if err != nil {
				return
			}
			if derr := m.DeleteHistory(); derr != nil {
				s.log.Warn().Err(derr).Msg("Can't persist the AOF manifest")
			}
		}()
		// loadDataFromDisk: "Master may delete expired keys when
		// loading, we should propagate expire to replication backlog."
		// Without replication info in the RDB (or without an RDB) the
		// backlog goes again: no partial resync is possible from it.
		if s.iAmMaster() && s.repl.backlog == nil {
			attached := s.repl.attached
			s.createBacklog()
			s.rdb.feedRepl, s.rdb.feedKept = true, false
			err := s.loadRDBFile()
			s.rdb.feedRepl = false
			if !s.rdb.feedKept {
				s.repl.backlog = nil
				if !attached {
					// The backlog attached its Propagator only for the
					// load: detached again, a server that never had a
					// replica keeps paying nothing for propagation (no
					// rewritten argv, no unit per write).
					s.detachReplProp()
				}
			}
			return err
		}
		return s.loadRDBFile()
	}
	start := time.Now()
	rdbLoad := s.aofRDBLoaderYield()
	res, err := m.Load(&aof.Options{
		LoadTruncated: s.cfg.AOFLoadTruncated,
		Apply:         s.aofApplier(),
		RDB:           rdbLoad,
		Warn:          func(m string) { s.log.Warn().Msg(m) },
		Notice:        func(m string) { s.log.Info().Msg(m) },
		Start:         s.aofLoadStart,
		Progress:      s.aofLoadProgress(),
	})
	if err != nil {
		return fmt.Errorf("AOF loading failed: %w", err)
	}
	switch res.Status {
	case aof.StatusNotExist, aof.StatusEmpty:
		if err := s.loadRDBFile(); err != nil {
			return err
		}
	default:
		s.log.Info().Msgf("DB loaded from append only file: %.3f seconds", time.Since(start).Seconds())
	}
	if err := m.OpenOnStart(s.aofWriteBaseSync); err != nil {
		return err
	}
	s.aofAttach()
	return nil
}

// aofAttach makes the writer receive the write path (once).
func (s *Server) aofAttach() {
	if s.aof.prop != nil {
		return
	}
	s.aof.prop = &aofProp{s: s}
	s.props = append(s.props, s.aof.prop)
}

func (s *Server) aofDetach() {
	if s.aof.prop == nil {
		return
	}
	for i, q := range s.props {
		if q == Propagator(s.aof.prop) {
			s.props = append(s.props[:i:i], s.props[i+1:]...)
			break
		}
	}
	s.aof.prop = nil
}

// aofLoadStart is loadAppendOnlyFiles' startLoading: loading_start_time
// and loading_total_bytes, the size of the base and incremental files.
func (s *Server) aofLoadStart(total int64) {
	s.rdb.loadStart = s.clock.Now().Unix()
	s.rdb.loadTotal = total
	s.rdb.loadLoaded = 0
}

// aofLoadProgress is loadSingleAppendOnlyFile's "serve the clients from
// time to time" (translated from Redis's aof.c): every 1024 commands,
// and after each command with key-load-delay (debugDelay), the startup
// load updates loading_loaded_bytes and yields the execution lock
// (loadYield), so that clients get -LOADING and INFO.
func (s *Server) aofLoadProgress() func(loaded int64) error {
	var loops int64
	return func(loaded int64) error {
		s.rdb.loadLoaded = loaded
		if s.abortLoad.Load() { // SHUTDOWN NOSAVE stopped a busy script of the file
			return ErrLoadAborted
		}
		delay := s.keyLoadDelay()
		if loops++; (loops-1)%1024 != 0 && delay == 0 {
			return nil
		}
		return s.loadYield(delay)
	}
}

// aofApplier returns the fake AOF client's executor.
func (s *Server) aofApplier() func(argv [][]byte) error {
	c := &Client{srv: s, id: -1, addr: "aof", user: "default", authed: true, aofClient: true}
	c.w.Proto = 2
	return func(argv [][]byte) error {
		if c.lookupCached(argv[0]) == nil {
			return fmt.Errorf("Unknown command '%s' reading the append only file", argv[0])
		}
		// keyIsExpired: nothing expires while loading, so a command of
		// the AOF sees a key an earlier one gave a past TTL (lookups as
		// for a master's command on a replica).
		prev := s.ks.MasterCommand
		s.ks.MasterCommand = true
		s.call(c, argv)
		s.ks.MasterCommand = prev
		c.w.B = c.w.B[:0]
		return nil
	}
}

// aofWriteBaseSync writes a base file from the whole dataset while the
// lock is held (start-up: nothing else runs).
func (s *Server) aofWriteBaseSync(path string) (int64, error) {
	s.ldbFinishCopy()
	snap, err := s.ks.BeginSnapshot()
	if err != nil {
		return 0, err
	}
	defer snap.Close()
	return aof.WriteBaseFile(path, s.aof.mgr.Cfg.Format, func(dst []keyspace.Item) ([]keyspace.Item, bool) {
		return snap.Step(dst, 1024)
	})
}

// aofBeforeReply writes the AOF buffer before the replies of a batch go
// out (beforeSleep's flushAppendOnlyFile(0)). Called with mu held.
func (s *Server) aofBeforeReply() {
	m := s.aof.mgr
	if m == nil || m.W == nil || m.W.Buffered() == 0 {
		return
	}
	s.aofFlush(false)
}

func (s *Server) aofFlush(force bool) {
	m := s.aof.mgr
	err := m.W.Flush(time.Now(), force)
	if m.W.Buffered() == 0 {
		s.aof.buf.flushed()
	}
	if err != nil {
		if m.W.Policy == aof.FsyncAlways {
			s.log.Warn().Err(err).Msg("Can't recover from AOF write error when the AOF fsync policy is 'always'. Exiting...")
			os.Exit(1)
		}
		// Logged at most every 30 s (AOF_WRITE_LOG_ERROR_RATE): the
		// write is retried on every flush until it works.
		if now := time.Now(); now.Sub(s.aof.errLogged) >= 30*time.Second {
			s.aof.errLogged = now
			s.log.Warn().Err(err).Msg("Error writing to the AOF file")
		}
	}
}

// aofCron is serverCron's AOF part: flush postponed writes and due
// fsyncs, start a scheduled rewrite, and the auto-rewrite trigger
// (auto-aof-rewrite-percentage / -min-size).
func (s *Server) aofCron() {
	m := s.aof.mgr
	if m == nil || m.W == nil {
		if s.aof.scheduled && !s.childActive() && m != nil && !s.aofRewriteLimited() {
			s.aof.scheduled = false
			_ = s.aofRewriteBackground()
		}
		return
	}
	s.aofFlush(false)
	if s.aof.rewriting != nil {
		return
	}
	if s.aof.scheduled {
		if s.aofRewriteLimited() {
			return
		}
		if s.aofRewriteBackground() == nil {
			s.aof.scheduled = false
		}
		return
	}
	if pct := s.cfg.AutoAOFRewritePercentage; pct > 0 && !m.Enabling() {
		size := m.W.Size()
		if size > s.cfg.AutoAOFRewriteMinSize {
			base := m.BaseSize
			if base == 0 {
				base = 1
			}
			growth := (size*100)/base - 100
			if growth >= int64(pct) && !s.aofRewriteLimited() {
				s.log.Info().Msgf("Starting automatic rewriting of AOF on %d%% growth", growth)
				_ = s.aofRewriteBackground()
			}
		}
	}
}

// aofRewriteLimited is aofRewriteLimited (lock held): after 3
// consecutive failed rewrites the cron starts none for 1 minute, then 2,
// 4, ... up to 60 (BGREWRITEAOF is not limited).
func (s *Server) aofRewriteLimited() bool {
	const threshold, maxMinutes = 3, 60
	if s.aof.failures < threshold {
		s.aof.limitDelay, s.aof.limitNext = 0, 0
		return false
	}
	now := s.clock.Now().Unix()
	if s.aof.limitNext != 0 {
		if now < s.aof.limitNext {
			return true
		}
		s.aof.limitNext = 0
		return false
	}
	if s.aof.limitDelay == 0 {
		s.aof.limitDelay = 1
	} else {
		s.aof.limitDelay = min(s.aof.limitDelay*2, maxMinutes)
	}
	s.aof.limitNext = now + s.aof.limitDelay*60
	s.log.Warn().Msgf("Background AOF rewrite has repeatedly failed and triggered the limit, will retry in %d minutes", s.aof.limitDelay)
	return true
}

var errRewriteRunning = errors.New("ERR Background append only file rewriting already in progress")

// aofRewriteBackground is rewriteAppendOnlyFileBackground. mu held.
func (s *Server) aofRewriteBackground() error {
	if s.aof.rewriting != nil {
		return errRewriteRunning
	}
	s.ldbFinishCopy() // a debugging child's copy does not wait
	if s.ks.Snapshotting() {
		return keyspace.ErrSnapshotRunning
	}
	m := s.aofManager()
	m.Cfg = s.aofConfig()
	if m.W != nil {
		m.W.NoFsyncOnRewrite = s.cfg.NoAppendFsyncOnRewrite
	}
	rw, err := m.StartRewrite(time.Now(), os.Getpid(), s.cfg.AppendOnly)
	if err != nil {
		s.aof.lastOK = false
		s.log.Warn().Err(err).Msg("Can't rewrite append only file in background")
		return err
	}
	if m.W != nil {
		s.aofAttach()
	}
	snap, err := s.beginChildSnapshot()
	if err != nil {
		_ = m.FinishRewrite(rw, 0, err)
		return err
	}
	// The base is written by a child process as Redis's
	// (redis-aof-rewrite, temp-rewriteaof-bg-<childpid>.aof), fed from the
	// snapshot through a pipe; in process when it cannot be spawned.
	pid := os.Getpid()
	child := s.startSaveChildIn(savechild.AOF, "redis-aof-rewrite", filepath.Dir(rw.TempBase))
	if child != nil {
		rw.TempBase, pid = child.Path, child.Pid
	}
	s.aof.rewriting = rw
	s.aof.child = child
	s.updateDictResizePolicy()
	s.aof.rewrites++ // stat_aof_rewrites counts started rewrites
	cancel := make(chan struct{})
	s.aof.cancel = cancel
	s.log.Info().Msgf("Background append only file rewriting started by pid %d", pid)
	go s.aofRewriteRun(rw, snap, cancel, child)
	return nil
}

// aofChildExit is a rewrite child's end other than success
// (backgroundRewriteDoneHandler's error branches).
type aofChildExit struct{ exitcode, bysignal int }

func (e *aofChildExit) Error() string {
	if e.bysignal != 0 {
		return fmt.Sprintf("Background AOF rewrite terminated by signal %d", e.bysignal)
	}
	return "Background AOF rewrite terminated with error"
}

// aofRewriteToChild streams the base to the rewrite's child and waits
// for its exit: the base's size on success (exit 0).
func (s *Server) aofRewriteToChild(child *savechild.Child, format aof.BaseFormat, next aof.Step, cancel chan struct{}) (int64, error) {
	size, err := aof.WriteBase(child, format, next)
	select {
	case <-cancel:
		child.Signal(syscall.SIGUSR1) // killAppendOnlyChild
		child.Abort()
		<-child.Done()
		return 0, errRewriteCancelled
	default:
	}
	if err == nil {
		err = child.Commit()
	}
	if err != nil {
		child.Abort()
	}
	<-child.Done()
	if code, sig := child.Status(); code != 0 || sig != 0 {
		return 0, &aofChildExit{code, sig}
	}
	if err != nil { // the child exited 0 only on a commit
		return 0, err
	}
	return size, nil
}

var errRewriteCancelled = errors.New("rewrite cancelled")

// killAOFChild abandons the running rewrite (lock held): its goroutine
// stops at its next step and its child, if any, gets SIGUSR1 now
// (killAppendOnlyChild).
func (s *Server) killAOFChild() {
	if s.aof.cancel != nil {
		close(s.aof.cancel)
		s.aof.cancel = nil
	}
	if c := s.aof.child; c != nil {
		c.Signal(syscall.SIGUSR1)
		c.Abort()
		s.aof.child = nil
	}
}

func (s *Server) aofRewriteRun(rw *aof.Rewrite, snap *keyspace.Snapshot, cancel chan struct{}, child *savechild.Child) {
	release, borrowed := borrowProc()
	defer release()
	// rdb-key-save-delay slows the rewrite too (rewriteAppendOnlyFileRio's
	// debugDelay): microseconds per key, slept without the lock.
	s.mu.Lock()
	delay := s.rdbKeySaveDelay()
	s.mu.Unlock()
	batch := 1024
	if delay > 0 {
		batch = 16
	}
	pacer := newSnapshotPacer(borrowed)
	var childDone <-chan struct{} // nil (never ready) without a child
	if child != nil {
		childDone = child.Done()
	}
	next := func(dst []keyspace.Item) ([]keyspace.Item, bool) {
		pacer.pause() // the previous batch's encoding (snapshotDuty)
		select {
		case <-cancel:
			return dst, true
		case <-childDone: // the child died: aofRewriteToChild reports its exit
			return dst, true
		default:
		}
		pacer.lock(&s.mu)
		n := len(dst)
		items, done := snap.Step(dst, batch)
		s.mu.Unlock()
		keyspace.PrefetchItems(items[n:])
		if delay > 0 {
			t := time.NewTimer(delay * time.Duration(len(items)-n))
			select {
			case <-t.C:
			case <-cancel:
				t.Stop()
				return dst, true
			case <-childDone:
				t.Stop()
				return dst, true
			}
		}
		return items, done
	}
	var size int64
	var err error
	if child != nil {
		size, err = s.aofRewriteToChild(child, rw.Format(), next, cancel)
	} else {
		size, err = aof.WriteBaseFile(rw.TempBase, rw.Format(), next)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	snap.Close()
	s.aof.lastCow = snap.Stats().CowBytes()
	select {
	case <-cancel:
		err = errRewriteCancelled
	default:
	}
	if s.aof.rewriting != rw {
		os.Remove(rw.TempBase)
		return
	}
	s.aof.rewriting = nil
	s.updateDictResizePolicy()
	s.aof.cancel = nil
	if err == errRewriteCancelled {
		os.Remove(rw.TempBase)
		return
	}
	s.aof.child = nil
	if err == nil {
		if child != nil {
			// rewriteAppendOnlyFileBackground's child, as it ends.
			l := s.childLog(child.Pid)
			l.Info().Msgf("Successfully created the temporary AOF base file %s", filepath.Base(rw.TempBase))
			l.Info().Msg(forkCowLine("AOF rewrite", s.aof.lastCow))
		}
		s.log.Info().Msg("Background AOF rewrite terminated with success")
	}
	s.aof.lastTime = int64(time.Since(rw.Start).Seconds())
	var ce *aofChildExit
	if errors.As(err, &ce) {
		// backgroundRewriteDoneHandler: a child killed by SIGUSR1 is no
		// failure.
		s.log.Warn().Msg(ce.Error())
		_ = s.aof.mgr.FinishRewrite(rw, 0, err)
		if ce.bysignal != int(syscall.SIGUSR1) {
			s.aof.lastOK = false
			s.aof.failures++
		}
		if s.aof.mgr.Enabling() {
			s.aof.scheduled = true
		}
		return
	}
	if ferr := s.aof.mgr.FinishRewrite(rw, size, err); ferr != nil {
		s.aof.lastOK = false
		s.aof.failures++
		s.log.Warn().Err(ferr).Msg("Background AOF rewrite failed")
		// Schedule a new rewrite if we are waiting for it to switch the
		// AOF on (backgroundRewriteDoneHandler's cleanup).
		if s.aof.mgr.Enabling() {
			s.aof.scheduled = true
		}
		return
	}
	s.aof.lastOK = true
	s.aof.failures = 0
	s.log.Info().Msg("Background AOF rewrite finished successfully")
}

// aofKillRewrite is killAppendOnlyChild (mu held): the running rewrite,
// if any, is abandoned and its temporary base removed; no done handler
// runs.
func (s *Server) aofKillRewrite() {
	if s.aof.rewriting == nil {
		return
	}
	pid := os.Getpid()
	if c := s.aof.child; c != nil {
		pid = c.Pid
	}
	s.log.Info().Msgf("Killing running AOF rewrite child: %d", pid)
	s.killAOFChild()
	os.Remove(s.aof.rewriting.TempBase)
	s.aof.rewriting = nil
	s.updateDictResizePolicy()
}

// aofStop is stopAppendOnly: flush and fsync, abandon a running rewrite,
// detach from the write path. mu held.
func (s *Server) aofStop() error {
	m := s.aof.mgr
	if m == nil {
		return nil
	}
	s.aofKillRewrite()
	s.aof.scheduled = false
	s.aofDetach()
	return m.Stop(time.Now())
}

// aofOnConfigSet follows CONFIG SET of the AOF directives.
func (s *Server) aofOnConfigSet(name string) error {
	m := s.aofManager()
	switch name {
	case "appendonly":
		if s.cfg.AppendOnly && !m.Active() {
			// startAppendOnly: the AOF is on once a rewrite wrote it
			// (AOF_WAIT_REWRITE until then).
			m.Enable()
			if s.aof.rewriting == nil && s.childActive() {
				s.aof.scheduled = true
				s.log.Warn().Msg("AOF was enabled but there is already another background operation. An AOF background was scheduled to start when possible.")
				return nil
			}
			if s.execDepth > 1 { // server.in_exec
				s.aof.scheduled = true
				s.log.Warn().Msg("AOF was enabled during a transaction. An AOF background was scheduled to start when possible.")
				return nil
			}
			if s.aof.rewriting != nil {
				// The running rewrite does not accumulate the AOF: kill it and
				// start another (its snapshot closes as it stops, so the new
				// one may have to wait for the cron).
				s.log.Warn().Msg("AOF was enabled but there is already an AOF rewriting in background. Stopping background AOF and starting a rewrite now.")
				s.killAOFChild()
				s.aof.rewriting = nil
				s.updateDictResizePolicy()
			}
			if err := s.aofRewriteBackground(); err != nil {
				if errors.Is(err, keyspace.ErrSnapshotRunning) {
					s.aof.scheduled = true
					return nil
				}
				_ = s.aofStop() // aof_state = AOF_OFF
				return errors.New("Redis needs to enable the AOF but can't trigger a background AOF rewrite operation. Check the above logs for more info about the error.")
			}
		} else if !s.cfg.AppendOnly && m.Active() {
			return s.aofStop()
		}
	case "appendfsync":
		m.Cfg.Fsync = aof.ParseFsync(s.cfg.AppendFsync)
		if m.W != nil {
			m.W.Policy = m.Cfg.Fsync
		}
	case "no-appendfsync-on-rewrite":
		if m.W != nil {
			m.W.NoFsyncOnRewrite = s.cfg.NoAppendFsyncOnRewrite
		}
	case "aof-disable-auto-gc": // updateAofAutoGCEnabled
		m.Cfg.DisableAutoGC = s.cfg.AOFDisableAutoGC
		if !m.Cfg.DisableAutoGC {
			if err := m.DeleteHistory(); err != nil {
				s.log.Warn().Err(err).Msg("Can't persist the AOF manifest")
			}
		}
	}
	return nil
}

// aofShutdown flushes and fsyncs the AOF (prepareForShutdown).
func (s *Server) aofShutdown() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.aof.mgr == nil || s.aof.mgr.W == nil {
		return
	}
	s.log.Info().Msg("Calling fsync() on the AOF file.")
	_ = s.aofStop()
}

// cmdBgRewriteAOF is bgrewriteaofCommand.
func cmdBgRewriteAOF(c *Client, args [][]byte) {
	s := c.srv
	if s.aof.rewriting != nil {
		c.w.Error(errRewriteRunning.Error())
		return
	}
	if s.childActive() || s.execDepth > 1 { // hasActiveChildProcess() || server.in_exec
		s.aof.scheduled = true
		s.aofManager()
		c.w.Simple("Background append only file rewriting scheduled")
		return
	}
	if err := s.aofRewriteBackground(); err != nil {
		c.w.Error("ERR Can't execute an AOF background rewriting. Please check the server logs for more information.")
		return
	}
	c.w.Simple("Background append only file rewriting started")
}

func init() {
	register(&Command{Name: "bgrewriteaof", Arity: 1, Flags: FlagAdmin | FlagNoScript | FlagNoAsyncLoading, ACL: []string{"admin", "slow", "dangerous"}, Handler: cmdBgRewriteAOF})
}

// infoPersistenceAOF writes the aof_* fields Redis prints only with
// appendonly yes (server.aof_enabled; after module_fork_last_cow_size),
// also while the AOF waits for its first rewrite with no file open.
func (s *Server) infoPersistenceAOF(w *infoWriter) {
	m := s.aof.mgr
	if m == nil || !s.cfg.AppendOnly {
		return
	}
	var size, buffered, bio, delayed int64
	if m.W != nil {
		size, buffered, bio, delayed = m.W.Size(), int64(m.W.Buffered()), m.W.PendingFsync(), m.W.Delayed()
	}
	w.int("aof_current_size", size)
	w.int("aof_base_size", m.BaseSize)
	pending := int64(0)
	if s.aof.scheduled {
		pending = 1
	}
	w.int("aof_pending_rewrite", pending)
	w.int("aof_buffer_length", buffered)
	w.int("aof_pending_bio_fsync", bio)
	w.int("aof_delayed_fsync", delayed)
}

// aofBufferLen is INFO memory's mem_aof_buffer.
func (s *Server) aofBufferLen() int64 {
	if s.aof.mgr == nil || s.aof.mgr.W == nil {
		return 0
	}
	return int64(s.aof.mgr.W.Buffered())
}

// aofBufMem is sdsAllocSize(server.aof_buf) while the AOF is on (or
// waiting for its first rewrite), 0 otherwise: INFO's mem_aof_buffer and
// the AOF part of mem_not_counted_for_evict (aofBufModel).
func (s *Server) aofBufMem() int64 {
	if s.aof.mgr == nil || s.aof.mgr.W == nil {
		return 0
	}
	return s.aof.buf.size()
}

// aofInfo returns the values of the always-present aof_* fields.
func (s *Server) aofInfo() (enabled, inProgress, scheduled, lastTime, curTime int64, lastStatus string, rewrites, failures int64, writeStatus string) {
	lastStatus, writeStatus = "ok", "ok"
	lastTime, curTime = -1, -1
	if s.cfg.AppendOnly {
		enabled = 1
	}
	if s.aof.scheduled {
		scheduled = 1
	}
	m := s.aof.mgr
	if m == nil {
		return
	}
	if s.aof.rewriting != nil {
		inProgress = 1
		curTime = int64(time.Since(s.aof.rewriting.Start).Seconds())
	}
	lastTime = s.aof.lastTime
	if !s.aof.lastOK {
		lastStatus = "err"
	}
	rewrites, failures = s.aof.rewrites, s.aof.failures
	if m.W != nil && m.W.LastWriteErr() != nil {
		writeStatus = "err"
	}
	return
}
