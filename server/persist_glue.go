package server

import (
	"bufio"
	"io"

	"github.com/vigil-kv/vigil/server/aof"
	"github.com/vigil-kv/vigil/server/keyspace"
	"github.com/vigil-kv/vigil/server/rdb"
)

// The RDB side (persist_rdb.go) and the AOF side (persist_aof.go) were
// built against each other's hooks; this file connects them:
//
//   - with the AOF off, or on but without files yet, startup loads
//     dbfilename (loadRDBOnStart);
//   - aof-use-rdb-preamble yes writes rewrite bases as RDB files
//     (.base.rdb, AUX aof-base 1), as rewriteAppendOnlyFile's rdbSaveRio;
//   - a base (or an old single AOF) starting with "REDIS" loads through
//     the RDB loader, as loadSingleAppendOnlyFile's preamble branch;
//   - a running AOF rewrite counts as an active child for BGSAVE, and
//     INFO persistence prints the aof_* fields where 7.0 puts them.
func init() {
	loadRDBOnStart = func(s *Server) error { return s.loadRDBFile() }
	aofRDBFormat = func(s *Server) aof.BaseFormat {
		return aof.BaseFormat{RDB: true, New: func(w io.Writer) aof.BaseWriter {
			return newRDBBase(w, s.encodeOptions(true))
		}}
	}
	aofRDBLoader = func(s *Server) aof.BaseLoader {
		return func(r io.Reader) (int64, error) {
			var n int64
			br := bufio.NewReaderSize(countingReader{r, &n}, 64<<10)
			if _, _, err := s.loadRDBOpts(br, true, false, false); err != nil {
				return 0, err
			}
			return n - int64(br.Buffered()), nil
		}
	}
	AOFRewriteRunning = func(s *Server) bool { return s.aof.rewriting != nil }
	InfoAOFHook = func(s *Server, w *infoWriter, extra bool) {
		if extra {
			s.infoPersistenceAOF(w)
			return
		}
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
		w.int("aof_last_cow_size", 0)
	}
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
