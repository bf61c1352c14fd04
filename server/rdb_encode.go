package server

import (
	"io"
	"sync/atomic"
	"time"

	"github.com/vigil-kv/vigil/server/keyspace"
	"github.com/vigil-kv/vigil/server/rdb"
)

// snapshotEncode is one background RDB write (rdbSaveRio in Redis's fork
// child): a BGSAVE, or a full sync's payload, disk or diskless. The
// snapshot is walked by steps of bgsaveStepKeys keys under the execution
// lock and encoded outside it.
type snapshotEncode struct {
	snap  *keyspace.Snapshot
	opts  rdb.EncodeOptions
	sizes [][2]int // per database (keys, expires); nil: no keys (rdb-filter-only)
	delay time.Duration
	// pacer paces the steps (BGSAVE); nil: none.
	pacer *snapshotPacer
	// stopped is checked before each step outside the lock, check under
	// it: a non-nil error ends the write with it. Either may be nil.
	stopped func() error
	check   func() error
	// sleep is rdb-key-save-delay's pause after each key; false ends the
	// write with errBgsaveKilled. nil: debugDelay.
	sleep func(time.Duration) bool
	// processed counts the keys written (current_save_keys_processed).
	processed *atomic.Int64
}

// encodeSnapshot writes e's RDB to w (rdbSaveRio): the header and aux
// fields, each database's keys as the snapshot yields them, the end.
func (s *Server) encodeSnapshot(w io.Writer, e *snapshotEncode) error {
	enc, err := rdb.NewEncoder(w, e.opts)
	if err != nil {
		return err
	}
	for i, sz := range e.sizes {
		if sz[0] > 0 {
			enc.SetDBSizes(i, sz[0], sz[1])
		}
	}
	var buf []keyspace.Item
	for done := e.sizes == nil; !done; {
		if e.stopped != nil {
			if err := e.stopped(); err != nil {
				return err
			}
		}
		if e.pacer != nil {
			e.pacer.lock(&s.mu)
		} else {
			s.mu.Lock()
		}
		if e.check != nil {
			if err := e.check(); err != nil { // the snapshot may be closed
				s.mu.Unlock()
				return err
			}
		}
		buf, done = e.snap.Step(buf[:0], bgsaveStepKeys)
		s.mu.Unlock()
		keyspace.PrefetchItems(buf)
		for _, it := range buf {
			if err := enc.WriteItem(it); err != nil {
				return err
			}
			if e.processed != nil {
				e.processed.Add(1)
			}
			if e.delay > 0 {
				if e.sleep == nil {
					debugDelay(e.delay)
				} else if !e.sleep(e.delay) {
					return errBgsaveKilled
				}
			}
		}
		if e.pacer != nil {
			// Leave the clients their share of the cores (and park:
			// see snapshotQuantum).
			e.pacer.pause()
		}
	}
	return enc.Finish()
}
