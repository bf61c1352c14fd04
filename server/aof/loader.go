package aof

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/vigil-kv/vigil/internal/resp"
)

// Status is what loading one file found (aof.c's AOF_OK, AOF_EMPTY,
// AOF_TRUNCATED, ...).
type Status int

// Load statuses.
const (
	StatusOK        Status = iota
	StatusNotExist         // no AOF at all (AOF_NOT_EXIST)
	StatusEmpty            // every file is empty (AOF_EMPTY)
	StatusTruncated        // the last command was cut and dropped (AOF_TRUNCATED)
)

// rdbMagic starts an RDB file: a base written with aof-use-rdb-preamble.
var rdbMagic = []byte("REDIS")

// BaseLoader loads an RDB-format base file (or any file starting with
// "REDIS", as loadSingleAppendOnlyFile detects the preamble). The server
// supplies it from server/rdb; r is positioned at the start of the file.
// It returns how many bytes the RDB part used, so that any commands
// following an old-style preamble can be replayed.
type BaseLoader func(r io.Reader) (n int64, err error)

// Options configure a load.
type Options struct {
	// Dir is the AOF directory (dir/appenddirname).
	Dir string
	// LoadTruncated is aof-load-truncated: a command cut by the end of the
	// last file is dropped (and the file truncated) instead of failing.
	LoadTruncated bool
	// Apply executes one command as the fake AOF client: no reply,
	// MULTI/EXEC honoured. An error stops the load.
	Apply func(argv [][]byte) error
	// RDB loads an RDB-preamble file; nil refuses such files.
	RDB BaseLoader
	// Warn logs a warning line (Redis's LL_WARNING); may be nil.
	Warn func(msg string)
	// Notice logs an informational line; may be nil.
	Notice func(msg string)
	// Start, when set, is called by LoadManifest before the first file
	// with the size of all the files to load (loading_total_bytes).
	Start func(totalBytes int64)
	// Progress, when set, is called before each command with the bytes
	// read so far across the manifest's files (loading_loaded_bytes); an
	// error stops the load and is returned as is.
	Progress func(loaded int64) error

	// done is the size of the files LoadManifest loaded before this one.
	done int64
}

func (o *Options) warn(format string, a ...any) {
	if o.Warn != nil {
		o.Warn(fmt.Sprintf(format, a...))
	}
}

func (o *Options) notice(format string, a ...any) {
	if o.Notice != nil {
		o.Notice(fmt.Sprintf(format, a...))
	}
}

// CorruptError is a file the loader refuses: a format error, a command
// cut short where truncation is not allowed, or a read error.
type CorruptError struct {
	File   string
	Offset int64 // where the bad command starts (the last valid offset)
	Msg    string
	Err    error // the RDB loader's error of a base file, if any
}

func (e *CorruptError) Unwrap() error { return e.Err }

func (e *CorruptError) Error() string {
	return fmt.Sprintf("%s (file %s, offset %d)", e.Msg, e.File, e.Offset)
}

// Messages as loadSingleAppendOnlyFile logs them.
const (
	msgUnexpectedEOF = "Unexpected end of file reading the append only file %s. You can: 1) Make a backup of your AOF file, then use ./redis-check-aof --fix <filename.manifest>. 2) Alternatively you can set the 'aof-load-truncated' configuration option to yes and restart the server."
	msgBadFormat     = "Bad file format reading the append only file %s: make a backup of your AOF file, then use ./redis-check-aof --fix <filename.manifest>"
)

// Result summarises a load (the sizes feed INFO aof_current_size and
// aof_base_size, and the auto-rewrite trigger).
type Result struct {
	Status   Status
	Commands int64
	// TotalSize is the size of the base plus incremental files after any
	// truncation; BaseSize the base's.
	TotalSize, BaseSize int64
}

// LoadManifest is loadAppendOnlyFiles: the base, then every incremental
// file in order. Only the last file may be truncated (with
// LoadTruncated); every listed file must exist.
func LoadManifest(m *Manifest, o *Options) (Result, error) {
	var res Result
	files := m.Files()
	if len(files) == 0 {
		res.Status = StatusNotExist
		return res, nil
	}
	// getBaseAndIncrAppendOnlyFilesSize: every listed file must exist
	// (a missing one is fatal), before anything is loaded.
	var total int64
	for _, ai := range files {
		fi, err := os.Stat(filepath.Join(o.Dir, ai.Name))
		if err != nil {
			return res, &CorruptError{File: ai.Name, Msg: fmt.Sprintf("Unable to obtain the AOF file %s length. stat: %s", ai.Name, Strerror(errnoOf(err)))}
		}
		total += fi.Size()
	}
	if o.Start != nil {
		o.Start(total)
	}
	o.done = 0
	empty := true
	for i, ai := range files {
		last := i == len(files)-1
		path := filepath.Join(o.Dir, ai.Name)
		if _, err := os.Stat(path); err != nil {
			return res, &CorruptError{File: ai.Name, Msg: fmt.Sprintf("Unable to obtain the AOF file %s length. stat: %s", ai.Name, Strerror(errnoOf(err)))}
		}
		n, st, size, err := LoadFile(path, o, last)
		o.done += size
		res.Commands += n
		if err != nil {
			return res, err
		}
		if st == StatusTruncated && !last {
			return res, &CorruptError{File: ai.Name, Offset: size, Msg: "Fatal error: the truncated file is not the last file"}
		}
		if st != StatusEmpty {
			empty = false
		}
		if st == StatusTruncated {
			res.Status = StatusTruncated
		}
		if ai.Type == TypeBase {
			res.BaseSize = size
		}
		res.TotalSize += size
	}
	if empty {
		res.Status = StatusEmpty
	}
	return res, nil
}

// LoadFile is loadSingleAppendOnlyFile: it replays path's commands
// through o.Apply and returns how many it ran, the status and the file's
// size afterwards. A file starting with "REDIS" is handed to o.RDB first.
// A cut last command in the last file (last) with o.LoadTruncated is
// dropped: the file is truncated to the last complete command (or to
// before an unterminated MULTI) and the status is StatusTruncated.
func LoadFile(path string, o *Options, last bool) (cmds int64, st Status, size int64, err error) {
	name := filepath.Base(path)
	f, err := os.Open(path)
	if err != nil {
		return 0, StatusOK, 0, &CorruptError{File: name, Msg: fmt.Sprintf("Fatal error: can't open the append log file %s for reading: %v", name, err)}
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, StatusOK, 0, &CorruptError{File: name, Msg: fmt.Sprintf("Unable to obtain the AOF file %s length. stat: %v", name, err)}
	}
	if fi.Size() == 0 {
		return 0, StatusEmpty, 0, nil
	}
	var start int64
	var sig [5]byte
	if n, _ := io.ReadFull(f, sig[:]); n == 5 && bytes.Equal(sig[:], rdbMagic) {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return 0, StatusOK, 0, err
		}
		if o.RDB == nil {
			return 0, StatusOK, 0, &CorruptError{File: name, Msg: fmt.Sprintf("Error reading the RDB preamble of the AOF file %s, AOF loading aborted: RDB loading is not available", name)}
		}
		o.notice("Reading RDB base file on AOF loading...")
		used, err := o.RDB(f)
		if err != nil {
			return 0, StatusOK, 0, &CorruptError{File: name, Msg: fmt.Sprintf("Error reading the RDB base file %s, AOF loading aborted: %v", name, err), Err: err}
		}
		o.notice("Reading the remaining AOF tail...")
		start = used
	}
	if _, err := f.Seek(start, io.SeekStart); err != nil {
		return 0, StatusOK, 0, err
	}
	sc := NewScanner(f, start)
	inMulti := false
	validBeforeMulti := start
	for {
		off := sc.Offset()
		if o.Progress != nil {
			if err := o.Progress(o.done + off); err != nil {
				return cmds, StatusOK, 0, err
			}
		}
		argv, err := sc.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			validUpTo := off
			if inMulti {
				validUpTo = validBeforeMulti
			}
			if errors.Is(err, ErrTruncated) {
				if o.LoadTruncated && last {
					return cmds, StatusTruncated, validUpTo, truncateTail(path, name, validUpTo, o)
				}
				return cmds, StatusOK, 0, &CorruptError{File: name, Offset: validUpTo, Msg: fmt.Sprintf(msgUnexpectedEOF, name)}
			}
			var fe *FormatError
			if errors.As(err, &fe) {
				return cmds, StatusOK, 0, &CorruptError{File: name, Offset: fe.Offset, Msg: fmt.Sprintf(msgBadFormat, name)}
			}
			return cmds, StatusOK, 0, &CorruptError{File: name, Offset: off, Msg: fmt.Sprintf("Unrecoverable error reading the append only file %s: %v", name, err)}
		}
		if eqFold(argv[0], "multi") {
			inMulti = true
			validBeforeMulti = off
		} else if eqFold(argv[0], "exec") {
			inMulti = false
		}
		if err := o.Apply(argv); err != nil {
			return cmds, StatusOK, 0, &CorruptError{File: name, Offset: off, Msg: err.Error()}
		}
		cmds++
	}
	if inMulti {
		// A MULTI without EXEC: as a cut command ("Revert incomplete
		// MULTI/EXEC transaction in AOF file").
		o.warn("Revert incomplete MULTI/EXEC transaction in AOF file %s", name)
		if o.LoadTruncated && last {
			return cmds, StatusTruncated, validBeforeMulti, truncateTail(path, name, validBeforeMulti, o)
		}
		return cmds, StatusOK, 0, &CorruptError{File: name, Offset: validBeforeMulti, Msg: fmt.Sprintf(msgUnexpectedEOF, name)}
	}
	return cmds, StatusOK, sc.Offset(), nil
}

func truncateTail(path, name string, validUpTo int64, o *Options) error {
	o.warn("!!! Warning: short read while loading the AOF file %s!!!", name)
	o.warn("!!! Truncating the AOF %s at offset %d !!!", name, validUpTo)
	if err := os.Truncate(path, validUpTo); err != nil {
		return &CorruptError{File: name, Offset: validUpTo, Msg: fmt.Sprintf("Error truncating the AOF file %s: %v", name, err)}
	}
	o.warn("AOF %s loaded anyway because aof-load-truncated is enabled", name)
	return nil
}

// ErrTruncated reports a command cut by the end of the file.
var ErrTruncated = errors.New("unexpected end of file")

// FormatError reports bytes that are not an AOF command.
type FormatError struct {
	Offset int64
	Msg    string
}

func (e *FormatError) Error() string { return fmt.Sprintf("%s at offset %d", e.Msg, e.Offset) }

// Scanner reads the commands of an AOF file as loadSingleAppendOnlyFile
// and redis-check-aof's process do: "*<argc>\r\n" then argc times
// "$<len>\r\n<bytes>\r\n"; lines starting with '#' are annotations and
// skipped. It is internal/resp's Reader in resp.ModeAOF, the one command
// parser. Memory grows with the bytes actually read, never with a claimed
// length or count.
type Scanner struct {
	rd    *resp.Reader
	start int64
}

// NewScanner reads r, whose first byte is at offset start of the file.
func NewScanner(r io.Reader, start int64) *Scanner {
	rd := resp.NewReader(r, resp.Limits{MaxBulkLen: math.MaxInt64, MaxArgs: math.MaxInt64, MaxInline: maxLine})
	rd.SetMode(resp.ModeAOF)
	return &Scanner{rd: rd, start: start}
}

// OnAnnotation sets a function that sees each annotation line ("#TS:..."
// without its line end) and the file offset where it starts, as the
// scan passes it.
func (s *Scanner) OnAnnotation(f func(line []byte, offset int64)) {
	s.rd.OnAnnotation(func(line []byte, off int64) { f(line, s.start+off) })
}

// Offset is the offset just after the last complete command.
func (s *Scanner) Offset() int64 { return s.start + s.rd.Offset() }

// maxLine bounds a header line ("*<n>" or "$<n>"): fgets' 128-byte buffer.
const maxLine = 128

// Next returns the next command: io.EOF at a clean end, ErrTruncated when
// the file ends inside a command, *FormatError on bad bytes. The argv
// slices alias the Scanner's buffer until the next call.
func (s *Scanner) Next() ([][]byte, error) {
	for {
		argv, raw, err := s.rd.NextRaw()
		if err != nil {
			var pe *resp.ProtocolError
			if errors.As(err, &pe) {
				return nil, &FormatError{Offset: s.start + pe.Offset, Msg: pe.Msg}
			}
			return nil, err
		}
		if raw != nil {
			return argv, nil
		}
		if err := s.rd.Fill(); err != nil {
			if err != io.EOF {
				return nil, err
			}
			if s.rd.Buffered() > 0 {
				return nil, ErrTruncated
			}
			return nil, io.EOF
		}
	}
}

func eqFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		c := b[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}
