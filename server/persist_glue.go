package server

import (
	"bufio"
	"io"
	"strconv"
	"time"

	"github.com/vigil-kv/vigil/internal/resp"
	"github.com/vigil-kv/vigil/server/aof"
	"github.com/vigil-kv/vigil/server/keyspace"
	"github.com/vigil-kv/vigil/server/rdb"
)

// Where the RDB side (persist_rdb.go) and the AOF side (persist_aof.go)
// meet: RDB-preamble bases (aof-use-rdb-preamble yes) are written by the
// RDB encoder and loaded by the RDB loader, as rewriteAppendOnlyFile's
// rdbSaveRio and loadSingleAppendOnlyFile's preamble branch; INFO
// persistence's aof_* block sits between the RDB fields and
// module_fork_in_progress, as 7.0 prints it.

// aofRDBFormat is the RDB base format: files named .base.rdb, AUX
// aof-base 1.
// The function libraries are the ones of the rewrite's start (lock held).
func (s *Server) aofRDBFormat() aof.BaseFormat {
	fns := s.functionCodes()
	return aof.BaseFormat{RDB: true, New: func(w io.Writer) aof.BaseWriter {
		return newRDBBase(w, s.encodeOptionsWith(true, fns))
	}}
}

// aofCommandFormat is the AOF-format base; it starts with the rewrite's
// "#TS:" annotation under aof-timestamp-enabled (rewriteAppendOnlyFileRio's
// genAofTimestampAnnotationIfNeeded(1)), then a FUNCTION LOAD of each
// library of the rewrite's start (rewriteFunctions; lock held).
func (s *Server) aofCommandFormat() aof.BaseFormat {
	fns := s.functionCodes()
	timestamp := s.cfg.AOFTimestampEnabled
	if len(fns) == 0 && !timestamp {
		return aof.CommandFormat
	}
	return aof.BaseFormat{New: func(w io.Writer) aof.BaseWriter {
		var b []byte
		if timestamp {
			b = append(strconv.AppendInt(append(b, "#TS:"...), time.Now().Unix(), 10), '\r', '\n')
		}
		for _, code := range fns {
			b = resp.AppendCommand(b, []byte("FUNCTION"), []byte("LOAD"), []byte(code))
		}
		w.Write(b) // an error comes back from the base's next write
		return aof.NewCommandBase(w)
	}}
}

// aofRDBLoader loads a file starting with "REDIS" (an RDB base or an old
// preamble) and returns the bytes the RDB part used.
func (s *Server) aofRDBLoader() aof.BaseLoader { return s.aofRDBLoaderOpts(false) }

// aofRDBLoaderYield is the startup load's: the execution lock is yielded
// as in loadRDBYield, and the bytes read count in loading_loaded_bytes
// (the base is the first file).
func (s *Server) aofRDBLoaderYield() aof.BaseLoader { return s.aofRDBLoaderOpts(true) }

func (s *Server) aofRDBLoaderOpts(yield bool) aof.BaseLoader {
	return func(r io.Reader) (int64, error) {
		var n int64
		cr := countingReader{r: r, n: &n}
		if yield {
			cr.also = &s.rdb.loadLoaded
		}
		br := bufio.NewReaderSize(cr, 64<<10)
		if _, _, err := s.loadRDBOpts(br, true, false, yield); err != nil {
			return 0, err
		}
		return n - int64(br.Buffered()), nil
	}
}

// infoAOFFields writes INFO persistence's aof_enabled ... aof_last_cow_size
// (the lines after them, printed only with the AOF on, are
// infoPersistenceAOF's).
func (s *Server) infoAOFFields(w *infoWriter) {
	aofOn, inProg, sched, lastT, curT, lastSt, rewrites, fails, writeSt := s.aofInfo()
	w.int("aof_enabled", aofOn)
	w.int("aof_rewrite_in_progress", inProg)
	w.int("aof_rewrite_scheduled", sched)
	w.int("aof_last_rewrite_time_sec", lastT)
	w.int("aof_current_rewrite_time_sec", curT)
	w.str("aof_last_bgrewrite_status", lastSt)
	w.int("aof_rewrites", rewrites)
	w.int("aof_rewrites_consecutive_failures", fails)
	w.str("aof_last_write_status", writeSt)
	w.int("aof_last_cow_size", int64(s.aof.lastCow))
}

// rdbBase is an AOF base written by the RDB encoder.
type rdbBase struct {
	enc *rdb.Encoder
	err error
}

func newRDBBase(w io.Writer, opts rdb.EncodeOptions) *rdbBase {
	enc, err := rdb.NewEncoder(w, opts)
	return &rdbBase{enc: enc, err: err}
}

func (b *rdbBase) WriteItem(it keyspace.Item) error {
	if b.err != nil {
		return b.err
	}
	return b.enc.WriteItem(it)
}

func (b *rdbBase) Finish() error {
	if b.err != nil {
		return b.err
	}
	return b.enc.Finish()
}
