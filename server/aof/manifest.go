package aof

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/vigil-kv/vigil/internal/redisutil"
)

// File name parts, as aof.c's BASE_FILE_SUFFIX, INCR_FILE_SUFFIX,
// RDB_FORMAT_SUFFIX, AOF_FORMAT_SUFFIX, MANIFEST_NAME_SUFFIX and
// TEMP_FILE_NAME_PREFIX.
const (
	baseSuffix     = ".base"
	incrSuffix     = ".incr"
	rdbFormat      = ".rdb"
	aofFormat      = ".aof"
	manifestSuffix = ".manifest"
	tempPrefix     = "temp-"
)

// maxManifestLine is MANIFEST_MAX_LINE.
const maxManifestLine = 1024

// FileType is a manifest entry's type (AOF_FILE_TYPE_*).
type FileType byte

// Manifest file types.
const (
	TypeBase FileType = 'b'
	TypeHist FileType = 'h'
	TypeIncr FileType = 'i'
)

// Info is one manifest line (aofInfo).
type Info struct {
	Name string
	Seq  int64
	Type FileType
}

// Manifest is aofManifest: at most one base file, the history files a
// rewrite left to delete, and the incremental files in order.
type Manifest struct {
	Base    *Info
	History []Info
	Incr    []Info
	// BaseSeq and IncrSeq are the last sequence numbers used
	// (curr_base_file_seq, curr_incr_file_seq).
	BaseSeq, IncrSeq int64
}

// ManifestName is getAofManifestFileName: "<appendfilename>.manifest".
func ManifestName(filename string) string { return filename + manifestSuffix }

// ManifestError is a fatal manifest error, reported as Redis's
// "*** FATAL AOF MANIFEST FILE ERROR ***" block.
type ManifestError struct {
	Line int    // 1-based line number, 0 when not about a line
	Text string // the offending line, trimmed
	Msg  string // Redis's message ("Invalid AOF manifest file format", ...)
}

func (e *ManifestError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("*** FATAL AOF MANIFEST FILE ERROR *** Reading the manifest file, at line %d >>> '%s' %s", e.Line, e.Text, e.Msg)
	}
	return "*** FATAL AOF MANIFEST FILE ERROR *** " + e.Msg
}

// ParseManifest parses a manifest as aofLoadManifestFromFile: comment
// lines start with '#', every other line holds at least the pairs
// "file <name> seq <n> type <b|h|i>" (more pairs are ignored, for forward
// compatibility), names are quoted as sdssplitargs reads them.
func ParseManifest(r io.Reader) (*Manifest, error) {
	m := &Manifest{}
	br := bufio.NewReaderSize(r, maxManifestLine+1)
	var maxSeq int64
	linenum := 0
	for {
		raw, err := readLineLimited(br, maxManifestLine)
		if err == io.EOF && raw == nil {
			if linenum == 0 {
				return nil, &ManifestError{Msg: "Found an empty AOF manifest"}
			}
			return m, nil
		}
		if err != nil && err != io.EOF && err != errLongLine {
			return nil, &ManifestError{Msg: "Read AOF manifest failed"}
		}
		linenum++
		if len(raw) > 0 && raw[0] == '#' {
			continue
		}
		if err == errLongLine || !bytes.HasSuffix(raw, []byte("\n")) {
			return nil, &ManifestError{Msg: "The AOF manifest file contains too long line"}
		}
		line := strings.Trim(string(raw), " \t\r\n")
		bad := func(msg string) error { return &ManifestError{Line: linenum, Text: line, Msg: msg} }
		if line == "" {
			return nil, bad("Invalid AOF manifest file format")
		}
		argv, err := redisutil.SplitArgs(line)
		if err != nil || len(argv) < 6 || len(argv)%2 != 0 {
			return nil, bad("Invalid AOF manifest file format")
		}
		var ai Info
		for i := 0; i < len(argv); i += 2 {
			switch strings.ToLower(argv[i]) {
			case "file":
				ai.Name = argv[i+1]
				if strings.ContainsRune(ai.Name, '/') {
					return nil, bad("File can't be a path, just a filename")
				}
			case "seq":
				ai.Seq = atoll(argv[i+1])
			case "type":
				if argv[i+1] != "" {
					ai.Type = FileType(argv[i+1][0])
				}
			}
		}
		if ai.Name == "" || ai.Seq == 0 || ai.Type == 0 {
			return nil, bad("Invalid AOF manifest file format")
		}
		switch ai.Type {
		case TypeBase:
			if m.Base != nil {
				return nil, bad("Found duplicate base file information")
			}
			b := ai
			m.Base = &b
			m.BaseSeq = ai.Seq
		case TypeHist:
			m.History = append(m.History, ai)
		case TypeIncr:
			if ai.Seq <= maxSeq {
				return nil, bad("Found a non-monotonic sequence number")
			}
			m.Incr = append(m.Incr, ai)
			m.IncrSeq = ai.Seq
			maxSeq = ai.Seq
		default:
			return nil, bad("Unknown AOF file type")
		}
	}
}

var errLongLine = errors.New("line too long")

// readLineLimited reads up to and including '\n', at most limit bytes
// (fgets with a MANIFEST_MAX_LINE+1 buffer).
func readLineLimited(br *bufio.Reader, limit int) ([]byte, error) {
	var out []byte
	for {
		b, err := br.ReadByte()
		if err != nil {
			if len(out) == 0 {
				return nil, err
			}
			return out, err
		}
		out = append(out, b)
		if b == '\n' {
			return out, nil
		}
		if len(out) >= limit {
			// fgets returns a full buffer without '\n': the rest of the
			// line is what makes it too long, unless it is a comment.
			for {
				c, err := br.ReadByte()
				if err != nil || c == '\n' {
					break
				}
			}
			return out, errLongLine
		}
	}
}

// atoll is C's atoll: leading digits, 0 when none.
func atoll(s string) int64 {
	s = strings.TrimLeft(s, " \t")
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	n, _ := strconv.ParseInt(s[:i], 10, 64)
	return n
}

// Bytes is getAofManifestAsString: the base first, then history, then
// incremental files; names needing it are quoted as sdscatrepr does.
func (m *Manifest) Bytes() []byte {
	var b []byte
	line := func(ai *Info) {
		b = append(b, "file "...)
		b = append(b, quoteName(ai.Name)...)
		b = append(b, " seq "...)
		b = strconv.AppendInt(b, ai.Seq, 10)
		b = append(b, " type "...)
		b = append(b, byte(ai.Type), '\n')
	}
	if m.Base != nil {
		line(m.Base)
	}
	for i := range m.History {
		line(&m.History[i])
	}
	for i := range m.Incr {
		line(&m.Incr[i])
	}
	return b
}

// Clone is aofManifestDup.
func (m *Manifest) Clone() *Manifest {
	c := &Manifest{BaseSeq: m.BaseSeq, IncrSeq: m.IncrSeq}
	if m.Base != nil {
		b := *m.Base
		c.Base = &b
	}
	c.History = append([]Info(nil), m.History...)
	c.Incr = append([]Info(nil), m.Incr...)
	return c
}

// NewBase is getNewBaseFileNameAndMarkPreAsHistory: the previous base
// becomes history (first in the list) and a new base named
// "<filename>.<seq>.base.rdb|aof" takes its place. It returns the name.
func (m *Manifest) NewBase(filename string, rdb bool) string {
	if m.Base != nil {
		h := *m.Base
		h.Type = TypeHist
		m.History = append([]Info{h}, m.History...)
	}
	format := aofFormat
	if rdb {
		format = rdbFormat
	}
	m.BaseSeq++
	m.Base = &Info{Name: fmt.Sprintf("%s.%d%s%s", filename, m.BaseSeq, baseSuffix, format), Seq: m.BaseSeq, Type: TypeBase}
	return m.Base.Name
}

// NewIncr is getNewIncrAofName: appends "<filename>.<seq>.incr.aof".
func (m *Manifest) NewIncr(filename string) string {
	m.IncrSeq++
	ai := Info{Name: fmt.Sprintf("%s.%d%s%s", filename, m.IncrSeq, incrSuffix, aofFormat), Seq: m.IncrSeq, Type: TypeIncr}
	m.Incr = append(m.Incr, ai)
	return ai.Name
}

// LastIncr is getLastIncrAofName: the last incremental file, created
// when there is none.
func (m *Manifest) LastIncr(filename string) string {
	if len(m.Incr) == 0 {
		return m.NewIncr(filename)
	}
	return m.Incr[len(m.Incr)-1].Name
}

// MarkRewrittenIncrAsHistory is markRewrittenIncrAofAsHistory: after a
// rewrite the incremental files the new base covers become history. With
// keepLast (aof_fd != -1: a file is being written) the last one, opened
// when the rewrite started, stays. The files move to the head of the
// history list in their order (Redis walks the incr list from its tail and
// adds each at the history's head).
func (m *Manifest) MarkRewrittenIncrAsHistory(keepLast bool) {
	n := len(m.Incr)
	if keepLast {
		n--
	}
	if n <= 0 {
		return
	}
	h := make([]Info, 0, n+len(m.History))
	for _, ai := range m.Incr[:n] {
		ai.Type = TypeHist
		h = append(h, ai)
	}
	m.History = append(h, m.History...)
	m.Incr = append([]Info(nil), m.Incr[n:]...)
}

// Files returns the base (if any) then the incremental files: the load
// order.
func (m *Manifest) Files() []Info {
	var out []Info
	if m.Base != nil {
		out = append(out, *m.Base)
	}
	return append(out, m.Incr...)
}

// ReadManifest reads dir/<filename>.manifest. It returns (nil, nil) when
// the directory or the file does not exist (aofLoadManifestFromDisk).
func ReadManifest(dir, filename string) (*Manifest, error) {
	data, err := os.ReadFile(filepath.Join(dir, ManifestName(filename)))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("Fatal error: can't open the AOF manifest file %s for reading: %w", ManifestName(filename), err)
	}
	return ParseManifest(bytes.NewReader(data))
}

// WriteManifest is writeAofManifestFile: the manifest goes to
// temp-<filename>.manifest, is fsynced, renamed over the manifest and the
// directory is fsynced, so a crash leaves either manifest whole.
func WriteManifest(dir, filename string, m *Manifest) error {
	name := ManifestName(filename)
	tmp := filepath.Join(dir, tempPrefix+name)
	if err := writeFileSync(tmp, m.Bytes()); err != nil {
		return fmt.Errorf("Can't open the AOF manifest file %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("Error trying to rename the temporary AOF manifest file %s into %s: %w", tempPrefix+name, name, err)
	}
	return SyncDir(dir)
}

func writeFileSync(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// SyncDir fsyncs a directory (fsyncFileDir), making renames and creations
// in it durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("fsync directory %s: %w", dir, err)
	}
	return nil
}

// quoteName is sdsneedsrepr + sdscatrepr for a file name.
func quoteName(s string) string {
	need := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' || c == '"' || c == '\'' || c == ' ' || c < 0x21 || c > 0x7e {
			need = true
			break
		}
	}
	if !need {
		return s
	}
	return redisutil.Quote(s)
}
