package server

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/vigil-kv/vigil/configs"
	"github.com/vigil-kv/vigil/internal/redisutil"
	"github.com/vigil-kv/vigil/internal/savechild"
	"github.com/vigil-kv/vigil/server/keyspace"
	"github.com/vigil-kv/vigil/server/rdb"

	"golang.org/x/sys/unix"
)

// RDB persistence (rdb.c rdbSave, rdbSaveBackground, saveCommand,
// bgsaveCommand, lastsaveCommand, rdbLoad; server.c's save points and
// stop-writes-on-bgsave-error).
//
// SAVE writes the keyspace under the execution lock, as Redis blocks.
// BGSAVE cannot fork: it takes a keyspace snapshot (keyspace/doc.go,
// "Snapshots") and a goroutine alternates lock / Snapshot.Step / unlock /
// encode and write. Both write temp-<pid>.rdb in dir, fsync it, rename it
// to dbfilename and fsync the directory (rdbSave's order), so a crash at
// any point leaves the previous dump intact.

// configBgsaveRetryDelay is CONFIG_BGSAVE_RETRY_DELAY: after a failed
// BGSAVE, save points wait this many seconds before trying again.
const configBgsaveRetryDelay = 5

// bgsaveStepKeys is how many keys a BGSAVE step takes under the lock.
const bgsaveStepKeys = 128

// errBgsaveErr is shared.bgsaveerr (writeCommandsGetDiskErrorMessage).
const errBgsaveErr = "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. Commands that may modify the data set are disabled, because this instance is configured to report errors during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check the Redis logs for details about the RDB error."

// persistState is the RDB half of Redis's server.* persistence fields.
// Guarded by mu.
type persistState struct {
	lastSave       int64  // server.lastsave (unix s); 0: the start time
	bgsaveErr      bool   // lastbgsave_status == C_ERR
	lastBgsaveTry  int64  // server.lastbgsave_try
	dirtyBefore    int64  // server.dirty_before_bgsave
	saves          int64  // stat_rdb_saves
	lastBgsaveSecs int64  // rdb_save_time_last
	lastCow        uint64 // rdb_last_cow_size: the last BGSAVE snapshot's CowBytes
	bgsaveRan      bool   // lastBgsaveSecs is set (else -1)
	bgsaveSeq      int64
	scheduled      bool // rdb_bgsave_scheduled
	job            *bgsaveJob
	loadedKeys     int64 // rdb_last_load_keys_loaded
	loadedExpired  int64 // rdb_last_load_keys_expired
	loading        bool
	// feedRepl is RDBFLAGS_FEED_REPL: the startup load of a master puts
	// a DEL (UNLINK) for each key it finds expired in the backlog, which
	// loadRDBFile created for it; restoreReplInfo then rebases it on the
	// RDB's repl-offset, so a replica resuming there deletes them too.
	feedRepl bool
	feedKept bool // restoreReplInfo kept the backlog fed so
	// keepFunctions: DEBUG RELOAD NOFLUSH loads the libraries into the
	// current ones (emptyData did not clear them), a duplicate failing
	// the load unless MERGE.
	keepFunctions bool
	loadFailed    bool  // a startup load failed: never save over the file
	loadStart     int64 // loading_start_time
	loadTotal     int64 // loading_total_bytes
	loadLoaded    int64 // loading_loaded_bytes
	loadUsedMem   int64 // loading_rdb_used_mem
	resizeOff     bool  // this server holds a keyspace.DisableResize
}

// ErrLoadAborted is LoadDataFromDisk's error when a shutdown (SHUTDOWN
// or a signal) interrupted the load: exit 0, as Redis.
var ErrLoadAborted = errors.New("loading aborted by a shutdown")

// errLoadingMsg is shared.loadingerr.
const errLoadingMsg = "LOADING Redis is loading the dataset in memory"

// loadYieldKeys is how many keys a startup load reads between two
// releases of the execution lock, during which clients are answered
// (-LOADING, or the commands flagged loading such as INFO): Redis's
// processEventsWhileBlocked every loading-process-events-interval-bytes.
const loadYieldKeys = 1024

// countingReader counts the bytes read (loading_loaded_bytes).
// also, when set, counts them too.
type countingReader struct {
	r    io.Reader
	n    *int64
	also *int64
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	*c.n += int64(n)
	if c.also != nil {
		*c.also += int64(n)
	}
	return n, err
}

// bgsaveJob is a running BGSAVE (Redis's RDB child).
type bgsaveJob struct {
	snap      *keyspace.Snapshot
	start     time.Time
	total     int64
	processed atomic.Int64
	kill      atomic.Bool // killRDBChild
	done      chan struct{}
	seq       int64
	tmp       string           // its temp file
	child     *savechild.Child // nil: written in process
	stop      chan struct{}    // closed when the job was killed or ended (halt)
	stopOnce  sync.Once

	// Replication (startBgsaveForReplication, RDBFLAGS_REPLICATION):
	// repl is set for a save started for replicas; socket for a diskless
	// one (RDB_CHILD_TYPE_SOCKET: rdbSaveToSlavesSockets, written to the
	// replicas' sockets, no file); replOff is its replicas'
	// psync_initial_offset. finished is closed once the job ended
	// (backgroundSaveDoneHandler, or killed), ok saying how; path is the
	// file a disk save renames its temp file to.
	repl     bool
	socket   bool
	replOff  int64
	path     string
	finished chan struct{}
	ok       bool
	endOnce  sync.Once
	group    map[*replica]bool // a socket save's replicas
}

// end closes finished once (lock held): ok is the outcome
// updateSlavesWaitingBgsave hands its replicas.
func (j *bgsaveJob) end(ok bool) {
	j.endOnce.Do(func() {
		j.ok = ok
		close(j.finished)
	})
}

// halt closes stop once.
func (j *bgsaveJob) halt() { j.stopOnce.Do(func() { close(j.stop) }) }

// stopped reports whether the job was killed or ended.
func (j *bgsaveJob) stopped() bool {
	select {
	case <-j.stop:
		return true
	default:
		return j.kill.Load()
	}
}

// sleep is rdb-key-save-delay's pause; false when the job was stopped
// meanwhile.
func (j *bgsaveJob) sleep(d time.Duration) bool {
	if d < time.Millisecond {
		debugDelay(d)
		return !j.stopped()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return !j.kill.Load()
	case <-j.stop:
		return false
	}
}

// childActive is hasActiveChildProcess: a BGSAVE, an AOF rewrite or any
// other snapshot running (not a debugging child's copy: Redis's debugging
// children are not counted, and the copy is finished for a snapshot's
// taker, scripting_ldbcopy.go).
func (s *Server) childActive() bool {
	if s.rdb.job != nil || (s.ks.Snapshotting() && s.ldbCopy == nil) {
		return true
	}
	return s.aof.rewriting != nil
}

// lastSaveTime is server.lastsave: the start time until a first save.
func (s *Server) lastSaveTime() int64 {
	if s.rdb.lastSave == 0 {
		return s.startTime.Unix()
	}
	return s.rdb.lastSave
}

// rdbPath is dbfilename in dir.
func (s *Server) rdbPath() string { return filepath.Join(s.cfg.Dir, s.cfg.DBFilename) }

// rdbKeySaveDelay is rdb-key-save-delay: microseconds to sleep after each
// key written (negative: nanoseconds, as debugDelay).
func (s *Server) rdbKeySaveDelay() time.Duration {
	v, ok := s.cfg.Value("rdb-key-save-delay")
	if !ok {
		return 0
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n == 0 {
		return 0
	}
	if n < 0 {
		return time.Duration(-n)
	}
	return time.Duration(n) * time.Microsecond
}

// encodeOptions are the options of an RDB written now (rdbSaveInfoAuxFields),
// with the function libraries (lock held).
func (s *Server) encodeOptions(aofBase bool) rdb.EncodeOptions {
	return s.encodeOptionsWith(aofBase, s.functionCodes())
}

// encodeOptionsWith is encodeOptions with the libraries fns (functions.go's
// functionCodes, taken under the lock).
func (s *Server) encodeOptionsWith(aofBase bool, fns []string) rdb.EncodeOptions {
	base := "0"
	if aofBase {
		base = "1"
	}
	// repl: withReplAux adds repl-stream-db, repl-id, repl-offset (repl_master.go).
	return s.withReplAux(rdb.EncodeOptions{
		Compress: s.cfg.RDBCompression,
		Checksum: s.cfg.RDBChecksum,
		Aux: []rdb.AuxField{
			{Key: "redis-ver", Value: RedisVersion},
			{Key: "redis-bits", Value: "64"},
			{Key: "ctime", Value: strconv.FormatInt(s.clock.Now().Unix(), 10)},
			{Key: "used-mem", Value: strconv.FormatUint(readMem().heapObjects, 10)},
			// repl-stream-db, repl-id and repl-offset: written by Redis
			// only with a replication backlog (rdbPopulateSaveInfo);
			// replication adds them.
			{Key: "aof-base", Value: base},
		},
		Functions: fns,
		LRU:       s.policyIsLRU(),
		LFU:       s.policyIsLFU(),
		Now:       s.clock.Now().UnixMilli(),
		// FREQ decays as of the save (LFUDecrAndReturn).
		LFUDecayTime: s.ks.LFU.DecayTime,
	})
}

func (s *Server) policyIsLRU() bool {
	p := s.cfg.MaxmemoryPolicy
	return p == "allkeys-lru" || p == "volatile-lru"
}

// WriteRDB writes the whole keyspace as an RDB stream to w, walking the
// databases directly: call it with the execution lock held (SAVE, SHUTDOWN,
// DEBUG RELOAD, an AOF base written synchronously).
//
// rdb-key-save-delay applies here too (rdbSaveKeyValuePair's debugDelay):
// a SAVE with it blocks the server for that long per key, as Redis's.
func (s *Server) WriteRDB(w io.Writer, aofBase bool) error {
	return s.writeRDBDelay(w, aofBase, s.rdbKeySaveDelay())
}

// writeRDBDelay is WriteRDB sleeping delay after each key (lock held).
func (s *Server) writeRDBDelay(w io.Writer, aofBase bool, delay time.Duration) error {
	enc, err := rdb.NewEncoder(w, s.encodeOptions(aofBase))
	if err != nil {
		return err
	}
	for i, db := range s.ks.DBs {
		if db.Len() == 0 {
			continue
		}
		enc.SetDBSizes(i, db.Len(), db.ExpiresLen())
		db.ForEach(func(k string, e *keyspace.Entry) bool {
			err = enc.WriteItem(keyspace.Item{DB: i, Key: k, Value: e.Value(), ExpireAt: db.ExpireAt(e), LastAccess: e.LastAccess(), Freq: e.Freq})
			if delay > 0 {
				debugDelay(delay)
			}
			return err == nil
		})
		if err != nil {
			return err
		}
	}
	return enc.Finish()
}

// writeRDBFile is rdbSave's file handling: temp-<pid>.rdb in dir, body,
// flush, fsync, close, rename to path, fsync of the directory. The temp
// file is removed on failure.
//
// A BGSAVE passes its job: the rename then happens under the execution
// lock and only if the job was not killed meanwhile (a SHUTDOWN SAVE's
// newer file must not be replaced by the killed BGSAVE's). Its temp file
// is temp-<pid>-<n>.rdb (Redis: the child's pid) so that it never
// collides with SAVE's.
func (s *Server) writeRDBFile(dir, path string, job *bgsaveJob, body func(io.Writer) error) error {
	tmp := filepath.Join(dir, fmt.Sprintf("temp-%d.rdb", os.Getpid()))
	if job != nil {
		tmp = job.tmp
	}
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		s.log.Warn().Msgf("Failed opening the temp RDB file %s (in server root dir %s) for saving: %s", filepath.Base(tmp), dir, redisutil.Strerror(err))
		return err
	}
	werr := func(op string, err error) error {
		s.log.Warn().Msgf("Write error saving DB on disk(%s): %s", op, redisutil.Strerror(err))
		f.Close()
		os.Remove(tmp)
		return err
	}
	bw := bufio.NewWriterSize(f, 64<<10)
	if err := body(bw); err != nil {
		return werr("rdbSaveRio", err)
	}
	if err := bw.Flush(); err != nil {
		return werr("fflush", err)
	}
	if err := f.Sync(); err != nil {
		return werr("fsync", err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		s.log.Warn().Msgf("Write error saving DB on disk(fclose): %s", redisutil.Strerror(err))
		return err
	}
	if job != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		if job.kill.Load() {
			os.Remove(tmp)
			return errors.New("killed")
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		s.log.Warn().Msgf("Error moving temp DB file %s on the final destination %s (in server root dir %s): %s", filepath.Base(tmp), filepath.Base(path), dir, redisutil.Strerror(err))
		os.Remove(tmp)
		return err
	}
	if err := fsyncDir(filepath.Dir(path)); err != nil {
		s.log.Warn().Msgf("Write error saving DB on disk(fsyncFileDir): %s", redisutil.Strerror(err))
		return err
	}
	return nil
}

func fsyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// rdbSave is rdbSave: a synchronous save under the execution lock. On
// success dirty is reset, lastsave set and the bgsave status cleared.
func (s *Server) rdbSave() error {
	err := s.writeRDBFile(s.cfg.Dir, s.rdbPath(), nil, func(w io.Writer) error { return s.WriteRDB(w, false) })
	if err != nil {
		return err
	}
	s.log.Info().Msg("DB saved on disk")
	s.ks.Dirty = 0
	s.rdb.lastSave = s.clock.Now().Unix()
	s.rdb.bgsaveErr = false
	s.rdb.saves++
	return nil
}

// rdbSaveBackground is rdbSaveBackground: starts a BGSAVE. The snapshot
// is serialised here (a goroutine alternating lock / Snapshot.Step /
// unlock / encode) and streamed to a writer child process
// (internal/savechild) that writes temp-<childpid>.rdb, as Redis's fork
// child; the child's exit is handled as checkChildrenDone does
// (bgsaveReap). When the child cannot be spawned the goroutine writes the
// file itself (logged).
func (s *Server) rdbSaveBackground() error {
	_, err := s.rdbSaveBackgroundJob(false)
	return err
}

// rdbSaveBackgroundJob is rdbSaveBackground; repl marks a save started for
// replicas with a disk target (rdbSaveBackground with
// RDBFLAGS_REPLICATION: the same child, file and outcome as a BGSAVE).
func (s *Server) rdbSaveBackgroundJob(repl bool) (*bgsaveJob, error) {
	if s.rdb.job != nil {
		return nil, errors.New("bgsave running")
	}
	s.rdb.dirtyBefore = s.ks.Dirty
	s.rdb.lastBgsaveTry = s.clock.Now().Unix()
	snap, err := s.beginChildSnapshot()
	if err != nil {
		s.rdb.bgsaveErr = true
		s.log.Warn().Msgf("Can't save in background: fork: %s", err)
		return nil, err
	}
	opts := s.encodeOptions(false)
	sizes := make([][2]int, len(s.ks.DBs))
	total := int64(0)
	for i, db := range s.ks.DBs {
		sizes[i] = [2]int{db.Len(), db.ExpiresLen()}
		total += int64(db.Len())
	}
	s.rdb.bgsaveSeq++
	job := &bgsaveJob{snap: snap, start: s.clock.Now(), total: total, done: make(chan struct{}), stop: make(chan struct{}), seq: s.rdb.bgsaveSeq,
		repl: repl, replOff: s.repl.offset, path: s.rdbPath(), finished: make(chan struct{})}
	job.child = s.startSaveChild(savechild.RDB, "redis-rdb-bgsave")
	pid := os.Getpid()
	if job.child != nil {
		job.tmp, pid = job.child.Path, job.child.Pid
	} else {
		job.tmp = filepath.Join(s.cfg.Dir, fmt.Sprintf("temp-%d-%d.rdb", os.Getpid(), job.seq))
	}
	s.rdb.job = job
	s.updateDictResizePolicy()
	dir, path := s.cfg.Dir, s.rdbPath()
	delay := s.rdbKeySaveDelay()
	s.log.Info().Msgf("Background saving started by pid %d", pid)
	body := func(w io.Writer, pacer *snapshotPacer) error {
		stopped := func() error {
			if job.stopped() {
				return errBgsaveKilled
			}
			return nil
		}
		return s.encodeSnapshot(w, &snapshotEncode{snap: snap, opts: opts, sizes: sizes, delay: delay, pacer: pacer,
			stopped: stopped, check: stopped, sleep: job.sleep, processed: &job.processed})
	}
	if job.child != nil {
		go s.bgsaveChildWrite(job, body)
		go s.bgsaveReap(job, path)
		return job, nil
	}
	go func() {
		defer close(job.done)
		release, borrowed := borrowProc()
		defer release()
		pacer := newSnapshotPacer(borrowed)
		err := s.writeRDBFile(dir, path, job, func(w io.Writer) error { return body(w, pacer) })
		s.log.Debug().Msgf("Background saving pacing: %v", pacer)
		s.mu.Lock()
		if !job.kill.Load() {
			s.bgsaveDone(job, err)
		}
		s.mu.Unlock()
	}()
	return job, nil
}

// errBgsaveKilled: the BGSAVE was killed or its child ended.
var errBgsaveKilled = errors.New("killed")

// startSaveChild spawns a background save's writer child titled title
// (redisSetProcTitle in the fork child: proc-title-template with {title}
// set to it, when set-proc-title is yes). nil when it cannot be spawned:
// the save is then written in process, and unless the process never
// enabled children (tests, embedders) the reason is logged.
func (s *Server) startSaveChild(kind savechild.Kind, title string) *savechild.Child {
	return s.startSaveChildIn(kind, title, s.cfg.Dir)
}

// startSaveChildIn is startSaveChild with the child's temp file in dir.
func (s *Server) startSaveChildIn(kind savechild.Kind, title, dir string) *savechild.Child {
	if !savechild.Enabled() {
		return nil
	}
	argv := os.Args
	if v, _ := s.cfg.Value("set-proc-title"); v == "yes" {
		tmpl, _ := s.cfg.Value("proc-title-template")
		mode := ""
		if s.cfg.ClusterEnabled {
			mode = "[cluster]"
		}
		if t, ok := configs.ExpandProcTitle(tmpl, s.cfg.ProcTitleVars(title, mode)); ok {
			argv = []string{t}
		}
	}
	child, err := savechild.Start(savechild.Options{
		Kind: kind,
		Dir:  dir,
		Argv: argv,
		// The child's own complaints, at LL_WARNING as its serverLog.
		Log: func(pid int, line string) {
			l := s.childLog(pid)
			l.Warn().Msg(line)
		},
		// redisFork: setOOMScoreAdj(CONFIG_OOM_BGCHILD) in the child.
		OOMScoreAdj: s.bgchildOOMScore(),
	})
	if err != nil {
		s.log.Warn().Msgf("Can't start a child process for the background save, writing it in process: %v", err)
		return nil
	}
	return child
}

// bgsaveChildWrite streams the snapshot to the BGSAVE's child: commit
// when the whole RDB was written, else abort (the child removes its file
// and exits 1: "Background saving error"). A child that died makes the
// writes fail (EPIPE); bgsaveReap reports it.
func (s *Server) bgsaveChildWrite(job *bgsaveJob, body func(io.Writer, *snapshotPacer) error) {
	defer close(job.done)
	release, borrowed := borrowProc()
	defer release()
	pacer := newSnapshotPacer(borrowed)
	bw := bufio.NewWriterSize(job.child, 256<<10)
	err := body(bw, pacer)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = job.child.Commit()
	}
	if err != nil {
		job.child.Abort()
		if !errors.Is(err, errBgsaveKilled) && !errors.Is(err, syscall.EPIPE) && !errors.Is(err, savechild.ErrAborted) && !errors.Is(err, os.ErrClosed) {
			s.log.Warn().Msgf("Write error saving DB on disk: %v", err)
		}
	}
	s.log.Debug().Msgf("Background saving pacing: %v", pacer)
}

// bgsaveReap is checkChildrenDone for a BGSAVE's child: once it exited,
// the temp file is renamed to dbfilename on success (exit 0) and the state
// updated as backgroundSaveDoneHandler, unless killBgsave detached the job
// first.
func (s *Server) bgsaveReap(job *bgsaveJob, path string) {
	<-job.child.Done()
	code, sig := job.child.Status()
	s.mu.Lock()
	defer s.mu.Unlock()
	job.halt()
	if job.kill.Load() || s.rdb.job != job {
		return
	}
	if code == 0 && sig == 0 {
		if err := os.Rename(job.tmp, path); err != nil {
			s.log.Warn().Msgf("Error moving temp DB file %s on the final destination %s (in server root dir %s): %s", filepath.Base(job.tmp), filepath.Base(path), s.cfg.Dir, redisutil.Strerror(err))
			os.Remove(job.tmp)
			code = 1
		} else if err := fsyncDir(filepath.Dir(path)); err != nil {
			s.log.Warn().Msgf("Write error saving DB on disk(fsyncFileDir): %s", redisutil.Strerror(err))
			code = 1
		} else {
			l := s.childLog(job.child.Pid)
			l.Info().Msg("DB saved on disk")
			l.Info().Msg(forkCowLine("RDB", job.snap.Stats().CowBytes()))
		}
	}
	s.bgsaveFinish(job, code, sig)
}

// bgsaveDone is backgroundSaveDoneHandlerDisk for a BGSAVE written in
// process, under the lock.
func (s *Server) bgsaveDone(job *bgsaveJob, err error) {
	code := 0
	if err != nil {
		code = 1
	}
	s.bgsaveFinish(job, code, 0)
}

// bgsaveFinish is backgroundSaveDoneHandler(exitcode, bysignal) for a
// disk BGSAVE, under the lock: a child killed by a signal has its temp
// file removed and, unless the signal is SIGUSR1 (killRDBChild), makes
// the last bgsave status an error, as does a non-zero exit.
func (s *Server) bgsaveFinish(job *bgsaveJob, exitcode, bysignal int) {
	job.halt()
	job.snap.Close()
	s.rdb.lastCow = job.snap.Stats().CowBytes()
	s.rdb.job = nil
	now := s.clock.Now()
	s.rdb.lastBgsaveSecs = int64(now.Sub(job.start).Seconds())
	s.rdb.bgsaveRan = true
	defer s.updateSlavesWaitingBgsave(job, bysignal == 0 && exitcode == 0)
	if job.socket { // backgroundSaveDoneHandlerSocket
		switch {
		case bysignal == 0 && exitcode == 0:
			s.log.Info().Msg("Background RDB transfer terminated with success")
		case bysignal == 0:
			s.log.Warn().Msg("Background transfer error")
		default:
			s.log.Warn().Msgf("Background transfer terminated by signal %d", bysignal)
		}
		s.updateDictResizePolicy()
		return
	}
	switch {
	case bysignal == 0 && exitcode == 0:
		s.log.Info().Msg("Background saving terminated with success")
		s.ks.Dirty -= s.rdb.dirtyBefore
		s.rdb.lastSave = now.Unix()
		s.rdb.bgsaveErr = false
		s.rdb.saves++
	case bysignal == 0:
		s.log.Warn().Msg("Background saving error")
		s.rdb.bgsaveErr = true
	default:
		s.log.Warn().Msgf("Background saving terminated by signal %d", bysignal)
		os.Remove(job.tmp) // rdbRemoveTempFile
		if bysignal != int(syscall.SIGUSR1) {
			s.rdb.bgsaveErr = true
		}
	}
	s.updateDictResizePolicy()
}

// killBgsave is killRDBChild (lock held): the running BGSAVE is detached
// at once (its snapshot closed, the state updated as for a child killed
// by SIGUSR1); its child gets SIGUSR1, its goroutine notices at its next
// step, and the temp file is removed and never renamed.
func (s *Server) killBgsave() {
	socket := s.rdb.job != nil && s.rdb.job.socket
	if s.killBgsaveQuiet() {
		if socket {
			s.log.Warn().Msg("Background transfer terminated by signal 10")
		} else {
			s.log.Warn().Msg("Background saving terminated by signal 10")
		}
	}
}

// killBgsaveQuiet is killBgsave without the done handler's log line,
// which Redis does not reach when it exits after killing its child
// (finishShutdown). False when no save ran.
func (s *Server) killBgsaveQuiet() bool {
	job := s.rdb.job
	if job == nil {
		return false
	}
	job.kill.Store(true)
	job.halt()
	if job.child != nil {
		job.child.Signal(syscall.SIGUSR1)
		job.child.Abort()
	}
	if job.tmp != "" {
		os.Remove(job.tmp) // rdbRemoveTempFile: the process may exit first
	}
	job.snap.Close()
	s.rdb.job = nil // killed by SIGUSR1: lastbgsave_status unchanged
	s.rdb.lastBgsaveSecs = int64(s.clock.Now().Sub(job.start).Seconds())
	s.rdb.bgsaveRan = true
	s.updateDictResizePolicy()
	s.updateSlavesWaitingBgsave(job, false)
	return true
}

// updateDictResizePolicy is updateDictResizePolicy (lock held): the
// dicts do not start resizes while a background save runs
// (keyspace.DisableResize), as Redis's while it has a child.
func (s *Server) updateDictResizePolicy() {
	off := s.childActive()
	if off == s.rdb.resizeOff {
		return
	}
	s.rdb.resizeOff = off
	if off {
		keyspace.DisableResize()
	} else {
		keyspace.EnableResize()
	}
}

// releaseDictResizePolicy undoes this server's DisableResize when Run
// ends (other servers of the process keep theirs).
func (s *Server) releaseDictResizePolicy() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rdb.resizeOff {
		s.rdb.resizeOff = false
		keyspace.EnableResize()
	}
}

// rdbCron is serverCron's persistence part: a scheduled BGSAVE and the
// save points. Lock held.
func (s *Server) rdbCron() {
	if s.rdb.loading || s.childActive() {
		return
	}
	now := s.clock.Now().Unix()
	retryOK := now-s.rdb.lastBgsaveTry > configBgsaveRetryDelay || !s.rdb.bgsaveErr
	if s.rdb.scheduled && retryOK {
		s.rdb.scheduled = false
		_ = s.rdbSaveBackground()
		return
	}
	if s.ldbPendingChildren() > 0 {
		return // serverCron: no save point while a debugging child lives
	}
	for _, sp := range s.cfg.Save {
		if s.ks.Dirty >= int64(sp.Changes) && now-s.lastSaveTime() > sp.Seconds && retryOK {
			s.log.Info().Msgf("%d changes in %d seconds. Saving...", sp.Changes, sp.Seconds)
			_ = s.rdbSaveBackground()
			break
		}
	}
}

// diskErrorDenies is writeCommandsDeniedByDiskError: the -MISCONF text,
// or "" when writes are allowed. The RDB's failure wins over the AOF's.
func (s *Server) diskErrorDenies() string {
	if s.cfg.StopWritesOnBgsaveError && len(s.cfg.Save) > 0 && s.rdb.bgsaveErr {
		return errBgsaveErr
	}
	return s.aofDiskError()
}

// flushAllResetRDB is flushAllDataAndResetRDB's persistence part, after
// FLUSHALL emptied the databases: a running BGSAVE is killed and, with
// save points, the empty dataset is saved at once, which resets the dirty
// counter as in Redis (FLUSHALL propagates anyway: forcePropagation).
func (s *Server) flushAllResetRDB() {
	if s.rdb.job != nil {
		s.killBgsave()
	}
	if len(s.cfg.Save) > 0 {
		// The save resets the dirty counter (rdb_changes_since_last_save
		// is 0 after it); FLUSHALL's propagation is forced, not a
		// consequence of dirty.
		_ = s.rdbSave()
	}
}

// --- commands ------------------------------------------------------------------

func cmdSave(c *Client, args [][]byte) {
	s := c.srv
	if s.rdb.job != nil {
		c.w.Error("ERR Background save already in progress")
		return
	}
	if err := s.rdbSave(); err != nil {
		c.w.Error("ERR")
		return
	}
	c.w.OK()
}

func cmdBgsave(c *Client, args [][]byte) {
	s := c.srv
	schedule := false
	if len(args) > 1 {
		if len(args) == 2 && eqFold(args[1], "schedule") {
			schedule = true
		} else {
			c.w.Error(ErrSyntax)
			return
		}
	}
	inExec := s.execDepth > 1 // server.in_exec: queued in MULTI
	switch {
	case s.rdb.job != nil:
		c.w.Error("ERR Background save already in progress")
	case s.childActive() || inExec:
		if schedule || inExec {
			s.rdb.scheduled = true
			c.w.Simple("Background saving scheduled")
		} else {
			c.w.Error("ERR Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE SCHEDULE in order to schedule a BGSAVE whenever possible.")
		}
	default:
		if err := s.rdbSaveBackground(); err != nil {
			c.w.Error("ERR")
			return
		}
		c.w.Simple("Background saving started")
	}
}

func cmdLastSaveRDB(c *Client, args [][]byte) { c.w.Int(c.srv.lastSaveTime()) }

// --- loading -------------------------------------------------------------------

// MarkLoading puts the server in the loading state (-LOADING for the
// commands not flagged loading, no cron) until LoadDataFromDisk ends: call
// it before Run when LoadDataFromDisk runs after Run has started.
func (s *Server) MarkLoading() {
	s.mu.Lock()
	s.rdb.loading = true
	s.mu.Unlock()
	s.loadMarked.Store(true)
	s.startupLoading.Store(true)
}

// LoadDataFromDisk is loadDataFromDisk: the AOF when appendonly is yes,
// else dbfilename in dir when it exists. The error is fatal: the caller
// logs it and exits with status 1, as Redis. After MarkLoading it waits
// until Run serves (listeners, cron, the replicaof link), so that clients
// connecting during the load are answered (-LOADING) however long the
// load holds the server; a shutdown before that returns ErrLoadAborted.
func (s *Server) LoadDataFromDisk() error {
	if s.loadMarked.Load() {
		select {
		case <-s.serving:
		case <-s.doneCh:
			return ErrLoadAborted
		}
	}
	return s.loadDataOnStart()
}

// StartupLoading reports whether the startup load (LoadDataFromDisk, or
// the one Run does) is running: a signal meanwhile shuts down without
// saving (Run), and Redis's signal handler words its log line so.
func (s *Server) StartupLoading() bool { return s.startupLoading.Load() }

// loadAborted: a shutdown was asked during the startup load (checked at
// each yield).
func (s *Server) loadAborted() bool { return s.closing.Load() || s.abortLoad.Load() }

// stopLoadForShutdown is a signal during the startup load: the load stops
// at its next yield, and a script of the AOF running meanwhile is stopped
// with its effects dropped (as SHUTDOWN NOSAVE during a busy script).
func (s *Server) stopLoadForShutdown() {
	s.abortLoad.Store(true)
	if b := s.loadBusy(); b != nil {
		b.shutdown.Store(true)
		b.stop()
	}
}

// loadYield is processEventsWhileBlocked during the startup load: the
// execution lock is released so that clients are answered (-LOADING, or
// the commands flagged loading), after sleeping delay (key-load-delay)
// outside it. It returns ErrLoadAborted when a shutdown came meanwhile.
func (s *Server) loadYield(delay time.Duration) error {
	s.mu.Unlock()
	if delay > 0 {
		debugDelay(delay)
	} else {
		runtime.Gosched()
	}
	s.mu.Lock()
	if s.loadAborted() {
		return ErrLoadAborted
	}
	return nil
}

// loadRDBFile is loadDataFromDisk's RDB branch: dbfilename in dir when it
// exists. Called with mu held by loadDataOnStart (persist_aof.go), which
// owns the loading flags.
func (s *Server) loadRDBFile() error {
	start := time.Now()
	f, err := os.Open(s.rdbPath())
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("Fatal error loading the DB: %s. Exiting.", redisutil.Strerror(err))
	}
	defer f.Close()
	s.rdb.loadStart = s.clock.Now().Unix()
	s.rdb.loadLoaded = 0
	if fi, err := f.Stat(); err == nil {
		s.rdb.loadTotal = fi.Size()
	}
	_, _, err = s.loadRDBYield(bufio.NewReaderSize(countingReader{r: f, n: &s.rdb.loadLoaded}, 64<<10), false)
	if err != nil {
		return s.rdbFileLoadFailed(err)
	}
	s.log.Info().Msgf("DB loaded from disk: %.3f seconds", time.Since(start).Seconds())
	s.restoreReplInfo() // repl: the RDB's repl-id/repl-offset (repl_master.go)
	return nil
}

// SetStdout is where the server prints what Redis printf()s to its
// standard output: redis_check_rdb_main's trace when the startup load
// finds dbfilename corrupt. Nil prints nothing.
func (s *Server) SetStdout(w io.Writer) { s.stdout = w }

// LoggedError is a fatal startup failure already logged in full: the
// caller exits (status 1) without logging it again.
type LoggedError struct{ Err error }

func (e *LoggedError) Error() string { return e.Err.Error() }
func (e *LoggedError) Unwrap() error { return e.Err }

// terminatingError is rdbReportError's last words after a failed load of
// dbfilename; the load's failure is behind it.
type terminatingError struct{ cause error }

func (e *terminatingError) Error() string {
	return "Terminating server after rdb file reading failure."
}
func (e *terminatingError) Unwrap() error { return e.cause }

// rdbFileLoadFailed is rdbReportError for the startup load of dbfilename
// (rdbFileBeingLoaded set): a corrupt value or a short read logs rdb.c's
// "Internal error in RDB reading offset ..." line, runs the RDB checker on
// the file (redis_check_rdb_main: its trace on stdout) and, but for a
// checksum error (the checker exits then), logs "Terminating server after
// rdb file reading failure."; other failures are returned as they are.
func (s *Server) rdbFileLoadFailed(err error) error {
	var re *rdb.Error
	if !errors.As(err, &re) {
		return err
	}
	var lines []string
	crc := strings.HasPrefix(re.Reason, "Wrong RDB checksum")
	switch {
	case crc:
		lines = strings.Split(err.Error(), "\n")
	case re.Reason == rdb.ShortRead || re.Line == -1: // rdbLoadRio's eoferr
		if re.Line == -1 {
			lines = append(lines, re.Reason)
		}
		lines = append(lines, rdb.ShortRead, fmt.Sprintf("Internal error in RDB reading offset %d, function at rdb.c:3249 -> Unexpected EOF reading RDB file", s.loadingLoadedBytes()))
	case re.Line != 0:
		lines = re.Reports(s.loadingLoadedBytes())
	default:
		return err
	}
	for _, l := range lines {
		s.log.Warn().Msg(l)
	}
	if f, ferr := os.Open(s.rdbPath()); ferr == nil && s.stdout != nil {
		fmt.Fprintf(s.stdout, "[offset 0] Checking RDB file %s\n", s.cfg.DBFilename)
		rdb.Check(bufio.NewReaderSize(f, 64<<10), 0, s.stdout, nil)
		f.Close()
	}
	if crc {
		return &LoggedError{Err: err}
	}
	return &terminatingError{cause: err}
}

// loadRDBPath is rdbLoad: reads path into the keyspace; with merge
// (RDBFLAGS_ALLOW_DUP) a key already present is replaced. Lock held.
// os.ErrNotExist is returned as is.
func (s *Server) loadRDBPath(path string, merge bool) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, _, err = s.loadRDB(bufio.NewReaderSize(f, 64<<10), false, merge)
	return err
}

// LoadRDB reads an RDB stream into the keyspace (rdbLoadRio): keys
// already expired are skipped (a master), a duplicated key is an error.
// With aofPreamble (an AOF base) expired keys are kept, as Redis. Lock
// held. It logs Redis's messages and returns the counts.
func (s *Server) LoadRDB(r io.Reader, aofPreamble bool) (loaded, expired int64, err error) {
	return s.loadRDB(r, aofPreamble, false)
}

func (s *Server) loadRDB(r io.Reader, aofPreamble, merge bool) (loaded, expired int64, err error) {
	return s.loadRDBOpts(r, aofPreamble, merge, false)
}

// loadRDBYield is the startup load: the execution lock is released every
// loadYieldKeys keys (and after each key with key-load-delay, which
// sleeps that many microseconds per key, as Redis's debugDelay) so that
// clients get -LOADING; a shutdown meanwhile aborts it (ErrLoadAborted).
func (s *Server) loadRDBYield(r io.Reader, aofPreamble bool) (loaded, expired int64, err error) {
	return s.loadRDBOpts(r, aofPreamble, false, true)
}

// debugDelay is Redis's debugDelay for key-load-delay and
// rdb-key-save-delay: the thread sleeps (nanosleep, as usleep). time.Sleep
// would wait for the runtime's timer, which rounds a sleep shorter than a
// millisecond up to one or more when the process is otherwise idle: 200 µs
// per key took 1.1 ms, five times Redis's load time.
func debugDelay(d time.Duration) {
	ts := unix.NsecToTimespec(d.Nanoseconds())
	for unix.Nanosleep(&ts, &ts) == unix.EINTR {
	}
}

func (s *Server) keyLoadDelay() time.Duration {
	v, ok := s.cfg.Value("key-load-delay")
	if !ok {
		return 0
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return 0
	}
	return time.Duration(n) * time.Microsecond
}

func (s *Server) loadRDBOpts(r io.Reader, aofPreamble, merge, yield bool) (loaded, expired int64, err error) {
	return s.loadRDBInto(s.ks, r, aofPreamble, merge, yield)
}

// loadRDBInto is loadRDBOpts into the databases of ks: s.ks, or the
// temporary keyspace of a swapdb replication load (repl_replica.go).
func (s *Server) loadRDBInto(ks *keyspace.Keyspace, r io.Reader, aofPreamble, merge, yield bool) (loaded, expired int64, err error) {
	now := s.clock.Now().UnixMilli()
	var delay time.Duration
	if yield {
		delay = s.keyLoadDelay()
	}
	n, skipped := 0, 0
	opts := rdb.LoadOptions{
		VerifyChecksum: s.cfg.RDBChecksum && !s.dbg.skipChecksum, // DEBUG SET-SKIP-CHECKSUM-VALIDATION
		Databases:      len(s.ks.DBs),
		Enc:            s.ks.Encodings,
		OnResizeDB: func(db int, keys, expires uint64) {
			ks.DBs[db].ExpandForLoad(keys, expires)
		},
		OnEmptyKey: func(key []byte) {
			if skipped++; skipped <= 10 {
				s.log.Warn().Msgf("rdbLoadObject skipping empty key: %s", key)
			}
		},
		OnAux: func(a rdb.AuxField) error {
			switch a.Key {
			case "redis-ver":
				s.log.Info().Msgf("Loading RDB produced by version %s", a.Value)
			case "ctime":
				if t, err := strconv.ParseInt(a.Value, 10, 64); err == nil {
					age := s.clock.Now().Unix() - t
					if age < 0 {
						age = 0
					}
					s.log.Info().Msgf("RDB age %d seconds", age)
				}
			case "repl-id", "repl-offset", "repl-stream-db", auxFreshStart: // repl: repl_master.go
				s.rdbReplAux(a.Key, a.Value)
			case "used-mem":
				if m, err := strconv.ParseInt(a.Value, 10, 64); err == nil {
					s.rdb.loadUsedMem = m
					s.log.Info().Msgf("RDB memory usage when created %.2f Mb", float64(m)/(1024*1024))
				}
			}
			return nil
		},
	}
	info, err := rdb.Load(r, opts, func(rec rdb.Record) error {
		if yield {
			if n++; n%loadYieldKeys == 0 || delay > 0 {
				if err := s.loadYield(delay); err != nil {
					return err
				}
				now = s.clock.Now().UnixMilli()
				// Read again at each yield: Redis reads key-load-delay
				// per key, so a CONFIG SET during the load applies at
				// once.
				delay = s.keyLoadDelay()
			}
		}
		// A replica keeps the keys its master will expire (iAmMaster).
		if rec.ExpireAt != 0 && rec.ExpireAt < now && !aofPreamble && s.iAmMaster() {
			if s.rdb.feedRepl && s.repl.backlog != nil {
				s.replFeed(s.repl.stream.Append(nil, rec.DB, [][]byte{s.delWord(s.cfg.LazyfreeLazyExpire), rec.Key}))
			}
			expired++
			return nil
		}
		db := ks.DBs[rec.DB]
		e, ok := db.LoadAdd(rec.Key, rec.Value, rec.ExpireAt, now)
		if !ok {
			if !merge {
				return fmt.Errorf("RDB has duplicated key '%s' in DB %d", rec.Key, rec.DB)
			}
			db.SyncDelete(rec.Key) // rdbLoad's dbSyncDelete
			e, _ = db.LoadAdd(rec.Key, rec.Value, rec.ExpireAt, now)
		}
		if e != nil {
			e.SetAccessMeta(s.policyIsLFU(), rec.Idle, rec.Freq, now)
		}
		loaded++
		return nil
	})
	s.rdb.loadedKeys, s.rdb.loadedExpired = loaded, expired
	if err != nil {
		if errors.Is(err, ErrLoadAborted) {
			return loaded, expired, err
		}
		var re *rdb.Error
		if errors.As(err, &re) {
			if strings.HasPrefix(re.Reason, "Wrong RDB checksum") {
				// rdbReportCorruptRDB's line after it.
				return loaded, expired, &rdbLoadError{re, fmt.Sprintf("%s\nInternal error in RDB reading offset %d, function at rdb.c:3225 -> RDB CRC error", re.Reason, s.loadingLoadedBytes())}
			}
			return loaded, expired, &rdbLoadError{re, re.Reason}
		}
		return loaded, expired, err
	}
	if err := s.loadFunctionCodes(info.Functions, merge); err != nil { // functions.go
		return loaded, expired, err
	}
	if info.Skipped > 0 {
		s.log.Warn().Msgf("Done loading RDB, keys loaded: %d, keys expired: %d, empty keys skipped: %d.", loaded, expired, info.Skipped)
	} else {
		s.log.Info().Msgf("Done loading RDB, keys loaded: %d, keys expired: %d.", loaded, expired)
	}
	return loaded, expired, nil
}

// rdbLoadError is a load failure: its message (the reason, and for a
// checksum error the report after it), the *rdb.Error behind it kept for
// rdbFileLoadFailed.
type rdbLoadError struct {
	e   *rdb.Error
	msg string
}

func (e *rdbLoadError) Error() string { return e.msg }
func (e *rdbLoadError) Unwrap() error { return e.e }

// loadingLoadedBytes is server.loading_loaded_bytes as rdbReportError
// shows it: the bytes loaded, updated every
// loading-process-events-interval-bytes.
func (s *Server) loadingLoadedBytes() int64 {
	every := int64(2 << 20)
	if v, _ := s.cfg.Value("loading-process-events-interval-bytes"); v != "" {
		if n, e := strconv.ParseInt(v, 10, 64); e == nil && n > 0 {
			every = n
		}
	}
	return s.rdb.loadLoaded / every * every
}

// idleSecs is OBJECT IDLETIME's and DEBUG OBJECT's idle time of e at now
// (unix ms): estimateObjectIdleTime in seconds of Redis's LRU clock.
func idleSecs(e *keyspace.Entry, now int64) int64 {
	if e.LRUFieldIsLFU() {
		return e.IdleMs(now) / 1000
	}
	return max(0, now/1000-e.LastAccess()/1000) // the clock ticks in whole seconds
}

// --- INFO persistence --------------------------------------------------------

// infoPersistenceRDB writes INFO persistence (genRedisInfoString): the RDB
// fields here, the aof_* ones from infoAOFFields and infoPersistenceAOF
// (persist_glue.go, persist_aof.go).
func (s *Server) infoPersistenceRDB(w *infoWriter) {
	job := s.rdb.job
	w.int("loading", b2i64(s.rdb.loading && !s.asyncLoading()))
	w.int("async_loading", b2i64(s.asyncLoading()))
	// Redis reads these from its child every second; here the running
	// snapshot's figure is exact at any moment (age 0), and since it only
	// grows while the snapshot runs, the peak is the current size.
	var cow uint64
	if snap := s.ks.Running(); snap != nil {
		cow = snap.Stats().CowBytes()
	}
	w.int("current_cow_peak", int64(cow))
	w.int("current_cow_size", int64(cow))
	w.int("current_cow_size_age", 0)
	var processed, total int64
	perc := 0.0
	if job != nil {
		processed, total = job.processed.Load(), job.total
		if total > 0 {
			perc = float64(processed) * 100 / float64(total)
		}
	}
	w.f2("current_fork_perc", perc)
	w.int("current_save_keys_processed", processed)
	w.int("current_save_keys_total", total)
	w.int("rdb_changes_since_last_save", s.ks.Dirty)
	w.int("rdb_bgsave_in_progress", b2i64(job != nil))
	w.int("rdb_last_save_time", s.lastSaveTime())
	status := "ok"
	if s.rdb.bgsaveErr {
		status = "err"
	}
	w.str("rdb_last_bgsave_status", status)
	last := s.rdb.lastBgsaveSecs
	if !s.rdb.bgsaveRan {
		last = -1
	}
	w.int("rdb_last_bgsave_time_sec", last)
	cur := int64(-1)
	if job != nil {
		cur = int64(s.clock.Now().Sub(job.start).Seconds())
	}
	w.int("rdb_current_bgsave_time_sec", cur)
	w.int("rdb_saves", s.rdb.saves)
	w.int("rdb_last_cow_size", int64(s.rdb.lastCow))
	w.int("rdb_last_load_keys_expired", s.rdb.loadedExpired)
	w.int("rdb_last_load_keys_loaded", s.rdb.loadedKeys)
	s.infoAOFFields(w)
	w.int("module_fork_in_progress", 0)
	w.int("module_fork_last_cow_size", 0)
	s.infoPersistenceAOF(w)
	if s.rdb.loading && !s.rdb.loadFailed {
		w.int("loading_start_time", s.rdb.loadStart)
		w.int("loading_total_bytes", s.rdb.loadTotal)
		w.int("loading_rdb_used_mem", s.rdb.loadUsedMem)
		w.int("loading_loaded_bytes", s.rdb.loadLoaded)
		perc, remaining := 0.0, int64(1)
		if s.rdb.loadTotal > 0 {
			perc = float64(s.rdb.loadLoaded) / float64(s.rdb.loadTotal) * 100
			remaining = s.rdb.loadTotal - s.rdb.loadLoaded
		}
		w.f2("loading_loaded_perc", perc)
		eta := int64(1) // Redis's fake 1 second without enough information
		if elapsed := s.clock.Now().Unix() - s.rdb.loadStart; elapsed != 0 {
			eta = elapsed * remaining / (s.rdb.loadLoaded + 1)
		}
		w.int("loading_eta_seconds", eta)
	}
}

func b2i64(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// --- shutdown ------------------------------------------------------------------

// prepareShutdownSave is prepareForShutdown's persistence part (lock
// held): a running BGSAVE is killed, then the RDB is saved with SAVE, or
// with save points configured unless NOSAVE. It returns false when the
// save failed and FORCE was not given: the server must keep running.
func (s *Server) prepareShutdownSave(save, nosave, force bool) bool {
	if s.rdb.loading { // never save a partial (or failed) load
		save, nosave = false, true
	}
	// The child's end is not logged if the process exits: Redis's
	// checkChildrenDone reaps it in a later cron, when the server keeps
	// running.
	s.ldbKillForkedSessions(false) // "Kill all the Lua debugger forked sessions."
	killed := false
	if s.rdb.job != nil {
		s.log.Warn().Msg("There is a child saving an .rdb. Killing it!")
		killed = s.killBgsaveQuiet()
	}
	// The AOF rewrite is killed: the AOF we have holds the dataset,
	// unless the AOF waits for its first rewrite (persist_aof.go).
	if s.aof.rewriting != nil {
		if s.aof.mgr.Enabling() {
			if !force {
				s.log.Warn().Msg("Writing initial AOF, can't exit.")
				return false
			}
			s.log.Warn().Msg("Writing initial AOF. Exit anyway.")
		}
		s.log.Warn().Msg("There is a child rewriting the AOF. Killing it!")
		s.aofKillRewrite()
	}
	if (len(s.cfg.Save) > 0 && !nosave) || save {
		s.log.Info().Msg("Saving the final RDB snapshot before exiting.")
		if err := s.rdbSave(); err != nil {
			if !force {
				s.log.Warn().Msg("Error trying to save the DB, can't exit.")
				if killed {
					s.log.Warn().Msg("Background saving terminated by signal 10")
				}
				return false
			}
			s.log.Warn().Msg("Error trying to save the DB. Exit anyway.")
		}
	}
	return true
}

// shutdownAsap's states.
const (
	asapNone    = iota
	asapPending // a signal asked; the cron has not taken it
	asapTaken   // the shutdown is under way
)

// ShutdownSignal is sigShutdownHandler (sigint false: SIGTERM): it
// records the signal and sets shutdown_asap; the cron performs the
// shutdown (cronSignalShutdown) as shutdown-on-sigint or
// shutdown-on-sigterm says, so DEBUG PAUSE-CRON holds it and SHUTDOWN
// ABORT cancels it. During the startup load the load stops at once. A Lua
// debugger session waiting for its client is interrupted (its read fails
// as with EINTR).
func (s *Server) ShutdownSignal(sigint bool) {
	if sigint {
		s.shutdownSig.Store(2)
	} else {
		s.shutdownSig.Store(15)
	}
	s.shutdownAsap.CompareAndSwap(asapNone, asapPending)
	s.ldbInterrupt()
	select {
	case s.sigWake <- struct{}{}:
	default:
	}
}

// ShutdownPending reports whether a shutdown asked by a signal is pending
// or under way (shutdown_asap): a second signal then exits at once.
func (s *Server) ShutdownPending() bool { return s.shutdownAsap.Load() != asapNone }

// loadingSignalShutdown is whileBlockedCron's shutdown_asap during the
// startup load: the load stops and the server shuts down without saving.
// False when no signal is pending or no startup load runs.
func (s *Server) loadingSignalShutdown() bool {
	if !(s.startupLoading.Load() || s.replLoading.Load()) || !s.shutdownAsap.CompareAndSwap(asapPending, asapTaken) {
		return false
	}
	s.stopLoadForShutdown()
	s.requestShutdown(shutdownReq{nosave: true})
	return true
}

// cronSignalShutdown is serverCron's shutdown_asap branch (lock held): a
// hand-over first when shutdown-on-sig* has failover, else
// prepareForShutdown's save. True when the shutdown was requested (or
// waits for its hand-over); a failed save cancels it, as cancelShutdown,
// and the server keeps running.
func (s *Server) cronSignalShutdown() bool {
	if s.shutdownRequested.Load() {
		return true // a SHUTDOWN is ending the process
	}
	if s.shutdownInitiated() || !s.shutdownAsap.CompareAndSwap(asapPending, asapTaken) {
		return false
	}
	if s.signalShutdownFailoverLocked() {
		return true
	}
	// A wait for lagging replicas first (shutdown_wait.go): the cron
	// goes on meanwhile.
	if s.startShutdownWait(s.signalShutdownReq(), nil, true) {
		return false
	}
	s.logReplicasAtShutdown()
	if !s.signalShutdownSaveLocked() {
		s.shutdownAsap.Store(asapNone)
		return false
	}
	s.requestShutdown(shutdownReq{})
	return true
}

// abortSignalShutdown is abortShutdown's shutdown_asap branch (lock
// held): a signal's shutdown the cron has not started is cancelled.
func (s *Server) abortSignalShutdown() bool {
	return s.shutdownAsap.CompareAndSwap(asapPending, asapNone)
}

// signalShutdownSave is the save of a shutdown by signal (serverCron's
// shutdown_asap): false when it failed and the server keeps running.
func (s *Server) signalShutdownSave() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.signalShutdownSaveLocked()
}

// signalShutdownReq is shutdown-on-sigterm (sigint) as shutdown flags.
func (s *Server) signalShutdownReq() shutdownReq {
	flags := s.cfg.ShutdownOnSigterm
	if s.shutdownSig.Load() == 2 {
		flags = s.cfg.ShutdownOnSigint
	}
	return shutdownReq{save: flags&configs.ShutdownSave != 0, nosave: flags&configs.ShutdownNoSave != 0,
		now: flags&configs.ShutdownNow != 0, force: flags&configs.ShutdownForce != 0}
}

func (s *Server) signalShutdownSaveLocked() bool {
	flags, name := s.cfg.ShutdownOnSigterm, "SIGTERM"
	if s.shutdownSig.Load() == 2 {
		flags, name = s.cfg.ShutdownOnSigint, "SIGINT"
	}
	ok := s.prepareShutdownSave(flags&configs.ShutdownSave != 0, flags&configs.ShutdownNoSave != 0, flags&configs.ShutdownForce != 0)
	if !ok {
		s.log.Warn().Msgf("%s received but errors trying to shut down the server, check the logs for more information", name)
	}
	return ok
}
