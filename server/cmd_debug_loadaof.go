package server

import (
	"os"
	"time"

	"github.com/vigil-kv/vigil/server/aof"
)

// debugLoadAOF is Redis 7.0's DEBUG LOADAOF: flush the AOF buffer, empty
// the dataset and the libraries, drop history files and load the AOF (base and incremental
// files of the manifest) back. As in Redis, the reloaded commands are not
// propagated (nor written to the AOF again), dirty is reset, and a load
// failure other than an empty or missing AOF exits the server.
func debugLoadAOF(c *Client) {
	s := c.srv
	m := s.aofManager()
	if s.cfg.AppendOnly && m.W != nil {
		s.aofFlush(true)
	}
	for i, db := range s.ks.DBs {
		s.touchAllWatchedInDB(i, -1)
		db.Flush()
	}
	s.trackingFlush(false) // tracking.go: emptyData's signalFlushedDb
	if s.fns != nil {
		// emptyData(-1, EMPTYDB_NO_FLAGS): functionsLibCtxClearCurrent,
		// so the AOF's FUNCTION LOADs (or its base's libraries) load
		// into an empty set and do not fail with "already exists".
		s.fns.cur = newFnCtx()
	}
	// aofLoadManifestFromDisk: the file on disk is the manifest kept in
	// memory while the AOF is open, so it is re-read only when closed.
	if m.W == nil {
		if err := m.ReadManifest(); err != nil {
			s.log.Warn().Err(err).Msg("DEBUG LOADAOF: can't read the AOF manifest")
			os.Exit(1)
		}
	}
	if err := m.DeleteHistory(); err != nil {
		s.log.Warn().Err(err).Msg("DEBUG LOADAOF: can't persist the AOF manifest")
	}
	rdbLoad := s.aofRDBLoader()
	props := s.props
	s.props = nil // proc(fakeClient): nothing reloaded propagates
	s.rdb.loading = true
	start := time.Now()
	res, err := m.Load(&aof.Options{
		LoadTruncated: s.cfg.AOFLoadTruncated,
		Apply:         s.aofApplier(),
		RDB:           rdbLoad,
		Warn:          func(m string) { s.log.Warn().Msg(m) },
		Notice:        func(m string) { s.log.Info().Msg(m) },
	})
	s.rdb.loading = false
	s.props = props
	clear(s.pending)
	s.pending = s.pending[:0]
	if err != nil {
		s.log.Warn().Err(err).Msg("AOF loading failed (DEBUG LOADAOF). Exiting...")
		os.Exit(1)
	}
	_ = res
	s.ks.Dirty = 0 // prevent AOF / replication
	s.log.Warn().Msgf("Append Only File loaded by DEBUG LOADAOF (%.3f seconds)", time.Since(start).Seconds())
	c.w.OK()
}
