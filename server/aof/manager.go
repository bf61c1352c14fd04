package aof

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"
)

// Config is the part of the server's configuration the AOF files follow.
type Config struct {
	Dir      string // the server's dir: the old single AOF lives here
	DirName  string // appenddirname, inside Dir
	Filename string // appendfilename
	Fsync    Fsync
	// Format writes base files (RDB when aof-use-rdb-preamble yes and the
	// server supplies the RDB encoder; else CommandFormat).
	Format BaseFormat
	// DisableAutoGC is aof-disable-auto-gc: history files stay on disk
	// and in the manifest (type h) until it is set back to no.
	DisableAutoGC bool
}

// Path is the AOF directory (dir/appenddirname).
func (c *Config) Path() string { return filepath.Join(c.Dir, c.DirName) }

// Manager owns the AOF directory: the manifest, the Writer on the last
// incremental file, and the rewrite protocol (aof.c's server.aof_manifest,
// openNewIncrAofForAppend, backgroundRewriteDoneHandler,
// aofDelHistoryFiles). All methods are called with the server's execution
// lock held, except WriteBaseFile's work between StartRewrite and
// FinishRewrite.
type Manager struct {
	Cfg      Config
	Manifest *Manifest // nil until read or created
	W        *Writer   // nil while the AOF is off
	// BaseSize is aof_rewrite_base_size: the AOF size after the last
	// rewrite or load, the auto-rewrite growth reference.
	BaseSize int64
	// waitRewrite is AOF_WAIT_REWRITE (CONFIG SET appendonly yes): the AOF
	// is on once its first rewrite completes. While that rewrite runs W
	// appends to the temporary incr file; W is nil until the first
	// attempt starts, and after a failed one still points at the removed
	// temporary file (Redis's aof_fd) with its buffer dropped.
	waitRewrite bool
	Warn        func(string)
	Notice      func(string)
}

func (m *Manager) warn(format string, a ...any) {
	if m.Warn != nil {
		m.Warn(fmt.Sprintf(format, a...))
	}
}

func (m *Manager) notice(format string, a ...any) {
	if m.Notice != nil {
		m.Notice(fmt.Sprintf(format, a...))
	}
}

// ReadManifest is aofLoadManifestFromDisk: a missing directory or
// manifest leaves an empty manifest.
func (m *Manager) ReadManifest() error {
	am, err := ReadManifest(m.Cfg.Path(), m.Cfg.Filename)
	if err != nil {
		return err
	}
	if am == nil {
		am = &Manifest{}
	}
	m.Manifest = am
	return nil
}

// Load is loadAppendOnlyFiles, after the upgrade of an old single
// appendonly file when the directory or manifest is missing
// (aofUpgradePrepare). It returns StatusNotExist when there is no AOF.
func (m *Manager) Load(o *Options) (Result, error) {
	if m.Manifest == nil {
		if err := m.ReadManifest(); err != nil {
			return Result{}, err
		}
	}
	o.Dir = m.Cfg.Path()
	am := m.Manifest
	old := filepath.Join(m.Cfg.Dir, m.Cfg.Filename)
	if fileExists(old) {
		_, dirErr := os.Stat(m.Cfg.Path())
		if dirErr != nil ||
			(am.Base == nil && len(am.Incr) == 0) ||
			(am.Base != nil && len(am.Incr) == 0 && am.Base.Name == m.Cfg.Filename &&
				!fileExists(filepath.Join(m.Cfg.Path(), m.Cfg.Filename))) {
			if err := m.upgrade(); err != nil {
				return Result{}, err
			}
		}
	}
	res, err := LoadManifest(m.Manifest, o)
	if err != nil {
		return res, err
	}
	m.BaseSize = res.TotalSize
	return res, nil
}

// upgrade is aofUpgradePrepare: the old appendonly file becomes the base
// (keeping its name) of a new manifest and moves into the directory.
func (m *Manager) upgrade() error {
	dir := m.Cfg.Path()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("Can't open or create append-only dir %s: %w", m.Cfg.DirName, err)
	}
	// A base already listed is the old file's name (an upgrade
	// interrupted before the rename): replaced, not made history, whose
	// deletion would remove the file just moved in.
	am := m.Manifest.Clone()
	am.Base = &Info{Name: m.Cfg.Filename, Seq: 1, Type: TypeBase}
	am.BaseSeq = 1
	if err := WriteManifest(dir, m.Cfg.Filename, am); err != nil {
		return err
	}
	if err := os.Rename(filepath.Join(m.Cfg.Dir, m.Cfg.Filename), filepath.Join(dir, m.Cfg.Filename)); err != nil {
		return fmt.Errorf("Error trying to move the old AOF file %s into dir %s: %s", m.Cfg.Filename, m.Cfg.DirName, Strerror(errnoOf(err)))
	}
	if err := SyncDir(dir); err != nil {
		return err
	}
	m.Manifest = am
	m.notice("Successfully migrated an old-style AOF file (%s) into the AOF directory (%s).", m.Cfg.Filename, m.Cfg.DirName)
	return nil
}

// OpenOnStart is aofOpenIfNeededOnServerStart: with no AOF files at all
// a base is written first from the loaded dataset ("Creating AOF base file
// ... on server start", by writeBase into the given path), then the last
// incremental file (a new one when there is none) is opened for
// appending, the manifest persisted and history files deleted.
func (m *Manager) OpenOnStart(writeBase func(path string) (int64, error)) error {
	dir := m.Cfg.Path()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("Can't open or create append-only dir %s: %w", m.Cfg.DirName, err)
	}
	if m.Manifest == nil {
		m.Manifest = &Manifest{}
	}
	m.removeTemps()
	am := m.Manifest.Clone()
	changed := false
	if am.Base == nil && len(am.Incr) == 0 {
		name := am.NewBase(m.Cfg.Filename, m.Cfg.Format.RDB)
		size, err := writeBase(filepath.Join(dir, name))
		if err != nil {
			return fmt.Errorf("Creating AOF base file %s on server start failed: %w", name, err)
		}
		m.BaseSize = size
		changed = true
		m.notice("Creating AOF base file %s on server start", name)
	}
	n := len(am.Incr)
	name := am.LastIncr(m.Cfg.Filename)
	if len(am.Incr) != n {
		changed = true
		m.notice("Creating AOF incr file %s on server start", name)
	}
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("Can't open the append-only file %s: %w", name, err)
	}
	if changed {
		if err := WriteManifest(dir, m.Cfg.Filename, am); err != nil {
			f.Close()
			return err
		}
	}
	m.Manifest = am
	size := m.totalSize()
	if m.BaseSize == 0 {
		m.BaseSize = size
	}
	m.W = NewWriter(f, size, m.Cfg.Fsync, m.Warn)
	return m.DeleteHistory()
}

func (m *Manager) totalSize() int64 {
	var n int64
	for _, ai := range m.Manifest.Files() {
		if fi, err := os.Stat(filepath.Join(m.Cfg.Path(), ai.Name)); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// DeleteHistory is aofDelHistoryFiles: history files are removed and the
// manifest persisted without them, unless aof-disable-auto-gc is yes.
func (m *Manager) DeleteHistory() error {
	if m.Manifest == nil || m.Cfg.DisableAutoGC || len(m.Manifest.History) == 0 {
		return nil
	}
	for _, ai := range m.Manifest.History {
		m.notice("Removing the history file %s in the background", ai.Name)
		if err := os.Remove(filepath.Join(m.Cfg.Path(), ai.Name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			m.warn("Can't remove the history file %s: %v", ai.Name, err)
		}
	}
	am := m.Manifest.Clone()
	am.History = nil
	if err := WriteManifest(m.Cfg.Path(), m.Cfg.Filename, am); err != nil {
		return err
	}
	m.Manifest = am
	return nil
}

// Rewrite is a rewrite in progress: the base is written to TempBase
// while commands go to the incremental file opened by StartRewrite.
type Rewrite struct {
	TempBase string
	Start    time.Time
	tempIncr string // AOF_WAIT_REWRITE's temp-<filename>.incr
	off      bool   // BGREWRITEAOF with the AOF off: no incremental file
	format   BaseFormat
}

// Format is the base format the rewrite writes.
func (r *Rewrite) Format() BaseFormat { return r.format }

// Enabling reports whether the AOF waits for its first rewrite
// (AOF_WAIT_REWRITE).
func (m *Manager) Enabling() bool { return m.waitRewrite }

// Enable is startAppendOnly's state change: AOF_OFF -> AOF_WAIT_REWRITE.
// The next StartRewrite writes to the temporary incr file.
func (m *Manager) Enable() { m.waitRewrite = true }

// Active reports aof_state != AOF_OFF: the AOF is on or waits for its
// first rewrite.
func (m *Manager) Active() bool { return m.W != nil || m.waitRewrite }

// TempIncrName is getTempIncrAofName: temp-<appendfilename>.incr.
func (m *Manager) TempIncrName() string { return tempPrefix + m.Cfg.Filename + incrSuffix }

// dropTempIncr is backgroundRewriteDoneHandler's cleanup while the AOF
// waits for its first rewrite: the buffer is dropped and the temporary
// incr file removed (aofDelTempIncrAofFile); the next attempt starts it
// over. W keeps the removed file open, as Redis keeps aof_fd.
func (m *Manager) dropTempIncr() {
	if !m.waitRewrite {
		return
	}
	if m.W != nil {
		m.W.Discard()
	}
	name := m.TempIncrName()
	m.notice("Removing the temp incr aof file %s in the background", name)
	if err := os.Remove(filepath.Join(m.Cfg.Path(), name)); err != nil && !errors.Is(err, os.ErrNotExist) {
		m.warn("Can't remove the temp incr aof file %s: %v", name, err)
	}
}

// StartRewrite is the parent half of rewriteAppendOnlyFileBackground: it
// flushes the buffer and opens a new incremental file that receives every
// write from now on (openNewIncrAofForAppend), persisting the manifest
// that lists it. With the AOF off (enable: CONFIG SET appendonly yes) it
// opens the temporary incr file and a Writer on it instead
// (AOF_WAIT_REWRITE). The caller begins its snapshot in the same locked
// section, so the base plus the new file are exactly the dataset. With
// the AOF off and enable false (BGREWRITEAOF while appendonly is no) no
// incremental file is opened: the new base replaces every file.
func (m *Manager) StartRewrite(now time.Time, pid int, enable bool) (*Rewrite, error) {
	dir := m.Cfg.Path()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("Can't open or create append-only dir %s: %w", m.Cfg.DirName, err)
	}
	if m.Manifest == nil {
		m.Manifest = &Manifest{}
	}
	rw := &Rewrite{
		// Unique per rewrite (Redis: the child's pid), so that an
		// abandoned rewrite's cleanup never removes a later one's file.
		TempBase: filepath.Join(dir, fmt.Sprintf("temp-rewriteaof-bg-%d-%d.aof", pid, rewriteSeq.Add(1))),
		Start:    now,
		format:   m.Cfg.Format,
	}
	if enable && m.W == nil {
		m.waitRewrite = true
	}
	if m.W == nil && !m.waitRewrite {
		rw.off = true
	} else if m.waitRewrite {
		// AOF_WAIT_REWRITE: the temporary incr file starts over (a retry
		// after a failed first rewrite truncates it: the new base will
		// hold everything).
		rw.tempIncr = filepath.Join(dir, m.TempIncrName())
		f, err := os.OpenFile(rw.tempIncr, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			return nil, fmt.Errorf("Can't open the append-only file %s: %w", filepath.Base(rw.tempIncr), err)
		}
		if m.W == nil {
			m.W = NewWriter(f, 0, m.Cfg.Fsync, m.Warn)
		} else {
			if err := m.W.Flush(now, true); err != nil {
				f.Close()
				return nil, err
			}
			m.W.Switch(f)
			m.W.SetSize(0)
		}
		m.notice("Creating AOF incr file %s on background rewrite", filepath.Base(rw.tempIncr))
	} else {
		if err := m.W.Flush(now, true); err != nil {
			return nil, err
		}
		am := m.Manifest.Clone()
		name := am.NewIncr(m.Cfg.Filename)
		f, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return nil, fmt.Errorf("Can't open the append-only file %s: %w", name, err)
		}
		if err := WriteManifest(dir, m.Cfg.Filename, am); err != nil {
			f.Close()
			os.Remove(filepath.Join(dir, name))
			return nil, err
		}
		m.Manifest = am
		m.W.Switch(f)
		m.notice("Creating AOF incr file %s on background rewrite", name)
	}
	if m.W != nil {
		m.W.Rewriting = true
	}
	return rw, nil
}

// FinishRewrite is backgroundRewriteDoneHandler. With err nil (the base is
// complete and fsynced at rw.TempBase, baseSize bytes) the base is renamed
// into place, while the AOF waits for its first rewrite the temporary incr
// file becomes the next incr file, the old base and the incremental files
// the base covers become history, the manifest is persisted and the
// history deleted (unless aof-disable-auto-gc). On error the temporary
// files are removed (the temporary incr file too, with its buffer:
// aofDelTempIncrAofFile) and the manifest keeps the extra incremental
// file, as in Redis.
func (m *Manager) FinishRewrite(rw *Rewrite, baseSize int64, err error) error {
	if m.W != nil {
		m.W.Rewriting = false
	}
	if err != nil {
		os.Remove(rw.TempBase)
		m.dropTempIncr()
		return err
	}
	dir := m.Cfg.Path()
	if rw.tempIncr != "" && m.W == nil {
		// The AOF was turned off while rewriting.
		os.Remove(rw.TempBase)
		return errors.New("AOF was disabled during the rewrite")
	}
	am := m.Manifest.Clone()
	name := am.NewBase(m.Cfg.Filename, rw.format.RDB)
	if err := os.Rename(rw.TempBase, filepath.Join(dir, name)); err != nil {
		os.Remove(rw.TempBase)
		m.dropTempIncr()
		return fmt.Errorf("Error trying to rename the temporary AOF base file %s into %s: %w", filepath.Base(rw.TempBase), name, err)
	}
	m.notice("Successfully renamed the temporary AOF base file %s into %s", filepath.Base(rw.TempBase), name)
	incrPath := ""
	if m.waitRewrite {
		if err := m.W.Flush(time.Now(), true); err != nil {
			os.Remove(filepath.Join(dir, name))
			m.dropTempIncr()
			return err
		}
		incr := am.NewIncr(m.Cfg.Filename)
		incrPath = filepath.Join(dir, incr)
		if err := os.Rename(rw.tempIncr, incrPath); err != nil {
			os.Remove(filepath.Join(dir, name))
			m.dropTempIncr()
			return fmt.Errorf("Error trying to rename the temporary AOF incr file %s into %s: %w", rw.tempIncr, incrPath, err)
		}
		m.notice("Successfully renamed the temporary AOF incr file %s into %s", filepath.Base(rw.tempIncr), incr)
	}
	// markRewrittenIncrAofAsHistory: with aof_fd == -1 (BGREWRITEAOF with
	// the AOF off) no file is being written, so every incremental file is
	// covered.
	am.MarkRewrittenIncrAsHistory(m.W != nil)
	if err := WriteManifest(dir, m.Cfg.Filename, am); err != nil {
		// Undo: the old manifest still describes the files on disk.
		os.Remove(filepath.Join(dir, name))
		if incrPath != "" {
			os.Remove(incrPath)
		}
		m.dropTempIncr()
		return err
	}
	m.Manifest = am
	size := m.totalSize()
	if m.W != nil {
		size += int64(m.W.Buffered())
		m.W.SetSize(size)
	}
	m.BaseSize = size
	if err := m.DeleteHistory(); err != nil {
		m.warn("%v", err)
	}
	m.waitRewrite = false // AOF_WAIT_REWRITE -> AOF_ON
	return nil
}

// Stop is stopAppendOnly: flush, fsync and close the file; the manifest
// stays, and so does a temporary incr file of a first rewrite (as in
// Redis: the next one truncates it, start-up removes it). A rewrite in
// progress must be abandoned by the caller.
func (m *Manager) Stop(now time.Time) error {
	m.waitRewrite = false
	if m.W == nil {
		return nil
	}
	err := m.W.Close(now)
	m.W = nil
	return err
}

// removeTemps deletes what a crash during a rewrite left in the AOF
// directory: temporary base files and the temporary incr file (the
// manifest never names them).
func (m *Manager) removeTemps() {
	dir := m.Cfg.Path()
	olds, _ := filepath.Glob(filepath.Join(dir, "temp-rewriteaof-*.aof"))
	olds = append(olds, filepath.Join(dir, m.TempIncrName()))
	for _, p := range olds {
		if err := os.Remove(p); err == nil {
			m.notice("Removed the temporary AOF file %s left by an interrupted rewrite", filepath.Base(p))
		}
	}
}

var rewriteSeq atomic.Int64

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir()
}
