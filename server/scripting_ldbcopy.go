package server

import (
	"bytes"
	"sync"
	"sync/atomic"

	"github.com/vigil-kv/vigil/server/keyspace"
	"github.com/vigil-kv/vigil/server/rdb"
)

// The dataset a forked debugging session's child gets (scripting_ldbfork.go)
// is read from a keyspace snapshot, as a BGSAVE's (persist_rdb.go,
// rdb_encode.go): started at the fork's moment under the execution lock,
// walked by steps of bgsaveStepKeys keys under it, encoded outside it
// into memory, paced as a BGSAVE is (bgprocs.go), so the server serves
// the other clients meanwhile, where it used to pause for the whole
// encoding. The RDB goes to the child once complete.
//
// Only one snapshot runs at a time, and Redis's debugging children are
// no child for hasActiveChildProcess: a BGSAVE, a full sync or an AOF
// rewrite starting meanwhile does not wait for the copy, nor does it
// count for childActive. The snapshot's taker finishes the copy first,
// under the lock (ldbFinishCopy: the rest of the walk encoded at once, a
// pause as long as that rest's encoding), then begins its own. When a
// snapshot already runs as the session starts, the dataset is encoded
// under the lock at once (writeRDBDelay), as before.

// ldbCopy is a debugging child's dataset being encoded from a snapshot.
type ldbCopy struct {
	snap *keyspace.Snapshot
	enc  *rdb.Encoder
	// chunk is held while a step's items are encoded outside the
	// execution lock (taken inside it: mu, then chunk).
	chunk sync.Mutex
	buf   []keyspace.Item
	// done (mu and chunk held to set): the RDB is complete, or failed
	// (err), and the snapshot closed.
	done bool
	err  error
}

// ldbCopyStepHook, when set, runs after each step the copy's goroutine
// encoded, outside the locks (tests: to hold the copy midway).
var ldbCopyStepHook atomic.Pointer[func()]

// ldbBeginCopy starts the copy into w, whose RDB header it writes (lock
// held). nil, nil: another snapshot runs, the caller encodes at once.
func (s *Server) ldbBeginCopy(w *bytes.Buffer) (*ldbCopy, error) {
	if s.ks.Snapshotting() {
		return nil, nil
	}
	snap, err := s.ks.BeginSnapshot()
	if err != nil {
		return nil, err
	}
	enc, err := rdb.NewEncoder(w, s.encodeOptions(false))
	if err != nil {
		snap.Close()
		return nil, err
	}
	for i, db := range s.ks.DBs {
		if db.Len() > 0 {
			enc.SetDBSizes(i, db.Len(), db.ExpiresLen())
		}
	}
	cp := &ldbCopy{snap: snap, enc: enc}
	s.ldbCopy = cp
	return cp, nil
}

// write encodes items (chunk held).
func (cp *ldbCopy) write(items []keyspace.Item) error {
	keyspace.PrefetchItems(items)
	for _, it := range items {
		if err := cp.enc.WriteItem(it); err != nil {
			return err
		}
	}
	return nil
}

// ldbRunCopy encodes the copy to its end (no lock held), unless a
// snapshot's taker finishes it first.
func (s *Server) ldbRunCopy(cp *ldbCopy) {
	release, borrowed := borrowProc()
	defer release()
	pacer := newSnapshotPacer(borrowed)
	for {
		pacer.lock(&s.mu)
		if cp.done {
			s.mu.Unlock()
			return
		}
		cp.chunk.Lock()
		buf, last := cp.snap.Step(cp.buf[:0], bgsaveStepKeys)
		s.mu.Unlock()
		err := cp.write(buf)
		clear(buf) // the values are the snapshot's until it closes
		cp.buf = buf[:0]
		cp.chunk.Unlock()
		if h := ldbCopyStepHook.Load(); h != nil {
			(*h)()
		}
		if last || err != nil {
			s.mu.Lock()
			s.ldbFinishCopyOf(cp, err)
			s.mu.Unlock()
			return
		}
		pacer.pause()
	}
}

// ldbFinishCopy finishes the running copy, if any, under the lock: a
// snapshot's taker calls it before BeginSnapshot (lock held).
func (s *Server) ldbFinishCopy() {
	if cp := s.ldbCopy; cp != nil {
		s.ldbFinishCopyOf(cp, nil)
	}
}

// ldbFinishCopyOf encodes what is left of cp's walk (unless err ended
// it), ends the RDB and closes the snapshot (lock held). It waits for the
// step being encoded outside the lock, which needs no lock to end.
func (s *Server) ldbFinishCopyOf(cp *ldbCopy, err error) {
	cp.chunk.Lock()
	defer cp.chunk.Unlock()
	if cp.done {
		return
	}
	for last := false; err == nil && !last; {
		var buf []keyspace.Item
		buf, last = cp.snap.Step(cp.buf[:0], bgsaveStepKeys)
		err = cp.write(buf)
		clear(buf)
		cp.buf = buf[:0]
	}
	if err == nil {
		err = cp.enc.Finish()
	}
	cp.err = err
	cp.snap.Close()
	cp.done = true
	if s.ldbCopy == cp {
		s.ldbCopy = nil
	}
	if err != nil {
		s.log.Warn().Msgf("Lua debugging session: encoding the dataset for the child: %v", err)
	}
}
